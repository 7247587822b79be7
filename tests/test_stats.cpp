// Tests for stats/: every statistic is pinned to a reference value computed
// by tests/reference/gen_stats_refs.py with Debian's scipy 1.10.1 (numpy
// 1.24.2, Python 3.11.2); each case names the call that produced it. Where
// scipy has no function (R's qwilcox, the Hodges-Lehmann CI, p.adjust) the
// generator computes the value from the definition, independently of the C++.
#include "model/error.hpp"
#include "stats/between_run.hpp"
#include "stats/descriptive.hpp"
#include "stats/hodges_lehmann.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/mde.hpp"
#include "stats/multiplicity.hpp"
#include "stats/welch.hpp"
#include "stats/zscore.hpp"

#include <doctest/doctest.h>

#include "support/numbers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace perfgate::stats;

namespace {

// p-values are compared in relative terms (docs/statistics.md: 1e-9); doctest's Approx
// adds an absolute floor of epsilon that would let 1e-165 equal 0.
constexpr double p_tol = 1e-9;
// The same IEEE operations as the Python reference: only summation order may
// differ.
constexpr double value_tol = 1e-12;


// Generators shared with the reference script (support/numbers.hpp).
using perfgate::test::lcg_next;
constexpr auto uni = perfgate::test::lcg_uni;
constexpr auto cents = perfgate::test::lcg_cents;

// task-clock values [from, to) of the real capture appended-10-runs.csv.
std::vector<double> task_clock(std::size_t from, std::size_t to)
{
    const std::string path = PERFGATE_TESTDATA_DIR "/perf-stat/appended-10-runs.csv";
    std::ifstream in(path);
    REQUIRE_MESSAGE(in, "cannot open " << path);
    std::vector<double> all;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> f;
        std::stringstream ss(line);
        for (std::string field; std::getline(ss, field, ',');) f.push_back(field);
        if (f.size() > 2 && f[2] == "task-clock") all.push_back(std::stod(f[0]));
    }
    REQUIRE(all.size() == 10);
    return {all.begin() + static_cast<std::ptrdiff_t>(from), all.begin() + static_cast<std::ptrdiff_t>(to)};
}

// The id of the perfgate::error that f throws, or "<none>".
std::string error_id(const std::function<void()>& f)
{
    try {
        f();
    } catch (const perfgate::error& e) {
        return e.id();
    }
    return "<none>";
}

struct rank_case {
    const char* name;
    std::vector<double> b, c;
    double u, p;
    mwu_method method;
    bool ties;
    double estimate, lower, upper; // Hodges-Lehmann, alpha = 0.05
};

std::vector<rank_case> rank_cases()
{
    // Rows printed by gen_stats_refs.py (section "Mann-Whitney U +
    // Hodges-Lehmann"). Exact rows: p from scipy's exact distribution and
    // re-checked there against exact big-integer counts to 1e-12. Asymptotic
    // HL rows: R's uniroot procedure solved with brentq at xtol 1e-13; the
    // root is asserted to be the pinned difference d_(k).
    // "all tied" / "1/1 tied": R's wilcox.test refuses the CI ("cannot
    // compute confidence interval when all observations are tied"); the
    // documented perfgate result is the only difference there is, 0.
    // clang-format off
    return {
    // 1/1: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=1)
    {"1/1", {1.0}, {2.0}, 0.0, 1.0, mwu_method::exact, false, 1.0, 1.0, 1.0},
    // hand 3/4: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=1)
    {"hand 3/4", {1.1, 2.2, 3.3}, {0.5, 4.4, 5.5, 6.6}, 3.0, 0.4, mwu_method::exact, false, 2.75, -2.8, 5.5},
    // 2/3: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=1)
    {"2/3", uni(11, 2, 1000, 100), uni(12, 3, 1000, 100), 3.0, 1.0, mwu_method::exact, false, -1.7601085477508605, -24.02752973139286, 12.668104097247124},
    // 5/5 shifted: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=3)
    {"5/5 shifted", uni(21, 5, 1000, 100), uni(22, 5, 1030, 100), 2.0, 0.031746031746031744, mwu_method::exact, false, 34.61866471450776, 9.938354436308146, 93.89091776218265},
    // 7/10: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=15)
    {"7/10", uni(31, 7, 1000, 100), uni(32, 10, 1010, 100), 17.0, 0.08782394076511724, mwu_method::exact, false, 23.905608851928264, -5.731869684532285, 73.98148462176323},
    // 10/4 improvement: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=6)
    {"10/4 improvement", uni(41, 10, 1000, 100), uni(42, 4, 960, 100), 39.0, 0.003996003996003996, mwu_method::exact, false, -52.30473688337952, -111.46315157879144, -16.38990788254887},
    // 10/10: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=24)
    {"10/10", uni(51, 10, 1000, 100), uni(52, 10, 1020, 100), 28.0, 0.10512243174781875, mwu_method::exact, false, 22.1076217177324, -5.54500182159245, 44.69394290819764},
    // 1/49: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=1)
    {"1/49", uni(61, 1, 1000, 100), uni(62, 49, 1000, 100), 14.0, 0.6, mwu_method::exact, false, 18.181056855246425, -21.159229683689773, 72.01725756749511},
    // 49/1: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=1)
    {"49/1", uni(71, 49, 1000, 100), uni(72, 1, 1050, 100), 9.0, 0.39999999999999997, mwu_method::exact, false, 29.98045035637915, -22.286179498769343, 75.27252219151706},
    // 20/30: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=201)
    {"20/30", uni(81, 20, 1000, 100), uni(82, 30, 1015, 100), 165.0, 0.006899745073241162, mwu_method::exact, false, 24.061563247814775, 7.472976725548506, 40.881893024779856},
    // 49/49 null: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=925)
    {"49/49 null", uni(91, 49, 1000, 100), uni(92, 49, 1000, 100), 1063.0, 0.3318856014593622, mwu_method::exact, false, 5.320640956051648, -6.490940856747329, 18.409323249943554},
    // 49/49 shifted: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=925)
    {"49/49 shifted", uni(93, 49, 1000, 100), uni(94, 49, 1010, 100), 1307.0, 0.4530596602408287, mwu_method::exact, false, -4.600195875391364, -18.651885455474257, 7.243892191909254},
    // 49/49 separated: scipy.stats.mannwhitneyu(b, c, method="exact") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=TRUE) by definition (qwilcox k=925)
    {"49/49 separated", uni(95, 49, 1000, 100), uni(96, 49, 1200, 100), 0.0, 7.850029192963322e-29, mwu_method::exact, false, 191.39472127426416, 178.33394438493997, 202.80726624187082},
    // 50/50 asymptotic: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(966))
    {"50/50 asymptotic", uni(101, 50, 1000, 100), uni(102, 50, 1010, 100), 863.0, 0.007711171965657957, mwu_method::asymptotic, false, 15.615703715011477, 4.20678133610636, 29.830137095414102},
    // 60/45 asymptotic: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(1047))
    {"60/45 asymptotic", uni(111, 60, 1000, 100), uni(112, 45, 992, 100), 1548.0, 0.20094645967683922, mwu_method::asymptotic, false, -7.946138169616461, -18.569049324840307, 4.367358221672475},
    // 12/15 ties msec: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(46))
    {"12/15 ties msec", cents(121, 12, 300, 30), cents(122, 15, 305, 30), 29.5, 0.0033707956458214625, mwu_method::asymptotic, true, 0.1299999999999999, 0.040000000000000036, 0.20000000000000018},
    // perf task-clock 5/5: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(2))
    {"perf task-clock 5/5", task_clock(0, 5), task_clock(5, 10), 2.0, 0.0355788332395941, mwu_method::asymptotic, true, 1.6199999999999997, 0.0, 1.87},
    // 200/200 ties msec: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(17722))
    {"200/200 ties msec", cents(131, 200, 300, 200), cents(132, 200, 303, 200), 18393.0, 0.16465816512405107, mwu_method::asymptotic, true, 0.08000000000000007, -0.03000000000000025, 0.20999999999999952},
    // 200/200: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(17734))
    {"200/200", uni(141, 200, 1000, 100), uni(142, 200, 1003, 100), 18496.0, 0.19344861393415802, mwu_method::asymptotic, false, 3.9517430793493986, -1.9631103174760938, 9.98172110132873},
    // 500/500 separated: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(116050))
    {"500/500 separated", uni(151, 500, 1000, 100), uni(152, 500, 1100.5, 100), 0.0, 5.856242913498941e-165, mwu_method::asymptotic, false, 97.59698202786967, 93.76984065119177, 101.24661027174443},
    // 2000/1500 ties msec: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(1438726))
    {"2000/1500 ties msec", cents(161, 2000, 1000, 400), cents(162, 1500, 1010, 400), 1435173.5, 0.028436288359517843, mwu_method::asymptotic, true, 0.08999999999999986, 0.009999999999999787, 0.16000000000000014},
    // all tied 3/4: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(1))
    {"all tied 3/4", {5.0, 5.0, 5.0}, {5.0, 5.0, 5.0, 5.0}, 6.0, 1.0, mwu_method::asymptotic, true, 0.0, 0.0, 0.0},
    // 1/1 tied: scipy.stats.mannwhitneyu(b, c, method="asymptotic") (u, p);
    //   HL: R wilcox.test(c, b, conf.int=TRUE, exact=FALSE, correct=TRUE) procedure (brentq root = d_(1))
    {"1/1 tied", {2.0}, {2.0}, 0.5, 1.0, mwu_method::asymptotic, true, 0.0, 0.0, 0.0},
    };
    // clang-format on
}

} // namespace

