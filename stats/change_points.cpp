#include "stats/change_points.hpp"

#include "model/error.hpp"
#include "stats/descriptive.hpp"
#include "stats/mann_whitney.hpp"

#include <Eigen/Core>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace perfgate::stats {
namespace {

// ---------------------------------------------------------------------------
// Tests between two adjacent segments.
// ---------------------------------------------------------------------------

// What the split and merge passes need to know about one split.
struct segment_test {
    double p_value = 1;
    // Relative size of the change, compared with min_magnitude.
    double magnitude = 0;
};

// numpy's float64 summation (np.add.reduce along a contiguous axis,
// numpy/core/src/umath/loops_utils.h.src pairwise_sum): blocks of up to 128
// values summed with eight interleaved accumulators, longer ranges split in
// halves at a multiple of 8. Otava's t-test takes np.mean and np.std of each
// segment; summing in the same order gives the same doubles, so the merge
// pass orders points exactly as Otava does even when p-values tie.
double numpy_sum(const double* a, std::size_t n)
{
    constexpr std::size_t block = 128;
    if (n < 8) {
        double r = 0;
        for (std::size_t i = 0; i < n; ++i) r += a[i];
        return r;
    }
    if (n <= block) {
        double r[8];
        for (std::size_t j = 0; j < 8; ++j) r[j] = a[j];
        std::size_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (std::size_t j = 0; j < 8; ++j) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) res += a[i];
        return res;
    }
    std::size_t half = n / 2;
    half -= half % 8;
    return numpy_sum(a, half) + numpy_sum(a + half, n - half);
}

double numpy_mean(std::span<const double> x) { return numpy_sum(x.data(), x.size()) / static_cast<double>(x.size()); }

// np.std(x) (ddof = 0): sqrt(mean((x - mean)^2)).
double numpy_std(std::span<const double> x, double mean)
{
    std::vector<double> sq(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) sq[i] = (x[i] - mean) * (x[i] - mean);
    return std::sqrt(numpy_sum(sq.data(), sq.size()) / static_cast<double>(x.size()));
}

// max(|b/a - 1|, |a/b - 1|), a ratio taken as 0 where its denominator is 0:
// Otava's TTestStats.change_magnitude().
double change_magnitude(double a, double b)
{
    const double forward = a == 0 ? 0.0 : b / a - 1.0;
    const double backward = b == 0 ? 0.0 : a / b - 1.0;
    return std::max(std::fabs(forward), std::fabs(backward));
}

// Otava's TTestSignificanceTester.compare: Student's two-sample t-test with
// pooled variance (scipy.stats.ttest_ind_from_stats(equal_var=True),
// two-sided), fed with np.std, i.e. the *population* standard deviation
// (ddof = 0) -- Otava's choice, kept to reproduce its p-values -- and 0 for a
// one-point segment; p = 1 for two single points. Equal constant segments
// give t = 0/0 and p = NaN as in scipy; NaN is never significant and is the
// first point the merge pass drops, as in Otava.
segment_test student_t(std::span<const double> left, std::span<const double> right)
{
    const double n1 = static_cast<double>(left.size());
    const double n2 = static_cast<double>(right.size());
    const double mean1 = numpy_mean(left);
    const double mean2 = numpy_mean(right);
    const double sd1 = left.size() >= 2 ? numpy_std(left, mean1) : 0.0;
    const double sd2 = right.size() >= 2 ? numpy_std(right, mean2) : 0.0;
    segment_test r;
    r.magnitude = change_magnitude(mean1, mean2);
    if (left.size() + right.size() <= 2) return r;

    // scipy.stats._stats_py._equal_var_ttest_denom and _ttest_finish
    // (scipy 1.10): the same operations in the same order.
    const double df = n1 + n2 - 2.0;
    const double svar = ((n1 - 1) * (sd1 * sd1) + (n2 - 1) * (sd2 * sd2)) / df;
    const double denom = std::sqrt(svar * (1.0 / n1 + 1.0 / n2));
    const double t = (mean1 - mean2) / denom;
    if (std::isnan(t)) {
        r.p_value = std::numeric_limits<double>::quiet_NaN();
    } else if (std::isinf(t)) {
        r.p_value = 0;
    } else {
        // scipy: special.stdtr(df, -|t|) * 2; the upper tail through
        // complement() keeps tiny p-values exact.
        const boost::math::students_t_distribution<double> dist(df);
        r.p_value = 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(t)));
    }
    return r;
}

