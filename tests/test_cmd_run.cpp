// The pure phases of `perfgate run` (cli/run_phases.hpp): the command line
// into settings, sequential sampling's setup, the GitHub options. No
// process is started and nothing is measured.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "cli/commands.hpp"
#include "cli/run_phases.hpp"
#include "gate/compare.hpp"
#include "model/error.hpp"
#include "runner/measure.hpp"
#include "runner/process.hpp"

namespace {

using namespace perfgate;
using namespace perfgate::cli;

parsed_args args_of(const argv_t& argv)
{
    auto parsed = parse_args(run_spec(), argv);
    REQUIRE(parsed.has_value());
    return *parsed;
}

argv_t with_commands(argv_t more)
{
    argv_t argv = {"--name", "sum", "--baseline", "/bin/true base", "--candidate", "/bin/true cand"};
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
}

// The id of the perfgate::error that f throws; "" when it throws none.
std::string thrown_id(const std::function<void()>& f)
{
    try {
        f();
    } catch (const error& e) {
        return e.id();
    }
    return "";
}

std::string settings_error(const argv_t& argv)
{
    return thrown_id([&] { (void)parse_run_settings(args_of(argv)); });
}

std::string sequential_error(const argv_t& argv)
{
    return thrown_id([&] {
        const auto args = args_of(argv);
        auto s = parse_run_settings(args);
        setup_sequential(args, s);
    });
}

} // namespace

TEST_CASE("perfgate run phases: the command line into settings")
{
    SUBCASE("one benchmark from --name/--baseline/--candidate, defaults for the rest")
    {
        const auto s = parse_run_settings(args_of(with_commands({"-q"})));
        REQUIRE(s.benchmarks.size() == 1);
        CHECK(s.benchmarks[0].name == "sum");
        CHECK(s.benchmarks[0].baseline.argv == std::vector<std::string>{"/bin/true", "base"});
        CHECK(s.benchmarks[0].candidate.text == "/bin/true cand");
        CHECK(s.measure.which == runner::backend::perf);
        CHECK(s.measure.repetitions == 10);
        CHECK(s.measure.warmup == 1);
        CHECK(s.measure.events.empty());
        CHECK(s.measure.progress == runner::progress_style::none);
        CHECK(s.format == report_format::text);
        CHECK_FALSE(s.rules.has_value());
        CHECK_FALSE(s.policy_sequential);
        CHECK_FALSE(s.measure.sequential.has_value());
    }
    SUBCASE("callgrind is deterministic: one repetition, no warmup")
    {
        const auto s = parse_run_settings(args_of(with_commands({"--backend", "callgrind", "--cache-sim"})));
        CHECK(s.measure.which == runner::backend::callgrind);
        CHECK(s.measure.repetitions == 1);
        CHECK(s.measure.warmup == 0);
        CHECK(s.measure.cache_sim);
    }
    SUBCASE("a config file's backend and suppressions, under the command line's")
    {
        runner::temp_dir dir("pg-run-config");
        std::ofstream(dir.path() / "a.supp") << "{\n  a\n  Memcheck:Leak\n  ...\n}\n";
        std::ofstream(dir.path() / "b.supp") << "{\n  b\n  Memcheck:Leak\n  ...\n}\n";
        const auto config = (dir.path() / "bench.json").string();
        std::ofstream(config) << R"({"backend": "memcheck", "suppressions": ["a.supp"],
                                     "benchmarks": [{"name": "x", "baseline": "true", "candidate": "true"}]})";
        auto s = parse_run_settings(args_of({"--config", config}));
        CHECK(s.measure.which == runner::backend::memcheck);
        CHECK(s.measure.repetitions == 1);
        CHECK(s.measure.suppressions == std::vector<std::filesystem::path>{dir.path() / "a.supp"});
        // --suppressions adds to the config's.
        s = parse_run_settings(args_of({"--config", config, "--suppressions", (dir.path() / "b.supp").string()}));
        CHECK(s.measure.suppressions.size() == 2);
        // --backend wins, and the config's suppressions then have no memcheck to go to.
        CHECK(thrown_id([&] {
                  (void)parse_run_settings(args_of({"--config", config, "--backend", "callgrind"}));
              }) == "usage.conflict");
        std::ofstream(config, std::ios::trunc) << R"({"backend": "memcheck",
                                     "benchmarks": [{"name": "x", "baseline": "true", "candidate": "true"}]})";
        s = parse_run_settings(args_of({"--config", config, "--backend", "callgrind"}));
        CHECK(s.measure.which == runner::backend::callgrind);
    }
    SUBCASE("events, order, seed, timeout and format")
    {
        const auto s = parse_run_settings(args_of(with_commands({"-e", "cycles,instructions", "--order", "random",
                                                                 "--seed", "7", "--timeout", "1.5", "--format",
                                                                 "json"})));
        CHECK(s.measure.events == std::vector<std::string>{"cycles", "instructions"});
        CHECK(s.measure.order == runner::run_order::random);
        CHECK(s.measure.seed == 7);
        REQUIRE(s.measure.timeout.has_value());
        CHECK(s.measure.timeout->count() == 1500);
        CHECK(s.format == report_format::json);
    }
    SUBCASE("usage errors before anything is measured")
    {
        CHECK(settings_error({"--name", "x", "--baseline", "true"}) == "usage.missing_option");
        CHECK(settings_error(with_commands({"--", "extra"})) == "usage.unexpected_argument");
        CHECK(settings_error(with_commands({"--backend", "gpu"})) == "usage.bad_value");
        CHECK(settings_error(with_commands({"-e", "cycles,,instructions"})) == "usage.bad_value");
        CHECK(settings_error(with_commands({"--backend", "rusage", "-e", "cycles"})) == "usage.conflict");
        CHECK(settings_error(with_commands({"--seed", "3"})) == "usage.conflict");
        CHECK(settings_error(with_commands({"--cache-sim"})) == "usage.conflict");
        CHECK(settings_error(with_commands({"--timeout", "0"})) == "usage.bad_value");
        CHECK(settings_error({"--name", "x", "--baseline", "'open", "--candidate", "true"}) == "input.bad_command");
    }
}

