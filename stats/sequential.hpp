// Sequential sampling: a group-sequential Mann-Whitney test with Lan-DeMets
// alpha spending, for measuring in blocks until a counter is decided.
//
// The rule (stats/SEQUENTIAL.md has the derivation, the sources and the
// simulation; bench/sim_sequential reproduces the figures):
//
//  - Looks. A plan measures min_n repetitions per side, then looks again
//    after every block of `block` more, up to max_n: looks at
//    n_k = min_n, min_n + block, ..., max_n (the last block may be shorter).
//  - Statistic. At look k the gate's own two-sided Mann-Whitney test
//    (stats/mann_whitney.hpp) is computed on all samples so far; its
//    one-sided p-value toward the direction the ranks moved is p / 2.
//  - Information. For the rank-sum statistic of nested samples of sizes
//    (m_j, n_j) inside (m_k, n_k), Cov(U_j, U_k) = m_j n_j (m_k + n_k + 1) / 12
//    exactly under H0, so the standardised statistics have the canonical
//    joint distribution of Jennison & Turnbull (2000, ch. 11) with
//    information I_k = m_k n_k / (m_k + n_k + 1) (n^2 / (2n + 1) per look
//    here): Corr(Z_j, Z_k) = sqrt(I_j / I_k). The information fraction is
//    t_k = I_k / I_K. (Not n_k / N: that would assume correlation
//    sqrt(n_j / n_k), 4% too high from 5 to 60.)
//  - Spending. Each direction is a one-sided test at alpha / 2, as one look
//    of the fixed-N gate gives today. Its cumulative error spent by
//    information t is Lan & DeMets' (1983, Biometrika 70(3):659-663)
//    O'Brien-Fleming type a(t) = 2 - 2 Phi(z_{1-a/2} / sqrt t) with
//    a = alpha / 2 (the default; the same function as R gsDesign's sfLDOF),
//    or their Pocock type a(t) = a ln(1 + (e - 1) t), or Hwang, Shih &
//    DeCani's (1990) family at gamma -4 (see enum spending).
//  - Boundaries. The upper boundary c_k is found so that
//    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = a(t_k) - a(t_{k-1})
//    under H0, by the recursive numerical integration of Armitage, McPherson
//    & Rowe (1969, JRSS A 132(2):235-244), as Jennison & Turnbull (2000,
//    ch. 19) describe it: the sub-density of Z_k on the continuation region
//    is carried from look to look on a grid with Simpson's rule. Exact, not
//    a Bonferroni split of the increments. The nominal level of look k is
//    p_k = 1 - Phi(c_k): a regression is declared when the one-sided p-value
//    in the worse direction is below p_k (and the median change is at least
//    the threshold, as in the gate).
//  - Unchanged. Jennison & Turnbull's (2000, ch. 9) repeated confidence
//    interval: the Hodges-Lehmann interval at two-sided level 1 - 2 q_k,
//    as % of |median(baseline)|, q_k the look's nominal level of the
//    equivalence plan (by default the plan itself: q_k = p_k). All these
//    intervals cover the true shift simultaneously with probability
//    >= 1 - alpha_eq, whatever the looks. When it lies strictly inside
//    (-threshold, +threshold) the counter is unchanged: a group-sequential
//    equivalence test (Jennison & Turnbull 2000, ch. 6; Schuirmann 1987's
//    two one-sided tests at each look), wrong ("unchanged" where the shift
//    is at least the threshold) at most alpha_eq / 2 of the time. Early on
//    the level is so strict that no interval is attainable at these sizes;
//    then there is none (nullopt) and no "unchanged" yet. The equivalence
//    plan may have its own alpha (a gate of m counters tests regressions at
//    alpha / m each but equivalence at alpha: intersection-union, Berger &
//    Hsu 1996), with the same looks.
//  - Futility. At the last look, a counter that is neither significant nor
//    unchanged is inconclusive.
//  - Non-binding. Stopping for unchanged, improvement, or because another
//    counter's budget ran out, only removes chances to cross the regression
//    boundary later, so the family-wise false-fail rate over all looks stays
//    <= alpha / 2 per direction (alpha in all) under the normal approximation
//    of the rank statistics. Exact p-values are discrete and make it smaller.
//
// Limits: the error bound is asymptotic in the joint law of the looks (each
// look's p-value is exact); bench/sim_sequential measures it at 5..60
// repetitions. Multiplicity across counters is the caller's: for m gated
// counters, a plan at alpha / m per counter (Bonferroni) keeps the gate's
// family-wise rate. A decision is final: once a look returns anything but
// continue_sampling for a counter, do not test it again.
//
// Thread safety: a sequential_plan is immutable after construction; share it.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "stats/mann_whitney.hpp"

