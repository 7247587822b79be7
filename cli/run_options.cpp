// The phases of `perfgate run` that read the command line (cli/run_phases.hpp).
#include "cli/run_phases.hpp"

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "capture/names.hpp"
#include "capture/samples.hpp"
#include "gate/compare.hpp"
#include "model/error.hpp"
#include "runner/check_env.hpp"
#include "runner/config.hpp"
#include "runner/process.hpp"

namespace perfgate::cli {

using namespace perfgate::runner;

namespace {

// Repetitions per side when not given (issue text; min_samples 5 and the
// optimum of 9 in gate/policy.hpp make 10 the smallest round number that is
// not warned about).
constexpr int default_repetitions = 10;
// --top: a table of more rows than this is no summary any more.
constexpr long long max_top_functions = 1000;

[[noreturn]] void usage_error(error_id id, const std::string& message) { run_usage_error(id, message); }

// --env, --baseline-env or --candidate-env: each K=V, in the order given
// (a variable given twice: the later value wins, as in the config file).
std::vector<std::pair<std::string, std::string>> variables_of(const parsed_args& args, const char* option)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : args.all(option)) {
        const auto eq = kv.find('=');
        const bool control = std::any_of(kv.begin(), kv.end(),
                                         [](char c) { return static_cast<unsigned char>(c) < 0x20; });
        if (eq == std::string::npos || eq == 0 || control) {
            usage_error(errors::usage_bad_value,
                        fmt::format("--{}: expected NAME=VALUE (a name without '=' or control characters), got '{}'",
                                    option, kv));
        }
        out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return out;
}

// --config FILE, or one benchmark from --name/--baseline/--candidate.
run_config config_from(const parsed_args& args)
{
    if (args.has("config")) {
        if (args.has("harness") || args.has("filter")) {
            usage_error(errors::usage_conflict,
                        "--harness and --filter go with --baseline/--candidate; in a config file, give each "
                        "benchmark its \"harness\" and \"filter\"");
        }
        return load_config(*args.get("config"));
    }
    if (!args.has("baseline") || !args.has("candidate")) {
        usage_error(errors::usage_missing_option,
                    "give --baseline CMD and --candidate CMD, or --config FILE (see --help)");
    }
    benchmark_spec spec;
    spec.name = args.get("name").value_or("default");
    // The store takes only plain names (capture/names.hpp): refuse before measuring.
    try {
        capture::validate_name("name", spec.name);
    } catch (const error& e) {
        std::string_view why = e.what();
        if (why.starts_with("field 'name': ")) why.remove_prefix(std::string_view("field 'name': ").size());
        usage_error(errors::usage_bad_value, fmt::format("--name: {}", why));
    }
    auto command_of = [&](const char* option) {
        try {
            return runner::parse_command(*args.get(option));
        } catch (const error& e) {
            throw error(e.id(), fmt::format("perfgate run: --{}: {}", option, e.what()));
        }
    };
    spec.baseline = command_of("baseline");
    spec.candidate = command_of("candidate");
    if (auto h = args.get("harness")) {
        if (*h != "gbench")
            usage_error(errors::usage_bad_value, fmt::format("--harness: expected gbench, got '{}'", *h));
        spec.harness = *h;
    }
    if (auto f = args.get("filter")) {
        if (spec.harness.empty()) usage_error(errors::usage_conflict, "--filter applies to --harness gbench only");
        spec.filter = *f;
    }
    if (auto dir = args.get("cwd")) {
        std::error_code ec;
        if (dir->empty() || !std::filesystem::is_directory(*dir, ec))
            usage_error(errors::usage_bad_value, fmt::format("--cwd: '{}' is not a directory", *dir));
        spec.cwd = *dir;
    }
    spec.env = variables_of(args, "env");
    spec.baseline_env = variables_of(args, "baseline-env");
    spec.candidate_env = variables_of(args, "candidate-env");
    run_config config;
    config.benchmarks.push_back(std::move(spec));
    return config;
}

// The command line's options over the config file's "backend" and
// "suppressions".
measure_options options_from(const parsed_args& args, const run_config& config)
{
    measure_options opt;
    for (const auto& name : args.all("pass-env")) {
        if (name.empty() || name.find('=') != std::string::npos)
            usage_error(errors::usage_bad_value,
                        fmt::format("--pass-env: expected a variable's NAME, got '{}'", name.substr(0, 64)));
        opt.pass_env.push_back(name);
    }
    if (config.which) opt.which = *config.which;
    if (auto b = args.get("backend")) {
        auto parsed = parse_backend(*b);
        if (!parsed)
            usage_error(errors::usage_bad_value,
                        fmt::format("--backend: expected perf, native, callgrind, rusage or memcheck, got '{}'", *b));
        opt.which = *parsed;
    }
    // Callgrind's and memcheck's counts are deterministic: one execution per
    // side decides (docs/statistics.md "Deterministic counters"), and there is
    // no cache or frequency state for a warmup to settle.
    const bool deterministic = opt.which == backend::callgrind || opt.which == backend::memcheck;
    opt.repetitions = static_cast<int>(
        args.get_int("repetitions", 1, 100000).value_or(deterministic ? 1 : default_repetitions));
    opt.warmup = static_cast<int>(args.get_int("warmup", 0, 1000).value_or(deterministic ? 0 : 1));
    if (auto e = args.get("events")) {
        if (opt.which != backend::perf && opt.which != backend::native) {
            usage_error(errors::usage_conflict, "-e/--events applies to --backend perf and native only");
        }
        std::string_view rest = *e;
        while (!rest.empty()) {
            auto comma = rest.find(',');
            auto ev = rest.substr(0, comma);
            if (ev.empty()) usage_error(errors::usage_bad_value, fmt::format("-e '{}': empty event name", *e));
            opt.events.emplace_back(ev);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    if (auto c = args.get("cpus")) opt.cpus = parse_cpu_list(*c);
    opt.keep_aslr = args.has("keep-aslr");
    if (auto o = args.get("order")) {
        auto parsed = parse_run_order(*o);
        if (!parsed)
            usage_error(errors::usage_bad_value,
                        fmt::format("--order: expected alternate, random or blocked, got '{}'", *o));
        opt.order = *parsed;
    }
    if (args.has("seed") && opt.order != run_order::random)
        usage_error(errors::usage_conflict, "--seed applies to --order random only");
    opt.seed = static_cast<std::uint64_t>(args.get_int("seed", 0, std::numeric_limits<long long>::max()).value_or(0));
    if (auto t = args.get_double("timeout")) {
        if (!(*t > 0) || *t > 86400 * 7)
            usage_error(errors::usage_bad_value, fmt::format("--timeout: expected seconds > 0, got {}", *t));
        opt.timeout = std::chrono::milliseconds(static_cast<long long>(*t * 1000.0));
    }
    opt.split_events = args.has("split-events");
    opt.cache_sim = args.has("cache-sim");
    if (opt.cache_sim && opt.which != backend::callgrind)
        usage_error(errors::usage_conflict, "--cache-sim needs --backend callgrind");
    if (!config.suppressions.empty() && opt.which != backend::memcheck) {
        usage_error(errors::usage_conflict, fmt::format("--backend {}: the config file's \"suppressions\" need "
                                                        "the memcheck backend",
                                                        *args.get("backend")));
    }
    opt.suppressions = config.suppressions;
    for (auto& s : args.all("suppressions")) {
        if (opt.which != backend::memcheck)
            usage_error(errors::usage_conflict, "--suppressions needs --backend memcheck");
        if (!std::filesystem::is_regular_file(s))
            usage_error(errors::usage_bad_value, fmt::format("--suppressions: '{}' is not a readable file", s));
        // valgrind is started in the benchmark's cwd: an absolute path.
        opt.suppressions.push_back(std::filesystem::absolute(s));
    }
    if (auto dir = args.get("artifacts")) {
        if (dir->empty()) usage_error(errors::usage_bad_value, "--artifacts: expected a directory");
        opt.artifacts = *dir;
    }
    if (args.has("quiet")) {
        opt.progress = progress_style::none;
    } else {
        opt.progress = ::isatty(STDERR_FILENO) == 1 ? progress_style::tty : progress_style::plain;
    }
    return opt;
}

// Sequential sampling (--budget, --max-repetitions, or a policy with a
// "sequential" section): the rule, with the command line's sizes over the
// policy's. nullopt: fixed repetitions.
std::optional<gate::sequential_rule> sequential_rule_from(const parsed_args& args,
                                                          const std::optional<gate::policy>& rules,
                                                          const measure_options& opt)
{
    const bool asked = args.has("budget") || args.has("max-repetitions") || args.has("min-repetitions");
    if (!asked && !(rules && rules->sequential)) return std::nullopt;
    if (args.has("repetitions")) {
        usage_error(errors::usage_conflict, "-r/--repetitions is a fixed count; --budget, --max-repetitions and "
                                            "--min-repetitions (or the policy's \"sequential\") sample sequentially");
    }
    if (opt.which == backend::callgrind || opt.which == backend::memcheck) {
        usage_error(errors::usage_conflict,
                    "callgrind's and memcheck's counts are deterministic: one repetition decides; --budget and "
                    "--max-repetitions are for noisy backends (perf, native, rusage)");
    }
    gate::sequential_rule rule = rules && rules->sequential ? *rules->sequential : gate::sequential_rule{};
    const auto cap = static_cast<long long>(gate::max_sequential_repetitions);
    if (auto n = args.get_int("min-repetitions", 2, cap)) rule.min_repetitions = static_cast<std::size_t>(*n);
    if (auto n = args.get_int("max-repetitions", 2, cap)) rule.max_repetitions = static_cast<std::size_t>(*n);
    if (rule.max_repetitions < rule.min_repetitions) {
        usage_error(errors::usage_bad_value, fmt::format("--max-repetitions {} is below --min-repetitions {}",
                                                         rule.max_repetitions, rule.min_repetitions));
    }
    // Reuse the policy's own checks (number of looks) on the result.
    try {
        gate::policy p;
        p.sequential = rule;
        (void)gate::parse_policy(gate::to_json(p), "--budget/--max-repetitions");
    } catch (const error& e) {
        usage_error(errors::usage_bad_value, e.what());
    }
    return rule;
}


} // namespace

void run_usage_error(error_id id, const std::string& message) { throw error(id, "perfgate run: " + message); }

run_settings parse_run_settings(const parsed_args& args)
{
    if (!args.positional().empty()) {
        usage_error(errors::usage_unexpected_argument,
                    fmt::format("unexpected argument '{}' (quote commands; see --help)", args.positional().front()));
    }
    // Everything that can be a usage error is checked before measuring.
    run_settings s;
    auto config = config_from(args);
    s.measure = options_from(args, config);
    s.benchmarks = std::move(config.benchmarks);
    const bool harness = std::any_of(s.benchmarks.begin(), s.benchmarks.end(),
                                     [](const benchmark_spec& b) { return !b.harness.empty(); });
    if (harness && (args.has("profile") || args.has("events") || args.has("split-events"))) {
        usage_error(errors::usage_conflict,
                    "--profile, -e/--events and --split-events measure whole processes; a --harness gbench suite "
                    "is measured by google/benchmark's own timers (or callgrind per benchmark)");
    }
    s.format = parse_format(args.get("format").value_or("text"));
    if (auto file = args.get("policy")) s.rules = gate::load_policy(*file);
    s.policy_sequential = s.rules && s.rules->sequential;
    return s;
}

void setup_sequential(const parsed_args& args, run_settings& s)
{
    auto rule = sequential_rule_from(args, s.rules, s.measure);
    if (!rule) return;
    if (!s.rules) s.rules.emplace();
    s.rules->sequential = rule;
    auto& seq = s.measure.sequential.emplace();
    seq.min_repetitions = static_cast<int>(rule->min_repetitions);
    seq.block = static_cast<int>(rule->block);
    seq.max_repetitions = static_cast<int>(rule->max_repetitions);
    if (auto b = args.get_double("budget")) {
        if (!(*b > 0) || *b > 86400 * 7)
            usage_error(errors::usage_bad_value, fmt::format("--budget: expected seconds > 0, got {}", *b));
        seq.budget = std::chrono::duration<double>(*b);
    }
    seq.decided = stop_rule(*s.rules, s.benchmarks);
}

// The stop rule of sequential sampling: after each look, is every gated
// counter of each benchmark looked at decided? The Bonferroni m of the
// whole gate is estimated from the benchmarks measured so far (a suite's
// undecided ones and those decided at earlier looks), the benchmark specs
// not measured yet assumed to have this one's gated counters; the report's
// compare counts them again on the final samples (gate/sequential.hpp says
// why the verdict is the same whoever computes it).
std::function<std::vector<bool>(std::string_view, const std::vector<runner::benchmark_measurement>&, bool)> stop_rule(
    const gate::policy& rules, const std::vector<benchmark_spec>& benchmarks)
{
    auto gated = std::make_shared<std::map<std::string, std::size_t, std::less<>>>();
    return [rules, gated, specs = benchmarks](std::string_view spec, const std::vector<benchmark_measurement>& group,
                                              bool) {
        const auto here = std::find_if(specs.begin(), specs.end(),
                                       [&](const benchmark_spec& s) { return s.name == spec; });
        const std::size_t specs_after = here == specs.end() ? 0 : static_cast<std::size_t>(specs.end() - here - 1);
        const bool suite = here != specs.end() && !here->harness.empty();
        std::vector<std::pair<capture::sample_set, capture::sample_set>> sets;
        std::vector<gate::policy> policies;
        for (const auto& m : group) {
            auto& [b, c] = sets.emplace_back();
            b.benchmarks.push_back(capture::samples_from_run(m.baseline.run));
            c.benchmarks.push_back(capture::samples_from_run(m.candidate.run));
            gate::policy& p = policies.emplace_back(rules);
            if (suite && m.baseline.run.backend != "callgrind") gate_gbench_times(p, {m.name});
            (*gated)[m.name] = gate::sequential_check(b, c, p).gated;
        }
        std::size_t known = 0;
        for (const auto& [name, n] : *gated) known += n;
        std::vector<bool> decided;
        for (std::size_t i = 0; i < group.size(); ++i) {
            const auto family_of = [&](std::size_t m) { return known + specs_after * m; };
            decided.push_back(gate::sequential_check(sets[i].first, sets[i].second, policies[i], family_of).decided);
        }
        return decided;
    };
}

void gate_gbench_times(gate::policy& rules, const std::vector<std::string>& benchmarks)
{
    // What the policy says, before anything is added.
    const auto said = [&](std::string_view bench, std::string_view counter) {
        if (auto it = rules.counters.find(counter); it != rules.counters.end() && it->second.gate) return true;
        const auto b = rules.benchmarks.find(bench);
        if (b == rules.benchmarks.end()) return false;
        const auto it = b->second.counters.find(counter);
        return it != b->second.counters.end() && it->second.gate.has_value();
    };
    std::vector<std::string> declared; // UseRealTime() or UseManualTime(), not overruled by the policy
    for (const auto& name : benchmarks) {
        // They append these to the name (the manual time is written as real_time).
        if (!name.ends_with("/real_time") && !name.ends_with("/manual_time")) continue;
        if (!said(name, "real_time") || !said(name, "cpu_time")) declared.push_back(name);
    }
    for (const auto& name : declared) {
        auto& counters = rules.benchmarks[name].counters;
        if (!said(name, "real_time")) counters["real_time"].gate = true;
        if (!said(name, "cpu_time")) counters["cpu_time"].gate = false;
    }
    // real_time of every other benchmark: reported, not gated, unless the
    // policy says; cpu_time gates by default (capture/counters.cpp).
    if (auto& rt = rules.counters["real_time"]; !rt.gate) rt.gate = false;
}

std::optional<github::github_options> github_options_from(const parsed_args& args)
{
    if (!args.has("github")) {
        if (args.has("comment") || args.has("context") || args.has("comment-author")) {
            usage_error(errors::usage_conflict, "--comment, --context and --comment-author apply to --github only");
        }
        return std::nullopt;
    }
    github::github_options github;
    github.comment = args.get("comment").value_or("always");
    if (!github::is_comment_mode(github.comment)) {
        usage_error(errors::usage_bad_value, fmt::format("--comment: expected always, on-change, on-regression or "
                                                         "never, got '{}'",
                                                         github.comment));
    }
    github.context = args.get("context").value_or("perfgate");
    github.fail_on_inconclusive = args.has("fail-on-inconclusive");
    if (auto out = args.get("output")) github.report_path = *out;
    github.comment_author = args.get("comment-author");
    return github;
}

git_overrides git_overrides_from(const parsed_args& args)
{
    git_overrides flags;
    flags.sha = args.get("sha");
    flags.branch = args.get("branch");
    flags.base_sha = args.get("base-sha");
    flags.base_branch = args.get("base-branch");
    if (auto pr = args.get_int("pr", 1, std::numeric_limits<int>::max())) flags.pr = *pr;
    return flags;
}

std::optional<profile_options> profile_options_from(const parsed_args& args)
{
    if (!args.has("profile")) {
        if (args.has("profile-executions") || args.has("profile-max-mb")) {
            usage_error(errors::usage_conflict, "--profile-executions and --profile-max-mb apply to --profile only");
        }
        return std::nullopt;
    }
    profile_options p;
    p.executions = static_cast<int>(args.get_int("profile-executions", 1, 1000).value_or(default_profile_executions));
    if (auto mb = args.get_int("profile-max-mb", 1, 1024 * 1024))
        p.max_script_bytes = static_cast<std::uint64_t>(*mb) << 20;
    if (auto dir = args.get("artifacts")) p.artifacts = *dir;                            // --artifacts DIR
    if (auto top = args.get_int("top", 1, 1000)) p.top = static_cast<std::size_t>(*top); // --top N
    return p;
}

attribution_options attribution_options_from(const parsed_args& args)
{
    attribution_options opt;
    opt.top = static_cast<std::size_t>(
        args.get_int("top", 1, max_top_functions).value_or(static_cast<long long>(profile::default_top_functions)));
    return opt;
}

} // namespace perfgate::cli
