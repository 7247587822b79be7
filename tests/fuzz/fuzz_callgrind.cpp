// libFuzzer target for the callgrind parser (profile/callgrind.hpp) and the
// per-function diff built on it (profile/diff.hpp).
//
// `perfgate run --backend callgrind` and uploads hand the parser files that a
// program under valgrind wrote, or that anyone wrote. Any input may be
// rejected with perfgate::error "profile.bad_callgrind"; a crash, a sanitizer
// report, another exception or a profile that breaks its own promises is a
// bug. Seeds: the files of tests/data/callgrind. See README.md here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <tuple>

#include "model/error.hpp"
#include "profile/callgrind.hpp"
#include "profile/diff.hpp"

namespace {

namespace pp = perfgate::profile;

// What callers index by: one cost per event everywhere, inclusive >= self,
// functions sorted so that find() works, every function findable by name.
void check_invariants(const pp::callgrind_profile& p)
{
    const auto n = p.events.size();
    if (n == 0 || p.totals.size() != n) std::abort();
    for (std::size_t i = 0; i < n; ++i) {
        const auto at = p.event_index(p.events[i]); // the first of equal names
        if (!at || *at > i) std::abort();
    }
    for (const auto& f : p.functions) {
        if (f.self.size() != n || f.inclusive.size() != n) std::abort();
        for (std::size_t i = 0; i < n; ++i) {
            if (f.inclusive[i] < f.self[i]) std::abort();
        }
        const auto* found = p.find(f.name);
        if (found == nullptr || found->name != f.name) std::abort();
    }
    const bool sorted = std::is_sorted(p.functions.begin(), p.functions.end(), [](const auto& a, const auto& b) {
        return std::tie(a.name, a.file, a.object) < std::tie(b.name, b.file, b.object);
    });
    if (!sorted) std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    pp::callgrind_profile profile;
    try {
        profile = pp::parse_callgrind(text, "fuzz.callgrind");
    } catch (const perfgate::error& e) {
        if (std::string_view(e.id()) != "profile.bad_callgrind") std::abort();
        return 0;
    }
    check_invariants(profile);
    // A profile against itself: nothing changed. Costs summed per name may
    // overflow (several same-named functions): then only that error.
    try {
        const auto same = pp::diff_profiles(profile, profile, profile.events.front());
        if (same.changed_functions != 0 || !same.top.empty() || same.total_before != same.total_after) std::abort();
    } catch (const perfgate::error& e) {
        if (!std::string_view(e.id()).starts_with("profile.")) std::abort();
    }
    return 0;
}
