// perfgate run: measure baseline and candidate commands, store the runs
// (locally in SQLite or on a perfgate server), gate them and print the verdict.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/names.hpp"
#include "capture/samples.hpp"
#include "cli/cli.hpp"
#include "cli/cmd_run_qualification.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/run_phases.hpp"
#include "cli/target.hpp"
#include "gate/compare.hpp"
#include "gate/policy.hpp"
#include "gate/prior_noise.hpp"
#include "gate/report.hpp"
#include "github/github.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "report/render.hpp"
#include "runner/attribution.hpp"
#include "runner/baseline_ref.hpp"
#include "runner/check_env.hpp"
#include "runner/config.hpp"
#include "runner/git_info.hpp"
#include "runner/measure.hpp"
#include "runner/perf_event.hpp"
#include "runner/process.hpp"
#include "runner/profile_run.hpp"
#include "runner/testbed.hpp"
#include "runner/toolchain.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

using namespace perfgate::runner;
using github::github_options;
using github::github_result;
using github::publish_to_github;

namespace {

std::vector<option_spec> run_option_list()
{
    // --help and the man page list the options under these headings, in this order.
    std::vector<option_spec> options;
    auto add = [&](std::vector<option_spec> group) { options.insert(options.end(), group.begin(), group.end()); };
    // clang-format off
    add(option_group("Benchmarks", {
    {"config", 'c', true, false, "FILE", "JSON list of benchmarks (name, baseline, candidate, cwd, env, "
                                         "baseline_env, candidate_env, repetitions)", {},
                                         {"name", "baseline", "candidate", "cwd", "env", "baseline-env", "candidate-env"}},
    {"name", 0, true, false, "NAME", "benchmark name with --baseline/--candidate (default: \"default\")"},
    {"baseline", 0, true, false, "CMD", "baseline command (run via /bin/sh -c only if it uses shell syntax)"},
    {"candidate", 0, true, false, "CMD", "candidate command"},
    {"harness", 0, true, false, "NAME", "gbench: --baseline and --candidate are google/benchmark binaries, each of "
                                        "their benchmarks a benchmark of the gate (docs/cli.md#harnesses)"},
    {"filter", 0, true, false, "REGEX", "with --harness gbench: only the benchmarks matching REGEX "
                                        "(--benchmark_filter)"},
    {"cwd", 0, true, false, "DIR", "run both commands in DIR (a suite that finds its data through ./testdata)"},
    {"env", 0, true, true, "K=V", "set variable K to V for both commands (repeatable)"},
    {"baseline-env", 0, true, true, "K=V", "set K to V for the baseline command only, after --env (repeatable)"},
    {"candidate-env", 0, true, true, "K=V", "set K to V for the candidate command only, after --env (repeatable)"},
    {"pass-env", 0, true, true, "NAME", "let both commands inherit NAME although it looks like a credential "
                                        "(*TOKEN*, *SECRET*, *PASSWORD*, *_KEY, ...: dropped by default; repeatable)"},
    }));
    add(option_group("Measurement", {
    {"repetitions", 'r', true, false, "N", "measured executions per side (default 10; 1 with --backend callgrind or memcheck)"},
    {"warmup", 0, true, false, "N", "discarded executions per side before measuring (default 1; 0 with callgrind or memcheck)"},
    {"backend", 0, true, false, "NAME", "perf (default), native (the same counters opened by perfgate with "
                                        "perf_event_open: no perf process per execution), callgrind (deterministic, "
                                        "no PMU needed), rusage, or memcheck (the memory gate: heap "
                                        "allocations, bytes and peak, leaks and memcheck errors, under valgrind; "
                                        "docs/memory.md)"},
    {"events", 'e', true, false, "EVENTS", "perf events, comma-separated (default: the supported ones of cycles, "
                                           "instructions, branch-misses, cache-misses, task-clock, page-faults, plus duration_time)"},
    {"split-events", 0, false, false, "", "measure multiplexed events in groups across executions"},
    {"cache-sim", 0, false, false, "", "callgrind: also simulate the caches (counters cache-misses and "
                                       "estimated-cycles = Ir + 10 L1 misses + 100 LL misses)"},
    {"suppressions", 0, true, true, "FILE", "memcheck: a valgrind suppression file for known third-party leaks "
                                            "and errors (repeatable)"},
    {"cpus", 0, true, false, "LIST", "pin the benchmarks to these CPUs (sched_setaffinity), e.g. 2-3"},
    {"keep-aslr", 0, false, false, "", "leave address-space randomisation on (default: off for the benchmark)"},
    {"order", 0, true, false, "ORDER", "alternate (default: ABBA rounds), random (with --seed) or blocked"},
    {"seed", 0, true, false, "N", "seed for --order random (default 0)"},
    {"timeout", 0, true, false, "SECONDS", "kill an execution that runs longer (exit 4)"},
    }));
    add(option_group("Sequential sampling", {
    {"budget", 0, true, false, "SECONDS", "sequential sampling: measure in blocks until every gated counter is decided "
                                          "or this much time is spent (whole run; max 60 repetitions unless given)"},
    {"max-repetitions", 0, true, false, "N", "sequential sampling: at most N repetitions per side"},
    {"min-repetitions", 0, true, false, "N", "sequential sampling: repetitions per side at the first look (default 5)"},
    }));
    add(option_group("Policy", {
    {"policy", 0, true, false, "FILE", "JSON policy file (thresholds, gated counters, alpha, correction)"},
    {"fail-on-inconclusive", 0, false, false, "", "exit 3 when the verdict is inconclusive"},
    }));
    add(option_group("Output", {
    {"format", 0, true, false, "FORMAT", "text (default), json, markdown or junit"},
    {"output", 'o', true, false, "FILE", "also write the report to FILE"},
    {"quiet", 'q', false, false, "", "no progress output"},
    }));
    add(option_group("Profiling and attribution", {
    {"artifacts", 0, true, false, "DIR", "write each regressed benchmark's raw profiles and attribution.json "
                                         "to DIR/<benchmark>/"},
    {"top", 0, true, false, "N", "functions in each attribution table of a regressed benchmark (default 10)"},
    {"profile", 0, false, false, "", "after the measured rounds, profile extra executions of each side (perf record -g): "
                                     "the functions whose share of the samples changed, and a differential flame graph "
                                     "(.perfgate/artifacts/NAME/flame.svg); never changes the verdict"},
    {"profile-executions", 0, true, false, "N", "with --profile: profiled executions per side (default 3)"},
    {"profile-max-mb", 0, true, false, "MB", "with --profile: largest perf script output per execution (default 256)"},
    }));
    add(option_group("Commit and pull request", {
    {"sha", 0, true, false, "SHA", "candidate commit (default: GitHub Actions environment, else git)"},
    {"branch", 0, true, false, "BRANCH", "candidate branch (default: GitHub Actions environment, else git)"},
    {"base-sha", 0, true, false, "SHA", "commit of the baseline build (default: the PR's base, a push's previous "
                                        "head; else unknown, stored empty)"},
    {"base-branch", 0, true, false, "BRANCH", "branch of the baseline build (default: the PR's base, else --branch)"},
    {"baseline-ref", 0, true, false, "RULE", "which commit a pull request is measured against: merge-base (default "
                                             "on pull request events), base-tip or parent; the baseline build must be "
                                             "that commit"},
    {"repo", 0, true, false, "DIR", "git repository with the candidate's history, for --baseline-ref (default: .)"},
    {"baseline-dir", 0, true, false, "DIR", "the baseline build's checkout: refused unless it is the baseline commit"},
    {"pr", 0, true, false, "N", "pull request number (default: from GITHUB_EVENT_PATH)"},
    {"mainline", 0, false, false, "", "the candidate feeds its branch's series, watch and reuse (default: on a "
                                      "GitHub push event; docs/history.md#which-runs-feed-the-series)"},
    {"no-mainline", 0, false, false, "", "no run of this gate feeds a series"},
    }));
    add(option_group("GitHub", {
    {"github", 0, false, false, "", "post the report to the pull request (comment, status, job summary)"},
    {"comment", 0, true, false, "MODE", "with --github: always (default), on-change, on-regression or never"},
    {"context", 0, true, false, "NAME", "with --github: status context and sticky-comment key (default: perfgate)"},
    {"comment-author", 0, true, false, "LOGIN", "with --github: the login that writes the sticky comment, for a GitHub "
                                                "App's token (<slug>[bot]); default: the token's own"},
    }));
    add(option_group("Store and server", target_options("local history database (default ./.perfgate/perfgate.db)",
                                                        "project (needed with --server; default \"default\" locally)")));
    add(option_group("Store and server", {
    {"testbed", 0, true, false, "NAME", "name of this machine in the history (default: hostname)"},
    {"baseline-source", 0, true, false, "SOURCE", "measure (default): measure the baseline build; server: with "
                                                  "--server and callgrind or memcheck, reuse the stored run of the "
                                                  "baseline commit (same benchmark, testbed, backend and toolchain) "
                                                  "and measure the candidate only (docs/github.md#reusing-the-baseline)"},
    {"check-reuse", 0, false, false, "", "with --baseline-source server: measure nothing, print \"reuse\" when every "
                                         "baseline would be reused, else \"measure\" (the workflow then builds the "
                                         "baseline), exit 0"},
    {"toolchain", 0, true, false, "TEXT", "the toolchain key recorded with the runs (default: from the benchmark's "
                                          "ELF executable: compiler identification and recorded flags; "
                                          "docs/history.md#toolchain-key)"},
    }));
    // clang-format on
    return options;
}

const command_spec run_command{
    "run",
    "(--config FILE | --name NAME --baseline CMD --candidate CMD) [options]",
    "Measures the baseline and the candidate command of each benchmark in interleaved\n"
    "rounds under perf stat (or callgrind / rusage), with the CPUs pinned and ASLR off,\n"
    "stores both runs (./.perfgate/perfgate.db, or a server) and gates the candidate.\n"
    "Exit 4 also when a benchmark fails or perf is unusable.",
    run_option_list(),
};

} // namespace