TEST_CASE("mann_whitney_u agrees with scipy.stats.mannwhitneyu")
{
    for (const auto& k : rank_cases()) {
        CAPTURE(k.name);
        const auto r = mann_whitney_u(k.b, k.c);
        CHECK(r.u == k.u);
        CHECK(r.method == k.method);
        CHECK(r.ties == k.ties);
        CHECK_REL(r.p_value, k.p, p_tol);
        CHECK(r.p_value > 0);
        CHECK(r.p_value <= 1);
    }
}

TEST_CASE("mann_whitney_u method choice and symmetry")
{
    SUBCASE("exact below 50 per side without ties, asymptotic at 50")
    {
        CHECK(mann_whitney_u(uni(1, 49, 0, 1), uni(2, 49, 0, 1)).method == mwu_method::exact);
        CHECK(mann_whitney_u(uni(1, 50, 0, 1), uni(2, 49, 0, 1)).method == mwu_method::asymptotic);
        CHECK(mann_whitney_u(uni(1, 49, 0, 1), uni(2, 50, 0, 1)).method == mwu_method::asymptotic);
    }
    SUBCASE("one tie anywhere forces the normal approximation")
    {
        std::vector<double> b = uni(3, 10, 0, 1);
        std::vector<double> c = uni(4, 10, 0, 1);
        c[7] = b[2];
        const auto r = mann_whitney_u(b, c);
        CHECK(r.ties);
        CHECK(r.method == mwu_method::asymptotic);
    }
    SUBCASE("swapping the samples mirrors U and keeps p")
    {
        const auto b = cents(5, 30, 300, 40), c = cents(6, 25, 310, 40);
        const auto bc = mann_whitney_u(b, c), cb = mann_whitney_u(c, b);
        CHECK(bc.u + cb.u == 30.0 * 25.0);
        CHECK_REL(bc.p_value, cb.p_value, 1e-15);
    }
    SUBCASE("all values tied: p = 1, U = mn/2, never NaN")
    {
        const std::vector<double> b(60, 3.14), c(70, 3.14);
        const auto r = mann_whitney_u(b, c);
        CHECK(r.u == 60.0 * 70.0 / 2);
        CHECK(r.p_value == 1.0);
        CHECK(r.method == mwu_method::asymptotic);
    }
}