namespace perfgate::stats {

// The alpha-spending function.
enum class spending {
    // Lan & DeMets (1983): a(t) = 2 - 2 Phi(z_{1-a/2} / sqrt t). Almost
    // nothing early (2e-8 by t = 0.16), nearly a fixed test's level at the end.
    obrien_fleming,
    // Lan & DeMets (1983): a(t) = a ln(1 + (e - 1) t). Nearly even per look:
    // stops big effects soonest, the strictest last look.
    pocock,
    // Hwang, Shih & DeCani (1990, Statistics in Medicine 9:1439-1445):
    // a(t) = a (1 - e^{-g t}) / (1 - e^{-g}) with g = hsd_gamma = -4, R
    // gsDesign's default (sfHSD, sfupar = -4). O'Brien-Fleming-like late,
    // but spends enough early for a rank test to decide at 10 per side.
    hwang_shih_decani,
};

// The gamma of spending::hwang_shih_decani (gsDesign's default).
inline constexpr double hsd_gamma = -4.0;

// Which way a counter gets worse: higher for times and counts, lower for
// throughput-like counters (IPC).
enum class worse_if { higher, lower };

enum class sequential_decision {
    continue_sampling, // not decided yet: measure another block
    regression,
    improvement,
    unchanged,    // the repeated CI lies inside +-threshold
    inconclusive, // budget spent (final look) without a decision
};

// At most this many looks per plan. The boundary computation costs
// O(looks x grid) with a grid of up to a few thousand points, and looks
// beyond a few dozen gain almost nothing in expected sample size (Jennison &
// Turnbull 2000, ch. 7): a larger budget should grow the block instead.
inline constexpr std::size_t sequential_max_looks = 100;

// Cumulative one-sided error a(t) spent by information fraction t in [0, 1]
// for a one-sided total a in (0, 1): 0 at t = 0, exactly a at t = 1.
// Throws perfgate::error "stats.bad_plan" for a or t out of range.
double alpha_spent(spending fn, double a, double t);

// Upper boundaries c_1..c_K of a one-sided group-sequential test on
// statistics with the canonical joint distribution (Corr(Z_j, Z_k) =
// sqrt(I_j / I_k), j <= k), such that the probability under H0 of first
// crossing at look k is cumulative_alpha[k] - cumulative_alpha[k-1]
// (Armitage-McPherson-Rowe recursion). information: strictly increasing,
// positive; cumulative_alpha: non-decreasing, in [0, 1), same length. A look
// that spends nothing gets +infinity. c_1 = z_{1 - cumulative_alpha[0]}
// exactly. Throws perfgate::error "stats.bad_plan" on bad input or more than
// sequential_max_looks looks. Accuracy: the crossing probabilities of the
// result are within 1e-7 relative of the targets (tests/test_sequential).
std::vector<double> spending_boundaries(std::span<const double> information, std::span<const double> cumulative_alpha);

// The other direction of the same computation: for boundaries c_1..c_K
// (+infinity allowed), the probabilities under H0 of first crossing at each
// look, P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k). Their sum is the
// one-sided family-wise error. Same input rules and errors as above.
std::vector<double> crossing_probabilities(std::span<const double> information, std::span<const double> boundaries);

// A planned sequence of looks with its boundaries, computed once at
// construction (about 30 ms for 12 looks, 0.4 s for 100). Immutable.
class sequential_plan {
public:
    // alpha: the gate's two-sided level (policy alpha): alpha / 2 per
    // direction. min_n: repetitions per side at the first look (>= 2);
    // max_n: the budget per side (>= min_n); block: repetitions per side
    // added between looks (>= 1). Throws perfgate::error "stats.bad_plan",
    // naming the field, for alpha outside (0, 1), min_n < 2, min_n > max_n,
    // block == 0, or more than sequential_max_looks looks.
    sequential_plan(double alpha, std::size_t min_n, std::size_t max_n, std::size_t block,
                    spending fn = spending::obrien_fleming);

    [[nodiscard]] double alpha() const noexcept { return alpha_; }
    [[nodiscard]] std::size_t min_n() const noexcept { return min_n_; }
    [[nodiscard]] std::size_t max_n() const noexcept { return max_n_; }
    [[nodiscard]] std::size_t block() const noexcept { return block_; }
    [[nodiscard]] spending spending_function() const noexcept { return fn_; }
    [[nodiscard]] std::size_t looks() const noexcept { return n_.size(); }

    // Per look (0-based index < looks(); out of range is PERFGATE_CHECK):
    // repetitions per side the look is planned at,
    [[nodiscard]] std::size_t look_n(std::size_t look) const;
    // its information fraction t_k = I_k / I_K,
    [[nodiscard]] double information_fraction(std::size_t look) const;
    // the cumulative one-sided error spent through it, a(t_k) (alpha / 2 at
    // the final look),
    [[nodiscard]] double spent(std::size_t look) const;
    // its boundary c_k on the z scale (+infinity: cannot reject there),
    [[nodiscard]] double boundary_z(std::size_t look) const;
    // and its nominal one-sided level p_k = 1 - Phi(c_k) (exactly the
    // spent error at the first look, so a one-look plan tests at alpha / 2).
    [[nodiscard]] double nominal_p(std::size_t look) const;

