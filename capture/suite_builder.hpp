// Shared by the harness parsers (capture/harness_*.cpp): a sample set built
// row by row, and the JSON reading helpers whose errors name the source and
// the JSON path. Internal to capture/.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "capture/harness.hpp"
#include "capture/perf_csv.hpp"

namespace perfgate::capture::detail {

// "ingest.bad_input": "<source>: <where>: <what>".
[[noreturn]] void bad_input(std::string_view source, std::string_view where, std::string_view what);

// The document, or "ingest.bad_input" naming nlohmann's byte position.
nlohmann::json parse_json(std::string_view text, std::string_view source);

// A finite number at doc[key] (path names it in messages); nullopt when the
// key is absent and not required.
std::optional<double> number_at(const nlohmann::json& obj, std::string_view key, std::string_view source,
                                const std::string& path, bool required);
std::optional<std::string> string_at(const nlohmann::json& obj, std::string_view key, std::string_view source,
                                     const std::string& path, bool required);

// A harness's benchmark name made valid (capture/names.hpp to_valid_name),
// remembered in `seen` (valid name -> original): a second original with the
// same valid name, or the same original twice, is "ingest.bad_input" at
// `where` naming both. `what` names the harness's field ("command").
std::string unique_name(std::map<std::string, std::string, std::less<>>& seen, std::string_view raw,
                        std::string_view source, std::string_view where, std::string_view what);

// Benchmarks in first-seen order, each a perf_capture-like table of
// repetitions x counters, turned into benchmark_samples (from_capture:
// derived counters included) at the end. Limits (max_benchmarks_per_input,
// max_counters_per_run, max_repetitions) are checked as rows arrive.
class suite_builder {
public:
    explicit suite_builder(std::string_view source) : source_(source) {}

    // Starts a new repetition of benchmark `name` (created on first use);
    // `where` names the row in messages. Returns the benchmark's index.
    std::size_t new_repetition(std::string_view name, std::string_view where);
    // Sets a counter's value in the benchmark's current repetition; a value
    // that is not finite (1e300 s scaled to ns) is "ingest.bad_input".
    void set(std::size_t bench, std::string_view counter, std::string_view unit, std::optional<double> value,
             std::string_view where);
    // A summary-only value (mean with its relative standard error in percent
    // and the samples behind it): the benchmark becomes summary-only.
    void set_summary(std::size_t bench, std::string_view counter, std::string_view unit, double mean, double rse_pct,
                     std::size_t samples, std::string_view where);
    // What the input declares about a counter (direction, gated).
    void declare(std::size_t bench, std::string_view counter, std::optional<better> direction,
                 std::optional<bool> gated);
    // The harness reported benchmark `name` failed: finish() gives it this
    // message as benchmark_samples::error (the last one given), on the
    // benchmark of that name or on a new one without samples.
    void fail(std::string_view name, std::string message);
    void warn(std::string message) { warnings_.push_back(std::move(message)); }

    [[nodiscard]] std::size_t size() const { return benches_.size(); }
    [[nodiscard]] bool empty() const { return benches_.empty(); }

    sample_set finish();

private:
    // "ingest.bad_input" naming the benchmark and counter when a value is
    // not finite (a finite input that overflowed on conversion to ns).
    void check_finite(std::string_view bench, std::string_view counter, std::string_view unit, double value,
                      std::string_view where) const;
    struct declared {
        std::optional<better> direction;
        std::optional<bool> gated;
    };
    struct pending {
        std::string name;
        perf_capture cap;
        std::optional<std::size_t> summary_repeats;
        std::map<std::string, declared, std::less<>> declarations;
    };
    std::string source_;
    std::vector<pending> benches_;
    std::map<std::string, std::size_t, std::less<>> index_;
    std::vector<std::string> warnings_;
    std::vector<std::pair<std::string, std::string>> failed_; // name, message; first failure first
};

} // namespace perfgate::capture::detail