TEST_CASE("exact_u_distribution agrees with exact big-integer counts")
{
    // Exact fractions from gen_stats_refs.py (u_counts, Python integers),
    // R's qwilcox transcribed there.
    SUBCASE("49/49")
    {
        const exact_u_distribution d(49, 49);
        CHECK_REL(d.cdf(0), 3.925014596481662e-29, 1e-12);
        CHECK_REL(d.cdf(1), 7.850029192963324e-29, 1e-12);
        CHECK_REL(d.cdf(2), 1.5700058385926648e-28, 1e-12);
        CHECK_REL(d.cdf(3), 2.7475102175371636e-28, 1e-12);
        CHECK_REL(d.cdf(1200), 0.5, 1e-12);
        CHECK_REL(d.sf(2401), 3.925014596481662e-29, 1e-12); // upper tail by symmetry
        CHECK(d.cdf(2401) == 1.0);
        CHECK(d.cdf(-1) == 0.0);
        CHECK(d.quantile(0.005) == 840);
        CHECK(d.quantile(0.025) == 925);
        CHECK(d.quantile(0.5) == 1200);
        CHECK(d.quantile(0.975) == 1476);
        CHECK(d.quantile(0) == 0);
        CHECK(d.quantile(1) == 2401);
        CHECK_REL(d.min_p_two_sided(), 7.850029192963324e-29, 1e-12);
        CHECK_REL(d.p_two_sided(0), 7.850029192963324e-29, 1e-12);
        CHECK_REL(d.p_two_sided(2401), 7.850029192963324e-29, 1e-12);
        CHECK_REL(d.p_two_sided(1200.5), 1.0, 1e-12); // centre of an odd m*n
    }
    SUBCASE("10/4 and 4/10 are the same distribution")
    {
        for (const auto& d : {exact_u_distribution(10, 4), exact_u_distribution(4, 10)}) {
            CHECK_REL(d.cdf(0), 0.000999000999000999, 1e-12);
            CHECK_REL(d.cdf(3), 0.006993006993006993, 1e-12);
            CHECK_REL(d.cdf(20), 0.5274725274725275, 1e-12);
            CHECK(d.quantile(0.005) == 3);
            CHECK(d.quantile(0.025) == 6);
            CHECK(d.quantile(0.5) == 20);
            CHECK(d.quantile(0.975) == 34);
            CHECK_REL(d.min_p_two_sided(), 0.001998001998001998, 1e-12);
        }
    }
    SUBCASE("3/5")
    {
        const exact_u_distribution d(3, 5);
        CHECK_REL(d.cdf(1), 0.03571428571428571, 1e-12);
        CHECK_REL(d.cdf(3), 0.125, 1e-12);
        CHECK_REL(d.cdf(7), 0.5, 1e-12);
        CHECK(d.quantile(0.005) == 0);
        CHECK(d.quantile(0.025) == 1);
        CHECK(d.quantile(0.975) == 14);
    }
    SUBCASE("probabilities are a distribution for every small size")
    {
        for (std::size_t m = 0; m <= 12; ++m)
            for (std::size_t n = 0; n <= 12; ++n) {
                CAPTURE(m);
                CAPTURE(n);
                const exact_u_distribution d(m, n);
                CHECK(d.cdf(static_cast<double>(m * n)) == 1.0);
                for (std::size_t u = 0; u < m * n; ++u) {
                    CHECK(d.cdf(static_cast<double>(u)) <= d.cdf(static_cast<double>(u + 1)));
                    // symmetry about mn/2
                    CHECK_REL(d.cdf(static_cast<double>(u)), d.sf(static_cast<double>(m * n - u)), 1e-12);
                }
            }
    }
    SUBCASE("errors")
    {
        CHECK(error_id([] { exact_u_distribution(1000, 1000); }) == "stats.exact_too_large");
        CHECK_THROWS_WITH_AS(exact_u_distribution(1000, 1000),
                             "exact Mann-Whitney distribution for sizes 1000 and 1000 is too "
                             "expensive; use the normal approximation",
                             perfgate::error);
        const exact_u_distribution d(5, 5);
        CHECK(error_id([&] { (void)d.quantile(1.5); }) == "stats.bad_probability");
        CHECK_THROWS_WITH_AS((void)d.quantile(-0.1),
                             "exact_u_distribution::quantile: q must be in [0, 1], got -0.100000", perfgate::error);
    }
}

TEST_CASE("exact_u_distribution::min_p_two_sided is scipy's p-value for complete separation")
{
    // The gate asks whether an exact test at these sizes can reach its level
    // at all (gate/compare.cpp, estimate_shift). Reference: scipy 1.10.1,
    //   scipy.stats.mannwhitneyu([0.0, 1.0, ..., m-1], [100.0, ..., 100.0+n-1],
    //                            method="exact").pvalue
    // i.e. every baseline value below every candidate value (U = 0); the
    // same p with the samples swapped. Equal to min(1, 2 / comb(m+n, m)).
    struct size_case {
        std::size_t m, n;
        double p;
    };
    const size_case cases[] = {
        {1, 1, 1.0},                    // 2 / C(2, 1) = 1: capped
        {3, 3, 0.1},                    // 2 / 20: never below alpha 0.1
        {5, 5, 0.007936507936507936},   // 2 / 252, default min_samples per side
        {7, 9, 0.00017482517482517483}, // 2 / 11440 = 0.05 / 286 exactly
        {9, 7, 0.00017482517482517483},
        {2, 18, 0.010526315789473684},
        {1, 49, 0.04},
        {10, 4, 0.001998001998001998},
        {20, 20, 1.4508889103849684e-11},
        {12, 30, 1.808626206664854e-10},
        {49, 49, 7.850029192963322e-29}, // largest exact size (mwu_exact_limit - 1)
    };
    for (const auto& k : cases) {
        CAPTURE(k.m);
        CAPTURE(k.n);
        const auto d = shared_exact_u_distribution(k.m, k.n);
        CHECK_REL(d->min_p_two_sided(), k.p, p_tol);
        // The very double the test reports for complete separation, either way round.
        std::vector<double> b, c;
        for (std::size_t i = 0; i < k.m; ++i) b.push_back(static_cast<double>(i));
        for (std::size_t j = 0; j < k.n; ++j) c.push_back(100.0 + static_cast<double>(j));
        const auto below = mann_whitney_u(b, c), above = mann_whitney_u(c, b);
        REQUIRE(below.method == mwu_method::exact);
        CHECK(below.u == 0.0);
        CHECK(below.p_value == d->min_p_two_sided());
        CHECK(above.p_value == d->min_p_two_sided());
    }
}

TEST_CASE("hodges_lehmann agrees with R's wilcox.test(c, b, conf.int = TRUE)")
{
    for (const auto& k : rank_cases()) {
        CAPTURE(k.name);
        const auto r = hodges_lehmann(k.b, k.c, 0.05, k.method == mwu_method::exact);
        CHECK_REL(r.estimate, k.estimate, value_tol);
        CHECK_REL(r.lower, k.lower, value_tol);
        CHECK_REL(r.upper, k.upper, value_tol);
        CHECK(r.lower <= r.estimate);
        CHECK(r.estimate <= r.upper);
    }
}

