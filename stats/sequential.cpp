#include "stats/sequential.hpp"

#include "model/error.hpp"
#include "stats/descriptive.hpp"
#include "stats/hodges_lehmann.hpp"
#include "stats/mde.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

namespace perfgate::stats {
namespace {

constexpr double infinity = std::numeric_limits<double>::infinity();

// ---- The Armitage-McPherson-Rowe recursion ---------------------------------
//
// Z_k = S_k / sqrt(I_k) where S_k has independent N(0, I_k - I_{k-1})
// increments under H0 (the canonical joint distribution, Jennison & Turnbull
// 2000, ch. 11). The sub-density f_k of Z_k on paths that have not crossed
// c_1..c_{k-1} satisfies f_1 = phi and
//   f_k(z) = int_{-inf}^{c_{k-1}} f_{k-1}(u) sqrt(I_k / D) phi((z sqrt I_k - u sqrt I_{k-1}) / sqrt D) du,
// D = I_k - I_{k-1}, and the probability of first crossing at look k is
//   P_k(c) = int_{-inf}^{c_{k-1}} f_{k-1}(u) Phi_bar((c sqrt I_k - u sqrt I_{k-1}) / sqrt D) du
// (Armitage, McPherson & Rowe 1969; Jennison & Turnbull 2000, ch. 19). The
// integrals run on a uniform grid with Simpson's rule, f_k is kept as
// (Simpson weight x density) at the grid points.

// Grid limits on the z scale. Z_k is N(0, 1) marginally under H0 and the
// sub-density is below phi, so the mass below -10 is < 1e-23 and above 12
// < 1e-32: far below any error rate a plan spends at a look.
constexpr double seq_grid_lower = -10.0;
constexpr double seq_grid_upper = 12.0;
// Grid step: at most 0.02, and at most 1/8 of the smallest standard
// deviation of an increment on the z scale, sqrt((I_k - I_{k-1}) / I_k),
// the width of the sharpest kernel. Simpson's error is then O((1/8)^4) of a
// smooth integrand: tests/test_sequential pins the boundaries to 1e-6 of an
// independent computation on a ten times finer grid.
constexpr double seq_max_step = 0.02;
constexpr double seq_steps_per_kernel_sd = 8.0;
// The kernel is dropped beyond this many of its standard deviations
// (phi(10) = 7.7e-23).
constexpr double seq_kernel_reach = 10.0;
// Boundaries beyond this need an exit probability below 1e-170 or so: they
// are +infinity (no test can reach them).
constexpr double seq_boundary_cap = 40.0;

double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi); }

struct seq_density {
    double lo = seq_grid_lower;
    double step = 0;
    std::vector<double> wf; // Simpson weight x sub-density at lo + i * step

    [[nodiscard]] double z(std::size_t i) const { return lo + static_cast<double>(i) * step; }
};

