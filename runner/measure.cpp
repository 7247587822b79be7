#include "runner/measure.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "model/error.hpp"
#include "runner/backend.hpp"
#include "runner/process.hpp"

namespace perfgate::runner {

namespace {

using detail::execution;
using detail::where;
using std::chrono::steady_clock;

std::string seconds(std::chrono::nanoseconds d)
{
    return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count());
}

// The pace of one benchmark's executions, for progress lines and the
// budget. The estimate extrapolates from measured executions only (warmups
// may be slower: cold caches, first page faults).
struct pace {
    steady_clock::time_point started = steady_clock::now();
    bool measuring = false;                     // a measured (not warmup) execution started
    steady_clock::time_point measuring_since{}; // when
    std::size_t measured_total = 0, measured_done = 0;

    [[nodiscard]] std::string elapsed() const { return seconds(steady_clock::now() - started); }
    [[nodiscard]] std::string remaining() const
    {
        auto per_execution = (steady_clock::now() - measuring_since) / measured_done;
        return seconds(per_execution * (measured_total - measured_done));
    }
};

// The scheduler: one object per measure() call. It runs each benchmark's
// schedule through the backend, probes the events on the first execution,
// collects the samples per side and takes sequential sampling's looks.
class engine {
public:
    engine(const measure_options& opt, std::ostream& progress) : opt_(opt), progress_(progress)
    {
        backend_ = make_backend();
    }

    // benchmarks_left: this one and those after it, for the budget's share.
    benchmark_measurement run(const benchmark_spec& spec, std::size_t benchmarks_left)
    {
        const auto& seq = opt_.sequential;
        const int reps = seq ? seq->max_repetitions : spec.repetitions.value_or(opt_.repetitions);
        const int warmup = spec.warmup.value_or(opt_.warmup);
        auto schedule = make_schedule(reps, warmup, opt_.order, opt_.seed);
        if (opt_.candidate_only) std::erase_if(schedule, [](const slot& s) { return s.which == side::baseline; });
        begin_benchmark();
        pace p;
        for (auto& s : schedule) p.measured_total += s.warmup ? 0 : 1;

        // --split-events decides its groups from a probe execution; without
        // warmups that probe is an extra, discarded one.
        if (counts_events() && opt_.split_events && !probed_ && warmup == 0) {
            execute_slot(spec, {side::baseline, 1, true}, {spec.name, side::baseline, 1, 1, true});
        }
        // The budget's share of this benchmark.
        std::optional<std::chrono::duration<double>> share;
        if (seq && seq->budget) {
            share = (*seq->budget - (p.started - run_started_)) / static_cast<double>(benchmarks_left);
        }
        const int rounds_done = run_schedule(spec, schedule, warmup, reps, p, share);
        if (opt_.progress == progress_style::tty) {
            progress_ << fmt::format("\r\033[K{}: {} rounds in {}\n", spec.name, rounds_done, p.elapsed())
                      << std::flush;
        }
        warn_multiplexed(spec);
        return {spec.name, finish_side(spec, side::baseline), finish_side(spec, side::candidate)};
    }

private:
    std::unique_ptr<detail::backend_base> make_backend()
    {
        switch (opt_.which) {
        case backend::perf: {
            auto b = detail::make_perf_backend(opt_, dir_.path());
            choose_events();
            return b;
        }
        case backend::native: choose_events(); return detail::make_native_backend(opt_, dir_.path(), events_);
        case backend::callgrind: return detail::make_callgrind_backend(opt_, dir_.path(), warnings_);
        case backend::memcheck: return detail::make_memcheck_backend(opt_, dir_.path(), warnings_);
        case backend::rusage: break;
        }
        return detail::make_rusage_backend(opt_, dir_.path());
    }

    void choose_events()
    {
        events_ = opt_.events.empty()
                      ? std::vector<std::string>(std::begin(default_perf_events), std::end(default_perf_events))
                      : opt_.events;
        groups_ = {events_};
    }

    void begin_benchmark()
    {
        sides_[0] = {};
        sides_[1] = {};
        multiplexed_.clear();
        backend_->begin_benchmark();
    }