TEST_CASE("perfgate run phases: sequential sampling's setup")
{
    SUBCASE("fixed repetitions: nothing to set up")
    {
        const auto args = args_of(with_commands({"-r", "4"}));
        auto s = parse_run_settings(args);
        setup_sequential(args, s);
        CHECK_FALSE(s.measure.sequential.has_value());
        CHECK_FALSE(s.rules.has_value());
        CHECK(s.measure.repetitions == 4);
    }
    SUBCASE("--budget and --max-repetitions: the rule, the sampling plan and its stop rule")
    {
        const auto args = args_of(with_commands({"--budget", "30", "--max-repetitions", "20", "--min-repetitions",
                                                 "6"}));
        auto s = parse_run_settings(args);
        setup_sequential(args, s);
        REQUIRE(s.rules.has_value());
        REQUIRE(s.rules->sequential.has_value());
        CHECK(s.rules->sequential->min_repetitions == 6);
        CHECK(s.rules->sequential->max_repetitions == 20);
        REQUIRE(s.measure.sequential.has_value());
        const auto& seq = *s.measure.sequential;
        CHECK(seq.min_repetitions == 6);
        CHECK(seq.max_repetitions == 20);
        CHECK(seq.block == static_cast<int>(s.rules->sequential->block));
        REQUIRE(seq.budget.has_value());
        CHECK(seq.budget->count() == doctest::Approx(30.0));
        CHECK(static_cast<bool>(seq.decided));
    }
    SUBCASE("conflicts and bad sizes")
    {
        CHECK(sequential_error(with_commands({"-r", "5", "--budget", "10"})) == "usage.conflict");
        CHECK(sequential_error(with_commands({"--backend", "callgrind", "--max-repetitions", "10"})) ==
              "usage.conflict");
        CHECK(sequential_error(with_commands({"--budget", "0"})) == "usage.bad_value");
        CHECK(sequential_error(with_commands({"--min-repetitions", "8", "--max-repetitions", "6"})) ==
              "usage.bad_value");
    }
}

TEST_CASE("perfgate run phases: --cwd, --env and the per-side variables")
{
    runner::temp_dir dir("pg-cmd-run-env");
    const auto s = parse_run_settings(args_of(with_commands({"--cwd", dir.path().string(), "--env", "A=1", "--env",
                                                             "B=x=y", "--baseline-env", "A=2", "--candidate-env",
                                                             "C="})));
    REQUIRE(s.benchmarks.size() == 1);
    const auto& spec = s.benchmarks[0];
    CHECK(spec.cwd == dir.path());
    using vars = std::vector<std::pair<std::string, std::string>>;
    CHECK(spec.env == vars{{"A", "1"}, {"B", "x=y"}});
    CHECK(spec.baseline_env == vars{{"A", "2"}});
    CHECK(spec.candidate_env == vars{{"C", ""}});
    // Each side: both sides' variables, then its own (the later wins).
    CHECK(runner::for_side(spec, runner::side::baseline).env == vars{{"A", "1"}, {"B", "x=y"}, {"A", "2"}});
    CHECK(runner::for_side(spec, runner::side::candidate).env == vars{{"A", "1"}, {"B", "x=y"}, {"C", ""}});
    CHECK(settings_error(with_commands({"--env", "A"})) == "usage.bad_value");
    CHECK(settings_error(with_commands({"--candidate-env", "=1"})) == "usage.bad_value");
    CHECK(settings_error(with_commands({"--cwd", (dir.path() / "missing").string()})) == "usage.bad_value");
    CHECK(thrown_id([] { (void)parse_args(run_spec(), {"--config", "x.json", "--env", "A=1"}); }) == "usage.conflict");
}

