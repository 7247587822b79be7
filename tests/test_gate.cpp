// Tests of gate/: policy, compare (every status and verdict), report JSON
// contract, renderers.
#include "gate/compare.hpp"

#include <doctest/doctest.h>

#include "support/numbers.hpp"
#include "support/report.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/noise.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "report/json_writer.hpp"
#include "report/render.hpp"
#include "stats/descriptive.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace perfgate;
using namespace perfgate::capture;
using namespace perfgate::gate;
using namespace perfgate::report;
using nlohmann::json;
using perfgate::test::counter;
using perfgate::test::ramp;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

capture::counter_series series(std::string name, std::vector<double> values, std::string unit = "")
{
    capture::counter_series s;
    s.name = std::move(name);
    s.unit = std::move(unit);
    s.values = std::move(values);
    return s;
}

capture::sample_set one(std::vector<capture::counter_series> counters, std::string bench = "default")
{
    capture::sample_set s;
    capture::benchmark_samples b;
    b.name = std::move(bench);
    b.counters = std::move(counters);
    s.benchmarks.push_back(std::move(b));
    return s;
}

} // namespace

TEST_CASE("compare: regression, improvement and unchanged on a gated counter")
{
    SUBCASE("10% slower is a regression with the exact test")
    {
        const gate::report r = compare(one({series("task-clock", ramp(), "msec")}),
                                       one({series("task-clock", ramp(1.10), "msec")}), policy{});
        const auto& c = counter(r, "task-clock");
        CHECK(c.gated);
        CHECK(c.state == status::regression);
        REQUIRE(c.test);
        CHECK(*c.test == method::exact);
        // scipy.stats.mannwhitneyu(b, c, method="exact") (scipy 1.10.1): complete
        // separation, p = 2 / C(20, 10).
        CHECK(*c.p_value == doctest::Approx(1.082508822446903e-05).epsilon(1e-9));
        CHECK(*c.u == 0.0);
        CHECK(*c.delta_pct == doctest::Approx(10.0).epsilon(1e-9));
        REQUIRE(c.shift_ci);
        CHECK(c.shift_ci->first <= *c.shift);
        CHECK(c.shift_ci->second >= *c.shift);
        CHECK(r.result == verdict::fail);
        CHECK(r.benchmarks[0].result == verdict::fail);
    }
    SUBCASE("10% faster is an improvement and the gate passes")
    {
        const gate::report r = compare(one({series("task-clock", ramp())}), one({series("task-clock", ramp(0.9))}),
                                       policy{});
        CHECK(counter(r, "task-clock").state == status::improvement);
        CHECK(*counter(r, "task-clock").u == 100.0);
        CHECK(r.result == verdict::pass);
    }
    SUBCASE("higher-is-better counters invert the direction")
    {
        policy p;
        p.counters["score"].gate = true;
        p.counters["score"].direction = capture::better::higher;
        const gate::report r = compare(one({series("score", ramp())}), one({series("score", ramp(0.9))}), p);
        CHECK(counter(r, "score").state == status::regression);
        CHECK(counter(r, "score").direction == capture::better::higher);
    }
    SUBCASE("identical samples are unchanged")
    {
        const gate::report r = compare(one({series("task-clock", ramp())}), one({series("task-clock", ramp())}),
                                       policy{});
        const auto& c = counter(r, "task-clock");
        CHECK(c.state == status::unchanged);
        CHECK(*c.test == method::asymptotic); // ties across the samples
        CHECK(*c.p_value == doctest::Approx(1.0));
        CHECK(*c.mde_pct < 2.0);
        CHECK(r.result == verdict::pass);
    }
    SUBCASE("a significant change below the threshold is unchanged")
    {
        const gate::report r = compare(one({series("task-clock", ramp())}), one({series("task-clock", ramp(1.01))}),
                                       policy{});
        const auto& c = counter(r, "task-clock");
        CHECK(*c.p_adjusted < 0.05);
        CHECK(c.state == status::unchanged);
        CHECK(c.reason.find("below") == std::string::npos);
        CHECK(c.reason.find("threshold") != std::string::npos);
    }
}

TEST_CASE("compare: inconclusive, insufficient and unsupported")
{
    SUBCASE("noise too large to see a 2% shift is inconclusive, not unchanged")
    {
        std::vector<double> b = {100, 92, 108, 95, 105, 99, 111, 90, 102, 97};
        std::vector<double> c = {101, 93, 107, 96, 104, 100, 110, 91, 103, 98};
        const gate::report r = compare(one({series("task-clock", b)}), one({series("task-clock", c)}), policy{});
        const auto& cr = counter(r, "task-clock");
        CHECK(cr.state == status::inconclusive);
        CHECK(*cr.mde_pct > 2.0);
        CHECK(r.result == verdict::inconclusive);
    }
    SUBCASE("a shift beyond the threshold that the test cannot confirm is inconclusive, never unchanged")
    {
        // Integer counts that tie (a big suite's instructions): the tied
        // asymptotic p is ~1.6e-4, not significant at the level a family of
        // 1,500 gated counters leaves (alpha / 1,500 ~ 3.3e-5), while the
        // spread is tiny: a 30% shift must not be called unchanged.
        policy p;
        p.alpha = 0.05 / 1500;
        const std::vector<double> b = {1000, 1000, 1000, 1000, 1000, 1001, 1001, 1001, 1001, 1001};
        const std::vector<double> c = {1300, 1300, 1300, 1300, 1300, 1301, 1301, 1301, 1301, 1301};
        const gate::report r = compare(one({series("instructions", b)}), one({series("instructions", c)}), p);
        const auto& cr = counter(r, "instructions");
        REQUIRE(cr.p_value.has_value());
        CHECK(*cr.p_value > p.alpha);
        CHECK(cr.state == status::inconclusive);
        CHECK(cr.reason.find("but not significant") != std::string::npos);
        CHECK(r.result == verdict::inconclusive);
    }
    SUBCASE("CoV above max_cov is inconclusive even with a detectable effect")
    {
        policy p;
        p.counters["task-clock"].threshold_pct = 60; // MDE is well under 60%
        std::vector<double> b = {100, 80, 120, 90, 110, 85, 115, 95, 105, 100};
        const gate::report r = compare(one({series("task-clock", b)}), one({series("task-clock", b)}), p);
        const auto& cr = counter(r, "task-clock");
        CHECK(cr.state == status::inconclusive);
        CHECK(cr.reason.find("coefficient of variation") != std::string::npos);
    }
    SUBCASE("fewer than min_samples is insufficient")
    {
        const gate::report r = compare(one({series("task-clock", ramp(1.0, 3))}),
                                       one({series("task-clock", ramp(1.5, 3))}), policy{});
        const auto& c = counter(r, "task-clock");
        CHECK(c.state == status::insufficient);
        CHECK_FALSE(c.p_value);
        CHECK(r.result == verdict::inconclusive);
    }
    SUBCASE("a counter with no values is unsupported and never zero")
    {
        capture::counter_series none = series("cycles", {});
        none.absent = 10;
        const gate::report r = compare(one({series("task-clock", ramp()), none}),
                                       one({series("task-clock", ramp()), none}), policy{});
        const auto& c = counter(r, "cycles");
        CHECK(c.state == status::unsupported);
        CHECK_FALSE(c.baseline.median);
        CHECK(r.result == verdict::pass); // task-clock still gates
        bool warned = false;
        for (const auto& w : r.warnings) warned = warned || w.find("cycles") != std::string::npos;
        CHECK(warned);
    }
    SUBCASE("no gated counter with data: inconclusive, never a silent pass")
    {
        const gate::report r = compare(one({series("page-faults", ramp())}), one({series("page-faults", ramp())}),
                                       policy{});
        CHECK_FALSE(counter(r, "page-faults").gated);
        CHECK(r.result == verdict::inconclusive);
    }
    SUBCASE("rusage-only counters gate through the fallback")
    {
        const gate::report r = compare(one({series("wall-time", ramp()), series("user-time", ramp())}),
                                       one({series("wall-time", ramp(1.2)), series("user-time", ramp(1.2))}), policy{});
        CHECK(counter(r, "wall-time").gated);
        CHECK(counter(r, "wall-time").state == status::regression);
        CHECK(r.result == verdict::fail);
    }
}

TEST_CASE("compare: deterministic counters")
{
    SUBCASE("callgrind-style single counts: 3% more instructions is a regression")
    {
        const gate::report r = compare(one({series("instructions", {1000000})}),
                                       one({series("instructions", {1030000})}), policy{});
        const auto& c = counter(r, "instructions");
        CHECK(*c.test == method::deterministic);
        CHECK(c.state == status::regression);
        CHECK_FALSE(c.p_value);
        CHECK(*c.delta_pct == doctest::Approx(3.0));
    }
    SUBCASE("one count per side: a warning unless both runs say callgrind counted them")
    {
        auto warned = [](const gate::report& r) {
            return std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
                return w.find("instructions: one sample on a side") != std::string::npos;
            });
        };
        auto b = one({series("instructions", {1000000})});
        auto c = one({series("instructions", {1000000})});
        CHECK(warned(compare(b, c, policy{})));
        b.benchmarks[0].deterministic_counts = true;
        CHECK(warned(compare(b, c, policy{}))); // one side only: still unknown
        c.benchmarks[0].deterministic_counts = true;
        const gate::report quiet = compare(b, c, policy{});
        CHECK_FALSE(warned(quiet));
        CHECK(*counter(quiet, "instructions").test == method::deterministic);
    }
    SUBCASE("a stored callgrind run's samples are marked as counted by a simulator")
    {
        model::run_record run;
        run.benchmark = "b";
        run.backend = "callgrind";
        model::counter_samples ir;
        ir.counter = "instructions";
        ir.samples.push_back(model::sample{});
        ir.samples.back().value = 5.0;
        run.counters.push_back(ir);
        CHECK(capture::samples_from_run(run).deterministic_counts);
        run.backend = "perf";
        CHECK_FALSE(capture::samples_from_run(run).deterministic_counts);
    }
    SUBCASE("1% is under the threshold: unchanged")
    {
        const gate::report r = compare(one({series("instructions", {1000000})}),
                                       one({series("instructions", {1010000})}), policy{});
        CHECK(counter(r, "instructions").state == status::unchanged);
        CHECK(r.result == verdict::pass);
    }
    SUBCASE("all-equal repetitions are deterministic too")
    {
        const gate::report r = compare(one({series("instructions", std::vector<double>(5, 500.0))}),
                                       one({series("instructions", std::vector<double>(5, 500.0))}), policy{});
        CHECK(*counter(r, "instructions").test == method::deterministic);
        CHECK(counter(r, "instructions").state == status::unchanged);
    }
    SUBCASE("one repetition of a time counter is not deterministic")
    {
        const gate::report r = compare(one({series("task-clock", {10.0})}), one({series("task-clock", {20.0})}),
                                       policy{});
        CHECK(counter(r, "task-clock").state == status::insufficient);
    }
}

namespace {

// perf stat -r 5 output: one task-clock mean with its variance in percent.
capture::sample_set summary_of_5(double mean, double var_pct)
{
    capture::sample_set s = one({series("task-clock", {mean}, "msec")});
    s.benchmarks[0].counters[0].variance_pct = {var_pct};
    s.benchmarks[0].summary_only = true;
    s.benchmarks[0].summary_repeats = 5;
    return s;
}

} // namespace