// Pettitt's (1979) rank test for one change in location, applied to the
// concatenation of the two segments split where they meet.
//   U = sum_{i in left, j in right} sign(x_i - x_j) = 2 * U_MW - n1 * n2
// with U_MW the Mann-Whitney U of the left segment (ties count 1/2), and the
// p-value of K = |U| from Pettitt's approximation to the null distribution
// of max_t |U_t| over *every* split t of the n = n1 + n2 points:
//   p = 2 exp(-6 K^2 / (n^3 + n^2))           (Pettitt 1979, section 2)
// (R's trend::pettitt.test reports the same value capped at 1). See the
// rule in change_points() for why.
segment_test pettitt(std::span<const double> left, std::span<const double> right)
{
    const std::size_t n1 = left.size(), n2 = right.size(), n = n1 + n2;
    struct item {
        double value;
        bool from_left;
    };
    std::vector<item> pooled;
    pooled.reserve(n);
    for (double v : left) pooled.push_back({v, true});
    for (double v : right) pooled.push_back({v, false});
    std::sort(pooled.begin(), pooled.end(), [](const item& a, const item& b) { return a.value < b.value; });
    // Sum of the (mid)ranks of the left segment, ranks from 1.
    double rank_sum = 0;
    for (std::size_t i = 0; i < n;) {
        std::size_t j = i;
        std::size_t lefts = 0;
        while (j < n && pooled[j].value == pooled[i].value) lefts += pooled[j++].from_left ? 1 : 0;
        const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
        rank_sum += static_cast<double>(lefts) * midrank;
        i = j;
    }
    const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2), dn = static_cast<double>(n);
    const double u_left = rank_sum - d1 * (d1 + 1) / 2;
    const double k = std::fabs(2 * u_left - d1 * d2);
    segment_test r;
    // Not capped at 1 here: the merge pass orders points by this value, and
    // short segments, which all reach 1, must still be told apart (see
    // change_points()). describe() caps what is reported.
    r.p_value = 2 * std::exp(-6 * k * k / (dn * dn * dn + dn * dn));
    const double med1 = *median(left), med2 = *median(right);
    r.magnitude = change_magnitude(med1, med2);
    return r;
}

// The test that accepts a split within a window (split pass) ...
segment_test split_test(change_point_method method, std::span<const double> left, std::span<const double> right)
{
    if (method == change_point_method::otava) return student_t(left, right);
    return {.p_value = mann_whitney_u(left, right).p_value, .magnitude = 0};
}

// ... and the one that keeps a point between its final neighbours (merge
// pass).
segment_test merge_test(change_point_method method, std::span<const double> left, std::span<const double> right)
{
    return method == change_point_method::otava ? student_t(left, right) : pettitt(left, right);
}

// ---------------------------------------------------------------------------
// E-divisive candidates within one window.
// ---------------------------------------------------------------------------

struct candidate {
    std::size_t index = 0; // first point of the right part, window coordinates
    double qhat = 0;
};

// The energy statistic of Matteson & James (2014), eq. (3), with alpha = 1:
// for X = z[s, tau) (n points) and Y = z[tau, kappa) (m points)
//   Q(tau, kappa) = 2/(m+n) sum_ij |X_i - Y_j|
//                 - 2m/((m+n)(n-1)) sum_{i<k} |X_i - X_k|
//                 - 2n/((m+n)(m-1)) sum_{j<k} |Y_j - Y_k|
// (a term is 0 when its segment has one point). The candidate of [s, e) is
// the tau of the largest Q over s < tau < kappa <= e.
//
// All Q values of an interval cost O(L^2) for L = e - s, not the O(L^3) to
// O(L^4) of summing each term afresh: the pairwise distances D and their
// running row sums H(r, c) = sum_{q=r+1..c+1} D(r, q) are built once per
// window (Eigen), and each column kappa of Q follows from running sums over
// H down that column. The sums are formed in the same order as Otava's
// PairDistanceCalculator._get_Q_vals (numpy cumsum and axis-0 sums are
// sequential), so the doubles are the same and so is the argmax when two
// splits tie exactly (integer data).
class energy_window {
public:
    explicit energy_window(std::span<const double> z) : w_(z.size())
    {
        const Eigen::Map<const Eigen::VectorXd> x(z.data(), static_cast<Eigen::Index>(w_));
        const auto w = static_cast<Eigen::Index>(w_);
        d_ = (x.replicate(1, w) - x.transpose().replicate(w, 1)).cwiseAbs();
        h_ = Eigen::MatrixXd::Zero(w, w);
        for (Eigen::Index r = 0; r + 1 < w; ++r) {
            h_(r, r) = d_(r, r + 1);
            for (Eigen::Index c = r + 1; c + 1 < w; ++c) h_(r, c) = h_(r, c - 1) + d_(r, c + 1);
        }
        // v_(c) = sum_{r=0..c} D(r, c + 1): the distances from point c + 1 to
        // every point before it, summed from r = 0.
        v_ = Eigen::VectorXd::Zero(w);
        for (Eigen::Index c = 0; c + 1 < w; ++c) {
            double acc = 0;
            for (Eigen::Index r = 0; r <= c; ++r) acc += d_(r, c + 1);
            v_(c) = acc;
        }
    }

