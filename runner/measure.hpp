// The measurement engine of `perfgate run`: executes the baseline and the
// candidate command of each benchmark in interleaved rounds under a backend
// (perf stat, perfgate's own perf_event_open counters, callgrind, or plain
// rusage) and collects one sample per execution and counter.
//
// Per execution the runner also records its own view, for every backend
// except callgrind: `wall-time` (ns, CLOCK_MONOTONIC around vfork..wait4),
// `user-time` and `sys-time` (ns) and `max-rss` (KiB) from wait4's rusage.
// Under perf, wall-time includes perf's own start-up and teardown (identically
// on both sides), while user/sys/max-rss are the workload's own, reported by
// perfgate-exec from its wait4 on the workload.
//
// The native backend counts the same events as perf stat, under the same
// names and units (perf_event.hpp), on the benchmark process itself: no perf
// process per execution, so its wall-time is the benchmark's plus vfork/exec.
// The counters are opened on perfgate's thread right before each execution
// and inherited by the benchmark, which is started with vfork.
// Unsupported and refused events are handled as under perf.
//
// Errors (perfgate::error; the CLI maps them to exit 4):
//  "measure.failed"            the benchmark exited non-zero, was killed by a
//                              signal, or could not be executed; the message
//                              names benchmark, side, round and the last lines
//                              of its stderr;
//  "measure.timeout"           an execution exceeded measure_options::timeout;
//  "measure.perf_unavailable"  perf missing, refused (perf_event_paranoid) or
//                              failed (perf or, native, perf_event_open); the
//                              message spells out the fix;
//  "usage.bad_event"           an event perf (or, native, perf_event.hpp's
//                              resolve_event) does not know;
//  "measure.valgrind_unavailable", "measure.helper_missing" likewise.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/run.hpp"

namespace perfgate::runner {

enum class backend { perf, native, callgrind, rusage, memcheck };
enum class run_order { alternate, random, blocked };
enum class side { baseline, candidate };
enum class progress_style { none, plain, tty };

std::string_view to_string(backend b);
std::string_view to_string(run_order o);
std::string_view to_string(side s);
std::optional<backend> parse_backend(std::string_view s);
std::optional<run_order> parse_run_order(std::string_view s);

// A command to execute: argv as given to execve (after PATH lookup), and the
// text the user wrote, for messages.
struct command {
    std::vector<std::string> argv;
    std::string text;
};

struct benchmark_spec {
    std::string name = "default";
    command baseline, candidate;
    std::optional<std::filesystem::path> cwd;
    std::vector<std::pair<std::string, std::string>> env; // both sides
    // One side's variables (perfgate run --baseline-env/--candidate-env, the
    // config's "baseline_env"/"candidate_env"): added after `env`, so that
    // a side's value of a variable wins.
    std::vector<std::pair<std::string, std::string>> baseline_env, candidate_env;
    // One side's working directory instead of `cwd` (perfgate bisect: each
    // commit's build lives in its own git worktree).
    std::optional<std::filesystem::path> baseline_cwd, candidate_cwd;
    std::optional<int> repetitions; // overrides measure_options::repetitions
    std::optional<int> warmup;      // overrides measure_options::warmup
    // --harness gbench: baseline and candidate are google/benchmark binaries
    // and each of their benchmarks is a benchmark of the gate
    // (runner/harness_gbench.cpp); empty: the commands are the benchmark.
    std::string harness;
    std::optional<std::string> filter; // --benchmark_filter's regex
};

// The spec one side runs with: env followed by that side's variables, and
// that side's working directory when it has its own.
benchmark_spec for_side(const benchmark_spec& spec, side which);

// Default event set (issue text): the supported ones of these, plus duration_time.
inline constexpr std::string_view default_perf_events[] = {"cycles",       "instructions", "branch-misses",
                                                           "cache-misses", "task-clock",   "page-faults",
                                                           "duration_time"};

struct benchmark_measurement;

// Sequential sampling (perfgate run --budget / --max-repetitions): measure
// min_repetitions rounds, then blocks of `block` more up to max_repetitions,
// and after each look ask whether the benchmark is decided. The budget is
// for the whole run: each benchmark gets an even share of what is left when
// it starts, and a look is the last when the next block would not fit in
// the share at the rounds' pace so far (or max_repetitions is reached).
// Whether a look is the last depends on time, never on the comparison, as
// stats/SEQUENTIAL.md requires of a plan that is cut short. A --harness
// suite looks at all its benchmarks together and re-runs only the
// undecided ones (runner/harness_gbench.cpp); its share of the budget is
// timed at the pace of its last block.
struct sampling {
    int min_repetitions = 5;
    int block = 5;
    int max_repetitions = 60;
    std::optional<std::chrono::duration<double>> budget;
    // Called with the samples so far (all rounds of the look done) of the
    // benchmarks of `spec` (a benchmark_spec's name) still undecided: one
    // for a command, those of a --harness suite not decided at an earlier
    // look. `last`: no more rounds will be measured. Returns, per
    // benchmark, true when it is decided (it stops).
    std::function<std::vector<bool>(std::string_view spec, const std::vector<benchmark_measurement>& so_far, bool last)>
        decided;
};

struct measure_options {
    int repetitions = 10;            // measured executions per side
    int warmup = 1;                  // discarded executions per side, run first
    std::vector<std::string> events; // perf / native -e list; empty: the defaults above
    std::vector<int> cpus;           // pin with sched_setaffinity; empty: no pinning
    bool keep_aslr = false;          // else personality(ADDR_NO_RANDOMIZE)
    // Credential-like variables the measured commands inherit all the same
    // (perfgate run --pass-env NAME); the others are dropped
    // (runner/process.hpp is_secret_name).
    std::vector<std::string> pass_env;
    run_order order = run_order::alternate;
    std::uint64_t seed = 0;                           // for run_order::random
    std::optional<std::chrono::milliseconds> timeout; // per execution
    backend which = backend::perf;
    bool split_events = false; // measure multiplexed events in groups
    bool cache_sim = false;    // callgrind: also simulated cache misses and estimated-cycles
    // memcheck: valgrind suppression files (--suppressions FILE, repeatable).
    std::vector<std::filesystem::path> suppressions;
    progress_style progress = progress_style::none;
    // Sequential sampling instead of `repetitions` rounds (repetitions and a
    // benchmark's own repetitions are then ignored).
    std::optional<sampling> sequential;
    std::filesystem::path exec_helper; // perfgate-exec; empty: next to this executable, then PATH
    std::string perf = "perf";         // perf executable
    std::string valgrind = "valgrind"; // valgrind executable
    // callgrind: keep the output files of each side's last measured
    // execution (one per process, children included) under this directory,
    // for the attribution (runner/attribution.hpp); empty: delete them.
    // The caller owns the directory and removes it.
    std::filesystem::path keep_profiles;
    // --artifacts DIR: raw profiles, attribution.json and flame graphs go
    // to DIR/<benchmark>/ (artifact_dir in runner/attribution.hpp).
    std::optional<std::filesystem::path> artifacts;
    // perfgate run --baseline-source server found every benchmark's
    // baseline stored: only the candidate side's slots of the schedule are
    // executed, and the baseline side comes back without counters.
    bool candidate_only = false;
};

// One execution in the schedule of a benchmark.
struct slot {
    side which = side::baseline;
    int round = 0; // 1-based repetition index on that side (warmups count separately)
    bool warmup = false;

