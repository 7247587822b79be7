// perfgate's own samples format (capture/harness.hpp, docs/inputs.md: "The
// samples format"), for any harness perfgate does not read natively:
//
//   {"perfgate_samples": 1,
//    "benchmarks": {
//      "BM_parse": {
//        "counters": {
//          "latency":    {"unit": "ns", "better": "lower", "samples": [812, 790, null, 805]},
//          "throughput": {"unit": "ops/s", "better": "higher", "gate": true, "samples": [1.2e6, ...]}}},
//      "BM_broken": {"error": "crashed: SIGSEGV"}}}
//
// Version 1 is the only one. Benchmark and counter names must already be
// valid names (capture/names.hpp): the format is ours, so nothing is
// renamed. samples[i] of every counter of a benchmark is repetition i, so
// all of a benchmark's counters have the same number of entries; null is a
// repetition without a value for that counter. "unit" defaults to "", and
// "better" and "gate" to what perfgate's counter catalogue says for the
// name (policies override both). A benchmark with "error" failed and is
// reported, not compared. Any other key is an error naming its path, so a
// typo ("gated", "sample") is not silently ignored.
#include <cmath>

#include <fmt/format.h>

#include "capture/counters.hpp"
#include "capture/harness.hpp"
#include "capture/names.hpp"
#include "capture/suite_builder.hpp"
#include "model/error.hpp"

