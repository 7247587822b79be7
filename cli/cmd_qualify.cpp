// perfgate qualify: what a gate on this machine catches and how often it
// cries wolf, for one benchmark (docs/cli.md#perfgate-qualify, the method
// in docs/statistics.md#qualification). Runs the benchmark against itself
// (A/A gates) and against itself with injected work of known sizes (A/B
// gates), through perfgate run's own measurement and comparison.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "api/wire.hpp"
#include "capture/samples.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/qualify_report.hpp"
#include "cli/run_phases.hpp"
#include "cli/target.hpp"
#include "gate/compare.hpp"
#include "gate/qualify.hpp"
#include "model/error.hpp"
#include "runner/measure.hpp"
#include "runner/process.hpp"
#include "runner/spin.hpp"
#include "runner/testbed.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

using namespace perfgate::runner;

namespace {

// Defaults (issue 46): a few minutes, the sizes and one more step
// for runners that see nothing below 10%, and 20 gates per point: 20 of 20
// caught gives a Wilson interval of [84%, 100%], enough to call 80%.
constexpr double default_time_budget_s = 300;
constexpr std::string_view default_slowdowns = "1,2,5,10,20";
constexpr long long default_gates = 20;
// The calibration gate sizes its injected work at about the benchmark's own
// cost: a 2x difference that no runner's noise hides (issue 46: "3x-safe").
constexpr double calibration_fraction = 1.0;
// Calibration gates tried, each with 4 times the injected work of the last.
constexpr int max_calibrations = 3;
// --slowdowns: at most this many sizes, each at most this many percent.
constexpr std::size_t max_slowdowns = 20;
constexpr double max_slowdown_pct = 1000;

// perfgate run's options that mean the same here, in its order and groups.
std::vector<option_spec> qualify_option_list()
{
    static const std::vector<std::string_view> shared = {"config",  "name",      "baseline",        "cwd",
                                                         "env",     "pass-env",  "repetitions",     "warmup",
                                                         "backend", "events",    "split-events",    "cache-sim",
                                                         "cpus",    "keep-aslr", "order",           "seed",
                                                         "timeout", "budget",    "max-repetitions", "min-repetitions",
                                                         "policy",  "format",    "output",          "quiet",
                                                         "testbed"};
    std::vector<option_spec> options;
    for (const auto& o : run_spec().options) {
        if (std::find(shared.begin(), shared.end(), o.name) == shared.end()) continue;
        option_spec copy = o;
        if (copy.name == "config") {
            copy.help = "JSON list of benchmarks as perfgate run takes it; qualify measures the one benchmark's "
                        "\"baseline\" command (the candidate is not used)";
            copy.excludes = {"name", "baseline", "cwd", "env"};
        }
        if (copy.name == "baseline")
            copy.help = "the benchmark command (run via /bin/sh -c only if it uses shell syntax)";
        if (copy.name == "format") copy.help = "text (default), json or markdown";
        if (copy.name == "name") copy.help = "the benchmark's name in the report (default: \"default\")";
        if (copy.name == "cwd") copy.help = "run the benchmark in DIR";
        if (copy.name == "env") copy.help = "set variable K to V for the benchmark (repeatable)";
        if (copy.name == "pass-env") copy.help = "let the benchmark inherit NAME although it looks like a credential";
        options.push_back(std::move(copy));
    }
    for (auto& o : option_group("Store and server",
                                target_options("store the qualification in this database (none without --db or "
                                               "--server)",
                                               "project (needed with --server; default \"default\" with --db)"))) {
        options.push_back(std::move(o));
    }
    // clang-format off
    auto own = option_group("Qualification", {
    {"slowdowns", 0, true, false, "LIST", "injected slowdowns in percent of the benchmark's median cost, increasing, "
                                          "comma-separated (default 1,2,5,10,20)"},
    {"gates", 0, true, false, "N", "at most N gates per point (A/A and each slowdown; default 20; 1 with callgrind)"},
    {"time-budget", 0, true, false, "SECONDS", "stop starting gates when the next would end after this (default 300); "
                                               "the report says what was reached"},
    });
    // clang-format on
    options.insert(options.end(), own.begin(), own.end());
    return options;
}

const command_spec qualify_command{
    "qualify",
    "(--baseline CMD | --config FILE) [options]",
    "Runs the benchmark against itself as many gates (A/A) and against itself with\n"
    "injected work of known sizes (--slowdowns), and reports per gated counter the\n"
    "false-fail rate, the smallest slowdown caught in 80% and 95% of gates, and a\n"
    "recommendation. The injected work runs inside the measured process tree\n"
    "(perfgate-exec --spin), calibrated on the gated counter. Exit 0 with the report;\n"
    "2 when the benchmark fails on its own or the time budget is too short for one\n"
    "round of gates; 130 when interrupted (after printing what it has).",
    qualify_option_list(),
};

[[noreturn]] void qualify_error(error_id id, const std::string& message)
{
    throw error(id, message); // main() names the command
}

// perfgate run's phases start their errors with "perfgate run: ", which
// main() says already (as "perfgate qualify: error [...]").
template <class F>
auto as_qualify(F&& f)
{
    try {
        return f();
    } catch (const error& e) {
        std::string_view what = e.what();
        if (what.starts_with("perfgate run: ")) what.remove_prefix(std::string_view("perfgate run: ").size());
        throw error(e.id(), std::string(what));
    }
}

// --slowdowns: increasing positive percentages.
std::vector<double> parse_slowdowns(std::string_view text)
{
    std::vector<double> out;
    std::string_view rest = text;
    while (true) {
        const auto comma = rest.find(',');
        const std::string item(rest.substr(0, comma));
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v) || !(v > 0) ||
            v > max_slowdown_pct) {
            qualify_error(errors::usage_bad_value, fmt::format("--slowdowns '{}': '{}' is not a percentage in (0, {}]",
                                                               text, item, max_slowdown_pct));
        }
        if (!out.empty() && !(v > out.back())) {
            qualify_error(errors::usage_bad_value,
                          fmt::format("--slowdowns '{}': not increasing ({} after {})", text, item, out.back()));
        }
        out.push_back(v);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    if (out.size() > max_slowdowns)
        qualify_error(errors::usage_bad_value, fmt::format("--slowdowns: at most {} sizes", max_slowdowns));
    return out;
}

