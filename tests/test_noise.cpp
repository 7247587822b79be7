// Tests of the noise diagnosis: stats/dip_test, stats/kendall,
// stats::repetitions_for_mde, gate/noise and the report's "noise" fields.
// Reference values come from tests/reference/gen_noise_refs.py (Python
// 3.11.2, numpy 1.24.2, scipy 1.10.1; R 4.2.2 with diptest 0.76.0); each
// block names the call that produced it.
#include "gate/noise.hpp"

#include <doctest/doctest.h>

#include "support/numbers.hpp"
#include "support/report.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/compare.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "report/render.hpp"
#include "stats/dip_test.hpp"
#include "stats/kendall.hpp"
#include "stats/mde.hpp"

using namespace perfgate;
using namespace perfgate::capture;
using namespace perfgate::gate;
using namespace perfgate::report;
using nlohmann::json;
using perfgate::test::counter;
using perfgate::test::ramp;

namespace {

// p-values and statistics relative to the reference (docs/statistics.md: 1e-9).
constexpr double ref_tol = 1e-9;

// Generators shared with the reference script (support/numbers.hpp).
using perfgate::test::lcg_next;
constexpr auto uni = perfgate::test::lcg_uni;
constexpr auto cents = perfgate::test::lcg_cents;

// A host that flips between two speeds: fast with probability share, else
// slow, plus uniform [0, spread).
std::vector<double> two_speed(std::uint32_t seed, std::size_t n, double share, double fast, double slow, double spread)
{
    std::vector<double> out;
    for (std::uint32_t s = seed; out.size() < n;) {
        s = lcg_next(s);
        const double base = static_cast<double>(s) / 4294967296.0 < share ? fast : slow;
        s = lcg_next(s);
        out.push_back(base + spread * (static_cast<double>(s) / 4294967296.0));
    }
    return out;
}

// A machine slowing down: start + slope * i + uniform [0, spread).
std::vector<double> drift(std::uint32_t seed, std::size_t n, double start, double slope, double spread)
{
    std::vector<double> out;
    std::uint32_t s = seed;
    for (std::size_t i = 0; i < n; ++i) {
        s = lcg_next(s);
        out.push_back(start + slope * static_cast<double>(i) + spread * (static_cast<double>(s) / 4294967296.0));
    }
    return out;
}

std::vector<double> swapped(std::vector<double> v, std::size_t i)
{
    std::swap(v[i], v[i + 1]);
    return v;
}

capture::counter_series series(std::string name, std::vector<double> values, std::string unit = "msec")
{
    capture::counter_series s;
    s.name = std::move(name);
    s.unit = std::move(unit);
    s.values = std::move(values);
    return s;
}

capture::sample_set one(std::vector<capture::counter_series> counters)
{
    capture::sample_set s;
    capture::benchmark_samples b;
    b.counters = std::move(counters);
    s.benchmarks.push_back(std::move(b));
    return s;
}

// task-clock, baseline b vs candidate c, under p.
gate::report gate_of(std::vector<double> b, std::vector<double> c, const policy& p = {})
{
    return compare(one({series("task-clock", std::move(b))}), one({series("task-clock", std::move(c))}), p);
}

const noise_diagnosis& noise_of(const gate::report& r)
{
    const auto& c = counter(r, "task-clock");
    REQUIRE(c.noise);
    return *c.noise;
}

bool contains(const std::string& haystack, const std::string& needle)
{
    return haystack.find(needle) != std::string::npos;
}

std::string thrown_id(const std::function<void()>& f)
{
    try {
        f();
    } catch (const perfgate::error& e) {
        return e.id();
    }
    return "<none>";
}

} // namespace

// ---- stats ------------------------------------------------------------------