    // Best split of [s, e), e - s >= 2; on exact ties the smallest tau, then
    // the smallest kappa (np.argmax over Otava's row-major Q matrix).
    [[nodiscard]] candidate best(std::size_t s, std::size_t e)
    {
        PERFGATE_CHECK(s + 2 <= e && e <= w_);
        const std::size_t l = e - s - 1; // Q is l x l: row i is tau = s+1+i, column j is kappa = s+2+j
        // cv_[i] = cumsum over i of V(s, tau = s+1+i), where
        // V(s, t) = sum_{r=s..t-1} D(r, t), formed as Otava does: the sum
        // from 0 minus the sum over [0, s).
        cv_.resize(l);
        for (std::size_t i = 0; i < l; ++i) {
            double head = 0;
            if (l >= 2) // (for l == 1 numpy sums differently, but V is unused)
                for (std::size_t r = 0; r < s; ++r) head += d_(idx(r), idx(s + 1 + i));
            const double v = v_(idx(s + i)) - head;
            cv_[i] = i == 0 ? v : cv_[i - 1] + v;
        }
        candidate best{s + 1, -std::numeric_limits<double>::infinity()};
        std::size_t best_i = 0, best_j = 0;
        col_.resize(l);
        for (std::size_t j = 0; j < l; ++j) {
            // H(s+i, s+j) for i <= j; rows below the diagonal of H are 0.
            const double kappa = static_cast<double>(j + 2); // kappa - s
            double tail = 0;                                 // sum_{a=i+1..l-1} H(s+a, s+j), from a = l-1 upwards
            for (std::size_t i = l; i-- > 0;) {
                col_[i] = tail;
                if (i <= j) tail += h_(idx(s + i), idx(s + j));
            }
            double down = 0; // sum_{a=0..i} H(s+a, s+j)
            for (std::size_t i = 0; i <= j; ++i) {
                down = i == 0 ? h_(idx(s), idx(s + j)) : down + h_(idx(s + i), idx(s + j));
                const double a = (2.0 / kappa) * (down - (i == 0 ? 0.0 : cv_[i - 1]));
                double b = 0;
                if (i >= 1) b = (static_cast<double>(2 * (j + 1 - i)) / static_cast<double>((j + 2) * i)) * cv_[i - 1];
                double c = 0;
                if (j >= i + 1)
                    c = (static_cast<double>(2 * (i + 1)) / static_cast<double>((j + 2) * (j - i))) * col_[i];
                const double q = (a - b) - c;
                if (q > best.qhat || (q == best.qhat && (i < best_i || (i == best_i && j < best_j)))) {
                    best = {s + 1 + i, q};
                    best_i = i;
                    best_j = j;
                }
            }
        }
        return best;
    }

private:
    static Eigen::Index idx(std::size_t i) { return static_cast<Eigen::Index>(i); }

    std::size_t w_;
    Eigen::MatrixXd d_, h_;
    Eigen::VectorXd v_;
    std::vector<double> cv_, col_;
};

// Change points of one window (Otava's ChangePointDetector.get_change_points
// with a deterministic tester): split the interval with the largest energy
// statistic at its candidate while the test between the two parts has
// p <= max_p. Returns sorted window coordinates.
std::vector<std::size_t> window_change_points(std::span<const double> z, double max_p, change_point_method method)
{
    const std::size_t w = z.size();
    std::vector<std::size_t> points;
    if (w < 2) return points;
    energy_window calc(z);
    // Candidate of the interval starting at s; an interval keeps its
    // candidate until it is split.
    std::vector<std::optional<candidate>> cache(w);
    for (;;) {
        std::optional<candidate> best;
        std::size_t best_s = 0, best_e = 0;
        for (std::size_t k = 0; k <= points.size(); ++k) {
            const std::size_t s = k == 0 ? 0 : points[k - 1];
            const std::size_t e = k == points.size() ? w : points[k];
            if (e - s < 2) continue;
            if (!cache[s]) cache[s] = calc.best(s, e);
            if (!best || cache[s]->qhat > best->qhat) {
                best = cache[s];
                best_s = s;
                best_e = e;
            }
        }
        if (!best) break;
        const std::size_t tau = best->index;
        const segment_test t = split_test(method, z.subspan(best_s, tau - best_s), z.subspan(tau, best_e - tau));
        if (!(t.p_value <= max_p)) break;
        points.insert(std::upper_bound(points.begin(), points.end(), tau), tau);
        cache[best_s].reset();
    }
    return points;
}

