// nanobench's JSON template output (ankerl::nanobench::templates::json()
// rendered by Bench::render): capture/harness.hpp, docs/inputs.md.
//
// One benchmark per element of "results", named by its "name"
// (capture/names.hpp to_valid_name). One sample per epoch, the elements of
// "measurements": nanobench writes every measure there already divided by
// the epoch's iterations ("elapsed" is seconds per iteration), so a sample
// is elapsed / batch in ns per op -> real_time (the wall-clock time per
// call, as google/benchmark's real_time), and, where the machine let
// nanobench read performance counters, instructions, cpucycles,
// branchinstructions and branchmisses per op -> instructions, cycles,
// branches, branch-misses. nanobench writes 0 for a counter it could not
// read, so a counter that is 0 in every epoch is absent, not a zero.
#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "capture/harness.hpp"
#include "capture/suite_builder.hpp"
#include "model/error.hpp"

namespace perfgate::capture {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> nb_counters{{
    {"instructions", "instructions"},
    {"cpucycles", "cycles"},
    {"branchinstructions", "branches"},
    {"branchmisses", "branch-misses"},
}};

} // namespace

sample_set parse_nanobench_json(std::string_view text, std::string_view source)
{
    const nlohmann::json doc = detail::parse_json(text, source);
    if (!doc.is_object()) detail::bad_input(source, "", "expected nanobench's JSON template output (an object)");
    auto results = doc.find("results");
    if (results == doc.end() || !results->is_array()) {
        detail::bad_input(source, "results", "missing; expected nanobench's templates::json() output");
    }
    if (results->empty()) detail::bad_input(source, "results", "no benchmark results");
    detail::suite_builder suite(source);
    std::map<std::string, std::string, std::less<>> seen;
    for (std::size_t i = 0; i < results->size(); ++i) {
        const nlohmann::json& result = (*results)[i];
        const std::string path = fmt::format("results[{}]", i);
        if (!result.is_object()) detail::bad_input(source, path, "expected an object");
        if (i >= max_benchmarks_per_input) {
            detail::bad_input(source, path,
                              fmt::format("more than {} benchmarks in one input", max_benchmarks_per_input));
        }
        const std::string raw = *detail::string_at(result, "name", source, path, true);
        const std::string name = detail::unique_name(seen, raw, source, path + ".name", "name");
        const double batch = detail::number_at(result, "batch", source, path, false).value_or(1.0);
        if (batch <= 0) detail::bad_input(source, path + ".batch", "expected a number > 0");
        auto ms = result.find("measurements");
        if (ms == result.end() || !ms->is_array()) {
            detail::bad_input(source, path + ".measurements",
                              "missing; expected the per-epoch measurements of templates::json()");
        }
        if (ms->empty()) detail::bad_input(source, path + ".measurements", "no epochs");
        if (ms->size() > max_repetitions) {
            throw error(errors::ingest_too_many_repetitions,
                        fmt::format("{}: {}.measurements: benchmark '{}' has more than {} repetitions", source, path,
                                    name, max_repetitions));
        }
        // A counter is present when some epoch has a non-zero value.
        std::array<bool, nb_counters.size()> present{};
        for (std::size_t e = 0; e < ms->size(); ++e) {
            const nlohmann::json& m = (*ms)[e];
            const std::string where = fmt::format("{}.measurements[{}]", path, e);
            if (!m.is_object()) detail::bad_input(source, where, "expected an object");
            for (std::size_t k = 0; k < nb_counters.size(); ++k) {
                const auto v = detail::number_at(m, nb_counters[k].first, source, where, false);
                if (v && *v != 0) present[k] = true;
            }
        }
        for (std::size_t e = 0; e < ms->size(); ++e) {
            const nlohmann::json& m = (*ms)[e];
            const std::string where = fmt::format("{}.measurements[{}]", path, e);
            const double iterations = *detail::number_at(m, "iterations", source, where, true);
            if (iterations <= 0) detail::bad_input(source, where + ".iterations", "expected a number > 0");
            const double elapsed = *detail::number_at(m, "elapsed", source, where, true);
            if (elapsed < 0) detail::bad_input(source, where + ".elapsed", "expected a time >= 0");
            const std::size_t b = suite.new_repetition(name, where);
            suite.set(b, "real_time", "ns", elapsed / batch * 1e9, where);
            for (std::size_t k = 0; k < nb_counters.size(); ++k) {
                if (!present[k]) continue;
                const auto v = detail::number_at(m, nb_counters[k].first, source, where, false);
                suite.set(b, nb_counters[k].second, "", v ? std::optional<double>(*v / batch) : std::nullopt, where);
            }
        }
    }
    return suite.finish();
}

} // namespace perfgate::capture
