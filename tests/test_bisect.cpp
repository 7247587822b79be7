// Issue 45: perfgate bisect. The decisions of gate/bisect.hpp on readings
// made by hand, then the command on real git repositories of a C program
// made here, built with gcc in bisect's own worktrees and measured with
// callgrind's exact counts (and once with perf on a 3x step): the culprit
// in at most ceil(log2 64) + 2 measured commits, a change split over two
// commits, a commit that does not compile, an interrupted bisection
// resumed, and bad input refused with nothing left behind.
#include "gate/bisect.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "support/database.hpp"
#include "support/process.hpp"
#include "support/server.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using perfgate::gate::bisect_search;
using perfgate::gate::decide_step;
using perfgate::gate::shift_reading;
using perfgate::gate::step_decision;
using perfgate::test::run_perfgate;
using perfgate::test::shell_output;
using perfgate::test::shell_quoted;
using perfgate::test::temp_dir;

shift_reading point(double x) { return {x, x, x}; }

// Runs the search on a step function over n commits: value(i) of each
// commit, every probe decided from exact values. Returns the probes made.
std::vector<std::size_t> search_exact(bisect_search& s, const std::vector<double>& value,
                                      const std::vector<std::size_t>& broken = {})
{
    std::vector<std::size_t> probed;
    while (auto p = s.next()) {
        probed.push_back(p->mid);
        if (std::find(broken.begin(), broken.end(), p->mid) != broken.end()) {
            s.skip(p->mid);
            continue;
        }
        const auto a = point(value[p->mid] - value[p->lo]), b = point(value[p->hi] - value[p->mid]);
        s.record(*p, decide_step(a, b, p->effect), a, b);
    }
    return probed;
}

TEST_CASE("bisect decisions: like good, like bad, between, undecided")
{
    // effect +10, band +-2 (resolution 0.2)
    CHECK(decide_step({0.5, -1, 1.5}, {9.5, 8, 11}, 10) == step_decision::like_good);
    CHECK(decide_step({9.5, 8, 11}, {0.5, -1, 1.5}, 10) == step_decision::like_bad);
    CHECK(decide_step({4, 3, 5}, {6, 5, 7}, 10) == step_decision::between);
    // An interval across the band's edge decides nothing.
    CHECK(decide_step({5, 1, 9}, {5, 1, 9}, 10) == step_decision::undecided);
    CHECK(decide_step({9, 7, 11}, {3, 1.5, 9}, 10) == step_decision::undecided);
    // A part on one side and an uncertain other side: decided only when the
    // other side is clearly not the whole change.
    CHECK(decide_step({1, -3, 7.9}, {9, 2.1, 11}, 10) == step_decision::like_good);
    CHECK(decide_step({1, -3, 8.1}, {9, 2.1, 11}, 10) == step_decision::undecided);
    CHECK(decide_step({9, 2.1, 11}, {1, -3, 7.9}, 10) == step_decision::like_bad);
    // No part moved toward bad: no change to follow.
    CHECK(decide_step({0, -1, 1}, {0, -1, 1}, 10) == step_decision::undecided);
    // Beyond an end counts as that end: the change came at or before M.
    CHECK(decide_step({12, 11, 13}, {-2.5, -3, -2.1}, 10) == step_decision::like_bad);
    // A falling counter (an improvement bisected, or a counter where lower is worse).
    CHECK(decide_step({-0.5, -1, 0}, {-9.5, -11, -8}, -10) == step_decision::like_good);
    CHECK(decide_step({-9.5, -11, -8}, {-0.5, -1, 0}, -10) == step_decision::like_bad);
    // The resolution sets the band: 0.3 of the effect is a part at 0.2, none at 0.35.
    CHECK(decide_step(point(3), point(7), 10, 0.2) == step_decision::between);
    CHECK(decide_step(point(3), point(7), 10, 0.35) == step_decision::like_good);
    CHECK(perfgate::gate::to_string(step_decision::between) == "between");
}

TEST_CASE("bisect search: one step in 64 commits takes log2(64) probes, wherever it is")
{
    for (std::size_t k = 1; k <= 64; ++k) {
        std::vector<double> v(65, 100.0);
        for (std::size_t i = k; i < v.size(); ++i) v[i] = 104;
        bisect_search s(v.size(), 4);
        const auto probes = search_exact(s, v);
        REQUIRE(s.culprits().size() == 1);
        CHECK(s.culprits()[0].commit == k);
        CHECK(s.culprits()[0].effect == doctest::Approx(4));
        CHECK(probes.size() <= 6);
        CHECK(s.open_ranges().empty());
    }
}

