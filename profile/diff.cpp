#include "profile/diff.hpp"

#include "model/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>
#include <tuple>

namespace perfgate::profile {

cost_by_name exclusive_costs(const callgrind_profile& p, std::string_view event)
{
    auto i = p.event_index(event);
    if (!i)
        throw error(errors::profile_unknown_event,
                    fmt::format("the profile has no event '{}' (it has: {})", event, fmt::join(p.events, " ")));
    cost_by_name out;
    for (const auto& f : p.functions) {
        auto& c = out[f.name];
        // Sums of one file's costs cannot overflow unless the file's did,
        // which the parser rejects; saturate rather than wrap regardless.
        if (__builtin_add_overflow(c, f.self[*i], &c)) c = std::numeric_limits<std::uint64_t>::max();
    }
    return out;
}

namespace {

std::int64_t signed_difference(std::uint64_t after, std::uint64_t before)
{
    // Costs above 2^63 would not fit a signed delta: clamp (no real profile
    // gets there: 2^63 instructions is centuries of valgrind time).
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (after >= before) return static_cast<std::int64_t>(std::min(after - before, max));
    return -static_cast<std::int64_t>(std::min(before - after, max));
}

std::uint64_t magnitude(std::int64_t d)
{
    return d < 0 ? static_cast<std::uint64_t>(-(d + 1)) + 1 : static_cast<std::uint64_t>(d);
}

} // namespace

profile_diff diff_costs(const cost_by_name& before, const cost_by_name& after, std::size_t top_n)
{
    profile_diff d;
    std::vector<function_change> all;
    auto note = [&](const std::string& name, std::uint64_t b, std::uint64_t a) {
        if (a == b) return;
        function_change c;
        c.name = name;
        c.before = b;
        c.after = a;
        c.delta = signed_difference(a, b);
        all.push_back(std::move(c));
    };
    // A merge of the two sorted maps: every name once.
    auto b = before.begin(), a = after.begin();
    while (b != before.end() || a != after.end()) {
        if (a == after.end() || (b != before.end() && b->first < a->first)) {
            note(b->first, b->second, 0);
            ++b;
        } else if (b == before.end() || a->first < b->first) {
            note(a->first, 0, a->second);
            ++a;
        } else {
            note(a->first, b->second, a->second);
            ++a;
            ++b;
        }
    }
    for (const auto& [name, v] : before) d.total_before += v;
    for (const auto& [name, v] : after) d.total_after += v;
    for (const auto& c : all) d.total_abs_change += magnitude(c.delta);
    for (auto& c : all) c.share = static_cast<double>(c.delta) / static_cast<double>(d.total_abs_change);
    d.changed_functions = all.size();
    std::sort(all.begin(), all.end(), [](const function_change& x, const function_change& y) {
        auto mx = magnitude(x.delta), my = magnitude(y.delta);
        return std::tie(my, x.name) < std::tie(mx, y.name);
    });
    if (all.size() > top_n) all.resize(top_n);
    d.top = std::move(all);
    return d;
}

profile_diff diff_profiles(const callgrind_profile& baseline, const callgrind_profile& candidate,
                           std::string_view event, std::size_t top_n)
{
    auto d = diff_costs(exclusive_costs(baseline, event), exclusive_costs(candidate, event), top_n);
    d.event = std::string(event);
    return d;
}

} // namespace perfgate::profile
