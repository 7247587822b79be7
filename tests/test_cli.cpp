// The perfgate command as a process: what it does when its own output or its
// input files are hostile (full disks, devices, FIFOs, directories).
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/process.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/man_page.hpp"
#include "cli/version.hpp"
#include "model/error.hpp"

namespace {

using namespace perfgate::test;

const std::string examples = PERFGATE_SOURCE_DIR "/examples/data";

struct outcome {
    int code = -1;   // exit status, or 128 + signal
    std::string err; // what it wrote to stderr (when not redirected elsewhere)
};

// Runs `perfgate ARGS` through the shell, so tests can redirect to /dev/full.
// stdout goes to `out`; stderr is captured unless `redirect` replaces both.
outcome sh(const std::string& args, const std::string& redirect = "", const std::string& out = "/dev/null")
{
    static int n = 0;
    const auto err_file = std::filesystem::temp_directory_path() /
                          ("perfgate-cli-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".err");
    const std::string cmd = "'" + perfgate_exe + "' " + args + " " +
                            (redirect.empty() ? "> " + out + " 2> '" + err_file.string() + "'" : redirect);
    const int st = std::system(cmd.c_str());
    outcome o;
    if (WIFEXITED(st)) o.code = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) o.code = 128 + WTERMSIG(st);
    std::ifstream in(err_file);
    std::stringstream text;
    text << in.rdbuf();
    o.err = text.str();
    std::filesystem::remove(err_file);
    return o;
}

const std::string regression_args = "compare --baseline '" + examples + "/baseline.csv' --candidate '" + examples +
                                    "/regressed.csv'";

} // namespace

TEST_CASE("a report that cannot reach stdout is exit 4, never a silent verdict")
{
    const auto o = sh(regression_args, "> /dev/full 2> /dev/null");
    CHECK(o.code == 4);
    const auto with_err = sh(regression_args, "", "/dev/full");
    CHECK(with_err.code == 4);
    CHECK(with_err.err.find("[io.stdout]") != std::string::npos);
}

TEST_CASE("a stderr that cannot be written never aborts the command")
{
    // Before: fmt::print threw inside the error handler -> SIGABRT, exit 134.
    CHECK(sh("compare --baseline /nonexistent --candidate x", "> /dev/null 2> /dev/full").code == 2);
    CHECK(sh(regression_args, "> /dev/null 2> /dev/full").code == 1);
    CHECK(sh("no-such-command", "2> /dev/full").code == 2);
}