TEST_CASE("hodges_lehmann on large samples selects without materialising")
{
    SUBCASE("a pure shift of 10,000 values is recovered")
    {
        const auto b = uni(7, 10000, 1000, 100);
        std::vector<double> c = uni(8, 10000, 1000, 100);
        for (double& v : c) v += 5;
        const auto r = hodges_lehmann(b, c, 0.05, false);
        // sd of a difference of two U(0,100) ~ 40.8; CI half-width at
        // n = 10,000 is ~ 1.96 * 40.8 * sqrt(pi/3) / 70.7 ~ 1.2.
        CHECK(std::fabs(r.estimate - 5) < 2);
        CHECK(r.lower < 5);
        CHECK(r.upper > 5);
        CHECK(r.upper - r.lower < 3);
        CHECK(r.upper - r.lower > 1);
    }
    SUBCASE("identical samples give a zero shift")
    {
        const auto b = cents(9, 3000, 100, 50);
        const auto r = hodges_lehmann(b, b, 0.05, false);
        CHECK(r.estimate == 0.0);
        CHECK(r.lower < 0);
        CHECK(r.upper > 0);
        CHECK(r.lower == -r.upper);
    }
}

TEST_CASE("hodges_lehmann degenerate input and errors")
{
    const std::vector<double> one{4.0}, two{1.0, 2.0};
    SUBCASE("single values")
    {
        const auto r = hodges_lehmann(one, two, 0.05, true);
        CHECK(r.estimate == -2.5); // median of {-3, -2}
        CHECK(r.lower == -3.0);    // qwilcox(0.025, 2, 1) = 0 -> k = 1, as R
        CHECK(r.upper == -2.0);
    }
    SUBCASE("bad alpha")
    {
        CHECK(error_id([&] { hodges_lehmann(one, two, 0, false); }) == "stats.bad_probability");
        CHECK_THROWS_WITH_AS(hodges_lehmann(one, two, 1.5, false),
                             "hodges_lehmann: alpha must be in (0, 1), got 1.500000", perfgate::error);
    }
    SUBCASE("exact on samples too large for the exact distribution")
    {
        const auto b = uni(1, 1000, 0, 1), c = uni(2, 1000, 0, 1);
        CHECK(error_id([&] { hodges_lehmann(b, c, 0.05, true); }) == "stats.exact_too_large");
    }
}

TEST_CASE("holm and benjamini_hochberg agree with R's p.adjust")
{
    // Reference: R's p.adjust definitions evaluated in gen_stats_refs.py
    // (scipy 1.10 has neither; false_discovery_control is scipy >= 1.11).
    SUBCASE("small")
    {
        const std::vector<double> p{0.01, 0.04, 0.03, 0.005, 0.5};
        const std::vector<double> holm_want{0.04, 0.09, 0.09, 0.025, 0.5};
        const std::vector<double> bh_want{0.025, 0.05, 0.05, 0.025, 0.5};
        const auto h = holm(p), b = benjamini_hochberg(p);
        REQUIRE(h.size() == p.size());
        REQUIRE(b.size() == p.size());
        for (std::size_t i = 0; i < p.size(); ++i) {
            CAPTURE(i);
            CHECK_REL(h[i], holm_want[i], 1e-15);
            CHECK_REL(b[i], bh_want[i], 1e-15);
        }
    }
    SUBCASE("ties")
    {
        const std::vector<double> p{0.02, 0.02, 0.001, 0.9, 0.02, 0.04};
        const std::vector<double> holm_want{0.1, 0.1, 0.006, 0.9, 0.1, 0.1};
        const std::vector<double> bh_want{0.03, 0.03, 0.006, 0.9, 0.03, 0.048};
        const auto h = adjust(p, correction::holm), b = adjust(p, correction::bh);
        for (std::size_t i = 0; i < p.size(); ++i) {
            CAPTURE(i);
            CHECK_REL(h[i], holm_want[i], 1e-15);
            CHECK_REL(b[i], bh_want[i], 1e-15);
        }
        CHECK(adjust(p, correction::none) == p);
    }
    SUBCASE("50 p-values, as one gate over many counters")
    {
        std::vector<double> p;
        for (std::uint32_t s = 201; p.size() < 50;) {
            s = lcg_next(s);
            const double u = static_cast<double>(s) / 4294967296.0;
            p.push_back(u * u * u); // Python: u ** 3 (exact for this check's tolerance)
        }
        // clang-format off
        const std::vector<double> holm_want{
            1.0, 1.0, 1.0, 0.05819893691032303, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0943330045245149, 1.0, 
            1.0, 1.0, 0.33544999835672773, 1.0, 0.33544999835672773, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 
            0.07222701759006397, 1.0, 1.0, 0.016423717768754828, 1.0, 1.0, 0.4841135290468218, 
            0.3787117847238192, 1.0, 0.33544999835672773, 1.0, 0.663395779016221, 1.0, 
            0.04404194871219338, 1.0, 1.0, 1.0, 0.00016443499322390365, 1.0, 1.0, 
            0.017824861468389592, 1.0, 1.0, 1.0, 1.0, 1.0, 0.1946714178464552, 1.0
        };
        // clang-format on
        // clang-format off
        const std::vector<double> bh_want{
            0.10316363820108958, 0.2369098195221491, 0.19168953565109115, 0.012651942806591963, 
            0.1269841103772367, 0.8419796516724317, 0.9899392042014074, 0.6408374424628831, 
            0.6085342232130303, 0.015313799435797873, 0.9899392042014074, 0.1582859504569694, 
            0.9705251980224684, 0.03731883680604902, 0.8302158975201498, 0.03731883680604902, 
            0.2201837000646358, 0.14531099879410245, 0.15933525644767546, 0.8302158975201498, 
            0.19168953565109115, 0.456317328609114, 0.013375373627789625, 0.4507745156411596, 
            0.3649460763852364, 0.006189188009857498, 0.19168953565109115, 0.6425955458565275, 
            0.048999345045224886, 0.040460660761091796, 0.19168953565109115, 0.03731883680604902, 
            0.9899392042014074, 0.06403434160388234, 0.8044834501990156, 0.011713284231966324, 
            0.6408374424628831, 0.15933525644767546, 0.2996553696930967, 0.00016443499322390365, 
            0.19215608446613452, 0.8302158975201498, 0.006189188009857498, 0.46786129235865376, 
            0.2029591486705213, 0.9899392042014074, 0.8302158975201498, 0.2996553696930967, 
            0.028295264221868486, 0.46786129235865376
        };
        // clang-format on
        const auto h = holm(p), b = benjamini_hochberg(p);
        for (std::size_t i = 0; i < p.size(); ++i) {
            CAPTURE(i);
            CHECK_REL(h[i], holm_want[i], 1e-12);
            CHECK_REL(b[i], bh_want[i], 1e-12);
            CHECK(h[i] >= b[i]); // Holm is never less conservative than BH
        }
    }
    SUBCASE("empty input and bad p-values")
    {
        CHECK(holm({}).empty());
        CHECK(benjamini_hochberg({}).empty());
        const std::vector<double> bad{0.01, 1.5};
        CHECK(error_id([&] { holm(bad); }) == "stats.bad_p_value");
        CHECK_THROWS_WITH_AS(benjamini_hochberg(bad), "p-value [1] must be in [0, 1], got 1.500000", perfgate::error);
        const std::vector<double> nan{std::numeric_limits<double>::quiet_NaN()};
        CHECK(error_id([&] { adjust(nan, correction::none); }) == "stats.bad_p_value");
    }
}