TEST_CASE("bisect search: a change in two parts names both, in commit order")
{
    std::vector<double> v(65, 100.0);
    for (std::size_t i = 20; i < v.size(); ++i) v[i] += 3;
    for (std::size_t i = 45; i < v.size(); ++i) v[i] += 4;
    bisect_search s(v.size(), 7);
    search_exact(s, v);
    REQUIRE(s.culprits().size() == 2);
    CHECK(s.culprits()[0].commit == 20);
    CHECK(s.culprits()[0].effect == doctest::Approx(3));
    CHECK(s.culprits()[1].commit == 45);
    CHECK(s.culprits()[1].effect == doctest::Approx(4));
}

TEST_CASE("bisect search: skipped commits, a culprit next to one, a range of only skipped ones")
{
    std::vector<double> v(17, 100.0);
    for (std::size_t i = 10; i < v.size(); ++i) v[i] = 110;
    {
        bisect_search s(v.size(), 10);
        const auto probes = search_exact(s, v, {8});
        REQUIRE(s.culprits().size() == 1);
        CHECK(s.culprits()[0].commit == 10);
        CHECK(s.skipped() == std::vector<std::size_t>{8});
        CHECK(probes.front() == 8); // the middle first, then its neighbour
        CHECK(probes[1] == 7);
    }
    {
        // The change at 9 and 8 cannot build: between 7 (good) and 9 (bad)
        // only 8 remains, skipped: the range (7, 9] is what can be said.
        std::vector<double> w(17, 100.0);
        for (std::size_t i = 9; i < w.size(); ++i) w[i] = 110;
        bisect_search s(w.size(), 10);
        search_exact(s, w, {8});
        CHECK(s.culprits().empty());
        REQUIRE(s.open_ranges().size() == 1);
        CHECK(s.open_ranges()[0].lo == 7);
        CHECK(s.open_ranges()[0].hi == 9);
        CHECK(s.open_ranges()[0].all_skipped);
    }
    {
        // An undecided step ends its segment as an open range, never a guess.
        bisect_search s(v.size(), 10);
        auto p = s.next();
        REQUIRE(p);
        s.record(*p, step_decision::undecided, {1, -5, 7}, {9, 3, 15});
        CHECK_FALSE(s.next());
        CHECK(s.culprits().empty());
        REQUIRE(s.open_ranges().size() == 1);
        CHECK(s.open_ranges()[0].lo == 0);
        CHECK(s.open_ranges()[0].hi == 16);
        CHECK_FALSE(s.open_ranges()[0].all_skipped);
    }
    {
        // Neighbours: the bad end is the culprit without a probe.
        bisect_search s(2, 5);
        CHECK_FALSE(s.next());
        REQUIRE(s.culprits().size() == 1);
        CHECK(s.culprits()[0].commit == 1);
    }
}

// ---- the command on real repositories ----

std::string program(long iterations, bool compiles = true)
{
    return fmt::format("#include <stdio.h>\n"
                       "__attribute__((noinline)) static unsigned long work(unsigned long n) {{\n"
                       "    volatile unsigned long s = 0;\n"
                       "    for (unsigned long i = 0; i < n; ++i) s += i * 7;\n"
                       "    return s;\n}}\n"
                       "int main(void) {{\n    printf(\"%lu\\n\", work({}UL)){}\n    return 0;\n}}\n",
                       iterations, compiles ? ";" : "");
}

constexpr const char* build_cmd = "gcc -O1 -g -o prog prog.c";

// A repository of `commits` commits after its first (the good one): commit
// i (1-based) writes prog.c with iterations[i] when given (the others touch
// only notes.txt), or a program that does not compile when i is in broken.
struct repo {
    fs::path dir;
    std::string git;
    std::vector<std::string> sha; // sha[0]: the first commit; sha[i]: commit i