// Split pass (Otava's analysis.split): windows of `window` points starting
// every window/2 points, or at the last change point found when that is
// further on. Sorted, without duplicates.
std::vector<std::size_t> split_pass(std::span<const double> series, std::size_t window, double max_p,
                                    change_point_method method)
{
    const std::size_t n = series.size();
    const std::size_t step = window / 2;
    std::vector<std::size_t> points;
    for (std::size_t start = 0; start < n;) {
        const std::size_t end = std::min(start + window, n);
        const auto found = window_change_points(series.subspan(start, end - start), max_p, method);
        for (std::size_t p : found) points.push_back(start + p);
        const std::size_t last = found.empty() ? 0 : start + found.back();
        start = std::max(last, start + step);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    return points;
}

struct scored_point {
    std::size_t index;
    segment_test test;
};

// The segments on either side of points[k].
std::pair<std::span<const double>, std::span<const double>> neighbours(std::span<const double> series,
                                                                       const std::vector<scored_point>& points,
                                                                       std::size_t k)
{
    const std::size_t from = k == 0 ? 0 : points[k - 1].index;
    const std::size_t at = points[k].index;
    const std::size_t to = k + 1 == points.size() ? series.size() : points[k + 1].index;
    return {series.subspan(from, at - from), series.subspan(at, to - at)};
}

void rescore(std::span<const double> series, std::vector<scored_point>& points, std::size_t k,
             change_point_method method)
{
    if (k >= points.size()) return;
    const auto [left, right] = neighbours(series, points, k);
    points[k].test = merge_test(method, left, right);
}

// Merge pass (Fleming et al. 2023, section 4.3; Otava's analysis.merge):
// while some point has p >= max_p drop the one with the largest p (the first
// of equals), else drop the one with the smallest magnitude if that is not
// above min_magnitude; then re-test the neighbours of the dropped point.
void merge_pass(std::span<const double> series, std::vector<scored_point>& points, double max_p, double min_magnitude,
                change_point_method method)
{
    while (!points.empty()) {
        std::size_t weakest = 0;
        for (std::size_t k = 1; k < points.size(); ++k)
            if (points[k].test.p_value > points[weakest].test.p_value) weakest = k;
        if (points[weakest].test.p_value < max_p) {
            weakest = 0;
            for (std::size_t k = 1; k < points.size(); ++k)
                if (points[k].test.magnitude < points[weakest].test.magnitude) weakest = k;
            if (points[weakest].test.magnitude > min_magnitude) return;
        }
        points.erase(points.begin() + static_cast<std::ptrdiff_t>(weakest));
        if (method == change_point_method::otava) {
            // Otava re-tests the point after the dropped one and the one
            // after that (indices weakest and weakest + 1 once the list has
            // shrunk); the point *before* the dropped one keeps the test of
            // its old, shorter right segment. Reproduced so that the same
            // points survive.
            rescore(series, points, weakest, method);
            rescore(series, points, weakest + 1, method);
        } else {
            // Both neighbours of the dropped point have a new segment.
            if (weakest > 0) rescore(series, points, weakest - 1, method);
            rescore(series, points, weakest, method);
        }
    }
}

// Where the one change in x[from, to) is: the split t maximising the energy
// statistic Q(x[from, t), x[t, to)) of Matteson & James (2014), eq. (3) with
// alpha = 1 -- the Q of energy_window::best with kappa fixed at `to`, i.e.
// their estimate of a single change point between two known ends. The
// first t of equal maxima.
//
// Q is not computed afresh for each t (O(L^2) per t). With
// B(t) = sum_{i<t<=j} |x_i - x_j| and W_X(t), W_Y(t) the sums over the pairs
// within each part, moving x_t from the right part to the left one changes
//   W_X += a_t,  W_Y -= b_t,  B += b_t - a_t,
// a_t = sum_{i<t} |x_t - x_i| and b_t = sum_{j>t} |x_t - x_j|. a_t comes from
// a Fenwick tree (count and sum) over the sorted positions of the points
// already moved, b_t from the distance of x_t to all points (prefix sums
// over the sorted values) minus a_t: O(L log L) for L = to - from, as
// Pettitt's statistic. The values are taken relative to the segment's
// minimum, which leaves every distance as it is and keeps the running sums
// at the size of the distances rather than of the level.
// Only splits in [first, last] are candidates (the newest-points check asks
// for a split among the points it tested); by default every split is.
std::size_t energy_location(std::span<const double> series, std::size_t from, std::size_t to, std::size_t first = 0,
                            std::size_t last = std::numeric_limits<std::size_t>::max())
{
    PERFGATE_CHECK(from + 2 <= to && to <= series.size());
    const std::size_t n = to - from;
    const auto z = series.subspan(from, n);
    const double lowest = *std::min_element(z.begin(), z.end());
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = z[i] - lowest;

    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    std::vector<std::size_t> position(n);     // of each point in sorted order
    std::vector<double> sorted_sum(n + 1, 0); // sums of the k smallest values
    for (std::size_t k = 0; k < n; ++k) {
        position[order[k]] = k;
        sorted_sum[k + 1] = sorted_sum[k] + v[order[k]];
    }
    // Distances from a value at sorted position k to every point (equal
    // values are 0 away from either side, so any of their positions does).
    const auto distance_to_all = [&](double value, std::size_t k) {
        return value * static_cast<double>(k) - sorted_sum[k] + (sorted_sum[n] - sorted_sum[k + 1]) -
               value * static_cast<double>(n - k - 1);
    };

    // Fenwick tree, 1-based over sorted positions, of the points moved left.
    std::vector<double> tree_sum(n + 1, 0);
    std::vector<std::size_t> tree_count(n + 1, 0);
    const auto lowbit = [](std::size_t k) { return k & (~k + 1); };

    double within_left = 0, between = 0, within_right = 0, moved_sum = 0;
    for (std::size_t i = 0; i < n; ++i) within_right += distance_to_all(v[i], position[i]);
    within_right /= 2;

    const double total = static_cast<double>(n);
    double best = -std::numeric_limits<double>::infinity();
    first = std::max(first, from + 1);
    last = std::min(last, to - 1);
    PERFGATE_CHECK(first <= last);
    std::size_t at = first;
    for (std::size_t t = 0; t + 1 < n; ++t) {
        const double value = v[t];
        double sum_below = 0; // moved points at sorted positions <= position[t]
        std::size_t count_below = 0;
        for (std::size_t k = position[t] + 1; k > 0; k -= lowbit(k)) {
            sum_below += tree_sum[k];
            count_below += tree_count[k];
        }
        const double a = value * static_cast<double>(count_below) - sum_below + (moved_sum - sum_below) -
                         value * static_cast<double>(t - count_below);
        const double b = distance_to_all(value, position[t]) - a;
        within_left += a;
        within_right -= b;
        between += b - a;
        for (std::size_t k = position[t] + 1; k <= n; k += lowbit(k)) {
            tree_sum[k] += value;
            ++tree_count[k];
        }
        moved_sum += value;

        // Q for X = the first t + 1 points, Y = the rest (as energy_window).
        const double nx = static_cast<double>(t + 1), my = total - nx;
        double q = 2 / total * between;
        if (nx > 1) q -= 2 * my / (total * (nx - 1)) * within_left;
        if (my > 1) q -= 2 * nx / (total * (my - 1)) * within_right;
        if (q > best && from + t + 1 >= first && from + t + 1 <= last) {
            best = q;
            at = from + t + 1;
        }
    }
    return at;
}

void relocate(std::span<const double> series, std::vector<scored_point>& points)
{
    for (std::size_t k = 0; k < points.size(); ++k) {
        const std::size_t from = k == 0 ? 0 : points[k - 1].index;
        const std::size_t to = k + 1 == points.size() ? series.size() : points[k + 1].index;
        points[k].index = energy_location(series, from, to);
    }
}

// ---------------------------------------------------------------------------
// The newest points (perfgate): a step the series has only just reached.
// ---------------------------------------------------------------------------

// A look tests the newest k points against the points before them, with a
// share of max_p (weights summing to 1, Bonferroni). See newest_point().
struct look {
    std::size_t k;
    double weight;
};
// clang-format off
constexpr std::array<look, 11> newest_looks{{
    {2, 0.6}, {3, 0.2},
    {4, 0.2 / 9}, {5, 0.2 / 9}, {6, 0.2 / 9}, {8, 0.2 / 9}, {10, 0.2 / 9},
    {12, 0.2 / 9}, {16, 0.2 / 9}, {20, 0.2 / 9}, {24, 0.2 / 9},
}};
// clang-format on
// The reference of a look: the points before its newest k, back to the last
// change point, at most this many windows of them (Otava's search sees a
// change with up to two windows before it), ...
constexpr std::size_t reference_windows = 3;
// ... and never more than this many, which bounds the exact distributions
// below (min(m, k) * m * k <= 24 * 24 * 1000 steps).
constexpr std::size_t max_reference = 1000;

// The smallest u with P(U >= u) < alpha under no change, for a rank sum
// test of k points against m without ties (Mann-Whitney's exact null
// distribution, stats::exact_u_distribution); m * k + 1 when no u reaches
// alpha. Per thread, remembered by (m, k, alpha): a series's looks ask for
// the same few sizes at every new point.
std::size_t upper_critical_u(std::size_t m, std::size_t k, double alpha)
{
    using key = std::tuple<std::size_t, std::size_t, double>;
    thread_local std::map<key, std::size_t> cache;
    const key at{m, k, alpha};
    if (const auto it = cache.find(at); it != cache.end()) return it->second;
    const exact_u_distribution dist(m, k);
    std::size_t c = m * k + 1;
    while (c > 0 && dist.sf(static_cast<double>(c - 1)) < alpha) --c;
    cache.emplace(at, c);
    return c;
}

// U counted against a change in either direction: the pairs (new, reference)
// with the new point strictly above, and strictly below. A tie counts for
// neither, so each count is at most the U that any way of breaking the ties
// at random would give; under no change the data are exchangeable, a random
// tie-break makes U follow the exact distribution without ties, and so
// P(up >= c) <= P(U >= c): the exact p-value stays valid (conservative)
// with ties, as in callgrind's counts or rounded times.
struct directed_u {
    double up = 0, down = 0;
};

directed_u newest_u(std::span<const double> reference, std::span<const double> newest)
{
    std::vector<double> sorted(reference.begin(), reference.end());
    std::sort(sorted.begin(), sorted.end());
    directed_u u;
    for (double x : newest) {
        u.up += static_cast<double>(std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
        u.down += static_cast<double>(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), x));
    }
    return u;
}

