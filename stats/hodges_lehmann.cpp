#include "stats/hodges_lehmann.hpp"

#include "model/error.hpp"
#include "stats/mann_whitney.hpp"
#include "stats/mde.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace perfgate::stats {
namespace {

// Selects order statistics of the m*n differences c_j - b_i without storing
// them. With c ascending (rows) and b descending (columns), the matrix
// d(j, i) = c[j] - bd[i] is sorted along every row and every column; this
// also holds for the *computed* doubles because IEEE subtraction rounds
// monotonically, so every comparison below agrees with sorting the
// materialised differences.
//
// Selection is Monahan's (1984, "Algorithm 616: fast computation of the
// Hodges-Lehmann location estimator", ACM TOMS 10(3)) scheme: keep per row an
// active column range [lo_j, hi_j), pick a random active element as pivot,
// count the elements below / not above it in O(m+n) with a staircase walk,
// and discard the side that cannot hold the wanted rank. Expected O(log(mn))
// rounds; once few candidates remain they are copied and nth_element'ed.
// Pivot source for the selection: SplitMix64 (Steele, Lea & Flood 2014,
// "Fast splittable pseudorandom number generators", OOPSLA; the generator
// java.util.SplittableRandom uses). One 64-bit word of state: seeding it
// per selection is free, unlike std::mt19937_64's 2.5 KB state, whose
// seeding cost more than a small selection. Pivot quality only affects the
// running time, never the result.
class splitmix64 {
public:
    using result_type = std::uint64_t;
    explicit splitmix64(std::uint64_t seed) noexcept : state_(seed) {}
    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
    result_type operator()() noexcept
    {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

private:
    std::uint64_t state_;
};

// Up to this many differences (m*n) they are materialised once and every
// order statistic the estimate and the interval need is selected from that
// one array (nth_element on ever smaller sub-ranges). 4096 doubles are 32 KB,
// within L1/L2; it covers the gate's usual sizes (up to 64/64 repetitions).
// Above it, difference_selector keeps memory O(m+n).
constexpr std::size_t materialise_all_max = 4096;

// Order statistics of a materialised array, several ranks in one go, by
// value buckets (a distribution-based selection in the spirit of Floyd &
// Rivest and of radix select). One pass maps every value x to bucket
// floor((x - min) * B / (max - min)): the map is monotone (IEEE subtraction
// and multiplication by a positive constant round monotonically), so a
// bucket holds a contiguous stretch of the sorted order and equal values
// share a bucket. Counting says which bucket holds each wanted rank; only
// those buckets' values are kept and the step repeats on them, each round a
// fraction of the last. The comparisons are data-independent counting, not
// nth_element's partitioning, whose branches a predictor cannot learn on
// fresh data: 3.5x faster at the gate's 30 x 30 (bench_stats,
// bm_hodges_lehmann_30). A degenerate spread (all equal, a range that
// overflows) or a deep recursion (values spread over many magnitudes) falls
// back to nth_element, which is always right, merely slower.
class materialised_differences {
public:
    materialised_differences(std::span<const double> b, std::span<const double> c)
    {
        v_.resize(b.size() * c.size());
        // Same expression as difference_selector::d (c_j - b_i): the k-th
        // value is the same double whichever path computes it.
        double* out = v_.data();
        for (double cj : c)
            for (double bi : b) *out++ = cj - bi;
    }

    [[nodiscard]] std::size_t size() const noexcept { return v_.size(); }

    // The k-th smallest differences for each k of ks (1-based, each in
    // 1..size(), any order), in the order of ks.
    [[nodiscard]] std::vector<double> kth(std::span<const std::size_t> ks)
    {
        std::vector<std::size_t> order(ks.size());
        for (std::size_t i = 0; i < ks.size(); ++i) {
            PERFGATE_CHECK(ks[i] >= 1 && ks[i] <= v_.size());
            order[i] = i;
        }
        std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return ks[x] < ks[y]; });
        std::vector<std::size_t> ranks;
        ranks.reserve(order.size());
        for (std::size_t i : order) ranks.push_back(ks[i] - 1);
        std::vector<double> sorted_out(ks.size()), out(ks.size());
        select(v_, ranks, sorted_out, 0);
        for (std::size_t i = 0; i < order.size(); ++i) out[order[i]] = sorted_out[i];
        return out;
    }

private:
    static constexpr std::size_t buckets = 256;
    static constexpr std::size_t sort_below = 48; // sorting a few dozen beats another round
    static constexpr int max_rounds = 8;