TEST_CASE("welch_t_test agrees with scipy.stats.ttest_ind_from_stats(equal_var=False)")
{
    struct welch_case {
        double m1, s1;
        std::size_t n1;
        double m2, s2;
        std::size_t n2;
        double scipy_t, p, df;
    };
    // scipy's t is mean1 - mean2; perfgate's is mean2 - mean1 (candidate up
    // = positive). df by the Welch-Satterthwaite formula in the generator.
    const welch_case cases[] = {
        {100.0, 2.0, 10, 103.0, 2.5, 12, -3.126300634313437, 0.005322243184294817, 19.98032652757633},
        {4.57, 0.0, 5, 4.7, 0.3, 5, -0.9689627902499081, 0.38743363149082055, 4.0},
        {1000.0, 1.0, 30, 1000.0, 1.0, 30, 0.0, 1.0, 58.0},
        {50.0, 0.5, 3, 20.0, 4.0, 40, 43.15169713368457, 3.851127076636418e-29, 30.840620592383637},
        {1.0, 0.01, 20, 1.02, 0.01, 20, -6.324555320336764, 2.04413333739579e-07, 38.0},
    };
    for (const auto& k : cases) {
        CAPTURE(k.m1);
        CAPTURE(k.m2);
        const auto r = welch_t_test(k.m1, k.s1, k.n1, k.m2, k.s2, k.n2);
        REQUIRE(r.has_value());
        CHECK(std::fabs(r->t + k.scipy_t) <= 1e-12 * std::max(1.0, std::fabs(k.scipy_t)));
        CHECK_REL(r->df, k.df, 1e-12);
        CHECK_REL(r->p_value, k.p, p_tol);
    }
    SUBCASE("huge aggregates: squares that would overflow do not")
    {
        // t and df are scale-invariant; scipy's own squares overflow at 1e300
        // (it answers t = -0, p = 1), so the reference is
        // scipy.stats.ttest_ind_from_stats(1.0, 0.05, 5, 1.1, 0.055, 5, equal_var=False)
        // on the same data scaled by 1e-300: t = -3.0082841879809363,
        // p = 0.017032919439481747, df = 7.9284119962663855 (Welch-Satterthwaite, as above).
        for (double scale : {1.0, 1e300, 1e-300}) {
            CAPTURE(scale);
            const auto r = welch_t_test(1.0 * scale, 0.05 * scale, 5, 1.1 * scale, 0.055 * scale, 5);
            REQUIRE(r.has_value());
            CHECK_REL(r->t, 3.0082841879809363, 1e-12);
            CHECK_REL(r->df, 7.9284119962663855, 1e-12);
            CHECK_REL(r->p_value, 0.017032919439481747, p_tol);
        }
    }
    SUBCASE("degenerate input")
    {
        CHECK_FALSE(welch_t_test(1, 1, 1, 2, 1, 10).has_value()); // n < 2
        CHECK_FALSE(welch_t_test(1, 1, 10, 2, 1, 0).has_value());
        CHECK_FALSE(welch_t_test(1, 0, 10, 2, 0, 10).has_value()); // no spread at all
    }
}