    // Runs the schedule until its end or a sequential look that stops;
    // returns the rounds completed on both sides.
    int run_schedule(const benchmark_spec& spec, const std::vector<slot>& schedule, int warmup, int reps, pace& p,
                     std::optional<std::chrono::duration<double>> share)
    {
        const auto& seq = opt_.sequential;
        auto is_look = [&](int round) {
            return round == seq->max_repetitions ||
                   (round >= seq->min_repetitions && (round - seq->min_repetitions) % seq->block == 0);
        };
        std::map<int, int> sides_done_in_round;
        int rounds_done = 0;
        for (const auto& s : schedule) {
            const where at{spec.name, s.which, s.round, s.warmup ? warmup : reps, s.warmup};
            if (!s.warmup && !p.measuring) {
                p.measuring = true;
                p.measuring_since = steady_clock::now();
            }
            if (opt_.progress == progress_style::tty) {
                std::string eta = p.measured_done > 0 ? "~" + p.remaining() + " left" : "";
                progress_ << fmt::format("\r\033[K{}: {} {}/{} {:<9} {} elapsed {}", spec.name,
                                         s.warmup ? "warmup" : "round", s.round, at.rounds, to_string(s.which),
                                         p.elapsed(), eta)
                          << std::flush;
            }
            execute_slot(spec, s, at);
            if (s.warmup) continue;
            ++p.measured_done;
            if (++sides_done_in_round[s.round] < (opt_.candidate_only ? 1 : 2)) continue;
            rounds_done = s.round;
            if (opt_.progress == progress_style::plain) {
                progress_ << fmt::format("perfgate: {}: round {}/{} done, elapsed {}{}\n", spec.name, s.round, reps,
                                         p.elapsed(), seq ? "" : ", ~" + p.remaining() + " left")
                          << std::flush;
            }
            if (seq && is_look(s.round) && look(spec, s.round, p, share)) break;
        }
        return rounds_done;
    }

    void warn_multiplexed(const benchmark_spec& spec)
    {
        if (multiplexed_.empty()) return;
        std::vector<std::string> names;
        for (auto& [n, pct] : multiplexed_) names.push_back(fmt::format("{} ({:.1f}%)", n, pct));
        warnings_.push_back(
            fmt::format("benchmark '{}': events {} were multiplexed (counted only part of the time; perf scaled the "
                        "values, so they are estimates): more events than the PMU counts at once{}",
                        spec.name, detail::join(names, ", "),
                        opt_.split_events ? "" : "; use --split-events to measure them in groups, or fewer -e events"));
    }

    // The progress line's words for a look. The plan's last look always
    // ends in a decision (it spends the error that is left), so reaching
    // --max-repetitions is said as such, never as "decided".
    static std::string_view look_outcome(bool decided, bool last, bool at_max)
    {
        if (at_max) return "max repetitions reached";
        if (decided) return "decided";
        return last ? "time budget spent" : "not decided, measuring more";
    }

    // After round `round`, a look of sequential sampling: true to stop.
    bool look(const benchmark_spec& spec, int round, const pace& p, std::optional<std::chrono::duration<double>> share)
    {
        const auto& seq = *opt_.sequential;
        bool last = round >= seq.max_repetitions;
        if (!last && share) {
            const auto now = steady_clock::now();
            const auto per_round = std::chrono::duration<double>(now - p.measuring_since) / round;
            const int next = std::min(seq.block, seq.max_repetitions - round);
            last = std::chrono::duration<double>(now - p.started) + per_round * next > *share;
        }
        benchmark_measurement so_far;
        so_far.name = spec.name;
        so_far.baseline = finish_side(spec, side::baseline);
        so_far.candidate = finish_side(spec, side::candidate);
        const bool decided = seq.decided && seq.decided(spec.name, {so_far}, last).front();
        if (opt_.progress != progress_style::none) {
            progress_ << fmt::format("{}perfgate: {}: look after {} rounds: {}\n",
                                     opt_.progress == progress_style::tty ? "\r\033[K" : "", spec.name, round,
                                     look_outcome(decided, last, round >= seq.max_repetitions))
                      << std::flush;
        }
        return decided || last;
    }

    // The backends that count perf events (-e), probe them and drop the
    // unsupported defaults.
    [[nodiscard]] bool counts_events() const { return opt_.which == backend::perf || opt_.which == backend::native; }

    void execute_slot(const benchmark_spec& both, const slot& s, const where& at)
    {
        // This side's environment (--baseline-env/--candidate-env) on top of both sides'.
        const benchmark_spec spec = for_side(both, s.which);
        const command& cmd = s.which == side::baseline ? spec.baseline : spec.candidate;
        std::vector<execution> parts;
        if (counts_events()) {
            for (auto& group : groups_) parts.push_back(backend_->execute(spec, cmd, group, at));
            // wall/user/sys/rss of the first group's execution (the one with
            // the software events and duration_time).
            detail::add_rusage_counters(parts.front());
            if (!probed_) probe(parts);
        } else {
            parts.push_back(backend_->execute(spec, cmd, {}, at));
        }
        if (!s.warmup) record(parts, s);
    }