TEST_CASE("dip_statistic agrees with R's diptest::dip, dip_test with dip.test at 0.05")
{
    struct dip_case {
        const char* name;
        std::vector<double> x;
        double dip;
        bool bimodal; // dip.test(x)$p.value < 0.05
    };
    // gen_noise_refs.py, "dip": diptest::dip(x) and dip.test(x)$p.value (in the comment).
    const std::vector<dip_case> cases = {
        // dip.test p = 0.00026959535996540218
        {"hand: 8/14 ms", {8.1, 8.2, 7.9, 14.1, 14.0, 8.0, 13.9, 8.3, 14.2, 8.1}, 0.18983050847457633, true},
        // dip.test p = 0
        {"hand: 2/3 point masses", {8, 8, 14, 14, 14}, 0.20000000000000001, true},
        // dip.test p = 0.78200000000000003
        {"hand: all tied", {5, 5, 5, 5}, 0.125, false},
        // dip.test p = 0
        {"hand: 0/1 halves", {0, 0, 0, 1, 1, 1}, 0.25, true},
        // dip.test p = 0.44957525137160503
        {"hand: one outlier",
         {100, 100.2, 99.9, 100.1, 100.3, 99.8, 100, 100.1, 99.9, 140},
         0.10000000000000001,
         false},
        // dip.test p = 0.9028571428571428
        {"hand: range overflows", {-1e308, 1e308, 0, 5e307, -5e307}, 0.10000000000000001, false},
        // dip.test p = 0.9028571428571428
        {"uniform 5", uni(11, 5, 1000, 100), 0.10000000000000001, false},
        // dip.test p = 0.80408556273549303
        {"uniform 10", uni(21, 10, 1000, 100), 0.08498458212900753, false},
        // dip.test p = 0.3736644206042351
        {"uniform 37", uni(31, 37, 1000, 100), 0.059954787496780237, false},
        // dip.test p = 0.5978554217838884
        {"msec ties 30", cents(41, 30, 1500, 40), 0.058333333333333334, false},
        // dip.test p = 0.51375284541891952
        {"msec ties 200", cents(51, 200, 1500, 300), 0.02540000000000019, false},
        // dip.test p = 1.7575131672220579e-07
        {"two speeds 10", two_speed(61, 10, 0.5, 8, 14, 0.8), 0.22132204792089566, true},
        // dip.test p = 0.057978535626295513: just not significant
        {"two speeds 20, 30% fast", two_speed(71, 20, 0.3, 8, 14, 1.5), 0.10387030912654689, false},
        // dip.test p = 0
        {"two speeds 60", two_speed(81, 60, 0.5, 8, 14, 2.5), 0.12585117822858663, true},
        // dip.test p = 0.65733894158976824
        {"close speeds 40", two_speed(91, 40, 0.5, 14, 15, 1.0), 0.049514504740609706, false},
        // dip.test p = 0.69469281760581403
        {"drift 12", drift(101, 12, 100, 0.5, 1.0), 0.083035792392711597, false},
        // dip.test p = 0.16563025737144887
        {"uniform 1000", uni(111, 1000, 0, 1), 0.014645439222775253, false},
    };
    for (const auto& k : cases) {
        CAPTURE(k.name);
        CHECK_REL(stats::dip_statistic(k.x), k.dip, ref_tol);
        // The order of the input does not matter.
        std::vector<double> reversed(k.x.rbegin(), k.x.rend());
        CHECK(stats::dip_statistic(reversed) == stats::dip_statistic(k.x));
        const auto t = stats::dip_test(k.x);
        REQUIRE(t);
        CHECK(t->dip == stats::dip_statistic(k.x));
        CHECK(t->critical == *stats::dip_critical_value(k.x.size()));
        CHECK(t->bimodal == k.bimodal);
        CHECK(t->bimodal == (t->dip > t->critical));
    }
    SUBCASE("below the table's smallest n: a dip, but no test")
    {
        // diptest::dip(5), dip(c(1, 2)), dip(c(1, 1, 2)) (dip.test answers p = 1 there)
        CHECK(stats::dip_statistic(std::vector<double>{5.0}) == 0.5);
        CHECK(stats::dip_statistic(std::vector<double>{1.0, 2.0}) == 0.25);
        CHECK_REL(stats::dip_statistic(std::vector<double>{1.0, 1.0, 2.0}), 0.16666666666666666, ref_tol);
        CHECK_FALSE(stats::dip_test(std::vector<double>{1.0, 2.0, 3.0}));
        CHECK(stats::dip_test(std::vector<double>{1.0, 2.0, 3.0, 4.0}));
    }
}