TEST_CASE("perfgate run phases: google/benchmark's times: cpu_time gates unless a benchmark or the policy says")
{
    const std::vector<std::string> names = {"BM_Sort/1024", "BM_Sleep/real_time", "BM_Io/manual_time"};
    SUBCASE("no policy")
    {
        gate::policy p;
        gate_gbench_times(p, names);
        CHECK_FALSE(p.resolve("BM_Sort/1024", "real_time").gated);
        CHECK(p.resolve("BM_Sort/1024", "cpu_time").gated);
        for (const char* declared : {"BM_Sleep/real_time", "BM_Io/manual_time"}) {
            CAPTURE(declared);
            CHECK(p.resolve(declared, "real_time").gated);
            CHECK_FALSE(p.resolve(declared, "cpu_time").gated);
        }
        CHECK(p.benchmarks.size() == 2); // only the declared ones have an entry
    }
    SUBCASE("the policy's word stands, for all benchmarks or one")
    {
        gate::policy p;
        p.counters["real_time"].gate = true;
        p.benchmarks["BM_Sleep/real_time"].counters["cpu_time"].gate = true;
        gate_gbench_times(p, names);
        CHECK(p.resolve("BM_Sort/1024", "real_time").gated);
        CHECK(p.resolve("BM_Sort/1024", "cpu_time").gated);
        CHECK(p.resolve("BM_Sleep/real_time", "cpu_time").gated);
        CHECK(p.resolve("BM_Sleep/real_time", "real_time").gated);
        CHECK_FALSE(p.resolve("BM_Io/manual_time", "cpu_time").gated);
    }
}

TEST_CASE("perfgate run phases: the stop rule judges a suite's benchmarks together, with the suite's family")
{
    // Two benchmarks of one suite, 10 samples a side: one 3x slower
    // (decided at the first look), one shifted by 0.1% with a 2% threshold
    // and a spread of 20% (undecided).
    const auto side = [](const std::string& name, const std::string& role, double base, double spread) {
        runner::side_samples s;
        s.run.benchmark = name;
        s.run.role = role;
        s.run.backend = "perf";
        model::counter_samples c{"cpu_time", "ns", {}};
        for (int i = 0; i < 10; ++i)
            c.samples.push_back({i, base * (1 + spread * ((i % 2 == 0) ? 1 : -1) * (i + 1) / 10.0), 100.0, {}});
        s.run.counters.push_back(c);
        return s;
    };
    runner::benchmark_measurement slow{"BM_Hash", side("BM_Hash", "baseline", 100, 0.01),
                                       side("BM_Hash", "candidate", 300, 0.01)};
    runner::benchmark_measurement noisy{"BM_Copy", side("BM_Copy", "baseline", 100, 0.2),
                                        side("BM_Copy", "candidate", 100.1, 0.2)};
    runner::benchmark_spec suite;
    suite.name = "suite";
    suite.harness = "gbench";
    gate::policy rules;
    rules.sequential = gate::sequential_rule{10, 10, 20}; // a first look at the 10 samples, a last at 20
    const auto rule = stop_rule(rules, {suite});
    const auto decided = rule("suite", {slow, noisy}, false);
    REQUIRE(decided.size() == 2);
    CHECK(decided[0]);
    CHECK_FALSE(decided[1]);
    // The real_time a suite reports does not gate: a benchmark whose
    // real_time is as undecided as BM_Copy's is decided by its cpu_time.
    runner::benchmark_measurement wall = noisy;
    wall.name = "BM_Wall";
    for (auto* s : {&wall.baseline, &wall.candidate}) {
        s->run.benchmark = "BM_Wall";
        s->run.counters[0].counter = "real_time";
    }
    auto cpu = side("BM_Wall", "baseline", 100, 0.001).run.counters[0];
    wall.baseline.run.counters.push_back(cpu);
    wall.candidate.run.counters.push_back(cpu);
    CHECK(rule("suite", {wall}, false) == std::vector<bool>{true});
}