    void record(const std::vector<execution>& parts, const slot& s)
    {
        auto& counters = sides_[s.which == side::baseline ? 0 : 1];
        for (auto& part : parts) {
            for (auto& c : part.counters) {
                if (c.pcnt_running < 100.0 && c.value) {
                    auto [it, fresh] = multiplexed_.try_emplace(c.name, c.pcnt_running);
                    if (!fresh) it->second = std::min(it->second, c.pcnt_running);
                }
                auto it = std::find_if(counters.begin(), counters.end(),
                                       [&](auto& cs) { return cs.counter == c.name; });
                if (it == counters.end()) {
                    counters.push_back({c.name, c.unit, {}});
                    it = std::prev(counters.end());
                }
                it->samples.push_back({s.round - 1, c.value, c.pcnt_running, std::nullopt});
            }
        }
    }

    // The first perf execution tells which events this machine supports and
    // whether they multiplex. Default events that are <not supported> are
    // dropped from then on (said once); explicitly requested ones are kept
    // (the report shows them as unsupported) but said too.
    void probe(const std::vector<execution>& parts)
    {
        probed_ = true;
        std::vector<std::string> unsupported;
        double min_pct = 100.0;
        for (auto& part : parts) {
            for (auto& c : part.counters) {
                if (c.name == "wall-time" || c.name == "user-time" || c.name == "sys-time" || c.name == "max-rss")
                    continue;
                if (!c.value) unsupported.push_back(c.name);
                else min_pct = std::min(min_pct, c.pcnt_running);
            }
        }
        if (!unsupported.empty()) drop_unsupported(unsupported);
        if (opt_.split_events && min_pct < 100.0) {
            groups_ = split_event_groups(events_, min_pct);
        }
    }

    void drop_unsupported(const std::vector<std::string>& unsupported)
    {
        bool hardware = std::any_of(unsupported.begin(), unsupported.end(),
                                    [](auto& n) { return !detail::is_software_event(n); });
        warnings_.push_back(
            fmt::format("perf cannot count {} on this machine{}{}. {}", detail::join(unsupported, ", "),
                        hardware ? " (no hardware performance counters: typical of VMs and hosted CI runners)" : "",
                        opt_.events.empty() ? "; measuring the supported default events only" : "",
                        hardware ? "For deterministic instruction counts without a PMU use --backend callgrind." : ""));
        if (!opt_.events.empty()) return;
        std::erase_if(events_, [&](auto& e) {
            return std::find(unsupported.begin(), unsupported.end(), e) != unsupported.end();
        });
        if (events_.empty()) {
            throw error(errors::measure_perf_unavailable,
                        "perf counts none of the default events here; use --backend rusage or callgrind");
        }
        groups_ = {events_};
        // Forget counters recorded before the decision (a measured
        // first execution); finish_side keeps only active events.
        dropped_ = std::set<std::string, std::less<>>(unsupported.begin(), unsupported.end());
    }

    // A copy: sequential sampling takes one at every look.
    side_samples finish_side(const benchmark_spec& spec, side which) const
    {
        side_samples out;
        out.run.benchmark = spec.name;
        out.run.role = std::string(to_string(which));
        out.run.backend = std::string(to_string(opt_.which));
        for (const auto& c : sides_[which == side::baseline ? 0 : 1]) {
            if (!dropped_.contains(c.counter)) out.run.counters.push_back(c);
        }
        out.warnings = warnings_;
        out.profiles = backend_->profiles(which);
        return out;
    }

    const measure_options& opt_;
    std::ostream& progress_;
    steady_clock::time_point run_started_ = steady_clock::now();
    temp_dir dir_{"perfgate-run"};
    std::vector<std::string> warnings_;
    std::vector<std::string> events_;
    std::vector<std::vector<std::string>> groups_;
    std::unique_ptr<detail::backend_base> backend_;
    std::set<std::string, std::less<>> dropped_;
    bool probed_ = false;
    std::array<std::vector<model::counter_samples>, 2> sides_;
    std::map<std::string, double> multiplexed_; // event -> lowest pcnt_running
};

} // namespace

std::string_view to_string(backend b)
{
    switch (b) {
    case backend::perf: return "perf";
    case backend::native: return "native";
    case backend::callgrind: return "callgrind";
    case backend::rusage: return "rusage";
    case backend::memcheck: return "memcheck";
    }
    return "perf";
}