TEST_CASE("dip_critical_value is dip.test's 5% point")
{
    // gen_noise_refs.py, "critical dip": dip.test's interpolation of
    // qDiptab[, "0.95"] (sqrt(n) * q linear in n between the table's sizes,
    // its last row beyond 72000), divided by sqrt(n).
    const std::vector<std::pair<std::size_t, double>> rows = {
        {4, 0.20726978858735959},       {5, 0.18639179602794398},       {9, 0.14660378495401924},
        {10, 0.13961139513709916},      {12, 0.12957974100126746},      {25, 0.095307766148294309},
        {37, 0.080196690246299648},     {100, 0.051127944286882707},    {150, 0.042143542892757048},
        {10000, 0.0054237224283639526}, {72000, 0.0020317840161055505}, {100000, 0.0017240259068336064},
    };
    for (const auto& row : rows) {
        const std::size_t n = row.first;
        CAPTURE(n);
        CHECK_REL(*stats::dip_critical_value(n), row.second, 1e-14);
    }
    CHECK_FALSE(stats::dip_critical_value(3));
    CHECK_FALSE(stats::dip_critical_value(0));
    // Falls with n: more samples, a smaller dip is significant.
    for (std::size_t n = 5; n < 300; ++n) {
        CAPTURE(n);
        CHECK(*stats::dip_critical_value(n) < *stats::dip_critical_value(n - 1));
    }
}

TEST_CASE("kendall_trend agrees with scipy.stats.kendalltau(numpy.arange(n), x)")
{
    struct trend_case {
        const char* name;
        std::vector<double> x;
        double tau, p;
        bool exact;
    };
    // gen_noise_refs.py, "Kendall": scipy.stats.kendalltau(np.arange(n), x)
    // (statistic, pvalue); exact: scipy's method="auto" chose the exact
    // distribution (no ties, and n <= 33 or min(C, D) <= 1).
    const std::vector<trend_case> cases = {
        {"2 values", {2.0, 1.0}, -1.0, 1.0, true},
        {"3 values", {3.0, 1.0, 2.0}, -0.33333333333333337, 1.0, true},
        {"ramp 10", ramp(), 0.9999999999999999, 5.511463844797178e-07, true},
        {"reversed 6", {6, 5, 4, 3, 2, 1}, -0.9999999999999999, 0.002777777777777778, true},
        {"uniform 5", uni(11, 5, 1000, 100), 0.39999999999999997, 0.48333333333333334, true},
        {"uniform 10", uni(21, 10, 1000, 100), 0.37777777777777777, 0.1557418430335097, true},
        {"uniform 33", uni(121, 33, 1000, 100), 0.26136363636363635, 0.03300713192637391, true},
        {"uniform 34 (asymptotic)", uni(131, 34, 1000, 100), -0.06238859180035652, 0.6038615003223371, false},
        {"drift 12", drift(101, 12, 100, 0.5, 1.0), 0.8787878787878787, 5.319397680508792e-06, true},
        {"drift 25", drift(141, 25, 100, 0.05, 1.0), 0.6999999999999998, 6.894808806253613e-08, true},
        {"ramp 40, one swap (exact, c = 1)", swapped(ramp(1.0, 40), 17), 0.9974358974358974, 9.804939513027087e-47,
         true},
        {"msec ties 30", cents(41, 30, 1500, 40), 0.06279494301418034, 0.6294311408480113, false},
        {"msec ties 200", cents(51, 200, 1500, 300), 0.02818322286218628, 0.553987774330152, false},
        {"two levels", {1, 1, 2, 2, 2, 1, 2, 2}, 0.4391550328268399, 0.17971249487899976, false},
        {"uniform 3000", uni(151, 3000, 0, 1), 0.004927864843836835, 0.6857499689511971, false},
    };
    for (const auto& k : cases) {
        CAPTURE(k.name);
        const auto r = stats::kendall_trend(k.x);
        REQUIRE(r);
        CHECK_REL(r->tau, k.tau, 1e-12);
        CHECK_REL(r->p_value, k.p, ref_tol);
        CHECK(r->exact == k.exact);
    }
    SUBCASE("degenerate input: scipy's nan is nullopt")
    {
        CHECK_FALSE(stats::kendall_trend(std::vector<double>{}));
        CHECK_FALSE(stats::kendall_trend(std::vector<double>{3.0}));
        CHECK_FALSE(stats::kendall_trend(std::vector<double>(8, 2.5)));
    }
    SUBCASE("the smallest p of the exact test is 2 / n!: why drift_min_n is 6")
    {
        CHECK_REL(stats::kendall_trend(ramp(1.0, 5))->p_value, 2.0 / 120, 1e-15);
        CHECK(stats::kendall_trend(ramp(1.0, 5))->p_value > drift_level);
        CHECK(stats::kendall_trend(ramp(1.0, 6))->p_value < drift_level);
    }
}