TEST_CASE("perfgate run's unpaired benchmarks are listed by the gate, as compare() lists a pair of files'")
{
    // compare() of two suites: BM_Fail failed on the candidate, BM_Gone
    // removed, BM_New added, BM_Ok compared.
    const auto bench = [](const std::string& name, const std::string& error) {
        capture::benchmark_samples b;
        b.name = name;
        b.error = error;
        if (!error.empty()) return b;
        capture::counter_series c;
        c.name = "cpu_time";
        c.unit = "ns";
        c.values = {1, 2, 3, 4, 5};
        b.counters.push_back(c);
        return b;
    };
    capture::sample_set base, cand;
    base.benchmarks = {bench("BM_Ok", ""), bench("BM_Fail", ""), bench("BM_Gone", "")};
    cand.benchmarks = {bench("BM_Ok", ""), bench("BM_Fail", "input file missing"), bench("BM_New", "")};
    const gate::report files = gate::compare(base, cand, gate::policy{});

    // perfgate run's measurements of the same, through add_unpaired.
    gate::report run;
    CHECK(gate::add_unpaired(run, "BM_Fail", {true, ""}, {true, "input file missing"}));
    CHECK(gate::add_unpaired(run, "BM_Gone", {true, ""}, {}));
    CHECK(gate::add_unpaired(run, "BM_New", {}, {true, ""}));
    CHECK_FALSE(gate::add_unpaired(run, "BM_Ok", {true, ""}, {true, ""}));
    CHECK(run.removed == files.removed);
    CHECK(run.added == files.added);
    REQUIRE(run.failed.size() == 1);
    REQUIRE(files.failed.size() == 1);
    CHECK(run.failed[0].name == files.failed[0].name);
    CHECK(run.failed[0].side == files.failed[0].side);
    CHECK(run.failed[0].message == files.failed[0].message);
    for (const auto& w : run.warnings) {
        CAPTURE(w);
        CHECK(std::find(files.warnings.begin(), files.warnings.end(), w) != files.warnings.end());
    }
    CHECK(run.warnings.size() == 3);
    // What failed was not seen: never a pass.
    CHECK(run.result == gate::verdict::inconclusive);
    CHECK(files.result == gate::verdict::inconclusive);
    gate::report both;
    gate::add_unpaired(both, "BM_X", {true, "a"}, {true, "b"});
    CHECK(both.failed[0].side == "both");
    CHECK(both.failed[0].message == "b");
    CHECK(both.warnings[0] == "benchmark 'BM_X' failed (both sides): b: not compared");
}

TEST_CASE("perfgate run phases: GitHub options")
{
    CHECK_FALSE(github_options_from(args_of(with_commands({}))).has_value());
    SUBCASE("--github with its options")
    {
        const auto g = github_options_from(
            args_of(with_commands({"--github", "--comment", "on-change", "--context", "perf/x86", "--output",
                                   "report.md", "--fail-on-inconclusive", "--comment-author", "bench[bot]"})));
        REQUIRE(g.has_value());
        CHECK(g->comment == "on-change");
        CHECK(g->context == "perf/x86");
        CHECK(g->report_path == "report.md");
        CHECK(g->fail_on_inconclusive);
        CHECK(g->comment_author == std::optional<std::string>("bench[bot]"));
    }
    SUBCASE("defaults")
    {
        const auto g = github_options_from(args_of(with_commands({"--github"})));
        REQUIRE(g.has_value());
        CHECK(g->comment == "always");
        CHECK(g->context == "perfgate");
        CHECK_FALSE(g->fail_on_inconclusive);
        CHECK_FALSE(g->comment_author.has_value());
    }
    SUBCASE("errors")
    {
        CHECK(thrown_id([] {
                  (void)github_options_from(args_of(with_commands({"--comment", "never"})));
              }) == "usage.conflict");
        CHECK(thrown_id([] {
                  (void)github_options_from(args_of(with_commands({"--github", "--comment", "loud"})));
              }) == "usage.bad_value");
    }
}

TEST_CASE("perfgate run phases: commit overrides, --profile and --top")
{
    const auto flags = git_overrides_from(
        args_of(with_commands({"--sha", "abc123", "--branch", "main", "--pr", "12"})));
    CHECK(flags.sha == std::optional<std::string>("abc123"));
    CHECK(flags.branch == std::optional<std::string>("main"));
    CHECK_FALSE(flags.base_branch.has_value());
    CHECK_FALSE(flags.base_sha.has_value());
    CHECK(git_overrides_from(args_of(with_commands({"--base-sha", "def456"}))).base_sha ==
          std::optional<std::string>("def456"));
    CHECK(flags.pr == std::optional<std::int64_t>(12));

    CHECK_FALSE(profile_options_from(args_of(with_commands({}))).has_value());
    CHECK(thrown_id([] {
              (void)profile_options_from(args_of(with_commands({"--profile-executions", "2"})));
          }) == "usage.conflict");
    const auto p = profile_options_from(
        args_of(with_commands({"--profile", "--profile-executions", "2", "--top", "5"})));
    REQUIRE(p.has_value());
    CHECK(p->executions == 2);
    CHECK(p->top == 5);

    CHECK(attribution_options_from(args_of(with_commands({"--top", "7"}))).top == 7);
    CHECK(thrown_id([] {
              (void)attribution_options_from(args_of(with_commands({"--top", "0"})));
          }) == "usage.bad_value");
}
