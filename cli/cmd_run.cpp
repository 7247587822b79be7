// perfgate run: measure baseline and candidate commands, store the runs
// (locally in SQLite or on a perfgate server), gate them and print the verdict.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/compare.hpp"
#include "capture/names.hpp"
#include "capture/samples.hpp"
#include "gate/policy.hpp"
#include "gate/prior_noise.hpp"
#include "gate/report.hpp"
#include "service/service.hpp"
#include "runner/check_env.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "runner/config.hpp"
#include "runner/git_info.hpp"
#include "github/github.hpp"
#include "runner/attribution.hpp"
#include "runner/measure.hpp"
#include "cli/output.hpp"
#include "cli/target.hpp"
#include "runner/process.hpp"
#include "runner/profile_run.hpp"
#include "runner/testbed.hpp"
#include "store/store.hpp"
#include "report/render.hpp"
#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::cli {

using namespace perfgate::runner;
using github::github_options;
using github::github_result;
using github::is_comment_mode;
using github::publish_to_github;

namespace {

// Repetitions per side when not given (issue text; min_samples 5 and the
// optimum of 9 in gate/policy.hpp make 10 the smallest round number that is
// not warned about).
constexpr int default_repetitions = 10;
constexpr const char* default_db = ".perfgate/perfgate.db";
constexpr const char* local_project = "default";
// --top: a table of more rows than this is no summary any more.
constexpr long long max_top_functions = 1000;

std::vector<option_spec> run_option_list()
{
    // --help and the man page list the options under these headings, in this order.
    std::vector<option_spec> options;
    auto add = [&](std::vector<option_spec> group) { options.insert(options.end(), group.begin(), group.end()); };
    add(option_group("Benchmarks", {
    {"config", 'c', true, false, "FILE", "JSON list of benchmarks (name, baseline, candidate, cwd, env, repetitions)", {}, {"name", "baseline", "candidate"}},
    {"name", 0, true, false, "NAME", "benchmark name with --baseline/--candidate (default: \"default\")"},
    {"baseline", 0, true, false, "CMD", "baseline command (run via /bin/sh -c only if it uses shell syntax)"},
    {"candidate", 0, true, false, "CMD", "candidate command"},
    }));
    add(option_group("Measurement", {
    {"repetitions", 'r', true, false, "N", "measured executions per side (default 10; 1 with --backend callgrind)"},
    {"warmup", 0, true, false, "N", "discarded executions per side before measuring (default 1; 0 with callgrind)"},
    {"backend", 0, true, false, "NAME", "perf (default), native (the same counters opened by perfgate with "
                                        "perf_event_open: no perf process per execution), callgrind (deterministic, "
                                        "no PMU needed) or rusage"},
    {"events", 'e', true, false, "EVENTS", "perf events, comma-separated (default: the supported ones of cycles, "
                                           "instructions, branch-misses, cache-misses, task-clock, page-faults, plus duration_time)"},
    {"split-events", 0, false, false, "", "measure multiplexed events in groups across executions"},
    {"cache-sim", 0, false, false, "", "callgrind: also simulate the caches (counters cache-misses and "
                                       "estimated-cycles = Ir + 10 L1 misses + 100 LL misses)"},
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
    {"format", 0, true, false, "FORMAT", "text (default), json or markdown"},
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
    {"base-branch", 0, true, false, "BRANCH", "branch of the baseline build (default: the PR's base, else --branch)"},
    {"pr", 0, true, false, "N", "pull request number (default: from GITHUB_EVENT_PATH)"},
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
    }));
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

[[noreturn]] void usage_error(std::string_view id, const std::string& message)
{
    throw error(std::string(id), "perfgate run: " + message);
}

std::vector<benchmark_spec> benchmarks_from(const parsed_args& args)
{
    if (args.has("config")) return load_config(*args.get("config"));
    if (!args.has("baseline") || !args.has("candidate")) {
        usage_error("usage.missing_option", "give --baseline CMD and --candidate CMD, or --config FILE (see --help)");
    }
    benchmark_spec spec;
    spec.name = args.get("name").value_or("default");
    // The store takes only plain names (gate/names.hpp): refuse before measuring.
    try {
        capture::validate_name("name", spec.name);
    } catch (const error& e) {
        std::string_view why = e.what();
        if (why.starts_with("field 'name': ")) why.remove_prefix(std::string_view("field 'name': ").size());
        usage_error("usage.bad_value", fmt::format("--name: {}", why));
    }
    auto command_of = [&](const char* option) {
        try {
            return runner::parse_command(*args.get(option));
        } catch (const error& e) {
            usage_error(e.id(), fmt::format("--{}: {}", option, e.what()));
        }
    };
    spec.baseline = command_of("baseline");
    spec.candidate = command_of("candidate");
    return {spec};
}

measure_options options_from(const parsed_args& args)
{
    measure_options opt;
    if (auto b = args.get("backend")) {
        auto parsed = parse_backend(*b);
        if (!parsed) usage_error("usage.bad_value", fmt::format("--backend: expected perf, native, callgrind or rusage, got '{}'", *b));
        opt.which = *parsed;
    }
    // Callgrind counts are deterministic: one execution per side decides
    // (docs/statistics.md "Deterministic counters"), and there is no cache or
    // frequency state for a warmup to settle.
    const bool deterministic = opt.which == backend::callgrind;
    opt.repetitions = static_cast<int>(args.get_int("repetitions", 1, 100000).value_or(deterministic ? 1 : default_repetitions));
    opt.warmup = static_cast<int>(args.get_int("warmup", 0, 1000).value_or(deterministic ? 0 : 1));
    if (auto e = args.get("events")) {
        if (opt.which != backend::perf && opt.which != backend::native) {
            usage_error("usage.conflict", "-e/--events applies to --backend perf and native only");
        }
        std::string_view rest = *e;
        while (!rest.empty()) {
            auto comma = rest.find(',');
            auto ev = rest.substr(0, comma);
            if (ev.empty()) usage_error("usage.bad_value", fmt::format("-e '{}': empty event name", *e));
            opt.events.emplace_back(ev);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    if (auto c = args.get("cpus")) opt.cpus = parse_cpu_list(*c);
    opt.keep_aslr = args.has("keep-aslr");
    if (auto o = args.get("order")) {
        auto parsed = parse_run_order(*o);
        if (!parsed) usage_error("usage.bad_value", fmt::format("--order: expected alternate, random or blocked, got '{}'", *o));
        opt.order = *parsed;
    }
    if (args.has("seed") && opt.order != run_order::random) usage_error("usage.conflict", "--seed applies to --order random only");
    opt.seed = static_cast<std::uint64_t>(args.get_int("seed", 0, std::numeric_limits<long long>::max()).value_or(0));
    if (auto t = args.get_double("timeout")) {
        if (!(*t > 0) || *t > 86400 * 7) usage_error("usage.bad_value", fmt::format("--timeout: expected seconds > 0, got {}", *t));
        opt.timeout = std::chrono::milliseconds(static_cast<long long>(*t * 1000.0));
    }
    opt.split_events = args.has("split-events");
    opt.cache_sim = args.has("cache-sim");
    if (opt.cache_sim && opt.which != backend::callgrind) usage_error("usage.conflict", "--cache-sim needs --backend callgrind");
    if (auto dir = args.get("artifacts")) {
        if (dir->empty()) usage_error("usage.bad_value", "--artifacts: expected a directory");
        opt.artifacts = *dir;
    }
    if (args.has("quiet")) {
        opt.progress = progress_style::none;
    } else {
        opt.progress = ::isatty(STDERR_FILENO) == 1 ? progress_style::tty : progress_style::plain;
    }
    return opt;
}

// --profile and its options; nullopt without --profile.
std::optional<profile_options> profile_options_from(const parsed_args& args)
{
    if (!args.has("profile")) {
        if (args.has("profile-executions") || args.has("profile-max-mb")) {
            usage_error("usage.conflict", "--profile-executions and --profile-max-mb apply to --profile only");
        }
        return std::nullopt;
    }
    profile_options p;
    p.executions = static_cast<int>(args.get_int("profile-executions", 1, 1000).value_or(default_profile_executions));
    if (auto mb = args.get_int("profile-max-mb", 1, 1024 * 1024)) p.max_script_bytes = static_cast<std::uint64_t>(*mb) << 20;
    if (auto dir = args.get("artifacts")) p.artifacts = *dir;   // --artifacts DIR
    if (auto top = args.get_int("top", 1, 1000)) p.top = static_cast<std::size_t>(*top);   // --top N
    return p;
}

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
            warnings.push_back(fmt::format("the flame graph of '{}' was not stored on the server ({} stays): {}", b.name,
                                           path.string(), e.what()));
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

// Sequential sampling (--budget, --max-repetitions, or a policy with a
// "sequential" section): the rule, with the command line's sizes over the
// policy's. nullopt: fixed repetitions.
std::optional<gate::sequential_rule> sequential_rule_from(const parsed_args& args, const std::optional<gate::policy>& rules,
                                                          const measure_options& opt)
{
    const bool asked = args.has("budget") || args.has("max-repetitions") || args.has("min-repetitions");
    if (!asked && !(rules && rules->sequential)) return std::nullopt;
    if (args.has("repetitions")) {
        usage_error("usage.conflict", "-r/--repetitions is a fixed count; --budget, --max-repetitions and "
                                      "--min-repetitions (or the policy's \"sequential\") sample sequentially");
    }
    if (opt.which == backend::callgrind) {
        usage_error("usage.conflict", "callgrind's counts are deterministic: one repetition decides; --budget and "
                                      "--max-repetitions are for noisy backends (perf, native, rusage)");
    }
    gate::sequential_rule rule = rules && rules->sequential ? *rules->sequential : gate::sequential_rule{};
    const auto cap = static_cast<long long>(gate::max_sequential_repetitions);
    if (auto n = args.get_int("min-repetitions", 2, cap)) rule.min_repetitions = static_cast<std::size_t>(*n);
    if (auto n = args.get_int("max-repetitions", 2, cap)) rule.max_repetitions = static_cast<std::size_t>(*n);
    if (rule.max_repetitions < rule.min_repetitions) {
        usage_error("usage.bad_value", fmt::format("--max-repetitions {} is below --min-repetitions {}",
                                                   rule.max_repetitions, rule.min_repetitions));
    }
    // Reuse the policy's own checks (number of looks) on the result.
    try {
        gate::policy p;
        p.sequential = rule;
        (void)gate::parse_policy(report::to_json(p), "--budget/--max-repetitions");
    } catch (const error& e) {
        usage_error("usage.bad_value", e.what());
    }
    return rule;
}

// The stop rule of sequential sampling: after each look, is every gated
// counter of this benchmark decided? The Bonferroni m of the whole gate is
// estimated from the benchmarks measured so far, the others assumed to
// have this one's gated counters; the report's compare counts them again
// on the final samples (gate/sequential.hpp says why the verdict is the
// same whoever computes it).
std::function<bool(const benchmark_measurement&, bool)> stop_rule(const gate::policy& rules,
                                                                  const std::vector<benchmark_spec>& benchmarks)
{
    auto gated = std::make_shared<std::map<std::string, std::size_t>>();
    return [rules, gated, names = benchmarks](const benchmark_measurement& m, bool) {
        capture::sample_set b, c;
        b.benchmarks.push_back(capture::samples_from_run(m.baseline.run));
        c.benchmarks.push_back(capture::samples_from_run(m.candidate.run));
        auto family_of = [&](std::size_t here) {
            (*gated)[m.name] = here;
            std::size_t family = 0;
            bool after = false;
            for (const auto& spec : names) {
                if (spec.name == m.name) after = true;
                family += after ? here : gated->count(spec.name) ? gated->at(spec.name) : here;
            }
            return family;
        };
        return gate::sequential_check(b, c, rules, family_of).decided;
    };
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
    if (!where.server && !std::filesystem::exists(where.db)) return {};   // nothing measured here yet
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
            q.role = "baseline";
            q.limit = gate::prior_history_runs;
            const auto points = where.server ? where.server->history(q) : svc->history(q);
            const auto rule = rules.resolve(spec->name, counter);
            const double alpha = rules.alpha / static_cast<double>(gated.size());   // Bonferroni, as the test spends it
            if (auto p = gate::prior_noise_of(spec->name, counter, points, rule.threshold_pct, alpha)) priors.push_back(*p);
        }
    } catch (const error& e) {
        warnings.push_back(fmt::format("cannot read this testbed's history to plan the looks ({}); using the rule's "
                                       "first look", e.what()));
        return {};
    }
    return priors;
}

void fill_identity(model::run_record& run, const std::string& project, const git_info& git,
                   const model::testbed_info& testbed, const std::string& environment)
{
    run.project = project;
    const bool base = run.role == "baseline";
    run.git_sha = base && !git.base_sha.empty() ? git.base_sha : git.sha;
    run.branch = base && !git.base_branch.empty() ? git.base_branch : git.branch;
    run.pr = git.pr;
    run.testbed = testbed;
    run.environment_json = environment;
}

} // namespace

int cmd_run(const argv_t& argv)
{
    const auto parsed = parse_args(run_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    if (!args.positional().empty()) {
        usage_error("usage.unexpected_argument", fmt::format("unexpected argument '{}' (quote commands; see --help)",
                                                             args.positional().front()));
    }

    // Everything that can be a usage error is checked before measuring.
    const auto benchmarks = benchmarks_from(args);
    measure_options opt = options_from(args);
    const report_format format = parse_format(args.get("format").value_or("text"));
    std::optional<gate::policy> rules =
        args.get("policy") ? std::optional(gate::load_policy(*args.get("policy"))) : std::nullopt;
    const bool policy_sequential = rules && rules->sequential;
    if (auto rule = sequential_rule_from(args, rules, opt)) {
        if (!rules) rules.emplace();
        rules->sequential = rule;
        opt.sequential.emplace();
        opt.sequential->min_repetitions = static_cast<int>(rule->min_repetitions);
        opt.sequential->block = static_cast<int>(rule->block);
        opt.sequential->max_repetitions = static_cast<int>(rule->max_repetitions);
        if (auto b = args.get_double("budget")) {
            if (!(*b > 0) || *b > 86400 * 7) usage_error("usage.bad_value", fmt::format("--budget: expected seconds > 0, got {}", *b));
            opt.sequential->budget = std::chrono::duration<double>(*b);
        }
        opt.sequential->decided = stop_rule(*rules, benchmarks);
    }
    target_rules where_rules;
    where_rules.require_choice = false;
    where_rules.default_db = default_db;
    where_rules.default_local_project = local_project;
    target where = target_from(args, where_rules);
    std::optional<github_options> github;
    if (args.has("github")) {
        github.emplace();
        github->comment = args.get("comment").value_or("always");
        if (!is_comment_mode(github->comment)) {
            usage_error("usage.bad_value", fmt::format("--comment: expected always, on-change, on-regression or "
                                                       "never, got '{}'", github->comment));
        }
        github->context = args.get("context").value_or("perfgate");
        github->fail_on_inconclusive = args.has("fail-on-inconclusive");
        if (auto out = args.get("output")) github->report_path = *out;
        github->comment_author = args.get("comment-author");
    } else if (args.has("comment") || args.has("context") || args.has("comment-author")) {
        usage_error("usage.conflict", "--comment, --context and --comment-author apply to --github only");
    }
    git_overrides flags;
    flags.sha = args.get("sha");
    flags.branch = args.get("branch");
    flags.base_branch = args.get("base-branch");
    if (auto pr = args.get_int("pr", 1, std::numeric_limits<int>::max())) flags.pr = *pr;

    const git_info git = resolve_git_info(flags, process_env(), std::filesystem::current_path());
    // The server files every run under a commit and a branch (its history
    // queries are per branch): say so now rather than after measuring.
    if (where.server && (git.sha.empty() || git.branch.empty())) {
        usage_error("usage.missing_option",
                    fmt::format("--server needs the run's commit and branch ({}{}): run inside a git checkout or a "
                                "GitHub Actions job, or pass --sha and --branch",
                                git.sha.empty() ? "no commit found" : "commit " + git.sha,
                                git.branch.empty() ? ", no branch found" : ", branch " + git.branch));
    }
    const auto profiling = profile_options_from(args);
    const model::testbed_info testbed = detect_testbed(args.get("testbed"));
    const std::string environment = environment_json(opt);

    std::vector<std::string> warnings;
    if (opt.sequential) {
        const auto priors = read_priors(where, benchmarks, opt, *rules, testbed, warnings);
        // The first look moves only when neither the command line nor the
        // policy set it.
        if (!priors.empty() && !args.has("min-repetitions") && !policy_sequential) {
            const auto planned = gate::rule_from_priors(*rules->sequential, priors);
            if (planned.min_repetitions != rules->sequential->min_repetitions && !args.has("quiet")) {
                print_error(fmt::format("perfgate: first look after {} rounds, from this testbed's noise history ({} "
                                        "counter(s), up to {} runs each)\n",
                                        planned.min_repetitions, priors.size(), gate::prior_history_runs));
            }
            rules->sequential = planned;
            opt.sequential->min_repetitions = static_cast<int>(planned.min_repetitions);
            opt.sequential->decided = stop_rule(*rules, benchmarks);
        }
        for (auto& w : gate::prior_warnings(priors, *rules->sequential)) warnings.push_back(std::move(w));
        if (!args.has("quiet")) {
            for (auto& w : warnings) print_error(fmt::format("perfgate run: warning: {}\n", w));
        }
    }
    const std::size_t early_warnings = warnings.size();
    attribution_options attribution_opt;
    attribution_opt.top = static_cast<std::size_t>(
        args.get_int("top", 1, max_top_functions).value_or(static_cast<long long>(profile::default_top_functions)));
    // callgrind's output files outlive the measurement until the verdict
    // says which benchmarks need an attribution.
    std::optional<temp_dir> profiles;
    if (opt.which == backend::callgrind) {
        profiles.emplace("perfgate-profiles");
        opt.keep_profiles = profiles->path();
    }

    kill_children_on_interrupt();
    auto results = measure(benchmarks, opt, std::cerr);

    for (auto& m : results) {
        for (auto* s : {&m.baseline, &m.candidate}) {
            for (auto& w : s->warnings) {
                if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
            }
        }
    }
    if (!args.has("quiet")) {
        for (std::size_t i = early_warnings; i < warnings.size(); ++i) {
            print_error(fmt::format("perfgate run: warning: {}\n", warnings[i]));
        }
    }

    const std::string& project = where.project;
    for (auto& m : results) {
        fill_identity(m.baseline.run, project, git, testbed, environment);
        fill_identity(m.candidate.run, project, git, testbed, environment);
    }

    gate::report result;
    api::run_pairs pairs;
    std::string comparison_url;
    if (where.server) {
        for (auto& m : results) {
            pairs.emplace_back(where.server->upload(runner::ingest_request_of(m.baseline.run)).run_id,
                               where.server->upload(runner::ingest_request_of(m.candidate.run)).run_id);
        }
        result = where.server->compare(pairs, rules);
        if (result.comparison_id) {
            // The dashboard's page of this comparison (server/pages): stderr,
            // so that stdout stays the report in the chosen format.
            comparison_url = where.server->comparison_url(*result.comparison_id);
            if (github) github->comparison_url = comparison_url;
        }
    } else {
        if (!store::is_postgres(where.db.string()) && where.db.has_parent_path()) {
            std::filesystem::create_directories(where.db.parent_path());
        }
        store::store db(where.db);
        service::service svc(db);
        for (auto& m : results) {
            auto b = svc.ingest_run(m.baseline.run);
            auto c = svc.ingest_run(m.candidate.run);
            pairs.emplace_back(b.run_id, c.run_id);
        }
        result = svc.compare(project, pairs, rules.value_or(gate::policy{})).result;
    }
    result.warnings.insert(result.warnings.begin(), warnings.begin(), warnings.end());
    if (profiling) {
        // After the verdict's rounds and comparison: profiling adds to the
        // report, its failures are warnings (runner/profile_run.hpp).
        for (auto& w : attach_profiles(result, benchmarks, opt, *profiling, std::cerr, args.has("quiet"))) {
            if (!args.has("quiet")) print_error(fmt::format("perfgate run: warning: {}\n", w));
            result.warnings.push_back(std::move(w));
        }
        if (where.server && result.comparison_id) {
            for (auto& w : upload_flame_graphs(*where.server, result, *profiling)) {
                if (!args.has("quiet")) print_error(fmt::format("perfgate run: warning: {}\n", w));
                result.warnings.push_back(std::move(w));
            }
        }
    }

    // Where each regression came from: after the verdict, which it never
    // changes; failures are warning lines and the report's attribution errors.
    auto attribution_warnings = attribute_regressions(result, results, attribution_opt);
    if (opt.artifacts) {
        auto more = write_artifacts(result, results, *opt.artifacts);
        attribution_warnings.insert(attribution_warnings.end(), more.begin(), more.end());
    }
    if (!args.has("quiet")) {
        for (auto& w : attribution_warnings) print_error(fmt::format("perfgate run: warning: {}\n", w));
    }

    emit_report(result, format, args.get("output"), {});
    if (!comparison_url.empty()) print_error(fmt::format("perfgate run: comparison {}: {}\n", *result.comparison_id, comparison_url));
    const int code = verdict_exit_code(result.result, args.has("fail-on-inconclusive"));
    if (github) {
        // Publishing never changes the verdict: GitHub failures come back as
        // warnings (github/github.hpp). Workflow commands go to stdout, where
        // the Actions runner reads them.
        const github_result res = publish_to_github(result, code, *github, std::cout);
        if (!res.warnings.empty()) {
            print_error(fmt::format("perfgate run: {} GitHub warning(s); the verdict stands: {}\n", res.warnings.size(),
                       gate::to_string(result.result)));
        }
    }
    return code;
}

} // namespace perfgate::cli
