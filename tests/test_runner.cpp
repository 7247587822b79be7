// Tests of the measurement engine of `perfgate run`: processes, schedules,
// config and command parsing, git info, and end-to-end runs of the real
// perfgate binary under real perf stat on software events (this machine and
// hosted CI runners have no PMU), callgrind and rusage.
#include "runner/measure.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "support/process.hpp"
#include <fmt/format.h>

#include "support/numbers.hpp"
#include <nlohmann/json.hpp>

#include "capture/perf_csv.hpp"
#include "cli/cli.hpp"
#include "fake_github.hpp"
#include "model/error.hpp"
#include "runner/config.hpp"
#include "runner/git_info.hpp"
#include "runner/process.hpp"
#include "service/service.hpp"
#include "store/comparisons.hpp"
#include "store/maintenance.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"

using namespace perfgate;
using namespace perfgate::runner;
using namespace perfgate::cli;
using namespace std::chrono_literals;

namespace {

using namespace perfgate::test;


// A shell loop of n iterations: a few ms of CPU per thousand iterations.
std::string loop(int n) { return "sh -c 'i=0; while [ $i -lt " + std::to_string(n) + " ]; do i=$((i+1)); done'"; }

std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Compiles a tiny C program with a loop of n iterations; returns its path.
std::string compile_loop(const std::filesystem::path& dir, long n)
{
    std::ofstream(dir / "p.c") << "int main(void){volatile long s=0; for(long i=0;i<" << n
                               << ";i++) s+=i; return 0;}\n";
    spawn_options so;
    so.argv = {"cc", "-O1", "-o", (dir / "p").string(), (dir / "p.c").string()};
    REQUIRE(run_process(so).status.success());
    return (dir / "p").string();
}

measure_options fast_options()
{
    measure_options opt;
    opt.repetitions = 2;
    opt.warmup = 0;
    opt.exec_helper = exec_helper;
    opt.events = {"task-clock", "page-faults", "duration_time"};
    return opt;
}

benchmark_spec spec_of(std::string name, const std::string& base, const std::string& cand)
{
    benchmark_spec s;
    s.name = std::move(name);
    s.baseline = parse_command(base);
    s.candidate = parse_command(cand);
    return s;
}

const model::counter_samples* find_counter(const model::run_record& run, std::string_view name)
{
    for (auto& c : run.counters) {
        if (c.counter == name) return &c;
    }
    return nullptr;
}

} // namespace

TEST_CASE("make_schedule orders the executions")
{
    using S = side;
    auto sides = [](const std::vector<slot>& sched) {
        std::string s;
        for (auto& x : sched)
            s += x.warmup ? (x.which == S::baseline ? 'a' : 'b') : (x.which == S::baseline ? 'A' : 'B');
        return s;
    };

    SUBCASE("alternate is ABBA, warmups first")
    {
        auto sched = make_schedule(4, 1, run_order::alternate, 0);
        CHECK(sides(sched) == "abABBAABBA");
        CHECK(sched[2] == slot{S::baseline, 1, false});
        CHECK(sched[4] == slot{S::candidate, 2, false});
        CHECK(sched[5] == slot{S::baseline, 2, false});
    }
    SUBCASE("blocked runs one side after the other")
    {
        auto sched = make_schedule(3, 0, run_order::blocked, 0);
        CHECK(sides(sched) == "AAABBB");
        CHECK(sched[3] == slot{S::candidate, 1, false});
    }
    SUBCASE("random: both sides once per round, reproducible per seed")
    {
        auto a = make_schedule(64, 0, run_order::random, 42);
        CHECK(a == make_schedule(64, 0, run_order::random, 42));
        CHECK(a != make_schedule(64, 0, run_order::random, 43));
        int baseline_first = 0;
        for (std::size_t i = 0; i < a.size(); i += 2) {
            CHECK(a[i].round == a[i + 1].round);
            CHECK(a[i].which != a[i + 1].which);
            baseline_first += a[i].which == S::baseline;
        }
        // Not degenerate: 64 fair coin flips are all equal with p = 2^-63.
        CHECK(baseline_first > 0);
        CHECK(baseline_first < 64);
    }
}

TEST_CASE("parse_command splits or hands the text to the shell")
{
    SUBCASE("plain words and quotes are exec'd directly")
    {
        auto c = parse_command("./bench --size 'a b' \"c d\" e\\ f");
        CHECK(c.argv == std::vector<std::string>{"./bench", "--size", "a b", "c d", "e f"});
        CHECK(c.text == "./bench --size 'a b' \"c d\" e\\ f");
    }
    SUBCASE("a quoted script for sh -c is still one argument")
    {
        auto c = parse_command("sh -c 'exit 3'");
        CHECK(c.argv == std::vector<std::string>{"sh", "-c", "exit 3"});
    }
    SUBCASE("shell syntax goes through /bin/sh -c")
    {
        for (std::string text :
             {"make && ./a", "./a > out", "./a | wc", "echo $HOME", "FOO=1 ./a", "ls *.c", "echo \"$x\""}) {
            CAPTURE(text);
            CHECK(parse_command(text).argv == std::vector<std::string>{"/bin/sh", "-c", text});
        }
    }
    SUBCASE("errors name the command")
    {
        CHECK_THROWS_WITH_AS(parse_command("echo 'open"), "command 'echo 'open': unterminated single quote",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(parse_command("   "), "command '   ': empty command", perfgate::error);
        // execve takes C strings: a NUL would cut the argument short.
        CHECK_THROWS_WITH_AS(parse_command(std::string("./a\0--rm", 8)),
                             "command './a\\x00--rm': control byte 0x00 at offset 3 (a NUL would cut the argument "
                             "short)",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(parse_command("./a \x1b[2Kb"), "command './a \\x1b[2Kb': control byte 0x1b at offset 4",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(command_from_argv({"./a", std::string("x\0y", 3)}),
                             "command './a x\\x00y': control byte 0x00 at offset 5 (a NUL would cut the argument "
                             "short)",
                             perfgate::error);
        // Tab and newline are the shell's separators.
        CHECK(parse_command("./a\tb").argv == std::vector<std::string>{"./a", "b"});
        CHECK(parse_command("./a\n./b").argv == std::vector<std::string>{"/bin/sh", "-c", "./a\n./b"});
        try {
            parse_command("a \"b");
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.bad_command");
        }
    }
}

TEST_CASE("config files")
{
    temp_dir dir("pg-test");
    auto write = [&](const std::string& text) {
        auto p = dir.path() / "bench.json";
        std::ofstream(p) << text;
        return p;
    };

    SUBCASE("a list of benchmarks with every field")
    {
        auto p = write(R"([{"name": "parse", "baseline": "./old in.json", "candidate": ["./new", "in json"],
                            "cwd": "sub", "env": {"OMP_NUM_THREADS": "1"}, "repetitions": 20, "warmup": 2},
                           {"name": "b2", "baseline": "true", "candidate": "true"}])");
        auto config = load_config(p);
        const auto& specs = config.benchmarks;
        REQUIRE(specs.size() == 2);
        CHECK_FALSE(config.which.has_value());
        CHECK(config.suppressions.empty());
        CHECK(specs[0].name == "parse");
        CHECK(specs[0].baseline.argv == std::vector<std::string>{"./old", "in.json"});
        CHECK(specs[0].candidate.argv == std::vector<std::string>{"./new", "in json"});
        CHECK(specs[0].cwd == dir.path() / "sub");
        CHECK(specs[0].env == std::vector<std::pair<std::string, std::string>>{{"OMP_NUM_THREADS", "1"}});
        CHECK(specs[0].repetitions == 20);
        CHECK(specs[0].warmup == 2);
        CHECK_FALSE(specs[1].repetitions.has_value());
    }
    SUBCASE("the {\"benchmarks\": [...]} form")
    {
        auto config = parse_config(nlohmann::json::parse(R"({"benchmarks": [{"name": "x", "baseline": "a",
                                   "candidate": "b"}]})"),
                                   "c.json", ".");
        CHECK(config.benchmarks.size() == 1);
    }
    SUBCASE("the object form's backend and suppressions, relative to the config file's directory")
    {
        std::ofstream(dir.path() / "omp.supp") << "{\n  omp\n  Memcheck:Leak\n  ...\n  obj:*libgomp*\n}\n";
        auto p = write(R"({"backend": "memcheck", "suppressions": ["omp.supp"],
                           "benchmarks": [{"name": "x", "baseline": "a", "candidate": "b"}]})");
        auto config = load_config(p);
        CHECK(config.which == perfgate::runner::backend::memcheck);
        REQUIRE(config.suppressions.size() == 1);
        CHECK(config.suppressions[0] == std::filesystem::absolute(dir.path() / "omp.supp"));
        CHECK(config.benchmarks.size() == 1);

        const auto list = R"("benchmarks": [{"name": "x", "baseline": "a", "candidate": "b"}])";
        auto doc = nlohmann::json::parse(fmt::format(R"({{"backend": "cachegrind", {}}})", list));
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."),
                             R"(c.json: backend: expected "perf", "native", "callgrind", "rusage" or "memcheck")",
                             perfgate::error);
        doc = nlohmann::json::parse(fmt::format(R"({{"backend": 3, {}}})", list));
        CHECK_THROWS_AS(parse_config(doc, "c.json", "."), perfgate::error);
        doc = nlohmann::json::parse(fmt::format(R"({{"suppressions": ["omp.supp"], {}}})", list));
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", dir.path()),
                             R"(c.json: suppressions: needs "backend": "memcheck")", perfgate::error);
        doc = nlohmann::json::parse(fmt::format(R"({{"backend": "memcheck", "suppressions": "omp.supp", {}}})", list));
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", dir.path()),
                             "c.json: suppressions: expected a list of file names", perfgate::error);
        doc = nlohmann::json::parse(
            fmt::format(R"({{"backend": "memcheck", "suppressions": ["omp.supp", "gone.supp"], {}}})", list));
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", dir.path()),
                             "c.json: suppressions[1]: 'gone.supp' is not a readable file", perfgate::error);
        doc = nlohmann::json::parse(fmt::format(R"({{"backend": "memcheck", "suppressions": [""], {}}})", list));
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", dir.path()), "c.json: suppressions[0]: expected a file name",
                             perfgate::error);
        doc = nlohmann::json::parse(fmt::format(R"({{"backend": "memcheck", "suppresions": [], {}}})", list));
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", dir.path()),
                             R"(c.json: suppresions: unknown key (expected "benchmarks", "backend" or "suppressions"))",
                             perfgate::error);
    }
    SUBCASE("errors name the file and the key")
    {
        auto p = write(R"([{"name": "x", "baseline": "a", "candidate": "b", "basline": "c"}])");
        CHECK_THROWS_WITH_AS(load_config(p), (p.string() + ": benchmarks[0].basline: unknown key").c_str(),
                             perfgate::error);
        auto doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "a", "candidate": "b"},
                                              {"name": "x", "baseline": "a", "candidate": "b"}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."), "c.json: benchmarks[1].name: duplicate name 'x'",
                             perfgate::error);
        doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "a", "candidate": "b", "repetitions": 0}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."),
                             "c.json: benchmarks[0].repetitions: expected an integer >= 1", perfgate::error);
        doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "a"}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."), "c.json: benchmarks[0].candidate: missing",
                             perfgate::error);
        doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "'a", "candidate": "b"}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."),
                             "c.json: benchmarks[0].baseline: command ''a': unterminated single quote",
                             perfgate::error);
        // Names the store would refuse are refused here, before measuring.
        doc = nlohmann::json::parse(R"([{"name": "ok", "baseline": "a", "candidate": "b"},
                                        {"name": "a b'c", "baseline": "a", "candidate": "b"}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "bench.json", "."),
                             "bench.json: benchmarks[1].name: byte 0x20 at offset 1 is not allowed (names use letters, "
                             "digits and _.-/:+=@,<>[]()#%^~{})",
                             perfgate::error);
        doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "a", "candidate": ["b", "c\u0000d"]}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."),
                             "c.json: benchmarks[0].candidate: command 'b c\\x00d': control byte 0x00 at offset 3 (a "
                             "NUL would cut the argument short)",
                             perfgate::error);
        doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "a\u0001", "candidate": "b"}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."),
                             "c.json: benchmarks[0].baseline: command 'a\\x01': control byte 0x01 at offset 1",
                             perfgate::error);
        doc = nlohmann::json::parse(R"([{"name": "x", "baseline": "a", "candidate": "b", "env": {"K": "v\u0000w"}}])");
        CHECK_THROWS_WITH_AS(parse_config(doc, "c.json", "."), "c.json: benchmarks[0].env.K: contains a NUL byte",
                             perfgate::error);
        try {
            parse_config(nlohmann::json::parse(R"([{"name": "a b", "baseline": "a", "candidate": "b"}])"), "c.json",
                         ".");
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.bad_config");
        }
        try {
            load_config(write("[{"));
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.bad_config");
            CHECK(std::string(e.what()).find("invalid JSON") != std::string::npos);
        }
    }
}