TEST_CASE("compare: unchanged when the printed interval lies inside +-threshold (equivalence)")
{
    // docs/statistics.md "Equivalence". 12 values per side around 100 with
    // a spread of 0.1, and one wild run on each side: the standard deviation
    // (8.7) puts the old SD-based detectable effect far above 2%, while the
    // rank interval of the shift is a few tenths of a percent wide.
    std::vector<double> b = {100.00, 100.10, 99.90, 100.20, 99.80, 100.05, 99.95, 100.15, 99.85, 100.12, 99.88, 130.0};
    std::vector<double> c = {100.02, 100.12, 99.92, 100.22, 99.82, 100.07, 99.97, 100.17, 99.87, 100.14, 99.90, 70.0};
    SUBCASE("an interval inside +-threshold is unchanged although the SD-based MDE is above the threshold")
    {
        policy p;
        p.max_cov = 1.0; // the wild runs: the equivalence rule, not max_cov, is under test
        const gate::report r = compare(one({series("task-clock", b, "msec")}), one({series("task-clock", c, "msec")}),
                                       p);
        const auto& cr = counter(r, "task-clock");
        REQUIRE(cr.shift_ci);
        REQUIRE(cr.mde_pct);
        CHECK(*cr.mde_pct > 2.0); // the rule before issue 41 said inconclusive here
        const double lo = cr.shift_ci->first / *cr.baseline.median * 100;
        const double hi = cr.shift_ci->second / *cr.baseline.median * 100;
        CHECK(lo > -2.0);
        CHECK(hi < 2.0);
        CHECK(cr.state == status::unchanged);
        CHECK(cr.reason ==
              fmt::format("interval [{:+.2f}%, {:+.2f}%] lies inside +-2% (p={:.3g})", lo, hi, *cr.p_adjusted));
        CHECK(r.result == verdict::pass);
        CHECK_FALSE(decide_report(r)); // nothing undecided: no advice
    }
    SUBCASE("an interval reaching across the threshold is inconclusive")
    {
        // The same runs 1.5% slower, twenty times noisier: the interval
        // straddles +2%.
        std::vector<double> wide_b, wide_c;
        for (double x : b) wide_b.push_back(100 + (x - 100) * 20);
        for (double x : c) wide_c.push_back((100 + (x - 100) * 20) * 1.005);
        wide_b.back() = 100;
        wide_c.back() = 100.5;
        const gate::report r = compare(one({series("task-clock", wide_b, "msec")}),
                                       one({series("task-clock", wide_c, "msec")}), policy{});
        const auto& cr = counter(r, "task-clock");
        REQUIRE(cr.shift_ci);
        const double hi = cr.shift_ci->second / *cr.baseline.median * 100;
        CHECK(hi > 2.0);
        CHECK(cr.state == status::inconclusive);
        CHECK(cr.reason.starts_with("not significant (p="));
        CHECK(contains(cr.reason, "reaches beyond +-2%: more repetitions or less noise needed"));
        // The report says once what would decide it.
        const auto decide = decide_report(r);
        REQUIRE(decide);
        CHECK(decide->counters == 1);
        REQUIRE(decide->repetitions);
        CHECK(*decide->repetitions == *cr.noise->repetitions_needed);
        CHECK(contains(decide->advice,
                       fmt::format("about {0} repetitions per side (-r {0}) would decide it", *decide->repetitions)));
        CHECK(contains(render_text(r, false), "\nto decide: 1 gated counter undecided: "));
        CHECK(to_json(r)["decide"]["repetitions"] == *decide->repetitions);
    }
    SUBCASE("significant but |delta| below the threshold: unchanged only when the interval is inside too")
    {
        // A real shift of 1.5% (every candidate run 1.5% slower). Quiet:
        // the interval [+1.4%, +1.6%] lies inside +-2%: unchanged, a real
        // but small shift. Noisy: the interval reaches past +2%, so the
        // shift may be as large as the threshold: inconclusive, never
        // unchanged (that rule said "unchanged" for about half of the A/B
        // runs at a shift of exactly the threshold: bench/sim_gate grid).
        std::vector<double> qb, qc, nb, nc;
        for (int i = 0; i < 12; ++i) {
            const double wiggle = (i % 4) * 0.05 - 0.075;
            qb.push_back(100 + wiggle);
            qc.push_back((100 + wiggle) * 1.015);
            const double spread = (i - 5.5) * 0.18;
            nb.push_back(100 + spread);
            nc.push_back((100 + spread) * 1.015 + (i % 2 ? 0.3 : -0.3));
        }
        const gate::report quiet = compare(one({series("task-clock", qb, "msec")}),
                                           one({series("task-clock", qc, "msec")}), policy{});
        const auto& q = counter(quiet, "task-clock");
        CHECK(*q.p_adjusted < 0.05);
        CHECK(q.state == status::unchanged);
        CHECK(q.reason.starts_with("interval [+1."));
        CHECK(contains(q.reason, "a significant shift (p="));
        const gate::report noisy = compare(one({series("task-clock", nb, "msec")}),
                                           one({series("task-clock", nc, "msec")}), policy{});
        const auto& n = counter(noisy, "task-clock");
        REQUIRE(n.delta_pct);
        CHECK(std::abs(*n.delta_pct) < 2.0);
        CHECK(*n.p_adjusted < 0.05);
        CHECK(n.shift_ci->second / *n.baseline.median * 100 > 2.0);
        CHECK(n.state == status::inconclusive);
        CHECK(contains(n.reason, "the shift may be as large as the threshold"));
    }
    SUBCASE("too few samples for an interval at 1 - alpha: never unchanged")
    {
        // 3 vs 3 at alpha 0.05: qwilcox(0.025, 3, 3) = 0, so R's interval
        // [min, max] of the differences covers only 90%: no equivalence.
        policy p;
        p.min_samples = 3;
        p.threshold_pct = 50;
        const gate::report r = compare(one({series("task-clock", {100, 100.1, 100.2}, "msec")}),
                                       one({series("task-clock", {100.05, 100.15, 100.25}, "msec")}), p);
        const auto& cr = counter(r, "task-clock");
        CHECK(cr.state == status::inconclusive);
        CHECK(contains(cr.reason, "3 baseline / 3 candidate samples give no interval at level 0.95"));
    }
}

TEST_CASE("compare: Welch's interval decides equivalence for perf -r aggregates")
{
    // Means 10 and 10.05 of 5 runs each, variance% 1 (stddev of the mean
    // 0.1 and 0.1005): se = sqrt(0.1^2 + 0.1005^2) = 0.1417754, Welch's
    // df = 7.9998, and the t quantile at 0.975 with 8 df is 2.306004 (any
    // table; it moves by 1e-5 between 7.9998 and 8): half-width 0.326935.
    const gate::report r = compare(summary_of_5(10.0, 1.0), summary_of_5(10.05, 1.0), policy{});
    const auto& cr = counter(r, "task-clock");
    REQUIRE(cr.test == method::welch);
    REQUIRE(cr.shift_ci);
    CHECK(cr.shift_ci->first == doctest::Approx(0.05 - 0.326935).epsilon(1e-4));
    CHECK(cr.shift_ci->second == doctest::Approx(0.05 + 0.326935).epsilon(1e-4));
    // [-2.77%, +3.77%] is not inside +-2%; inside +-4%.
    CHECK(cr.state == status::inconclusive);
    policy wide;
    wide.threshold_pct = 4;
    CHECK(counter(compare(summary_of_5(10.0, 1.0), summary_of_5(10.05, 1.0), wide), "task-clock").state ==
          status::unchanged);
}

TEST_CASE("compare: summary-only input uses Welch")
{
    const auto agg = summary_of_5;
    const gate::report r = compare(agg(3.22, 8.23), agg(3.60, 1.0), policy{});
    const auto& c = counter(r, "task-clock");
    CHECK(*c.test == method::welch);
    // scipy.stats.ttest_ind_from_stats(3.22, 0.0823*3.22*sqrt(5), 5, 3.60,
    // 0.01*3.60*sqrt(5), 5, equal_var=False).pvalue (scipy 1.10.1)
    CHECK(*c.p_value == doctest::Approx(0.2259691953469534).epsilon(1e-9));
    CHECK(c.state == status::inconclusive);
    bool warned = false;
    for (const auto& w : r.warnings) warned = warned || w.find("summary-only") != std::string::npos;
    CHECK(warned);

    SUBCASE("without the repetition count the counter is insufficient")
    {
        capture::sample_set b = agg(3.22, 8.23), cc = agg(3.60, 1.0);
        b.benchmarks[0].summary_repeats.reset();
        cc.benchmarks[0].summary_repeats.reset();
        const gate::report r2 = compare(b, cc, policy{});
        CHECK(counter(r2, "task-clock").state == status::insufficient);
        CHECK(counter(r2, "task-clock").reason.find("--repeats") != std::string::npos);
    }
}

TEST_CASE("compare: p-values are adjusted across all gated counters")
{
    // Three gated counters; only "instructions" moves.
    policy p;
    p.counters["a"].gate = true;
    p.counters["b"].gate = true;
    const std::vector<double> other = {100, 100.3, 100.1, 100.7, 100.2, 100.9, 100.4, 100.8, 100.5, 100.6};
    auto base = one({series("instructions", ramp()), series("a", ramp()), series("b", ramp())});
    auto cand = one({series("instructions", ramp(1.1)), series("a", other), series("b", ramp())});
    SUBCASE("holm")
    {
        const gate::report r = compare(base, cand, p);
        const auto& c = counter(r, "instructions");
        CHECK(*c.p_adjusted == doctest::Approx(3 * *c.p_value).epsilon(1e-12));
        CHECK(c.state == status::regression);
    }
    SUBCASE("none leaves p unchanged")
    {
        p.correction = stats::correction::none;
        const gate::report r = compare(base, cand, p);
        const auto& c = counter(r, "instructions");
        CHECK(*c.p_adjusted == *c.p_value);
    }
    SUBCASE("non-gated counters are outside the family")
    {
        p.counters["b"].gate = false;
        const gate::report r = compare(base, cand, p);
        CHECK_FALSE(counter(r, "b").p_adjusted);
        CHECK(*counter(r, "instructions").p_adjusted ==
              doctest::Approx(2 * *counter(r, "instructions").p_value).epsilon(1e-12));
    }
}

TEST_CASE("compare: an exact test that cannot reach alpha/m among m gated counters detects nothing")
{
    // 7 vs 9 samples without ties: the exact test's smallest p is
    // 2 / C(16, 7) = 2 / 11440, which is exactly 0.05 / 286. Among 286 gated
    // counters, Holm multiplies it to 0.050000000000000017, never below
    // alpha: no shift of any size is detectable, and a 10% regression in
    // complete separation must not pass as "unchanged". Among 285 the level
    // 0.05 / 285 is reachable and the gate decides as usual.
    auto run = [](std::size_t gated) {
        std::vector<double> b, c, slow;
        for (std::size_t i = 0; i < 7; ++i) b.push_back(100.0 + 0.02 * static_cast<double>(i));
        for (std::size_t j = 0; j < 9; ++j) c.push_back(100.01 + 0.02 * static_cast<double>(j));
        for (double x : c) slow.push_back(x * 1.1);
        policy p;
        std::vector<capture::counter_series> base, cand;
        for (std::size_t k = 0; k < gated; ++k) {
            const std::string name = "c" + std::to_string(k);
            p.counters[name].gate = true;
            base.push_back(series(name, b));
            cand.push_back(series(name, k == 0 ? slow : c));
        }
        return compare(one(base), one(cand), p);
    };
    SUBCASE("286 gated counters: the shift is inconclusive, with an infinite MDE; the others are unchanged")
    {
        const gate::report r = run(286);
        const auto& moved = counter(r, "c0");
        REQUIRE(moved.test == method::exact);
        CHECK(*moved.p_value == doctest::Approx(2.0 / 11440).epsilon(1e-12));
        CHECK(*moved.p_adjusted >= 0.05);
        CHECK(moved.state == status::inconclusive);
        CHECK(*moved.mde_pct == std::numeric_limits<double>::infinity());
        CHECK(moved.reason.starts_with("|delta| 10.03% >= 2%, but not significant (p=0.05, alpha=0.05) and the "
                                       "interval [+9.97%, +10.10%] reaches beyond +-2%"));
        // Equivalence needs no adjustment for the family (intersection-union,
        // docs/statistics.md "Equivalence"): an interval of +-0.1% inside
        // +-2% is unchanged although no shift was detectable at alpha / 286.
        const auto& same = counter(r, "c1");
        CHECK(*same.mde_pct == std::numeric_limits<double>::infinity());
        CHECK(same.state == status::unchanged);
        CHECK(same.reason.starts_with("interval [-0.0"));
        CHECK(r.result == verdict::inconclusive);
    }
    SUBCASE("285 gated counters: the regression is found")
    {
        const gate::report r = run(285);
        const auto& moved = counter(r, "c0");
        CHECK(*moved.p_adjusted < 0.05);
        CHECK(moved.state == status::regression);
        CHECK(std::isfinite(*counter(r, "c1").mde_pct));
        CHECK(counter(r, "c1").state == status::unchanged);
        CHECK(r.result == verdict::fail);
    }
}

