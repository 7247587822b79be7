// libFuzzer target for the perf script folder (profile/perf_script.hpp): the
// `perf script` text of `perfgate run --profile` and of uploads, folded into
// flame-graph stacks, folded twice: counting samples and weighting them by
// period. Any input may be rejected with perfgate::error
// "profile.bad_perf_script"; a crash, a sanitizer report, another exception
// or folded stacks that break their own promises are a bug. Seeds: the
// recorded files of tests/data/perf-script. See README.md here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "model/error.hpp"
#include "profile/perf_script.hpp"

namespace {

namespace pp = perfgate::profile;

void check_invariants(const pp::folded_stacks& f, bool weighted)
{
    std::uint64_t sum = 0, unsymbolized = 0;
    for (const auto& [stack, count] : f.stacks) {
        // One line per stack, each seen at least once.
        if (stack.empty() || stack.find('\n') != std::string::npos) std::abort();
        if (count == 0 || count > f.total) std::abort();
        sum += count;
    }
    for (const auto& [object, count] : f.unsymbolized_leaves) unsymbolized += count;
    if (sum != f.total || unsymbolized > f.samples) std::abort();
    if (!weighted && f.total != f.samples) std::abort();
    if (f.stacks.size() > f.samples) std::abort();
    // flamegraph.pl's input: one "stack count" line per stack.
    const auto folded = pp::format_folded(f);
    if (static_cast<std::size_t>(std::count(folded.begin(), folded.end(), '\n')) != f.stacks.size()) std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const bool weighted : {false, true}) {
        pp::perf_script_options options;
        options.weight_by_period = weighted;
        try {
            check_invariants(pp::fold_perf_script(text, "fuzz.script", options), weighted);
        } catch (const perfgate::error& e) {
            if (std::string_view(e.id()) != "profile.bad_perf_script") std::abort();
        }
    }
    return 0;
}