TEST_CASE("line_tail keeps the last lines with bounded memory")
{
    line_tail t(3, 5);
    t.append("one\ntwo\nthr");
    t.append("ee\nfour\n0123456789\nlast");
    CHECK(t.lines() == std::vector<std::string>{"four", "01234...", "last"});
}

TEST_CASE("child processes")
{
    SUBCASE("exit status, stdout and stderr")
    {
        spawn_options so;
        so.argv = {"sh", "-c", "echo out; echo err1 >&2; echo err2 >&2; exit 3"};
        so.capture_stdout = true;
        auto r = run_process(so);
        CHECK(r.status.exited);
        CHECK(r.status.code == 3);
        CHECK(r.status.describe() == "exited with status 3");
        CHECK(r.stdout_text == "out\n");
        CHECK(r.stderr_tail == std::vector<std::string>{"err1", "err2"});
        CHECK(r.wall > 0ns);
    }
    SUBCASE("killed by a signal")
    {
        spawn_options so;
        so.argv = {"sh", "-c", "kill -9 $$"};
        auto r = run_process(so);
        CHECK_FALSE(r.status.exited);
        CHECK(r.status.signal == 9);
        CHECK(r.status.describe() == "was killed by signal 9 (SIGKILL)");
    }
    SUBCASE("the deadline kills the whole process group")
    {
        spawn_options so;
        so.argv = {"sh", "-c", "sleep 10 & sleep 10; echo never"};
        so.capture_stdout = true;
        auto t0 = std::chrono::steady_clock::now();
        auto r = run_process(so, 200ms);
        CHECK(r.status.timed_out);
        CHECK_FALSE(r.status.success());
        CHECK(std::chrono::steady_clock::now() - t0 < 5s);
        CHECK(r.stdout_text.empty());
    }
    SUBCASE("cwd, environment, CPU affinity and ASLR are set in the child")
    {
        temp_dir dir("pg-test");
        spawn_options so;
        so.argv = {"sh", "-c",
                   "pwd; echo $PG_TEST_VAR; grep Cpus_allowed_list /proc/self/status; cat /proc/self/personality"};
        so.cwd = dir.path();
        so.env = {{"PG_TEST_VAR", "first"}, {"PG_TEST_VAR", "hello"}}; // the later one wins
        so.cpus = {0};
        so.disable_aslr = true;
        so.capture_stdout = true;
        auto r = run_process(so);
        REQUIRE(r.status.success());
        std::istringstream lines(r.stdout_text);
        std::string pwd, var, cpus, personality;
        std::getline(lines, pwd);
        std::getline(lines, var);
        std::getline(lines, cpus);
        std::getline(lines, personality);
        CHECK(std::filesystem::equivalent(pwd, dir.path()));
        CHECK(var == "hello");
        CHECK(cpus.ends_with("\t0"));
        // ADDR_NO_RANDOMIZE = 0x0040000 (linux/personality.h)
        CHECK((std::stoul(personality, nullptr, 16) & 0x0040000) != 0);
    }
    SUBCASE("a program that cannot be executed is an error naming it")
    {
        spawn_options so;
        so.argv = {"/nonexistent/prog"};
        CHECK_THROWS_WITH_AS(run_process(so), "cannot execute '/nonexistent/prog': No such file or directory",
                             perfgate::error);
        so.argv = {"no-such-command-pg"};
        CHECK_THROWS_WITH_AS(run_process(so), "cannot execute 'no-such-command-pg': command not found in PATH",
                             perfgate::error);
        so.argv = {"true"};
        so.cwd = "/nonexistent-dir";
        try {
            run_process(so);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "process.exec_failed");
            CHECK(std::string(e.what()) == "cannot run 'true' in '/nonexistent-dir': No such file or directory");
        }
    }
}

TEST_CASE("perfgate-exec reports the workload's true outcome")
{
    temp_dir dir("pg-test");
    auto status = (dir.path() / "status").string();
    auto run = [&](std::vector<std::string> cmd) {
        spawn_options so;
        so.argv = {exec_helper, status, "-s", "PG_X=1", "-u", "HOME", "--"};
        so.argv.insert(so.argv.end(), cmd.begin(), cmd.end());
        so.capture_stdout = true;
        auto r = run_process(so);
        return std::pair{r, slurp(status)};
    };
    // "KIND VALUE", then the workload's own rusage when it ran.
    auto outcome = [](const std::string& status) { return status.substr(0, status.find(' ', status.find(' ') + 1)); };
    auto [ok, s1] = run({"sh", "-c", "echo ${PG_X}${HOME:-nohome}"});
    CHECK(ok.stdout_text == "1nohome\n");
    CHECK(outcome(s1) == "exit 0");
    CHECK(outcome(run({"sh", "-c", "exit 3"}).second) == "exit 3");
    CHECK(outcome(run({"sh", "-c", "kill -SEGV $$"}).second) == "signal 11");
    CHECK(run({"/nonexistent"}).second == "exec 2\n");

    SUBCASE("user/sys time and peak RSS are the workload's own, not perf's")
    {
        // Touches 64 MiB: its max-rss must show it; perf's ~13 MiB must not hide
        // a smaller one either (measured through perf in the end-to-end test).
        std::ofstream(dir.path() / "big.c") << "#include <stdlib.h>\nint main(void){volatile char*p=malloc(64<<20);"
                                               "for(long i=0;i<(64<<20);i+=4096)p[i]=1;return p[4096]==1?0:1;}\n";
        spawn_options cc;
        cc.argv = {"cc", "-O0", "-o", (dir.path() / "big").string(), (dir.path() / "big.c").string()};
        REQUIRE(run_process(cc).status.success());
        std::istringstream in(run({(dir.path() / "big").string()}).second);
        std::string kind;
        long long value = -1, user_ns = -1, sys_ns = -1, rss_kib = -1;
        REQUIRE(static_cast<bool>(in >> kind >> value >> user_ns >> sys_ns >> rss_kib));
        CHECK(kind == "exit");
        CHECK(value == 0);
        CHECK(user_ns >= 0);
        CHECK(sys_ns >= 0); // tick-accounted on some kernels: 0 is possible
        CHECK(rss_kib >= 64 * 1024);
        CHECK(rss_kib < 80 * 1024);
    }
}