    // The first look at which tie-free samples of look_n(look) per side can
    // reach the look's level at all: the smallest one-sided p-value of the
    // Mann-Whitney test there (1 / C(2n, n) for the exact test, n < 50) is
    // below nominal_p. Earlier looks can only continue. nullopt when no look
    // can (then the plan can never declare a regression). O'Brien-Fleming
    // spending with min_n 5, block 5, max_n 60 at alpha 0.05: look 2
    // (n = 15); Pocock-type: look 1 (n = 10).
    [[nodiscard]] std::optional<std::size_t> first_attainable_look() const;

    // The same plan cut short: `look` becomes the final look and spends all
    // the error left, the looks before it keep their boundaries. For a time
    // budget that runs out before max_n (Lan & DeMets: the analysis that is
    // actually last spends the rest). Valid as long as the decision to stop
    // there does not depend on the comparison itself. Throws
    // perfgate::error "stats.bad_look" when look >= looks().
    [[nodiscard]] sequential_plan ending_at(std::size_t look) const;

private:
    void compute_boundaries();
    void set_nominal();

    double alpha_ = 0;
    std::size_t min_n_ = 0, max_n_ = 0, block_ = 0;
    spending fn_ = spending::obrien_fleming;
    std::vector<std::size_t> n_;
    std::vector<double> information_;
    std::vector<double> spent_;
    std::vector<double> boundary_;
    std::vector<double> nominal_;
};

// What one look says about one counter.
struct sequential_result {
    sequential_decision decision = sequential_decision::continue_sampling;
    std::size_t look = 0;
    bool final_look = false;
    // Both sides have zero spread (callgrind counts, page-faults): decided
    // at once on |delta_pct| vs the threshold, as the gate's deterministic
    // rule; no test, method nullopt.
    bool deterministic = false;
    std::optional<mwu_method> method;
    double u = 0;             // U of the baseline sample
    double p_value = 1;       // two-sided Mann-Whitney p, as the fixed gate reports it
    double p_one_sided = 0.5; // p_value / 2: toward the direction the ranks moved
    double nominal_p = 0;     // this look's one-sided level p_k
    // The level q_k of the repeated confidence interval (ci_pct is at
    // two-sided 1 - 2 q_k): the equivalence plan's nominal level at this
    // look, p_k when the look had no plan of its own for it.
    double equivalence_p = 0;
    double boundary_z = 0; // c_k
    // (median(C) - median(B)) / |median(B)| * 100; +-infinity for a change
    // away from a zero baseline median, nullopt when both medians are 0.
    std::optional<double> delta_pct;
    // Hodges-Lehmann shift and its repeated confidence interval at this
    // look's equivalence level, as % of |median(B)|. nullopt when median(B)
    // is 0, and the interval also when no interval at level 1 - 2 q_k exists
    // at these sizes (q_k below the smallest attainable p-value).
    std::optional<double> shift_pct;
    std::optional<std::pair<double, double>> ci_pct;
    // Smallest shift (% of |median(B)|) this look could detect with 80%
    // power at its level p_k (stats/mde.hpp at alpha = 2 p_k); +infinity
    // when unattainable, nullopt for n < 2 on a side or median(B) == 0. The
    // "achieved MDE" to report when the budget runs out.
    std::optional<double> mde_pct;
};

// Tests one counter at look `look` of `plan` on all samples so far.
// threshold_pct: the counter's relative threshold (policy threshold_pct,
// >= 0). The samples should have plan.look_n(look) values per side; other
// sizes are tested as they are (the p-value is exact for the actual sizes)
// against the planned boundary, which assumed the planned information.
// Decision, in order: regression / improvement (one-sided p in that
// direction < p_k and |delta_pct| >= threshold in the same direction),
// unchanged (ci_pct inside (-threshold, threshold)), inconclusive at the
// final look, else continue_sampling.
// Errors: perfgate::error "stats.bad_look" for look >= plan.looks(),
// "stats.bad_threshold" for a negative or non-finite threshold; empty or
// non-finite samples are the caller's bug (PERFGATE_CHECK, as
// mann_whitney_u).
sequential_result sequential_look(const sequential_plan& plan, std::size_t look, std::span<const double> baseline,
                                  std::span<const double> candidate, double threshold_pct,
                                  worse_if worse = worse_if::higher);

// The same look with the repeated confidence interval, and so "unchanged",
// taken from `equivalence`: a plan with the same looks (look_n equal at
// every look; PERFGATE_CHECK) and its own alpha, typically the gate's alpha
// where `plan` has alpha / m. Regression and improvement are plan's alone.
// Stopping for "unchanged" is a non-binding futility stop for the
// regression boundary: it keeps plan's error rates.
sequential_result sequential_look(const sequential_plan& plan, const sequential_plan& equivalence, std::size_t look,
                                  std::span<const double> baseline, std::span<const double> candidate,
                                  double threshold_pct, worse_if worse = worse_if::higher);

} // namespace perfgate::stats