// A change among the newest points of series[from, n) (from: the last
// change point found, or 0), or nullopt. See "The newest points" above
// change_points() for the rule.
std::optional<scored_point> newest_point(std::span<const double> series, std::size_t from,
                                         const change_point_options& o)
{
    const std::size_t n = series.size();
    const std::size_t cap = std::min(max_reference, reference_windows * o.window);
    std::optional<double> best_p;
    std::size_t shortest = 0, longest = 0; // the looks that saw a change
    for (const auto [k, weight] : newest_looks) {
        if (from + k + 1 > n) break;
        // Two-sided: each side of a look gets half its share.
        const double per_side = o.max_p * weight / 2;
        const std::size_t ref_from = std::max(from, n - k - std::min(cap, n - k - from));
        const std::size_t m = n - k - ref_from;
        const std::size_t c = upper_critical_u(m, k, per_side);
        if (c > m * k) continue; // this look cannot reach max_p with m points
        const auto u = newest_u(series.subspan(ref_from, m), series.subspan(n - k, k));
        const double stat = std::max(u.up, u.down);
        if (stat < static_cast<double>(c)) continue;
        const double p = std::min(1.0, 2 * shared_exact_u_distribution(m, k)->sf(stat)) / weight;
        if (!best_p || p < *best_p) best_p = p;
        if (shortest == 0) shortest = k;
        longest = k;
    }
    if (!best_p) return std::nullopt;
    // Placed as relocate() places a point, among the splits the looks that
    // saw the change tested.
    const std::size_t at = energy_location(series, from, n, n - longest, n - shortest);
    const double magnitude = change_magnitude(*median(series.subspan(from, at - from)),
                                              *median(series.subspan(at, n - at)));
    if (!(magnitude > o.min_magnitude)) return std::nullopt;
    return scored_point{at, {.p_value = *best_p, .magnitude = magnitude}};
}