    repo(const fs::path& where, int commits, const std::map<int, long>& iterations, const std::vector<int>& broken = {},
         long base = 400000)
        : dir(where / "repo")
    {
        fs::create_directories(dir);
        git = "git -C " + shell_quoted(dir) + " -c user.name=Tester -c user.email=tester@example.com ";
        shell_output(git + "init -q -b main");
        std::ofstream(dir / "prog.c") << program(base);
        std::ofstream(dir / ".gitignore") << "prog\n.perfgate/\n";
        shell_output(git + "add prog.c .gitignore && " + git + "commit -q -m 'commit 0'");
        sha.push_back(shell_output(git + "rev-parse HEAD"));
        long current = base;
        for (int i = 1; i <= commits; ++i) {
            const bool breaks = std::find(broken.begin(), broken.end(), i) != broken.end();
            if (auto it = iterations.find(i); it != iterations.end()) current = it->second;
            std::ofstream(dir / "prog.c") << program(current, !breaks);
            std::ofstream(dir / "notes.txt", std::ios::app) << "commit " << i << "\n";
            shell_output(git + "add prog.c notes.txt && " + git + "commit -q -m 'commit " + std::to_string(i) + "'");
            sha.push_back(shell_output(git + "rev-parse HEAD"));
        }
    }
};

json bisect_json(const perfgate::test::cli_result& r)
{
    INFO("stderr: " << r.err);
    INFO("stdout: " << r.out);
    REQUIRE(!r.out.empty());
    return json::parse(r.out);
}

std::vector<std::string> culprit_shas(const json& j)
{
    std::vector<std::string> out;
    for (const auto& c : j.at("culprits")) out.push_back(c.at("sha").get<std::string>());
    return out;
}

// Nothing of a bisection is left in the repository: no worktree, no state.
void check_nothing_left(const repo& r)
{
    CHECK(shell_output(r.git + "worktree list | wc -l") == "1");
    CHECK(shell_output(r.git + "status --porcelain --untracked-files=no").empty());
}

TEST_CASE("perfgate bisect (callgrind): the commit of a +4% step among 64, in at most 8 measured commits")
{
    temp_dir dir("perfgate-bisect");
    // 400,000 -> 416,000 iterations: about +4% Ir at commit 37 (the
    // start-up's fixed Ir make it a little less).
    const repo r(dir.path(), 64, {{37, 416000}});
    const auto head = shell_output(r.git + "rev-parse HEAD");
    const auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[64], "--build", build_cmd, "--bench",
                                   "./prog", "--backend", "callgrind", "--format", "json"},
                                  r.dir);
    INFO(res.err);
    CHECK(res.code == 0);
    const json j = bisect_json(res);
    CHECK(j["schema"] == "perfgate.bisect/v1");
    CHECK(j["status"] == "found");
    CHECK(j["counter"] == "instructions");
    CHECK(j["commits"] == 64);
    CHECK(culprit_shas(j) == std::vector<std::string>{r.sha[37]});
    CHECK(j["measured_commits"].get<int>() <= 8); // ceil(log2 64) + 2: the bound
    const auto& c = j["culprits"][0];
    CHECK(c["subject"] == "commit 37");
    CHECK(c["author"] == "Tester <tester@example.com>");
    CHECK(c["parent"] == r.sha[36]);
    CHECK(c["share"].get<double>() == doctest::Approx(1.0));
    // Its effect with an interval on the gated counter, and where it went.
    bool saw = false;
    for (const auto& e : c["effects"]) {
        if (e["counter"] != "instructions") continue;
        saw = true;
        CHECK(e["delta_pct"].get<double>() > 3.5);
        CHECK(e["delta_pct"].get<double>() < 4.01);
        CHECK(e["ci_pct"][0].get<double>() == doctest::Approx(e["delta_pct"].get<double>())); // one execution: exact
        CHECK(e["status"] == "regression");
    }
    CHECK(saw);
    REQUIRE(c["attribution"].is_object());
    CHECK(c["attribution"]["callgrind"]["top"][0]["name"].get<std::string>().find("work") != std::string::npos);
    // Each step says what it measured and decided.
    REQUIRE(j["steps"].size() == 6);
    for (const auto& s : j["steps"]) {
        CHECK(s["repetitions"] == 1);
        CHECK(s["decision"] != "undecided");
        CHECK(!s["why"].get<std::string>().empty());
    }
    // The user's tree is as it was; bisect's worktrees are gone.
    CHECK(shell_output(r.git + "rev-parse HEAD") == head);
    check_nothing_left(r);

    SUBCASE("text and markdown name the culprit too")
    {
        for (const char* format : {"text", "markdown"}) {
            const auto t = run_perfgate({"bisect", "--good", r.sha[35], "--bad", r.sha[38], "--build", build_cmd,
                                         "--bench", "./prog", "--backend", "callgrind", "--format", format, "-q"},
                                        r.dir);
            CHECK(t.code == 0);
            CHECK(t.out.find(r.sha[37].substr(0, 12)) != std::string::npos);
            CHECK(t.out.find("commit 37") != std::string::npos);
        }
    }
}

