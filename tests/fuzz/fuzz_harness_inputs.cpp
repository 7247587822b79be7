// libFuzzer target for the harness input parsers (capture/harness.hpp):
// capture::parse_input across every format. A first byte 0-5 forces format
// 0-5 (perf, gbench, hyperfine, catch2, nanobench, samples) on the rest;
// any other input goes through detect_input_format, as `perfgate compare`
// reads a file. Seeds: tests/fuzz/corpus-harness (the captured outputs of
// tests/data/{hyperfine,catch2,nanobench,samples}).
//
// Any input may be rejected with one of the ingest errors; a crash, a
// sanitizer report, another exception, or a sample set that breaks its
// promises (non-finite values, an invalid name from a format that maps
// names, a benchmark with neither counters nor an error) is a bug.
#include "capture/harness.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "capture/names.hpp"
#include "model/error.hpp"

namespace {

using perfgate::capture::input_format;

void check_invariants(const perfgate::capture::parsed_input& in)
{
    const bool mapped_names = in.format == input_format::hyperfine || in.format == input_format::catch2 ||
                              in.format == input_format::nanobench || in.format == input_format::samples;
    if (in.set.benchmarks.empty()) std::abort();
    for (const auto& b : in.set.benchmarks) {
        if (mapped_names) perfgate::capture::validate_name("benchmark", b.name); // throws: caught as a bug below
        if (b.error.empty() && b.counters.empty()) std::abort();
        for (const auto& c : b.counters) {
            for (double v : c.values)
                if (!std::isfinite(v)) std::abort();
            for (double v : c.variance_pct)
                if (!std::isfinite(v)) std::abort();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::optional<input_format> forced;
    if (!text.empty() && static_cast<unsigned char>(text.front()) < 6) {
        forced = static_cast<input_format>(static_cast<unsigned char>(text.front()));
        text.remove_prefix(1);
    }
    perfgate::capture::parsed_input in;
    try {
        in = perfgate::capture::parse_input(text, "fuzz.input", forced);
    } catch (const perfgate::error& e) {
        const std::string_view id = e.id();
        if (id != "ingest.bad_input" && id != "ingest.bad_csv" && id != "ingest.too_many_counters" &&
            id != "ingest.too_many_repetitions") {
            std::abort();
        }
        return 0;
    }
    try {
        check_invariants(in);
    } catch (...) {
        std::abort();
    }
    return 0;
}