// A Simpson grid on [seq_grid_lower, min(c, seq_grid_upper)] with an even
// number of intervals no wider than max_step; wf holds the weights only.
seq_density seq_simpson_grid(double c, double max_step)
{
    seq_density g;
    const double hi = std::min(c, seq_grid_upper);
    if (!(hi > g.lo)) return g; // nothing continues (a boundary below -10)
    std::size_t intervals = 2 * static_cast<std::size_t>(std::ceil((hi - g.lo) / (2 * max_step)));
    intervals = std::max<std::size_t>(intervals, 2);
    g.step = (hi - g.lo) / static_cast<double>(intervals);
    g.wf.assign(intervals + 1, 0.0);
    for (std::size_t i = 0; i <= intervals; ++i) {
        const double w = (i == 0 || i == intervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
        g.wf[i] = w * g.step / 3;
    }
    return g;
}

// The grid step for these looks (see seq_max_step).
double seq_step_for(std::span<const double> information)
{
    double step = seq_max_step;
    for (std::size_t k = 1; k < information.size(); ++k) {
        const double sd = std::sqrt((information[k] - information[k - 1]) / information[k]);
        step = std::min(step, sd / seq_steps_per_kernel_sd);
    }
    return step;
}

// Sub-density of Z_1 on (-inf, c_1).
seq_density seq_first_density(double c, double step)
{
    seq_density g = seq_simpson_grid(c, step);
    for (std::size_t i = 0; i < g.wf.size(); ++i) g.wf[i] *= phi(g.z(i));
    return g;
}

// P_k(c): first crossing at look k given the previous look's sub-density.
double seq_crossing(const seq_density& prev, double info_prev, double info, double c)
{
    if (c == infinity) return 0;
    const double sd = std::sqrt(info - info_prev);
    const double a = c * std::sqrt(info), b = std::sqrt(info_prev);
    double p = 0;
    for (std::size_t j = 0; j < prev.wf.size(); ++j) p += prev.wf[j] * normal_sf((a - prev.z(j) * b) / sd);
    return p;
}

// f_k on (-inf, c_k) from f_{k-1}.
seq_density seq_next_density(const seq_density& prev, double info_prev, double info, double c, double step)
{
    seq_density g = seq_simpson_grid(c, step);
    if (prev.wf.empty()) {
        g.wf.assign(g.wf.size(), 0.0);
        return g;
    }
    const double sd = std::sqrt(info - info_prev);
    const double root = std::sqrt(info), root_prev = std::sqrt(info_prev);
    const double scale = root / sd;
    const double last = static_cast<double>(prev.wf.size() - 1);
    for (std::size_t i = 0; i < g.wf.size(); ++i) {
        const double zi = g.z(i) * root;
        // Only u within seq_kernel_reach kernel sds of z sqrt(I_k / I_{k-1}).
        const double u_lo = (zi - seq_kernel_reach * sd) / root_prev;
        const double u_hi = (zi + seq_kernel_reach * sd) / root_prev;
        const double j_lo = std::max(0.0, std::ceil((u_lo - prev.lo) / prev.step));
        const double j_hi = std::min(last, std::floor((u_hi - prev.lo) / prev.step));
        double f = 0;
        if (j_lo <= j_hi) { // both whole numbers in [0, last] then
            const auto j_end = static_cast<std::size_t>(j_hi);
            for (auto j = static_cast<std::size_t>(j_lo); j <= j_end; ++j) {
                f += prev.wf[j] * phi((zi - prev.z(j) * root_prev) / sd);
            }
        }
        g.wf[i] *= scale * f;
    }
    return g;
}

// The c with P_k(c) = target, by bisection (P_k is decreasing in c).
double seq_solve_boundary(const seq_density& prev, double info_prev, double info, double target)
{
    if (!(target > 0)) return infinity;
    double hi = seq_boundary_cap;
    if (seq_crossing(prev, info_prev, info, hi) >= target) return infinity;
    double lo = seq_grid_lower;
    // More than all that continues: the boundary is below the grid.
    if (seq_crossing(prev, info_prev, info, lo) <= target) return lo;
    while (hi - lo > 1e-12 * std::max(1.0, std::fabs(lo))) {
        const double mid = lo + (hi - lo) / 2;
        if (mid == lo || mid == hi) break;
        (seq_crossing(prev, info_prev, info, mid) > target ? lo : hi) = mid;
    }
    return lo + (hi - lo) / 2;
}

[[noreturn]] void seq_bad_plan(const std::string& what) { throw perfgate::error(errors::stats_bad_plan, what); }

void seq_check_information(std::span<const double> information, std::size_t other_size, const char* other)
{
    if (information.empty()) seq_bad_plan("a sequential design needs at least one look");
    if (information.size() > sequential_max_looks)
        seq_bad_plan(std::to_string(information.size()) + " looks; at most " + std::to_string(sequential_max_looks) +
                     " (use larger blocks)");
    if (other_size != information.size())
        seq_bad_plan(std::string(other) + " has " + std::to_string(other_size) + " entries for " +
                     std::to_string(information.size()) + " looks");
    for (std::size_t k = 0; k < information.size(); ++k) {
        const double i = information[k];
        if (!(std::isfinite(i) && i > 0 && (k == 0 || i > information[k - 1])))
            seq_bad_plan("information must be positive, finite and strictly increasing (look " + std::to_string(k + 1) +
                         ": " + std::to_string(i) + ")");
    }
}

std::vector<double> seq_boundaries(std::span<const double> information, std::span<const double> cumulative, double step)
{
    std::vector<double> c(information.size());
    c[0] = cumulative[0] > 0 ? -normal_quantile(cumulative[0]) : infinity;
    seq_density f = seq_first_density(c[0], step);
    for (std::size_t k = 1; k < information.size(); ++k) {
        c[k] = seq_solve_boundary(f, information[k - 1], information[k], cumulative[k] - cumulative[k - 1]);
        if (k + 1 < information.size()) f = seq_next_density(f, information[k - 1], information[k], c[k], step);
    }
    return c;
}

// Information of the rank-sum statistic with n per side, up to a constant:
// m n / (m + n + 1) (see the header).
double seq_rank_information(std::size_t n)
{
    const double x = static_cast<double>(n);
    return x * x / (2 * x + 1);
}

// The smallest one-sided p-value mann_whitney_u can give for n tie-free
// values per side: complete separation, exact below mwu_exact_limit, else
// the continuity-corrected normal approximation.
double seq_min_one_sided_p(std::size_t n)
{
    if (n < mwu_exact_limit) return shared_exact_u_distribution(n, n)->cdf(0);
    const double x = static_cast<double>(n);
    const double sigma = std::sqrt(x * x * (2 * x + 1) / 12);
    return normal_sf((x * x / 2 - 0.5) / sigma);
}

// ---- One look ---------------------------------------------------------------

bool seq_zero_spread(std::span<const double> x)
{
    return std::all_of(x.begin(), x.end(), [&](double v) { return v == x.front(); });
}

// Whether a Hodges-Lehmann interval at two-sided level 1 - 2 level exists at
// these sizes: whether the most extreme arrangement is at least that
// improbable. Otherwise the interval would be [d_(1), d_(mn)] with a
// coverage below the level asked for (R's qwilcox() == 0 case).
bool seq_interval_attainable(std::size_t m, std::size_t n, mwu_method method, double level)
{
    if (!(level > 0)) return false;
    if (method == mwu_method::exact) return shared_exact_u_distribution(m, n)->cdf(0) <= level;
    // The asymptotic interval computes z_{1 - level} as normal_quantile(1 -
    // level): below 1e-12, 1 - level keeps too few digits of level.
    if (level < 1e-12) return false;
    // Hodges-Lehmann's k = floor(mn/2 + 1/2 - z sigma) >= 1 with the no-ties
    // sigma; ties within a sample only shrink sigma, so this is conservative.
    const double mm = static_cast<double>(m), nn = static_cast<double>(n);
    const double sigma = std::sqrt(mm * nn * (mm + nn + 1) / 12);
    return (mm * nn / 2 - 0.5) / sigma >= -normal_quantile(level);
}

std::optional<double> seq_mde(std::span<const double> b, std::span<const double> c, double centre, double level)
{
    const auto sd_b = stddev(b), sd_c = stddev(c);
    if (!sd_b || !sd_c || centre == 0) return std::nullopt;
    if (!(level > 0)) return infinity;
    // Values near 1e154 and above overflow the variance: no MDE rather than
    // minimum_detectable_effect_pct's finite-input invariant.
    if (!std::isfinite(*sd_b) || !std::isfinite(*sd_c) || !std::isfinite(centre)) return std::nullopt;
    return minimum_detectable_effect_pct(*sd_b, b.size(), *sd_c, c.size(), centre, 2 * level);
}

} // namespace