TEST_CASE("hostile input files get a clear error naming them")
{
    SUBCASE("a directory")
    {
        const auto o = sh("compare --baseline /tmp --candidate /tmp");
        CHECK(o.code == 2);
        CHECK(o.err.find("/tmp: cannot read: is a directory") != std::string::npos);
        const auto p = sh("compare --policy /tmp " + regression_args.substr(std::string("compare").size()));
        CHECK(p.code == 2);
        CHECK(p.err.find("/tmp: cannot read: is a directory") != std::string::npos);
    }
    SUBCASE("/dev/zero is cut at the input limit instead of filling memory")
    {
        const auto start = std::chrono::steady_clock::now();
        const auto o = sh("compare --baseline /dev/zero --candidate /dev/zero");
        CHECK(o.code == 2);
        CHECK(o.err.find("/dev/zero: cannot read: more than the limit of 64 MiB") != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    }
    SUBCASE("a FIFO nobody writes to does not hang")
    {
        const auto fifo = std::filesystem::temp_directory_path() / ("perfgate-fifo-" + std::to_string(::getpid()));
        std::filesystem::remove(fifo);
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const auto start = std::chrono::steady_clock::now();
        const auto o = sh("compare --baseline '" + fifo.string() + "' --candidate '" + fifo.string() + "'");
        CHECK(o.code == 2);
        CHECK(o.err.find(fifo.string()) != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
        std::filesystem::remove(fifo);
    }
    SUBCASE("a pipe with a writer is read whole (process substitution, /dev/stdin)")
    {
        const auto o = sh("compare --baseline /dev/stdin --candidate '" + examples + "/regressed.csv' < '" + examples +
                          "/baseline.csv'");
        CHECK(o.code == 1);
    }
}

namespace {

// A file in $TMPDIR with `text`, removed at scope exit.
struct temp_file {
    std::filesystem::path path;
    explicit temp_file(const std::string& name, const std::string& text)
        : path(std::filesystem::temp_directory_path() / ("perfgate-cli-" + std::to_string(::getpid()) + "-" + name))
    {
        std::ofstream(path) << text;
    }
    ~temp_file() { std::filesystem::remove(path); }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    [[nodiscard]] std::string quoted() const { return "'" + path.string() + "'"; }
};

std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// 60 values, 100 then 105 from index 40, with a small deterministic wobble.
std::string step_series(const std::string& header = "", const std::string& prefix = "")
{
    std::string out = header;
    for (int i = 0; i < 60; ++i) {
        const double v = (i >= 40 ? 105.0 : 100.0) + 0.3 * ((i * 7) % 5 - 2);
        out += prefix + std::to_string(v) + "\n";
    }
    return out;
}

} // namespace

// Issue 31, finding 11: nlohmann's parse throws out_of_range (not
// parse_error) for a number beyond double range; it escaped as "internal",
// exit 4. The real binary on a policy file and a run config.
TEST_CASE("a number beyond double range in a policy or run config is exit 2 naming the file and line")
{
    for (const std::string number : {"1e400", "-1e400", "123456789e999"}) {
        const temp_file policy("policy-" + number + ".json",
                               "{\n  \"alpha\": 0.05,\n  \"threshold_pct\": " + number + "\n}\n");
        const auto p = sh("compare --policy " + policy.quoted() +
                          regression_args.substr(std::string("compare").size()));
        INFO(p.err);
        CHECK(p.code == 2);
        CHECK(p.err.find("[policy.bad_json]") != std::string::npos);
        CHECK(p.err.find(policy.path.string() + ":3: ") != std::string::npos);
        CHECK(p.err.find(number) != std::string::npos);

        const temp_file config("config-" + number + ".json",
                               "[\n {\"name\": \"a\",\n  \"baseline\": [\"true\"],\n  \"candidate\": [\"true\"],\n"
                               "  \"repetitions\": " +
                                   number + "}\n]\n");
        const auto c = sh("run --config " + config.quoted() + " --format json");
        INFO(c.err);
        CHECK(c.code == 2);
        CHECK(c.err.find("[input.bad_config]") != std::string::npos);
        CHECK(c.err.find(config.path.string() + ":5: ") != std::string::npos);
    }
}

// Issue 31, finding 9: a unit is printed as it is, so one holding a
// terminal escape (OSC title, CSI clear, BEL, C1) is refused with its line.
TEST_CASE("a perf CSV unit with a terminal escape or invalid UTF-8 is exit 2 naming the file, line and event")
{
    const std::string good = slurp(examples + "/baseline.csv");
    const auto at = good.find(",msec,task-clock,");
    REQUIRE(at != std::string::npos);
    const auto line = 1 + std::count(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    for (const std::string unit : {"\x1b]0;owned\x07msec", "ms\x1b[2J",
                                   "\xc2\x9b"
                                   "31m",
                                   "ms\xff", "m\x07s"}) {
        std::string evil = good;
        evil.replace(at + 1, 4, unit);
        const temp_file csv("unit.csv", evil);
        const auto o = sh("compare --baseline " + csv.quoted() + " --candidate '" + examples + "/regressed.csv'");
        INFO(o.err);
        CHECK(o.code == 2);
        CHECK(o.err.find("[ingest.bad_csv]") != std::string::npos);
        CHECK(o.err.find(csv.path.string() + ":" + std::to_string(line) + ": the unit of event 'task-clock'") !=
              std::string::npos);
        CHECK(o.err.find('\x1b') == std::string::npos); // the message itself is safe to print
    }
}

TEST_CASE("perfgate change-points: a list or a CSV column in, change points out, bad input is exit 2 naming the line")
{
    const auto out = std::filesystem::temp_directory_path() /
                     ("perfgate-cli-cp-" + std::to_string(::getpid()) + ".out");
    SUBCASE("one number per line, comments and blank lines skipped; JSON in the contract's shape")
    {
        temp_file f("list.txt", "# task-clock medians\n\n" + step_series());
        REQUIRE(sh("change-points " + f.quoted() + " --format json", "", out.string()).code == 0);
        const std::string json = slurp(out);
        CHECK(json.find("\"change_points\"") != std::string::npos);
        CHECK(json.find("\"index\": 40") != std::string::npos);
        for (const char* key : {"p_value", "mean_before", "mean_after", "median_before", "median_after", "delta_pct",
                                "shift", "shift_ci"}) {
            CHECK(json.find(std::string("\"") + key + "\"") != std::string::npos);
        }
        REQUIRE(sh("change-points " + f.quoted() + " --compat otava --format json", "", out.string()).code == 0);
        CHECK(slurp(out).find("\"index\": 40") != std::string::npos);
        REQUIRE(sh("change-points " + f.quoted(), "", out.string()).code == 0);
        CHECK(slurp(out).find("1 change point in 60 values") != std::string::npos);
    }
    SUBCASE("a CSV file: column value by default, --column to pick another")
    {
        temp_file f("series.csv", step_series("sha,value\n", "abc,"));
        REQUIRE(sh("change-points " + f.quoted() + " --format json", "", out.string()).code == 0);
        CHECK(slurp(out).find("\"index\": 40") != std::string::npos);
        temp_file g("other.csv", step_series("sha,median\n", "abc,"));
        REQUIRE(sh("change-points " + g.quoted() + " --column median --format json", "", out.string()).code == 0);
        CHECK(slurp(out).find("\"index\": 40") != std::string::npos);
        const auto missing = sh("change-points " + g.quoted());
        CHECK(missing.code == 2);
        CHECK(missing.err.find(g.path.string() + ":1: the CSV header has no column 'value'") != std::string::npos);
    }
    SUBCASE("a stationary series has none")
    {
        std::string flat;
        for (int i = 0; i < 80; ++i) flat += std::to_string(100 + (i * 3) % 7) + "\n";
        temp_file f("flat.txt", flat);
        REQUIRE(sh("change-points " + f.quoted(), "", out.string()).code == 0);
        CHECK(slurp(out).find("no change points in 80 values") != std::string::npos);
    }
    SUBCASE("bad input")
    {
        temp_file word("word.txt", "1\n2\n\nthree\n");
        auto o = sh("change-points " + word.quoted());
        CHECK(o.code == 2);
        CHECK(o.err.find(word.path.string() + ":4: 'three' is not a finite number") != std::string::npos);
        temp_file inf("inf.txt", "1\ninf\n");
        o = sh("change-points " + inf.quoted());
        CHECK(o.code == 2);
        CHECK(o.err.find(":2: 'inf' is not a finite number") != std::string::npos);
        temp_file empty("empty.txt", "# nothing\n\n");
        o = sh("change-points " + empty.quoted());
        CHECK(o.code == 2);
        CHECK(o.err.find(empty.path.string() + ": no numbers in the file") != std::string::npos);
        temp_file shortrow("short.csv", "a,value\n1,2\n3\n");
        o = sh("change-points " + shortrow.quoted());
        CHECK(o.code == 2);
        CHECK(o.err.find(":3: 1 fields, no value in column 'value'") != std::string::npos);
        o = sh("change-points " + word.quoted() + " --window 1");
        CHECK(o.code == 2);
        CHECK(o.err.find("--window") != std::string::npos);
        for (const char* p : {"0", "1", "1.5", "-0.1", "nan"}) {
            o = sh("change-points " + word.quoted() + " --max-p " + p);
            CHECK(o.code == 2);
            CHECK(o.err.find("--max-p") != std::string::npos);
        }
        o = sh("change-points " + word.quoted() + " --min-magnitude -1");
        CHECK(o.code == 2);
        o = sh("change-points /nonexistent/series.txt");
        CHECK(o.code == 2);
        CHECK(o.err.find("/nonexistent/series.txt") != std::string::npos);
        o = sh("change-points");
        CHECK(o.code == 2);
    }
    std::filesystem::remove(out);
}

TEST_CASE("perfgate history and alerts default to perfgate run's store and project, and show the role")
{
    temp_dir dir("pg-cli-defaults");
    const auto here = dir.path();
    // Nothing stored here yet: a clear error naming the default, not an empty store.
    auto none = run_perfgate({"history", "--benchmark", "default", "--counter", "user-time"}, here);
    CHECK(none.code == 2);
    CHECK(none.err.find("no database at .perfgate/perfgate.db") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(here / ".perfgate"));
    CHECK(run_perfgate({"alerts"}, here).code == 2);
    // A commit the store would refuse is said before anything runs.
    auto bad_sha = run_perfgate({"run", "-q", "--backend", "rusage", "-r", "2", "--base-sha", "bad sha", "--baseline",
                                 "touch " + (here / "ran").string(), "--candidate", "true"},
                                here);
    CHECK(bad_sha.code == 2);
    CHECK(bad_sha.err.find("'git_sha (--base-sha)'") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(here / "ran"));

    const auto run = run_perfgate({"run", "-q", "--backend", "rusage", "-r", "2", "--warmup", "0", "--sha", "c0ffee",
                                   "--branch", "main", "--baseline", "true", "--candidate", "true"},
                                  here);
    INFO(run.err);
    REQUIRE((run.code == 0 || run.code == 3));
    auto h = run_perfgate({"history", "--benchmark", "default", "--counter", "user-time"}, here);
    INFO(h.err);
    REQUIRE(h.code == 0);
    // The baseline run only (the watched series); its commit was not given: unknown.
    CHECK(h.out.find("role") != std::string::npos);
    CHECK(h.out.find("unknown") != std::string::npos);
    CHECK(h.out.find("baseline") != std::string::npos);
    CHECK(h.out.find("candidate") == std::string::npos);
    auto all = run_perfgate(
        {"history", "--benchmark", "default", "--counter", "user-time", "--role", "all", "--format", "csv"}, here);
    REQUIRE(all.code == 0);
    CHECK(all.out.find(",c0ffee,main,") != std::string::npos);
    CHECK(all.out.find(",candidate\n") != std::string::npos);
    CHECK(all.out.find(",,main,") != std::string::npos); // the baseline's unknown commit
    CHECK(run_perfgate({"history", "--benchmark", "default", "--counter", "user-time", "--role", "both"}, here).code ==
          2);
    auto alerts = run_perfgate({"alerts"}, here);
    INFO(alerts.err);
    CHECK(alerts.code == 0);
}

TEST_CASE("perfgate project shows and sets the watched baseline branch, bad input is exit 2")
{
    const auto db = std::filesystem::temp_directory_path() /
                    ("perfgate-cli-project-" + std::to_string(::getpid()) + ".db");
    const auto out = std::filesystem::temp_directory_path() /
                     ("perfgate-cli-project-" + std::to_string(::getpid()) + ".out");
    const std::string qdb = "'" + db.string() + "'";
    REQUIRE(sh("token create --db " + qdb + " --project demo").code == 0);
    REQUIRE(sh("project --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(slurp(out).find("baseline_branch main") != std::string::npos);
    REQUIRE(sh("project --db " + qdb + " --project demo --baseline-branch trunk", "", out.string()).code == 0);
    CHECK(slurp(out).find("baseline_branch trunk") != std::string::npos);
    REQUIRE(sh("project --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(slurp(out).find("baseline_branch trunk") != std::string::npos);

    auto o = sh("project --db " + qdb + " --project nope");
    CHECK(o.code == 2);
    CHECK(o.err.find("no project 'nope'") != std::string::npos);
    o = sh("project --db " + qdb + " --project demo --baseline-branch 'a b'");
    CHECK(o.code == 2);
    CHECK(o.err.find("field 'branch'") != std::string::npos);
    o = sh("alerts list --db " + qdb + " --project demo --status open");
    CHECK(o.code == 2);
    CHECK(o.err.find("--status") != std::string::npos);
    o = sh("alerts show 0 --db " + qdb + " --project demo");
    CHECK(o.code == 2);
    o = sh("alerts show 7 --db " + qdb + " --project demo");
    CHECK(o.code == 2);
    CHECK(o.err.find("has no alert 7") != std::string::npos);
    REQUIRE(sh("alerts --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(slurp(out).find("no alerts match") != std::string::npos);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
    std::filesystem::remove(out);
}

TEST_CASE("perfgate project sets the repository URL, a bad URL is exit 2 naming --repository-url and stores nothing")
{
    const auto db = std::filesystem::temp_directory_path() /
                    ("perfgate-cli-repo-" + std::to_string(::getpid()) + ".db");
    const auto out = std::filesystem::temp_directory_path() /
                     ("perfgate-cli-repo-" + std::to_string(::getpid()) + ".out");
    const std::string qdb = "'" + db.string() + "'";
    REQUIRE(sh("token create --db " + qdb + " --project demo").code == 0);
    REQUIRE(sh("project --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(
        slurp(out) ==
        "project demo\nbaseline_branch main\nrepository_url -\n"
        "change_point_method perfgate (default)\nchange_point_window 50 (default)\nchange_point_max_p 0.001 (default)\n"
        "change_point_min_magnitude 0 (default)\nwebhooks 0\n");

    REQUIRE(sh("project --db " + qdb + " --project demo --repository-url https://github.com/acme/demo/", "",
               out.string())
                .code == 0);
    CHECK(
        slurp(out) ==
        "project demo\nbaseline_branch main\nrepository_url https://github.com/acme/demo\n"
        "change_point_method perfgate (default)\nchange_point_window 50 (default)\nchange_point_max_p 0.001 (default)\n"
        "change_point_min_magnitude 0 (default)\nwebhooks 0\n");
    REQUIRE(sh("project --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(slurp(out).find("repository_url https://github.com/acme/demo\n") != std::string::npos);

    auto o = sh("project --db " + qdb + " --project demo --repository-url github.com/acme/demo");
    CHECK(o.code == 2);
    CHECK(o.err.find("--repository-url: 'github.com/acme/demo' must start with https:// or http://") !=
          std::string::npos);
    o = sh("project --db " + qdb + " --project demo --repository-url 'https://x.org/a b'");
    CHECK(o.code == 2);
    CHECK(o.err.find("--repository-url: byte 0x20 at offset 15") != std::string::npos);
    // With a bad URL, a good branch given with it is not stored either.
    o = sh("project --db " + qdb + " --project demo --baseline-branch trunk --repository-url 'https://x.org/?q'");
    CHECK(o.code == 2);
    CHECK(o.err.find("--repository-url: '?' at offset 14") != std::string::npos);
    REQUIRE(sh("project --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(
        slurp(out) ==
        "project demo\nbaseline_branch main\nrepository_url https://github.com/acme/demo\n"
        "change_point_method perfgate (default)\nchange_point_window 50 (default)\nchange_point_max_p 0.001 (default)\n"
        "change_point_min_magnitude 0 (default)\nwebhooks 0\n");

    // Both at once; "" clears the URL.
    REQUIRE(sh("project --db " + qdb + " --project demo --baseline-branch trunk --repository-url ''", "", out.string())
                .code == 0);
    CHECK(
        slurp(out) ==
        "project demo\nbaseline_branch trunk\nrepository_url -\n"
        "change_point_method perfgate (default)\nchange_point_window 50 (default)\nchange_point_max_p 0.001 (default)\n"
        "change_point_min_magnitude 0 (default)\nwebhooks 0\n");
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
    std::filesystem::remove(out);
}

TEST_CASE("perfgate project sets change-point settings, a bad value is exit 2 naming the option and stores nothing")
{
    const auto db = std::filesystem::temp_directory_path() / ("perfgate-cli-cp-" + std::to_string(::getpid()) + ".db");
    const auto out = std::filesystem::temp_directory_path() /
                     ("perfgate-cli-cp-" + std::to_string(::getpid()) + ".out");
    const std::string qdb = "'" + db.string() + "'";
    REQUIRE(sh("token create --db " + qdb + " --project demo").code == 0);
    REQUIRE(sh("project --db " + qdb + " --project demo --change-point-method otava --change-point-window 30", "",
               out.string())
                .code == 0);
    CHECK(slurp(out) == "project demo\nbaseline_branch main\nrepository_url -\nchange_point_method otava\n"
                        "change_point_window 30\nchange_point_max_p 0.001 (default)\n"
                        "change_point_min_magnitude 0 (default)\nwebhooks 0\n");
    REQUIRE(sh("project --db " + qdb + " --project demo --change-point-max-p 0.01 --change-point-min-magnitude 0.02",
               "", out.string())
                .code == 0);
    CHECK(slurp(out).find("change_point_method otava\nchange_point_window 30\nchange_point_max_p 0.01\n"
                          "change_point_min_magnitude 0.02\n") != std::string::npos);

    const std::vector<std::pair<std::string, std::string>> bad{
        {"--change-point-method cusum", "--change-point-method: expected perfgate or otava, got 'cusum'"},
        {"--change-point-window 1", "--change-point-window: expected an integer in [2, 1000000], got '1'"},
        {"--change-point-window x", "--change-point-window"},
        {"--change-point-max-p 1", "--change-point-max-p: expected 0 < P < 1, got 1"},
        {"--change-point-max-p 0", "--change-point-max-p: expected 0 < P < 1, got 0"},
        {"--change-point-min-magnitude -0.5", "--change-point-min-magnitude: expected a finite number >= 0, got -0.5"},
        {"--change-point-min-magnitude inf", "--change-point-min-magnitude"},
    };
    for (const auto& b : bad) {
        CAPTURE(b.first);
        // A good option given with a bad one is not stored either.
        const auto o = sh("project --db " + qdb + " --project demo --baseline-branch trunk " + b.first);
        CHECK(o.code == 2);
        CHECK(o.err.find(b.second) != std::string::npos);
    }
    REQUIRE(sh("project --db " + qdb + " --project demo", "", out.string()).code == 0);
    CHECK(slurp(out).find("baseline_branch main\n") != std::string::npos);
    CHECK(slurp(out).find("change_point_method otava\nchange_point_window 30\n") != std::string::npos);
    // perfgate serve checks its defaults before it opens anything.
    const auto o = sh("serve --db " + qdb + " --listen 127.0.0.1:0 --change-point-max-p 2");
    CHECK(o.code == 2);
    CHECK(o.err.find("--change-point-max-p: expected 0 < P < 1, got 2") != std::string::npos);
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
    std::filesystem::remove(out);
}

TEST_CASE("perfgate db migrate and db backup: a checked copy under a new name, never over a file")
{
    const auto dir = std::filesystem::temp_directory_path() / ("perfgate-cli-db-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto db = dir / "live.db", copy = dir / "copy.db", out = dir / "out.txt";
    const std::string qdb = "'" + db.string() + "'";
    REQUIRE(sh("db migrate --db " + qdb, "", out.string()).code == 0);
    // 017_acceptances.sql is the newest SQLite migration.
    CHECK(slurp(out) == "perfgate db: " + db.string() + " (sqlite) is at schema version 20\n");
    REQUIRE(sh("token create --db " + qdb + " --project demo").code == 0);
    REQUIRE(sh("project --db " + qdb + " --project demo --baseline-branch trunk").code == 0);

    auto o = sh("db backup '" + copy.string() + "' --db " + qdb);
    REQUIRE(o.code == 0);
    CHECK(o.err.find("backed up " + db.string() + " (schema version 20) to " + copy.string()) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(copy.string() + ".tmp"));
    // The copy is a database with the project in it.
    REQUIRE(sh("project --db '" + copy.string() + "' --project demo", "", out.string()).code == 0);
    CHECK(slurp(out).find("baseline_branch trunk") != std::string::npos);

    o = sh("db backup '" + copy.string() + "' --db " + qdb);
    CHECK(o.code == 2);
    CHECK(o.err.find("[usage.file_exists]") != std::string::npos);
    o = sh("db backup '" + (dir / "x.dump").string() + "' --db 'postgresql://perfgate:secret@db.example/perfgate'");
    CHECK(o.code == 2);
    CHECK(o.err.find("pg_dump --format=custom --file") != std::string::npos);
    CHECK(o.err.find("secret") == std::string::npos);
    o = sh("db backup '" + (dir / "no-such-dir" / "x.db").string() + "' --db " + qdb);
    CHECK(o.code == 4);
    CHECK(o.err.find("[store.backup]") != std::string::npos);
    CHECK(sh("db vacuum --db " + qdb).code == 2);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
}

// --version, --help and the man page: generated from the one version
// (project(VERSION) in CMakeLists.txt) and the command tables.
namespace {

struct captured {
    int code = -1;
    std::string out; // stdout
    std::string err; // stderr
};

// `perfgate ARGS` with stdout captured too.
captured capture(const std::string& args)
{
    const temp_file out("stdout", "");
    const auto o = sh(args, "", out.path.string());
    return {o.code, slurp(out.path), o.err};
}

// The VERSION of project() in the top-level CMakeLists.txt, read here
// independently of the build's generated header.
std::string cmake_project_version()
{
    const std::string text = slurp(PERFGATE_SOURCE_DIR "/CMakeLists.txt");
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex(R"(project\(\s*perfgate\s+VERSION\s+([0-9][0-9.]*))")));
    return m[1].str();
}

} // namespace

TEST_CASE("perfgate --version prints the CMake project version and the commit")
{
    const auto v = capture("--version");
    REQUIRE(v.code == 0);
    const std::string expected = "perfgate " + cmake_project_version() + " (";
    CHECK(v.out.starts_with(expected));
    CHECK(v.out.ends_with(")\n"));
    // Between the parentheses: git describe's answer or "unknown", never empty.
    REQUIRE(v.out.size() > expected.size() + 2);
    CHECK(v.out.find('\n') == v.out.size() - 1);
    const std::string describe = v.out.substr(expected.size(), v.out.size() - expected.size() - 2);
    // The sources are their own git checkout (not unpacked inside another
    // repository) and git is here: the commit is known.
    const temp_file top("toplevel", "");
    const bool git_checkout =
        std::system(("git -C '" PERFGATE_SOURCE_DIR "' rev-parse --show-toplevel > " + top.quoted() + " 2> /dev/null")
                        .c_str()) == 0 &&
        std::filesystem::equivalent(slurp(top.path).substr(0, slurp(top.path).find('\n')), PERFGATE_SOURCE_DIR);
    INFO("git describe part: ", describe);
    if (git_checkout) CHECK(describe != "unknown");
    else CHECK(describe == "unknown");
}

TEST_CASE("perfgate run --help lists every option under its heading")
{
    const auto h = capture("run --help");
    REQUIRE(h.code == 0);
    const auto& spec = perfgate::cli::run_spec();
    const auto groups = perfgate::cli::visible_option_groups(spec);
    // run's options all have a heading; --help alone closes the list under "Options".
    for (const char* heading : {"Benchmarks", "Measurement", "Sequential sampling", "Policy", "Output",
                                "Profiling and attribution", "Commit and pull request", "GitHub", "Store and server"}) {
        INFO(heading);
        CHECK(h.out.find("\n" + std::string(heading) + ":\n") != std::string::npos);
    }
    REQUIRE(groups.size() == 10);
    CHECK(groups.back().heading.empty());
    REQUIRE(groups.back().options.size() == 1);
    CHECK(groups.back().options.front()->name == "help");

    std::size_t listed = 0, hidden = 0;
    for (const auto& o : spec.options) (o.hidden ? hidden : listed) += 1;
    CHECK(listed >= 40);
    std::size_t shown = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::string heading = "\n" + (groups[g].heading.empty() ? std::string("Options") : groups[g].heading) +
                                    ":\n";
        const auto begin = h.out.find(heading);
        REQUIRE(begin != std::string::npos);
        const auto end = g + 1 < groups.size() ? h.out.find("\n" +
                                                            (groups[g + 1].heading.empty() ? std::string("Options")
                                                                                           : groups[g + 1].heading) +
                                                            ":\n")
                                               : h.out.find("\nExit codes:");
        REQUIRE(end != std::string::npos);
        const std::string section = h.out.substr(begin, end - begin);
        for (const auto* o : groups[g].options) {
            INFO(heading, "--", o->name);
            CHECK(section.find("--" + o->name + " ") != std::string::npos);
            CHECK(section.find(o->help) != std::string::npos); // the help text, word for word
            ++shown;
        }
    }
    CHECK(shown == listed + 1);
    // Every option line in the output is one of these: nothing listed twice.
    std::size_t lines = 0;
    std::istringstream text(h.out);
    for (std::string line; std::getline(text, line);) {
        if (line.starts_with("  -") || line.starts_with("      --")) ++lines;
    }
    CHECK(lines == shown);
}

TEST_CASE("every command's --help lists its options, and perfgate --help every command")
{
    const auto top = capture("--help");
    REQUIRE(top.code == 0);
    for (const auto& c : perfgate::cli::all_commands()) {
        const auto& spec = c.spec();
        INFO(spec.name);
        CHECK(perfgate::cli::find_command(spec.name) == &c);
        CHECK(top.out.find("\n  " + spec.name + " ") != std::string::npos);
        CHECK(top.out.find(std::string(c.summary)) != std::string::npos);
        const auto h = capture(spec.name + " --help");
        REQUIRE(h.code == 0);
        CHECK(h.out == perfgate::cli::usage_text(spec));
        CHECK(h.out.starts_with("Usage: perfgate " + spec.name + " "));
        for (const auto& o : spec.options) {
            INFO("--", o.name);
            CHECK((h.out.find("--" + o.name + " ") != std::string::npos) == !o.hidden);
        }
    }
    CHECK(perfgate::cli::find_command("no-such-command") == nullptr);
}

namespace {

const std::string built_man_page = PERFGATE_BINARY_DIR "/man/perfgate.1";

bool groff_available() { return std::system("command -v groff > /dev/null 2>&1") == 0; }

} // namespace

TEST_CASE("the man page is generated from the command tables: every command, every option, their headings")
{
    using namespace perfgate::cli;
    const std::string page = slurp(built_man_page);
    REQUIRE_FALSE(page.empty());
    // The built file is the tables as they are now.
    CHECK(page == man_page(all_commands(), version()));
    CHECK(page.find(".TH PERFGATE 1 \"\" \"perfgate " + cmake_project_version() + "\"") != std::string::npos);
    for (const char* section :
         {"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"}) {
        CHECK(page.find(std::string("\n.SH ") + section + "\n") != std::string::npos);
    }
    for (const auto& c : all_commands()) {
        const auto& spec = c.spec();
        INFO(spec.name);
        const auto at = page.find("\n.SS " + roff_escape(spec.name) + "\n");
        REQUIRE(at != std::string::npos);
        const auto next = page.find("\n.S", at + 1);
        const std::string section = page.substr(at, next - at);
        CHECK(section.find(roff_escape(spec.synopsis.substr(0, spec.synopsis.find('\n')))) != std::string::npos);
        for (const auto& group : visible_option_groups(spec)) {
            CHECK(section.find(".I " + roff_escape(group.heading.empty() ? "Options" : group.heading) + "\n") !=
                  std::string::npos);
        }
        for (const auto& o : spec.options) {
            INFO("--", o.name);
            const bool listed = section.find("\\fB\\-\\-" + roff_escape(o.name) + "\\fR") != std::string::npos;
            CHECK(listed == !o.hidden);
            if (!o.hidden)
                CHECK(section.find(roff_escape(o.help.substr(0, o.help.find(' ', 20)))) != std::string::npos);
        }
    }
    // Every exit code, and the variable behind --token.
    for (const char* code : {"\n.B 0\n", "\n.B 1\n", "\n.B 2\n", "\n.B 3\n", "\n.B 4\n"})
        CHECK(page.find(code) != std::string::npos);
    CHECK(page.find(".B PERFGATE_TOKEN\n") != std::string::npos);
}

TEST_CASE("the man page renders without groff warnings" * doctest::skip(!groff_available()))
{
    const temp_file warnings("groff-warnings", "");
    const std::string cmd = "groff -man -Tutf8 -ww -z '" + built_man_page + "' 2> " + warnings.quoted();
    CHECK(std::system(cmd.c_str()) == 0);
    CHECK(slurp(warnings.path) == "");
}

TEST_CASE("cmake --install puts perfgate, perfgate-exec and the man page under the prefix")
{
    const auto prefix = std::filesystem::temp_directory_path() / ("perfgate-cli-install-" + std::to_string(::getpid()));
    std::filesystem::remove_all(prefix);
    const temp_file log("install-log", "");
    const std::string cmd = "'" PERFGATE_CMAKE_COMMAND "' --install '" PERFGATE_BINARY_DIR "' --prefix '" +
                            prefix.string() + "' > " + log.quoted() + " 2>&1";
    const int st = std::system(cmd.c_str());
    INFO(slurp(log.path));
    REQUIRE(st == 0);
    for (const char* exe : {"bin/perfgate", "bin/perfgate-exec"}) {
        INFO(exe);
        CHECK(::access((prefix / exe).c_str(), X_OK) == 0);
    }
    const auto man = prefix / "share/man/man1/perfgate.1";
    CHECK(std::filesystem::is_regular_file(man));
    CHECK(slurp(man) == slurp(built_man_page));
    // The installed binary runs from there.
    const temp_file out("installed-version", "");
    CHECK(std::system(("'" + (prefix / "bin/perfgate").string() + "' --version > " + out.quoted()).c_str()) == 0);
    CHECK(slurp(out.path) == perfgate::cli::version_line() + "\n");
    std::filesystem::remove_all(prefix);
}

// ---- parse_args on a command table, in process ------------------------------

namespace {

// A command table with each kind of option parse_args reads.
perfgate::cli::command_spec parse_args_demo()
{
    return {"demo",
            "[OPTIONS] [-- COMMAND...]",
            "A command for the parser's tests.",
            {
                {"baseline", 'b', true, false, "FILE", "the baseline"},
                {"repetitions", 'r', true, false, "N", "repetitions"},
                {"counter", 'c', true, true, "NAME", "a counter, repeatable"},
                {"quiet", 'q', false, false, "", "less output"},
                {"token", 0, true, false, "TOKEN", "a token", "PERFGATE_TEST_PARSE_ARGS_TOKEN", {"db"}},
                {"db", 0, true, false, "", "a database"},
            }};
}

perfgate::cli::parsed_args parse_demo(const perfgate::cli::argv_t& argv)
{
    auto parsed = perfgate::cli::parse_args(parse_args_demo(), argv);
    REQUIRE(parsed.has_value());
    return *parsed;
}

// The error parse_args throws on argv: "id: message", "" when none.
std::string parse_demo_error(const perfgate::cli::argv_t& argv)
{
    try {
        (void)perfgate::cli::parse_args(parse_args_demo(), argv);
    } catch (const perfgate::error& e) {
        return e.id() + ": " + e.what();
    }
    return "";
}

// Sets an environment variable for one scope.
struct scoped_env {
    const char* name;
    scoped_env(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
    ~scoped_env() { ::unsetenv(name); }
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;
};

} // namespace

TEST_CASE("parse_args: long, short and inline values, flags, positionals, everything after --")
{
    const auto a = parse_demo({"--baseline", "b.csv", "-r5", "--counter=cycles", "-c", "instructions", "-q", "first",
                               "-", "--", "--quiet", "-x"});
    CHECK(a.command() == "demo");
    CHECK(a.get("baseline") == "b.csv");
    CHECK(a.get_int("repetitions", 1, 100) == 5);
    CHECK(a.all("counter") == std::vector<std::string>{"cycles", "instructions"});
    CHECK(a.has("quiet"));
    CHECK(a.get("quiet") == "");
    CHECK_FALSE(a.has("db"));
    CHECK(a.positional() == std::vector<std::string>{"first", "-", "--quiet", "-x"});

    SUBCASE("--name=value splits at the first '='; an inline value may be empty or start with '-'")
    {
        const auto b = parse_demo({"--baseline=a=b.csv", "--db=", "-r", "-3"});
        CHECK(b.get("baseline") == "a=b.csv");
        CHECK(b.has("db"));
        CHECK(b.get("db") == "");
        CHECK(b.get("repetitions") == "-3");
        CHECK(b.positional().empty());
    }
    SUBCASE("a separate value is taken as it is, even when it looks like an option")
    {
        const auto c = parse_demo({"-b", "--quiet"});
        CHECK(c.get("baseline") == "--quiet");
        CHECK_FALSE(c.has("quiet"));
    }
}

TEST_CASE("parse_args: each usage error names the option and the command")
{
    CHECK(parse_demo_error({"--nope"}) ==
          "usage.unknown_option: perfgate demo: unknown option --nope (see perfgate demo --help)");
    CHECK(parse_demo_error({"--nope=1"}) ==
          "usage.unknown_option: perfgate demo: unknown option --nope (see perfgate demo --help)");
    CHECK(parse_demo_error({"-z5"}) ==
          "usage.unknown_option: perfgate demo: unknown option -z5 (see perfgate demo --help)");
    CHECK(parse_demo_error({"--baseline"}) ==
          "usage.missing_value: perfgate demo: option --baseline needs a value (FILE)");
    CHECK(parse_demo_error({"--db"}) == "usage.missing_value: perfgate demo: option --db needs a value (VALUE)");
    CHECK(parse_demo_error({"--quiet=yes"}) == "usage.unexpected_value: perfgate demo: option --quiet takes no value");
    CHECK(parse_demo_error({"-qx"}) == "usage.unexpected_value: perfgate demo: option --quiet takes no value");
    CHECK(parse_demo_error({"-b", "a", "--baseline=b"}) ==
          "usage.repeated_option: perfgate demo: option --baseline given more than once");
    CHECK(parse_demo_error({"--db", "d", "--token", "t"}) ==
          "usage.conflict: perfgate demo: --token and --db cannot be given together");
    // After "--" nothing is an option.
    CHECK(parse_demo_error({"--", "--nope", "--baseline"}) == "");
}

TEST_CASE("parse_args: an option not given falls back to its environment variable, which never conflicts")
{
    CHECK_FALSE(parse_demo({}).has("token"));
    {
        const scoped_env env("PERFGATE_TEST_PARSE_ARGS_TOKEN", "from-env");
        CHECK(parse_demo({}).get("token") == "from-env");
        CHECK(parse_demo({"--token", "cli"}).all("token") == std::vector<std::string>{"cli"});
        const auto with_db = parse_demo({"--db", "d"});
        CHECK(with_db.get("db") == "d");
        CHECK(with_db.get("token") == "from-env");
    }
    {
        const scoped_env empty("PERFGATE_TEST_PARSE_ARGS_TOKEN", "");
        CHECK_FALSE(parse_demo({}).has("token"));
    }
}

TEST_CASE("parse_args: -h/--help prints the usage and returns nothing, before conflicts are checked")
{
    std::ostringstream out;
    auto* const saved = std::cout.rdbuf(out.rdbuf());
    const auto help = perfgate::cli::parse_args(parse_args_demo(), {"--token", "t", "--db", "d", "-h"});
    const auto long_help = perfgate::cli::parse_args(parse_args_demo(), {"--help"});
    std::cout.rdbuf(saved);
    CHECK_FALSE(help.has_value());
    CHECK_FALSE(long_help.has_value());
    CHECK(out.str() == perfgate::cli::usage_text(parse_args_demo()) + perfgate::cli::usage_text(parse_args_demo()));
    CHECK(out.str().find("Usage: perfgate demo") != std::string::npos);
    // argv is read whole first: an unknown option is an error even with --help.
    CHECK(parse_demo_error({"--help", "--nope"}).starts_with("usage.unknown_option: "));
}

TEST_CASE("a harness value that overflows in ns is exit 2 naming the benchmark and field, and nothing is stored")
{
    // 1e300 s fits a double, 1e300 s in ns does not: perfgate compare
    // aborted (SIGABRT) and upload --db exited 4 with store.constraint.
    temp_dir dir("pg-cli-overflow");
    const auto here = dir.path();
    std::string rows;
    for (int i = 0; i < 5; ++i) {
        rows += fmt::format(R"({}{{"name": "BM_a", "run_type": "iteration", "real_time": {}, "cpu_time": 1,
                               "time_unit": "s"}})",
                            i ? ", " : "", i == 3 ? "1e300" : "1");
    }
    std::ofstream(here / "big.json") << R"({"context": {}, "benchmarks": [)" << rows << "]}";
    const std::string big = (here / "big.json").string();
    const std::string message = big + ": benchmarks[3].real_time: benchmark 'BM_a', counter 'real_time': the value is "
                                      "out of range in ns";
    const auto cmp = run_perfgate({"compare", "--baseline", big, "--candidate", big}, here);
    CHECK(cmp.code == 2);
    CHECK_MESSAGE(cmp.err.find("error [ingest.bad_input]: " + message) != std::string::npos, cmp.err);
    const std::string db = (here / "p.db").string();
    const auto up = run_perfgate({"upload", "--db", db, "--project", "demo", "--role", "baseline", "--git-sha",
                                  "abc123", "--branch", "main", big},
                                 here);
    CHECK(up.code == 2);
    CHECK_MESSAGE(up.err.find("error [ingest.bad_input]: " + message) != std::string::npos, up.err);
    const auto h = run_perfgate({"history", "--db", db, "--project", "demo", "--benchmark", "BM_a", "--counter",
                                 "real_time", "--format", "csv"},
                                here);
    CHECK(h.out.find("abc123") == std::string::npos);
}

TEST_CASE("perfgate compare and upload read google/benchmark JSON, and name a bad --input-format")
{
    temp_dir dir("pg-cli-gbench");
    const auto here = dir.path();
    const std::string data = PERFGATE_TESTDATA_DIR "/gbench/";
    const auto cmp = run_perfgate({"compare", "--baseline", data + "baseline.json", "--candidate",
                                   data + "candidate.json", "--format", "json"},
                                  here);
    INFO(cmp.err);
    CHECK(cmp.code == 1); // BM_Accumulate doubled its work
    const auto report = nlohmann::json::parse(cmp.out);
    REQUIRE(report["benchmarks"].size() == 4);
    CHECK(report["benchmarks"][2]["name"] == "BM_Accumulate");
    CHECK(report["verdict"] == "fail");

    const auto bad = run_perfgate({"compare", "--baseline", data + "baseline.json", "--candidate",
                                   data + "candidate.json", "--input-format", "json"},
                                  here);
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--input-format: 'json' is not one of perf, gbench") != std::string::npos);
    const auto aggregates = run_perfgate(
        {"compare", "--baseline", data + "aggregates_only.json", "--candidate", data + "candidate.json"}, here);
    CHECK(aggregates.code == 2);
    CHECK(aggregates.err.find("aggregates_only.json: benchmarks: only aggregates") != std::string::npos);

    const auto up = run_perfgate({"upload", "--db", (here / "p.db").string(), "--project", "demo", "--role", "baseline",
                                  "--git-sha", "abc123", "--branch", "main", data + "baseline.json"},
                                 here);
    INFO(up.err);
    REQUIRE(up.code == 0);
    CHECK(up.out.find("4 runs: ") != std::string::npos);
    CHECK(up.out.find(": BM_StringCat/threads:2\n") != std::string::npos);
    const auto h = run_perfgate({"history", "--db", (here / "p.db").string(), "--project", "demo", "--benchmark",
                                 "BM_Accumulate", "--counter", "real_time", "--format", "csv"},
                                here);
    INFO(h.err);
    REQUIRE(h.code == 0);
    CHECK(h.out.find(",abc123,main,") != std::string::npos);

    // The text table writes values as the dashboard does (report/quantity.hpp:
    // a unit and an SI prefix, six digits), never 2.06549e+08.
    std::ofstream(here / "counts.json") << R"({"perfgate_samples": 1, "benchmarks": {"parse": {"counters": {
        "instructions": {"samples": [206549123, 206549123]},
        "task-clock": {"unit": "msec", "samples": [12.5, 12.75]}}}}})";
    REQUIRE(run_perfgate({"upload", "--db", (here / "p.db").string(), "--project", "demo", "--role", "baseline",
                          "--git-sha", "abc124", "--branch", "main", (here / "counts.json").string()},
                         here)
                .code == 0);
    const auto counts = run_perfgate({"history", "--db", (here / "p.db").string(), "--project", "demo", "--benchmark",
                                      "parse", "--counter", "instructions"},
                                     here);
    INFO(counts.err);
    REQUIRE(counts.code == 0);
    CHECK(counts.out.find("206.549 M") != std::string::npos);
    CHECK(counts.out.find("e+") == std::string::npos);
    const auto times = run_perfgate({"history", "--db", (here / "p.db").string(), "--project", "demo", "--benchmark",
                                     "parse", "--counter", "task-clock"},
                                    here);
    REQUIRE(times.code == 0);
    CHECK(times.out.find("12.625 ms") != std::string::npos); // the mean of 12.5 and 12.75 ms
}
