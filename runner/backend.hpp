// Internal to runner/: the measurement backends behind measure() (runner/
// measure.hpp). measure.cpp holds the scheduler (rounds, warmups, probing
// the events, sequential looks); each backend runs one execution of a
// command and returns its counters:
//   backend_perf.cpp       perf stat -x, through perfgate-exec
//   backend_native.cpp     perfgate's own perf_event_open counters
//   backend_callgrind.cpp  valgrind --tool=callgrind
//   backend_rusage.cpp     wait4's rusage and the wall clock only
//   backend_memcheck.cpp   valgrind memcheck (errors, leaks) and DHAT (heap)
// This header also holds what more than one of them needs.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/measure.hpp"
#include "runner/process.hpp"

namespace perfgate::runner::detail {

// One counter of one execution.
struct counter_value {
    std::string name, unit;
    std::optional<double> value;
    double pcnt_running = 100.0;
};

struct execution {
    std::vector<counter_value> counters;
    process_result proc;
};

// Where an execution sits, for messages: "benchmark 'x', candidate side, round 3/10".
struct where {
    std::string_view benchmark;
    side which;
    int round, rounds;
    bool warmup;

    [[nodiscard]] std::string text() const;
};

// Software events are counted by the kernel, not the PMU: they never
// multiplex and exist on every machine (perf list, "Software event").
bool is_software_event(std::string_view event); // "task-clock:u" counts as task-clock
std::string join(const std::vector<std::string>& items, std::string_view sep);
// "\n  last lines of its stderr: ..." for error messages.
std::string stderr_excerpt(const std::vector<std::string>& tail);
// name found in PATH (or a path) and executable.
bool executable(const std::string& name);
std::string path_env();
// wall-time, user-time, sys-time and max-rss from ex.proc.
void add_rusage_counters(execution& ex);

// What every backend shares: the options, a scratch directory for its
// output files, and how an execution is started and its failure reported.
class backend_base {
public:
    backend_base(const measure_options& opt, const std::filesystem::path& scratch) : opt_(opt), scratch_(scratch) {}
    backend_base(const backend_base&) = delete;
    backend_base& operator=(const backend_base&) = delete;
    virtual ~backend_base() = default;

    // One execution of cmd (spec's cwd and env), counting `events` (perf
    // and native; the others ignore them).
    virtual execution execute(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>& events,
                              const where& at) = 0;
    // A new benchmark starts.
    virtual void begin_benchmark() {}
    // callgrind with measure_options::keep_profiles: the side's kept files.
    [[nodiscard]] virtual std::vector<std::filesystem::path> profiles(side) const { return {}; }

protected:
    [[nodiscard]] spawn_options base_spawn(const benchmark_spec& spec) const;
    // run_process, with a failure to start (bad cwd, exec error) named by
    // benchmark, side and round.
    [[nodiscard]] process_result start(const spawn_options& so, const where& at) const;
    [[noreturn]] void fail(const where& at, const command& cmd, const process_result& proc,
                           const exit_status& st) const;
    // A fresh tag for this execution's output files in the scratch directory.
    std::string next_tag() { return std::to_string(++executions_); }

    const measure_options& opt_;
    std::filesystem::path scratch_;

private:
    std::size_t executions_ = 0;
};

// A valgrind backend (callgrind, memcheck) with measure_options::
// keep_profiles: each side's last measured execution's output files are kept
// in keep_profiles/<n>-<side>/ for the attribution (the counts are
// deterministic, so any one execution would do). Failing to keep them (a
// full disk) costs the attribution, never the measurement: a warning, and no
// profiles for that side.
class profile_keeping_backend : public backend_base {
public:
    profile_keeping_backend(const measure_options& opt, const std::filesystem::path& scratch,
                            std::vector<std::string>& warnings)
        : backend_base(opt, scratch), warnings_(warnings)
    {}

    void begin_benchmark() override;
    [[nodiscard]] std::vector<std::filesystem::path> profiles(side which) const override;

protected:
    // Moves out_dir's files (<tool>.<pid>[.ext]) to the side's directory,
    // replacing the previous execution's, ordered by pid so that the
    // benchmark's own process (started first) comes first. `tool` names
    // valgrind's tool in the warning.
    void keep_profiles(const std::filesystem::path& out_dir, side which, std::string_view tool);

    std::vector<std::string>& warnings_;

private:
    std::size_t benchmarks_run_ = 0;
    std::array<std::vector<std::filesystem::path>, 2> profiles_; // per side
};

// Each checks what its backend needs (perf and perfgate-exec, valgrind, the
// event names) and throws the errors measure.hpp lists.
std::unique_ptr<backend_base> make_perf_backend(const measure_options& opt, const std::filesystem::path& scratch);
// events: the -e names to resolve now (an unknown one is a usage error
// before anything runs).
std::unique_ptr<backend_base> make_native_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                  const std::vector<std::string>& events);
// warnings: where a failure to keep profiles is said (the run's warnings).
std::unique_ptr<backend_base> make_callgrind_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                     std::vector<std::string>& warnings);
// --backend memcheck (backend_memcheck.cpp): valgrind memcheck and DHAT.
std::unique_ptr<backend_base> make_memcheck_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                    std::vector<std::string>& warnings);
std::unique_ptr<backend_base> make_rusage_backend(const measure_options& opt, const std::filesystem::path& scratch);

// --harness gbench (runner/harness_gbench.cpp): one suite of google/benchmark
// binaries measured in rounds; one measurement per benchmark they ran.
// share: with opt.sequential and a budget, the time this suite may spend.
std::vector<benchmark_measurement> measure_gbench(const benchmark_spec& spec, const measure_options& opt,
                                                  std::ostream& progress,
                                                  std::optional<std::chrono::duration<double>> share);

} // namespace perfgate::runner::detail