TEST_CASE("between_run_test agrees with scipy (median_abs_deviation of the consecutive differences, t.sf, t.ppf)")
{
    struct between_case {
        const char* name;
        std::vector<double> history;
        double shift, within;
        double sd, se, df, t, p, lo, hi, mde;
    };
    // /usr/bin/python3 tests/reference/gen_between_run_refs.py: sd is
    // scipy.stats.median_abs_deviation(np.diff(h), scale="normal"), p is
    // 2 * scipy.stats.t.sf(abs(t), 0.3675 * (len(h) - 1)), the interval
    // shift -/+ scipy.stats.t.ppf(0.975, df) * se, the MDE
    // (t.ppf(0.975, df) + t.ppf(0.8, df)) * se.
    // clang-format off
    const between_case cases[] = {
        {"session", {100.0, 101.2, 99.1, 100.4, 98.7, 100.9, 101.5, 99.6, 100.2, 98.9, 100.7, 99.8}, 2.4, 0.0004, 2.223903327758403, 2.223903327758403, 4.0424999999999995, 1.0791836003137307, 0.340643184872868, -3.749028458094774, 8.549028458094774, 8.23909417911859},
        {"step", {50.0, 50.3, 49.8, 50.1, 49.9, 55.2, 55.0, 55.4, 54.9, 55.1}, -0.9, 0.01, 0.5930408874022493, 0.5930408874022493, 3.3075, -1.5176019379411623, 0.2180985440020153, -2.691836911514893, 0.8918369115148929, 2.363679866325606},
        {"within", {10.0, 10.01, 9.99, 10.0, 10.02, 9.98, 10.0, 10.01, 9.99, 10.0, 10.01}, 0.05, 0.0016, 0.007413011092527851, 0.04, 3.675, 1.25, 0.2849824636082098, -0.06504051533812998, 0.16504051533812997, 0.15306823120834387},
    };
    // clang-format on
    for (const auto& k : cases) {
        CAPTURE(k.name);
        const auto r = between_run_test(k.shift, k.within, k.history);
        REQUIRE(r.has_value());
        CHECK(r->history_runs == k.history.size());
        CHECK_REL(r->sd, k.sd, 1e-12);
        CHECK_REL(r->se, k.se, 1e-12);
        CHECK_REL(r->df, k.df, 1e-12);
        REQUIRE(r->t.has_value());
        CHECK_REL(*r->t, k.t, 1e-12);
        REQUIRE(r->p_value.has_value());
        CHECK_REL(*r->p_value, k.p, p_tol);
        const auto ci = between_run_interval(k.shift, *r, 0.05);
        CHECK_REL(ci.lo, k.lo, 1e-9);
        CHECK_REL(ci.hi, k.hi, 1e-9);
        CHECK_REL(between_run_mde(*r, 0.05, 0.8), k.mde, 1e-9);
    }
    SUBCASE("too little history: no test; non-finite medians do not count")
    {
        const std::vector<double> nine{1, 2, 3, 4, 5, 6, 7, 8, 9};
        CHECK_FALSE(between_run_test(1.0, 0.0, nine).has_value());
        std::vector<double> ten = nine;
        ten.push_back(std::numeric_limits<double>::quiet_NaN());
        CHECK_FALSE(between_run_test(1.0, 0.0, ten).has_value());
        ten.back() = 10;
        CHECK(between_run_test(1.0, 0.0, ten).has_value());
        CHECK(between_run_min_history == 10);
    }
    SUBCASE("a between-run scale of exactly 0 is information: sd 0, and no p without within-run variance")
    {
        const std::vector<double> counts(12, 2613459.0); // callgrind: the same count every run
        const auto exact = between_run_test(5.0, 0.0, counts);
        REQUIRE(exact.has_value());
        CHECK(exact->sd == 0.0);
        CHECK(exact->se == 0.0);
        CHECK_FALSE(exact->t.has_value());
        CHECK_FALSE(exact->p_value.has_value());
        // Within-run variance alone: se is its root.
        const auto noisy = between_run_test(3.0, 4.0, counts);
        REQUIRE(noisy.has_value());
        CHECK(noisy->sd == 0.0);
        CHECK(noisy->se == 2.0);
        CHECK_REL(*noisy->t, 1.5, 1e-15);
    }
    SUBCASE("median_variance is (pi/2) sd^2 / n, and 0 without spread to estimate")
    {
        CHECK_REL(median_variance(2.0, 10), 3.141592653589793 / 2 * 4 / 10, 1e-15);
        CHECK(median_variance(2.0, 1) == 0.0);
        CHECK(median_variance(0.0, 10) == 0.0);
    }
    SUBCASE("probabilities outside (0, 1) are errors")
    {
        const auto r = between_run_test(1.0, 0.0, std::vector<double>{1, 3, 2, 5, 4, 6, 5, 8, 7, 9});
        REQUIRE(r.has_value());
        CHECK_THROWS_WITH_AS((void)between_run_interval(1.0, *r, 0.0), doctest::Contains("alpha"), perfgate::error);
        CHECK_THROWS_WITH_AS((void)between_run_mde(*r, 0.05, 1.0), doctest::Contains("power"), perfgate::error);
    }
}

TEST_CASE("descriptive statistics agree with numpy / scipy")
{
    SUBCASE("task-clock of a real capture (ties, even n)")
    {
        const auto x = task_clock(0, 10);
        // np.median, np.mean, np.std(ddof=1), scipy.stats.variation(ddof=1),
        // scipy.stats.median_abs_deviation(x) (scale 1)
        CHECK_REL(*median(x), 4.605, value_tol);
        CHECK_REL(*mean(x), 4.169, value_tol);
        CHECK_REL(*stddev(x), 0.8287400074812366, value_tol);
        CHECK_REL(*cov(x), 0.1987862814778692, value_tol);
        CHECK_REL(*mad(x), 0.12499999999999956, value_tol);
        const auto s = summarize(x);
        REQUIRE(s.has_value());
        CHECK(s->n == 10);
        CHECK(s->min == 2.90);
        CHECK(s->max == 4.88);
        CHECK_REL(s->median, 4.605, value_tol);
        CHECK_REL(s->mean, 4.169, value_tol);
        CHECK_REL(*s->stddev, 0.8287400074812366, value_tol);
        CHECK_REL(*s->cov, 0.1987862814778692, value_tol);
    }
    SUBCASE("odd n")
    {
        const std::vector<double> x{3.0, 1.0, 2.0, 10.0, 7.0};
        CHECK(*median(x) == 3.0);
        CHECK_REL(*mean(x), 4.6, value_tol);
        CHECK_REL(*stddev(x), 3.7815340802378077, value_tol);
        CHECK_REL(*cov(x), 0.822072626138654, value_tol);
        CHECK(*mad(x) == 2.0);
    }
    SUBCASE("degenerate input: nullopt, never NaN")
    {
        const std::vector<double> none, one{5.0}, zero_mean{-1.0, 1.0}, flat{2.0, 2.0, 2.0};
        CHECK_FALSE(median(none).has_value());
        CHECK_FALSE(mean(none).has_value());
        CHECK_FALSE(mad(none).has_value());
        CHECK_FALSE(summarize(none).has_value());
        CHECK_FALSE(stddev(one).has_value());
        CHECK_FALSE(cov(one).has_value());
        CHECK(*median(one) == 5.0);
        CHECK(*mad(one) == 0.0);
        const auto s1 = summarize(one);
        REQUIRE(s1.has_value());
        CHECK(s1->n == 1);
        CHECK_FALSE(s1->stddev.has_value());
        CHECK_FALSE(s1->cov.has_value());
        CHECK_FALSE(cov(zero_mean).has_value());
        CHECK_FALSE(summarize(zero_mean)->cov.has_value());
        CHECK(*stddev(flat) == 0.0);
        CHECK(*cov(flat) == 0.0);
    }
}