struct qualify_plan {
    run_settings settings;
    benchmark_spec bench;
    std::vector<double> slowdowns;
    std::size_t max_gates = default_gates;
    double time_budget_s = default_time_budget_s;
    bool deterministic = false;
    bool quiet = false;
    std::filesystem::path helper; // perfgate-exec
};

std::filesystem::path find_helper(const measure_options& opt)
{
    std::vector<std::filesystem::path> candidates;
    if (!opt.exec_helper.empty()) candidates.push_back(opt.exec_helper);
    std::error_code ec;
    if (auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec)
        candidates.push_back(exe.parent_path() / "perfgate-exec");
    if (const char* path = std::getenv("PATH"))
        if (auto p = find_executable("perfgate-exec", path)) candidates.emplace_back(*p);
    for (auto& c : candidates) {
        if (::access(c.c_str(), X_OK) == 0) return c;
    }
    throw error(errors::measure_helper_missing,
                "perfgate-exec (which runs the injected work in the measured process tree) was not "
                "found; install it next to the perfgate executable or in PATH");
}

qualify_plan plan_from(const parsed_args& args)
{
    qualify_plan plan;
    // perfgate run's phases 1 and 2 on the same options; the candidate is
    // the baseline (each gate wraps both, gate_specs).
    parsed_args as_run = args;
    if (args.has("baseline")) as_run.values_["candidate"] = as_run.values_["baseline"];
    plan.settings = as_qualify([&] { return parse_run_settings(as_run); });
    as_qualify([&] {
        setup_sequential(as_run, plan.settings);
        return 0;
    });
    auto& s = plan.settings;
    if (s.format == report_format::junit) qualify_error(errors::usage_bad_value, "--format: text, json or markdown");
    if (s.benchmarks.size() != 1) {
        qualify_error(errors::usage_bad_value,
                      fmt::format("qualifies one benchmark at a time; the config has {}", s.benchmarks.size()));
    }
    if (!s.benchmarks[0].harness.empty())
        qualify_error(errors::usage_conflict, "a --harness suite cannot be qualified: give one benchmark command");
    if (s.measure.which == backend::memcheck) {
        qualify_error(errors::usage_conflict, "--backend memcheck counts heap blocks and leaks, which injected CPU "
                                              "work does not change: qualify perf, native, rusage or callgrind");
    }
    plan.bench = s.benchmarks[0];
    plan.slowdowns = parse_slowdowns(args.get("slowdowns").value_or(std::string(default_slowdowns)));
    plan.deterministic = s.measure.which == backend::callgrind;
    plan.max_gates = static_cast<std::size_t>(
        args.get_int("gates", 1, 10000).value_or(plan.deterministic ? 1 : default_gates));
    if (auto b = args.get_double("time-budget")) {
        if (!(*b > 0) || *b > 86400 * 7)
            qualify_error(errors::usage_bad_value, fmt::format("--time-budget: expected seconds > 0, got {}", *b));
        plan.time_budget_s = *b;
    }
    plan.quiet = args.has("quiet");
    s.measure.progress = progress_style::none; // one line per gate instead (progress())
    plan.helper = find_helper(s.measure);
    return plan;
}