TEST_CASE("repetitions_for_mde inverts minimum_detectable_effect_pct")
{
    struct rep_case {
        double sd_b, sd_c, centre, target, alpha, power;
        std::size_t n;
    };
    // gen_noise_refs.py, "repetitions_for_mde": the smallest n with
    // (norm.ppf(1 - a/2) + norm.ppf(power)) * sqrt((sb^2 + sc^2) / n)
    //   * sqrt(pi/3) / |centre| * 100 <= target and 2 / C(2n, n) <= alpha.
    const std::vector<rep_case> cases = {
        {0.5, 0.6, 100.0, 2.0, 0.05, 0.8, 4},   // k = 1.25: the exact test's floor decides
        {1.5, 1.5, 15.0, 2.0, 0.05, 0.8, 411},  // CoV 10% at 15 ms; k = 410.97
        {2.7, 2.4, 15.0, 5.0, 0.05, 0.8, 191},  // k = 190.69
        {3.0, 3.0, 15.0, 2.0, 0.01, 0.9, 3117}, // k = 3116.33
        {0.0, 0.0, 100.0, 2.0, 0.05, 0.8, 4},   // no noise: 2 / C(8, 4) = 0.029 <= 0.05
        {0.0, 0.0, 100.0, 2.0, 0.001, 0.8, 7},  // 2 / C(14, 7) = 0.00058
    };
    for (const auto& k : cases) {
        CAPTURE(k.n);
        const auto n = stats::repetitions_for_mde(k.sd_b, k.sd_c, k.centre, k.target, k.alpha, 10000, k.power);
        REQUIRE(n);
        CHECK(*n == k.n);
        // The very formula the gate uses: reached at n, not at n - 1.
        CHECK(*stats::minimum_detectable_effect_pct(k.sd_b, *n, k.sd_c, *n, k.centre, k.alpha, k.power) <= k.target);
        CHECK(*stats::minimum_detectable_effect_pct(k.sd_b, *n - 1, k.sd_c, *n - 1, k.centre, k.alpha, k.power) >
              k.target);
    }
    SUBCASE("out of reach, or no relative effect")
    {
        CHECK_FALSE(stats::repetitions_for_mde(1.5, 1.5, 15.0, 2.0, 0.05, 410));
        CHECK(stats::repetitions_for_mde(1.5, 1.5, 15.0, 2.0, 0.05, 411) == 411u);
        CHECK_FALSE(stats::repetitions_for_mde(1.5, 1.5, 0.0, 2.0, 0.05, 10000));
        CHECK_FALSE(stats::repetitions_for_mde(1.5, 1.5, 15.0, 0.0, 0.05, 10000));
        CHECK(stats::repetitions_for_mde(0.0, 0.0, 15.0, 0.0, 0.05, 10000) == 4u);
        CHECK_FALSE(stats::repetitions_for_mde(0.0, 0.0, 15.0, 2.0, 0.05, 1));
    }
    SUBCASE("bad alpha or power")
    {
        CHECK(thrown_id([] { (void)stats::repetitions_for_mde(1, 1, 10, 2, 0.0, 100); }) == "stats.bad_probability");
        CHECK_THROWS_WITH_AS((void)stats::repetitions_for_mde(1, 1, 10, 2, 0.05, 100, 1.5),
                             "power must be in (0, 1), got 1.500000", perfgate::error);
    }
}