double alpha_spent(spending fn, double a, double t)
{
    if (!(a > 0 && a < 1)) seq_bad_plan("alpha_spent: the one-sided total must be in (0, 1), got " + std::to_string(a));
    if (!(t >= 0 && t <= 1))
        seq_bad_plan("alpha_spent: the information fraction must be in [0, 1], got " + std::to_string(t));
    if (t == 0) return 0;
    if (t == 1) return a;
    switch (fn) {
    case spending::obrien_fleming:
        // Lan & DeMets (1983), eq. for alpha_1*(t): 2 - 2 Phi(z_{1-a/2} / sqrt t),
        // written with the upper tail so that tiny values keep their digits.
        return std::min(a, 2 * normal_sf(-normal_quantile(a / 2) / std::sqrt(t)));
    case spending::pocock:
        // Lan & DeMets (1983), alpha_2*(t) = a ln(1 + (e - 1) t).
        return std::min(a, a * std::log1p((std::numbers::e - 1) * t));
    case spending::hwang_shih_decani:
        // Hwang, Shih & DeCani (1990): a (1 - e^{-g t}) / (1 - e^{-g}),
        // with expm1 so that small t keeps its digits.
        return std::min(a, a * std::expm1(-hsd_gamma * t) / std::expm1(-hsd_gamma));
    }
    seq_bad_plan("alpha_spent: unknown spending function");
}