TEST_CASE("perfgate bisect (callgrind): a regression split over two commits (+3%, +4%) reports both")
{
    temp_dir dir("perfgate-bisect");
    const repo r(dir.path(), 32, {{11, 412000}, {23, 428480}});
    const auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[32], "--build", build_cmd, "--bench",
                                   "./prog", "--backend", "callgrind", "--format", "json"},
                                  r.dir);
    CHECK(res.code == 0);
    const json j = bisect_json(res);
    CHECK(culprit_shas(j) == std::vector<std::string>{r.sha[11], r.sha[23]});
    REQUIRE(j["culprits"].size() == 2);
    CHECK(j["culprits"][0]["share"].get<double>() == doctest::Approx(3.0 / 7).epsilon(0.05));
    CHECK(j["culprits"][1]["share"].get<double>() == doctest::Approx(4.0 / 7).epsilon(0.05));
    bool between = false;
    for (const auto& s : j["steps"]) between = between || s["decision"] == "between";
    CHECK(between);
}

TEST_CASE("perfgate bisect (callgrind): a commit that does not compile is skipped and named")
{
    temp_dir dir("perfgate-bisect");
    // Commit 8 (the first probe of 16) does not compile; 9 fixes it.
    const repo r(dir.path(), 16, {{5, 480000}}, {8});
    const auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[16], "--build", build_cmd, "--bench",
                                   "./prog", "--backend", "callgrind", "--format", "json"},
                                  r.dir);
    CHECK(res.code == 0);
    const json j = bisect_json(res);
    CHECK(culprit_shas(j) == std::vector<std::string>{r.sha[5]});
    REQUIRE(j["skipped"].size() == 1);
    CHECK(j["skipped"][0]["commit"]["sha"] == r.sha[8]);
    CHECK(j["skipped"][0]["commit"]["subject"] == "commit 8");
    CHECK(j["skipped"][0]["why"].get<std::string>().find("build command failed") != std::string::npos);
    check_nothing_left(r);
}

TEST_CASE("perfgate bisect (callgrind): an interrupted bisection resumes where it stopped")
{
    temp_dir dir("perfgate-bisect");
    const repo r(dir.path(), 64, {{50, 416000}});
    const fs::path count = dir.path() / "builds";
    // The 4th build (the second probe's) kills perfgate with SIGTERM, as a
    // stopped CI job would. Sourced, so that $PPID is perfgate.
    const fs::path script = dir.path() / "build.sh";
    std::ofstream(script) << fmt::format("n=$(cat {0} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {0}\n"
                                         "if [ $n -eq 4 ]; then kill -TERM $PPID; sleep 10; fi\n{1}\n",
                                         shell_quoted(count), build_cmd);
    const std::string first = shell_output(fmt::format(
        "cd {} && {} bisect --good {} --bad {} --build '. {}' --bench ./prog --backend callgrind --format json "
        ">out.json 2>/dev/null; echo $?",
        shell_quoted(r.dir), perfgate::test::perfgate_exe, r.sha[0], r.sha[64], script.string()));
    CHECK(first == "143"); // 128 + SIGTERM: perfgate died of the signal
    CHECK(fs::file_size(r.dir / "out.json") == 0);
    fs::remove(r.dir / "out.json");
    REQUIRE(fs::exists(r.dir / ".perfgate/bisect/state.json"));

    const auto res = run_perfgate({"bisect", "--resume", "--format", "json"}, r.dir);
    INFO(res.err);
    CHECK(res.code == 0);
    CHECK(res.err.find("resuming") != std::string::npos);
    CHECK(res.err.find("1 step(s)") != std::string::npos);
    const json j = bisect_json(res);
    CHECK(culprit_shas(j) == std::vector<std::string>{r.sha[50]});
    CHECK(j["measured_commits"].get<int>() <= 8);
    // 8 builds for 64 commits, and the interrupted one again: nothing else redone.
    std::ifstream in(count);
    int builds = 0;
    in >> builds;
    CHECK(builds == 9);
    check_nothing_left(r);

    // Resuming needs a state: --resume without one, and options that are the state's.
    const auto none = run_perfgate({"bisect", "--resume", "--work-dir", (dir.path() / "nothing").string()}, r.dir);
    CHECK(none.code == 2);
    CHECK(none.err.find("input.bisect_state") != std::string::npos);
    const auto both = run_perfgate({"bisect", "--resume", "--good", r.sha[0]}, r.dir);
    CHECK(both.code == 2);
    CHECK(both.err.find("--good is the state file's") != std::string::npos);
}