TEST_CASE("compare: history z-score and anomalies")
{
    history_fn hist = [](std::string_view, std::string_view counter) {
        if (counter != "task-clock") return std::vector<double>{};
        return std::vector<double>{100.0, 100.1, 99.9, 100.0, 100.1, 99.9, 100.0, 100.0};
    };
    const gate::report r = compare(one({series("task-clock", ramp())}), one({series("task-clock", ramp(1.01))}),
                                   policy{}, hist);
    const auto& c = counter(r, "task-clock");
    REQUIRE(c.z_score);
    // candidate median 100.45 * 1.01 against mean 100.0, sd 0.07559 (n-1).
    CHECK(*c.z_score == doctest::Approx((100.45 * 1.01 - 100.0) / 0.0755928946018454).epsilon(1e-6));
    CHECK(c.anomaly);
    CHECK(r.result == verdict::pass);

    policy p;
    p.fail_on_anomaly = true;
    const gate::report r2 = compare(one({series("task-clock", ramp())}), one({series("task-clock", ramp(1.01))}), p,
                                    hist);
    CHECK(r2.result == verdict::fail);

    SUBCASE("fewer than history_min points: no z-score")
    {
        history_fn short_hist = [](std::string_view, std::string_view) { return std::vector<double>{1, 2, 3}; };
        const gate::report r3 = compare(one({series("task-clock", ramp())}), one({series("task-clock", ramp())}),
                                        policy{}, short_hist);
        CHECK_FALSE(counter(r3, "task-clock").z_score);
        CHECK_FALSE(counter(r3, "task-clock").anomaly);
    }
}

TEST_CASE("policy files")
{
    SUBCASE("overrides resolve benchmark over counter over defaults")
    {
        const policy p = parse_policy(json::parse(R"({
            "alpha": 0.01, "correction": "bh", "threshold_pct": 5,
            "counters": {"page-faults": {"gate": true, "threshold_pct": 1}},
            "benchmarks": {"parse": {"threshold_pct": 3,
                                     "counters": {"page-faults": {"threshold_pct": 0.5}}}}})"),
                                      "policy.json");
        CHECK(p.alpha == 0.01);
        CHECK(p.correction == stats::correction::bh);
        CHECK(p.resolve("other", "task-clock").threshold_pct == 5);
        CHECK(p.resolve("other", "task-clock").gated);
        CHECK(p.resolve("other", "page-faults").threshold_pct == 1);
        CHECK(p.resolve("other", "page-faults").gated);
        CHECK(p.resolve("parse", "task-clock").threshold_pct == 3);
        CHECK(p.resolve("parse", "page-faults").threshold_pct == 0.5);
        CHECK_FALSE(p.resolve("other", "context-switches").gated);
        CHECK(p.resolve("x", "ipc").direction == capture::better::higher);
    }
    SUBCASE("unknown keys are errors naming the key path")
    {
        CHECK_THROWS_WITH_AS(parse_policy(json::parse(R"({"treshold_pct": 2})"), "p.json"),
                             doctest::Contains("p.json: unknown key 'treshold_pct'"), perfgate::error);
        try {
            parse_policy(json::parse(R"({"counters": {"task-clock": {"gat": true}}})"), "p.json");
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "policy.unknown_key");
            CHECK(std::string(e.what()).find("counters.task-clock.gat") != std::string::npos);
        }
    }
    SUBCASE("wrong types and ranges are errors")
    {
        try {
            parse_policy(json::parse(R"({"alpha": "0.05"})"), "p.json");
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "policy.bad_value");
            CHECK(std::string(e.what()).find("alpha") != std::string::npos);
        }
        CHECK_THROWS_AS(parse_policy(json::parse(R"({"alpha": 0.9})"), "p.json"), perfgate::error);
        CHECK_THROWS_AS(parse_policy(json::parse(R"({"correction": "bonferroni"})"), "p.json"), perfgate::error);
        CHECK_THROWS_AS(parse_policy(json::parse(R"({"min_samples": -1})"), "p.json"), perfgate::error);
        CHECK_THROWS_AS(parse_policy(json::parse(R"({"counters": {"x": {"better": "up"}}})"), "p.json"),
                        perfgate::error);
        CHECK_THROWS_AS(parse_policy(json::parse(R"([1])"), "p.json"), perfgate::error);
    }
    SUBCASE("a missing file names the file")
    {
        CHECK_THROWS_WITH_AS(load_policy("/nonexistent/policy.json"), doctest::Contains("/nonexistent/policy.json"),
                             perfgate::error);
    }
    SUBCASE("round trip through JSON")
    {
        policy p;
        p.counters["x"].threshold_pct = 4;
        p.benchmarks["b"].max_cov = 0.5;
        const policy q = parse_policy(to_json(p), "roundtrip");
        CHECK(q.counters.at("x").threshold_pct == 4);
        CHECK(q.benchmarks.at("b").max_cov == 0.5);
    }
}

TEST_CASE("report JSON follows the contract")
{
    capture::counter_series none = series("cycles", {});
    const gate::report r = compare(one({series("task-clock", ramp(), "msec"), series("instructions", {5000}), none}),
                                   one({series("task-clock", ramp(1.1), "msec"), series("instructions", {5000}), none}),
                                   policy{});
    const json j = to_json(r);
    CHECK(j["schema"] == "perfgate.report/v1");
    CHECK(j["verdict"] == "fail");
    CHECK(j["policy"]["alpha"] == 0.05);
    CHECK(j["policy"]["correction"] == "holm");
    const json& c = j["benchmarks"][0]["counters"][0];
    CHECK(j["benchmarks"][0]["name"] == "default");
    for (const char* key :
         {"name",       "unit",      "better",        "gated",           "status",   "method", "baseline",
          "candidate",  "delta_pct", "shift",         "shift_pct",       "shift_ci", "u",      "p_value",
          "p_adjusted", "mde_pct",   "threshold_pct", "running_pct_min", "z_score",  "anomaly"}) {
        CHECK_MESSAGE(c.contains(key), key);
    }
    for (const char* key : {"n", "mean", "median", "stddev", "cov", "min", "max"}) {
        CHECK_MESSAGE(c["baseline"].contains(key), key);
    }
    CHECK(c["unit"] == "msec");
    CHECK(c["z_score"].is_null());
    const json& det = j["benchmarks"][0]["counters"][1];
    CHECK(det["method"] == "deterministic");
    CHECK(det["p_value"].is_null());
    CHECK(det["u"].is_null());
    const json& uns = j["benchmarks"][0]["counters"][2];
    CHECK(uns["status"] == "unsupported");
    CHECK(uns["baseline"]["median"].is_null());
    CHECK(uns["method"].is_null());

    const gate::report back = report_from_json(j);
    CHECK(back.result == verdict::fail);
    CHECK(to_json(back) == j);

    CHECK_THROWS_AS(report_from_json(json::parse(R"({"schema": "other"})")), perfgate::error);
    CHECK_THROWS_AS(report_from_json(json::parse(R"({"schema": "perfgate.report/v1"})")), perfgate::error);
}

TEST_CASE("renderers")
{
    const gate::report r = compare(one({series("task-clock", ramp(), "msec"), series("page-faults", ramp())}),
                                   one({series("task-clock", ramp(1.1), "msec"), series("page-faults", ramp())}),
                                   policy{});
    SUBCASE("markdown: marker, summary line, gated table, collapsed details")
    {
        markdown_options o;
        o.marker = "<!-- perfgate:sticky -->";
        o.run_url = "https://example.invalid/run/1";
        const std::string md = render_markdown(r, o);
        CHECK(md.rfind("<!-- perfgate:sticky -->\n", 0) == 0);
        CHECK(md.find("**fail**") != std::string::npos);
        CHECK(md.find("**fail** — 1 regression\n") != std::string::npos); // the zero counts left out
        CHECK(md.find("| 🔴 | default | task-clock |") != std::string::npos);
        CHECK(md.find("<details>") != std::string::npos);
        CHECK(md.find("page-faults") > md.find("<details>")); // non-gated only in details
        CHECK(md.find("https://example.invalid/run/1") != std::string::npos);
    }
    SUBCASE("markdown: long reports are truncated under the limit and keep the marker")
    {
        std::vector<capture::counter_series> many;
        for (int i = 0; i < 400; ++i) many.push_back(series("counter-with-a-long-name-" + std::to_string(i), ramp()));
        const gate::report big = compare(one(many), one(many), policy{});
        markdown_options o;
        o.marker = "<!-- perfgate:sticky -->";
        o.max_chars = 4000;
        const std::string md = render_markdown(big, o);
        CHECK(md.size() <= 4000);
        CHECK(md.rfind("<!-- perfgate:sticky -->", 0) == 0);
        CHECK(md.find("truncated") != std::string::npos);
        CHECK(md.find("</details>") != std::string::npos);
    }
    SUBCASE("markdown: user strings are literal text, never links, images or HTML")
    {
        gate::report evil = r;
        evil.benchmarks[0].name = "[click](https://evil.example/x)";
        evil.benchmarks[0].counters[0].name = "![img](x)|*b*_`c`";
        evil.benchmarks[0].counters[0].unit = "<b>ms</b>";
        evil.warnings = {"see <img src=x onerror=alert(1)> --> <details><summary>x</summary>\n# heading"};
        markdown_options o;
        o.marker = "<!-- perfgate-comment: perfgate -->";
        o.run_url = "https://example.invalid/run/1) [x](https://evil.example/y";
        const std::string md = render_markdown(evil, o);
        INFO(md);
        CHECK(md.rfind("<!-- perfgate-comment: perfgate -->\n", 0) == 0);
        CHECK(md.find("\\[click\\]\\(https:\u200b//evil.example/x\\)") != std::string::npos);
        CHECK(md.find("](https://evil") == std::string::npos);
        CHECK(md.find("!\\[img\\]\\(x\\)\\|\\*b\\*\\_\\`c\\`") != std::string::npos);
        CHECK(md.find("&lt;img src=x onerror=alert\\(1\\)&gt;") != std::string::npos);
        CHECK(md.find("&lt;b&gt;ms&lt;/b&gt;") != std::string::npos);
        CHECK(md.find("<img") == std::string::npos);
        CHECK(md.find("<b>") == std::string::npos);
        CHECK(md.find("\n# heading") == std::string::npos);
        // Only our own <details> and the marker's own "-->".
        CHECK(md.find("<details>") == md.rfind("<details>"));
        CHECK(md.find("-->") == md.rfind("-->"));
        CHECK(md.find("-->") < md.find('\n'));
        // Our link stays a link; its destination cannot be closed early.
        CHECK(md.find("[CI run](https://example.invalid/run/1%29%20%5Bx%5D%28https://evil.example/y)") !=
              std::string::npos);
        // Ordinary names read as before.
        CHECK(md.find("page-faults") != std::string::npos);
    }
    SUBCASE("markdown: no mentions, issue links or autolinks from user text")
    {
        // GitHub notifies @name (users, teams), cross-references #N and links
        // bare URLs after rendering, so escaping alone does not stop them.
        gate::report evil = r;
        evil.benchmarks[0].name = "BM_@octocat/@org/team-#12";
        evil.benchmarks[0].counters[0].name = "see www.evil.example or HTTPS://evil.example/a and me@mail.example";
        evil.warnings = {"ping @admins, fixes #3, WWW.x.example, closes GH-12 and gh-7"};
        const std::string md = render_markdown(evil);
        INFO(md);
        const std::string zw = "\u200b";
        for (const std::string_view s : {"@octocat", "@org", "@admins", "@mail", "#12", "#3", "https://", "HTTPS://",
                                         "www.", "WWW.", "GH-12", "gh-7"})
            CHECK_MESSAGE(md.find(s) == std::string::npos, s);
        CHECK(md.find("BM\\_@" + zw + "octocat/@" + zw + "org/team-\\#" + zw + "12") != std::string::npos);
        CHECK(md.find("www" + zw + ".evil.example or HTTPS:" + zw + "//evil.example/a and me@" + zw + "mail.example") !=
              std::string::npos);
        CHECK(md.find("ping @" + zw + "admins, fixes \\#" + zw + "3, WWW" + zw + ".x.example, closes GH-" + zw +
                      "12 and gh-" + zw + "7") != std::string::npos);
        // Text with none of them reads as before; a lone @ or # is left alone.
        gate::report plain = r;
        plain.benchmarks[0].name = "BM_Sort/1024 @ 2 # x";
        CHECK(render_markdown(plain).find("BM\\_Sort/1024 @ 2 \\# x") != std::string::npos);
        // The acceptance note (perfgate accept) renders its reason the same way.
        const std::string note = perfgate::report::render_acceptance_note(
            {1, "abc", "octocat", "fixes GH-12", 0, std::nullopt}, "perfgate");
        CHECK(note.find("GH-12") == std::string::npos);
        CHECK(note.find("fixes GH-" + zw + "12") != std::string::npos);
        // A name that ends in gh followed by -N is not GH-N.
        plain.benchmarks[0].name = "sigh-1 BIGH-2 GH-x";
        CHECK(render_markdown(plain).find("sigh-1 BIGH-2 GH-x") != std::string::npos);
    }
    SUBCASE("text: colour only when asked")
    {
        const std::string plain = render_text(r, false);
        const std::string colour = render_text(r, true);
        CHECK(plain.find("\x1b[") == std::string::npos);
        CHECK(colour.find("\x1b[31m") != std::string::npos);
        CHECK(plain.find("perfgate: fail") == 0);
        CHECK(plain.find("task-clock") != std::string::npos);
    }
}