const command_spec& run_spec() { return run_command; }

namespace {

// With --server: each flame graph goes to the server with the comparison,
// where its dashboard page shows it. Failures (the server's size limit,
// 413) are warnings: the verdict is already made.
std::vector<std::string> upload_flame_graphs(client::server_client& server, const gate::report& result,
                                             const profile_options& profiling)
{
    std::vector<std::string> warnings;
    for (const auto& b : result.benchmarks) {
        if (!b.attribution_info || !b.attribution_info->perf || !b.attribution_info->perf->flame_graph) continue;
        const auto path = profiling.artifacts / *b.attribution_info->perf->flame_graph;
        try {
            server.upload_flame_graph(*result.comparison_id, b.name, model::read_text_file(path));
        } catch (const error& e) {
            warnings.push_back(fmt::format("the flame graph of '{}' was not stored on the server ({} stays): {}",
                                           b.name, path.string(), e.what()));
        }
    }
    return warnings;
}

// A benchmark's attribution as the store keeps it: each table cut to the
// service's max_attribution_functions rows (ordered by |delta|, so the
// rows cut are the smallest changes); `cut` says whether any was.
gate::attribution storable_attribution(const gate::attribution& a, bool& cut)
{
    gate::attribution out = a;
    constexpr std::size_t rows = service::max_attribution_functions;
    const auto trim = [&](std::vector<gate::function_change>& top) {
        if (top.size() <= rows) return;
        top.resize(rows);
        cut = true;
    };
    if (out.callgrind) trim(out.callgrind->top);
    if (out.perf) trim(out.perf->top);
    if (out.errors.size() > rows) {
        out.errors.resize(rows);
        cut = true;
    }
    return out;
}

// The comparison's attributions (and, locally, its flame graphs) go to its
// store: the server's (whose dashboard page then shows them) or the local
// one. Failures are warnings: the verdict is already made.
std::vector<std::string> store_attributions(target& where, const gate::report& result,
                                            const std::optional<profile_options>& profiling)
{
    std::vector<std::string> warnings;
    if (!result.comparison_id) return warnings;
    // Most runs have none: then no store is opened (about 1 ms of every run).
    if (std::none_of(result.benchmarks.begin(), result.benchmarks.end(),
                     [](const gate::benchmark_report& b) { return b.attribution_info.has_value(); }))
        return warnings;
    std::optional<store::store> db;
    std::optional<service::service> svc;
    try {
        if (!where.server) svc.emplace(db.emplace(where.db));
    } catch (const error& e) {
        warnings.push_back(fmt::format("the attributions were not stored: {}", e.what()));
        return warnings;
    }
    for (const auto& b : result.benchmarks) {
        if (!b.attribution_info) continue;
        bool cut = false;
        const gate::attribution a = storable_attribution(*b.attribution_info, cut);
        if (cut) {
            warnings.push_back(fmt::format("the attribution of '{}' is stored with the first {} rows of each table "
                                           "(the report has them all)",
                                           b.name, service::max_attribution_functions));
        }
        try {
            if (where.server) {
                where.server->upload_attribution(*result.comparison_id, b.name, a);
            } else {
                svc->artifacts().store_attribution(where.project, *result.comparison_id, b.name,
                                                   report::to_json(a).dump(-1, ' ', false,
                                                                           nlohmann::json::error_handler_t::replace));
                if (profiling && a.perf && a.perf->flame_graph) {
                    const auto path = profiling->artifacts / *a.perf->flame_graph;
                    svc->artifacts().store_flame_graph(where.project, *result.comparison_id, b.name,
                                                       model::read_text_file(path));
                }
            }
        } catch (const error& e) {
            warnings.push_back(fmt::format("the attribution of '{}' was not stored with comparison {}: {}", b.name,
                                           *result.comparison_id, e.what()));
        }
    }
    return warnings;
}

std::string environment_json(const measure_options& opt)
{
    env_options eo = default_env_options();
    if (!opt.cpus.empty()) eo.cpus = opt.cpus;
    eo.will_disable_aslr = !opt.keep_aslr;
    // The first execution probes the events anyway (measure.cpp); a second
    // perf run here would only cost time.
    eo.probe_perf = false;
    return to_json(check_environment(eo)).dump();
}

// Sequential sampling with a store to read: this testbed's history of each
// benchmark's gated counters (gate/prior_noise.hpp), for the plan's first
// look and an early warning. Reading history never stops a run: a store or
// server that cannot answer is a warning, and the plan stays the rule's.
std::vector<gate::prior_noise> read_priors(target& where, const std::vector<benchmark_spec>& benchmarks,
                                           const measure_options& opt, const gate::policy& rules,
                                           const model::testbed_info& testbed, std::vector<std::string>& warnings)
{
    if (opt.which != backend::perf && opt.which != backend::native) return {};
    if (!where.server && !std::filesystem::exists(where.db)) return {}; // nothing measured here yet
    std::vector<std::string> events = opt.events;
    if (events.empty()) events.assign(std::begin(default_perf_events), std::end(default_perf_events));
    std::vector<std::pair<const benchmark_spec*, std::string>> gated;
    for (const auto& spec : benchmarks) {
        for (const auto& e : events) {
            if (rules.resolve(spec.name, e).gated) gated.emplace_back(&spec, e);
        }
    }
    if (gated.empty()) return {};
    std::vector<gate::prior_noise> priors;
    try {
        std::optional<store::store> db;
        std::optional<service::service> svc;
        if (!where.server) svc.emplace(db.emplace(where.db));
        for (const auto& [spec, counter] : gated) {
            model::history_query q;
            q.project = where.project;
            q.benchmark = spec->name;
            q.counter = counter;
            q.testbed = testbed.fingerprint;
            q.mainline_only = true;
            q.limit = gate::prior_history_runs;
            const auto points = where.server ? where.server->history(q) : svc->history().points(q);
            const auto rule = rules.resolve(spec->name, counter);
            const double alpha = rules.alpha / static_cast<double>(gated.size()); // Bonferroni, as the test spends it
            if (auto p = gate::prior_noise_of(spec->name, counter, points, rule.threshold_pct, alpha))
                priors.push_back(*p);
        }
    } catch (const error& e) {
        warnings.push_back(fmt::format("cannot read this testbed's history to plan the looks ({}); using the rule's "
                                       "first look",
                                       e.what()));
        return {};
    }
    return priors;
}

void fill_identity(model::run_record& run, const std::string& project, const git_info& git,
                   const model::testbed_info& testbed, const std::string& environment, runner::mainline_side line)
{
    run.project = project;
    const bool base = run.role == "baseline";
    // The baseline measured its own build: its commit is known from
    // --base-sha or the event, or not at all (empty, docs/history.md). The
    // candidate's commit would be a lie for the push example's parent build.
    run.git_sha = base ? git.base_sha : git.sha;
    run.branch = base && !git.base_branch.empty() ? git.base_branch : git.branch;
    run.pr = git.pr;
    run.mainline = line == (base ? runner::mainline_side::baseline : runner::mainline_side::candidate);
    run.testbed = testbed;
    run.environment_json = environment;
}

// The id of one perfgate run's measurement session, stored on every run it
// measures: a pair of runs with the same session was measured interleaved
// (docs/statistics.md "Runs not measured interleaved"). 128 bits from the OS
// (std::random_device reads getrandom on Linux), as hex.
std::string new_session_id()
{
    std::random_device os;
    std::string id;
    for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", static_cast<std::uint32_t>(os()));
    return id;
}

run_settings settings_from(const parsed_args& args)
{
    run_settings settings = parse_run_settings(args);
    setup_sequential(args, settings);
    return settings;
}

target run_target(const parsed_args& args) { return target_from(args, local_default_rules()); }

// What phases 3 and 4 find out before anything is measured; the later
// phases read it. The run's settings (phases 1 and 2, which phases 5a and 5
// adjust) and its target (the store or the server) are kept apart: they are
// what the phases change or talk to.
struct run_inputs {
    explicit run_inputs(const parsed_args& a) : args(a) {}