std::string_view to_string(run_order o)
{
    switch (o) {
    case run_order::alternate: return "alternate";
    case run_order::random: return "random";
    case run_order::blocked: return "blocked";
    }
    return "alternate";
}

std::string_view to_string(side s) { return s == side::baseline ? "baseline" : "candidate"; }

std::optional<backend> parse_backend(std::string_view s)
{
    for (auto b : {backend::perf, backend::native, backend::callgrind, backend::rusage, backend::memcheck}) {
        if (to_string(b) == s) return b;
    }
    return std::nullopt;
}

std::optional<run_order> parse_run_order(std::string_view s)
{
    for (auto o : {run_order::alternate, run_order::random, run_order::blocked}) {
        if (to_string(o) == s) return o;
    }
    return std::nullopt;
}

benchmark_spec for_side(const benchmark_spec& spec, side which)
{
    benchmark_spec out = spec;
    const auto& more = which == side::baseline ? spec.baseline_env : spec.candidate_env;
    out.env.insert(out.env.end(), more.begin(), more.end());
    const auto& dir = which == side::baseline ? spec.baseline_cwd : spec.candidate_cwd;
    if (dir) out.cwd = dir;
    return out;
}

std::vector<slot> make_schedule(int repetitions, int warmup, run_order order, std::uint64_t seed)
{
    PERFGATE_CHECK(repetitions >= 1 && warmup >= 0);
    std::vector<slot> out;
    for (int w = 1; w <= warmup; ++w) {
        out.push_back({side::baseline, w, true});
        out.push_back({side::candidate, w, true});
    }
    switch (order) {
    case run_order::blocked:
        for (int r = 1; r <= repetitions; ++r) out.push_back({side::baseline, r, false});
        for (int r = 1; r <= repetitions; ++r) out.push_back({side::candidate, r, false});
        break;
    case run_order::alternate:
        // ABBA: rounds 1, 3, 5... run baseline first, rounds 2, 4, ... candidate first.
        for (int r = 1; r <= repetitions; ++r) {
            bool baseline_first = r % 2 == 1;
            out.push_back({baseline_first ? side::baseline : side::candidate, r, false});
            out.push_back({baseline_first ? side::candidate : side::baseline, r, false});
        }
        break;
    case run_order::random: {
        // mt19937_64's output sequence is fixed by the standard, unlike the
        // distributions, so the top bit is used directly: same seed, same
        // order, on every standard library.
        std::mt19937_64 gen(seed);
        for (int r = 1; r <= repetitions; ++r) {
            bool baseline_first = (gen() >> 63) != 0;
            out.push_back({baseline_first ? side::baseline : side::candidate, r, false});
            out.push_back({baseline_first ? side::candidate : side::baseline, r, false});
        }
        break;
    }
    }
    return out;
}

std::vector<benchmark_measurement> measure(const std::vector<benchmark_spec>& benchmarks, const measure_options& opt,
                                           std::ostream& progress)
{
    if (opt.repetitions < 1) throw error(errors::usage_bad_value, "repetitions must be at least 1");
    if (const auto& seq = opt.sequential) {
        if (seq->min_repetitions < 2 || seq->block < 1 || seq->max_repetitions < seq->min_repetitions) {
            throw error(errors::usage_bad_value,
                        fmt::format("sequential sampling needs 2 <= min repetitions <= max repetitions and a block "
                                    ">= 1, got {}, {} and {}",
                                    seq->min_repetitions, seq->max_repetitions, seq->block));
        }
    }
    // The engine (and its backend's checks) only when a command is measured.
    std::optional<engine> eng;
    std::vector<benchmark_measurement> out;
    const auto started = steady_clock::now();
    for (std::size_t i = 0; i < benchmarks.size(); ++i) {
        if (benchmarks[i].harness == "gbench") {
            // The budget's share of this suite: an even share of what is left.
            std::optional<std::chrono::duration<double>> share;
            if (opt.sequential && opt.sequential->budget) {
                share = (*opt.sequential->budget - (steady_clock::now() - started)) /
                        static_cast<double>(benchmarks.size() - i);
            }
            for (auto& m : detail::measure_gbench(benchmarks[i], opt, progress, share)) out.push_back(std::move(m));
            continue;
        }
        if (!eng) eng.emplace(opt, progress);
        out.push_back(eng->run(benchmarks[i], benchmarks.size() - i));
    }
    return out;
}