// The benchmark with both sides wrapped in perfgate-exec --spin: the A/A
// side runs the wrapper with 0 iterations, so both pay the same fork.
std::vector<benchmark_spec> gate_specs(const qualify_plan& plan, unsigned long long spin)
{
    benchmark_spec spec = plan.bench;
    auto wrap = [&](unsigned long long n) {
        command c;
        c.argv = {plan.helper.string(), "--spin", std::to_string(n), "--"};
        c.argv.insert(c.argv.end(), plan.bench.baseline.argv.begin(), plan.bench.baseline.argv.end());
        c.text = plan.bench.baseline.text;
        return c;
    };
    spec.baseline = wrap(0);
    spec.candidate = wrap(spin);
    spec.candidate_env = spec.baseline_env;
    return {spec};
}

gate::report run_gate(const qualify_plan& plan, unsigned long long spin)
{
    const auto results = measure(gate_specs(plan, spin), plan.settings.measure, std::cerr);
    capture::sample_set b, c;
    b.benchmarks.push_back(capture::samples_from_run(results.at(0).baseline.run));
    c.benchmarks.push_back(capture::samples_from_run(results.at(0).candidate.run));
    return gate::compare(b, c, plan.settings.rules.value_or(gate::policy{}));
}

const gate::counter_report* find_counter(const gate::report& r, std::string_view name)
{
    if (r.benchmarks.empty()) return nullptr;
    for (const auto& c : r.benchmarks[0].counters) {
        if (c.name == name) return &c;
    }
    return nullptr;
}

// The gated counters the first A/A gate tested, the time-like one first:
// the slowdowns are sized on it (the cost a user feels).
std::vector<std::string> gated_counters(const gate::report& first)
{
    std::vector<std::string> out;
    if (first.benchmarks.empty()) return out;
    for (const auto& c : first.benchmarks[0].counters) {
        if (c.gated && c.state != gate::status::unsupported && c.baseline.median && *c.baseline.median > 0)
            out.push_back(c.name);
    }
    std::stable_partition(out.begin(), out.end(), [](const std::string& n) {
        return n == "task-clock" || n == "cpu-clock" || n == "user-time" || n == "wall-time";
    });
    return out;
}

