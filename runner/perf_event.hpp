// Counters that perfgate opens itself with perf_event_open(2), for
// `perfgate run --backend native`: the events `perf stat` counts, under the
// names and in the units `perf stat -x,` prints them, without starting a perf
// process per execution.
//
// Event names (resolve_event):
//  - perf's generic ones: task-clock, cpu-clock, page-faults/faults,
//    minor-faults, major-faults, context-switches/cs, cpu-migrations/
//    migrations, alignment-faults, emulation-faults, cycles/cpu-cycles,
//    instructions, branches/branch-instructions, branch-misses,
//    cache-references, cache-misses, bus-cycles, ref-cycles,
//    stalled-cycles-frontend/-backend; each with an optional :u, :k, :h
//    modifier (or a combination) with perf's meaning;
//  - perf's tool events, measured by perfgate: duration_time (wall ns from
//    vfork until wait4 returned: process_result::wall), user_time and
//    system_time (ns, from wait4's rusage);
//  - anything else through libpfm4 (pfm_get_os_event_encoding): "perf::..."
//    names and the events of the PMUs libpfm4 detects on this CPU
//    ("INST_RETIRED:ANY_P", "amd64_fam19h_zen4::RETIRED_INSTRUCTIONS:u").
//
// Units as perf prints them: task-clock and cpu-clock in "msec", the tool
// events in "ns", everything else a plain count (""). Values are scaled for
// multiplexing as perf stat does: value * time_enabled / time_running.
//
// Not thread-safe: one engine opens counters from one thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/process.hpp"

namespace perfgate::runner {

// The fix for the kernel's refusal to count (kernel.perf_event_paranoid),
// under perf and native alike.
inline constexpr std::string_view perf_paranoid_fix =
    "Fix: sudo sysctl kernel.perf_event_paranoid=1 (persist it in /etc/sysctl.d/), or run with "
    "--backend callgrind / --backend rusage";

// What perfgate opens for one event name: the perf_event_attr fields that
// matter, and how perf stat names and scales the value.
struct native_event {
    enum class kind { counter, duration_time, user_time, system_time };

    std::string name; // as perf stat prints it: "task-clock", "cs", "cycles:u"
    std::string unit; // "msec", "ns" or "" (a count)
    kind source = kind::counter;
    double scale = 1.0; // task-clock and cpu-clock count ns, printed in msec
    bool from_libpfm = false;
    // perf_event_attr (a software dummy for the tool events, as perf opens).
    std::uint32_t type = 0;
    std::uint64_t config = 0, config1 = 0, config2 = 0;
    bool exclude_user = false, exclude_kernel = false, exclude_hv = false;
};

// Error "usage.bad_event" naming the event when neither perf's names above
// nor libpfm4 know it (or a modifier is not one of u, k, h), or when a name
// needs libpfm4 and libpfm.so.4 cannot be loaded (the message says to
// install libpfm4). libpfm4 is loaded with dlopen on the first such name
// (linked in the release build), so perfgate's start-up never pays for it.
native_event resolve_event(std::string_view name);

// One event's reading after an execution.
struct native_reading {
    std::string name, unit;
    std::optional<double> value; // nullopt: <not supported> / <not counted>
    double pcnt_running = 100.0; // < 100: multiplexed, value scaled up
};

// The counters of one execution, opened on the calling thread (pid 0) right
// before it starts the child: disabled, enabled on exec, inherited. The
// child started next gets its own copies, which count from its execve
// (perfgate's code between vfork and exec is not counted), together with its
// own children; when it exits, its counts and the time they were enabled and
// running are added to these. The child needs no handshake, so it can be
// started with vfork (process.hpp): that and no perf process is what makes
// this backend cheap.
//
// One object per execution, and no other child started by this thread while
// it is open: the kernel clears enable_on_exec on whichever copy sees the
// exec, and may swap the parent's and the child's copies while the child
// runs (its context-switch optimisation for cloned contexts), so counters
// kept open for a second execution mostly read 0 (seen on Linux 6.18).
// Owns the file descriptors (close-on-exec).
class native_counters {
public:
    // Opens every event. An event this machine cannot count (EINVAL,
    // ENOENT, EOPNOTSUPP, ENXIO, ENOSYS: e.g. no PMU) reads <not supported>,
    // as under perf stat. When the kernel refuses to count kernel mode
    // (perf_event_paranoid >= 2 without CAP_PERFMON) the event is retried
    // user-only and renamed NAME:u, as perf stat does; the entry in `events`
    // is changed to match, so later executions open it directly.
    // Errors "measure.perf_unavailable": refused even so (EACCES/EPERM: the
    // message names the event and perf_event_paranoid's value, and ends with
    // perf_paranoid_fix), or any other failure of perf_event_open (EMFILE,
    // ...).
    explicit native_counters(std::vector<native_event>& events);

    // The readings in event order. Call after wait4 reaped the child: its
    // counts (and its children's) are final then. Error
    // "measure.perf_unavailable" if a counter cannot be read.
    [[nodiscard]] std::vector<native_reading> read(const process_result& proc) const;

private:
    std::vector<native_event> events_;
    std::vector<unique_fd> fds_; // per event; empty when <not supported>
};

// Keeps the kernel's perf hooks switched on while perfgate measures, so that
// native_counters' opening and closing of its events around every execution
// costs what opening an event costs, and no more:
//  - the first event bound to a task on a machine where no perf event is
//    open switches on the scheduler's perf hooks (a static key: code patched
//    on every CPU, then an RCU grace period; 10-25 ms on the 2-core
//    development VM, Linux 6.18). The kernel keeps them on for 1 s after the
//    last such event closes, so only perfgate run's first execution pays it;
//  - each software event type (page-faults, context-switches, the dummy
//    event of the tool events, ...) has a hook of its own, switched on when
//    the type's first event opens and off, at once, when its last one
//    closes: code patched on every CPU both ways, ~35 us each on that VM
//    (more with more CPUs), at every execution.
// This opens, on a thread of its own, one event of each kind `events` needs
// (per software event type; per PMU type for the others), disabled and not
// inherited: never scheduled, they count nothing and change nothing the
// benchmark's counters see; they only hold the hooks on until perfgate
// exits. Returns at once, so that the grace period passes while the caller
// does other work (perfgate run starts it before reading git and checking
// the machine). Kinds already kept are not opened again. Failures are
// ignored: native_counters says what is wrong when it opens the same events.
// Thread-safe.
void keep_perf_hooks_on(const std::vector<native_event>& events);

// keep_perf_hooks_on for these -e names (empty: measure.hpp's default
// events), for a caller that has not resolved them yet: names that
// resolve_event refuses are skipped (the native backend reports them), and
// libpfm4's names too (the backend resolves them, loading libpfm4).
void keep_perf_hooks_on(const std::vector<std::string>& event_names) noexcept;

} // namespace perfgate::runner