TEST_CASE("z-scores agree with numpy / scipy")
{
    const std::vector<double> h{10.0, 10.2, 9.9, 10.1, 10.0, 10.3, 9.8, 15.0};
    // (x - np.mean(h)) / np.std(h, ddof=1)
    CHECK_REL(*z_score(10.5, h), -0.092339021217558, 1e-12);
    CHECK_REL(*z_score(12.0, h), 0.7600211746368161, 1e-12);
    // (x - np.median(h)) / scipy.stats.median_abs_deviation(h, scale="normal"):
    // the outlier 15.0 inflates sd but not MAD.
    CHECK_REL(*robust_z_score(10.5, h), 2.0234692505882492, 1e-12);
    CHECK_REL(*robust_z_score(12.0, h), 8.76836675254909, 1e-12);
    SUBCASE("degenerate history")
    {
        const std::vector<double> none, one{3.0}, flat(30, 7.0);
        CHECK_FALSE(z_score(1.0, none).has_value());
        CHECK_FALSE(z_score(1.0, one).has_value());
        CHECK_FALSE(z_score(8.0, flat).has_value());
        CHECK_FALSE(robust_z_score(1.0, none).has_value());
        CHECK_FALSE(robust_z_score(8.0, flat).has_value());
        CHECK_FALSE(robust_z_score(1.0, one).has_value()); // MAD of one value is 0
    }
}

TEST_CASE("normal helpers agree with scipy.stats.norm")
{
    CHECK_REL(normal_quantile(0.975), 1.959963984540054, 1e-14);
    CHECK_REL(normal_quantile(0.8), 0.8416212335729143, 1e-14);
    CHECK_REL(normal_quantile(1e-10), -6.361340902404056, 1e-14);
    CHECK(normal_quantile(0.5) == 0.0);
    CHECK(normal_quantile(0.0) == -std::numeric_limits<double>::infinity());
    CHECK(normal_quantile(1.0) == std::numeric_limits<double>::infinity());
    CHECK_REL(normal_cdf(1.959963984540054), 0.975, 1e-15);
    CHECK_REL(normal_sf(1.959963984540054), 0.025, 1e-14);
    CHECK_REL(normal_cdf(-3.0), 0.0013498980316300933, 1e-14);
    CHECK_REL(normal_sf(-3.0), 0.9986501019683699, 1e-15);
    CHECK_REL(normal_sf(10.0), 7.61985302416047e-24, 1e-13);
    CHECK_REL(normal_sf(30.0), 4.906713927147908e-198, 1e-13);
    CHECK(normal_cdf(30.0) == 1.0);
    CHECK(error_id([] { normal_quantile(1.5); }) == "stats.bad_probability");
    CHECK_THROWS_WITH_AS(normal_quantile(-1), "normal_quantile: p must be in [0, 1], got -1.000000", perfgate::error);
}

TEST_CASE("minimum_detectable_effect_pct")
{
    // (norm.ppf(1 - a/2) + norm.ppf(power)) * sqrt(sb^2/nb + sc^2/nc)
    //   * sqrt(pi/3) / |centre| * 100, evaluated with scipy.stats.norm.
    CHECK_REL(*minimum_detectable_effect_pct(0.5, 10, 0.6, 10, 100.0, 0.05, 0.8), 0.7080812000641347, 1e-12);
    CHECK_REL(*minimum_detectable_effect_pct(2.0, 30, 2.0, 20, -50.0, 0.01, 0.9), 4.558019717222695, 1e-12);
    // n = 4/4: the exact test can still reach 0.05 (min p = 2/70 = 0.0286).
    CHECK_REL(*minimum_detectable_effect_pct(0.5, 4, 0.5, 4, 100.0, 0.05), 1.013615289289221, 1e-12);
    SUBCASE("sizes at which no rank test can reach alpha: infinity")
    {
        // 3/3: min p = 2/C(6,3) = 0.1 > 0.05; at alpha 0.2 it is reachable.
        CHECK(*minimum_detectable_effect_pct(0.5, 3, 0.5, 3, 100.0, 0.05) == std::numeric_limits<double>::infinity());
        CHECK(std::isfinite(*minimum_detectable_effect_pct(0.5, 3, 0.5, 3, 100.0, 0.2)));
        // 2/40: min p = 2/C(42,2) = 0.00232 < 0.01
        CHECK(std::isfinite(*minimum_detectable_effect_pct(0.5, 2, 0.5, 40, 100.0, 0.01)));
    }
    SUBCASE("degenerate input")
    {
        CHECK_FALSE(minimum_detectable_effect_pct(0.5, 1, 0.5, 10, 100.0, 0.05).has_value());
        CHECK_FALSE(minimum_detectable_effect_pct(0.5, 10, 0.5, 10, 0.0, 0.05).has_value());
        CHECK(*minimum_detectable_effect_pct(0.0, 10, 0.0, 10, 100.0, 0.05) == 0.0);
    }
    SUBCASE("bad alpha or power")
    {
        CHECK(error_id([] { minimum_detectable_effect_pct(1, 10, 1, 10, 1, 0.05, 1.0); }) == "stats.bad_probability");
        CHECK_THROWS_WITH_AS(minimum_detectable_effect_pct(1, 10, 1, 10, 1, 0.0),
                             "alpha must be in (0, 1), got 0.000000", perfgate::error);
    }
}