TEST_CASE("measure() under perf stat")
{
    std::ostringstream progress;

    SUBCASE("samples per repetition, wall/user/sys/max-rss included")
    {
        auto opt = fast_options();
        opt.repetitions = 3;
        opt.progress = progress_style::plain;
        auto m = measure({spec_of("loop", loop(2000), loop(2000))}, opt, progress);
        REQUIRE(m.size() == 1);
        CHECK(m[0].name == "loop");
        for (auto* s : {&m[0].baseline, &m[0].candidate}) {
            CHECK(s->run.benchmark == "loop");
            CHECK(s->run.backend == "perf");
            for (std::string name :
                 {"task-clock", "page-faults", "duration_time", "wall-time", "user-time", "sys-time", "max-rss"}) {
                CAPTURE(name);
                auto* c = find_counter(s->run, name);
                REQUIRE(c != nullptr);
                REQUIRE(c->samples.size() == 3);
                CHECK(c->samples[2].repetition == 2);
                REQUIRE(c->samples[0].value.has_value());
                // user/sys time are tick-accounted on many kernels: 0 is a valid reading.
                if (name != "user-time" && name != "sys-time") CHECK(*c->samples[0].value > 0);
                CHECK(*c->samples[0].value >= 0);
            }
            CHECK(find_counter(s->run, "wall-time")->unit == "ns");
            CHECK(find_counter(s->run, "max-rss")->unit == "KiB");
            CHECK(find_counter(s->run, "task-clock")->unit == "msec");
            // max-rss is the small workload's own, far below perf's ~13 MiB.
            CHECK(*find_counter(s->run, "max-rss")->samples[0].value < 8 * 1024);
            // wall-time covers perf's whole execution, so it exceeds the
            // workload's own duration_time.
            CHECK(*find_counter(s->run, "wall-time")->samples[0].value >
                  *find_counter(s->run, "duration_time")->samples[0].value);
        }
        CHECK(m[0].baseline.run.role == "baseline");
        CHECK(m[0].candidate.run.role == "candidate");
        CHECK(progress.str().find("perfgate: loop: round 3/3 done") != std::string::npos);
    }
    SUBCASE("TTY progress rewrites one line per benchmark")
    {
        auto opt = fast_options();
        opt.progress = progress_style::tty;
        opt.warmup = 1;
        measure({spec_of("tty", "true", "true")}, opt, progress);
        const std::string out = progress.str();
        CHECK(out.find("\r\033[Ktty: warmup 1/1 baseline") != std::string::npos);
        CHECK(out.find("\r\033[Ktty: round 2/2 candidate") != std::string::npos);
        CHECK(out.find("left") != std::string::npos); // an estimate once a round is done
        CHECK(out.ends_with("\n"));
        CHECK(out.find("\r\033[Ktty: 2 rounds in") != std::string::npos);
    }
    SUBCASE("default events: unsupported hardware events are dropped and said once")
    {
        auto opt = fast_options();
        opt.events.clear();
        opt.repetitions = 1;
        auto m = measure({spec_of("d", "true", "true")}, opt, progress);
        const auto& run = m[0].baseline.run;
        CHECK(find_counter(run, "task-clock") != nullptr);
        CHECK(find_counter(run, "duration_time") != nullptr);
        if (find_counter(run, "cycles") == nullptr) { // no PMU here
            REQUIRE(m[0].baseline.warnings.size() == 1);
            CHECK(m[0].baseline.warnings[0].find("perf cannot count cycles") != std::string::npos);
            CHECK(m[0].baseline.warnings[0].find("--backend callgrind") != std::string::npos);
        }
    }
    SUBCASE("a failing benchmark names benchmark, side, round and its stderr")
    {
        auto opt = fast_options();
        auto spec = spec_of("fails", "true", "sh -c 'echo something broke >&2; exit 3'");
        try {
            measure({spec}, opt, progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.failed");
            std::string msg = e.what();
            CHECK(msg.starts_with(
                "benchmark 'fails', candidate side, round 1/2: 'sh -c 'echo something broke >&2; exit 3'' exited with status 3"));
            CHECK(msg.find("| something broke") != std::string::npos);
        }
    }
    SUBCASE("killed by a signal is a failure although perf exits 0")
    {
        auto opt = fast_options();
        CHECK_THROWS_WITH_AS(
            measure({spec_of("k", "sh -c 'kill -9 $$'", "true")}, opt, progress),
            doctest::Contains(
                "benchmark 'k', baseline side, round 1/2: 'sh -c 'kill -9 $$'' was killed by signal 9 (SIGKILL)"),
            perfgate::error);
    }
    SUBCASE("timeout")
    {
        auto opt = fast_options();
        opt.timeout = 300ms;
        try {
            measure({spec_of("slow", "true", "sleep 10")}, opt, progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.timeout");
            CHECK(std::string(e.what()).starts_with(
                "benchmark 'slow', candidate side, round 1/2: 'sleep 10' did not finish within --timeout 0.3 s"));
        }
    }
    SUBCASE("a command that cannot be executed")
    {
        auto opt = fast_options();
        CHECK_THROWS_WITH_AS(
            measure({spec_of("m", "/nonexistent/bench", "true")}, opt, progress),
            doctest::Contains(
                "benchmark 'm', baseline side, round 1/2: cannot execute '/nonexistent/bench': No such file or directory"),
            perfgate::error);
    }
    SUBCASE("a working directory that does not exist")
    {
        auto opt = fast_options();
        auto spec = spec_of("cwd", "true", "true");
        spec.cwd = "/nonexistent-dir";
        CHECK_THROWS_WITH_AS(
            measure({spec}, opt, progress),
            "benchmark 'cwd', baseline side, round 1/2: cannot run 'perf' in '/nonexistent-dir': No such file or directory",
            perfgate::error);
    }
    SUBCASE("perf missing: the fix is spelled out")
    {
        auto opt = fast_options();
        opt.perf = "/nonexistent/perf";
        try {
            measure({spec_of("x", "true", "true")}, opt, progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.perf_unavailable");
            CHECK(std::string(e.what()).find("--backend callgrind") != std::string::npos);
        }
    }
    SUBCASE("a bad event name is a usage error")
    {
        auto opt = fast_options();
        opt.events = {"no-such-event-xyz"};
        try {
            measure({spec_of("x", "true", "true")}, opt, progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "usage.bad_event");
            CHECK(std::string(e.what()).find("no-such-event-xyz") != std::string::npos);
        }
    }
    SUBCASE("helper missing")
    {
        auto opt = fast_options();
        opt.exec_helper = "/nonexistent/perfgate-exec";
        CHECK_THROWS_WITH_AS(measure({spec_of("x", "true", "true")}, opt, progress), doctest::Contains("perfgate-exec"),
                             perfgate::error);
    }
}

TEST_CASE("measure() with the rusage and callgrind backends")
{
    std::ostringstream progress;
    SUBCASE("rusage: wall/user/sys/max-rss only")
    {
        auto opt = fast_options();
        opt.which = backend::rusage;
        auto m = measure({spec_of("r", loop(1000), loop(1000))}, opt, progress);
        const auto& run = m[0].candidate.run;
        CHECK(run.backend == "rusage");
        REQUIRE(run.counters.size() == 4);
        CHECK(run.counters[0].counter == "wall-time");
        CHECK(run.counters[3].counter == "max-rss");
        CHECK(run.counters[0].samples.size() == 2);
        CHECK_THROWS_WITH_AS(measure({spec_of("r", "sh -c 'exit 5'", "true")}, opt, progress),
                             doctest::Contains("'sh -c 'exit 5'' exited with status 5"), perfgate::error);
    }
    SUBCASE("callgrind: deterministic instruction counts")
    {
        temp_dir dir("pg-test");
        auto prog = compile_loop(dir.path(), 20000);
        auto opt = fast_options();
        opt.which = backend::callgrind;
        opt.repetitions = 1;
        opt.cache_sim = true;
        auto m = measure({spec_of("cg", prog, prog)}, opt, progress);
        const auto& b = m[0].baseline.run;
        const auto& c = m[0].candidate.run;
        CHECK(b.backend == "callgrind");
        REQUIRE(b.counters.size() == 3);
        CHECK(b.counters[0].counter == "instructions");
        CHECK(b.counters[1].counter == "cache-misses");
        CHECK(b.counters[2].counter == "estimated-cycles");
        // Ir plus at least 100 per last-level miss.
        CHECK(*b.counters[2].samples[0].value >=
              *b.counters[0].samples[0].value + 100 * *b.counters[1].samples[0].value);
        CHECK(*b.counters[2].samples[0].value == *c.counters[2].samples[0].value);
        // Profiles are kept only when asked (keep_profiles).
        CHECK(m[0].baseline.profiles.empty());
        REQUIRE(b.counters[0].samples.size() == 1);
        CHECK(*b.counters[0].samples[0].value > 100000); // 20000 iterations of several instructions
        CHECK(*b.counters[0].samples[0].value == *c.counters[0].samples[0].value);
    }
    SUBCASE("callgrind: keep_profiles keeps each side's last measured execution, children included")
    {
        temp_dir dir("pg-test");
        auto prog = compile_loop(dir.path(), 1000);
        auto opt = fast_options();
        opt.which = backend::callgrind;
        opt.repetitions = 2;
        opt.keep_profiles = dir.path() / "keep";
        auto m = measure({spec_of("cg", prog, "sh -c '" + prog + "; " + prog + "; true'")}, opt, progress);
        REQUIRE(m[0].baseline.profiles.size() == 1); // the second execution's, replacing the first's
        CHECK(std::filesystem::exists(m[0].baseline.profiles[0]));
        const auto& cand = m[0].candidate.profiles;
        REQUIRE(cand.size() >= 3);                                       // sh and the two runs of the program
        CHECK(slurp(cand[0]).find("cmd:  sh -c ") != std::string::npos); // the first process first
        for (const auto& f : cand) CHECK(f.parent_path() == cand[0].parent_path());
        std::size_t files = 0;
        for (const auto& f : std::filesystem::directory_iterator(cand[0].parent_path())) files += f.is_regular_file();
        CHECK(files == cand.size());
    }
}

TEST_CASE("helpers: callgrind totals, event groups, perf CSV for the server")
{
    SUBCASE("estimated cycles: KCachegrind's CEst = Ir + 10 L1m + 100 LLm")
    {
        // The summary line of a callgrind --cache-sim=yes run of /bin/true (valgrind 3.19).
        auto t = parse_callgrind_totals("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\n"
                                        "summary: 127670 28107 11769 1083 990 580 1065 781 547\n",
                                        "cg");
        std::map<std::string, double, std::less<>> totals(t.begin(), t.end());
        CHECK(estimated_cycles(totals) == 127670 + 10 * (1083 + 990 + 580) + 100 * (1065 + 781 + 547));
        CHECK(estimated_cycles({{"Ir", 5}}) == 5); // without the cache events: Ir
    }
    SUBCASE("callgrind totals read from a file, line by line")
    {
        temp_dir dir("pg-test");
        std::ofstream(dir.path() / "cg") << "events: Ir Dr\nfn=main\n3 4 5\nsummary: 723486 126918\n";
        CHECK(read_callgrind_totals(dir.path() / "cg") ==
              std::vector<std::pair<std::string, double>>{{"Ir", 723486}, {"Dr", 126918}});
        const std::string message = (dir.path() / "missing").string() +
                                    ": not a callgrind output file (no events:/summary: line)";
        CHECK_THROWS_WITH_AS(read_callgrind_totals(dir.path() / "missing"), message.c_str(), perfgate::error);
    }
    SUBCASE("callgrind output")
    {
        auto t = parse_callgrind_totals(
            "# callgrind format\nevents: Ir Dr\nfn=main\n3 4 5\nsummary: 723486 126918\ntotals: 1 2\n", "cg.1");
        CHECK(t == std::vector<std::pair<std::string, double>>{{"Ir", 723486}, {"Dr", 126918}});
        CHECK(parse_callgrind_totals("events: Ir\ntotals: 7\n", "cg.2") ==
              std::vector<std::pair<std::string, double>>{{"Ir", 7}});
        CHECK_THROWS_WITH_AS(parse_callgrind_totals("garbage\n", "cg.3"),
                             "cg.3: not a callgrind output file (no events:/summary: line)", perfgate::error);
    }
    SUBCASE("split_event_groups keeps software events in group 0")
    {
        std::vector<std::string> ev = {"task-clock",   "cycles",        "instructions",
                                       "cache-misses", "branch-misses", "duration_time"};
        auto g = split_event_groups(ev, 50.0);
        REQUIRE(g.size() == 2);
        CHECK(g[0] == std::vector<std::string>{"task-clock", "duration_time", "cycles", "cache-misses"});
        CHECK(g[1] == std::vector<std::string>{"instructions", "branch-misses"});
        CHECK(split_event_groups(ev, 100.0).size() == 1);
        CHECK(split_event_groups(ev, 10.0).size() == 4); // never more groups than hardware events
    }
    SUBCASE("to_perf_csv reads back with the server's parser")
    {
        model::run_record run;
        run.benchmark = "b";
        run.counters = {{"task-clock", "msec", {{0, 1.25, 100.0, {}}, {1, 2.5, 100.0, {}}}},
                        {"cycles", "", {{0, std::nullopt, 100.0, {}}, {1, std::nullopt, 100.0, {}}}},
                        {"wall-time", "ns", {{0, 12345678.0, 100.0, {}}, {1, 23456789.0, 100.0, {}}}}};
        auto cap = capture::parse_perf_stat(to_perf_csv(run), "upload");
        REQUIRE(cap.runs.size() == 2);
        REQUIRE(cap.events.size() == 3);
        CHECK(cap.events[0].name == "task-clock");
        CHECK(cap.events[0].unit == "msec");
        CHECK(cap.events[2].name == "wall-time");
        CHECK(cap.runs[1][0].value == doctest::Approx(2.5));
        CHECK_FALSE(cap.runs[0][1].value.has_value());
        CHECK(cap.runs[1][2].value == doctest::Approx(23456789.0));
    }
}

TEST_CASE("git info: flags > GitHub Actions environment > git")
{
    temp_dir dir("pg-test");
    std::map<std::string, std::string> vars;
    env_lookup env = [&](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end() || it->second.empty()) return std::nullopt;
        return it->second;
    };

    SUBCASE("pull_request event: head sha and PR from the payload, branches from HEAD_REF/BASE_REF")
    {
        std::ofstream(dir.path() / "event.json")
            << R"({"pull_request": {"number": 42, "head": {"sha": "headsha"}, "base": {"sha": "basesha"}}})";
        vars = {{"GITHUB_ACTIONS", "true"},      {"GITHUB_SHA", "mergesha"},
                {"GITHUB_REF_NAME", "42/merge"}, {"GITHUB_HEAD_REF", "feature"},
                {"GITHUB_BASE_REF", "main"},     {"GITHUB_EVENT_PATH", (dir.path() / "event.json").string()}};
        auto g = resolve_git_info({}, env, dir.path());
        CHECK(g.sha == "headsha");
        CHECK(g.branch == "feature");
        CHECK(g.pr == 42);
        CHECK(g.base_sha == "basesha");
        CHECK(g.base_branch == "main");
        CHECK(g.source == "github");

        git_overrides flags;
        flags.sha = "flagsha";
        flags.pr = 7;
        auto f = resolve_git_info(flags, env, dir.path());
        CHECK(f.sha == "flagsha");
        CHECK(f.pr == 7);
        CHECK(f.branch == "feature");
    }
    SUBCASE("push event: GITHUB_SHA and GITHUB_REF_NAME")
    {
        std::ofstream(dir.path() / "event.json") << R"({"after": "x"})";
        vars = {{"GITHUB_ACTIONS", "true"},
                {"GITHUB_SHA", "pushsha"},
                {"GITHUB_REF_NAME", "main"},
                {"GITHUB_EVENT_PATH", (dir.path() / "event.json").string()}};
        auto g = resolve_git_info({}, env, dir.path());
        CHECK(g.sha == "pushsha");
        CHECK(g.branch == "main");
        CHECK_FALSE(g.pr.has_value());
        CHECK(g.base_sha.empty()); // no `before`, no --base-sha: the baseline's commit is unknown
    }
    SUBCASE("push event: the baseline is the payload's `before`, unless a new branch's null sha")
    {
        const std::string before(40, 'b'), after(40, 'a');
        std::ofstream(dir.path() / "event.json") << R"({"before": ")" << before << R"(", "after": ")" << after << "\"}";
        vars = {{"GITHUB_ACTIONS", "true"},
                {"GITHUB_EVENT_NAME", "push"},
                {"GITHUB_SHA", after},
                {"GITHUB_REF_NAME", "main"},
                {"GITHUB_EVENT_PATH", (dir.path() / "event.json").string()}};
        auto g = resolve_git_info({}, env, dir.path());
        CHECK(g.sha == after);
        CHECK(g.base_sha == before);
        CHECK(g.base_branch.empty()); // the candidate's branch
        git_overrides flags;
        flags.base_sha = "c0ffee";
        CHECK(resolve_git_info(flags, env, dir.path()).base_sha == "c0ffee");

        // A push that creates a branch: before is all zeros, no commit.
        std::ofstream(dir.path() / "event.json")
            << R"({"before": ")" << std::string(40, '0') << R"(", "after": ")" << after << "\"}";
        CHECK(resolve_git_info({}, env, dir.path()).base_sha.empty());
        flags.base_sha = std::string(40, '0'); // the action passes github.event.before as it is
        CHECK(resolve_git_info(flags, env, dir.path()).base_sha.empty());
        CHECK(is_null_sha(std::string(40, '0')));
        CHECK_FALSE(is_null_sha(""));
        CHECK_FALSE(is_null_sha("0a"));

        // `before` means the previous head only on a push.
        vars["GITHUB_EVENT_NAME"] = "workflow_dispatch";
        std::ofstream(dir.path() / "event.json") << R"({"before": ")" << before << "\"}";
        CHECK(resolve_git_info({}, env, dir.path()).base_sha.empty());
    }
    SUBCASE("a broken event file is an input error naming it")
    {
        std::ofstream(dir.path() / "event.json") << "{nope";
        vars = {{"GITHUB_ACTIONS", "true"}, {"GITHUB_EVENT_PATH", (dir.path() / "event.json").string()}};
        const std::string expected = (dir.path() / "event.json").string() + " (GITHUB_EVENT_PATH): invalid JSON";
        CHECK_THROWS_WITH_AS(resolve_git_info({}, env, dir.path()), doctest::Contains(expected.c_str()),
                             perfgate::error);
    }
    SUBCASE("git rev-parse outside Actions")
    {
        auto git = [&](std::vector<std::string> args) {
            spawn_options so;
            so.argv = {"git", "-c", "user.name=t", "-c", "user.email=t@example.com"};
            so.argv.insert(so.argv.end(), args.begin(), args.end());
            so.cwd = dir.path();
            so.capture_stdout = true;
            auto r = run_process(so, 20s);
            REQUIRE(r.status.success());
            return r.stdout_text;
        };
        git({"init", "-q", "-b", "trunk"});
        git({"commit", "-q", "--allow-empty", "-m", "x"});
        auto head = git({"rev-parse", "HEAD"});
        head.pop_back();
        auto g = resolve_git_info({}, env, dir.path());
        CHECK(g.sha == head);
        CHECK(g.branch == "trunk");
        CHECK(g.source == "git");
        git({"checkout", "-q", "--detach"});
        auto detached = resolve_git_info({}, env, dir.path());
        CHECK(detached.sha == head);
        CHECK(detached.branch.empty());
        // Not a checkout: empty, not an error.
        temp_dir plain("pg-test");
        auto none = resolve_git_info({}, env, plain.path());
        CHECK(none.sha.empty());
    }
}