TEST_CASE("perfgate bisect (callgrind): a merge is one commit along the first parent, --enter-merges goes inside")
{
    temp_dir dir("perfgate-bisect");
    // main: 0, m1, m2, then the merge of a branch forked at 0 (b1, b2 slower, b3).
    const repo r(dir.path(), 0, {});
    // The branch changes prog.c and topic.txt, main only main.txt: the merge is clean.
    const auto commit = [&](const std::string& message, std::optional<long> iterations) {
        if (iterations) std::ofstream(r.dir / "prog.c") << program(*iterations);
        std::ofstream(r.dir / (iterations ? "topic.txt" : "main.txt"), std::ios::app) << message << "\n";
        shell_output(r.git + "add -A && " + r.git + "commit -q -m '" + message + "'");
        return shell_output(r.git + "rev-parse HEAD");
    };
    shell_output(r.git + "checkout -q -b topic");
    commit("b1", 400000);
    const std::string b2 = commit("b2", 480000);
    commit("b3", 480000);
    shell_output(r.git + "checkout -q main");
    commit("m1", std::nullopt);
    commit("m2", std::nullopt);
    shell_output(r.git + "merge -q --no-ff -m merge topic");
    const std::string merge = shell_output(r.git + "rev-parse HEAD");
    for (const bool enter : {false, true}) {
        std::vector<std::string> args{"bisect",  "--good", r.sha[0],    "--bad",     merge,      "--build", build_cmd,
                                      "--bench", "./prog", "--backend", "callgrind", "--format", "json"};
        if (enter) args.emplace_back("--enter-merges");
        const auto res = run_perfgate(args, r.dir);
        CHECK(res.code == 0);
        const json j = bisect_json(res);
        CHECK(j["commits"] == (enter ? 6 : 3));
        CHECK(culprit_shas(j) == std::vector<std::string>{enter ? b2 : merge});
    }
}

TEST_CASE("perfgate bisect --budget: a spent budget ends with the range, --resume goes on")
{
    temp_dir dir("perfgate-bisect");
    const repo r(dir.path(), 8, {{3, 480000}});
    // The ends are always measured; a budget of a millisecond is spent before the first step.
    const auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[8], "--build", build_cmd, "--bench",
                                   "./prog", "--backend", "callgrind", "--budget", "0.001", "--format", "json"},
                                  r.dir);
    CHECK(res.code == 3);
    const json j = bisect_json(res);
    CHECK(j["status"] == "undecided");
    CHECK(j["culprits"].empty());
    REQUIRE(j["open_ranges"].size() == 1);
    CHECK(j["open_ranges"][0]["after"]["sha"] == r.sha[0]);
    CHECK(j["open_ranges"][0]["up_to"]["sha"] == r.sha[8]);
    CHECK(j["open_ranges"][0]["why"] == "undecided");
    REQUIRE(j["steps"].size() == 1);
    CHECK(j["steps"][0]["repetitions"] == 0);
    CHECK(j["steps"][0]["why"].get<std::string>().find("the --budget was spent") != std::string::npos);
    CHECK(j["measured_commits"] == 2);
    // Without a budget the resumed bisection measures that step after all.
    const auto more = run_perfgate({"bisect", "--resume", "--format", "json"}, r.dir);
    CHECK(more.code == 0);
    CHECK(culprit_shas(bisect_json(more)) == std::vector<std::string>{r.sha[3]});
    CHECK(run_perfgate({"bisect", "--resume", "--budget", "0"}, r.dir).code == 2);
}