std::vector<double> spending_boundaries(std::span<const double> information, std::span<const double> cumulative_alpha)
{
    seq_check_information(information, cumulative_alpha.size(), "cumulative_alpha");
    for (std::size_t k = 0; k < cumulative_alpha.size(); ++k) {
        const double a = cumulative_alpha[k];
        if (!(a >= 0 && a < 1 && (k == 0 || a >= cumulative_alpha[k - 1])))
            seq_bad_plan("cumulative alpha must be in [0, 1) and non-decreasing (look " + std::to_string(k + 1) + ": " +
                         std::to_string(a) + ")");
    }
    return seq_boundaries(information, cumulative_alpha, seq_step_for(information));
}

std::vector<double> crossing_probabilities(std::span<const double> information, std::span<const double> boundaries)
{
    seq_check_information(information, boundaries.size(), "boundaries");
    for (std::size_t k = 0; k < boundaries.size(); ++k) {
        if (std::isnan(boundaries[k]) || boundaries[k] == -infinity)
            seq_bad_plan("boundary of look " + std::to_string(k + 1) + " must be a number or +infinity");
    }
    const double step = seq_step_for(information);
    std::vector<double> p(boundaries.size());
    p[0] = normal_sf(boundaries[0]);
    seq_density f = seq_first_density(boundaries[0], step);
    for (std::size_t k = 1; k < boundaries.size(); ++k) {
        p[k] = seq_crossing(f, information[k - 1], information[k], boundaries[k]);
        if (k + 1 < boundaries.size()) f = seq_next_density(f, information[k - 1], information[k], boundaries[k], step);
    }
    return p;
}

// ---- sequential_plan ----------------------------------------------------------

sequential_plan::sequential_plan(double alpha, std::size_t min_n, std::size_t max_n, std::size_t block, spending fn)
    : alpha_(alpha), min_n_(min_n), max_n_(max_n), block_(block), fn_(fn)
{
    if (!(alpha > 0 && alpha < 1))
        seq_bad_plan("sequential_plan: alpha must be in (0, 1), got " + std::to_string(alpha));
    if (min_n < 2)
        seq_bad_plan("sequential_plan: min_n must be at least 2 repetitions per side, got " + std::to_string(min_n));
    if (min_n > max_n)
        seq_bad_plan("sequential_plan: min_n (" + std::to_string(min_n) + ") is larger than max_n (" +
                     std::to_string(max_n) + ")");
    if (block == 0) seq_bad_plan("sequential_plan: block must be at least 1 repetition per side, got 0");
    const std::size_t looks = 1 + (max_n - min_n + block - 1) / block;
    if (looks > sequential_max_looks)
        seq_bad_plan("sequential_plan: " + std::to_string(looks) + " looks from " + std::to_string(min_n) + " to " +
                     std::to_string(max_n) + " in blocks of " + std::to_string(block) + "; at most " +
                     std::to_string(sequential_max_looks) + " (use larger blocks)");
    for (std::size_t n = min_n; n < max_n; n += block) n_.push_back(n);
    n_.push_back(max_n);
    for (std::size_t n : n_) information_.push_back(seq_rank_information(n));
    compute_boundaries();
}

void sequential_plan::compute_boundaries()
{
    const double a = alpha_ / 2;
    const double total = information_.back();
    spent_.clear();
    for (std::size_t k = 0; k + 1 < information_.size(); ++k)
        spent_.push_back(alpha_spent(fn_, a, information_[k] / total));
    spent_.push_back(a); // the final look spends exactly what is left
    boundary_ = seq_boundaries(information_, spent_, seq_step_for(information_));
    set_nominal();
}

void sequential_plan::set_nominal()
{
    nominal_.clear();
    for (double c : boundary_) nominal_.push_back(normal_sf(c));
    // c_1 is the quantile of the first look's spending: its level is that
    // spending itself, without the round trip through the quantile.
    nominal_.front() = spent_.front();
}