// This thread's CPU time in ns: unlike a wall clock, not inflated by the
// time the thread waited for a core on a busy machine.
double thread_cpu_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// A first guess of the spin iterations that cost `median` of `counter`
// (the calibration gate then measures the cost): the CPU time of a run of
// the loop in this process, counts at about 5 instructions (4 cycles) per
// iteration of runner/spin.hpp's loop on x86-64.
unsigned long long first_guess(std::string_view unit, double median)
{
    double per_iteration = 5;
    if (unit == "msec" || unit == "ns") {
        constexpr unsigned long long probe = 20'000'000;
        const double t0 = thread_cpu_ns();
        volatile unsigned long long sink = spin(probe);
        (void)sink;
        const double ns = thread_cpu_ns() - t0;
        per_iteration = std::max(ns / probe, 0.01) * (unit == "msec" ? 1e-6 : 1.0);
    }
    return static_cast<unsigned long long>(std::max(1.0, median * calibration_fraction / per_iteration));
}

class qualifier {
public:
    explicit qualifier(qualify_plan plan) : plan_(std::move(plan)), start_(std::chrono::steady_clock::now()) {}

    qualify_result run()
    {
        first_gate();
        calibrate();
        gates();
        return result();
    }

private:
    double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

    void progress(const std::string& line) const
    {
        if (!plan_.quiet)
            print_error(fmt::format("perfgate qualify: {} ({:.0f} s of {:.0f} s)\n", line, elapsed(),
                                    plan_.time_budget_s));
    }

