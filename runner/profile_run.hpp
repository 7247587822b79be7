// perfgate run --profile (issue 12): after a benchmark's measured rounds,
// extra executions of each side under `perf record -g`, folded (perf script,
// profile/perf_script.hpp) into the attribution of the report
// (gate::perf_attribution): the functions whose share of the samples changed
// beyond sampling noise (profile/perf_diff.hpp), and a differential flame
// graph (profile/flamegraph.hpp) written to
// ARTIFACTS/<benchmark>/flame.svg with each side's folded stacks next to it
// (baseline.folded, candidate.folded).
//
// The profiled executions are never measured: the verdict's samples stay
// those of the measured rounds. Sides alternate (baseline 1, candidate 1,
// baseline 2, ...) so that a drift of the machine reaches both alike.
//
// Profiling never changes the verdict: every failure (perf refused by
// kernel.perf_event_paranoid, perf missing, the benchmark failing under perf,
// a perf script output above the size limit, unreadable perf script output,
// no samples, artifacts not writable) comes back as a gate::attribution_error
// (source "perf"), never as an exception; so does a stripped binary, whose
// functions perf cannot name (the attribution is still filled).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "gate/report.hpp"
#include "runner/measure.hpp"

namespace perfgate::runner {

// Executions per side when --profile-executions is not given: enough samples
// for the intervals at ~100 ms per execution (4000 Hz: ~1200 per side).
inline constexpr int default_profile_executions = 3;
// Largest perf script output read per execution (--profile-max-mb): about
// a million samples of 20-frame stacks.
inline constexpr std::uint64_t default_profile_max_bytes = 256ull * 1024 * 1024;
// Where the flame graphs go without --artifacts DIR.
inline constexpr const char* default_artifacts_dir = ".perfgate/artifacts";
// Samples whose leaf has no symbol in a known object, above which the
// profile is reported as coming from a stripped binary.
inline constexpr double stripped_share_limit = 0.10;

struct profile_options {
    int executions = default_profile_executions; // per side
    std::string perf = "perf";
    std::optional<std::string> event; // nullopt: profile_event(perf)
    std::uint64_t max_script_bytes = default_profile_max_bytes;
    std::filesystem::path artifacts = default_artifacts_dir;
    std::size_t top = 10; // rows of attribution.perf.top
};

// The sampling event: "cycles" when `perf stat -e cycles` counts it on this
// machine (a PMU), else "cpu-clock" (a kernel timer: works on every machine,
// VMs included). A perf that cannot run at all also gives "cpu-clock"; the
// recording then reports the real error.
std::string profile_event(const std::string& perf);

// Profiles one benchmark: `measured` gives the execution environment of the
// measured rounds (CPUs, ASLR, timeout); the report's attribution, with
// `perf` set when the profiles could be compared and `errors` saying what
// went wrong otherwise. Writes the artifacts (profile_options::artifacts).
gate::attribution profile_benchmark(const benchmark_spec& spec, const measure_options& measured,
                                    const profile_options& options);

// Warning lines for the report (one per attribution error):
// "profiling 'NAME' (perf): MESSAGE".
std::vector<std::string> attribution_warnings(const std::string& benchmark, const gate::attribution& a);

// perfgate run --profile, after the comparison: profiles every benchmark of
// the report (matched by name to its spec), sets its attribution_info's perf
// section and errors (keeping a callgrind section already there), and
// returns the warnings (attribution_warnings). The verdict is not touched.
// A progress line per benchmark goes to `progress` unless quiet.
std::vector<std::string> attach_profiles(gate::report& r, const std::vector<benchmark_spec>& benchmarks,
                                         const measure_options& measured, const profile_options& options,
                                         std::ostream& progress, bool quiet);

} // namespace perfgate::runner
