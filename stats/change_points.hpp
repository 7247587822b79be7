// Change-point detection on one series of measurements (a benchmark's counter
// over the runs of a branch, in run order).
//
// E-divisive means (Matteson & James 2014, "A Nonparametric Approach for
// Multiple Change Point Analysis of Multivariate Data", JASA 109(505)) with
// the modifications of Fleming et al., "Hunter: Using Change Point Detection
// to Hunt for Performance Regressions" (ICPE 2023), as Apache Otava's
// compute_change_points implements them: candidates are found in sliding
// windows (step window/2) by maximising the energy statistic, a
// deterministic test between the two adjacent segments replaces the
// permutation test, a first "weak" pass runs at a relaxed p, and a merge pass
// drops the weakest point until every remaining one is significant at max_p
// and larger than min_magnitude.
//
// Two tests between segments (change_point_method):
//  - otava: Student's two-sample t-test, equal variances, as Otava; the same
//    change points and p-values as Otava's compute_change_points with the
//    same window, max_p and min_magnitude.
//    That includes Otava's merge pass re-testing only the point after a
//    dropped one: the point before it keeps its older p-value.
//  - perfgate (default): splits accepted by a Mann-Whitney test, points kept
//    by Pettitt's (1979) rank test between their final segments, which
//    accounts for the split having been chosen as the most different one,
//    and each point placed at the split of those segments with the largest
//    energy statistic (the E-divisive estimate of one change; ranks alone
//    place a step late or early, towards the middle). Built for
//    heavy-tailed and bimodal noise; see change_points.cpp for the rule and
//    why, and bench/sim_change_points for the evidence. Plus a test of the
//    newest 2-24 points against the points before them (exact rank-sum,
//    max_p shared between the looks), so that a step at the end of the
//    series is seen 2-3 points after it rather than once Pettitt's test
//    can (bench/sim_streaming); its point's p is that test's.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "stats/hodges_lehmann.hpp"

namespace perfgate::stats {

enum class change_point_method { perfgate, otava };

struct change_point_options {
    // Sliding-window length in points (Otava's window_len default 50). >= 2.
    std::size_t window = 50;
    // A change point is kept only with p < max_p (Otava's default 0.001).
    // In (0, 1).
    double max_p = 0.001;
    // ... and relative magnitude max(|after/before - 1|, |before/after - 1|)
    // > min_magnitude (Otava's min_magnitude and change_magnitude(), default
    // 0), of the segment means for otava, of the segment medians for
    // perfgate (a ratio with a zero denominator counts as 0). Finite, >= 0.
    double min_magnitude = 0;
    change_point_method method = change_point_method::perfgate;
};

struct change_point {
    std::size_t index = 0; // first point of the new segment, 0-based
    // otava: Student's t-test p as Otava reports it; perfgate: Pettitt's p
    // between the two segments, or for a point among the newest ones the
    // newest-points test's p (change_points.cpp, rule 4). Always < max_p.
    double p_value = 1;
    double mean_before = 0, mean_after = 0;
    double median_before = 0, median_after = 0;
    // (mean_after - mean_before) / mean_before * 100; nullopt when
    // mean_before is 0.
    std::optional<double> delta_pct;
    // Hodges-Lehmann shift after minus before, with its 95% interval
    // (asymptotic, stats::hodges_lehmann(before, after, 0.05, false)).
    shift_estimate shift;
};

// The method's name as options and the store spell it: "perfgate", "otava".
std::string_view to_string(change_point_method m) noexcept;
// The method of that name; nullopt for any other string.
std::optional<change_point_method> change_point_method_named(std::string_view name) noexcept;
// Throws perfgate::error "stats.bad_option" for options change_points()
// refuses (below), naming the option; returns otherwise.
void check_change_point_options(const change_point_options& options);

// Change points of `series` in index order. Segments are the points between
// consecutive change points (the first from 0, the last to the end); the
// statistics of a point are over the segments on either side of it.
// Requires every value finite (PERFGATE_CHECK). Throws perfgate::error
// "stats.bad_option" for window < 2, max_p outside (0, 1) or a negative or
// non-finite min_magnitude. Fewer than 3 points, a constant series and
// window 2 (every window is two single points) give no change points.
// Cost: O(n * window) for the search with a fixed window (O(window^2) per
// window from running sums, O(window^2) extra memory), plus the tests and
// Hodges-Lehmann estimates over the final segments, O(n log n): about 11 ms
// for 5,000 points and 120 ms for 50,000 (bench/bench_change_points,
// Release). Pure function of its input; safe to call from several threads.
std::vector<change_point> change_points(std::span<const double> series, const change_point_options& options = {});

} // namespace perfgate::stats