TEST_CASE("git info: which run feeds its branch's series (issue 44)")
{
    using perfgate::runner::mainline_side;
    using perfgate::runner::mainline_side_of;
    git_info push;
    push.actions = true;
    push.event = "push";
    push.branch = "main";
    CHECK(mainline_side_of(push, std::nullopt) == mainline_side::candidate); // the pushed head
    CHECK(mainline_side_of(push, false) == mainline_side::none);
    git_info pr = push;
    pr.event = "pull_request";
    pr.pr = 42;
    pr.base_branch = "main";
    CHECK(mainline_side_of(pr, std::nullopt) == mainline_side::none);
    CHECK(mainline_side_of(pr, true) == mainline_side::none); // never, whatever is asked
    for (const char* event : {"merge_group", "workflow_dispatch", "schedule", "workflow_run", ""}) {
        CAPTURE(event);
        git_info other = push;
        other.event = event;
        CHECK(mainline_side_of(other, std::nullopt) == mainline_side::none);
        CHECK(mainline_side_of(other, true) == mainline_side::candidate);
    }
    git_info local;
    local.branch = "main";
    CHECK(mainline_side_of(local, std::nullopt) == mainline_side::baseline); // as before the marker
    local.base_branch = "main";
    CHECK(mainline_side_of(local, std::nullopt) == mainline_side::baseline);
    local.base_branch = "trunk"; // a feature measured against another branch: a pull request in all but name
    CHECK(mainline_side_of(local, std::nullopt) == mainline_side::none);
    CHECK(mainline_side_of(local, true) == mainline_side::candidate);
    local.branch.clear(); // not in a git checkout: the history without a branch, as before
    local.base_branch.clear();
    CHECK(mainline_side_of(local, std::nullopt) == mainline_side::baseline);
    local.branch = "main";
    local.pr = 3;
    local.base_branch.clear();
    CHECK(mainline_side_of(local, std::nullopt) == mainline_side::none);

    // perfgate run says so before measuring.
    temp_dir dir("pg-test");
    const auto both = run_perfgate({"run", "--baseline", "true", "--candidate", "true", "--mainline", "--no-mainline",
                                    "--db", (dir.path() / "x.db").string()},
                                   dir.path());
    CHECK(both.code == 2);
    CHECK(both.err.find("--mainline and --no-mainline exclude each other") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "x.db"));
}