TEST_CASE("compare: huge but finite values do not abort and overflowing statistics are null")
{
    // perf_csv accepts any finite value (e.g. "1e200" in an uploaded capture).
    // The squares in the variance overflow to +inf; the minimum detectable
    // effect must then be null (inconclusive), not an aborting invariant check.
    std::vector<double> b, c;
    for (double x : ramp()) b.push_back(x * 1e200);
    for (double x : ramp(1.001)) c.push_back(x * 1e200);
    const gate::report r = compare(one({series("task-clock", b, "msec")}), one({series("task-clock", c, "msec")}),
                                   policy{});
    const auto& k = counter(r, "task-clock");
    CHECK_FALSE(k.mde_pct);
    CHECK(k.state == status::inconclusive);
    CHECK(r.result == verdict::inconclusive);
    const json j = to_json(r);
    CHECK(j["benchmarks"][0]["counters"][0]["mde_pct"].is_null());
    CHECK(j["benchmarks"][0]["counters"][0]["baseline"]["stddev"].is_null());
    // A separation big enough to matter is still a regression.
    std::vector<double> slow;
    for (double x : ramp(1.10)) slow.push_back(x * 1e200);
    CHECK(counter(compare(one({series("task-clock", b)}), one({series("task-clock", slow)}), policy{}), "task-clock")
              .state == status::regression);
}

TEST_CASE("compare: a change from a zero baseline median exceeds every threshold")
{
    // delta_pct is undefined (null) when median(B) = 0, but a counter that
    // goes from 0 to something has changed by more than any threshold_pct; it
    // used to be "unchanged" with an invented "|delta| 0.00%".
    SUBCASE("deterministic: 0 page-faults to 40 is a regression")
    {
        policy p;
        p.counters["page-faults"].gate = true;
        const gate::report r = compare(one({series("page-faults", std::vector<double>(5, 0.0))}),
                                       one({series("page-faults", std::vector<double>(5, 40.0))}), p);
        const auto& c = counter(r, "page-faults");
        CHECK(*c.test == method::deterministic);
        CHECK_FALSE(c.delta_pct);
        CHECK(c.state == status::regression);
        CHECK(c.reason.find("0.00%") == std::string::npos);
        CHECK(c.reason.find("zero baseline") != std::string::npos);
        CHECK(r.result == verdict::fail);
        CHECK(to_json(r)["benchmarks"][0]["counters"][0]["delta_pct"].is_null());
    }
    SUBCASE("deterministic: 40 to 0 is an improvement, 0 to 0 unchanged")
    {
        policy p;
        p.counters["page-faults"].gate = true;
        CHECK(counter(compare(one({series("page-faults", {40.0})}), one({series("page-faults", {0.0})}), p),
                      "page-faults")
                  .state == status::improvement);
        CHECK(counter(compare(one({series("page-faults", {0.0})}), one({series("page-faults", {0.0})}), p),
                      "page-faults")
                  .state == status::unchanged);
    }
    SUBCASE("rank test: significant shift away from a zero median is a regression")
    {
        const gate::report r = compare(one({series("task-clock", {-1, -1, 0, 0, 0, 1, 1, 0, 0, 0})}),
                                       one({series("task-clock", ramp(0.05))}), policy{});
        const auto& c = counter(r, "task-clock");
        CHECK(*c.p_adjusted < 0.05);
        CHECK_FALSE(c.delta_pct);
        CHECK(c.state == status::regression);
        CHECK(r.result == verdict::fail);
    }
}

TEST_CASE("compare: summary-only aggregates with 0.00% variance on both sides")
{
    // perf -r N prints variance% with two decimals, so counts that barely
    // vary (instructions, page-faults) show "0.00%". Welch's test has no
    // answer then; the counter used to be "unchanged" with an invented p=1
    // even for a 20% change. Zero spread on both sides is the deterministic
    // rule of docs/statistics.md.
    auto agg = [](double mean, double var_pct) {
        capture::sample_set s = one({series("instructions", {mean})});
        s.benchmarks[0].counters[0].variance_pct = {var_pct};
        s.benchmarks[0].summary_only = true;
        s.benchmarks[0].summary_repeats = 5;
        return s;
    };
    SUBCASE("20% more instructions is a regression")
    {
        const gate::report r = compare(agg(1e9, 0.0), agg(1.2e9, 0.0), policy{});
        const auto& c = counter(r, "instructions");
        REQUIRE(c.test);
        CHECK(*c.test == method::deterministic);
        CHECK_FALSE(c.p_value);
        CHECK(c.state == status::regression);
        CHECK(*c.delta_pct == doctest::Approx(20.0));
        CHECK(r.result == verdict::fail);
    }
    SUBCASE("equal aggregates are unchanged")
    {
        const gate::report r = compare(agg(1e9, 0.0), agg(1e9, 0.0), policy{});
        CHECK(*counter(r, "instructions").test == method::deterministic);
        CHECK(counter(r, "instructions").state == status::unchanged);
    }
    SUBCASE("a standard deviation that overflows gives no test, not an abort")
    {
        // variance% 100 of a mean near DBL_MAX: stddev = 1e308 * sqrt(5) = inf.
        const gate::report r = compare(agg(1e308, 100.0), agg(1.1e308, 100.0), policy{});
        const auto& c = counter(r, "instructions");
        CHECK_FALSE(c.p_value);
        CHECK(c.state == status::inconclusive);
        CHECK(to_json(r)["benchmarks"][0]["counters"][0]["candidate"]["stddev"].is_null());
    }
}

TEST_CASE("compare: max_cov applies to counters with negative values too")
{
    // CoV = stddev / mean is negative for a negative mean; the noise check
    // must compare its magnitude, or a noisy negative-valued counter is
    // "unchanged" where its mirror image is inconclusive.
    std::vector<double> b, c;
    for (int i = 0; i < 50; ++i) {
        b.push_back(100.0 + 20.0 * std::sin(i));
        c.push_back(100.0 + 20.0 * std::sin(i + 0.5));
    }
    auto negate = [](std::vector<double> v) {
        for (double& x : v) x = -x;
        return v;
    };
    policy p;
    p.counters["score"].gate = true;
    p.counters["score"].threshold_pct = 20.0; // so the MDE rule does not decide first
    const gate::report pos = compare(one({series("score", b)}), one({series("score", c)}), p);
    const gate::report neg = compare(one({series("score", negate(b))}), one({series("score", negate(c))}), p);
    const auto& cp = counter(pos, "score");
    const auto& cn = counter(neg, "score");
    REQUIRE(*cp.mde_pct < 20.0);
    CHECK(*cp.baseline.cov > 0.10);
    CHECK(*cn.baseline.cov < -0.10);
    CHECK(cp.state == status::inconclusive);
    CHECK(cn.state == status::inconclusive);
    CHECK(cn.reason.find("coefficient of variation") != std::string::npos);
    CHECK(neg.result == verdict::inconclusive);
}

namespace {

// A report whose task-clock counter carries history context as
// service::compare fills it in.
gate::report with_history_context()
{
    gate::report r = compare(one({series("task-clock", ramp(), "msec"), series("page-faults", ramp())}),
                             one({series("task-clock", ramp(1.1), "msec"), series("page-faults", ramp())}), policy{});
    auto& c = r.benchmarks[0].counters[0];
    REQUIRE(c.name == "task-clock");
    c.open_alerts = std::vector<open_alert>{{12, model::alert_status::acknowledged, 5.1, 40,
                                             "abc1234def5678abc1234def5678abc1234def56"},
                                            {13, model::alert_status::untriaged, std::nullopt, 52, ""}};
    c.band = history_band{99.0, 101.0, 30, 41};
    c.outside_band = true;
    auto& pf = r.benchmarks[0].counters[1];
    pf.open_alerts = std::vector<open_alert>{};
    pf.band = history_band{99.5, 100.5, 8, std::nullopt};
    pf.outside_band = false;
    return r;
}

} // namespace

TEST_CASE("report JSON: history context is optional and round-trips")
{
    SUBCASE("without a store: null")
    {
        const gate::report r = compare(one({series("task-clock", ramp(), "msec")}),
                                       one({series("task-clock", ramp(1.1), "msec")}), policy{});
        const json j = to_json(r);
        const json& c = j["benchmarks"][0]["counters"][0];
        for (const char* key : {"open_alerts", "band", "outside_band"}) {
            CHECK_MESSAGE(c.contains(key), key);
            CHECK_MESSAGE(c[key].is_null(), key);
        }
        CHECK(to_json(report_from_json(j)) == j);
    }
    SUBCASE("with context")
    {
        const json j = to_json(with_history_context());
        CHECK(j["schema"] == "perfgate.report/v1");
        const json& c = j["benchmarks"][0]["counters"][0];
        REQUIRE(c["open_alerts"].size() == 2);
        CHECK(c["open_alerts"][0] == json::parse(R"({"id": 12, "status": "acknowledged", "delta_pct": 5.1,
            "run_id": 40, "git_sha": "abc1234def5678abc1234def5678abc1234def56"})"));
        CHECK(c["open_alerts"][1]["delta_pct"].is_null());
        CHECK(c["band"] == json::parse(R"({"lo": 99.0, "hi": 101.0, "n": 30, "since_run": 41})"));
        CHECK(c["outside_band"] == true);
        const json& pf = j["benchmarks"][0]["counters"][1];
        CHECK(pf["open_alerts"] == json::array());
        CHECK(pf["band"]["since_run"].is_null());
        CHECK(pf["outside_band"] == false);

        const gate::report back = report_from_json(j);
        const counter_report& bc = back.benchmarks[0].counters[0];
        REQUIRE(bc.open_alerts);
        REQUIRE(bc.open_alerts->size() == 2);
        CHECK(bc.open_alerts->front().state == model::alert_status::acknowledged);
        CHECK(bc.open_alerts->front().git_sha == "abc1234def5678abc1234def5678abc1234def56");
        CHECK_FALSE(bc.open_alerts->back().delta_pct);
        REQUIRE(bc.band);
        CHECK(bc.band->since_run == 41);
        CHECK(bc.outside_band == true);
        REQUIRE(back.benchmarks[0].counters[1].open_alerts);
        CHECK(back.benchmarks[0].counters[1].open_alerts->empty());
        CHECK(to_json(back) == j);
    }
    SUBCASE("a report stored before the fields existed reads as without context")
    {
        json j = to_json(with_history_context());
        for (auto& c : j["benchmarks"][0]["counters"]) {
            c.erase("open_alerts");
            c.erase("band");
            c.erase("outside_band");
        }
        const gate::report back = report_from_json(j);
        for (const auto& c : back.benchmarks[0].counters) {
            CHECK_FALSE(c.open_alerts);
            CHECK_FALSE(c.band);
            CHECK_FALSE(c.outside_band);
        }
    }
    SUBCASE("malformed context is a bad report")
    {
        json j = to_json(with_history_context());
        j["benchmarks"][0]["counters"][0]["open_alerts"][0]["status"] = "closed";
        CHECK_THROWS_WITH_AS(report_from_json(j), doctest::Contains("unknown alert status 'closed'"), perfgate::error);
        j = to_json(with_history_context());
        j["benchmarks"][0]["counters"][0]["band"] = json::object({{"lo", 1}});
        CHECK_THROWS_WITH_AS(report_from_json(j), doctest::Contains("report JSON"), perfgate::error);
        j = to_json(with_history_context());
        j["benchmarks"][0]["counters"][0]["open_alerts"] = "none";
        CHECK_THROWS_WITH_AS(report_from_json(j), doctest::Contains("report JSON"), perfgate::error);
    }
}

