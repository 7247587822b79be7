// What perfgate reads as measurements besides perf stat: the outputs of the
// benchmark harnesses C++ teams already run, each turned into a sample set
// of many benchmarks (docs/inputs.md).
//
//  gbench     google/benchmark --benchmark_format=json (or --benchmark_out
//             with --benchmark_out_format=json): one benchmark per `name`,
//             one sample per `run_type: "iteration"` row (a repetition);
//             counters real_time and cpu_time in ns per iteration (from
//             time_unit), every user counter, the --benchmark_perf_counters
//             columns under perf's names (CYCLES -> cycles).
//  hyperfine  hyperfine --export-json: one benchmark per command (names
//             mapped by names.hpp to_valid_name), one sample per run:
//             `times` -> wall-time (ns), `memory_usage_byte` -> max-rss;
//             `user`/`system` only when per-run arrays (hyperfine writes
//             means); a non-zero exit code fails the benchmark.
//  catch2     Catch2's XML reporter (-r xml, v2 and v3): BENCHMARK results as
//             mean and standard deviation -> real_time, summary-only (relative
//             standard error of the mean, samples), judged by Welch's rule.
//  nanobench  nanobench's JSON template: one sample per epoch of
//             `measurements` (elapsed per op -> real_time, PMU counters).
//  samples    perfgate's own generic format: benchmarks -> counters -> unit,
//             better, gate, samples (docs/inputs.md, "The samples format").
//  perf       perf stat -x, / --json output (capture/perf_csv.hpp): one
//             benchmark, named by the caller.
//
// Errors: perfgate::error "ingest.bad_input" with "<source>: <where>: <what>"
// (a JSON path or line), for a harness output that does not parse, has no
// samples, or holds only aggregates; "ingest.bad_csv" for perf stat as
// before. A format never guesses silently: detect_input_format() looks at the
// content, and --input-format forces one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/run_times.hpp"
#include "capture/samples.hpp"

namespace perfgate::capture {

enum class input_format { perf, gbench, hyperfine, catch2, nanobench, samples };

// "perf", "gbench", "hyperfine", "catch2", "nanobench", "samples".
std::string_view to_string(input_format f);
std::optional<input_format> parse_input_format(std::string_view s);
// The names, comma-separated, for usage messages.
std::string_view input_format_names();

// The format of a text by its content: a JSON object with "benchmarks" and
// "context" is gbench, with "results" of objects with "command" hyperfine,
// with "perfgate_samples" samples, with "results" of objects with
// "epochs"/"measurements" nanobench; XML with <Catch or <Catch2TestRun> is
// catch2; anything else is perf (whose parser names what is wrong).
input_format detect_input_format(std::string_view text);

// Limits on a harness output, checked while reading: a google/benchmark suite
// holds 50-500 benchmarks; 10,000 leaves room for generated argument ranges.
inline constexpr std::size_t max_benchmarks_per_input = 10000;
// Catch2's XML nests one element per SECTION level below <TestCase> (a
// BENCHMARK sits 4 + sections deep); 256 is far beyond any real test and
// bounds the work per benchmark (its element path) on a hostile document.
inline constexpr std::size_t max_xml_depth = 256;

struct parsed_input {
    input_format format = input_format::perf;
    sample_set set;
    // When the file says it was measured (capture/run_times.hpp): gbench's
    // context.date, perf stat -o's "# started on" lines; nullopt otherwise.
    std::optional<run_times> times;
};

// Parses text in `forced` or the detected format. single_name names the
// benchmark of single-benchmark formats (perf); it is ignored by harness
// formats, whose outputs name their benchmarks.
parsed_input parse_input(std::string_view text, std::string_view source, std::optional<input_format> forced = {},
                         std::string_view single_name = "default");
// The same from a file: "ingest.unreadable" when it cannot be read.
parsed_input read_input(const std::filesystem::path& path, std::optional<input_format> forced = {},
                        std::string_view single_name = "default");

// The formats, one parser each (capture/harness_*.cpp).
// times, when given, receives the run time the output carries (context.date).
sample_set parse_gbench_json(std::string_view text, std::string_view source, std::optional<run_times>* times = nullptr);
sample_set parse_hyperfine_json(std::string_view text, std::string_view source);
// Elements nested deeper than max_xml_depth are "ingest.bad_input"; the
// parse is linear in the document's size.
sample_set parse_catch2_xml(std::string_view text, std::string_view source);
sample_set parse_nanobench_json(std::string_view text, std::string_view source);
sample_set parse_samples_json(std::string_view text, std::string_view source);

// google/benchmark's name as perfgate keeps it: stored names have no spaces,
// and BENCHMARK_TEMPLATE writes "BM_Fill<int, 8>": a space after a comma is
// dropped ("BM_Fill<int,8>"), then to_valid_name (capture/names.hpp) maps
// what is left that a name may not hold to '_'.
std::string gbench_name(std::string_view name);

// A benchmark's samples as a stored run's counters (the measured ones; the
// derived ipc and miss rates are recomputed from them when the run is read,
// samples_from_run). The inverse of samples_from_run for everything a run
// stores.
std::vector<model::counter_samples> run_counters_of(const benchmark_samples& b);

} // namespace perfgate::capture