TEST_CASE("shared_exact_u_distribution is the same distribution as a fresh one")
{
    // Every (m, n) the gate can ask for exactly (m, n < 50), in an order that
    // overflows the per-thread cache many times, compared value for value
    // (==, not a tolerance: it must be the same computation).
    auto same_as_fresh = [](std::size_t m, std::size_t n) {
        const auto shared = shared_exact_u_distribution(m, n);
        const exact_u_distribution fresh(m, n);
        if (shared->m() != m || shared->n() != n) return false;
        for (std::size_t u = 0; u <= m * n; ++u) {
            if (shared->cdf(static_cast<double>(u)) != fresh.cdf(static_cast<double>(u))) return false;
        }
        return shared->quantile(0.025) == fresh.quantile(0.025) && shared->min_p_two_sided() == fresh.min_p_two_sided();
    };
    SUBCASE("all sizes, one thread, twice (cold and warm)")
    {
        for (int pass = 0; pass < 2; ++pass) {
            for (std::size_t m = 1; m < mwu_exact_limit; m += 3) {
                for (std::size_t n = 1; n < mwu_exact_limit; n += 4) {
                    CAPTURE(m);
                    CAPTURE(n);
                    REQUIRE(same_as_fresh(m, n));
                }
            }
        }
    }
    SUBCASE("a hit returns the cached instance; least recently used sizes are evicted")
    {
        const auto a = shared_exact_u_distribution(30, 30);
        CHECK(shared_exact_u_distribution(30, 30) == a);
        for (std::size_t n = 1; n <= exact_u_cache_size; ++n) shared_exact_u_distribution(2, n);
        const auto again = shared_exact_u_distribution(30, 30);
        CHECK(again != a); // evicted and rebuilt
        CHECK(again->cdf(450) == a->cdf(450));
        CHECK(a->m() == 30); // the old instance lives while held
    }
    SUBCASE("several threads at once")
    {
        std::vector<int> ok(4, 0);
        {
            std::vector<std::thread> threads;
            for (std::size_t t = 0; t < ok.size(); ++t) {
                threads.emplace_back([&, t] {
                    bool all = true;
                    for (int rep = 0; rep < 3; ++rep) {
                        for (std::size_t m = 5 + t; m < mwu_exact_limit; m += 7) all = all && same_as_fresh(m, 30);
                    }
                    ok[t] = all;
                });
            }
            for (auto& th : threads) th.join();
        }
        CHECK(ok == std::vector<int>(4, 1));
    }
    SUBCASE("errors are thrown, not cached")
    {
        CHECK(error_id([] { shared_exact_u_distribution(1000, 1000); }) == "stats.exact_too_large");
        CHECK_THROWS_WITH_AS(shared_exact_u_distribution(1000, 1000),
                             doctest::Contains("sizes 1000 and 1000 is too expensive"), perfgate::error);
    }
}

namespace {

// hodges_lehmann(b, c, alpha, exact) against the definition: all m*n
// differences sorted, the estimate their median, the bounds d_(k) and
// d_(mn+1-k) of one k (the rank itself is tested against R). Exact equality:
// the k-th difference is one specific double.
bool hl_is_sorted_differences(const std::vector<double>& b, const std::vector<double>& c, double alpha, bool exact)
{
    std::vector<double> d;
    for (double cj : c)
        for (double bi : b) d.push_back(cj - bi);
    std::sort(d.begin(), d.end());
    const std::size_t mn = d.size();
    const double est = mn % 2 ? d[mn / 2] : d[mn / 2 - 1] + (d[mn / 2] - d[mn / 2 - 1]) / 2;
    const auto r = hodges_lehmann(b, c, alpha, exact);
    bool bounds = false;
    for (std::size_t k = 1; k <= mn && !bounds; ++k) bounds = d[k - 1] == r.lower && d[mn - k] == r.upper;
    return r.estimate == est && bounds;
}

} // namespace

TEST_CASE("hodges_lehmann equals the order statistics of all sorted differences")
{
    // Both selection paths (materialised up to m*n = 4096, Monahan above),
    // with and without ties, against the definition: sort all m*n
    // differences and index them. Exact equality: the k-th difference is one
    // specific double.
    auto brute = [](const std::vector<double>& b, const std::vector<double>& c, bool exact) {
        return hl_is_sorted_differences(b, c, 0.05, exact);
    };
    for (const std::uint32_t n : {1u, 2u, 7u, 30u, 49u, 64u, 65u, 90u}) {
        CAPTURE(n);
        const auto b = uni(11 + n, n, 100, 10), c = uni(12 + n, n + 1, 101, 10);
        CHECK(brute(b, c, false));
        if (n < mwu_exact_limit) CHECK(brute(b, c, true));
        const auto tb = cents(13 + n, n, 12, 1), tc = cents(14 + n, n, 12, 1); // many ties
        CHECK(brute(tb, tc, false));
    }
}

TEST_CASE("hodges_lehmann's bucket selection on hostile spreads equals sorting")
{
    // The materialised path (m*n <= 4096) selects by value buckets and falls
    // back to nth_element for spreads it cannot bucket. Each case is data
    // that pushes one of those branches: the estimate and the bounds must be
    // the exact doubles of sorting all differences, at levels whose interval
    // rank k lies below, at and beyond the middle.
    auto check = [](const std::vector<double>& b, const std::vector<double>& c) {
        for (const double alpha : {0.001, 0.05, 0.5, 0.99}) {
            CAPTURE(alpha);
            CHECK(hl_is_sorted_differences(b, c, alpha, false));
        }
    };
    SUBCASE("one value repeated: every bucket round sees max == min")
    {
        check(std::vector<double>(40, 7.0), std::vector<double>(41, 7.0));
    }
    SUBCASE("two values: all differences in two buckets")
    {
        std::vector<double> b(50), c(50);
        for (std::size_t i = 0; i < 50; ++i) b[i] = i % 3 ? 1.0 : 2.0, c[i] = i % 5 ? 2.0 : 1.0;
        check(b, c);
    }
    SUBCASE("one far outlier squeezes the rest into one bucket")
    {
        auto b = uni(31, 60, 100, 1), c = uni(32, 60, 100, 1);
        c[17] = 1e12;
        check(b, c);
    }
    SUBCASE("a range wider than the largest double: the fallback")
    {
        auto b = uni(33, 40, 0, 1), c = uni(34, 40, 0, 1);
        b[3] = -1.5e308;
        c[5] = 1.5e308;
        check(b, c);
    }
    SUBCASE("subnormal differences: the bucket scale overflows")
    {
        std::vector<double> b(30), c(30);
        for (std::size_t i = 0; i < 30; ++i)
            b[i] = 1e-320 * static_cast<double>(i % 7), c[i] = 1e-320 * static_cast<double>(i % 11);
        check(b, c);
    }
    SUBCASE("values over many magnitudes: the rounds run out")
    {
        std::vector<double> b(64), c(64);
        for (std::size_t i = 0; i < 64; ++i) b[i] = std::ldexp(1.0, static_cast<int>(i) * 15 - 480), c[i] = -b[i] / 3;
        check(b, c);
    }
    SUBCASE("signed zeros and ties across zero")
    {
        auto b = cents(35, 50, 0, 30), c = cents(36, 50, 0, 30);
        for (std::size_t i = 0; i < 50; i += 7) b[i] = -0.0, c[i] = 0.0;
        check(b, c);
    }
    SUBCASE("sizes around the materialised limit, one and both sides small")
    {
        check(uni(37, 1, 5, 1), uni(38, 4096, 5, 1));
        check(uni(39, 64, 5, 1), uni(40, 64, 5.5, 1));
        check(uni(41, 3, 5, 1), uni(42, 2, 5, 1));
    }
}