TEST_CASE("renderers: history context")
{
    const gate::report r = with_history_context();
    SUBCASE("markdown: a line per open alert and per candidate outside its band")
    {
        const std::string md = render_markdown(r);
        INFO(md);
        CHECK(md.find("- ⚠️ default / task-clock: open alert 12 on this series \\(acknowledged\\): +5.10% since "
                      "abc1234 \\(run 40\\)\n") != std::string::npos);
        CHECK(md.find("- ⚠️ default / task-clock: open alert 13 on this series: — since run 52\n") !=
              std::string::npos);
        CHECK(md.find("above the baseline's recent band \\[99.00 ms, 101.0 ms\\] \\(30 runs since the change at run "
                      "41\\)\n") != std::string::npos);
        // Above the collapsed details, and nothing for a counter inside its band.
        CHECK(md.find("open alert 12") < md.find("<details>"));
        // (ramp() drifts, so both counters have a noise line in the details.)
        CHECK(md.find("- ⚠️ default / page-faults") == std::string::npos);
        // "#12" would link the repository's issue 12.
        CHECK(md.find("#12") == std::string::npos);
    }
    SUBCASE("markdown: an ungated counter's history is in the details, not above them")
    {
        gate::report quiet = r;
        auto& pf = quiet.benchmarks[0].counters[1];
        REQUIRE_FALSE(pf.gated);
        pf.outside_band = true;
        const std::string md = render_markdown(quiet);
        INFO(md);
        const auto line = md.find("- default / page-faults: candidate ");
        REQUIRE(line != std::string::npos);
        CHECK(line > md.find("<details>"));
        CHECK(md.find("**Other history** (ungated counters") < line);
        CHECK(md.find("- ⚠️ default / page-faults") == std::string::npos);
        // The text report keeps every line under its counter.
        CHECK(render_text(quiet, false).find("outside the baseline's recent band [99.50, 100.50]") !=
              std::string::npos);
    }
    SUBCASE("markdown: stored text is escaped")
    {
        gate::report evil = r;
        evil.benchmarks[0].counters[0].open_alerts->front().git_sha = "<b>(y)";
        const std::string md = render_markdown(evil);
        CHECK(md.find("since &lt;b&gt;\\(y\\) \\(run 40\\)") != std::string::npos);
        CHECK(md.find("<b>") == std::string::npos);
    }
    SUBCASE("markdown: at most 20 history lines")
    {
        gate::report many = r;
        auto& alerts = *many.benchmarks[0].counters[0].open_alerts;
        for (std::int64_t i = 0; i < 30; ++i) alerts.push_back({100 + i, model::alert_status::untriaged, 1.0, i, ""});
        const std::string md = render_markdown(many);
        CHECK(md.find("open alert 117 ") != std::string::npos);
        CHECK(md.find("open alert 118 ") == std::string::npos);
        CHECK(md.find("- … 13 more: see the JSON report") != std::string::npos);
    }
    SUBCASE("none without context")
    {
        const gate::report plain = compare(one({series("task-clock", ramp(), "msec")}),
                                           one({series("task-clock", ramp(1.1), "msec")}), policy{});
        CHECK(render_markdown(plain).find("open alert") == std::string::npos);
        CHECK(render_text(plain, false).find("open alert") == std::string::npos);
    }
    SUBCASE("text")
    {
        const std::string text = render_text(r, false);
        CHECK(text.find("! open alert 12 on this series (acknowledged): +5.10% since abc1234 (run 40)\n") !=
              std::string::npos);
        CHECK(text.find("! candidate ") != std::string::npos);
        CHECK(text.find("outside the baseline's recent band [99, 101]") != std::string::npos);
    }
}

TEST_CASE("compare: derived ratios and statistics that overflow are absent, never an abort")
{
    // Finite inputs an upload may hold: instructions 1e300 over cycles 1e-10
    // overflows ipc to +inf, which the statistics' invariants reject.
    capture::perf_capture cap;
    cap.events = {{"instructions", ""}, {"cycles", ""}, {"task-clock", "msec"}};
    for (int i = 0; i < 6; ++i) {
        cap.runs.push_back({capture::reading{1e300 * (1 + i * 0.01), 100.0, std::nullopt},
                            capture::reading{1e-10, 100.0, std::nullopt}, reading{10.0 + i, 100.0, std::nullopt}});
    }
    const capture::benchmark_samples b = capture::from_capture(cap, "hostile");
    const capture::counter_series* ipc = b.find("ipc");
    REQUIRE(ipc != nullptr);
    CHECK(ipc->values.empty());
    CHECK(ipc->absent == 6);
    capture::sample_set base, cand;
    base.benchmarks.push_back(b);
    cand.benchmarks.push_back(b);
    const gate::report r = compare(base, cand, policy{});
    CHECK(counter(r, "ipc").state == status::unsupported);
    CHECK(counter(r, "task-clock").state != status::regression);

    // Values at both ends of the double range: differences overflow.
    std::vector<double> wide = {-1.7e308, 1.7e308, -1.6e308, 1.6e308, -1.5e308, 1.5e308, 0, 1, 2, 3};
    const gate::report w = compare(one({series("task-clock", wide, "msec")}), one({series("task-clock", wide, "msec")}),
                                   policy{});
    CHECK(counter(w, "task-clock").state != status::regression);
    (void)to_json(w);
    // The same under the sequential rule (a policy a client may send).
    policy seq;
    seq.sequential = sequential_rule{};
    const gate::report ws = compare(one({series("task-clock", wide, "msec")}),
                                    one({series("task-clock", wide, "msec")}), seq);
    CHECK(counter(ws, "task-clock").state != status::regression);
    (void)to_json(ws).dump();
}

namespace {

// A regressed report with both attribution sections and an error, as
// `perfgate run` fills it (runner/attribution.hpp; perf from --profile).
gate::report with_attribution()
{
    gate::report r = compare(one({series("instructions", {1000.0})}), one({series("instructions", {3000.0})}),
                             policy{});
    attribution a;
    callgrind_attribution cg;
    cg.total_before = 1000;
    cg.total_after = 3000;
    cg.top = {{"__memcpy_avx_unaligned_erms", "", 0, 1800, 1800, 0.9, std::nullopt, std::nullopt},
              {"checksum(std::vector<int, std::allocator<int> >)", "tests/profile_vector.cpp", 600, 800, 200, 0.1,
               std::nullopt, std::nullopt}};
    a.callgrind = cg;
    perf_attribution p;
    p.event = "cpu-clock";
    p.executions = 5;
    p.samples_before = 400;
    p.samples_after = 1200;
    p.top = {{"memcpy", "/lib/libc.so.6", 10, 700, 690, 0.8, std::pair{40.0, 60.0}, true},
             {"main|<b>", "", 5, 7, 2, 0.01, std::pair{-1.5, 2.0}, false}};
    p.flame_graph = "flame.svg";
    a.perf = p;
    a.errors.push_back({"perf", "profile.bad_perf_script", "perf.script:3: a stack frame outside a sample"});
    r.benchmarks[0].attribution_info = a;
    return r;
}

} // namespace

TEST_CASE("report JSON: attribution follows the contract and round-trips")
{
    const gate::report r = with_attribution();
    const json j = to_json(r);
    const json& a = j["benchmarks"][0]["attribution"];
    CHECK(a["callgrind"] == json::parse(R"j({"event": "Ir", "total_before": 1000.0, "total_after": 3000.0, "top": [
        {"name": "__memcpy_avx_unaligned_erms", "file": "", "before": 0.0, "after": 1800.0, "delta": 1800.0, "share": 0.9},
        {"name": "checksum(std::vector<int, std::allocator<int> >)", "file": "tests/profile_vector.cpp",
         "before": 600.0, "after": 800.0, "delta": 200.0, "share": 0.1}]})j"));
    CHECK(a["perf"]["event"] == "cpu-clock");
    CHECK(a["perf"]["executions"] == 5);
    CHECK(a["perf"]["flame_graph"] == "flame.svg");
    CHECK(a["perf"]["top"][0]["interval"] == json::array({40.0, 60.0}));
    CHECK(a["perf"]["top"][1]["significant"] == false);
    CHECK(a["errors"] == json::parse(R"([{"source": "perf", "id": "profile.bad_perf_script",
        "message": "perf.script:3: a stack frame outside a sample"}])"));

    const gate::report back = report_from_json(j);
    REQUIRE(back.benchmarks[0].attribution_info);
    const attribution& ba = *back.benchmarks[0].attribution_info;
    REQUIRE(ba.callgrind);
    CHECK(ba.callgrind->top[1].file == "tests/profile_vector.cpp");
    CHECK_FALSE(ba.callgrind->top[0].interval);
    REQUIRE(ba.perf);
    CHECK(ba.perf->top[0].interval == std::pair{40.0, 60.0});
    CHECK(ba.perf->top[0].significant == true);
    CHECK(to_json(back) == j);

    SUBCASE("absent when nothing was profiled; optional members absent when empty")
    {
        const json plain = to_json(compare(one({series("instructions", {1.0})}), one({series("instructions", {1.0})}),
                                           policy{}));
        CHECK_FALSE(plain["benchmarks"][0].contains("attribution"));
        CHECK_FALSE(report_from_json(plain).benchmarks[0].attribution_info);
        attribution only_errors;
        only_errors.errors.push_back({"callgrind", "profile.bad_callgrind", "x"});
        const json e = to_json(only_errors);
        CHECK_FALSE(e.contains("callgrind"));
        CHECK_FALSE(e.contains("perf"));
        CHECK(to_json(attribution_from_json(e)) == e);
        CHECK(to_json(attribution{}) == json::object());
        // A callgrind row has neither interval nor significant; a perf
        // section without a flame graph has no flame_graph.
        CHECK_FALSE(a["callgrind"]["top"][0].contains("interval"));
        CHECK_FALSE(a["callgrind"]["top"][0].contains("significant"));
    }
    SUBCASE("malformed attribution is a bad report")
    {
        json bad = j;
        bad["benchmarks"][0]["attribution"]["callgrind"].erase("total_after");
        CHECK_THROWS_WITH_AS(report_from_json(bad), doctest::Contains("report JSON: attribution"), perfgate::error);
        bad = j;
        bad["benchmarks"][0]["attribution"]["perf"]["top"][0]["interval"] = json::array({1.0});
        CHECK_THROWS_WITH_AS(report_from_json(bad), "report JSON: attribution row 'interval' is not [lo, hi]",
                             perfgate::error);
        bad = j;
        bad["benchmarks"][0]["attribution"] = "none";
        CHECK_THROWS_WITH_AS(report_from_json(bad), "report JSON: 'attribution' is not an object", perfgate::error);
    }
}

TEST_CASE("renderers: attribution")
{
    const gate::report r = with_attribution();
    SUBCASE("text: callgrind rows, significant perf rows, the hidden count, errors")
    {
        const std::string text = render_text(r, false);
        INFO(text);
        CHECK(text.find("  where: callgrind, exclusive Ir per function: total 1000 → 3000\n") != std::string::npos);
        CHECK(text.find("+1800   +90.0%  0 → 1800  __memcpy_avx_unaligned_erms\n") != std::string::npos);
        CHECK(text.find("checksum(std::vector<int, std::allocator<int> >)  (tests/profile_vector.cpp)\n") !=
              std::string::npos);
        CHECK(text.find("  where: perf record, cpu-clock self samples per function (5 executions per side): total "
                        "400 → 1200\n") != std::string::npos);
        CHECK(text.find("self share [+40.00, +60.00] pp  memcpy\n") != std::string::npos);
        CHECK(text.find("main|<b>") == std::string::npos);
        CHECK(text.find("(1 more within the noise, not shown)") != std::string::npos);
        CHECK(text.find("differential flame graph: flame.svg") != std::string::npos);
        CHECK(text.find("where: perf attribution failed: perf.script:3: a stack frame outside a sample") !=
              std::string::npos);
    }
    SUBCASE("markdown: a collapsed section per regressed benchmark, escaped, with the artifacts link")
    {
        markdown_options mo;
        mo.artifacts_url = "https://github.example/o/r/actions/runs/7#artifacts";
        mo.artifact_name = "perfgate-artifacts";
        const std::string md = render_markdown(r, mo);
        INFO(md);
        const auto where = md.find("<details><summary>Where did it come from</summary>");
        REQUIRE(where != std::string::npos);
        // Before the counters' details, after the verdict table.
        CHECK(where < md.find("<details><summary>All counters"));
        CHECK(md.find("| function | before | after | Δ | share of the change |") > where);
        CHECK(md.find("| \\_\\_memcpy\\_avx\\_unaligned\\_erms | 0 | 1,800 | +1,800 | +90.0% |") != std::string::npos);
        CHECK(md.find("| memcpy | 10 | 700 | +690 | [+40.00, +60.00] pp | yes |") != std::string::npos);
        CHECK(md.find("_1 more symbol changed within the noise: not shown._") != std::string::npos);
        CHECK(md.find("main\\|&lt;b&gt;") == std::string::npos); // hidden (not significant)
        CHECK(md.find("Raw callgrind profiles, perf's folded stacks, differential flame graphs and attribution.json: "
                      "`perfgate-artifacts` in the [workflow artifacts]"
                      "(https://github.example/o/r/actions/runs/7#artifacts).") != std::string::npos);
        CHECK(md.find("- ⚠️ default: perf attribution failed:") != std::string::npos);
    }
    SUBCASE("markdown: nothing without attribution; an empty diff says so")
    {
        gate::report plain = r;
        plain.benchmarks[0].attribution_info.reset();
        CHECK(render_markdown(plain).find("Where did it come from") == std::string::npos);
        gate::report aa = r;
        aa.benchmarks[0].attribution_info->perf.reset();
        aa.benchmarks[0].attribution_info->errors.clear();
        aa.benchmarks[0].attribution_info->callgrind->top.clear();
        CHECK(render_markdown(aa).find("_No function's cost changed._") != std::string::npos);
        CHECK(render_text(aa, false).find("    no function's cost changed\n") != std::string::npos);
        gate::report tiny = r;
        tiny.benchmarks[0].attribution_info->callgrind->top[1].share = 0.0001;
        CHECK(render_markdown(tiny).find("| +200 | +<0.1% |") != std::string::npos);
    }
    SUBCASE("markdown: long names are cut, and the section never pushes the comment over its limit")
    {
        gate::report big = r;
        big.benchmarks[0].attribution_info->callgrind->top[0].name = std::string(5000, 'x');
        const std::string md = render_markdown(big);
        CHECK(md.find(std::string(157, 'x') + "...") != std::string::npos);
        CHECK(md.find(std::string(158, 'x')) == std::string::npos);
        markdown_options small;
        small.max_chars = 1500;
        const std::string cut = render_markdown(r, small);
        CHECK(cut.size() <= 1500);
        CHECK(cut.find("Where did it come from") == std::string::npos);
    }
}