// ---- gate -------------------------------------------------------------------

TEST_CASE("noise diagnosis: bimodal samples")
{
    const std::vector<double> b = two_speed(61, 10, 0.5, 8, 14, 0.8);
    const std::vector<double> c = uni(21, 10, 10, 1);
    const gate::report r = gate_of(b, c);
    const noise_diagnosis& n = noise_of(r);
    CHECK(n.bimodal == true);
    CHECK(n.baseline.bimodal == true);
    CHECK(n.candidate.bimodal == false);
    // The same statistic as stats/ (pinned to R above: 0.22132204792089566).
    CHECK(*n.baseline.dip == stats::dip_statistic(b));
    CHECK(*n.baseline.dip_critical == *stats::dip_critical_value(10));
    CHECK(contains(n.advice, "the samples form separate groups: the machine switching speeds"));
    const std::string line = noise_summary(counter(r, "task-clock"));
    CHECK(line.rfind("bimodal baseline (dip 0.221 > 0.140)", 0) == 0);
    CHECK(contains(render_text(r, false), "noise: bimodal baseline (dip 0.221 > 0.140)"));
}

TEST_CASE("noise diagnosis: drift with round order")
{
    SUBCASE("both sides drift: the machine")
    {
        const gate::report r = gate_of(drift(101, 12, 100, 0.5, 1.0), drift(102, 12, 100, 0.5, 1.0));
        const noise_diagnosis& n = noise_of(r);
        CHECK(n.drift == true);
        CHECK(n.baseline.drift == true);
        CHECK(n.candidate.drift == true);
        // scipy.stats.kendalltau(np.arange(12), drift(101, 12, 100, 0.5, 1.0)), pinned above.
        CHECK_REL(*n.baseline.kendall_tau, 0.8787878787878787, 1e-12);
        CHECK_REL(*n.baseline.kendall_p, 5.319397680508792e-06, ref_tol);
        CHECK(contains(n.advice, "the machine's speed changed during the run"));
        CHECK(contains(noise_summary(counter(r, "task-clock")), "drift baseline (tau +0.88, p=5.3e-06) and candidate"));
    }
    SUBCASE("one side drifts: the program")
    {
        const gate::report r = gate_of(uni(21, 12, 104, 1), drift(102, 12, 100, 0.5, 1.0));
        const noise_diagnosis& n = noise_of(r);
        CHECK(n.drift == true);
        CHECK(n.baseline.drift == false);
        CHECK(n.candidate.drift == true);
        CHECK(contains(n.advice, "only the candidate drifts"));
    }
    SUBCASE("five samples: the dip, but no trend test (drift_min_n)")
    {
        const gate::report r = gate_of(uni(11, 5, 1000, 100), uni(12, 5, 1000, 100));
        const noise_diagnosis& n = noise_of(r);
        CHECK(n.baseline.dip);
        CHECK(n.bimodal == false);
        CHECK_FALSE(n.baseline.kendall_tau);
        CHECK_FALSE(n.baseline.kendall_p);
        CHECK_FALSE(n.baseline.drift);
        CHECK_FALSE(n.drift);
    }
}