std::string to_perf_csv(const model::run_record& run)
{
    int reps = 0;
    for (auto& c : run.counters) {
        for (auto& s : c.samples) reps = std::max(reps, s.repetition + 1);
    }
    std::string out;
    for (int r = 0; r < reps; ++r) {
        out += fmt::format("# started on perfgate run {} repetition {}\n\n", run.benchmark, r + 1);
        for (auto& c : run.counters) {
            auto it = std::find_if(c.samples.begin(), c.samples.end(), [&](auto& s) { return s.repetition == r; });
            if (it == c.samples.end() || !it->value) {
                out += fmt::format("<not supported>,{},{},0,100.00,,\n", c.unit, c.counter);
            } else {
                // run_time is not known per counter here; perf prints the
                // event's enabled time, a positive number: 1 keeps it valid.
                out += fmt::format("{},{},{},1,{:.2f},,\n", *it->value, c.unit, c.counter, it->pcnt_running);
            }
        }
    }
    return out;
}

model::ingest_request ingest_request_of(const model::run_record& run)
{
    model::ingest_request in;
    in.identity() = run.identity();
    in.mainline = run.mainline; // always said: the server's default is for older clients
    in.perf_csv = to_perf_csv(run);
    return in;
}

std::vector<std::vector<std::string>> split_event_groups(const std::vector<std::string>& events, double min_running_pct)
{
    std::vector<std::string> software, hardware;
    for (auto& e : events) (detail::is_software_event(e) ? software : hardware).push_back(e);
    std::size_t groups = 1;
    if (min_running_pct > 0 && min_running_pct < 100.0) {
        groups = static_cast<std::size_t>(std::ceil(100.0 / min_running_pct));
    }
    groups = std::clamp<std::size_t>(groups, 1, std::max<std::size_t>(hardware.size(), 1));
    std::vector<std::vector<std::string>> out(groups);
    out[0] = software;
    for (std::size_t i = 0; i < hardware.size(); ++i) out[i % groups].push_back(hardware[i]);
    std::erase_if(out, [](auto& g) { return g.empty(); });
    return out;
}

double estimated_cycles(const std::map<std::string, double, std::less<>>& totals)
{
    auto get = [&](std::string_view event) {
        auto it = totals.find(event);
        return it == totals.end() ? 0.0 : it->second;
    };
    const double l1_misses = get("I1mr") + get("D1mr") + get("D1mw");
    const double ll_misses = get("ILmr") + get("DLmr") + get("DLmw");
    return get("Ir") + l1_miss_cycles * l1_misses + ll_miss_cycles * ll_misses;
}

namespace {

// The header and trailer lines parse_callgrind_totals reads, fed one line
// at a time: callgrind files of big programs run to hundreds of MB, and
// only these few lines matter here.
class callgrind_totals_reader {
public:
    void line(std::string_view l)
    {
        if (l.starts_with("events:")) {
            std::istringstream s{std::string(l.substr(7))};
            std::string e;
            events_.clear();
            while (s >> e) events_.push_back(e);
        } else if (l.starts_with("summary:")) {
            summary_ = numbers(l.substr(8));
        } else if (l.starts_with("totals:")) {
            totals_ = numbers(l.substr(7));
        }
    }

    [[nodiscard]] std::vector<std::pair<std::string, double>> result(std::string_view source) const
    {
        // Callgrind's format spec: "summary:" is the total cost, "totals:" the
        // sum of the cost lines; prefer summary, as callgrind_annotate does.
        const auto& values = !summary_.empty() ? summary_ : totals_;
        if (events_.empty() || values.empty()) {
            throw error(errors::measure_failed,
                        fmt::format("{}: not a callgrind output file (no events:/summary: line)", source));
        }
        std::vector<std::pair<std::string, double>> out;
        for (std::size_t i = 0; i < events_.size() && i < values.size(); ++i) out.emplace_back(events_[i], values[i]);
        return out;
    }

private:
    static std::vector<double> numbers(std::string_view rest)
    {
        std::vector<double> v;
        std::istringstream s{std::string(rest)};
        double x;
        while (s >> x) v.push_back(x);
        return v;
    }

    std::vector<std::string> events_;
    std::vector<double> summary_, totals_;
};

} // namespace

std::vector<std::pair<std::string, double>> parse_callgrind_totals(std::string_view text, std::string_view source)
{
    callgrind_totals_reader reader;
    while (!text.empty()) {
        const auto eol = text.find('\n');
        reader.line(text.substr(0, eol));
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    }
    return reader.result(source);
}

std::vector<std::pair<std::string, double>> read_callgrind_totals(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    callgrind_totals_reader reader;
    for (std::string line; std::getline(in, line);) reader.line(line);
    return reader.result(path.string());
}

} // namespace perfgate::runner