    const parsed_args& args;
    bool quiet = false;                   // -q: no progress, no warning lines
    std::optional<github_options> github; // phase 3
    git_info git;                         // phase 4
    // Phase 4: which run feeds its branch's series.
    runner::mainline_side mainline = runner::mainline_side::none;
    std::optional<profile_options> profiling;
    model::testbed_info testbed;
    std::string environment;
    // --baseline-source server: where the baselines come from (phase 5a).
    bool reuse_asked = false;
    // Per benchmark spec: the toolchain keys of its baseline and candidate
    // (--toolchain, else the executables'); nullopt: unknown.
    std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> toolchains;
};

// Every benchmark's stored baseline, by benchmark, when all were found (then
// only the candidates are measured); empty otherwise.
using reused_baselines = std::map<std::string, model::reusable_run, std::less<>>;

void warn(const run_inputs& in, const std::string& w)
{
    if (!in.quiet) print_error(fmt::format("perfgate run: warning: {}\n", w));
}

// --baseline-dir: the baseline build's checkout must be the baseline's
// commit, so that the report and the history name what was measured.
void check_baseline_dir(const parsed_args& args, const git_info& git)
{
    const auto dir = args.get("baseline-dir");
    if (!dir) return;
    if (git.base_sha.empty()) {
        run_usage_error(errors::usage_missing_option,
                        "--baseline-dir: the baseline's commit is unknown (no pull request event, --base-sha or "
                        "--baseline-ref)");
    }
    const std::string at = checked_out_sha(*dir);
    if (at != git.base_sha) {
        throw error(errors::input_git,
                    fmt::format("--baseline-dir {} is at commit {}, but the baseline is {}{}: check that commit out "
                                "and build it (docs/github.md#the-baseline)",
                                *dir, at, git.base_sha,
                                git.baseline ? fmt::format(" (baseline-ref {})", git.baseline->rule) : std::string()));
    }
}

// Phase 4, the baseline's commit (docs/github.md#the-baseline): on a pull
// request event, or with --baseline-ref, the rule names the commit the
// baseline build must be. --base-sha then names the build and must agree;
// --baseline-dir's checkout must be that commit. Refused before measuring.
void apply_baseline_rule(const parsed_args& args, git_info& git)
{
    const auto given = args.get("baseline-ref");
    if (!given && !git.pr) {
        check_baseline_dir(args, git);
        return;
    }
    const auto rule = parse_baseline_rule(given.value_or("merge-base"));
    if (!rule) {
        run_usage_error(errors::usage_bad_value,
                        fmt::format("--baseline-ref '{}': expected merge-base, base-tip or parent", *given));
    }
    const std::filesystem::path repo = args.get("repo").value_or(".");
    // The base branch's tip: the event's, else --base-branch's in repo.
    std::string tip = git.pr_base_sha;
    if (tip.empty() && *rule != baseline_rule::parent) {
        if (git.base_branch.empty()) {
            run_usage_error(errors::usage_missing_option,
                            fmt::format("--baseline-ref {} outside a pull request needs --base-branch",
                                        to_string(*rule)));
        }
        tip = resolve_ref(repo, git.base_branch);
    }
    const std::string sha = resolve_baseline_sha(*rule, git.sha, tip, repo);
    if (args.has("base-sha") && git.base_sha != sha) {
        throw error(errors::input_git, fmt::format("--base-sha {} is not the baseline that --baseline-ref {} names "
                                                   "({}): build and name that commit, or choose the rule",
                                                   git.base_sha, to_string(*rule), sha));
    }
    git.base_sha = sha;
    git.baseline = gate::baseline_choice{std::string(to_string(*rule)), sha, tip, git.sha};
    check_baseline_dir(args, git);
}

// Phase 4: the commit, branch and pull request of the run.
git_info resolve_run_git(const parsed_args& args, const target& where)
{
    git_info git = resolve_git_info(git_overrides_from(args), process_env(), std::filesystem::current_path());
    // The server files every run under a commit and a branch (its history
    // queries are per branch): say so now rather than after measuring.
    if (where.server && (git.sha.empty() || git.branch.empty())) {
        run_usage_error(errors::usage_missing_option,
                        fmt::format("--server needs the run's commit and branch ({}{}): run inside a git checkout or "
                                    "a GitHub Actions job, or pass --sha and --branch",
                                    git.sha.empty() ? "no commit found" : "commit " + git.sha,
                                    git.branch.empty() ? ", no branch found" : ", branch " + git.branch));
    }
    apply_baseline_rule(args, git);
    if (args.has("mainline") && args.has("no-mainline"))
        run_usage_error(errors::usage_conflict, "--mainline and --no-mainline exclude each other");
    if (args.has("mainline") && git.pr) {
        run_usage_error(errors::usage_conflict,
                        fmt::format("--mainline: the runs of pull request {} never feed a branch's series "
                                    "(docs/history.md#which-runs-feed-the-series)",
                                    *git.pr));
    }
    // A commit the store would refuse is said now, not after measuring.
    if (!git.sha.empty()) capture::validate_name("git_sha (--sha)", git.sha);
    if (!git.base_sha.empty()) capture::validate_name("git_sha (--base-sha)", git.base_sha);
    return git;
}

// Phase 1b: --baseline-source, --check-reuse and --toolchain, usage errors
// only (docs/github.md#reusing-the-baseline). True for "server".
bool baseline_source_from(const parsed_args& args, const run_settings& s, const target& where)
{
    if (auto t = args.get("toolchain")) {
        if (t->empty() || t->size() > max_toolchain_bytes) {
            run_usage_error(errors::usage_bad_value, fmt::format("--toolchain: expected 1 to {} bytes of text, got {}",
                                                                 max_toolchain_bytes, t->size()));
        }
        if (std::any_of(t->begin(), t->end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
            run_usage_error(errors::usage_bad_value, "--toolchain: control characters are not allowed");
    }
    const std::string source = args.get("baseline-source").value_or("measure");
    if (source != "measure" && source != "server") {
        run_usage_error(errors::usage_bad_value,
                        fmt::format("--baseline-source: expected measure or server, got '{}'", source));
    }
    if (source == "measure") {
        if (args.has("check-reuse"))
            run_usage_error(errors::usage_conflict, "--check-reuse needs --baseline-source server");
        return false;
    }
    if (!where.server) {
        run_usage_error(errors::usage_missing_option,
                        "--baseline-source server needs --server: the stored baselines are the server's");
    }
    // A noisy backend's baseline is only comparable when measured in the
    // same run, interleaved with the candidate (docs/statistics.md): reusing
    // one would trade the gate's design for a build. Refused rather than
    // silently measured, so that the workflow's intent is never misread.
    if (s.measure.which != backend::callgrind && s.measure.which != backend::memcheck) {
        run_usage_error(errors::usage_conflict,
                        fmt::format("--baseline-source server needs a deterministic backend (--backend callgrind or "
                                    "memcheck), not {}: a noisy backend's baseline is measured interleaved with the "
                                    "candidate; cache its build instead (docs/github.md#noisy-backends-cache-the-"
                                    "baseline-build)",
                                    to_string(s.measure.which)));
    }
    if (args.has("profile")) {
        run_usage_error(errors::usage_conflict,
                        "--profile executes the baseline build too: it needs --baseline-source measure");
    }
    return true;
}

// The toolchain keys of each benchmark's two commands: --toolchain, else
// each executable's own (runner/toolchain.hpp).
std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> toolchains_of(
    const parsed_args& args, const std::vector<benchmark_spec>& benchmarks)
{
    std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>> out;
    const auto given = args.get("toolchain");
    for (const auto& spec : benchmarks) {
        if (given) out.emplace_back(*given, *given);
        else
            out.emplace_back(toolchain_key(spec.baseline.argv, spec.cwd), toolchain_key(spec.candidate.argv, spec.cwd));
    }
    return out;
}

// Whether a stored run counts what this run measures: callgrind with and
// without --cache-sim count different counters.
bool same_counters(const model::reusable_run& r, const measure_options& opt)
{
    if (opt.which != backend::callgrind) return true;
    const bool simulated = std::find(r.counters.begin(), r.counters.end(), "estimated-cycles") != r.counters.end();
    return simulated == opt.cache_sim;
}

// Phase 4b, --server only: one cheap authenticated request, so that a bad
// token (exit 2) or a server that cannot be reached (exit 4) is said before
// minutes of measuring rather than after them.
void check_server(target& where)
{
    if (!where.server) return;
    try {
        where.server->check_access();
    } catch (const error& e) {
        throw error(e.id(), fmt::format("perfgate run: nothing measured: the server was checked first: {}", e.what()));
    }
}

// Phase 5a (--baseline-source server): every benchmark's stored baseline,
// the newest run of exactly the baseline commit on the base branch with this
// benchmark, testbed fingerprint, backend and the candidate's toolchain key
// (store::runs::find_reusable). All found: only the candidates are measured.
// Any missing: the baselines are measured as without the option, and stored,
// so that the next run of that commit finds them. A server that cannot
// answer stops the run before anything is measured.
reused_baselines find_stored_baselines(const run_inputs& in, target& where, run_settings& settings)
{
    if (!in.reuse_asked) return {};
    const auto measured = [&](const std::string& why) {
        if (!in.quiet)
            print_error(fmt::format("perfgate run: --baseline-source server: {}: the baseline is measured\n", why));
        return reused_baselines{};
    };
    const auto& s = settings;
    if (std::any_of(s.benchmarks.begin(), s.benchmarks.end(),
                    [](const benchmark_spec& b) { return !b.harness.empty(); }))
        return measured("a --harness suite names its benchmarks only when it runs");
    if (in.git.base_sha.empty())
        return measured("the baseline's commit is unknown (no pull request event, --base-sha or --baseline-ref)");
    reused_baselines found;
    for (std::size_t i = 0; i < s.benchmarks.size(); ++i) {
        const auto& spec = s.benchmarks[i];
        const auto& key = in.toolchains[i].second;
        if (!key) {
            return measured(fmt::format("benchmark '{}' has no toolchain key (its candidate command is not an ELF "
                                        "executable with a .comment section, or runs through /bin/sh); name one with "
                                        "--toolchain",
                                        spec.name));
        }
        model::reusable_run_query q{where.project,
                                    spec.name,
                                    in.git.base_sha,
                                    in.git.base_branch,
                                    in.testbed.fingerprint,
                                    std::string(to_string(s.measure.which)),
                                    *key};
        std::optional<model::reusable_run> stored;
        try {
            stored = where.server->reusable_run(q);
        } catch (const error& e) {
            throw error(e.id(),
                        fmt::format("perfgate run: nothing measured: looking up the stored baseline of '{}': {}",
                                    spec.name, e.what()));
        }
        if (!stored) {
            return measured(fmt::format("no stored run of commit {} for benchmark '{}' on this testbed with toolchain "
                                        "'{}'",
                                        in.git.base_sha.substr(0, 12), spec.name, *key));
        }
        if (!same_counters(*stored, s.measure)) {
            return measured(fmt::format("stored run {} of '{}' was measured {} --cache-sim", stored->run_id, spec.name,
                                        s.measure.cache_sim ? "without" : "with"));
        }
        found.emplace(spec.name, std::move(*stored));
    }
    std::string ids;
    for (const auto& [name, r] : found) ids += (ids.empty() ? "" : ", ") + std::to_string(r.run_id);
    if (!in.quiet) {
        print_error(fmt::format("perfgate run: baseline reused from run{} {} (commit {}){}\n",
                                found.size() == 1 ? "" : "s", ids, in.git.base_sha.substr(0, 12),
                                in.args.has("check-reuse") ? "" : ": measuring the candidate only"));
    }
    settings.measure.candidate_only = true;
    return found;
}

// Phase 5, sequential sampling only: this testbed's history may move the
// first look (only when neither the command line nor the policy set it)
// and warn early. The warnings so far are said now, and returned.
std::vector<std::string> plan_from_priors(const run_inputs& in, target& where, run_settings& s)
{
    std::vector<std::string> warnings;
    if (!s.measure.sequential) return warnings;
    const auto priors = read_priors(where, s.benchmarks, s.measure, *s.rules, in.testbed, warnings);
    if (!priors.empty() && !in.args.has("min-repetitions") && !s.policy_sequential) {
        const auto planned = gate::rule_from_priors(*s.rules->sequential, priors);
        if (planned.min_repetitions != s.rules->sequential->min_repetitions && !in.quiet) {
            print_error(fmt::format("perfgate: first look after {} rounds, from this testbed's noise history ({} "
                                    "counter(s), up to {} runs each)\n",
                                    planned.min_repetitions, priors.size(), gate::prior_history_runs));
        }
        s.rules->sequential = planned;
        s.measure.sequential->min_repetitions = static_cast<int>(planned.min_repetitions);
        s.measure.sequential->decided = stop_rule(*s.rules, s.benchmarks);
    }
    for (auto& w : gate::prior_warnings(priors, *s.rules->sequential)) warnings.push_back(std::move(w));
    for (auto& w : warnings) warn(in, w);
    return warnings;
}

// Phase 6: measures every benchmark, says the new warnings and files each
// run under its project, commit and testbed. callgrind's output files
// outlive the measurement (in `profiles`) until the verdict says which
// benchmarks need an attribution.
// The new warnings join `warnings` (the run's, said so far).
std::vector<benchmark_measurement> measure_benchmarks(const run_inputs& in, const std::string& project,
                                                      run_settings& settings, std::vector<std::string>& warnings,
                                                      std::optional<temp_dir>& profiles)
{
    auto& opt = settings.measure;
    const std::size_t early_warnings = warnings.size();
    if (opt.which == backend::callgrind || opt.which == backend::memcheck) {
        profiles.emplace("perfgate-profiles");
        opt.keep_profiles = profiles->path();
    }
    kill_children_on_interrupt();
    std::vector<benchmark_measurement> results = measure(settings.benchmarks, opt, std::cerr);

    for (auto& m : results) {
        for (auto* s : {&m.baseline, &m.candidate}) {
            for (auto& w : s->warnings) {
                if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
            }
        }
    }
    for (std::size_t i = early_warnings; i < warnings.size(); ++i) warn(in, warnings[i]);
    for (auto& m : results) {
        fill_identity(m.baseline.run, project, in.git, in.testbed, in.environment, in.mainline);
        fill_identity(m.candidate.run, project, in.git, in.testbed, in.environment, in.mainline);
        // A harness's benchmarks take their suite's keys (one binary per side).
        const auto& specs = settings.benchmarks;
        auto it = std::find_if(specs.begin(), specs.end(), [&](const benchmark_spec& b) { return b.name == m.name; });
        if (it == specs.end())
            it = std::find_if(specs.begin(), specs.end(), [](const benchmark_spec& b) { return !b.harness.empty(); });
        if (it == specs.end()) continue;
        const auto& keys = in.toolchains[static_cast<std::size_t>(it - specs.begin())];
        m.baseline.run.toolchain = keys.first.value_or("");
        m.candidate.run.toolchain = keys.second.value_or("");
    }
    const std::string session = new_session_id();
    for (auto& m : results) m.baseline.run.session = m.candidate.run.session = session;
    return results;
}

// A --harness gbench suite timed by google/benchmark (not callgrind).
bool gbench_times(const run_settings& s)
{
    return s.measure.which != backend::callgrind &&
           std::any_of(s.benchmarks.begin(), s.benchmarks.end(),
                       [](const benchmark_spec& b) { return !b.harness.empty(); });
}

// The policy of the comparison: --policy's, with google/benchmark's times
// gated as gate_gbench_times says for a suite's benchmarks.
std::optional<gate::policy> compare_rules(const run_settings& s, const std::vector<benchmark_measurement>& results)
{
    if (!gbench_times(s)) return s.rules;
    gate::policy rules = s.rules.value_or(gate::policy{});
    std::vector<std::string> names;
    names.reserve(results.size());
    for (const auto& m : results) names.push_back(m.name);
    gate_gbench_times(rules, names);
    return rules;
}

// What phase 7 makes: the report, the benchmarks measured on both sides
// (the others are in the report), and the server's page of the comparison
// when it stored one.
struct comparison_made {
    gate::report report;
    std::vector<benchmark_measurement> paired;
    std::optional<std::string> url;
};

// Phase 7: stores both runs of each benchmark (the server or the local
// store) and compares them; the report starts with the run's warnings.
comparison_made store_and_compare(target& where, const run_settings& settings,
                                  std::vector<benchmark_measurement> results, const reused_baselines& reused,
                                  const std::vector<std::string>& warnings, const git_info& git)
{
    comparison_made out;
    // A harness's benchmark on one side only, or failed on a side, has no
    // pair to compare: listed in the report after the comparison.
    std::vector<benchmark_measurement> unpaired;
    std::erase_if(results, [&](benchmark_measurement& m) {
        const bool reused_here = reused.contains(m.name);
        const bool whole = m.baseline.error.empty() && m.candidate.error.empty() &&
                           (reused_here || !m.baseline.run.counters.empty()) && !m.candidate.run.counters.empty();
        if (!whole) unpaired.push_back(std::move(m));
        return !whole;
    });
    if (results.empty()) {
        throw error(errors::measure_failed,
                    "no benchmark ran on both sides: nothing to compare (check --filter and the binaries)");
    }
    const auto rules = compare_rules(settings, results);
    api::run_pairs pairs;
    if (where.server) {
        for (auto& m : results) {
            // A reused baseline is the stored run (find_stored_baselines): only
            // the candidate is new. The baseline is stored first, in its own
            // statement: a function's arguments are evaluated in no fixed
            // order (gcc: last first), and the history orders runs stored in
            // one second by id.
            const auto found = reused.find(m.name);
            const std::int64_t base = found != reused.end()
                                          ? found->second.run_id
                                          : where.server->upload(runner::ingest_request_of(m.baseline.run)).run_id;
            const std::int64_t candidate = where.server->upload(runner::ingest_request_of(m.candidate.run)).run_id;
            pairs.emplace_back(base, candidate);
        }
        out.report = where.server->compare(pairs, rules, git.baseline);
        for (const auto& m : results) {
            if (const auto r = reused.find(m.name); r != reused.end())
                out.report.reused.push_back({m.name, r->second.run_id, r->second.git_sha, r->second.created_at});
        }
        if (out.report.comparison_id) {
            // The dashboard's page of this comparison (server/pages): stderr,
            // so that stdout stays the report in the chosen format.
            out.url = where.server->comparison_url(*out.report.comparison_id);
        }
    } else {
        if (!store::is_postgres(where.db.string()) && where.db.has_parent_path()) {
            std::filesystem::create_directories(where.db.parent_path());
        }
        store::store db(where.db);
        service::service svc(db);
        for (auto& m : results) {
            auto b = svc.runs().ingest_run(m.baseline.run);
            auto c = svc.runs().ingest_run(m.candidate.run);
            pairs.emplace_back(b.run_id, c.run_id);
        }
        out.report =
            svc.comparisons().compare(where.project, pairs, rules.value_or(gate::policy{}), git.baseline).result;
    }
    // The gate lists them as compare() lists a pair of files' (their
    // warnings after the run's own).
    for (const auto& m : unpaired) {
        const auto outcome = [](const side_samples& s) {
            return gate::side_outcome{!s.error.empty() || !s.run.counters.empty(), s.error};
        };
        gate::add_unpaired(out.report, m.name, outcome(m.baseline), outcome(m.candidate));
    }
    out.report.warnings.insert(out.report.warnings.begin(), warnings.begin(), warnings.end());
    // perf, native and rusage all read google/benchmark's own times here.
    if (gbench_times(settings) && out.report.measured) out.report.measured->backend = "gbench";
    out.paired = std::move(results);
    return out;
}

// Phase 8 (--profile): after the verdict's rounds and comparison,
// profiling adds to the report; its failures are warnings
// (runner/profile_run.hpp).
void profile_benchmarks(const run_inputs& in, target& where, const run_settings& settings, gate::report& result)
{
    if (!in.profiling) return;
    for (auto& w : attach_profiles(result, settings.benchmarks, settings.measure, *in.profiling, std::cerr, in.quiet)) {
        warn(in, w);
        result.warnings.push_back(std::move(w));
    }
    if (where.server && result.comparison_id) {
        for (auto& w : upload_flame_graphs(*where.server, result, *in.profiling)) {
            warn(in, w);
            result.warnings.push_back(std::move(w));
        }
    }
}

// Phase 9: where each regression came from: after the verdict, which it
// never changes, and stored with the comparison (callgrind's and
// --profile's); failures are warning lines and the report's attribution
// errors.
void attribute(const run_inputs& in, target& where, const run_settings& settings,
               const std::vector<benchmark_measurement>& results, const reused_baselines& reused, gate::report& result,
               const attribution_options& attribution)
{
    // A reused baseline was not profiled here: its regressions have no
    // per-function attribution (said once, in the report).
    std::vector<benchmark_measurement> profiled;
    for (const auto& m : results) {
        if (!reused.contains(m.name)) {
            profiled.push_back(m);
            continue;
        }
        const auto b = std::find_if(result.benchmarks.begin(), result.benchmarks.end(),
                                    [&](const gate::benchmark_report& r) { return r.name == m.name; });
        if (b != result.benchmarks.end() && b->result == gate::verdict::fail) {
            std::string w = fmt::format("benchmark '{}': no per-function attribution: its baseline was reused, not "
                                        "profiled here (--baseline-source measure profiles both sides)",
                                        m.name);
            warn(in, w);
            result.warnings.push_back(std::move(w));
        }
    }
    auto warnings = attribute_regressions(result, profiled, attribution);
    if (settings.measure.artifacts) {
        auto more = write_artifacts(result, profiled, *settings.measure.artifacts);
        warnings.insert(warnings.end(), more.begin(), more.end());
    }
    for (auto& w : store_attributions(where, result, in.profiling)) warnings.push_back(std::move(w));
    for (auto& w : warnings) warn(in, w);
}

// Phase 10: the report (stdout and --output), the comparison's page, the
// exit code, and GitHub. Publishing never changes the verdict: GitHub
// failures come back as warnings (github/github.hpp). Workflow commands go
// to stdout, where the Actions runner reads them.
int publish(const run_inputs& in, const run_settings& settings, const gate::report& result,
            const std::optional<std::string>& comparison_url)
{
    emit_report(result, settings.format, in.args.get("output"), {});
    if (comparison_url && !comparison_url->empty()) {
        print_error(fmt::format("perfgate run: comparison {}: {}\n", *result.comparison_id, *comparison_url));
    }
    const int code = verdict_exit_code(result.result, in.args.has("fail-on-inconclusive"));
    if (in.github) {
        github_options github = *in.github;
        if (comparison_url) github.comparison_url = *comparison_url;
        const github_result res = publish_to_github(result, code, github, std::cout);
        if (!res.warnings.empty()) {
            print_error(fmt::format("perfgate run: {} GitHub warning(s); the verdict stands: {}\n", res.warnings.size(),
                                    gate::to_string(result.result)));
        }
    }
    return code;
}

// Phases 3 and 4, in this order: GitHub's options, the kernel's perf hooks
// (on while git and the checks run, runner/perf_event.hpp), the baseline's
// source, git, the server check, the testbed, the environment and the
// toolchain keys. --baseline-source may adjust the settings.
run_inputs inputs_of(const parsed_args& args, run_settings& settings, target& where)
{
    run_inputs in(args);
    in.quiet = args.has("quiet");
    in.github = github_options_from(args);
    if (settings.measure.which == backend::native) keep_perf_hooks_on(settings.measure.events);
    in.reuse_asked = baseline_source_from(args, settings, where);
    in.git = resolve_run_git(args, where);
    in.mainline = runner::mainline_side_of(in.git, args.has("mainline")      ? std::optional(true)
                                                   : args.has("no-mainline") ? std::optional(false)
                                                                             : std::nullopt);
    check_server(where);
    in.profiling = profile_options_from(args);
    in.testbed = detect_testbed(args.get("testbed"));
    in.environment = environment_json(settings.measure);
    in.toolchains = toolchains_of(args, settings.benchmarks);
    return in;
}

} // namespace

int cmd_run(const argv_t& argv)
{
    const auto parsed = parse_args(run_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    // Phases 1-4 check everything that can be a usage error before measuring.
    run_settings settings = settings_from(args); // phases 1 and 2
    target where = run_target(args);
    const run_inputs in = inputs_of(args, settings, where);
    const reused_baselines reused = find_stored_baselines(in, where, settings);
    if (args.has("check-reuse")) {
        std::cout << (reused.empty() ? "measure" : "reuse") << '\n';
        return exit_pass;
    }

    std::vector<std::string> warnings = plan_from_priors(in, where, settings);
    const attribution_options attribution = attribution_options_from(args);
    std::optional<temp_dir> profiles;
    auto results = measure_benchmarks(in, where.project, settings, warnings, profiles);
    comparison_made made = store_and_compare(where, settings, std::move(results), reused, warnings, in.git);
    profile_benchmarks(in, where, settings, made.report);
    attribute(in, where, settings, made.paired, reused, made.report, attribution);
    // Phase 10a: what the testbed's qualification says (advice, after the verdict).
    if (const std::string w = add_qualification(where, in.testbed.fingerprint, made.report); !w.empty()) warn(in, w);
    return publish(in, settings, made.report, made.url);
}

} // namespace perfgate::cli