TEST_CASE("noise diagnosis: repetitions for an inconclusive counter")
{
    // A/A at CoV ~4-5% with 10 repetitions: the MDE (5.6%) is above the 2% threshold.
    const std::vector<double> b = uni(201, 10, 15, 2.5), c = uni(202, 10, 15, 2.5);
    SUBCASE("the count at which the interval's half-width is half the threshold")
    {
        const gate::report r = gate_of(b, c);
        const auto& cr = counter(r, "task-clock");
        REQUIRE(cr.state == status::inconclusive);
        REQUIRE(cr.shift_ci);
        const noise_diagnosis& n = noise_of(r);
        REQUIRE(n.repetitions_needed);
        CHECK_FALSE(n.too_noisy);
        const std::size_t need = *n.repetitions_needed;
        // The half-width h (in % of the baseline median) falls as 1/sqrt(n)
        // with equal sides: need = ceil(10 (h / (threshold / 2))^2).
        const double h = (cr.shift_ci->second - cr.shift_ci->first) / 2 / *cr.baseline.median * 100;
        const double k = 10 * (h / 1.0) * (h / 1.0);
        CHECK(static_cast<double>(need) >= k);
        CHECK(static_cast<double>(need) < k + 1);
        CHECK(need > 10);
        const std::string count = std::to_string(need);
        CHECK(contains(n.advice,
                       "about " + count + " repetitions per side (-r " + count + ") would decide it at this noise"));
        CHECK(n.source == "executions");
        // A threshold that the interval lies inside now.
        REQUIRE(n.threshold_needed_pct);
        const double lo = cr.shift_ci->first / *cr.baseline.median * 100,
                     hi = cr.shift_ci->second / *cr.baseline.median * 100;
        CHECK(*n.threshold_needed_pct > std::max(-lo, hi));
        CHECK(*n.threshold_needed_pct <= std::max(-lo, hi) + 0.5);
        CHECK(std::fmod(*n.threshold_needed_pct, 0.5) == 0.0);
        CHECK(contains(render_text(r, false), "noise: CoV "));
    }
    SUBCASE("too noisy for the threshold: more than max_repetitions_advised")
    {
        policy p;
        p.threshold_pct = 0.05;
        const gate::report r = gate_of(b, c, p);
        REQUIRE(counter(r, "task-clock").state == status::inconclusive);
        const noise_diagnosis& n = noise_of(r);
        CHECK(n.too_noisy);
        CHECK_FALSE(n.repetitions_needed);
        CHECK(contains(n.advice, "too noisy for a 0.05% threshold (more than 10000 repetitions per side needed)"));
        CHECK(contains(n.advice, "--backend callgrind"));
    }
    SUBCASE("CoV above max_cov: repetitions do not help")
    {
        const gate::report r = gate_of(uni(203, 10, 10, 10), uni(204, 10, 10, 10));
        const auto& cr = counter(r, "task-clock");
        REQUIRE(cr.state == status::inconclusive);
        const noise_diagnosis& n = noise_of(r);
        CHECK(n.too_noisy);
        CHECK_FALSE(n.repetitions_needed);
        CHECK(contains(n.advice, "CoV above max_cov 10.0%, which more repetitions do not lower"));
    }
    SUBCASE("among many gated counters the exact test must reach alpha / m")
    {
        // Twenty-five gated counters at a 50% threshold, c0 60% slower: at
        // 5 per side its interval is narrow enough, but the gate's
        // detection level is alpha / 25 = 0.002, which the exact test
        // reaches first at 7/7 (2 / C(14, 7) = 0.00058; 6/6 bottoms out at
        // 2 / C(12, 6) = 0.0022, 5/5 at 0.0079): no regression is
        // confirmable before.
        policy p;
        p.threshold_pct = 50;
        std::vector<capture::counter_series> bs, cs;
        for (int i = 0; i < 25; ++i) {
            const std::string name = "c" + std::to_string(i);
            p.counters[name].gate = true;
            bs.push_back(series(name, uni(300 + i, 5, 1000, 100)));
            cs.push_back(series(name, uni(400 + i, 5, i == 0 ? 1600 : 1000, 100)));
        }
        const gate::report r = compare(one(bs), one(cs), p);
        const auto& c0 = counter(r, "c0");
        REQUIRE(c0.state == status::inconclusive); // |delta| >= 50%, not significant at alpha / 25
        REQUIRE(c0.noise);
        CHECK(c0.noise->repetitions_needed == 7u);
    }
}

