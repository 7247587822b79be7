// The phases of `perfgate run` (cli/cmd_run.cpp) that read only the command
// line and the files it names, apart from measuring, storing and
// publishing: each is a named step with its own unit test
// (tests/test_cmd_run.cpp). Every error is a usage error ("usage.*",
// exit 2) raised before anything is measured, or a bad policy or
// configuration file ("input.*").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "cli/output.hpp"
#include "gate/policy.hpp"
#include "github/github.hpp"
#include "model/error_ids.hpp"
#include "runner/attribution.hpp"
#include "runner/git_info.hpp"
#include "runner/measure.hpp"
#include "runner/profile_run.hpp"

namespace perfgate::cli {

// perfgate::error(id, "perfgate run: " + message).
[[noreturn]] void run_usage_error(error_id id, const std::string& message);

// What the command line asks of a run, before the sequential setup.
struct run_settings {
    std::vector<runner::benchmark_spec> benchmarks; // --config, or --name/--baseline/--candidate
    runner::measure_options measure;                // backend, repetitions, events, ...
    report_format format = report_format::text;
    std::optional<gate::policy> rules; // --policy
    bool policy_sequential = false;    // the policy file has a "sequential" section
};

// Phase 1: the benchmarks, the measurement options, the report format and
// the policy. Refuses positional arguments.
run_settings parse_run_settings(const parsed_args& args);

// Phase 2: sequential sampling (--budget, --max-/--min-repetitions, or the
// policy's "sequential"): sets settings.rules->sequential and
// settings.measure.sequential with its stop rule. Fixed repetitions: no
// change.
void setup_sequential(const parsed_args& args, run_settings& settings);

// Sequential sampling's stop rule (runner::sampling::decided): after a
// look, is every gated counter of each benchmark decided
// (gate/compare.hpp sequential_check)?
std::function<std::vector<bool>(std::string_view, const std::vector<runner::benchmark_measurement>&, bool)> stop_rule(
    const gate::policy& rules, const std::vector<runner::benchmark_spec>& benchmarks);

// --harness gbench under perf, native or rusage: which of google/benchmark's
// times gates (docs/cli.md#harnesses). cpu_time; real_time instead for a
// benchmark that declares it measures real or manual time (UseRealTime(),
// UseManualTime(): its name ends in /real_time or /manual_time); the other
// time is reported, not gated. What the policy says about real_time or
// cpu_time (for all benchmarks or for one) stays as it is.
void gate_gbench_times(gate::policy& rules, const std::vector<std::string>& benchmarks);

// Phase 3: --github and its options; nullopt without --github.
std::optional<github::github_options> github_options_from(const parsed_args& args);

// --sha, --branch, --base-sha, --base-branch, --pr.
runner::git_overrides git_overrides_from(const parsed_args& args);

// --profile and its options; nullopt without --profile.
std::optional<runner::profile_options> profile_options_from(const parsed_args& args);

// --top.
runner::attribution_options attribution_options_from(const parsed_args& args);

} // namespace perfgate::cli