TEST_CASE("perfgate run end to end (real perf, local SQLite)")
{
    temp_dir dir("pg-test");
    const std::string db = (dir.path() / "h.db").string();

    SUBCASE("A/A passes, results are stored; a 4x slower candidate fails naming the counters")
    {
        // The same few-ms shell loop on both sides. A shared CI machine can
        // move a few ms by several percent between rounds, so the A/A gate
        // uses a 15% threshold: it must never call that a regression, while
        // the 4x candidate below is far beyond any threshold.
        std::ofstream(dir.path() / "aa-policy.json") << R"({"threshold_pct": 15})";
        auto aa = run_perfgate({"run", "-q", "-r", "6", "--db", db, "--name", "loop", "--baseline", loop(3000),
                                "--candidate", loop(3000), "--format", "json", "--policy", "aa-policy.json"},
                               dir.path());
        CAPTURE(aa.err);
        CAPTURE(aa.out);
        CHECK(aa.code != 1); // pass, or inconclusive on a noisy machine: never a regression
        const bool pass_or_inconclusive = aa.code == 0 || aa.code == 3;
        CHECK(pass_or_inconclusive);
        auto report = nlohmann::json::parse(aa.out);
        CHECK(report["schema"] == "perfgate.report/v1");
        CHECK(report["verdict"] != "fail");

        {
            store::store s(db);
            CHECK(s.maintenance().runs_count() == 2);
            auto run = s.runs().load("default", 1);
            REQUIRE(run.has_value());
            CHECK(run->benchmark == "loop");
            CHECK(run->role == "baseline");
            CHECK(find_counter(*run, "wall-time") != nullptr);
            CHECK(find_counter(*run, "task-clock")->samples.size() == 6);
        }

        auto reg = run_perfgate({"run", "-q", "-r", "6", "--db", db, "--name", "loop", "--baseline", loop(3000),
                                 "--candidate", loop(12000)},
                                dir.path());
        CAPTURE(reg.err);
        CHECK(reg.code == 1);
        CHECK(reg.out.find("task-clock") != std::string::npos);
        CHECK(reg.out.find("regression") != std::string::npos);
    }
    SUBCASE("bad names and commands exit 2 before anything is measured")
    {
        // The candidate would take 10 s per execution: a quick exit 2 shows
        // nothing ran.
        std::ofstream(dir.path() / "bench.json") << R"([{"name": "ok", "baseline": "true", "candidate": "sleep 10"},
                  {"name": "a b'c", "baseline": "true", "candidate": "sleep 10"}])";
        auto started = std::chrono::steady_clock::now();
        auto r = run_perfgate({"run", "-q", "-r", "2", "--warmup", "0", "--db", db, "--config", "bench.json"},
                              dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find("bench.json: benchmarks[1].name: byte 0x20 at offset 1 is not allowed") != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - started < 5s);
        CHECK_FALSE(std::filesystem::exists(db));

        started = std::chrono::steady_clock::now();
        r = run_perfgate({"run", "-q", "-r", "2", "--warmup", "0", "--db", db, "--name", "a b'c", "--baseline", "true",
                          "--candidate", "sleep 10"},
                         dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find("--name: byte 0x20 at offset 1 is not allowed") != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - started < 5s);

        r = run_perfgate({"run", "-q", "-r", "2", "--warmup", "0", "--db", db, "--baseline", "true", "--candidate",
                          "sleep 10\x01"},
                         dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 2);
        CHECK(r.err.find("--candidate: command 'sleep 10\\x01': control byte 0x01 at offset 8") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(db));
    }
    SUBCASE("failures exit 4 naming benchmark, side and round")
    {
        auto r = run_perfgate({"run", "-q", "-r", "2", "--warmup", "0", "--db", db, "--name", "b", "--baseline", "true",
                               "--candidate", "sh -c 'echo boom >&2; exit 3'"},
                              dir.path());
        CHECK(r.code == 4);
        CHECK(r.err.find("benchmark 'b', candidate side, round 1/2") != std::string::npos);
        CHECK(r.err.find("exited with status 3") != std::string::npos);
        CHECK(r.err.find("| boom") != std::string::npos);

        r = run_perfgate({"run", "-q", "-r", "2", "--warmup", "0", "--db", db, "--baseline", "sh -c 'kill -9 $$'",
                          "--candidate", "true"},
                         dir.path());
        CHECK(r.code == 4);
        CHECK(r.err.find("killed by signal 9 (SIGKILL)") != std::string::npos);

        r = run_perfgate({"run", "-q", "-r", "2", "--warmup", "0", "--db", db, "--timeout", "1", "--baseline", "true",
                          "--candidate", "sleep 10"},
                         dir.path());
        CHECK(r.code == 4);
        CHECK(r.err.find("did not finish within --timeout 1 s") != std::string::npos);

        r = run_perfgate({"run", "-q", "-r", "2", "--db", db, "--baseline", "no-such-benchmark-binary", "--candidate",
                          "true"},
                         dir.path());
        CHECK(r.code == 4);
        CHECK(r.err.find("baseline side, warmup round 1/1: cannot execute 'no-such-benchmark-binary'") !=
              std::string::npos);
        // Nothing was stored for failed runs.
        const bool stored = std::filesystem::exists(db) && store::store(db).maintenance().runs_count() > 0;
        CHECK_FALSE(stored);
    }
    SUBCASE("usage errors exit 2")
    {
        auto r = run_perfgate({"run", "--baseline", "true"}, dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("--candidate") != std::string::npos);
        r = run_perfgate({"run", "--baseline", "true", "--candidate", "true", "--order", "sideways"}, dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("--order: expected alternate, random or blocked, got 'sideways'") != std::string::npos);
        r = run_perfgate({"run", "--help"}, dir.path());
        CHECK(r.code == 0);
        CHECK(r.out.find("--backend") != std::string::npos);
    }
    SUBCASE("config file, callgrind backend: A/A delta is exactly 0")
    {
        compile_loop(dir.path(), 50000);
        std::ofstream(dir.path() / "bench.json") << R"([{"name": "prog", "baseline": "./p", "candidate": ["./p"]}])";
        auto r = run_perfgate({"run", "-q", "--config", "bench.json", "--backend", "callgrind", "--db", db, "--format",
                               "json", "--fail-on-inconclusive"},
                              dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 0);
        auto report = nlohmann::json::parse(r.out);
        REQUIRE(report["benchmarks"].size() == 1);
        auto& counters = report["benchmarks"][0]["counters"];
        REQUIRE(counters.size() == 1);
        CHECK(counters[0]["name"] == "instructions");
        CHECK(counters[0]["method"] == "deterministic");
        CHECK(counters[0]["delta_pct"] == 0.0);
        CHECK(counters[0]["baseline"]["n"] == 1);
    }
    SUBCASE("rusage backend")
    {
        // A/A of a ~1 ms loop: rusage times are coarse, so the check that it is
        // never called a regression uses a threshold far above that noise.
        std::ofstream(dir.path() / "aa-policy.json") << R"({"threshold_pct": 50})";
        auto r = run_perfgate({"run", "-q", "-r", "5", "--backend", "rusage", "--db", db, "--baseline", loop(1000),
                               "--candidate", loop(1000), "--format", "json", "--policy", "aa-policy.json"},
                              dir.path());
        CAPTURE(r.err);
        CAPTURE(r.out);
        CHECK(r.code != 1);
        auto report = nlohmann::json::parse(r.out);
        std::vector<std::string> names;
        for (auto& c : report["benchmarks"][0]["counters"]) names.push_back(c["name"]);
        CHECK(std::find(names.begin(), names.end(), "wall-time") != names.end());
        CHECK(std::find(names.begin(), names.end(), "task-clock") == names.end());
    }
}

