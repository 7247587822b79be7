// The decisions of `perfgate bisect` (docs/bisect.md): where in a range of
// commits a counter changed, one measured commit at a time. Pure: no git,
// no processes. cli/cmd_bisect.cpp measures and feeds the readings in;
// bench/sim/sim_bisect.cpp feeds simulated ones through the same code.
//
// A step measures a commit M of a segment [L, H] (L on the good side, H on
// the bad side) against both ends, each pair interleaved: the shift
// M - L ("from good") and H - M ("to bad"), each with its interval
// (Hodges-Lehmann at the decision's level; one execution a side and a point
// interval for a deterministic backend). The segment carries the effect
// expected between its ends, signed: positive when H is higher. With
// band = resolution x |effect|, each shift taken in the effect's direction
// (positive: toward bad), and "a part" meaning an interval whose lower end
// lies at or above the band:
//   between    both shifts are a part: some of the change came at or before
//              M and some after it; both halves are searched;
//   like good  the shift to H is a part, and the shift from L is clearly not
//              the whole (its upper end at most |effect| - band): the change
//              (or the part of it told apart) came after M;
//   like bad   the mirror image: the change came at or before M;
//   undecided  anything else: measure more, or end with the range.
// A wrong step needs both intervals to miss their true shifts by the band
// or more, each in the wrong direction: the two pairs are measured apart,
// so its probability is below (alpha / 2)^2. With a deterministic backend
// the intervals are points and a part is anything of at least the band.
// On a noisy backend a part of a split change that its interval cannot
// yet tell from nothing may be folded into the other part: the culprit's
// share of the effect (below 1) then says so.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace perfgate::gate {

// The share of a segment's effect under which a part of it is not told
// apart from no change (perfgate bisect --resolution): 0.2 tells apart a
// regression split 3% + 4% (0.43 and 0.57 of the effect) and keeps a step's
// interval, at the decision's level, clear of the wrong band.
inline constexpr double default_bisect_resolution = 0.2;

// One pair's shift (later minus earlier) with its interval, in the
// counter's unit.
struct shift_reading {
    double estimate = 0, lower = 0, upper = 0;
};

// Hodges-Lehmann shift of `after` against `before` with its interval at
// 1 - alpha (stats/hodges_lehmann.hpp; exact up to exact_shift_max samples
// a side, as R's wilcox.test switches at 50). One sample a side (a
// deterministic count): the difference, as a point interval.
inline constexpr std::size_t exact_shift_max = 50;
shift_reading shift_of(const std::vector<double>& before, const std::vector<double>& after, double alpha);

// Deterministic counts whose ends differ by less than this share of the
// good end's value measure alike (code moved, no work added): 0.1%.
inline constexpr double deterministic_floor = 0.001;

enum class step_decision { like_good, like_bad, between, undecided };
std::string_view to_string(step_decision d);

// The decision of one step (above). effect: the segment's expected shift
// from L to H, non-zero; resolution in (0, 0.5).
step_decision decide_step(const shift_reading& from_good, const shift_reading& to_bad, double effect,
                          double resolution = default_bisect_resolution);

// A culprit is named only when its own pair (its parent against it,
// measured once more after the search) shows a part of the change: the
// shift's interval, in the effect's direction, at or above the band of
// `effect` (the culprit's share as the search measured it). A culprit the
// search reached through a wrong step then fails its own test, as often as
// an interval misses by the band, and is reported as a range, not a commit.
bool confirms(const shift_reading& parent_to_culprit, double effect, double resolution = default_bisect_resolution);

// The search over commits 0 (good) .. n-1 (bad), in order along the
// history. Segments are searched in commit order, one at a time; a
// "between" splits one into two.
class bisect_search {
public:
    // effect: the measured shift from commit 0 to commit n-1 (non-zero), n >= 2.
    bisect_search(std::size_t commits, double effect);

    struct probe {
        std::size_t lo = 0, mid = 0, hi = 0;
        double effect = 0; // the segment's expected shift from lo to hi
    };
    // The next commit to measure, or nullopt when done. Among the commits
    // strictly inside the current segment that were not skipped, the one
    // nearest its middle (the lower one on a tie), as git bisect skip does.
    [[nodiscard]] std::optional<probe> next();

    // The outcome of next()'s probe: its decision and readings, or skipped
    // (the commit did not build or its benchmark failed).
    void record(const probe& p, step_decision d, const shift_reading& from_good, const shift_reading& to_bad);
    void skip(std::size_t commit);

    // A commit that made (a part of) the change: hi of a segment whose ends
    // are neighbours, with the shift expected over it.
    struct culprit {
        std::size_t commit = 0;
        double effect = 0;
    };
    // A segment that ended without a single commit: undecided (its step
    // could not decide within the budget), or every commit inside it was
    // skipped; the change lies in (lo, hi].
    struct open_range {
        std::size_t lo = 0, hi = 0;
        double effect = 0;
        bool all_skipped = false;
    };
    [[nodiscard]] const std::vector<culprit>& culprits() const { return culprits_; }
    [[nodiscard]] const std::vector<open_range>& open_ranges() const { return open_; }
    [[nodiscard]] const std::vector<std::size_t>& skipped() const { return skipped_list_; }

private:
    struct segment {
        std::size_t lo = 0, hi = 0;
        double effect = 0;
    };
    // Settles the front segments that need no measurement.
    void settle();

    std::vector<segment> pending_; // back() is searched next
    std::vector<bool> skipped_;
    std::vector<std::size_t> skipped_list_;
    std::vector<culprit> culprits_;
    std::vector<open_range> open_;
};

} // namespace perfgate::gate
