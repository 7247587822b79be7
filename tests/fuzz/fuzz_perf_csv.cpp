// libFuzzer target for the perf stat parser (capture/perf_csv.hpp).
//
// The parser takes untrusted bytes (HTTP bodies, CI artifacts). Any input may
// be rejected with perfgate::error; anything else escaping — a crash, a
// sanitizer report, another exception, a capture that breaks its own
// invariants — is a bug. See README.md here for how to run it.
#include "capture/perf_csv.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/error.hpp"

namespace {

// The promises of perf_capture that users index by: every run has every
// event, and nothing non-finite leaks out as a value.
void check_invariants(const perfgate::capture::perf_capture& c)
{
    if (c.runs.empty() || c.events.empty()) std::abort();
    for (const auto& run : c.runs) {
        if (run.size() != c.events.size()) std::abort();
        for (const auto& r : run) {
            if (r.value && !std::isfinite(*r.value)) std::abort();
            if (!std::isfinite(r.pcnt_running)) std::abort();
            if (r.variance_pct && !std::isfinite(*r.variance_pct)) std::abort();
            if (r.variance_pct.has_value() != c.summary_only && r.value) std::abort();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        check_invariants(perfgate::capture::parse_perf_stat(text, "fuzz.csv"));
    } catch (const perfgate::error& e) {
        const std::string_view id = e.id();
        // A capture that does not parse, or one over the per-run limits.
        if (id != "ingest.bad_csv" && id != "ingest.too_many_counters" && id != "ingest.too_many_repetitions") {
            std::abort();
        }
    }
    return 0;
}
