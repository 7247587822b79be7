// Parser for `perf stat` output: CSV mode (`-x SEP`) and `--json`.
//
// Turns one capture into runs x counters. What it understands (docs/perf-input.md):
//  - `-o FILE --append` multi-run files: each `# started on` header begins a run;
//  - plain captures of several runs appended: a new run begins when an event
//    repeats within the current run (the same event on the same CPU, with -A);
//  - `-r N` aggregates: one mean per event plus variance% (relative standard
//    error of the mean) right after the event name -> summary_only = true;
//  - any single-character separator given to -x (detected per file from the
//    first line that reads as a counter line; `,` is tried first); with a
//    separator other than `,` a locale's decimal comma ("0,50") is read too;
//  - `:u` / `:k` modifiers and `cpu_core/cycles/` style names kept verbatim,
//    also PMU terms that contain the separator (`cpu/event=0x3c,umask=0x00/`);
//  - `<not supported>` / `<not counted>` -> absent value (never 0);
//  - pcnt_running kept per value;
//  - per-CPU (`-A`: CPU0,...) and per-core/socket/die (`S0-D0-C0,1,...`) lines
//    summed per event within a run, pcnt_running = the lowest of the parts,
//    variance% of a sum from the parts' standard errors (independence assumed);
//  - interval mode (`-I`): timestamped lines summed per event into one run,
//    or the `summary` lines when present (perf 6.1 prints them with no
//    timestamp, later versions with `summary` in its place); an event with no
//    summary line keeps its interval sum, with a warning. A timestamp going
//    back starts the next run;
//  - `--json`: one object per line with "counter-value", "unit", "event" and
//    optional "variance", "event-runtime", "pcnt-running", "interval", "cpu",
//    "core", "socket", "die", "node", "thread", "cgroup"; objects with only
//    "metric-value"/"metric-unit" are continuation lines;
//  - metric-only continuation lines (`,,,,,0.04,stalled cycles per insn`)
//    skipped silently; any other non-perf line (the benchmark's own stderr,
//    `sh: Killed`) skipped with a warning naming the line (the first 20 are
//    listed, the rest counted in one more warning);
//  - CRLF line endings, a UTF-8 BOM, a last line without newline.
// Errors (perfgate::error, id "ingest.bad_csv", message "<source>:<line>: ..."):
// empty input; no counter lines at all (quoting the first non-perf line, i.e.
// perf's own error text: event syntax error, "Workload failed"); a value
// that is not a finite number; runs whose event sets do not line up (an
// event missing from one run, naming event and run); a `# started on` block
// with no counter lines; -r aggregates mixed with single runs; JSON that does
// not parse or has an unknown shape; sums that overflow a double.
// read_perf_stat: "ingest.unreadable", message "<path>: cannot read: <why>".
// Limits: any bytes are accepted (fuzzed: tests/fuzz); work and memory are
// linear in the input; lines over 64 KiB are skipped as non-perf lines; at
// most max_counters_per_run events ("ingest.too_many_counters") and
// max_repetitions runs ("ingest.too_many_repetitions"), both found as soon
// as the line that exceeds them is read. The service checks both again for
// runs that do not come from a capture (service/service.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::capture {

// Limits on one run; every counter is compared and reported separately, so
// they bound what one stored run can cost every compare that uses it.
// perf's default event list is ~10 events and a long -e list ~100; 256
// leaves room for hybrid CPUs' per-PMU copies (cpu_core/..., cpu_atom/...).
inline constexpr std::size_t max_counters_per_run = 256;
// Repetitions (perf stat -r N, or appended runs) of one run: CI runs 5 to
// 100; 10,000 keeps a rank test and Hodges-Lehmann (O(n log n)) well under a
// second per counter.
inline constexpr std::size_t max_repetitions = 10000;

// One counter reading in one run.
struct reading {
    std::optional<double> value;        // nullopt: <not supported> / <not counted>
    double pcnt_running = 100.0;        // < 100: multiplexed, value scaled by perf
    std::optional<double> variance_pct; // -r N aggregates only
};

struct perf_event_info {
    std::string name; // as perf prints it: "task-clock", "cycles:u", "cpu_core/cycles/"
    std::string unit; // "msec", "ns", "Joules", "" for plain counts
};

struct perf_capture {
    std::vector<perf_event_info> events; // first-seen order
    // runs[r][e] is the reading of events[e] in run r. Every run has every event.
    std::vector<std::vector<reading>> runs;
    bool summary_only = false;         // -r N aggregate lines (have variance)
    std::vector<std::string> warnings; // "file:LINE: skipped non-perf line ..."

    // Index of an event by name, or nullopt.
    [[nodiscard]] std::optional<std::size_t> find(std::string_view event) const;
};

// Parse text; source names the input in messages ("baseline.csv").
perf_capture parse_perf_stat(std::string_view text, std::string_view source);

// Read and parse a file. Unreadable file -> error "ingest.unreadable".
perf_capture read_perf_stat(const std::filesystem::path& path);

} // namespace perfgate::capture