namespace {

std::string dump_of(const gate::report& r) { return to_json(r).dump(-1, ' ', false, json::error_handler_t::replace); }

// to_json_text is to_json's dump, with and without an id, and the id's
// member belongs at id_at of the text without one.
void check_text_is_dump(gate::report r)
{
    r.comparison_id.reset();
    std::size_t id_at = 0;
    const std::string text = to_json_text(r, &id_at);
    CHECK(text == dump_of(r));
    r.comparison_id = 9'007'199'254'740'993;
    const std::string with_id = to_json_text(r);
    CHECK(with_id == dump_of(r));
    CHECK(std::string(text).insert(id_at, ",\"comparison_id\":9007199254740993") == with_id);
}

} // namespace

TEST_CASE("derive_series: reports are the same with each series's summary and shape precomputed")
{
    // The service derives a cached run's summaries and noise shapes once
    // (derive_series); compare() must then write the very report it writes
    // from the values alone, for every kind of counter: rank-tested (noisy,
    // bimodal, drifting), deterministic, one-sided, too few samples, Welch.
    std::vector<double> bimodal, drifting;
    std::uint64_t state = 11;
    for (int i = 0; i < 30; ++i) {
        bimodal.push_back(100 + 5 * perfgate::test::lcg_uniform(state) + (i % 3 ? 40 : 0));
        drifting.push_back(100 + 2 * perfgate::test::lcg_uniform(state) + 1.5 * i);
    }
    auto derived = [](capture::sample_set s) {
        for (auto& b : s.benchmarks) derive_series(b);
        return s;
    };
    const capture::sample_set base = one({series("task-clock", ramp(), "msec"), series("cycles:u", bimodal),
                                          series("instructions", ramp(1, 30)), series("only-base", ramp()),
                                          series("one", {1.0})});
    const capture::sample_set cand = one({series("task-clock", ramp(1.1), "msec"), series("cycles:u", drifting),
                                          series("instructions", ramp(1, 30)), series("one", {2.0})});
    policy seq;
    seq.sequential = sequential_rule{};
    for (const policy& p : {policy{}, seq}) {
        const std::string plain = to_json_text(compare(base, cand, p));
        CHECK(to_json_text(compare(derived(base), derived(cand), p)) == plain);
        CHECK(to_json_text(compare(derived(base), cand, p)) == plain); // one side prepared
    }
    const capture::sample_set sb = summary_of_5(3.22, 8.23), sc = summary_of_5(3.60, 1.0);
    CHECK(to_json_text(compare(derived(sb), derived(sc), policy{})) == to_json_text(compare(sb, sc, policy{})));

    // Every series is prepared: the shape only where compare can test ranks.
    const capture::sample_set d = derived(base);
    for (const auto& c : d.benchmarks[0].counters) {
        REQUIRE(c.derived);
        CHECK(c.derived->summary.n == c.values.size());
        CHECK(c.derived->shape.has_value());
    }
    const capture::sample_set ds = derived(sb);
    REQUIRE(ds.benchmarks[0].counters[0].derived);
    CHECK_FALSE(ds.benchmarks[0].counters[0].derived->shape.has_value());
    // The precomputed values are used, not recomputed: a planted summary shows.
    capture::sample_set planted = derived(base);
    auto fake = std::make_shared<series_derived>(*planted.benchmarks[0].counters[0].derived);
    fake->summary.max = 12345.0;
    planted.benchmarks[0].counters[0].derived = fake;
    CHECK(*counter(compare(planted, cand, policy{}), "task-clock").baseline.max == 12345.0);
}

TEST_CASE("report JSON: to_json_text writes to_json's dump byte for byte")
{
    SUBCASE("reports as compare makes them")
    {
        std::vector<double> noisy_b, noisy_c;
        std::uint64_t state = 7;
        for (int i = 0; i < 30; ++i) {
            noisy_b.push_back(100 + 20 * perfgate::test::lcg_uniform(state) + (i % 2 ? 30 : 0));
            noisy_c.push_back(103 + 20 * perfgate::test::lcg_uniform(state) + 0.5 * i);
        }
        policy overrides;
        overrides.counters["cycles:u"] = counter_override{true, 2.5, 0.1, capture::better::higher, 7};
        overrides.counters["a"] = counter_override{false, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
        benchmark_override bo;
        bo.threshold_pct = 3;
        bo.counters["task-clock"] = counter_override{std::nullopt, 1.0, std::nullopt, capture::better::lower,
                                                     std::nullopt};
        overrides.benchmarks["default"] = bo;
        policy seq;
        seq.sequential = sequential_rule{};
        for (const policy& p : {policy{}, overrides, seq}) {
            CAPTURE(to_json(p).dump());
            check_text_is_dump(compare(one({series("task-clock", ramp(), "msec"), series("instructions", ramp(1, 30)),
                                            series("cycles:u", noisy_b)}),
                                       one({series("task-clock", ramp(1.1), "msec"),
                                            series("instructions", ramp(1, 30)), series("cycles:u", noisy_c)}),
                                       p));
            // Null statistics: one-sided counters, huge values, too few samples.
            std::vector<double> huge_b, huge_c;
            for (double x : ramp()) huge_b.push_back(x * 1e200);
            for (double x : ramp(1.001)) huge_c.push_back(x * 1e200);
            check_text_is_dump(
                compare(one({series("task-clock", huge_b, "msec"), series("only-base", ramp()), series("one", {1.0})}),
                        one({series("task-clock", huge_c, "msec"), series("one", {2.0})}), p));
        }
        // Welch on summary-only input.
        check_text_is_dump(compare(summary_of_5(3.22, 8.23), summary_of_5(3.60, 1.0), policy{}));
    }
    SUBCASE("history context, attribution, sequential looks")
    {
        check_text_is_dump(with_history_context());
        check_text_is_dump(with_attribution());
        gate::report r = with_history_context();
        r.benchmarks[0].baseline_run = -5;
        r.benchmarks[0].candidate_run = std::numeric_limits<std::int64_t>::max();
        r.benchmarks[0].counters[0].sequential = sequential_report{
            3, 5, 20, 0.01, 0.002, 0.3, std::pair{-1.5, 2.25}, true, 0.01};
        r.benchmarks[0].counters[1].sequential = sequential_report{1,     1,   10, 0.05, 0.05, 0.5, std::nullopt,
                                                                   false, 0.05};
        r.benchmarks.push_back(r.benchmarks[0]);
        r.benchmarks.back().name = "second";
        r.benchmarks.back().baseline_run.reset();
        check_text_is_dump(r);
    }
    SUBCASE("strings JSON escapes, invalid UTF-8, and every kind of number")
    {
        gate::report r = with_history_context();
        r.warnings = {"",
                      "plain",
                      "quote \" and backslash \\",
                      "tab\tnewline\n\r\b\f",
                      "\x01\x1f\x7f",
                      "µs → ✓ 日本",
                      "invalid \xff\xfe UTF-8 \xc3",
                      "truncated \xe2\x82"};
        auto& c = r.benchmarks[0].counters[0];
        c.name = "cycles:u/\"x\"";
        c.unit = "µs";
        c.reason = "a\\b";
        c.noise = noise_diagnosis{true,
                                  std::nullopt,
                                  side_noise{0.05, 0.04, true, -0.3, 0.001, true},
                                  side_noise{},
                                  std::size_t{120},
                                  true,
                                  "advice with \"quotes\"\n",
                                  "executions",
                                  std::numeric_limits<double>::quiet_NaN()};
        c.baseline.n = std::numeric_limits<std::size_t>::max();
        c.threshold_pct = std::numeric_limits<double>::quiet_NaN();
        c.p_value = std::numeric_limits<double>::infinity();
        c.u = -std::numeric_limits<double>::infinity();
        check_text_is_dump(r);
        // Doubles of every magnitude: nlohmann's shortest round-trip digits.
        std::uint64_t state = 11;
        const double fixed[] = {0.0,           -0.0,
                                0.1,           1.0 / 3,
                                5e-324,        2.2250738585072014e-308,
                                1e-7,          1e-5,
                                1e15,          1e16,
                                1e21,          1.7976931348623157e308,
                                100.0,         -2.5,
                                123456789.125, 9007199254740993.0};
        for (int round = 0; round < 200; ++round) {
            auto next = [&](int i) {
                if (round == 0) return fixed[static_cast<std::size_t>(i) % std::size(fixed)];
                const double mantissa = perfgate::test::lcg_uniform(state) - 0.5;
                const int exponent = static_cast<int>(perfgate::test::lcg_uniform(state) * 80) - 40;
                return mantissa * std::pow(10.0, exponent);
            };
            int i = 0;
            for (auto* side : {&c.baseline, &c.candidate}) {
                side->mean = next(i++);
                side->median = next(i++);
                side->stddev = next(i++);
                side->cov = next(i++);
                side->min = next(i++);
                side->max = next(i++);
            }
            c.delta_pct = next(i++);
            c.shift = next(i++);
            c.shift_pct = next(i++);
            const double ci_lo = next(i++), ci_hi = next(i++);
            c.shift_ci = std::pair{ci_lo, ci_hi};
            c.mde_pct = next(i++);
            c.z_score = next(i++);
            const double band_lo = next(i++), band_hi = next(i++);
            c.band = history_band{band_lo, band_hi, 3, std::nullopt};
            const std::string text = to_json_text(r);
            REQUIRE(text == dump_of(r));
        }
    }
    SUBCASE("a key out of order is a bug (an internal check aborts), not a silently different text")
    {
        for (const char* k : {"a", "b"}) {
            const pid_t pid = fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                std::string out;
                json_writer w(out);
                w.begin_object().member("b", 1).key(k);
                _exit(0);
            }
            int status = 0;
            REQUIRE(waitpid(pid, &status, 0) == pid);
            CHECK(WIFSIGNALED(status));
            CHECK(WTERMSIG(status) == SIGABRT);
        }
        std::string out;
        json_writer w(out);
        w.begin_object().member("a", 1).member("b", "x").key("c").begin_array().null().boolean(false).end_array();
        w.end_object();
        CHECK(out == R"({"a":1,"b":"x","c":[null,false]})");
    }
}

