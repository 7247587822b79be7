// When a measurement file was measured, as far as the file says, and whether
// two files were measured apart (docs/cli.md#perfgate-compare). What each
// input format carries:
//   gbench     context.date: when the process started, to the second
//              (google/benchmark >= 1.5 writes ISO 8601 with the zone's
//              offset, "2026-11-26T21:34:27+00:00"; older releases local
//              time without a zone, "2016-08-02 17:44:46"). What it measured
//              afterwards: the sum of iterations x real_time over the
//              repetition rows.
//   perf       perf stat -o FILE writes "# started on Sun Nov 22 02:35:47
//              2026" (local time, no zone) before each execution's lines;
//              duration_time, when measured, is the last execution's length.
//              Captures of stderr (2>) have no such line.
//   hyperfine, catch2, nanobench, samples: no time at all (hyperfine's
//              --export-json, Catch2's XML reporter and nanobench's JSON
//              template write none).
//
// Never throws: a date that does not parse is no date.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfgate::capture {

// Both formats write whole seconds: a stamp s stands for a moment in [s, s + 1).
inline constexpr std::int64_t run_time_resolution_s = 1;

struct run_times {
    // Seconds since 1970-01-01T00:00:00 of the first and the last timed
    // execution's start: UTC when zoned, else the writer's local time.
    std::int64_t first_start = 0;
    std::int64_t last_start = 0;
    bool zoned = false;
    // Timed executions: one per "# started on" (perf); a google/benchmark
    // file is one process.
    std::size_t executions = 1;
    // Seconds measured after last_start: a lower bound of the last
    // execution's length (a process also starts, warms up and, under
    // google/benchmark, runs unreported trials to choose its iteration count).
    double measured_s = 0;
    std::string first_text; // the first start as the file wrote it
};

// "2026-11-26T21:34:27+00:00", "...Z", or "2016-08-02 17:44:46" (no zone).
std::optional<run_times> parse_iso_date(std::string_view text);
// perf's ctime(3) form "Sun Nov 22 02:35:47 2026" (local time, no zone).
std::optional<run_times> parse_ctime_date(std::string_view text);
// Every "# started on ..." line of a perf stat output file, in file order;
// nullopt when there is none that parses.
std::optional<run_times> perf_started_on(std::string_view text);

// How two files' run times relate.
enum class time_relation {
    apart,       // the later file started after the earlier one's measured range ended (+ the resolution)
    overlapping, // their ranges overlap or are too close to tell apart
    unknown,     // a file carries no time, or one is zoned and the other local
};
time_relation relate(const std::optional<run_times>& a, const std::optional<run_times>& b);

} // namespace perfgate::capture