TEST_CASE("noise diagnosis: null where it does not apply, quiet where nothing is noisy")
{
    SUBCASE("deterministic counters")
    {
        const gate::report r = compare(one({series("instructions", std::vector<double>(10, 500.0), "")}),
                                       one({series("instructions", std::vector<double>(10, 510.0), "")}), policy{});
        CHECK(*counter(r, "instructions").test == method::deterministic);
        CHECK_FALSE(counter(r, "instructions").noise);
    }
    SUBCASE("summary-only input (Welch)")
    {
        auto agg = [](double mean, double var_pct) {
            capture::sample_set s = one({series("task-clock", {mean})});
            s.benchmarks[0].counters[0].variance_pct = {var_pct};
            s.benchmarks[0].summary_only = true;
            s.benchmarks[0].summary_repeats = 10;
            return s;
        };
        const gate::report r = compare(agg(3.22, 8.23), agg(3.60, 1.0), policy{});
        CHECK(*counter(r, "task-clock").test == method::welch);
        CHECK_FALSE(counter(r, "task-clock").noise);
        CHECK(to_json(r)["benchmarks"][0]["counters"][0]["noise"].is_null());
    }
    SUBCASE("insufficient and unsupported counters")
    {
        const gate::report r = compare(one({series("task-clock", {1, 2, 3}), series("cycles", {})}),
                                       one({series("task-clock", {1, 2, 3}), series("cycles", {})}), policy{});
        CHECK(counter(r, "task-clock").state == status::insufficient);
        CHECK_FALSE(counter(r, "task-clock").noise);
        CHECK(counter(r, "cycles").state == status::unsupported);
        CHECK_FALSE(counter(r, "cycles").noise);
    }
    SUBCASE("a quiet counter: tested, nothing flagged, no line")
    {
        const gate::report r = gate_of(uni(301, 20, 1000, 10), uni(302, 20, 1000, 10));
        const auto& c = counter(r, "task-clock");
        CHECK(c.state == status::unchanged);
        const noise_diagnosis& n = noise_of(r);
        CHECK(n.bimodal == false);
        CHECK(n.drift == false);
        CHECK_FALSE(n.repetitions_needed);
        CHECK_FALSE(n.too_noisy);
        CHECK(n.advice.empty());
        CHECK(noise_summary(c).empty());
        CHECK_FALSE(contains(render_text(r, false), "noise:"));
        CHECK_FALSE(contains(render_markdown(r), "**Noise**"));
        const json j = to_json(r)["benchmarks"][0]["counters"][0]["noise"];
        CHECK(j["advice"].is_null());
        CHECK(j["repetitions_needed"].is_null());
        CHECK(j["too_noisy"] == false);
    }
}

