#include "gate/bisect.hpp"

#include <cmath>

#include "model/error.hpp"
#include "stats/hodges_lehmann.hpp"

namespace perfgate::gate {

namespace {

// An interval in the effect's direction: positive is toward bad.
struct toward {
    double lower = 0, upper = 0;
};

toward oriented(const shift_reading& r, double sign)
{
    return sign > 0 ? toward{r.lower, r.upper} : toward{-r.upper, -r.lower};
}

} // namespace

shift_reading shift_of(const std::vector<double>& before, const std::vector<double>& after, double alpha)
{
    PERFGATE_CHECK(!before.empty() && !after.empty());
    if (before.size() == 1 && after.size() == 1) {
        const double d = after[0] - before[0];
        return {d, d, d};
    }
    const bool exact = before.size() <= exact_shift_max && after.size() <= exact_shift_max;
    const auto hl = stats::hodges_lehmann(before, after, alpha, exact);
    return {hl.estimate, hl.lower, hl.upper};
}

std::string_view to_string(step_decision d)
{
    switch (d) {
    case step_decision::like_good: return "like good";
    case step_decision::like_bad: return "like bad";
    case step_decision::between: return "between";
    case step_decision::undecided: return "undecided";
    }
    return "?";
}

step_decision decide_step(const shift_reading& from_good, const shift_reading& to_bad, double effect, double resolution)
{
    PERFGATE_CHECK(effect != 0 && resolution > 0 && resolution < 0.5);
    const double sign = effect > 0 ? 1.0 : -1.0;
    const double band = resolution * std::abs(effect);
    const double most = std::abs(effect) - band;
    const toward a = oriented(from_good, sign), b = oriented(to_bad, sign);
    const bool a_part = a.lower >= band, b_part = b.lower >= band;
    if (a_part && b_part) return step_decision::between;
    if (b_part && a.upper <= most) return step_decision::like_good;
    if (a_part && b.upper <= most) return step_decision::like_bad;
    return step_decision::undecided;
}

bool confirms(const shift_reading& parent_to_culprit, double effect, double resolution)
{
    PERFGATE_CHECK(effect != 0 && resolution > 0 && resolution < 0.5);
    const toward t = oriented(parent_to_culprit, effect > 0 ? 1.0 : -1.0);
    return t.lower >= resolution * std::abs(effect);
}

bisect_search::bisect_search(std::size_t commits, double effect) : skipped_(commits, false)
{
    PERFGATE_CHECK(commits >= 2 && effect != 0);
    pending_.push_back({0, commits - 1, effect});
    settle();
}

void bisect_search::settle()
{
    while (!pending_.empty()) {
        const segment s = pending_.back();
        std::size_t inside = 0;
        for (std::size_t i = s.lo + 1; i < s.hi; ++i) inside += skipped_[i] ? 0 : 1;
        if (inside > 0) return;
        pending_.pop_back();
        if (s.hi == s.lo + 1) culprits_.push_back({s.hi, s.effect});
        else open_.push_back({s.lo, s.hi, s.effect, true});
    }
}

std::optional<bisect_search::probe> bisect_search::next()
{
    if (pending_.empty()) return std::nullopt;
    const segment s = pending_.back();
    // Nearest to the middle, the lower one first on a tie.
    const double middle = (static_cast<double>(s.lo) + static_cast<double>(s.hi)) / 2;
    std::optional<std::size_t> best;
    for (std::size_t i = s.lo + 1; i < s.hi; ++i) {
        if (skipped_[i]) continue;
        if (!best || std::abs(static_cast<double>(i) - middle) < std::abs(static_cast<double>(*best) - middle))
            best = i;
    }
    PERFGATE_CHECK(best.has_value()); // settle() leaves only segments with a commit inside
    return probe{s.lo, *best, s.hi, s.effect};
}

void bisect_search::record(const probe& p, step_decision d, const shift_reading& from_good, const shift_reading& to_bad)
{
    PERFGATE_CHECK(!pending_.empty() && pending_.back().lo == p.lo && pending_.back().hi == p.hi);
    pending_.pop_back();
    switch (d) {
    case step_decision::like_good: pending_.push_back({p.mid, p.hi, to_bad.estimate}); break;
    case step_decision::like_bad: pending_.push_back({p.lo, p.mid, from_good.estimate}); break;
    case step_decision::between:
        // The later half first onto the stack: the earlier one is searched first.
        pending_.push_back({p.mid, p.hi, to_bad.estimate});
        pending_.push_back({p.lo, p.mid, from_good.estimate});
        break;
    case step_decision::undecided: open_.push_back({p.lo, p.hi, p.effect, false}); break;
    }
    settle();
}

void bisect_search::skip(std::size_t commit)
{
    PERFGATE_CHECK(commit < skipped_.size());
    if (!skipped_[commit]) {
        skipped_[commit] = true;
        skipped_list_.push_back(commit);
    }
    settle();
}

} // namespace perfgate::gate