    // out[i] = the ranks[i]-th smallest (0-based) of v; ranks ascending.
    // v may be reordered.
    static void select(std::span<double> v, std::span<const std::size_t> ranks, std::span<double> out, int round)
    {
        if (v.size() <= sort_below) {
            std::sort(v.begin(), v.end());
            for (std::size_t i = 0; i < ranks.size(); ++i) out[i] = v[ranks[i]];
            return;
        }
        // Branch-free: min/max compile to minsd/maxsd.
        double lo = v[0], hi = v[0];
        for (double x : v) {
            lo = std::min(lo, x);
            hi = std::max(hi, x);
        }
        if (lo == hi) {
            std::fill(out.begin(), out.end(), lo);
            return;
        }
        const double scale = static_cast<double>(buckets) / (hi - lo);
        if (round == max_rounds || !std::isfinite(hi - lo) || !std::isfinite(scale)) {
            select_by_partition(v, ranks, out);
            return;
        }
        // Bucket ids once, counted; x - lo is in [0, hi - lo], so the
        // product is in [0, B] (B itself only for the maximum, clamped).
        std::vector<std::uint8_t> id(v.size());
        std::array<std::size_t, buckets> count{};
        for (std::size_t i = 0; i < v.size(); ++i) {
            const double t = (v[i] - lo) * scale;
            const std::size_t bucket = t < static_cast<double>(buckets) ? static_cast<std::size_t>(t) : buckets - 1;
            id[i] = static_cast<std::uint8_t>(bucket);
            ++count[bucket];
        }
        // Which bucket holds each rank, and its rank inside the bucket.
        std::vector<std::size_t> rank_bucket(ranks.size()), local(ranks.size());
        {
            std::size_t bucket = 0, before = 0;
            for (std::size_t i = 0; i < ranks.size(); ++i) {
                while (ranks[i] >= before + count[bucket]) before += count[bucket++];
                rank_bucket[i] = bucket;
                local[i] = ranks[i] - before;
            }
        }
        // The values in bucket order (a counting sort's scatter), so each
        // bucket is a contiguous stretch; then the same step on the buckets
        // that hold the ranks. lo is in bucket 0 and hi in bucket B-1, so a
        // bucket is always smaller than v: every round shrinks.
        std::array<std::size_t, buckets> start{};
        for (std::size_t bucket = 1; bucket < buckets; ++bucket) start[bucket] = start[bucket - 1] + count[bucket - 1];
        std::vector<double> by_bucket(v.size());
        {
            std::array<std::size_t, buckets> next = start;
            for (std::size_t i = 0; i < v.size(); ++i) by_bucket[next[id[i]]++] = v[i];
        }
        for (std::size_t first = 0; first < ranks.size();) {
            std::size_t last = first + 1;
            while (last < ranks.size() && rank_bucket[last] == rank_bucket[first]) ++last;
            const std::size_t bucket = rank_bucket[first];
            select(std::span(by_bucket).subspan(start[bucket], count[bucket]),
                   std::span(local).subspan(first, last - first), out.subspan(first, last - first), round + 1);
            first = last;
        }
    }

    // The fallback: nth_element per rank, each between the ranks already
    // fixed (nth_element leaves smaller values left, larger right).
    static void select_by_partition(std::span<double> v, std::span<const std::size_t> ranks, std::span<double> out)
    {
        auto first = v.begin();
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            const auto nth = v.begin() + static_cast<std::ptrdiff_t>(ranks[i]);
            if (i == 0 || ranks[i] != ranks[i - 1]) std::nth_element(first, nth, v.end());
            out[i] = *nth;
            first = nth;
        }
    }

    std::vector<double> v_;
};

class difference_selector {
public:
    difference_selector(std::span<const double> b, std::span<const double> c)
        : bd_(b.begin(), b.end()), c_(c.begin(), c.end())
    {
        std::sort(bd_.begin(), bd_.end(), std::greater<>());
        std::sort(c_.begin(), c_.end());
    }