TEST_CASE("perfgate run stores one session: its comparison is interleaved and unchanged, a pairing across runs is not")
{
    temp_dir dir("pg-test");
    const std::string db = (dir.path() / "s.db").string();
    const std::vector<std::string> args = {"run",        "-q",       "-r",          "5",        "--backend", "rusage",
                                           "--db",       db,         "--name",      "loop",     "--format",  "json",
                                           "--baseline", loop(3000), "--candidate", loop(12000)};
    auto first = run_perfgate(args, dir.path());
    CAPTURE(first.err);
    CHECK(first.code == 1); // 4x slower
    const auto report = nlohmann::json::parse(first.out);
    CHECK(report["benchmarks"][0]["interleaved"] == true);
    for (const auto& c : report["benchmarks"][0]["counters"]) {
        CAPTURE(c["name"]);
        CHECK_FALSE(c.contains("between_runs"));
        CHECK(c["reason"].get<std::string>().find("interleaved") == std::string::npos);
        // The rank test at Holm's level, as before. Not wall-time: on a busy
        // machine one descheduled baseline execution of five can overlap a
        // 4x slower candidate in elapsed time; CPU time cannot.
        if (c["p_adjusted"].is_number() && c["method"] != "deterministic" && c["gated"] == true &&
            c["name"] != "wall-time") {
            CHECK(c["status"] == "regression");
        }
    }
    auto second = run_perfgate(args, dir.path());
    CAPTURE(second.err);
    CHECK(second.code == 1);

    store::store s(db);
    const auto b1 = s.runs().load("default", 1), c1 = s.runs().load("default", 2), c2 = s.runs().load("default", 4);
    REQUIRE((b1 && c1 && c2));
    CHECK(b1->role == "baseline");
    CHECK(b1->session.size() == 32);
    CHECK(b1->session == c1->session);
    CHECK(c2->session != b1->session);
    // "Compare any two": the first run's baseline with the second's
    // candidate were measured in two sessions, and with two baseline runs of
    // history nothing judges between-run variation.
    service::service svc(s);
    const auto across = svc.comparisons().compare("default", {{1, 4}}, gate::policy{});
    REQUIRE(across.result.benchmarks.size() == 1);
    CHECK(across.result.benchmarks[0].interleaved == false);
    CHECK(across.result.result == gate::verdict::inconclusive);
    bool judged_apart = false;
    for (const auto& c : across.result.benchmarks[0].counters) {
        if (c.gated && c.between_runs) {
            judged_apart = true;
            CHECK(c.state == gate::status::inconclusive);
            CHECK(c.reason.find("history has 2 baseline runs") != std::string::npos);
        }
    }
    CHECK(judged_apart);
}

TEST_CASE("perfgate run --budget / --max-repetitions: sequential sampling")
{
    temp_dir dir("pg-test");
    const std::string db = (dir.path() / "h.db").string();
    auto task_clock = [](const nlohmann::json& report) {
        for (auto& c : report["benchmarks"][0]["counters"]) {
            if (c["name"] == "task-clock") return c;
        }
        FAIL("no task-clock in the report");
        return nlohmann::json();
    };

    SUBCASE("an 8x slower candidate stops at an early look")
    {
        // The first look (10 a side) decides only when no pair is swapped: at
        // n=10 the rank test's smallest p leaves no room for one outlier, which a
        // busy machine can make. A later look must decide, well before the budget.
        auto r = run_perfgate({"run", "--db", db, "-e", "task-clock", "--name", "loop", "--baseline", loop(2000),
                               "--candidate", loop(16000), "--min-repetitions", "10", "--budget", "600", "--format",
                               "json"},
                              dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 1);
        const auto report = nlohmann::json::parse(r.out);
        CHECK(report["policy"]["sequential"]["min_repetitions"] == 10);
        const auto tc = task_clock(report);
        CHECK(tc["status"] == "regression");
        const int look = tc["sequential"]["look"].get<int>();
        CHECK(look >= 1);
        CHECK(look < tc["sequential"]["looks"].get<int>());
        const int n = tc["baseline"]["n"].get<int>();
        CHECK(tc["candidate"]["n"] == n);
        CHECK(r.err.find("perfgate: loop: look after " + std::to_string(n) + " rounds: decided") != std::string::npos);
        CHECK(tc["sequential"]["ended_early"] == false);
        // Stored: the runs hold the rounds measured.
        store::store s(db);
        CHECK(find_counter(*s.runs().load("default", 1), "task-clock")->samples.size() == static_cast<std::size_t>(n));
    }
    SUBCASE("a counter that cannot be decided runs to --max-repetitions: inconclusive")
    {
        // alpha 1e-9 is beyond the rank test's reach at 15 per side, and no
        // interval lies inside +-0%: nothing can be decided.
        std::ofstream(dir.path() / "never.json") << R"({"alpha": 1e-9, "threshold_pct": 0})";
        auto r = run_perfgate({"run", "--db", db, "-e", "task-clock", "--name", "aa", "--baseline", loop(300),
                               "--candidate", loop(300), "--max-repetitions", "15", "--policy", "never.json",
                               "--format", "json", "--fail-on-inconclusive"},
                              dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 3);
        // The plan's last look always decides; the progress line says why it stopped.
        CHECK(r.err.find("perfgate: aa: look after 15 rounds: max repetitions reached") != std::string::npos);
        CHECK(r.err.find("decided\n") == std::string::npos);
        const auto tc = task_clock(nlohmann::json::parse(r.out));
        CHECK(tc["status"] == "inconclusive");
        CHECK(tc["baseline"]["n"] == 15);
        CHECK(tc["sequential"]["look"] == 3);
        CHECK(tc["sequential"]["looks"] == 3);
        CHECK(tc["sequential"]["ended_early"] == false);
    }
    SUBCASE("a spent time budget is inconclusive with the MDE it achieved")
    {
        // 100 rounds of two perf stat executions take several seconds on any
        // machine: one second ends the plan early, after the first look at 10
        // rounds or later (where alpha 1e-4 is attainable: the MDE is finite). No
        // interval lies inside +-0%; a false regression has p < 5e-5.
        std::ofstream(dir.path() / "strict.json") << R"({"alpha": 1e-4, "threshold_pct": 0})";
        // clang-format off
        auto r = run_perfgate({"run", "--db", db, "-e", "task-clock", "--name", "aa", "--baseline", loop(300),
                               "--candidate", loop(300), "--budget", "1", "--min-repetitions", "10", "--max-repetitions", "100",
                               "--policy", "strict.json", "--format", "json"},
                              dir.path());
        // clang-format on
        CAPTURE(r.err);
        CHECK(r.code == 0); // inconclusive without --fail-on-inconclusive
        CHECK(r.err.find("time budget spent") != std::string::npos);
        const auto tc = task_clock(nlohmann::json::parse(r.out));
        CHECK(tc["status"] == "inconclusive");
        CHECK(tc["baseline"]["n"] < 100);
        CHECK(tc["sequential"]["ended_early"] == true);
        CHECK(tc["sequential"]["look"] == tc["sequential"]["looks"]);
        REQUIRE(tc["mde_pct"].is_number());
        CHECK(tc["reason"].get<std::string>().find("budget spent") != std::string::npos);
    }
    SUBCASE("a benchmark failing in a later block is exit 4, and nothing is stored")
    {
        // The candidate fails on its 8th execution: in the second block.
        const std::string flaky = "sh -c 'n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count; "
                                  "[ $n -lt 8 ] || { echo flaky >&2; exit 1; }'";
        auto r = run_perfgate({"run", "-q", "--db", db, "-e", "task-clock", "--warmup", "0", "--name", "f",
                               "--baseline", "true", "--candidate", flaky, "--max-repetitions", "20"},
                              dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 4);
        CHECK(r.err.find("benchmark 'f', candidate side, round 8/20") != std::string::npos);
        const bool stored = std::filesystem::exists(db) && store::store(db).maintenance().runs_count() > 0;
        CHECK_FALSE(stored);
    }
    SUBCASE("this testbed's noise history moves the first look and warns before measuring")
    {
        // Every other execution loops: task-clock's CoV within a run is far
        // above anything +-2% could be decided at in 20 repetitions.
        const std::string alternating = "sh -c 'n=$(cat alt 2>/dev/null || echo 0); echo $((n+1)) > alt; "
                                        "[ $((n % 2)) = 1 ] || { i=0; while [ $i -lt 10000 ]; do i=$((i+1)); done; }'";
        for (int seed = 0; seed < 3; ++seed) {
            auto r = run_perfgate({"run", "-q", "--db", db, "-e", "task-clock", "--warmup", "0", "-r", "6", "--name",
                                   "alt", "--baseline", alternating, "--candidate", alternating},
                                  dir.path());
            REQUIRE(r.code != 4);
        }
        auto r = run_perfgate({"run", "--db", db, "-e", "task-clock", "--warmup", "0", "--name", "alt", "--baseline",
                               alternating, "--candidate", alternating, "--max-repetitions", "20", "--format", "json"},
                              dir.path());
        CAPTURE(r.err);
        auto report = nlohmann::json::parse(r.out);
        auto warned = [](const nlohmann::json& report, std::string_view text) {
            for (auto& w : report["warnings"]) {
                if (w.get<std::string>().find(text) != std::string::npos) return true;
            }
            return false;
        };
        // (stderr says it before the first round too; err keeps only the last lines.)
        CHECK(warned(report, "alt: task-clock has had a CoV of "));
        CHECK(warned(report, "(median of its last 3 runs)"));
        CHECK(warned(report, "more than --max-repetitions 20; expect inconclusive"));
        // The first look moved to the plan's end: one look at 20.
        CHECK(report["policy"]["sequential"]["min_repetitions"] == 20);
        auto tc = task_clock(report);
        CHECK(tc["baseline"]["n"] == 20);
        CHECK(tc["sequential"]["looks"] == 1);

        // --min-repetitions given: the first look stays; the warning does not.
        r = run_perfgate({"run", "--db", db, "-e", "task-clock", "--warmup", "0", "--name", "alt", "--baseline",
                          alternating, "--candidate", alternating, "--min-repetitions", "5", "--max-repetitions", "10",
                          "--format", "json"},
                         dir.path());
        CAPTURE(r.err);
        report = nlohmann::json::parse(r.out);
        CHECK(warned(report, "more than --max-repetitions 10; expect inconclusive"));
        CHECK(report["policy"]["sequential"]["min_repetitions"] == 5);
        CHECK(task_clock(report)["sequential"]["looks"] == 2);
    }
    SUBCASE("usage errors exit 2 before measuring")
    {
        auto r = run_perfgate(
            {"run", "--db", db, "--baseline", "true", "--candidate", "true", "-r", "5", "--budget", "10"}, dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("-r/--repetitions is a fixed count") != std::string::npos);
        r = run_perfgate({"run", "--db", db, "--baseline", "true", "--candidate", "true", "--backend", "callgrind",
                          "--max-repetitions", "10"},
                         dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("callgrind's and memcheck's counts are deterministic") != std::string::npos);
        r = run_perfgate({"run", "--db", db, "--baseline", "true", "--candidate", "true", "--min-repetitions", "8",
                          "--max-repetitions", "6"},
                         dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("--max-repetitions 6 is below --min-repetitions 8") != std::string::npos);
        r = run_perfgate({"run", "--db", db, "--baseline", "true", "--candidate", "true", "--budget", "0"}, dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("--budget: expected seconds > 0, got 0") != std::string::npos);
        r = run_perfgate({"run", "--db", db, "--baseline", "true", "--candidate", "true", "--max-repetitions",
                          "100000"},
                         dir.path());
        CHECK(r.code == 2);
        CHECK(r.err.find("at most 100 looks") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(db));
    }
}

