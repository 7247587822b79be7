// Environment checks: how quiet and how measurable is this machine?
//
// `perfgate check-env` and `perfgate run` look at the knobs that make
// benchmark numbers noisy or unavailable (frequency governor, turbo, SMT,
// ASLR, perf permissions and supported events, isolated CPUs, affinity, load,
// virtualization), the way pyperf's `system show` and google/benchmark's
// "CPU scaling is enabled" / ASLR warnings do. Each check has three states:
// ok, warn (with a one-line hint that is a concrete command), or unknown (the
// information is not there: a missing sysfs file is never an error).
//
// All paths are read below env_options::sys_root and proc_root so that tests
// can point the checks at a fake tree; PERFGATE_SYSFS_ROOT and
// PERFGATE_PROCFS_ROOT do the same for the CLI (default_env_options()).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace perfgate::runner {

enum class check_state { ok, warn, unknown };

// "ok" | "warn" | "unknown": the spelling used in JSON and text output.
std::string_view to_string(check_state state) noexcept;

struct check {
    std::string id;    // stable dotted id: "cpu.governor", "perf.events", ...
    std::string title; // human label: "CPU frequency governor"
    check_state state = check_state::unknown;
    std::string value; // what was found: "performance on cpus 0-3"
    std::string hint;  // one line; a concrete command. Non-empty for warn and unknown.
};

struct env_options {
    std::filesystem::path sys_root = "/sys";
    std::filesystem::path proc_root = "/proc";
    // CPUs the benchmark will be pinned to (--cpus); nullopt: not pinned,
    // per-CPU checks look at every online CPU.
    std::optional<std::vector<int>> cpus;
    // Run perf to check that it works and which events it can count.
    bool probe_perf = true;
    // The runner disables ASLR per benchmark process (personality(2)
    // ADDR_NO_RANDOMIZE); a system-wide randomize_va_space=2 is then harmless.
    bool will_disable_aslr = true;
    std::string perf_binary = "perf";
    // Whether perf_event_paranoid applies to us; nullopt: detect (euid 0 is
    // not restricted). Tests set it to make the check deterministic.
    std::optional<bool> privileged;
    // The CPUs this process may run on; empty function: sched_getaffinity(2).
    // Returning nullopt means "cannot tell". A test seam.
    std::function<std::optional<std::vector<int>>()> allowed_cpus;
};

// env_options with sys_root / proc_root taken from PERFGATE_SYSFS_ROOT /
// PERFGATE_PROCFS_ROOT when those are set and non-empty.
env_options default_env_options();

// Runs every check, in a fixed order. Never throws for missing or unreadable
// files (those checks are unknown); only a perfgate::error from a broken
// option (none today) could escape.
std::vector<check> check_environment(const env_options& options);

// True if any check is warn (what --strict turns into exit code 4).
bool any_warning(const std::vector<check>& checks) noexcept;

// {"schema": "perfgate.environment/v1", "summary": {"ok": n, "warn": n, "unknown": n},
//  "checks": [{"id", "title", "state", "value", "hint"}]}
// This object is what each uploaded run stores as its `environment`.
nlohmann::json to_json(const std::vector<check>& checks);

// One line per check ("  ok       cpu.governor ..."), the hint indented under
// warn/unknown lines, and a summary line. ANSI colours when colour is true.
std::string render_text(const std::vector<check>& checks, bool colour);

// Parses a CPU list as the kernel writes it ("0-3,6,8-9") into sorted,
// unique CPU numbers. Error "usage.bad_cpus" quoting the offending text for
// an empty list, a non-number, a reversed range or a CPU above max_cpu_number.
std::vector<int> parse_cpu_list(std::string_view text);

// The kernel's NR_CPUS upper bound (CONFIG_NR_CPUS max is 8192).
inline constexpr int max_cpu_number = 8191;

// Formats sorted CPU numbers back into the compact form: {0,1,2,3,6} -> "0-3,6".
std::string format_cpu_list(const std::vector<int>& cpus);

struct event_probe {
    std::vector<std::string> supported;   // counted (or <not counted>: exists, did not run)
    std::vector<std::string> unsupported; // <not supported>, or failed to open
    std::vector<std::string> invalid;     // rejected by perf's event parser
};

// Asks perf which of the candidate events it can count here: one
// `perf stat -x, --log-fd 1 -e a,b,c -- true` for all candidates (spawned
// through runner/process.hpp, no shell; the CSV read from a pipe), parsing
// `<not supported>`. If perf
// refuses the batch (a name its parser rejects, or an event it cannot open),
// each candidate is probed alone so that one bad name does not hide the good
// ones. Results keep the candidates' order. Errors: "env.perf_unavailable"
// when perf_binary cannot be executed; "env.perf_timeout" if perf hangs.
event_probe probe_events(const std::vector<std::string>& candidates, const std::string& perf_binary = "perf");

// The supported subset of candidates (probe_events().supported): what the
// runner uses to choose its default events.
std::vector<std::string> probe_supported_events(const std::vector<std::string>& candidates,
                                                const std::string& perf_binary = "perf");

// The events check-env probes: software events that work everywhere, then the
// hardware events that need a PMU (absent on most VMs and hosted CI runners).
inline const std::vector<std::string> default_probe_events = {"task-clock",     "page-faults", "context-switches",
                                                              "cpu-migrations", "cycles",      "instructions",
                                                              "branch-misses",  "cache-misses"};

// Whether this process can turn off address-space randomisation for a child
// (personality(ADDR_NO_RANDOMIZE)); some container seccomp profiles refuse it.
// Tried in a forked child so perfgate's own personality is left untouched.
bool can_disable_aslr() noexcept;

} // namespace perfgate::runner