    [[nodiscard]] std::size_t size() const noexcept { return bd_.size() * c_.size(); }

    // The k-th smallest difference, k in 1..size() (R's 1-based diffs[k]).
    [[nodiscard]] double kth(std::size_t k) const
    {
        PERFGATE_CHECK(k >= 1 && k <= size());
        const std::size_t rank = k - 1;
        const std::size_t m = bd_.size(), n = c_.size();
        // Bounded memory: candidates are materialised only when at most this
        // many remain, so the whole selection stays O(m+n) in memory.
        const std::size_t materialise_limit = std::max<std::size_t>(4 * (m + n), 4096);

        std::vector<std::size_t> lo(n, 0), hi(n, m), less(n), leq(n);
        // A fixed seed: the result is the unique k-th value whatever the
        // pivots, the seed only makes the running time reproducible.
        splitmix64 rng(0x9e3779b97f4a7c15ULL ^ rank);
        for (;;) {
            std::size_t active = 0, below = 0;
            for (std::size_t j = 0; j < n; ++j) {
                active += hi[j] - lo[j];
                below += lo[j];
            }
            PERFGATE_CHECK(active > 0 && rank >= below && rank < below + active);

            if (active <= materialise_limit) {
                std::vector<double> v;
                v.reserve(active);
                for (std::size_t j = 0; j < n; ++j)
                    for (std::size_t i = lo[j]; i < hi[j]; ++i) v.push_back(d(j, i));
                const auto nth = v.begin() + static_cast<std::ptrdiff_t>(rank - below);
                std::nth_element(v.begin(), nth, v.end());
                return *nth;
            }

            std::size_t pick = std::uniform_int_distribution<std::size_t>(0, active - 1)(rng);
            std::size_t row = 0;
            while (pick >= hi[row] - lo[row]) pick -= hi[row] - lo[row], ++row;
            const double pivot = d(row, lo[row] + pick);

            // Staircase walk: in row j, less[j] = #{i : d(j,i) < pivot} and
            // leq[j] = #{i : d(j,i) <= pivot}; both shrink as j grows.
            std::size_t p = m, q = m, n_less = 0, n_leq = 0;
            for (std::size_t j = 0; j < n; ++j) {
                while (p > 0 && d(j, p - 1) >= pivot) --p;
                while (q > 0 && d(j, q - 1) > pivot) --q;
                less[j] = p;
                leq[j] = q;
                n_less += p;
                n_leq += q;
            }
            if (rank < n_less) {
                for (std::size_t j = 0; j < n; ++j) hi[j] = std::min(hi[j], less[j]);
            } else if (rank < n_leq) {
                return pivot;
            } else {
                for (std::size_t j = 0; j < n; ++j) lo[j] = std::max(lo[j], leq[j]);
            }
        }
    }

    // The (k+1)-th smallest difference given v = kth(k), k < size(), in one
    // O(m+n) staircase walk instead of a second selection: either v repeats,
    // or it is the smallest difference above v, which in each row is the
    // first element past the run of those <= v.
    [[nodiscard]] double next_after(std::size_t k, double v) const
    {
        PERFGATE_CHECK(k >= 1 && k < size());
        const std::size_t m = bd_.size(), n = c_.size();
        std::size_t q = m, n_leq = 0;
        double next = std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < n; ++j) {
            while (q > 0 && d(j, q - 1) > v) --q;
            n_leq += q;
            if (q < m) next = std::min(next, d(j, q));
        }
        return n_leq > k ? v : next;
    }

private:
    [[nodiscard]] double d(std::size_t j, std::size_t i) const { return c_[j] - bd_[i]; }

    std::vector<double> bd_; // baseline, descending
    std::vector<double> c_;  // candidate, ascending
};

// sum(t^3 - t) over groups of equal values within one sample.
double within_tie_sum(std::span<const double> x)
{
    std::vector<double> s(x.begin(), x.end());
    std::sort(s.begin(), s.end());
    double sum = 0;
    for (std::size_t i = 0; i < s.size();) {
        std::size_t j = i;
        while (j < s.size() && s[j] == s[i]) ++j;
        const double t = static_cast<double>(j - i);
        sum += t * t * t - t;
        i = j;
    }
    return sum;
}