TEST_CASE("perfgate bisect: bad input is exit 2 naming it, and nothing is left behind")
{
    temp_dir dir("perfgate-bisect");
    const repo r(dir.path(), 4, {{2, 480000}});
    const auto bisect = [&](const std::string& good, const std::string& bad, const std::string& build) {
        return run_perfgate({"bisect", "--good", good, "--bad", bad, "--build", build, "--bench", "./prog", "--backend",
                             "callgrind"},
                            r.dir);
    };
    const auto nothing_stored = [&] {
        CHECK_FALSE(fs::exists(r.dir / ".perfgate"));
        check_nothing_left(r);
    };

    SUBCASE("good is not an ancestor of bad")
    {
        const auto res = bisect(r.sha[3], r.sha[1], build_cmd);
        CHECK(res.code == 2);
        CHECK(res.err.find("input.bisect_range") != std::string::npos);
        CHECK(res.err.find("is not an ancestor of --bad") != std::string::npos);
        nothing_stored();
    }
    SUBCASE("a commit that is not in the repository")
    {
        const auto res = bisect("no-such-ref", r.sha[4], build_cmd);
        CHECK(res.code == 2);
        CHECK(res.err.find("--good 'no-such-ref': not a commit") != std::string::npos);
        nothing_stored();
    }
    SUBCASE("a dirty tree")
    {
        std::ofstream(r.dir / "prog.c", std::ios::app) << "/* edited */\n";
        const auto res = bisect(r.sha[0], r.sha[4], build_cmd);
        CHECK(res.code == 2);
        CHECK(res.err.find("input.dirty_tree") != std::string::npos);
        CHECK(res.err.find("prog.c") != std::string::npos);
        CHECK_FALSE(fs::exists(r.dir / ".perfgate"));
    }
    SUBCASE("a build that fails at both ends")
    {
        const auto res = bisect(r.sha[0], r.sha[4], "exit 3");
        CHECK(res.code == 2);
        CHECK(res.err.find("input.bisect_endpoint") != std::string::npos);
        CHECK(res.err.find("the build fails at both ends") != std::string::npos);
        CHECK(res.err.find(r.sha[0].substr(0, 12)) != std::string::npos);
        nothing_stored();
    }
    SUBCASE("a benchmark that fails at an end")
    {
        const auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[4], "--build", build_cmd, "--bench",
                                       "./no-such-program", "--backend", "callgrind"},
                                      r.dir);
        CHECK(res.code == 2);
        CHECK(res.err.find("the benchmark fails") != std::string::npos);
        nothing_stored();
    }
    SUBCASE("usage: a missing option, a bad resolution")
    {
        auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[4], "--bench", "./prog"}, r.dir);
        CHECK(res.code == 2);
        CHECK(res.err.find("--build") != std::string::npos);
        res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[4], "--build", build_cmd, "--bench", "./prog",
                            "--resolution", "0.5"},
                           r.dir);
        CHECK(res.code == 2);
        CHECK(res.err.find("--resolution") != std::string::npos);
        nothing_stored();
    }
    SUBCASE("an unknown alert, in a store or without one")
    {
        const fs::path db = dir.path() / "history.db";
        REQUIRE(run_perfgate({"token", "create", "--db", db.string(), "--project", "demo"}).code == 0);
        auto res = run_perfgate({"bisect", "--db", db.string(), "--project", "demo", "--alert", "999", "--build",
                                 build_cmd, "--bench", "./prog", "--backend", "callgrind"},
                                r.dir);
        CHECK(res.code == 2);
        CHECK(res.err.find("--alert 999: project 'demo' has no such alert") != std::string::npos);
        nothing_stored();
        res = run_perfgate({"bisect", "--alert", "1", "--build", build_cmd, "--bench", "./prog"}, r.dir);
        CHECK(res.code == 2);
        CHECK(res.err.find("no database at .perfgate/perfgate.db") != std::string::npos);
        nothing_stored();
        res = run_perfgate({"bisect", "--alert", "1", "--good", r.sha[0], "--build", build_cmd, "--bench", "./prog"},
                           r.dir);
        CHECK(res.code == 2);
        CHECK(res.err.find("--good is the alert's") != std::string::npos);
    }
    SUBCASE("ends that measure alike: exit 3, said, not a culprit")
    {
        const auto res = bisect(r.sha[2], r.sha[4], build_cmd);
        CHECK(res.code == 3);
        CHECK(res.out.find("no change on instructions") != std::string::npos);
    }
}

TEST_CASE("perfgate bisect (perf, noisy): a 3x step found with interleaved, repeated measurements")
{
    temp_dir dir("perfgate-bisect");
    // About 3 ms of work, 9 ms from commit 6 of 12: 3x in task-clock.
    const repo r(dir.path(), 12, {{6, 9000000}}, {}, 3000000);
    const auto res = run_perfgate({"bisect", "--good", r.sha[0], "--bad", r.sha[12], "--build", build_cmd, "--bench",
                                   "./prog", "--backend", "perf", "--events", "task-clock", "--counter", "task-clock",
                                   "--format", "json"},
                                  r.dir);
    INFO(res.err);
    CHECK(res.code == 0);
    const json j = bisect_json(res);
    CHECK(j["status"] == "found");
    CHECK(culprit_shas(j) == std::vector<std::string>{r.sha[6]});
    for (const auto& s : j["steps"]) CHECK(s["repetitions"].get<int>() >= 10);
    const auto& e = j["culprits"][0]["effects"];
    bool saw = false;
    for (const auto& x : e) {
        if (x["counter"] != "task-clock") continue;
        saw = true;
        // The interval of a 3x step in the program lies above 0 (less than
        // +200%: exec and start-up add the same time to both sides; under a
        // sanitizer or a busy machine start-up dominates, and a lower bound
        // of +17.6% was seen, so only its side of 0 is asserted).
        CHECK(x["ci_pct"][0].get<double>() > 0);
    }
    CHECK(saw);
}