// Otava's first-pass threshold (analysis.compute_change_points).
double first_pass_p(double max_p)
{
    if (max_p < 0.05) return max_p * 10;
    if (max_p < 0.5) return max_p * 2;
    return max_p;
}

} // namespace

void check_change_point_options(const change_point_options& o)
{
    if (o.window < 2)
        throw perfgate::error(errors::stats_bad_option,
                              "change_points: window must be at least 2, got " + std::to_string(o.window));
    if (!(o.max_p > 0 && o.max_p < 1))
        throw perfgate::error(errors::stats_bad_option,
                              "change_points: max_p must be in (0, 1), got " + std::to_string(o.max_p));
    if (!(o.min_magnitude >= 0) || !std::isfinite(o.min_magnitude))
        throw perfgate::error(errors::stats_bad_option, "change_points: min_magnitude must be finite and >= 0, got " +
                                                            std::to_string(o.min_magnitude));
}

std::string_view to_string(change_point_method m) noexcept
{
    return m == change_point_method::otava ? "otava" : "perfgate";
}

std::optional<change_point_method> change_point_method_named(std::string_view name) noexcept
{
    if (name == "perfgate") return change_point_method::perfgate;
    if (name == "otava") return change_point_method::otava;
    return std::nullopt;
}

namespace {

change_point describe(std::span<const double> series, const std::vector<scored_point>& points, std::size_t k)
{
    const auto [before, after] = neighbours(series, points, k);
    change_point cp;
    cp.index = points[k].index;
    cp.p_value = std::min(1.0, points[k].test.p_value);
    cp.mean_before = *mean(before);
    cp.mean_after = *mean(after);
    cp.median_before = *median(before);
    cp.median_after = *median(after);
    if (cp.mean_before != 0) cp.delta_pct = (cp.mean_after - cp.mean_before) / cp.mean_before * 100;
    cp.shift = hodges_lehmann(before, after, 0.05, false);
    return cp;
}

} // namespace

