// hyperfine's --export-json output (capture/harness.hpp, docs/inputs.md).
//
// One benchmark per element of "results", named by its "command" (the
// --command-name when one was given, else the command line with parameters
// substituted), made a valid name by capture/names.hpp to_valid_name.
// Samples, one per run: "times" (seconds) -> wall-time in ns, and, from
// hyperfine 1.16's --export-json on, "memory_usage_byte" -> max-rss in KiB.
// "user" and "system" are means over the runs in every hyperfine release
// (1.15 in Debian 12 up to 1.20): a mean is not a sample, so they are not
// compared; should a release write them per run (arrays as long as
// "times"), they become user-time and sys-time samples. A run whose exit
// code is not 0 (hyperfine -i) or null (killed by a signal) makes the
// benchmark failed: reported with its exit codes, not compared.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "capture/harness.hpp"
#include "capture/suite_builder.hpp"
#include "model/error.hpp"

namespace perfgate::capture {

namespace {

// The per-run values at result[key] (nullopt: absent or a mean, a number),
// checked: an array of finite numbers >= 0, as long as the runs.
std::optional<std::vector<double>> per_run(const nlohmann::json& result, std::string_view key, std::size_t runs,
                                           std::string_view source, const std::string& path)
{
    auto it = result.find(key);
    if (it == result.end() || it->is_null() || it->is_number()) return std::nullopt;
    const std::string where = fmt::format("{}.{}", path, key);
    if (!it->is_array()) detail::bad_input(source, where, "expected an array of numbers or a number");
    if (it->size() != runs) {
        detail::bad_input(source, where, fmt::format("{} values for {} runs in times", it->size(), runs));
    }
    std::vector<double> out;
    out.reserve(it->size());
    for (std::size_t i = 0; i < it->size(); ++i) {
        const nlohmann::json& v = (*it)[i];
        if (!v.is_number()) detail::bad_input(source, fmt::format("{}[{}]", where, i), "expected a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < 0) {
            detail::bad_input(source, fmt::format("{}[{}]", where, i), "not a finite number >= 0");
        }
        out.push_back(d);
    }
    return out;
}

} // namespace

sample_set parse_hyperfine_json(std::string_view text, std::string_view source)
{
    const nlohmann::json doc = detail::parse_json(text, source);
    if (!doc.is_object()) detail::bad_input(source, "", "expected hyperfine's --export-json object");
    auto results = doc.find("results");
    if (results == doc.end() || !results->is_array()) {
        detail::bad_input(source, "results", "missing; expected hyperfine's --export-json output");
    }
    if (results->empty()) detail::bad_input(source, "results", "no benchmark results");
    if (results->size() > max_benchmarks_per_input) {
        detail::bad_input(source, "results",
                          fmt::format("more than {} benchmarks in one input", max_benchmarks_per_input));
    }
    detail::suite_builder suite(source);
    std::map<std::string, std::string, std::less<>> seen;
    for (std::size_t i = 0; i < results->size(); ++i) {
        const nlohmann::json& result = (*results)[i];
        const std::string path = fmt::format("results[{}]", i);
        if (!result.is_object()) detail::bad_input(source, path, "expected an object");
        const std::string command = *detail::string_at(result, "command", source, path, true);
        const std::string name = detail::unique_name(seen, command, source, path + ".command", "command");
        auto times_it = result.find("times");
        if (times_it == result.end() || !times_it->is_array()) {
            detail::bad_input(source, path + ".times",
                              "missing; expected the per-run times (hyperfine 1.9 or later writes them)");
        }
        const std::size_t runs = times_it->size();
        if (runs == 0) detail::bad_input(source, path + ".times", "no runs");
        if (runs > max_repetitions) {
            throw error(errors::ingest_too_many_repetitions,
                        fmt::format("{}: {}.times: benchmark '{}' has more than {} repetitions", source, path, name,
                                    max_repetitions));
        }
        const std::vector<double> times = *per_run(result, "times", runs, source, path);
        const auto user = per_run(result, "user", runs, source, path);
        const auto system = per_run(result, "system", runs, source, path);
        const auto memory = per_run(result, "memory_usage_byte", runs, source, path);
        // Exit codes: absent in outputs older than hyperfine 1.12; null is a
        // run killed by a signal.
        std::size_t bad_runs = 0;
        std::string codes;
        if (auto ec = result.find("exit_codes"); ec != result.end() && !ec->is_null()) {
            if (!ec->is_array()) detail::bad_input(source, path + ".exit_codes", "expected an array");
            if (ec->size() != runs) {
                detail::bad_input(source, path + ".exit_codes",
                                  fmt::format("{} exit codes for {} runs in times", ec->size(), runs));
            }
            for (std::size_t r = 0; r < ec->size(); ++r) {
                const nlohmann::json& code = (*ec)[r];
                if (!code.is_null() && !code.is_number_integer()) {
                    detail::bad_input(source, fmt::format("{}.exit_codes[{}]", path, r), "expected an integer or null");
                }
                if (code.is_null() || code.get<long long>() != 0) {
                    ++bad_runs;
                    const std::string shown = code.is_null() ? "signal" : std::to_string(code.get<long long>());
                    if (codes.find(shown) == std::string::npos) codes += (codes.empty() ? "" : ", ") + shown;
                }
            }
        }
        if (bad_runs > 0) {
            suite.fail(name, fmt::format("command '{}' failed in {} of {} runs (exit codes: {})",
                                         command.substr(0, 200), bad_runs, runs, codes));
            continue;
        }
        for (std::size_t r = 0; r < runs; ++r) {
            const std::string where = fmt::format("{}.times[{}]", path, r);
            const std::size_t b = suite.new_repetition(name, where);
            suite.set(b, "wall-time", "ns", times[r] * 1e9, where);
            if (user) suite.set(b, "user-time", "ns", (*user)[r] * 1e9, where);
            if (system) suite.set(b, "sys-time", "ns", (*system)[r] * 1e9, where);
            if (memory) suite.set(b, "max-rss", "KiB", (*memory)[r] / 1024.0, where);
        }
    }
    sample_set out = suite.finish();
    return out;
}

} // namespace perfgate::capture