// A main line whose pushes each carried 4 commits: one stored run per push
// (commits 0, 4, ..., 48) with instruction counts that step +10% at the push
// of commit 32, whose alert then spans commits 29..32; the programs step at
// commit 30. `target` is --db DB or --server URL --token T.
void upload_pushes(const repo& r, const fs::path& dir, const std::vector<std::string>& target)
{
    for (int i = 0; i <= 48; i += 4) {
        const fs::path csv = dir / fmt::format("push-{}.csv", i);
        std::ofstream(csv) << "# started on Sat Nov 28 12:00:00 2026\n\n"
                           << (i >= 32 ? "1100000" : "1000000") << ",,instructions,1000,100.00,,\n";
        std::vector<std::string> args{"upload", "--project", "demo", "--role",    "baseline",  "--git-sha",
                                      r.sha[i], "--branch",  "main", "--backend", "callgrind", csv.string()};
        args.insert(args.begin() + 1, target.begin(), target.end());
        const auto up = run_perfgate(args);
        INFO(up.err);
        REQUIRE(up.code == 0);
    }
}

void check_alert_bisection(const repo& r, const perfgate::test::cli_result& res)
{
    INFO(res.err);
    CHECK(res.code == 0);
    const json j = bisect_json(res);
    CHECK(j["alert"] == 1);
    CHECK(j["good"]["sha"] == r.sha[28]); // the run before the change
    CHECK(j["bad"]["sha"] == r.sha[32]);  // the alert's own
    CHECK(j["commits"] == 4);
    CHECK(j["counter"] == "instructions"); // the alert's
    CHECK(culprit_shas(j) == std::vector<std::string>{r.sha[30]});
}

// The culprit perfgate alerts show reads back after bisecting alert 1 (its
// JSON), with the text it prints checked too. `target` names the store.
json stored_culprit(const repo& r, const std::vector<std::string>& target)
{
    std::vector<std::string> args{"alerts", "show", "1", "--format", "json"};
    args.insert(args.end(), target.begin(), target.end());
    const auto shown = run_perfgate(args);
    INFO(shown.err);
    REQUIRE(shown.code == 0);
    const json k = json::parse(shown.out)["culprit"];
    REQUIRE(k.is_object());
    CHECK(k["status"] == "found");
    CHECK(k["good"] == r.sha[28]);
    CHECK(k["bad"] == r.sha[32]);
    CHECK(k["commits"] == 4);
    CHECK(k["backend"] == "callgrind");
    REQUIRE(k["culprits"].size() == 1);
    CHECK(k["culprits"][0]["sha"] == r.sha[30]);
    CHECK(k["culprits"][0]["subject"] == "commit 30");
    CHECK_FALSE(k["culprits"][0]["effects"].empty());
    CHECK(k["culprits"][0]["effects"][0]["counter"] == "instructions");
    CHECK(k["culprits"][0]["effects"][0]["status"] == "regression");
    args.erase(args.begin() + 3, args.begin() + 5); // the text
    const auto text = run_perfgate(args);
    REQUIRE(text.code == 0);
    CHECK(text.out.find("  culprit    found (perfgate bisect, instructions on callgrind") != std::string::npos);
    CHECK(text.out.find("    " + r.sha[30] + " commit 30 (") != std::string::npos);
    CHECK(text.out.find("% of the change\n      instructions") != std::string::npos);
    return k;
}