TEST_CASE("compare: an instruction count and a time counter that move apart are reported")
{
    // A vectorised loop: more instructions, less time (issue 29's lz4 case).
    const gate::report r = compare(one({series("instructions", ramp()), series("task-clock", ramp(), "msec")}),
                                   one({series("instructions", ramp(1.2)), series("task-clock", ramp(0.8), "msec")}),
                                   policy{});
    REQUIRE(counter(r, "instructions").state == status::regression);
    REQUIRE(counter(r, "task-clock").state == status::improvement);
    const auto& b = r.benchmarks[0];
    REQUIRE(b.count_vs_time.size() == 1);
    const auto& d = b.count_vs_time[0];
    CHECK(d.count_counter == "instructions");
    CHECK(d.time_counter == "task-clock");
    CHECK(d.count_state == status::regression);
    CHECK(d.time_state == status::improvement);
    CHECK(d.count_delta_pct == doctest::Approx(*counter(r, "instructions").delta_pct));
    CHECK(d.time_delta_pct == doctest::Approx(*counter(r, "task-clock").delta_pct));
    // The verdict still follows the gated counters: the report explains it.
    CHECK(r.result == verdict::fail);

    SUBCASE("in every rendering")
    {
        const json j = to_json(r);
        json expected = json::parse(R"([{"count": "instructions", "count_status": "regression",
            "time": "task-clock", "time_status": "improvement"}])");
        expected[0]["count_delta_pct"] = d.count_delta_pct;
        expected[0]["time_delta_pct"] = d.time_delta_pct;
        CHECK(j["benchmarks"][0]["count_vs_time"] == expected);
        check_text_is_dump(r);
        const gate::report back = report_from_json(j);
        REQUIRE(back.benchmarks[0].count_vs_time.size() == 1);
        CHECK(back.benchmarks[0].count_vs_time[0].time_state == status::improvement);
        CHECK(to_json(back) == j);
        const std::string text = render_text(r, false);
        CHECK(text.find("! instructions +20.00% (regression) but task-clock -20.00% (improvement): an instruction "
                        "count only stands in for time") != std::string::npos);
        const std::string md = render_markdown(r);
        const auto line = md.find("- ⚠️ default: instructions +20.00% \\(regression\\) but task-clock");
        CHECK(line != std::string::npos);
        CHECK(line < md.find("<details>"));
    }
    SUBCASE("a malformed entry is a bad report naming the field")
    {
        json j = to_json(r);
        j["benchmarks"][0]["count_vs_time"][0]["time_status"] = "faster";
        CHECK_THROWS_WITH_AS(report_from_json(j), doctest::Contains("time_status"), perfgate::error);
    }
    SUBCASE("nothing when they agree, or when one did not move beyond the test")
    {
        const gate::report same = compare(
            one({series("instructions", ramp()), series("task-clock", ramp(), "msec")}),
            one({series("instructions", ramp(1.2)), series("task-clock", ramp(1.2), "msec")}), policy{});
        CHECK(same.benchmarks[0].count_vs_time.empty());
        CHECK_FALSE(to_json(same)["benchmarks"][0].contains("count_vs_time"));
        const gate::report flat = compare(
            one({series("instructions", ramp()), series("task-clock", ramp(), "msec")}),
            one({series("instructions", ramp(1.2)), series("task-clock", ramp(), "msec")}), policy{});
        CHECK(flat.benchmarks[0].count_vs_time.empty());
    }
}

namespace {

// 20 consecutive baseline-run medians around `level`, spread by `spread_pct`
// session effects (a fixed pattern), oldest first.
std::vector<double> session_history(double level, double spread_pct)
{
    static constexpr double effects[] = {0.9,  -1.4, 0.3, 1.8,  -0.6, -1.9, 1.1,  0.2, -0.8, 1.5,
                                         -1.1, 0.6,  1.9, -0.2, -1.6, 0.8,  -0.4, 1.3, -1.3, 0.1};
    std::vector<double> h;
    for (const double e : effects) h.push_back(level * (1 + e * spread_pct / 100));
    return h;
}

gate::pairing_fn apart()
{
    return [](std::string_view) { return std::optional<gate::pairing>(gate::pairing{false, {}}); };
}

} // namespace

TEST_CASE("compare: runs measured apart are judged by the between-run test, coherently with the other rules")
{
    // Two sessions 3% apart, each with +-0.5% within-run spread: the rank
    // test alone calls it a regression.
    const auto b = one({series("task-clock", ramp(1.0), "msec"), series("instructions", {5e6, 5e6, 5e6})});
    const auto c = one({series("task-clock", ramp(1.03), "msec"), series("instructions", {5e6, 5e6, 5e6})});
    const gate::report interleaved = compare(b, c, policy{});
    REQUIRE(counter(interleaved, "task-clock").state == status::regression);
    CHECK_FALSE(interleaved.benchmarks[0].interleaved.has_value());
    CHECK_FALSE(counter(interleaved, "task-clock").between_runs.has_value());

    SUBCASE("declared interleaved: the same report, marked so")
    {
        const gate::report marked = compare(b, c, policy{}, {}, [](std::string_view) {
            return std::optional<gate::pairing>(gate::pairing{});
        });
        CHECK(marked.benchmarks[0].interleaved == true);
        CHECK(counter(marked, "task-clock").state == status::regression);
        CHECK(counter(marked, "task-clock").p_adjusted == counter(interleaved, "task-clock").p_adjusted);
        CHECK_FALSE(counter(marked, "task-clock").between_runs.has_value());
    }
    SUBCASE("no history: tested counters are inconclusive with the reason; exact counts keep the deterministic rule")
    {
        const gate::report r = compare(b, c, policy{}, {}, apart());
        CHECK(r.benchmarks[0].interleaved == false);
        CHECK(r.result == verdict::inconclusive);
        const auto& tc = counter(r, "task-clock");
        CHECK(tc.state == status::inconclusive);
        CHECK(tc.reason == "not measured interleaved, and there is no history of consecutive baseline runs (no "
                           "store) to judge between-run variation: measure baseline and candidate in one perfgate "
                           "run");
        REQUIRE(tc.between_runs);
        CHECK(tc.between_runs->history_runs == 0);
        CHECK_FALSE(tc.between_runs->p_value.has_value());
        REQUIRE(tc.noise);
        CHECK_FALSE(tc.noise->repetitions_needed.has_value());
        CHECK(tc.noise->advice.find("one perfgate run") != std::string::npos);
        const auto& ins = counter(r, "instructions");
        CHECK(ins.state == status::unchanged);
        REQUIRE(ins.test);
        CHECK(*ins.test == method::deterministic);
    }
    SUBCASE("history with session effects of 1.5%: the 3% shift is within them, not a regression")
    {
        const history_fn hist = [](std::string_view, std::string_view counter) {
            return counter == "task-clock" ? session_history(*perfgate::stats::median(ramp()), 1.5)
                                           : std::vector<double>(20, 5e6);
        };
        const gate::report r = compare(b, c, policy{}, hist, apart());
        const auto& tc = counter(r, "task-clock");
        CHECK(tc.state != status::regression);
        REQUIRE(tc.between_runs);
        CHECK(tc.between_runs->history_runs == 20);
        REQUIRE(tc.between_runs->p_value);
        CHECK(*tc.between_runs->p_value > 0.05);
        // One gated counter with a p (instructions is deterministic): Holm
        // leaves the between-run p as it is.
        CHECK(tc.p_adjusted == tc.between_runs->p_value);
        CHECK(tc.p_value == counter(interleaved, "task-clock").p_value); // the rank test's, for the record
        REQUIRE(tc.mde_pct);
        CHECK(*tc.mde_pct > 3.0);
        REQUIRE(tc.between_runs->ci_pct);
        CHECK(tc.between_runs->ci_pct->first < 0);
        CHECK(tc.between_runs->ci_pct->second > *tc.delta_pct);
        // A history of exactly equal counts: between-run spread 0 is
        // information, the deterministic rule stands.
        CHECK(counter(r, "instructions").state == status::unchanged);
        CHECK(counter(r, "instructions").between_runs->sd == 0.0);
        // The z-score still reads the same history.
        CHECK(tc.z_score.has_value());
    }
    SUBCASE("measured apart, unchanged when the between-run interval lies inside +-threshold")
    {
        // The same runs 0.2% apart, against session effects of 0.3%: the
        // between-run interval (t, df = 0.3675 x 19) is a fraction of a
        // percent wide, inside +-2%; against 1.5% it reaches past 2%.
        const auto near = one({series("task-clock", ramp(1.002), "msec")});
        const auto base = one({series("task-clock", ramp(1.0), "msec")});
        auto history_of = [](double spread) {
            return history_fn([spread](std::string_view, std::string_view) {
                return session_history(*perfgate::stats::median(ramp()), spread);
            });
        };
        const gate::report quiet = compare(base, near, policy{}, history_of(0.3), apart());
        const auto& q = counter(quiet, "task-clock");
        REQUIRE(q.between_runs);
        REQUIRE(q.between_runs->ci_pct);
        CHECK(q.between_runs->ci_pct->first > -2.0);
        CHECK(q.between_runs->ci_pct->second < 2.0);
        CHECK(q.state == status::unchanged);
        CHECK(q.reason.starts_with("not measured interleaved: the between-run interval ["));
        CHECK(contains(q.reason, "lies inside +-2%"));
        const gate::report noisy = compare(base, near, policy{}, history_of(1.5), apart());
        const auto& n = counter(noisy, "task-clock");
        REQUIRE(n.between_runs->ci_pct);
        CHECK(n.between_runs->ci_pct->second > 2.0);
        CHECK(n.state == status::inconclusive);
        CHECK(contains(n.reason, "reaches beyond +-2%"));
        REQUIRE(n.noise);
        CHECK(n.noise->source == "between_runs");
        CHECK_FALSE(n.noise->repetitions_needed);
        const auto decide = decide_report(noisy);
        REQUIRE(decide);
        CHECK(decide->source == "between_runs");
        CHECK_FALSE(decide->repetitions);
        CHECK(contains(decide->advice, "Cheapest fix: measure baseline and candidate in one perfgate run"));
    }
    SUBCASE("a 15% shift against 0.3% session effects fails; a count that varies between runs is tested too")
    {
        const auto slow = one({series("task-clock", ramp(1.15), "msec"), series("instructions", {5.5e6})});
        const history_fn hist = [](std::string_view, std::string_view counter) {
            return counter == "task-clock" ? session_history(*perfgate::stats::median(ramp()), 0.3)
                                           : session_history(5e6, 0.3);
        };
        const gate::report r = compare(b, slow, policy{}, hist, apart());
        CHECK(r.result == verdict::fail);
        const auto& tc = counter(r, "task-clock");
        CHECK(tc.state == status::regression);
        CHECK(tc.reason.starts_with("not measured interleaved: against the between-run spread of 20 runs"));
        const auto& ins = counter(r, "instructions");
        CHECK(ins.state == status::regression); // +10% against ~0.4% differences
        REQUIRE(ins.between_runs);
        REQUIRE(ins.between_runs->p_value);
        // Both gated counters are one Holm family of their between-run p-values.
        const std::vector<double> holm = perfgate::test::reference_holm({*tc.between_runs->p_value,
                                                                         *ins.between_runs->p_value});
        CHECK_REL(*tc.p_adjusted, holm[0], 1e-15);
        CHECK_REL(*ins.p_adjusted, holm[1], 1e-15);
    }
    SUBCASE("a sequential policy does not apply to runs measured apart")
    {
        policy seq;
        seq.sequential = sequential_rule{};
        const gate::report r = compare(b, c, seq, {}, apart());
        CHECK_FALSE(counter(r, "task-clock").sequential.has_value());
        CHECK(counter(r, "task-clock").state == status::inconclusive);
    }
    SUBCASE("an unjudgeable pair says why")
    {
        const gate::report r = compare(b, c, policy{}, {}, [](std::string_view) {
            return std::optional<gate::pairing>(gate::pairing{false, "the runs were measured on different testbeds"});
        });
        CHECK(counter(r, "task-clock")
                  .reason.starts_with("not measured interleaved, and the runs were measured on different testbeds:"));
    }
    SUBCASE("the JSON: interleaved and between_runs written, read back, and the text writer agrees")
    {
        const history_fn hist = [](std::string_view, std::string_view) { return session_history(100, 1.5); };
        const gate::report r = compare(b, c, policy{}, hist, apart());
        const json j = to_json(r);
        CHECK(j.at("benchmarks")[0].at("interleaved") == false);
        CHECK(j.at("benchmarks")[0].at("counters")[0].contains("between_runs"));
        const gate::report back = report_from_json(j);
        CHECK(back.benchmarks[0].interleaved == false);
        REQUIRE(counter(back, "task-clock").between_runs);
        CHECK(counter(back, "task-clock").between_runs->history_runs == 20);
        CHECK(to_json(back) == j);
        check_text_is_dump(r);
        check_text_is_dump(compare(b, c, policy{}, {}, apart()));
        const std::string text = render_text(r, false);
        CHECK(text.find("note: these runs were not measured interleaved:") != std::string::npos);
        CHECK(render_markdown(r).find("> these runs were not measured interleaved:") != std::string::npos);
        CHECK(render_text(interleaved, false).find("not measured interleaved") == std::string::npos);
    }
}

