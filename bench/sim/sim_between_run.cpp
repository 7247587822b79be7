// sim_between_run: Monte-Carlo false alarms and power of comparisons of runs
// that were NOT measured interleaved (docs/statistics.md "Runs not measured
// interleaved"; stats/between_run.hpp).
//
// Each trial draws K consecutive baseline runs of one counter (task-clock, n
// = 10 per run) and then a baseline and a candidate run, every run with its
// own session effect s (the machine's state that day, shared by the run's
// executions) and within-run noise e. The pair goes through gate::compare()
// twice, with the default policy (alpha 0.05, threshold 2%):
//   old: as if interleaved (the rank test on the two runs' samples);
//   new: declared apart, judged by the between-run test against the K
//        history medians (gate::pairing{false}).
// A false alarm is an A/A pair whose verdict is "fail"; power is the share
// of pairs whose candidate is shift_pct worse that are "fail".
//
// Usage: sim_between_run [trials] [seed]      defaults: 4000 trials, seed 20261126
// Prints one row per scenario; exit 0 (a figure, not a gate), 2 on a usage error.

#include "gate/compare.hpp"
#include "sim_args.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace {

namespace capture = perfgate::capture;
namespace gate = perfgate::gate;

constexpr std::uint64_t default_trials = 4000;
constexpr std::uint64_t default_seed = 20261126;
constexpr std::size_t reps = 10;
constexpr double level = 100.0; // msec

enum class tails { normal, t3 };

struct scenario {
    std::size_t history = 20; // K consecutive baseline runs
    double session_pct = 1.0; // sd of a session effect, % of the level
    double within_pct = 0.2;  // sd of one execution's noise, % of the level
    tails shape = tails::normal;
    double shift_pct = 0.0; // the candidate's real change
};

struct rates {
    double old_fail = 0, new_fail = 0, new_inconclusive = 0;
};

class drawer {
public:
    explicit drawer(std::uint64_t seed) : rng_(seed) {}

    double session(const scenario& s)
    {
        if (s.shape == tails::normal) return normal_(rng_) * s.session_pct / 100;
        // Student t with 3 df, scaled to the same sd (sd of t3 is sqrt(3)).
        std::student_t_distribution<double> t3(3.0);
        return t3(rng_) / std::sqrt(3.0) * s.session_pct / 100;
    }

    std::vector<double> run(const scenario& s, double factor)
    {
        const double centre = level * factor * (1 + session(s));
        std::vector<double> v(reps);
        for (auto& x : v) x = centre * (1 + normal_(rng_) * s.within_pct / 100);
        return v;
    }

private:
    std::mt19937_64 rng_;
    std::normal_distribution<double> normal_{0.0, 1.0};
};

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

capture::sample_set side(std::vector<double> values)
{
    capture::sample_set set;
    capture::benchmark_samples b;
    capture::counter_series c;
    c.name = "task-clock";
    c.unit = "msec";
    c.values = std::move(values);
    b.counters.push_back(std::move(c));
    set.benchmarks.push_back(std::move(b));
    return set;
}

rates simulate(const scenario& s, std::uint64_t trials, std::uint64_t seed)
{
    drawer draw(seed);
    const gate::policy rules;
    rates out;
    for (std::uint64_t t = 0; t < trials; ++t) {
        std::vector<double> history;
        for (std::size_t k = 0; k < s.history; ++k) history.push_back(median_of(draw.run(s, 1.0)));
        const auto base = side(draw.run(s, 1.0));
        const auto cand = side(draw.run(s, 1 + s.shift_pct / 100));
        history.push_back(median_of(base.benchmarks[0].counters[0].values)); // the baseline run is the newest
        const gate::report old_rule = gate::compare(base, cand, rules);
        const gate::report new_rule = gate::compare(
            base, cand, rules, [&](std::string_view, std::string_view) { return history; },
            [](std::string_view) {
                return std::optional<gate::pairing>(gate::pairing{false, {}});
            });
        out.old_fail += old_rule.result == gate::verdict::fail;
        out.new_fail += new_rule.result == gate::verdict::fail;
        out.new_inconclusive += new_rule.result == gate::verdict::inconclusive;
    }
    const auto n = static_cast<double>(trials);
    return {out.old_fail / n, out.new_fail / n, out.new_inconclusive / n};
}

} // namespace

int main(int argc, char** argv)
{
    std::uint64_t trials = default_trials, seed = default_seed;
    if (!perfgate::bench::parse_trials_seed(argc, argv, trials, seed)) {
        std::fprintf(stderr, "usage: sim_between_run [trials] [seed]\n");
        return 2;
    }
    fmt::print("sim_between_run: {} trials per row, seed {}, n = {} per run, alpha 0.05, threshold 2%\n", trials, seed,
               reps);
    fmt::print("{:>8} {:>9} {:>9} {:>7} {:>7} | {:>9} {:>9} {:>13}\n", "history", "session%", "within%", "tails",
               "shift%", "old fail", "new fail", "new inconcl.");
    const std::vector<scenario> rows = {
        // A/A: false alarms.
        {10, 1.0, 0.2, tails::normal, 0.0},
        {20, 1.0, 0.2, tails::normal, 0.0},
        {30, 1.0, 0.2, tails::normal, 0.0},
        {20, 2.0, 0.2, tails::normal, 0.0},
        {20, 1.0, 0.2, tails::t3, 0.0},
        {20, 0.0, 1.0, tails::normal, 0.0},
        // Real shifts: power.
        {20, 1.0, 0.2, tails::normal, 5.0},
        {20, 1.0, 0.2, tails::normal, 10.0},
        {30, 1.0, 0.2, tails::normal, 10.0},
        {20, 0.0, 1.0, tails::normal, 5.0},
    };
    for (const auto& s : rows) {
        const rates r = simulate(s, trials, seed);
        fmt::print("{:>8} {:>9.1f} {:>9.1f} {:>7} {:>7.1f} | {:>9.4f} {:>9.4f} {:>13.4f}\n", s.history, s.session_pct,
                   s.within_pct, s.shape == tails::normal ? "normal" : "t3", s.shift_pct, r.old_fail, r.new_fail,
                   r.new_inconclusive);
    }
    return 0;
}