TEST_CASE("noise diagnosis: report JSON")
{
    const gate::report r = gate_of(two_speed(61, 10, 0.5, 8, 14, 0.8), drift(102, 10, 10, 0.3, 0.5));
    const json j = to_json(r);
    const json& n = j["benchmarks"][0]["counters"][0]["noise"];
    SUBCASE("shape")
    {
        for (const char* key : {"bimodal", "drift", "baseline", "candidate", "repetitions_needed", "too_noisy",
                                "advice", "source", "threshold_needed_pct"}) {
            CHECK_MESSAGE(n.contains(key), key);
        }
        CHECK(n.size() == 9);
        for (const char* side : {"baseline", "candidate"}) {
            CHECK(n[side].size() == 6);
            for (const char* key : {"dip", "dip_critical", "bimodal", "kendall_tau", "kendall_p", "drift"}) {
                CHECK_MESSAGE(n[side].contains(key), side << "." << key);
            }
        }
        CHECK(n["bimodal"] == true);
        CHECK(n["baseline"]["bimodal"] == true);
        CHECK(n["candidate"]["drift"] == true);
        CHECK(n["baseline"]["dip"].get<double>() == stats::dip_statistic(two_speed(61, 10, 0.5, 8, 14, 0.8)));
        CHECK(n["advice"].is_string());
    }
    SUBCASE("round trip")
    {
        const gate::report back = report_from_json(j);
        REQUIRE(back.benchmarks[0].counters[0].noise);
        CHECK(back.benchmarks[0].counters[0].noise->advice == counter(r, "task-clock").noise->advice);
        CHECK(to_json(back) == j);
    }
    SUBCASE("a report stored before the field existed reads as without a diagnosis")
    {
        json old = j;
        old["benchmarks"][0]["counters"][0].erase("noise");
        const gate::report back = report_from_json(old);
        CHECK_FALSE(back.benchmarks[0].counters[0].noise);
        CHECK(to_json(back)["benchmarks"][0]["counters"][0]["noise"].is_null());
    }
    SUBCASE("nulls inside read as null")
    {
        json partial = j;
        json& pn = partial["benchmarks"][0]["counters"][0]["noise"];
        pn["candidate"] = nullptr;
        pn["advice"] = nullptr;
        pn["repetitions_needed"] = 40;
        const gate::report back = report_from_json(partial);
        const noise_diagnosis& d = *back.benchmarks[0].counters[0].noise;
        CHECK_FALSE(d.candidate.dip);
        CHECK_FALSE(d.candidate.drift);
        CHECK(d.advice.empty());
        CHECK(d.repetitions_needed == 40u);
    }
    SUBCASE("wrong types are a bad report")
    {
        json bad = j;
        bad["benchmarks"][0]["counters"][0]["noise"]["repetitions_needed"] = "many";
        CHECK_THROWS_WITH_AS(report_from_json(bad), doctest::Contains("report JSON"), perfgate::error);
        CHECK(thrown_id([&] { report_from_json(bad); }) == "input.bad_report");
        bad = j;
        bad["benchmarks"][0]["counters"][0]["noise"]["baseline"]["dip"] = "wide";
        CHECK(thrown_id([&] { report_from_json(bad); }) == "input.bad_report");
    }
}

TEST_CASE("noise diagnosis: text and markdown")
{
    const gate::report r = gate_of(two_speed(61, 10, 0.5, 8, 14, 0.8), drift(102, 10, 10, 0.3, 0.5));
    const std::string line = noise_summary(counter(r, "task-clock"));
    REQUIRE_FALSE(line.empty());
    SUBCASE("text: one line under the counter")
    {
        const std::string text = render_text(r, false);
        INFO(text);
        CHECK(contains(text, "\n              noise: " + line + "\n"));
    }
    SUBCASE("markdown: inside the details, escaped")
    {
        const std::string md = render_markdown(r);
        INFO(md);
        CHECK(contains(md, "\n**Noise**\n\n- default / task-clock: bimodal baseline \\(dip 0.221 &gt; 0.140\\)"));
        CHECK(md.find("**Noise**") > md.find("<details>"));
        CHECK(md.find("**Noise**") < md.find("</details>"));
    }
}

TEST_CASE("noise diagnosis: a range that overflows a double")
{
    // Finite values whose differences overflow: the dip halves them first.
    // diptest::dip(c(-1e308, 1e308, 0, 5e307, -5e307, 1e307)) = 0.083333333333333356
    const std::vector<double> huge = {-1e308, 1e308, 0, 5e307, -5e307, 1e307};
    const gate::report r = gate_of(huge, huge);
    const noise_diagnosis& n = noise_of(r);
    REQUIRE(n.baseline.dip);
    CHECK_REL(*n.baseline.dip, 0.083333333333333356, ref_tol);
    CHECK(n.baseline.bimodal == false);
    // The stddev overflowed: no MDE, so no repetition count either.
    CHECK_FALSE(n.repetitions_needed);
}