    friend bool operator==(const slot&, const slot&) = default;
};

// The execution order: warmups first (baseline, candidate alternating), then
//  alternate: ABBA rounds — A B, B A, A B, ... — so that a linear drift adds
//             the same amount to both sides over every two rounds;
//  random:    each round's order is a coin flip from a seeded mt19937_64
//             (a randomized complete block design), reproducible per seed;
//  blocked:   all baseline executions, then all candidate executions (what a
//             naive script does; for comparison only, it confounds drift).
std::vector<slot> make_schedule(int repetitions, int warmup, run_order order, std::uint64_t seed);

struct side_samples {
    // benchmark, role, backend, counters filled; project/git/testbed/
    // environment are the caller's to set before ingesting.
    model::run_record run;
    std::vector<std::string> warnings;
    // callgrind with measure_options::keep_profiles: the last measured
    // execution's output files, the first process's first (ordered by pid).
    std::vector<std::filesystem::path> profiles;
    // --harness: the harness reported the benchmark failed on this side
    // (google/benchmark's SkipWithError): its message, and run.counters
    // holds no samples. A benchmark the side's binary does not have has
    // neither counters nor an error.
    std::string error;
};

struct benchmark_measurement {
    std::string name;
    side_samples baseline, candidate;
};

// Measures every benchmark, one after the other. Progress goes to `progress`
// in the style of opt.progress.
std::vector<benchmark_measurement> measure(const std::vector<benchmark_spec>& benchmarks, const measure_options& opt,
                                           std::ostream& progress);

// A run's samples as `perf stat -x, -o FILE --append` text: one
// "# started on" block per repetition, one line per counter (wall-time etc.
// included in perf's field layout), for the server's perf_csv field.
std::string to_perf_csv(const model::run_record& run);
// A measured run as the server's upload takes it: its identity and its
// samples as perf stat CSV (to_perf_csv), which the server parses back into
// the same samples.
model::ingest_request ingest_request_of(const model::run_record& run);

// Splits events into groups for --split-events. Software events (task-clock,
// page-faults, duration_time, ...) never multiplex and stay in group 0; the
// others are dealt round-robin over ceil(100 / min_running_pct) groups, so
// that each group fits what the PMU could count at once.
std::vector<std::vector<std::string>> split_event_groups(const std::vector<std::string>& events,
                                                         double min_running_pct);

// KCachegrind's "Cycle Estimation" (CEst) with the events callgrind
// --cache-sim=yes writes: Ir + 10 L1m + 100 LLm, where L1m = I1mr + D1mr +
// D1mw and LLm = ILmr + DLmr + DLmw (KDE/kcachegrind
// libcore/globalconfig.cpp, GlobalConfig::knownFormula; its other terms,
// 10 Bm and 20 Ge, need --branch-sim and a bus simulation, which perfgate
// does not turn on). `totals` maps event names to values; missing events
// count 0.
inline constexpr double l1_miss_cycles = 10;
inline constexpr double ll_miss_cycles = 100;
double estimated_cycles(const std::map<std::string, double, std::less<>>& totals);

// Parses callgrind's output file: the `events:` line and the `summary:`
// (or `totals:`) line. Returns event name -> total. Error "measure.failed"
// naming the file when neither is there.
std::vector<std::pair<std::string, double>> parse_callgrind_totals(std::string_view text, std::string_view source);
// The same, read from a file line by line: memory O(longest line), not
// O(file) (a missing or unreadable file is not a callgrind output file).
std::vector<std::pair<std::string, double>> read_callgrind_totals(const std::filesystem::path& path);

} // namespace perfgate::runner