TEST_CASE("perfgate run --server: all benchmarks in one gate, p-values adjusted across all of them")
{
    temp_dir dir("pg-test");
    const std::string db = (dir.path() / "server.db").string();
    auto token = run_perfgate({"token", "create", "--db", db, "--project", "demo"}, dir.path());
    REQUIRE(token.code == 0);
    std::string tok = token.out.substr(0, token.out.find('\n'));
    REQUIRE(tok.size() > 10);

    // The server announces its ephemeral port on stdout (cmd_serve.cpp).
    spawn_options so;
    so.argv = {"sh", "-c", "exec \"$0\" serve --db \"$1\" --listen 127.0.0.1:0 > serve.out", perfgate_exe, db};
    so.cwd = dir.path();
    auto server = child_process::spawn(so);
    std::string url;
    for (int i = 0; i < 200 && url.empty(); ++i) {
        std::this_thread::sleep_for(50ms);
        auto text = slurp(dir.path() / "serve.out");
        if (auto at = text.find("listening on "); at != std::string::npos && text.find('\n', at) != std::string::npos) {
            url = text.substr(at + 13, text.find('\n', at) - at - 13);
        }
    }
    REQUIRE_FALSE(url.empty());

    // Two benchmarks: an A/A one and a 4x slower loop. With --server they
    // must be one comparison, the multiplicity family spanning both
    // (docs/statistics.md), exactly as in local mode.
    std::ofstream(dir.path() / "bench.json")
        << nlohmann::json::array({{{"name", "quick"}, {"baseline", "true"}, {"candidate", "true"}},
                                  {{"name", "loop"}, {"baseline", loop(2000)}, {"candidate", loop(8000)}}});
    auto r = run_perfgate({"run",      "-q",        "-r",       "8",          "--warmup", "0",     "--server",
                           url,        "--project", "demo",     "--token",    tok,        "--sha", "abc123",
                           "--branch", "main",      "--config", "bench.json", "--format", "json"},
                          dir.path());
    CAPTURE(r.err);
    CHECK(r.code == 1);
    auto report = nlohmann::json::parse(r.out);
    CHECK(report["verdict"] == "fail");
    REQUIRE(report["benchmarks"].size() == 2);
    CHECK(report["benchmarks"][0]["name"] == "quick");
    CHECK(report["benchmarks"][1]["name"] == "loop");
    REQUIRE(report.contains("comparison_id"));
    const auto id = report["comparison_id"].get<std::int64_t>();
    // The dashboard page of the comparison, on stderr (stdout is the report).
    CHECK(r.err.find(fmt::format("perfgate run: comparison {}: {}/p/demo/comparisons/{}\n", id, url, id)) !=
          std::string::npos);
    REQUIRE(report["policy"]["correction"] == "holm");

    // The family: every gated counter with a p-value, of both benchmarks.
    std::vector<double> raw, reported;
    std::map<std::string, std::vector<double>> raw_by_benchmark;
    double loop_min_p = 1, loop_min_adjusted = 1;
    for (auto& b : report["benchmarks"]) {
        for (auto& c : b["counters"]) {
            if (!c["gated"].get<bool>() || c["p_value"].is_null()) continue;
            REQUIRE_FALSE(c["p_adjusted"].is_null());
            const double p = c["p_value"].get<double>(), adj = c["p_adjusted"].get<double>();
            CHECK(adj >= p);
            raw.push_back(p);
            reported.push_back(adj);
            raw_by_benchmark[b["name"].get<std::string>()].push_back(p);
            if (b["name"] == "loop" && p < loop_min_p) {
                loop_min_p = p;
                loop_min_adjusted = adj;
            }
        }
    }
    REQUIRE(raw_by_benchmark.size() == 2);
    const auto expected = perfgate::test::reference_holm(raw);
    for (std::size_t i = 0; i < raw.size(); ++i) CHECK(reported[i] == doctest::Approx(expected[i]).epsilon(1e-9));
    // The loop's smallest p-value is multiplied by the size of the whole
    // family; adjusted per benchmark (what merging one report per benchmark
    // gave) it would be multiplied by the loop's own count only.
    REQUIRE(loop_min_p * static_cast<double>(raw.size()) < 1.0);
    CHECK(loop_min_adjusted == doctest::Approx(loop_min_p * static_cast<double>(raw.size())).epsilon(1e-9));
    CHECK(loop_min_adjusted > loop_min_p * static_cast<double>(raw_by_benchmark["loop"].size()));

    store::store s(db);
    CHECK(s.maintenance().runs_count() == 4);
    auto stored = s.comparisons().load("demo", id);
    REQUIRE(stored.has_value());
    CHECK(nlohmann::json::parse(*stored)["benchmarks"].size() == 2);
    CHECK_FALSE(s.comparisons().load("demo", id + 1).has_value()); // one comparison, not one per benchmark
    auto run = s.runs().load("demo", 1);
    REQUIRE(run.has_value());
    CHECK(run->benchmark == "quick");
    CHECK(find_counter(*run, "wall-time") != nullptr);
    // Each pair is stored baseline first (run 1, no --base-sha given), then
    // the candidate (--sha): the history orders runs of the same second by
    // id, and the comparison page's chart draws them so.
    CHECK(run->role == "baseline");
    auto second = s.runs().load("demo", 2);
    REQUIRE(second.has_value());
    CHECK(second->role == "candidate");
    CHECK(second->git_sha == "abc123");
    CHECK(second->benchmark == "quick");

    SUBCASE("a wrong token is exit 2 (usage or input error, as from every command) with the server's error")
    {
        auto bad = run_perfgate({"run",      "-q",        "-r",         "1",       "--warmup",    "0",     "--server",
                                 url,        "--project", "demo",       "--token", "pg_wrong",    "--sha", "a",
                                 "--branch", "b",         "--baseline", "true",    "--candidate", "true"},
                                dir.path());
        CHECK(bad.code == 2);
        CHECK(bad.err.find("[server.auth]") != std::string::npos);
        CHECK(bad.err.find("HTTP 401") != std::string::npos);
    }
}