using perfgate::test::generated_suite;

TEST_CASE("report: a suite's summary, overall geometric mean, added, removed and failed")
{
    SUBCASE("the geometric mean of candidate/baseline median ratios over benchmarks, gated counters only")
    {
        capture::sample_set base, cand;
        const double factors[] = {2.0, 0.5, 1.5};
        for (int i = 0; i < 3; ++i) {
            base.benchmarks.push_back(one({series("task-clock", ramp(), "msec"), series("page-faults", ramp())},
                                          "b" + std::to_string(i))
                                          .benchmarks[0]);
            cand.benchmarks.push_back(one({series("task-clock", ramp(factors[i]), "msec"),
                                           series("page-faults", ramp(factors[i]))},
                                          "b" + std::to_string(i))
                                          .benchmarks[0]);
        }
        const gate::report r = compare(base, cand, policy{});
        const auto overall = overall_geomeans(r);
        REQUIRE(overall.size() == 1); // page-faults is not gated
        CHECK(overall[0].counter == "task-clock");
        CHECK(overall[0].benchmarks == 3);
        // (2 * 0.5 * 1.5)^(1/3): medians scale exactly with the factor.
        CHECK(overall[0].ratio == doctest::Approx(std::cbrt(1.5)).epsilon(1e-12));
        const suite_counts n = count_benchmarks(r);
        CHECK(n.compared == 3);
        CHECK(n.regressions == 2);
        CHECK(n.improvements == 1);
        CHECK(n.unchanged + n.inconclusive + n.added + n.removed + n.failed == 0);
        const json j = to_json(r);
        CHECK(j.at("overall") ==
              json::parse(R"([{"benchmarks": 3, "better": "lower", "counter": "task-clock", "geomean_ratio": )" +
                          j.at("overall")[0].at("geomean_ratio").dump() + "}]"));
        CHECK(j.at("overall")[0].at("geomean_ratio").get<double>() == overall[0].ratio);
        CHECK(j.at("summary") == json::parse(R"({"compared": 3, "regressions": 2, "improvements": 1, "unchanged": 0,
                                                 "inconclusive": 0, "added": 0, "removed": 0, "failed": 0})"));
        CHECK(render_text(r, false).find("3 benchmarks compared: 2 regressions, 1 improvement, 0 unchanged, 0 "
                                         "inconclusive\n") != std::string::npos);
        CHECK(render_text(r, false).find("task-clock               ×1.1447 (+14.47%) over 3 benchmarks") !=
              std::string::npos);
        CHECK(render_markdown(r).find("| task-clock (lower is better) | 1.1447 | +14.47% | 3 |") != std::string::npos);
    }
    SUBCASE("two benchmarks: a summary, but no overall geometric mean (fewer than 3 ratios)")
    {
        capture::sample_set base, cand;
        for (int i = 0; i < 2; ++i) {
            const std::string name = "b" + std::to_string(i);
            base.benchmarks.push_back(one({series("task-clock", ramp(), "msec")}, name).benchmarks[0]);
            cand.benchmarks.push_back(
                one({series("task-clock", ramp(i == 0 ? 2.0 : 1.0), "msec")}, name).benchmarks[0]);
        }
        const gate::report r = compare(base, cand, policy{});
        CHECK(overall_geomeans(r).empty());
        const json j = to_json(r);
        CHECK(j.contains("summary"));
        CHECK_FALSE(j.contains("overall"));
        CHECK(render_markdown(r).find("geometric mean") == std::string::npos);
        CHECK(render_text(r, false).find("overall") == std::string::npos);
    }
    SUBCASE("a single benchmark: none of the suite's members, as before")
    {
        const gate::report r = compare(one({series("task-clock", ramp(), "msec")}),
                                       one({series("task-clock", ramp(1.1), "msec")}), policy{});
        const json j = to_json(r);
        for (const char* key : {"added", "removed", "failed", "summary", "overall"}) CHECK_FALSE(j.contains(key));
        CHECK(render_text(r, false).find("compared:") == std::string::npos);
        CHECK(render_text(r, false).find("overall") == std::string::npos);
        CHECK(render_markdown(r).find("compared:") == std::string::npos);
    }
    SUBCASE("a 500-benchmark suite: JSON members, their stream and tree agree, text lists them")
    {
        const auto sets = generated_suite(500);
        const gate::report r = compare(sets.first, sets.second, policy{});
        CHECK(r.added == std::vector<std::string>{"BM_New/0", "BM_New/1", "BM_New/2"});
        CHECK(r.removed == std::vector<std::string>{"BM_Gone/0", "BM_Gone/1"});
        REQUIRE(r.failed.size() == 1);
        CHECK(r.failed[0].name == "BM_Suite/11/real_time");
        CHECK(r.failed[0].side == "candidate");
        const json j = to_json(r);
        CHECK(j.at("added") == json::array({"BM_New/0", "BM_New/1", "BM_New/2"}));
        CHECK(j.at("removed") == json::array({"BM_Gone/0", "BM_Gone/1"}));
        CHECK(j.at("failed") == json::parse(R"([{"name": "BM_Suite/11/real_time", "side": "candidate",
                                                  "message": "out of memory"}])"));
        const suite_counts n = count_benchmarks(r);
        CHECK(n.compared == 499);
        CHECK(n.regressions == 10);
        CHECK(n.improvements == 5);
        CHECK(n.regressions + n.improvements + n.unchanged + n.inconclusive == 499);
        CHECK(j.at("summary").at("regressions") == 10);
        CHECK(j.at("summary").at("added") == 3);
        CHECK(j.at("summary").at("removed") == 2);
        CHECK(j.at("summary").at("failed") == 1);
        REQUIRE(j.at("overall").size() == 3); // real_time, cpu_time, instructions
        CHECK(j.at("overall")[0].at("counter") == "real_time");
        CHECK(j.at("overall")[0].at("benchmarks") == 499);
        CHECK(j.at("overall")[0].at("geomean_ratio").get<double>() > 1.0);
        check_text_is_dump(r);
        CHECK(to_json(report_from_json(j)) == j);
        const std::string text = render_text(r, false);
        CHECK(text.find("499 benchmarks compared: 10 regressions, 5 improvements, ") != std::string::npos);
        CHECK(text.find("; 3 added, 2 removed, 1 failed\n") != std::string::npos);
        CHECK(text.find("added (candidate only, not compared):\n  + BM_New/0\n") != std::string::npos);
        CHECK(text.find("removed (baseline only, not compared):\n  - BM_Gone/0\n") != std::string::npos);
        CHECK(text.find("  ! BM_Suite/11/real_time (candidate): out of memory\n") != std::string::npos);
    }
}

TEST_CASE("renderers: a 500-benchmark suite's markdown fits GitHub's comment and lists every regression first")
{
    const auto sets = generated_suite(500);
    const gate::report r = compare(sets.first, sets.second, policy{});
    std::vector<std::string> regression_rows, improvement_rows;
    std::size_t unchanged = 0;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (!c.gated) continue;
            // Markdown escapes the underscores of user strings.
            auto md = [](std::string s) {
                for (auto at = s.find('_'); at != std::string::npos; at = s.find('_', at + 2)) s.insert(at, "\\");
                return s;
            };
            const std::string row = "| " + std::string(c.state == status::regression ? "🔴" : "🟢") + " | " +
                                    md(b.name) + " | " + md(c.name) + " |";
            if (c.state == status::regression) regression_rows.push_back(row);
            if (c.state == status::improvement) improvement_rows.push_back(row);
            unchanged += c.state == status::unchanged;
        }
    }
    REQUIRE(regression_rows.size() == 30); // 10 benchmarks x 3 gated counters
    REQUIRE(improvement_rows.size() == 15);
    REQUIRE(unchanged > 1000);
    markdown_options o;
    o.marker = "<!-- perfgate-comment: perfgate -->";
    o.run_url = "https://github.com/o/r/actions/runs/1";
    o.comparison_url = "https://perfgate.example/p/x/comparisons/7";
    SUBCASE("the PR comment: under 65,536 characters, regressions then improvements, unchanged collapsed")
    {
        const std::string md = render_markdown(r, o); // default max_chars: GitHub's limit
        CHECK(md.size() <= 65536);
        CHECK(md.rfind(o.marker + "\n", 0) == 0);
        CHECK(md.find("**499 benchmarks compared: 10 regressions, 5 improvements,") != std::string::npos);
        std::size_t last_regression = 0;
        for (const auto& row : regression_rows) {
            INFO(row);
            const auto at = md.find(row);
            CHECK(at != std::string::npos);
            if (at != std::string::npos) last_regression = std::max(last_regression, at);
        }
        for (const auto& row : improvement_rows) {
            INFO(row);
            CHECK(md.find(row) != std::string::npos);
            CHECK(md.find(row) > last_regression);
        }
        REQUIRE(unchanged >= 1000);
        REQUIRE(unchanged < 10000);
        const std::string count = std::to_string(unchanged / 1000) + "," +
                                  std::to_string(unchanged % 1000 + 1000).substr(1);
        CHECK(md.find("<details><summary>" + count + " unchanged rows of gated counters</summary>") !=
              std::string::npos);
        CHECK(md.find("unchanged rows not listed: the full report is the JSON report") != std::string::npos);
        CHECK(md.find("- ➕ added (candidate only, not compared): BM\\_New/0, BM\\_New/1, BM\\_New/2\n") !=
              std::string::npos);
        CHECK(md.find("- ❗ failed: BM\\_Suite/11/real\\_time \\(candidate\\): out of memory") != std::string::npos);
        CHECK(md.find("| real\\_time (lower is better) |") != std::string::npos);
        // The unchanged rows are inside their details block, after every changed row.
        CHECK(md.find("| ⚪ |") > md.find("unchanged rows of gated counters"));
    }
    SUBCASE("long lists of benchmarks not compared: 20 names each, then a count")
    {
        gate::report many = r;
        for (int i = 3; i < 25; ++i) many.added.push_back("BM_New/" + std::to_string(i));
        for (int i = 0; i < 30; ++i) many.failed.push_back({"BM_Fail/" + std::to_string(i), "both", "crashed"});
        const std::string md = render_markdown(many, o);
        CHECK(md.size() <= 65536);
        CHECK(md.find("BM\\_New/19 and 5 more\n") != std::string::npos);
        CHECK(md.find("BM\\_New/20") == std::string::npos);
        CHECK(md.find("- ❗ failed: BM\\_Fail/18 \\(both\\): crashed\n") != std::string::npos);
        CHECK(md.find("BM\\_Fail/19 ") == std::string::npos); // BM_Suite/11 is the first of 20
        CHECK(md.find("- ❗ … 11 more failed: see the JSON report\n") != std::string::npos);
    }
    SUBCASE("the job summary (1 MiB): every gated row")
    {
        markdown_options big = o;
        big.max_chars = 1024 * 1024;
        const std::string md = render_markdown(r, big);
        CHECK(md.size() <= big.max_chars);
        CHECK(md.find("unchanged rows not listed") == std::string::npos);
        std::size_t rows = 0;
        for (auto at = md.find("| ⚪ | BM\\_"); at != std::string::npos; at = md.find("| ⚪ | BM\\_", at + 1)) ++rows;
        CHECK(rows == unchanged);
    }
    SUBCASE("a limit the changed rows do not fit in: cut, counted, and pointed to the full report")
    {
        markdown_options tiny = o;
        tiny.max_chars = 5000;
        const std::string md = render_markdown(r, tiny);
        INFO(md);
        CHECK(md.size() <= 5000);
        CHECK(md.find(regression_rows.front()) != std::string::npos);
        CHECK(md.find(improvement_rows.front()) == std::string::npos);
        CHECK(md.find("rows (") != std::string::npos);
        CHECK(md.find("left out to fit GitHub's comment limit: the full report is the JSON report") !=
              std::string::npos);
        CHECK(md.find("[stored comparison](https://perfgate.example/p/x/comparisons/7)") != std::string::npos);
    }
}
