// The pure phases of `perfgate run` (cli/run_phases.hpp): the command line
// into settings, sequential sampling's setup, the GitHub options. No
// process is started and nothing is measured.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "cli/commands.hpp"
#include "cli/run_phases.hpp"
#include "model/error.hpp"
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
