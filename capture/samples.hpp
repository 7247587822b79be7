// In-memory samples of one side (baseline or candidate) of a comparison:
// benchmarks x counters x repetitions, built from a perf capture or from
// stored runs.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/counters.hpp"
#include "capture/perf_csv.hpp"
#include "model/run.hpp"

// What the gate derives from a series (gate/compare.hpp), cached with it: an
// opaque pointer here, so capture/ does not depend on gate/.
namespace perfgate::gate {
struct series_derived;
}

namespace perfgate::capture {

struct counter_series {
    std::string name; // perf's name, or a derived one ("ipc")
    std::string unit;
    std::vector<double> values;     // one per repetition that has a value
    std::size_t absent = 0;         // repetitions with <not supported>/<not counted>
    double running_pct_min = 100.0; // lowest pcnt_running seen
    // Summary-only input (perf -r N): values holds the mean(s) and this the
    // relative standard error of the mean in percent, per value.
    std::vector<double> variance_pct;
    // What compare derives from values alone, for a series prepared once
    // for many compares (derive_series, gate/compare.hpp: the service's run
    // cache); null: compare computes it. Must describe these values.
    std::shared_ptr<const gate::series_derived> derived;
    // Computed from other counters of the benchmark (ipc, miss rates): not
    // stored with a run, recomputed when it is read (samples_from_run).
    bool computed = false;
    // What the input declares about the counter (a harness's rates are
    // better higher; the generic samples format says so per counter); a
    // policy still overrides it. nullopt: the counter catalogue decides.
    std::optional<better> direction;
    std::optional<bool> gated;
};

struct benchmark_samples {
    std::string name = "default";
    std::vector<counter_series> counters;
    bool summary_only = false;
    // perf -r N does not print N: the repetitions behind each aggregate, when known.
    std::optional<std::size_t> summary_repeats;
    // Counted by a simulator (callgrind): a count does not vary between
    // executions of the same build, so one sample per side is the whole
    // story and needs no warning. False for captures and other backends.
    bool deterministic_counts = false;
    // The harness reported that the benchmark failed (google/benchmark's
    // error_occurred, SkipWithError): its message. Its failed repetitions
    // give no samples.
    std::string error;

    [[nodiscard]] const counter_series* find(std::string_view counter) const;
};

struct sample_set {
    std::vector<benchmark_samples> benchmarks;
    std::vector<std::string> warnings; // carried from parsing

    [[nodiscard]] const benchmark_samples* find(std::string_view benchmark) const;
};

// One benchmark from a parsed capture, with derived counters added
// (ipc, cache-miss-rate, branch-miss-rate; see counters.hpp).
benchmark_samples from_capture(const perf_capture& capture, std::string benchmark = "default");

} // namespace perfgate::capture

namespace perfgate::capture {

// A stored or measured run as one benchmark's samples (in repetition
// order), with derived counters recomputed exactly as for a file.
benchmark_samples samples_from_run(const model::run_record& run);

} // namespace perfgate::capture