std::size_t sequential_plan::look_n(std::size_t look) const
{
    PERFGATE_CHECK(look < n_.size());
    return n_[look];
}

double sequential_plan::information_fraction(std::size_t look) const
{
    PERFGATE_CHECK(look < n_.size());
    return information_[look] / information_.back();
}

double sequential_plan::spent(std::size_t look) const
{
    PERFGATE_CHECK(look < n_.size());
    return spent_[look];
}

double sequential_plan::boundary_z(std::size_t look) const
{
    PERFGATE_CHECK(look < n_.size());
    return boundary_[look];
}

double sequential_plan::nominal_p(std::size_t look) const
{
    PERFGATE_CHECK(look < n_.size());
    return nominal_[look];
}

std::optional<std::size_t> sequential_plan::first_attainable_look() const
{
    for (std::size_t k = 0; k < n_.size(); ++k) {
        if (seq_min_one_sided_p(n_[k]) < nominal_[k]) return k;
    }
    return std::nullopt;
}

sequential_plan sequential_plan::ending_at(std::size_t look) const
{
    if (look >= n_.size())
        throw perfgate::error(errors::stats_bad_look, "sequential_plan::ending_at: look " + std::to_string(look) +
                                                          " of a plan with " + std::to_string(n_.size()) + " looks");
    sequential_plan p = *this;
    p.max_n_ = n_[look];
    p.n_.resize(look + 1);
    p.information_.resize(look + 1);
    p.spent_.resize(look + 1);
    p.spent_.back() = alpha_ / 2;
    // The original grid step, so that the earlier boundaries are the very
    // same doubles (the step is the finest any prefix needs).
    p.boundary_ = seq_boundaries(p.information_, p.spent_, seq_step_for(information_));
    p.set_nominal();
    return p;
}

// ---- sequential_look ------------------------------------------------------------