TEST_CASE("perfgate bisect --alert: the range of an alert's change point in a local store, the culprit stored there")
{
    temp_dir dir("perfgate-bisect");
    const repo r(dir.path(), 48, {{30, 416000}});
    const std::vector<std::string> bisect_args{"--alert", "1",         "--build",   build_cmd,  "--bench",
                                               "./prog",  "--backend", "callgrind", "--format", "json"};

    SUBCASE("a local store")
    {
        const fs::path db = dir.path() / "history.db";
        REQUIRE(run_perfgate({"token", "create", "--db", db.string(), "--project", "demo"}).code == 0);
        upload_pushes(r, dir.path(), {"--db", db.string()});
        std::vector<std::string> args{"bisect", "--db", db.string(), "--project", "demo"};
        args.insert(args.end(), bisect_args.begin(), bisect_args.end());
        check_alert_bisection(r, run_perfgate(args, r.dir));
        // Stored on the alert, without a token: the CLI on its database.
        const json k = stored_culprit(r, {"--db", db.string(), "--project", "demo"});
        CHECK(k["written_by"].is_null());
        check_nothing_left(r);
    }
}

// The engine is the test's (support/database.hpp): SQLite, or PostgreSQL
// under the postgresql/ variant ctest runs (tests/CMakeLists.txt).
TEST_CASE("perfgate bisect --alert over a real server: the range read, the culprit stored and read back")
{
    temp_dir dir("perfgate-bisect");
    const repo r(dir.path(), 48, {{30, 416000}});
    const std::vector<std::string> bisect_args{"--alert", "1",         "--build",   build_cmd,  "--bench",
                                               "./prog",  "--backend", "callgrind", "--format", "json"};
    {
        perfgate::test::test_database where;
        const fs::path db = where.location();
        const std::string token = perfgate::test::create_token(db, "demo");
        perfgate::test::server_process server(db, dir.path() / "server.log");
        upload_pushes(r, dir.path(), {"--server", server.url(), "--token", token});
        // The server's watch runs in the background: wait for its alert.
        bool opened = false;
        for (int i = 0; i < 100 && !opened; ++i) {
            const auto list = run_perfgate({"alerts", "--server", server.url(), "--project", "demo", "--token", token,
                                            "--format", "json"});
            opened = list.code == 0 && !json::parse(list.out)["alerts"].empty();
            if (!opened) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        REQUIRE(opened);
        std::vector<std::string> args{"bisect", "--server", server.url(), "--project", "demo", "--token", token};
        args.insert(args.end(), bisect_args.begin(), bisect_args.end());
        // A token that may read but not triage: the bisection runs, its
        // report is written, and storing it fails naming the scope (exit 2).
        const auto made = run_perfgate({"token", "create", "--db", db.string(), "--project", "demo", "--label",
                                        "reader", "--scope", "read"});
        REQUIRE(made.code == 0);
        const std::string reader = made.out.substr(0, made.out.find_first_of("\r\n"));
        std::vector<std::string> read_only{"bisect", "--server", server.url(), "--project", "demo", "--token", reader};
        read_only.insert(read_only.end(), bisect_args.begin(), bisect_args.end());
        const auto refused = run_perfgate(read_only, r.dir);
        CHECK(refused.code == 2);
        CHECK(refused.err.find("storing the result on alert 1") != std::string::npos);
        CHECK(refused.err.find("admin") != std::string::npos);
        CHECK(json::parse(refused.out)["status"] == "found");
        // --no-store: the same bisection, nothing stored.
        read_only.push_back("--no-store");
        CHECK(run_perfgate(read_only, r.dir).code == 0);
        const auto before = run_perfgate({"alerts", "show", "1", "--server", server.url(), "--project", "demo",
                                          "--token", token, "--format", "json"});
        REQUIRE(before.code == 0);
        CHECK(json::parse(before.out)["culprit"].is_null());
        check_alert_bisection(r, run_perfgate(args, r.dir));
        // Stored on the alert by the token that sent it, as GET .../alerts/1
        // answers it and perfgate alerts show prints it.
        const json k = stored_culprit(r, {"--server", server.url(), "--project", "demo", "--token", token});
        CHECK(k["written_by"]["id"].get<std::int64_t>() > 0);
        // An alert the server does not have: exit 2 naming it, nothing built
        // (the finished bisection's state file is kept: removed first).
        CHECK(fs::exists(r.dir / ".perfgate/bisect/state.json"));
        fs::remove_all(r.dir / ".perfgate");
        args = {"bisect",  "--server", server.url(), "--project", "demo",    "--token", token,
                "--alert", "77",       "--build",    build_cmd,   "--bench", "./prog"};
        const auto unknown = run_perfgate(args, r.dir);
        CHECK(unknown.code == 2);
        CHECK(unknown.err.find("--alert 77: project 'demo' has no such alert") != std::string::npos);
        CHECK_FALSE(fs::exists(r.dir / ".perfgate"));
        check_nothing_left(r);
    }
}

} // namespace