// The default method (change_point_method::perfgate) keeps Otava's search --
// E-divisive candidates in sliding windows, a weak pass at Otava's relaxed p,
// a merge pass -- and changes the tests and where a point ends up, and adds
// a test of the newest points:
//
//  1. Split pass: a window's candidate split is accepted when the two-sided
//     Mann-Whitney test between its parts (stats::mann_whitney_u: exact
//     below 50 untied points, as R's wilcox.test) has p <= the first-pass p.
//     A rank test bounds what one point can do: an outlier is one rank, not
//     a shifted mean, so a spike no longer splits a window around itself.
//  2. Merge pass: a point is kept only if Pettitt's (1979) statistic between
//     its two neighbouring segments has p < max_p, with p from the null
//     distribution of the *largest* |U_t| over every split t of the two
//     segments together. The E-divisive candidate is the split that looks
//     most different, so a test that treats it as fixed in advance is
//     anti-conservative: that selection, and heavy tails for the t-test,
//     are where Otava's false change points on stationary noise come from
//     (about 1 per 1,000 points on gaussian noise at max_p = 0.001, 2.7 on
//     t3, bench/sim_change_points). Pettitt's p is valid wherever the split
//     came from, since |U_tau| <= max_t |U_t|; it is rank-based, so
//     heavy tails and bimodal noise do not move it; and a short segment
//     cannot reach it (n1 points of 50 need n1 >= 9), which is the minimum
//     segment length a rank test implies rather than a new knob. Points are
//     ordered by the uncapped value 2 exp(-6K^2/(n^3+n^2)): two points
//     around one step both have a short segment between them and p = 1
//     after capping, and the one to drop is the one whose short segment
//     looks least like a change. Both neighbours of a dropped point are
//     re-tested (Otava re-tests only the one after it).
//     The magnitude compared with min_magnitude is that of the medians.
//  3. Location: each surviving point moves to the E-divisive estimate of
//     the one change between its neighbours, the split t of the two
//     segments together with the largest energy statistic Q (Matteson &
//     James 2014, eq. 3, with kappa at the next point: energy_location),
//     then all points are re-tested and merged once more. The E-divisive
//     split of a window is a good detector but places a step a few points
//     off when the weak pass left two points around it; the estimate over
//     the final segments uses every point of both.
//     Where a point is placed is decided by distances, whether it is kept
//     by ranks. Ranks cannot place a step: when every point after it is
//     above every point before it, the splits just before the step
//     separate the ranks nearly as well as the true one, and Pettitt's
//     estimate argmax_t |U_t| (Pettitt 1979, section 2), which this step
//     used before, leans towards the middle of the segment: U_t adds
//     2 r_i - (n + 1) for each point, so the last point before an upward
//     step moves the estimate one point early whenever its rank is above
//     the pooled median -- the top quarter of the old level for a step at
//     two thirds of the segment, as in test_change_points' median5_step(),
//     whose step at 40 came out at 39. Dividing |U_t| by its standard
//     deviation under no change (sqrt(t (n - t) (n + 1) / 3)) still says 39
//     there. Q compares the point's distances to the two levels, so 100.6
//     goes with the old level at 100 rather than the new one at 105. On
//     bench/sim_change_points' location table (120 points, one step of
//     1-5% at CoV 1-3% anywhere) clear steps (|step| >= 2 CoV) are placed
//     exactly 76% of the time on gaussian noise (60% with Pettitt's
//     estimate, 71% with the standardised one) and 87% on t3 (67%), as
//     often as Otava's E-divisive split (75%, 86%), and the misplaced ones
//     are off towards the middle as often as away from it (12% / 12%; 38% /
//     2% with Pettitt's estimate). The p-value stays Pettitt's, valid at
//     any split since |U_tau| <= max_t |U_t|; the point is kept where it is
//     placed, so its p is that of the split Q chose.
//
//  4. The newest points (newest_point): Pettitt's test of the whole tail
//     needs both segments long enough -- for a split k points from the end
//     of n its p is at least 2 exp(-6 (k (n - k))^2 / (n^3 + n^2)), which
//     for n = 150 (the watch's tail) drops below 0.001 only at k = 16 on a
//     noise-free step, hence alerts 9-16 points late (issue 29). So each
//     call also tests the newest k points against the points before them
//     since the last change point (at most 3 windows of them), for k = 2,
//     3, 4, 5, 6, 8, 10, 12, 16, 20 and 24: a two-sided rank-sum test with
//     Mann-Whitney's exact null distribution (exact_u_distribution), its U
//     counted with ties against the change (directed_u: conservative and
//     still exact-or-smaller with callgrind's equal counts). max_p is split
//     between the looks by weight (Bonferroni): 0.6 to k = 2, 0.2 to k = 3,
//     0.2 / 9 to each longer one, so that under no change one call raises
//     a change with probability < max_p whatever the noise (the data are
//     exchangeable; exact when no earlier change point sets the reference's
//     start), and a false alert, which needs a look to fire, comes at most
//     once per 1 / max_p new points -- half that for the worse direction
//     alone. The weights follow from the rank test's floor: k new points
//     against m cannot have p below 2 / C(m + k, k), so one point can never
//     be a change (2 / (m + 1)), two can after m >= 62 points at the full
//     max_p (m >= 81 at 0.6 of it), three after m >= 38 at 0.2 of it;
//     longer looks have power to spare and need little. A look that fires
//     puts a point where the energy statistic places it (as relocate(),
//     among the splits of the looks that fired), with p = the look's
//     smallest p divided by its weight (< max_p), and the medians'
//     magnitude compared with min_magnitude; the whole-tail test takes over
//     once the step is old enough (the same point, so the same alert).
//     bench/sim_streaming: a noise-free step seen after 2 points with 100
//     points before it (3 with 50, 6 with 20; 9-16 before this rule);
//     median delay 3 points (quartiles 2-5) over the 54 scenarios of issue
//     29 after 30-150 points, 2 after 100 or more, recall within 30 points
//     95.2% (otava 93.9%), 0.33-0.43 alerts per 1,000 stationary points
//     (0.63-0.70 counting changes either way; otava 5-16 and 10-31). Otava's
//     delay there is 1: its t-test takes one point off a quiet series as a
//     change, which no rank test can, and which is also its false alerts.
//
// bench/sim_change_points (window 50, max_p 0.001, 1000 trials per row): on
// stationary noise 0.002 false points per 1,000 on gaussian and none on t3
// and bimodal (6 million points), where otava raises 1.0 to 2.7 per 1,000;
// recall of 2-10% steps at CoV 1-3% in the middle of 200 points equal or
// higher (up to +13 points on bimodal and t3 noise; 99.1% vs 99.2% for 10%
// at CoV 3% on gaussian), except where neither can see the step: 2% at CoV
// 3% on gaussian (21.0% vs 22.7%) and on bimodal noise whose speeds are 12%
// apart (0.5% vs 2.5%). Extra points beside a real step: 0.00-0.30 per
// series against otava's 0.17-0.80. A step within about 15 points of either
// end of its segments is seen less often than by otava (the location table:
// 90% vs 99% of clear steps anywhere in 120 points on gaussian noise), the
// price of Pettitt's test needing both segments long enough.
//
// References: A. N. Pettitt, "A non-parametric approach to the change-point
// problem", Applied Statistics 28(2), 126-135 (1979); H. B. Mann and
// D. R. Whitney, Ann. Math. Statist. 18(1), 50-60 (1947); Matteson & James
// (2014) and Fleming et al. (2023) as in the header.
std::vector<change_point> change_points(std::span<const double> series, const change_point_options& options)
{
    check_change_point_options(options);
    for (double v : series) PERFGATE_CHECK(std::isfinite(v));
    std::vector<change_point> out;
    if (series.size() < 3) return out;

    const auto weak = split_pass(series, options.window, first_pass_p(options.max_p), options.method);
    std::vector<scored_point> points;
    points.reserve(weak.size());
    for (std::size_t i : weak) points.push_back({i, {}});
    for (std::size_t k = 0; k < points.size(); ++k) rescore(series, points, k, options.method);
    merge_pass(series, points, options.max_p, options.min_magnitude, options.method);
    if (options.method == change_point_method::perfgate) {
        relocate(series, points);
        for (std::size_t k = 0; k < points.size(); ++k) rescore(series, points, k, options.method);
        merge_pass(series, points, options.max_p, options.min_magnitude, options.method);
        if (auto newest = newest_point(series, points.empty() ? 0 : points.back().index, options))
            points.push_back(*newest);
    }

    out.reserve(points.size());
    for (std::size_t k = 0; k < points.size(); ++k) out.push_back(describe(series, points, k));
    return out;
}

} // namespace perfgate::stats