// k of the interval [d_(k), d_(mn+1-k)], in 1..mn; attained false when
// the level's k was below 1 and raised to it.
std::size_t interval_rank(std::span<const double> b, std::span<const double> c, double alpha, bool exact,
                          bool& attained)
{
    const std::size_t mn = b.size() * c.size();
    std::size_t k = 0;
    if (exact) {
        // R wilcox.test (exact branch, conf.int = TRUE):
        //   qu <- qwilcox(alpha/2, n.x, n.y); if (qu == 0) qu <- 1
        //   cint <- c(diffs[qu], diffs[n.x*n.y - qu + 1])
        // with n.x = |c|, n.y = |b|. The distribution of U is symmetric in
        // the two sizes (the Gaussian binomial [m+n choose m]_q), and
        // exact_u_distribution builds it from min/max and m*n only, so the
        // (|b|, |c|) instance that mann_whitney_u() already cached holds the
        // very same numbers.
        k = shared_exact_u_distribution(b.size(), c.size())->quantile(alpha / 2);
        attained = k >= 1;
        k = std::max<std::size_t>(k, 1);
    } else {
        // R wilcox.test (normal branch, correct = TRUE) inverts the
        // continuity-corrected z test with uniroot(): as the shift d passes
        // the k-th difference, W(d) = #{c_j - b_i > d} steps from mn-k+1 to
        // mn-k, and the bound is the jump where (W - mn/2 - 1/2) / sigma
        // crosses z_{1-alpha/2}. Solving for that jump gives
        //   k = floor(mn/2 + 1/2 - z * sigma),
        // the "integer closest to mn/2 - z sigma" of Hollander & Wolfe (4.3).
        // sigma carries the tie correction of the shifted samples, i.e. of
        // ties *within* b and within c (a shift separates cross-sample ties).
        // R clamps to the extreme differences (its f.lower <= 0 branch).
        const double m = static_cast<double>(b.size()), n = static_cast<double>(c.size());
        const double big_n = m + n;
        const double ties = within_tie_sum(b) + within_tie_sum(c);
        const double sigma = std::sqrt(m * n / 12 * ((big_n + 1) - ties / (big_n * (big_n - 1))));
        const double z = normal_quantile(1 - alpha / 2);
        const double kf = std::floor(m * n / 2 + 0.5 - z * sigma);
        attained = kf >= 1;
        k = kf < 1 ? 1 : static_cast<std::size_t>(kf);
    }
    return std::min(k, mn);
}

} // namespace

shift_estimate hodges_lehmann(std::span<const double> b, std::span<const double> c, double alpha, bool exact)
{
    PERFGATE_CHECK(!b.empty() && !c.empty());
    for (double v : b) PERFGATE_CHECK(std::isfinite(v));
    for (double v : c) PERFGATE_CHECK(std::isfinite(v));
    if (!(alpha > 0 && alpha < 1))
        throw perfgate::error(errors::stats_bad_probability,
                              "hodges_lehmann: alpha must be in (0, 1), got " + std::to_string(alpha));

    shift_estimate r;
    const std::size_t mn = b.size() * c.size();
    const std::size_t k = interval_rank(b, c, alpha, exact, r.attained);
    // R: median(diffs), the mean of the two middle values for even m*n;
    // cint <- c(diffs[k], diffs[mn - k + 1]).
    if (mn <= materialise_all_max) {
        materialised_differences sel(b, c);
        const std::size_t mid_lo = (mn + 1) / 2, mid_hi = mn / 2 + 1;
        const std::array<std::size_t, 4> ks{k, mid_lo, mid_hi, mn - k + 1};
        const std::vector<double> d = sel.kth(ks);
        r.lower = d[0];
        r.estimate = mid_lo == mid_hi ? d[1] : d[1] + (d[2] - d[1]) / 2;
        r.upper = d[3];
        return r;
    }
    const difference_selector sel(b, c);
    if (mn % 2 == 1) {
        r.estimate = sel.kth(mn / 2 + 1);
    } else {
        const double lo = sel.kth(mn / 2), hi = sel.next_after(mn / 2, lo);
        r.estimate = lo + (hi - lo) / 2;
    }
    r.lower = sel.kth(k);
    r.upper = sel.kth(mn - k + 1);
    return r;
}

} // namespace perfgate::stats