TEST_CASE("an interrupted perfgate run takes its benchmark down with it")
{
    temp_dir dir("pg-test");
    const auto marker = dir.path() / "still-running";
    // The candidate would write the marker after 2 s; SIGINT at ~1 s must kill it first.
    spawn_options so;
    so.argv = {
        perfgate_exe, "run",     "-q",          "-r",  "1", "--warmup", "0", "--db", (dir.path() / "h.db").string(),
        "--baseline", "sleep 2", "--candidate", "true"};
    so.argv[10] = "sh -c 'sleep 2; touch " + marker.string() + "'";
    so.cwd = dir.path();
    auto child = child_process::spawn(so);
    std::this_thread::sleep_for(1000ms);
    ::kill(child.pid(), SIGINT);
    auto res = child.wait(10s);
    CHECK_FALSE(res.status.exited);
    CHECK(res.status.signal == SIGINT);
    std::this_thread::sleep_for(1500ms);
    CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("perfgate run --github in a pull_request job: git info from the event, sticky comment, status")
{
    temp_dir dir("pg-test");
    test::fake_github gh;
    std::ofstream(dir.path() / "event.json")
        << R"({"pull_request": {"number": 7, "head": {"sha": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa7"}, "base": {"sha": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb7"}}})";
    const std::string db = (dir.path() / "h.db").string();
    const std::vector<std::pair<std::string, std::string>> env = {
        {"GITHUB_ACTIONS", "true"},
        {"GITHUB_API_URL", gh.url()},
        {"GITHUB_SERVER_URL", "https://github.example"},
        {"GITHUB_REPOSITORY", "octo/widgets"},
        {"GITHUB_EVENT_NAME", "pull_request"},
        {"GITHUB_EVENT_PATH", (dir.path() / "event.json").string()},
        {"GITHUB_TOKEN", "ghs_faketoken"},
        {"GITHUB_SHA", "mergesha"},
        {"GITHUB_REF_NAME", "7/merge"},
        {"GITHUB_HEAD_REF", "feature"},
        {"GITHUB_BASE_REF", "main"},
        {"GITHUB_RUN_ID", "1"},
        {"GITHUB_STEP_SUMMARY", (dir.path() / "summary.md").string()},
        {"GITHUB_OUTPUT", (dir.path() / "output.txt").string()}};

    // base-tip: the event's base is the baseline's commit, no git history
    // needed (merge-base, the default, is test_baseline_ref's).
    auto r = run_perfgate({"run", "-q", "-r", "3", "--warmup", "0", "--backend", "rusage", "--db", db, "--name", "gh",
                           "--baseline", "true", "--candidate", "true", "--github", "--baseline-ref", "base-tip"},
                          dir.path(), env);
    CAPTURE(r.err);
    CAPTURE(r.out);
    CHECK(r.code != 4);
    auto comments = gh.comments(7);
    REQUIRE(comments.size() == 1);
    CHECK(comments[0].body.find("gh") != std::string::npos);
    auto statuses = gh.statuses();
    REQUIRE(statuses.size() == 1);
    CHECK(statuses[0].first == "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa7");
    CHECK_FALSE(slurp(dir.path() / "summary.md").empty());

    store::store s(db);
    auto base = s.runs().load("default", 1);
    auto cand = s.runs().load("default", 2);
    REQUIRE(base.has_value());
    REQUIRE(cand.has_value());
    CHECK(base->git_sha == "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb7");
    CHECK(base->branch == "main");
    CHECK(cand->git_sha == "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa7");
    CHECK(cand->branch == "feature");
    CHECK(cand->pr == 7);
}

TEST_CASE("multiplexed events: a warning naming them, and --split-events groups (fake perf)")
{
    // A stand-in for perf on a machine with a 2-counter PMU: more than two
    // hardware events in one execution are multiplexed (pcnt_running 50%).
    temp_dir dir("pg-test");
    const auto fake_perf = dir.path() / "perf";
    std::ofstream(fake_perf) << R"(#!/bin/sh
out=; events=
while [ $# -gt 0 ]; do
  case $1 in -o) out=$2; shift 2;; -e) events=$2; shift 2;; --) shift; break;; *) shift;; esac
done
"$@"; rc=$?
hw=$(echo "$events" | tr ',' '\n' | grep -v -c -e '^task-clock$' -e '^duration_time$')
for e in $(echo "$events" | tr ',' ' '); do
  case $e in
    task-clock) echo "1.50,msec,task-clock,1500000,100.00,0.5,CPUs utilized" ;;
    duration_time) echo "3000000,ns,duration_time,3000000,100.00,," ;;
    *) if [ "$hw" -gt 2 ]; then echo "1000,,$e,750000,50.00,,"; else echo "1000,,$e,1500000,100.00,,"; fi ;;
  esac
done > "$out"
exit $rc
)";
    std::filesystem::permissions(fake_perf, std::filesystem::perms::owner_all);
    std::ostringstream progress;
    auto opt = fast_options();
    opt.perf = fake_perf.string();
    opt.events = {"task-clock", "cycles", "instructions", "branch-misses", "cache-misses", "duration_time"};
    opt.repetitions = 3;

    SUBCASE("without --split-events: warned, values kept with their pcnt_running")
    {
        auto m = measure({spec_of("mux", "true", "true")}, opt, progress);
        const auto& run = m[0].baseline.run;
        REQUIRE(find_counter(run, "cycles") != nullptr);
        CHECK(find_counter(run, "cycles")->samples[0].pcnt_running == doctest::Approx(50.0));
        REQUIRE(m[0].baseline.warnings.size() == 1);
        const auto& w = m[0].baseline.warnings[0];
        CHECK(
            w.find(
                "benchmark 'mux': events branch-misses (50.0%), cache-misses (50.0%), cycles (50.0%), instructions (50.0%) were multiplexed") ==
            0);
        CHECK(w.find("--split-events") != std::string::npos);
    }
    SUBCASE("with --split-events: two groups per repetition, no multiplexing left")
    {
        opt.split_events = true;
        auto m = measure({spec_of("split", "true", "true")}, opt, progress);
        const auto& run = m[0].candidate.run;
        CHECK(m[0].candidate.warnings.empty());
        for (std::string name :
             {"task-clock", "cycles", "instructions", "branch-misses", "cache-misses", "duration_time", "wall-time"}) {
            CAPTURE(name);
            auto* c = find_counter(run, name);
            REQUIRE(c != nullptr);
            CHECK(c->samples.size() == 3);
            CHECK(c->samples[0].pcnt_running == doctest::Approx(100.0));
        }
    }
}

// Issue 43 finding 8: the measured program is the pull request's code; it
// must not read the job's credentials from its environment.
TEST_CASE("measured commands do not inherit credentials: every backend, --pass-env and --env still set them")
{
    CHECK(is_secret_name("GITHUB_TOKEN"));
    CHECK(is_secret_name("PERFGATE_TOKEN"));
    CHECK(is_secret_name("ACTIONS_RUNTIME_TOKEN"));
    CHECK(is_secret_name("ACTIONS_ID_TOKEN_REQUEST_URL"));
    CHECK(is_secret_name("ACTIONS_ID_TOKEN_REQUEST_TOKEN"));
    CHECK(is_secret_name("AWS_SECRET_ACCESS_KEY"));
    CHECK(is_secret_name("PGPASSWORD"));
    CHECK(is_secret_name("npm_token"));
    CHECK(is_secret_name("SSH_PRIVATE_KEY"));
    CHECK(is_secret_name("OPENAI_API_KEY"));
    CHECK(is_secret_name("GH_PAT"));
    CHECK(is_secret_name("DOCKER_CREDENTIALS"));
    CHECK_FALSE(is_secret_name("PATH"));
    CHECK_FALSE(is_secret_name("HOME"));
    CHECK_FALSE(is_secret_name("LC_ALL"));
    CHECK_FALSE(is_secret_name("GITHUB_SHA"));
    CHECK_FALSE(is_secret_name("KEYBOARD"));
    CHECK_FALSE(is_secret_name("ACTIONS_RUNTIME_URL"));

    temp_dir dir("pg-env");
    const auto script = dir.path() / "print_env.sh";
    {
        std::ofstream out(script);
        out << "#!/bin/sh\nenv > \"$1\"\n";
    }
    const env_list secrets = {{"GITHUB_TOKEN", "ghs_job_token"},
                              {"PERFGATE_TOKEN", "pg_job_token"},
                              {"ACTIONS_RUNTIME_TOKEN", "runtime"},
                              {"ACTIONS_ID_TOKEN_REQUEST_URL", "https://oidc.example"},
                              {"ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc"},
                              {"DEPLOY_SSH_KEY", "ssh"},
                              {"DB_PASSWORD", "hunter2"},
                              {"NPM_TOKEN", "npm"},
                              {"PERFGATE_TEST_PLAIN", "kept"}};
    auto variables = [](const std::filesystem::path& file) {
        std::map<std::string, std::string> vars;
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        std::istringstream lines(text.str());
        for (std::string line; std::getline(lines, line);) {
            const auto eq = line.find('=');
            if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
        }
        return vars;
    };
    for (const std::string backend : {"rusage", "perf", "native", "callgrind", "memcheck"}) {
        INFO(backend);
        const auto base_out = dir.path() / (backend + ".baseline.env");
        const auto cand_out = dir.path() / (backend + ".candidate.env");
        std::vector<std::string> args = {"run",          "-q",    "--backend",
                                         backend,        "-r",    "1",
                                         "--warmup",     "0",     "--pass-env",
                                         "GITHUB_TOKEN", "--env", "PERFGATE_TOKEN=given"};
        if (backend == "perf" || backend == "native") args.insert(args.end(), {"--events", "task-clock"});
        args.insert(args.end(), {"--baseline", "sh " + script.string() + " " + base_out.string(), "--candidate",
                                 "sh " + script.string() + " " + cand_out.string()});
        const auto r = run_perfgate(args, dir.path(), secrets);
        INFO(r.err);
        REQUIRE((r.code == 0 || r.code == 1 || r.code == 3));
        for (const auto& file : {base_out, cand_out}) {
            const auto vars = variables(file);
            REQUIRE_FALSE(vars.empty());
            // Dropped by the rule.
            for (const char* name : {"ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
                                     "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "DEPLOY_SSH_KEY", "DB_PASSWORD", "NPM_TOKEN"}) {
                CHECK_MESSAGE(vars.count(name) == 0, name);
            }
            // Passed on by name; set explicitly; ordinary variables untouched.
            CHECK(vars.at("GITHUB_TOKEN") == "ghs_job_token");
            CHECK(vars.at("PERFGATE_TOKEN") == "given");
            CHECK(vars.at("PERFGATE_TEST_PLAIN") == "kept");
            CHECK(vars.count("PATH") == 1);
        }
    }
    const auto bad = run_perfgate({"run", "--pass-env", "A=B", "--baseline", "true", "--candidate", "true"},
                                  dir.path());
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--pass-env: expected a variable's NAME, got 'A=B'") != std::string::npos);
}