namespace perfgate::capture {

namespace {

void only_keys(const nlohmann::json& obj, std::initializer_list<std::string_view> keys, std::string_view source,
               const std::string& path)
{
    for (const auto& item : obj.items()) {
        bool known = false;
        for (auto k : keys) known = known || item.key() == k;
        if (!known) {
            std::string list;
            for (auto k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
            detail::bad_input(source, path.empty() ? item.key().substr(0, 80) : path + "." + item.key().substr(0, 80),
                              fmt::format("unknown key (expected {})", list));
        }
    }
}

void check_name(std::string_view name, std::string_view source, const std::string& path, std::string_view what)
{
    if (name.empty()) detail::bad_input(source, path, fmt::format("empty {} name", what));
    if (name.size() > max_name_bytes) {
        detail::bad_input(source, path, fmt::format("{} name longer than {} bytes", what, max_name_bytes));
    }
    for (char c : name) {
        if (!is_name_byte(c)) {
            detail::bad_input(source, path,
                              fmt::format("{} name '{}' has a character names may not have (letters, digits and "
                                          "_.-/:+=@,<>[]()#%^~{{}} only)",
                                          what, name.substr(0, 80)));
        }
    }
}

// The document's header checked; its benchmarks object.
const nlohmann::json& samples_benchmarks(const nlohmann::json& doc, std::string_view source)
{
    if (!doc.is_object()) detail::bad_input(source, "", "expected a perfgate samples object");
    only_keys(doc, {"perfgate_samples", "benchmarks"}, source, "");
    auto version = doc.find("perfgate_samples");
    if (version == doc.end()) detail::bad_input(source, "perfgate_samples", "missing; expected the format version, 1");
    if (!version->is_number_integer()) {
        detail::bad_input(source, "perfgate_samples", "expected the format version, the integer 1");
    }
    if (version->get<long long>() != 1) {
        detail::bad_input(source, "perfgate_samples",
                          fmt::format("version {} is not one this perfgate reads (1)", version->dump().substr(0, 20)));
    }
    auto benches = doc.find("benchmarks");
    if (benches == doc.end() || !benches->is_object()) {
        detail::bad_input(source, "benchmarks", "missing; expected an object of benchmarks by name");
    }
    if (benches->empty()) detail::bad_input(source, "benchmarks", "no benchmarks");
    if (benches->size() > max_benchmarks_per_input) {
        detail::bad_input(source, "benchmarks",
                          fmt::format("more than {} benchmarks in one input", max_benchmarks_per_input));
    }
    return *benches;
}

// One counter of benchmark `bench_name` checked, at `cpath`: its name, keys,
// unit, samples, better and gate. Every counter has as many samples as the
// first one checked (`first_counter`, `reps`: set by the first).
void check_samples_counter(const std::string& cname, const nlohmann::json& counter, std::string_view source,
                           const std::string& cpath, const std::string& bench_name, std::string& first_counter,
                           std::size_t& reps)
{
    check_name(cname, source, cpath, "counter");
    if (!counter.is_object()) detail::bad_input(source, cpath, "expected an object");
    only_keys(counter, {"unit", "better", "gate", "samples"}, source, cpath);
    if (const auto unit = detail::string_at(counter, "unit", source, cpath, false)) {
        if (unit->size() > 32) detail::bad_input(source, cpath + ".unit", "longer than 32 bytes");
    }
    auto samples = counter.find("samples");
    if (samples == counter.end() || !samples->is_array()) {
        detail::bad_input(source, cpath + ".samples", "missing; expected an array of numbers (null: none)");
    }
    if (samples->empty()) detail::bad_input(source, cpath + ".samples", "no samples");
    if (samples->size() > max_repetitions) {
        throw error(errors::ingest_too_many_repetitions,
                    fmt::format("{}: {}.samples: benchmark '{}' has more than {} repetitions", source, cpath,
                                bench_name, max_repetitions));
    }
    if (first_counter.empty()) {
        first_counter = cname;
        reps = samples->size();
    } else if (samples->size() != reps) {
        detail::bad_input(source, cpath + ".samples",
                          fmt::format("{} samples, but counter '{}' has {}: samples[i] is repetition i of "
                                      "every counter (null where one has no value)",
                                      samples->size(), first_counter, reps));
    }
    for (std::size_t i = 0; i < samples->size(); ++i) {
        const nlohmann::json& v = (*samples)[i];
        if (v.is_null()) continue;
        const std::string where = fmt::format("{}.samples[{}]", cpath, i);
        if (!v.is_number()) detail::bad_input(source, where, "expected a number or null");
        if (!std::isfinite(v.get<double>())) detail::bad_input(source, where, "not a finite number");
    }
    if (auto b = counter.find("better"); b != counter.end()) {
        if (!b->is_string() || !parse_better(b->get<std::string>())) {
            detail::bad_input(source, cpath + ".better", "expected \"lower\" or \"higher\"");
        }
    }
    if (auto g = counter.find("gate"); g != counter.end() && !g->is_boolean()) {
        detail::bad_input(source, cpath + ".gate", "expected true or false");
    }
}

} // namespace

sample_set parse_samples_json(std::string_view text, std::string_view source)
{
    const nlohmann::json doc = detail::parse_json(text, source);
    const nlohmann::json& benches = samples_benchmarks(doc, source);
    detail::suite_builder suite(source);
    for (const auto& [name, bench] : benches.items()) {
        const std::string path = fmt::format("benchmarks.{}", name.substr(0, 80));
        check_name(name, source, path, "benchmark");
        if (!bench.is_object()) detail::bad_input(source, path, "expected an object");
        only_keys(bench, {"counters", "error"}, source, path);
        if (const auto message = detail::string_at(bench, "error", source, path, false)) {
            if (message->empty()) detail::bad_input(source, path + ".error", "empty; say why the benchmark failed");
            suite.fail(name, message->substr(0, 1000));
            continue;
        }
        auto counters = bench.find("counters");
        if (counters == bench.end() || !counters->is_object()) {
            detail::bad_input(source, path + ".counters", "missing; expected an object of counters by name");
        }
        if (counters->empty()) detail::bad_input(source, path + ".counters", "no counters");
        if (counters->size() > max_counters_per_run) {
            throw error(errors::ingest_too_many_counters,
                        fmt::format("{}: {}.counters: more than {} counters in one benchmark", source, path,
                                    max_counters_per_run));
        }
        // Checks every counter first; then repetition by repetition.
        std::size_t reps = 0;
        std::string first_counter;
        for (const auto& [cname, counter] : counters->items()) {
            const std::string cpath = fmt::format("{}.counters.{}", path, cname.substr(0, 80));
            check_samples_counter(cname, counter, source, cpath, name, first_counter, reps);
        }
        std::size_t b = 0;
        for (std::size_t r = 0; r < reps; ++r) {
            const std::string where = fmt::format("{}.counters", path);
            b = suite.new_repetition(name, where);
            for (const auto& [cname, counter] : counters->items()) {
                const nlohmann::json& v = counter["samples"][r];
                const std::string unit = detail::string_at(counter, "unit", source, where, false).value_or("");
                suite.set(b, cname, unit, v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()), where);
            }
        }
        for (const auto& [cname, counter] : counters->items()) {
            std::optional<better> direction;
            std::optional<bool> gated;
            if (auto d = counter.find("better"); d != counter.end()) direction = parse_better(d->get<std::string>());
            if (auto g = counter.find("gate"); g != counter.end()) gated = g->get<bool>();
            if (direction || gated) suite.declare(b, cname, direction, gated);
        }
    }
    sample_set out = suite.finish();
    return out;
}

} // namespace perfgate::capture
