#include "capture/samples.hpp"

#include <algorithm>
#include <cmath>

#include "capture/counters.hpp"

namespace perfgate::capture {

const counter_series* benchmark_samples::find(std::string_view counter) const
{
    auto it = std::find_if(counters.begin(), counters.end(),
                           [&](const counter_series& c) { return c.name == counter; });
    return it == counters.end() ? nullptr : &*it;
}

const benchmark_samples* sample_set::find(std::string_view benchmark) const
{
    auto it = std::find_if(benchmarks.begin(), benchmarks.end(),
                           [&](const benchmark_samples& b) { return b.name == benchmark; });
    return it == benchmarks.end() ? nullptr : &*it;
}

namespace {

// Modifier suffix of a perf event name (":u" of "cycles:u"), so that derived
// metrics pair "instructions:u" with "cycles:u", never with "cycles".
std::string suffix_of(std::string_view name)
{
    if (name.find('/') != std::string_view::npos) return {};
    auto colon = name.find(':');
    return colon == std::string_view::npos ? std::string() : std::string(name.substr(colon));
}

struct derived_metric {
    std::string_view name, numerator, denominator;
    double scale;
};

// Derived per repetition when both parts have a value in that repetition
// (docs/statistics.md): ipc = instructions / cycles; miss rates in percent.
constexpr derived_metric derived_metrics[] = {
    {"ipc", "instructions", "cycles", 1.0},
    {"cache-miss-rate", "cache-misses", "cache-references", 100.0},
    {"branch-miss-rate", "branch-misses", "branches", 100.0},
};

} // namespace

benchmark_samples from_capture(const perf_capture& capture, std::string benchmark)
{
    benchmark_samples out;
    out.name = std::move(benchmark);
    out.summary_only = capture.summary_only;
    for (std::size_t e = 0; e < capture.events.size(); ++e) {
        counter_series s;
        s.name = capture.events[e].name;
        s.unit = capture.events[e].unit;
        for (const auto& run : capture.runs) {
            const reading& r = run[e];
            if (!r.value) {
                ++s.absent;
                continue;
            }
            s.values.push_back(*r.value);
            s.running_pct_min = std::min(s.running_pct_min, r.pcnt_running);
            if (r.variance_pct) s.variance_pct.push_back(*r.variance_pct);
        }
        out.counters.push_back(std::move(s));
    }
    if (capture.summary_only) return out; // no per-run values to derive from

    for (const auto& d : derived_metrics) {
        for (std::size_t num = 0; num < capture.events.size(); ++num) {
            const std::string& num_name = capture.events[num].name;
            if (base_event_name(num_name) != d.numerator) continue;
            const std::string suffix = suffix_of(num_name);
            auto den = capture.find(std::string(d.denominator) + suffix);
            if (!den) continue;
            counter_series s;
            s.name = std::string(d.name) + suffix;
            s.computed = true;
            s.unit = std::string(lookup_counter(d.name).unit);
            for (const auto& run : capture.runs) {
                const reading& a = run[num];
                const reading& b = run[*den];
                // A ratio that overflows (1e300 / 1e-10: finite inputs an
                // upload may hold) is as undefined as one over 0: absent,
                // never an infinity for the statistics to choke on.
                const double ratio = a.value && b.value && *b.value != 0 ? *a.value / *b.value * d.scale : 0.0;
                if (!a.value || !b.value || *b.value == 0 || !std::isfinite(ratio)) {
                    ++s.absent;
                    continue;
                }
                s.values.push_back(ratio);
                s.running_pct_min = std::min({s.running_pct_min, a.pcnt_running, b.pcnt_running});
            }
            out.counters.push_back(std::move(s));
        }
    }
    return out;
}

benchmark_samples samples_from_run(const model::run_record& run)
{
    perf_capture cap;
    cap.summary_only = run.summary_only;
    int reps = 0;
    for (const auto& c : run.counters) {
        cap.events.push_back({c.counter, c.unit});
        for (const auto& s : c.samples) reps = std::max(reps, s.repetition + 1);
    }
    cap.runs.assign(static_cast<std::size_t>(reps), std::vector<reading>(run.counters.size()));
    for (std::size_t e = 0; e < run.counters.size(); ++e) {
        for (const auto& s : run.counters[e].samples) {
            cap.runs[static_cast<std::size_t>(s.repetition)][e] = {s.value, s.pcnt_running, s.variance_pct};
        }
    }
    benchmark_samples out = from_capture(cap, run.benchmark);
    out.deterministic_counts = run.backend == "callgrind" || run.backend == "memcheck";
    return out;
}

} // namespace perfgate::capture