    // One gate, timed; the slowest so far paces the budget.
    gate::report timed_gate(unsigned long long spin)
    {
        const auto t0 = std::chrono::steady_clock::now();
        gate::report r = run_gate(plan_, spin);
        gate_s_ = std::max(gate_s_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return r;
    }

    // The first A/A gate: does the benchmark run, what does it cost, and
    // does one round of gates fit the budget? Usage errors (exit 2) here.
    void first_gate()
    {
        gate::report r;
        try {
            r = timed_gate(0);
        } catch (const error& e) {
            if (interrupted()) throw;
            if (e.id() != errors::measure_failed && e.id() != errors::measure_timeout) throw;
            qualify_error(
                errors::usage_bad_value,
                fmt::format("--baseline: the benchmark '{}' fails on its own, before anything is injected: {}",
                            plan_.bench.name, e.what()));
        }
        counters_ = gated_counters(r);
        if (counters_.empty()) {
            qualify_error(
                errors::usage_bad_value,
                fmt::format("--baseline: the benchmark '{}' has no gated counter with data under --backend {}",
                            plan_.bench.name, to_string(plan_.settings.measure.which)));
        }
        for (const auto& name : counters_) {
            const auto* c = find_counter(r, name);
            calibration_.push_back({name, c->unit, *c->baseline.median, 0});
        }
        // One round: this gate, the calibration gate and one per slowdown.
        const double round = gate_s_ * static_cast<double>(plan_.slowdowns.size() + 2);
        if (round > plan_.time_budget_s) {
            qualify_error(errors::usage_bad_value,
                          fmt::format("--time-budget {} s is too short: one gate of '{}' took {:.2g} s, and one round "
                                      "(an A/A gate, the calibration and one gate per slowdown: {} gates) needs about "
                                      "{:.2g} s",
                                      plan_.time_budget_s, plan_.bench.name, gate_s_, plan_.slowdowns.size() + 2,
                                      round));
        }
        points_.push_back({});
        gate::tally(points_[0], r);
        progress(fmt::format("A/A gate 1: {}", gate::to_string(r.result)));
    }

    // The calibration gate: the spin's cost per iteration on each counter.
    // About the benchmark's own cost is injected; when the gate's noise hides
    // it (a busy machine, few repetitions), 4 and then 16 times as much.
    void calibrate()
    {
        const auto& primary = calibration_[0];
        unsigned long long k = first_guess(primary.unit, primary.median);
        for (int attempt = 0; attempt < max_calibrations; ++attempt) {
            if (attempt > 0) {
                progress(fmt::format("calibration: {} iterations did not raise {}; trying {}", k, primary.counter,
                                     4 * k));
                k *= 4;
            }
            const gate::report r = timed_gate(k);
            for (auto& row : calibration_) {
                const auto* c = find_counter(r, row.counter);
                if (c && c->baseline.median && c->candidate.median)
                    row.per_iteration = (*c->candidate.median - *c->baseline.median) / static_cast<double>(k);
            }
            if (calibration_[0].per_iteration > 0) break;
        }
        if (!(calibration_[0].per_iteration > 0)) {
            qualify_error(errors::usage_bad_value,
                          fmt::format("--baseline: calibration: {} iterations of injected work did not raise {} "
                                      "(median {:.6g} {}): the counter does not count this process tree's work",
                                      k, primary.counter, primary.median, primary.unit));
        }
        for (double s : plan_.slowdowns) {
            gate::qualify_point p;
            p.requested_pct = s;
            p.spin = static_cast<unsigned long long>(std::llround(s / 100 * calibration_[0].median /
                                                                  calibration_[0].per_iteration));
            points_.push_back(std::move(p));
        }
        progress(fmt::format("calibrated on {}: {:.4g}{} per iteration of the injected loop", primary.counter,
                             calibration_[0].per_iteration, primary.unit.empty() ? "" : " " + primary.unit));
    }

    bool point_done(const gate::qualify_point& p) const
    {
        if (p.gates >= plan_.max_gates) return true;
        if (plan_.deterministic || p.gates < gate::qualify_min_gates || p.requested_pct == 0) return false;
        for (const auto& name : counters_) {
            const auto t = p.counters.find(name);
            if (t == p.counters.end()) return false;
            const auto r = gate::rate_of(t->second.regressions, t->second.gates);
            const bool off80 = r.lo >= gate::qualify_power_80 || r.hi < gate::qualify_power_80;
            const bool off95 = r.lo >= gate::qualify_power_95 || r.hi < gate::qualify_power_95;
            if (!off80 || !off95) return false;
        }
        return true;
    }

    // Rounds of one gate per unfinished point, A/A first, until settled,
    // every point has its --gates, the budget is spent or a signal came.
    void gates()
    {
        while (stopped_.empty()) {
            bool any = false;
            for (std::size_t i = 0; i < points_.size() && stopped_.empty(); ++i) {
                auto& p = points_[i];
                const bool others = std::any_of(points_.begin() + 1, points_.end(),
                                                [&](const gate::qualify_point& q) { return !point_done(q); });
                if (point_done(p) && !(i == 0 && others && p.gates < plan_.max_gates)) continue;
                if (elapsed() + gate_s_ > plan_.time_budget_s) {
                    stopped_ = "time budget";
                    break;
                }
                any = true;
                gate::report r;
                try {
                    r = timed_gate(p.spin);
                } catch (const error&) {
                    if (interrupted()) {
                        stopped_ = "interrupted";
                        break;
                    }
                    throw;
                }
                gate::tally(p, r);
                progress(fmt::format("{} gate {}: {}",
                                     p.requested_pct == 0 ? std::string("A/A") : fmt::format("+{}%", p.requested_pct),
                                     p.gates, gate::to_string(r.result)));
                if (interrupted()) stopped_ = "interrupted";
            }
            if (!stopped_.empty()) break;
            if (gate::settled(points_, counters_, plan_.deterministic)) stopped_ = "settled";
            else if (!any) stopped_ = "gates";
        }
    }

    qualify_result result() const
    {
        qualify_result out;
        out.benchmark = plan_.bench.name;
        out.backend = std::string(to_string(plan_.settings.measure.which));
        out.calibrated_on = calibration_[0].counter;
        out.slowdowns = plan_.slowdowns;
        out.calibration = calibration_;
        out.time_budget_s = plan_.time_budget_s;
        out.elapsed_s = elapsed();
        out.stopped = stopped_;
        out.date = iso_time(static_cast<std::int64_t>(std::time(nullptr)));
        for (const auto& p : points_) out.gates += p.gates;
        const gate::policy rules = plan_.settings.rules.value_or(gate::policy{});
        for (std::size_t i = 0; i < counters_.size(); ++i) {
            // Each point's injected share on this counter, from the calibration.
            auto points = points_;
            for (auto& p : points) {
                if (auto t = p.counters.find(counters_[i]); t != p.counters.end()) {
                    t->second.injected_pct = 100.0 * static_cast<double>(p.spin) * calibration_[i].per_iteration /
                                             calibration_[i].median;
                }
            }
            const auto rule = rules.resolve(plan_.bench.name, counters_[i], calibration_[i].unit);
            out.counters.push_back(gate::summarize(counters_[i], points, plan_.deterministic, rule.threshold_pct,
                                                   rules.alpha));
        }
        if (stopped_ == "interrupted")
            out.warnings.push_back("interrupted: the figures are what the gates run so far show");
        return out;
    }

    qualify_plan plan_;
    std::chrono::steady_clock::time_point start_;
    double gate_s_ = 0;
    std::vector<std::string> counters_;
    std::vector<calibration_row> calibration_;
    std::vector<gate::qualify_point> points_;
    std::string stopped_;
};

// --server or --db: where the qualification is stored; nowhere without
// either. Checked before measuring (a missing token fails at once).
std::optional<target> storage_of(const parsed_args& args)
{
    if (!args.has("server") && !args.has("db")) return std::nullopt;
    target_rules rules;
    rules.default_local_project = default_local_project;
    return target_from(args, rules);
}

// The report as stored (model/qualification.hpp): per counter, its
// threshold and the injected share of the smallest slowdown caught in 80%
// and 95% of gates.
model::qualification stored_form(const qualify_result& r)
{
    model::qualification q;
    q.testbed_fingerprint = r.testbed_fingerprint;
    q.testbed = r.testbed;
    q.benchmark = r.benchmark;
    q.backend = r.backend;
    q.qualified_at = api::parse_timestamp(r.date).value_or(static_cast<std::int64_t>(std::time(nullptr)));
    for (const auto& c : r.counters) {
        model::qualified_counter k;
        k.counter = c.counter;
        k.threshold_pct = c.threshold_pct;
        if (c.detects_80) k.detects_80_pct = c.detects_80->injected_pct;
        if (c.detects_95) k.detects_95_pct = c.detects_95->injected_pct;
        k.reaches_threshold = c.reaches_threshold;
        k.deterministic = c.deterministic;
        q.counters.push_back(std::move(k));
    }
    return q;
}

void store_qualification(target& where, const qualify_result& r, bool quiet)
{
    const model::qualification q = stored_form(r);
    model::qualification stored;
    if (where.server) {
        stored = where.server->store_qualification(q);
    } else {
        store::store db(where.db.string());
        service::service svc(db);
        svc.projects().ensure(where.project);
        stored = svc.qualifications().add(where.project, q);
    }
    if (!quiet) {
        std::cerr << fmt::format("perfgate qualify: stored as qualification {} of testbed {} in project {}\n",
                                 stored.id, r.testbed, where.project);
    }
}

} // namespace

const command_spec& qualify_spec() { return qualify_command; }

int cmd_qualify(const argv_t& argv)
{
    const auto parsed = parse_args(qualify_command, argv);
    if (!parsed) return exit_pass;
    qualify_plan plan = plan_from(*parsed);
    std::optional<target> storage = as_qualify([&] { return storage_of(*parsed); });
    const bool quiet = plan.quiet;
    const model::testbed_info testbed = as_qualify([&] { return detect_testbed(parsed->get("testbed")); });
    const auto format = plan.settings.format;
    stop_children_on_interrupt();
    qualify_result result = qualifier(std::move(plan)).run();
    result.testbed = testbed.name;
    result.testbed_fingerprint = testbed.fingerprint;
    const std::string text = render_qualify(result, format);
    std::cout << text << std::flush;
    if (auto out = parsed->get("output")) {
        std::ofstream f(*out, std::ios::trunc);
        f << text;
        if (!f) throw error(errors::io_write, fmt::format("--output {}: cannot write", *out));
    }
    if (const int sig = interrupted()) return 128 + sig;
    // An interrupted qualification is shown, never stored: its figures are partial.
    if (storage) store_qualification(*storage, result, quiet);
    return exit_pass;
}

} // namespace perfgate::cli