namespace {

void seq_check_look_args(const sequential_plan& plan, std::size_t look, std::span<const double> baseline,
                         std::span<const double> candidate, double threshold_pct)
{
    if (look >= plan.looks())
        throw perfgate::error(errors::stats_bad_look, "sequential_look: look " + std::to_string(look) +
                                                          " of a plan with " + std::to_string(plan.looks()) + " looks");
    if (!(std::isfinite(threshold_pct) && threshold_pct >= 0))
        throw perfgate::error(errors::stats_bad_threshold,
                              "sequential_look: threshold_pct must be finite and >= 0, got " +
                                  std::to_string(threshold_pct));
    PERFGATE_CHECK(!baseline.empty() && !candidate.empty());
    for (double v : baseline) PERFGATE_CHECK(std::isfinite(v));
    for (double v : candidate) PERFGATE_CHECK(std::isfinite(v));
}

// Whether r.delta_pct, a change in direction `sign` (+1: the candidate is
// higher; -1: lower), reaches the threshold in that direction.
bool seq_beyond_threshold(const sequential_result& r, int sign, double threshold_pct)
{
    return r.delta_pct && *r.delta_pct != 0 &&
           (sign > 0 ? *r.delta_pct >= threshold_pct : *r.delta_pct <= -threshold_pct);
}

// A significant change in direction `sign` is a regression when that is the
// counter's worse direction, an improvement otherwise.
sequential_decision seq_direction_decision(int sign, worse_if worse)
{
    const int worse_sign = worse == worse_if::higher ? 1 : -1;
    return sign == worse_sign ? sequential_decision::regression : sequential_decision::improvement;
}

// docs/statistics.md "Deterministic counters": both sides have zero spread,
// the change is known exactly and decided on the threshold alone.
void seq_decide_deterministic(sequential_result& r, double med_b, double change, double threshold_pct, worse_if worse)
{
    r.deterministic = true;
    if (med_b != 0) {
        r.shift_pct = r.delta_pct;
        r.ci_pct = std::pair{*r.delta_pct, *r.delta_pct};
        r.mde_pct = 0.0;
    }
    const int sign = change > 0 ? 1 : change < 0 ? -1 : 0;
    r.decision = sign != 0 && seq_beyond_threshold(r, sign, threshold_pct) ? seq_direction_decision(sign, worse)
                                                                           : sequential_decision::unchanged;
}

// The Mann-Whitney test at this look's one-sided level p_k (r.nominal_p),
// deciding a regression or an improvement when significant and beyond the
// threshold; then the Hodges-Lehmann shift with its repeated confidence
// interval, and the MDE.
void seq_rank_test(sequential_result& r, std::span<const double> baseline, std::span<const double> candidate,
                   double med_b, double threshold_pct, worse_if worse)
{
    const double level = r.nominal_p;
    const double ci_level = r.equivalence_p;
    const mwu_result test = mann_whitney_u(baseline, candidate);
    r.method = test.method;
    r.u = test.u;
    r.p_value = test.p_value;
    // Two-sided p = 2 x the one-sided p toward the observed direction, for the
    // exact distribution (symmetric) and the continuity-corrected normal one.
    r.p_one_sided = test.p_value / 2;
    const std::size_t m = baseline.size(), n = candidate.size();
    const double half = static_cast<double>(m) * static_cast<double>(n) / 2;
    // U counts baseline values above candidate values: a small U means the
    // candidate ranks higher.
    const int rank_sign = test.u < half ? 1 : test.u > half ? -1 : 0;
    if (rank_sign != 0 && r.p_one_sided < level && seq_beyond_threshold(r, rank_sign, threshold_pct))
        r.decision = seq_direction_decision(rank_sign, worse);

    if (med_b != 0) {
        const bool exact = test.method == mwu_method::exact;
        const bool attainable = seq_interval_attainable(m, n, test.method, ci_level);
        // Without an attainable interval only the estimate is wanted; any
        // level gives the same median of the differences.
        const shift_estimate hl = hodges_lehmann(baseline, candidate, attainable ? 2 * ci_level : 0.5, exact);
        const double scale = 100 / std::fabs(med_b);
        r.shift_pct = hl.estimate * scale;
        if (attainable) r.ci_pct = std::pair{hl.lower * scale, hl.upper * scale};
    }
    r.mde_pct = seq_mde(baseline, candidate, std::fabs(med_b), level);
}

// Not decided by the test: unchanged when the interval lies inside
// (-threshold, threshold), inconclusive at the final look.
void seq_settle_undecided(sequential_result& r, double threshold_pct)
{
    if (r.decision != sequential_decision::continue_sampling) return;
    if (r.ci_pct && r.ci_pct->first > -threshold_pct && r.ci_pct->second < threshold_pct) {
        r.decision = sequential_decision::unchanged;
    } else if (r.final_look) {
        r.decision = sequential_decision::inconclusive;
    }
}

} // namespace

sequential_result sequential_look(const sequential_plan& plan, std::size_t look, std::span<const double> baseline,
                                  std::span<const double> candidate, double threshold_pct, worse_if worse)
{
    return sequential_look(plan, plan, look, baseline, candidate, threshold_pct, worse);
}

sequential_result sequential_look(const sequential_plan& plan, const sequential_plan& equivalence, std::size_t look,
                                  std::span<const double> baseline, std::span<const double> candidate,
                                  double threshold_pct, worse_if worse)
{
    seq_check_look_args(plan, look, baseline, candidate, threshold_pct);
    PERFGATE_CHECK(equivalence.looks() == plan.looks());
    for (std::size_t k = 0; k < plan.looks(); ++k) PERFGATE_CHECK(equivalence.look_n(k) == plan.look_n(k));

    sequential_result r;
    r.look = look;
    r.final_look = look + 1 == plan.looks();
    r.nominal_p = plan.nominal_p(look);
    r.equivalence_p = equivalence.nominal_p(look);
    r.boundary_z = plan.boundary_z(look);

    const double med_b = *median(baseline), med_c = *median(candidate);
    const double change = med_c - med_b;
    if (med_b != 0) {
        r.delta_pct = change / std::fabs(med_b) * 100;
    } else if (change != 0) {
        // Any change away from a zero baseline exceeds every relative threshold.
        r.delta_pct = std::copysign(infinity, change);
    }

    if (seq_zero_spread(baseline) && seq_zero_spread(candidate)) {
        seq_decide_deterministic(r, med_b, change, threshold_pct, worse);
        return r;
    }
    seq_rank_test(r, baseline, candidate, med_b, threshold_pct, worse);
    seq_settle_undecided(r, threshold_pct);
    return r;
}

} // namespace perfgate::stats
