#include "runner/check_env.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/file.hpp"
#include "model/text.hpp"
#include "runner/process.hpp"

namespace perfgate::runner {

namespace {

namespace fs = std::filesystem;

// Above a quarter of the machine's CPUs busy on average (1-minute load), an
// unisolated benchmark CPU is likely to be shared with other work. There is
// no standard figure; pyperf and hyperfine leave load to the user. A quarter
// makes a 2-CPU runner warn at 0.5, i.e. when one CPU is half busy.
constexpr double max_idle_load_per_cpu = 0.25;

// `perf stat -- true` takes tens of milliseconds; a perf that has not
// answered in this long is stuck (e.g. on a hung NFS home for its config).
constexpr std::chrono::milliseconds probe_timeout{10000};

// perf's exit status for a bad option or event name (docs/perf-input.md).
constexpr int perf_exit_bad_event = 129;

// ---------------------------------------------------------------- files

std::string trim(std::string_view s) { return std::string(model::trim(s)); }

// Whole file, or nullopt when it is missing or unreadable (sysfs files can
// exist and still fail to read, e.g. EIO or EPERM).
std::optional<std::string> read_file(const fs::path& path) { return model::read_file_if_readable(path); }

// First line of a one-value sysfs/procfs file, trimmed.
std::optional<std::string> read_value(const fs::path& path)
{
    auto content = read_file(path);
    if (!content) return std::nullopt;
    auto nl = content->find('\n');
    return trim(std::string_view(*content).substr(0, nl));
}

std::optional<long long> to_integer(std::string_view s)
{
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::vector<std::string> split(std::string_view s, char sep)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        auto pos = s.find(sep, start);
        out.emplace_back(s.substr(start, pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return out;
}

// The kernel's own CPU lists ("0-3,6\n", or "" for none) are parsed
// leniently: a malformed file is treated as unreadable, not as a user error.
std::optional<std::vector<int>> parse_kernel_cpu_list(std::string_view text)
{
    auto t = trim(text);
    if (t.empty()) return std::vector<int>{};
    try {
        return parse_cpu_list(t);
    } catch (const perfgate::error&) {
        return std::nullopt;
    }
}

fs::path cpu_dir(const env_options& o) { return o.sys_root / "devices/system/cpu"; }

// Online CPUs: devices/system/cpu/online, else the cpuN directories.
std::optional<std::vector<int>> online_cpus(const env_options& o)
{
    if (auto text = read_file(cpu_dir(o) / "online")) {
        if (auto list = parse_kernel_cpu_list(*text); list && !list->empty()) return list;
    }
    std::error_code ec;
    std::vector<int> out;
    for (fs::directory_iterator it(cpu_dir(o), ec), end; !ec && it != end; it.increment(ec)) {
        auto name = it->path().filename().string();
        if (name.size() > 3 && name.starts_with("cpu")) {
            if (auto n = to_integer(std::string_view(name).substr(3)); n && *n >= 0 && *n <= max_cpu_number) {
                out.push_back(static_cast<int>(*n));
            }
        }
    }
    if (out.empty()) return std::nullopt;
    std::sort(out.begin(), out.end());
    return out;
}

// The CPUs per-CPU checks look at: the requested ones, else all online ones.
std::vector<int> target_cpus(const env_options& o)
{
    if (o.cpus) return *o.cpus;
    return online_cpus(o).value_or(std::vector<int>{});
}

std::vector<int> set_difference(const std::vector<int>& a, const std::vector<int>& b)
{
    std::vector<int> out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

std::string cpus_phrase(const std::vector<int>& cpus)
{
    return fmt::format("{} {}", cpus.size() == 1 ? "cpu" : "cpus", format_cpu_list(cpus));
}

check make(std::string id, std::string title)
{
    return check{std::move(id), std::move(title), check_state::unknown, {}, {}};
}

// ---------------------------------------------------------------- processes

struct command_result {
    int status = -1;    // exit code, or 128 + signal like a shell reports it
    std::string output; // stdout, then the tail of stderr
};

// Runs argv (argv[0] looked up in PATH; no shell, so event names are never
// interpreted) through the runner's process layer, with stdin from
// /dev/null. Errors: "env.perf_unavailable" if it cannot be executed,
// "env.perf_timeout" if it does not finish within probe_timeout.
command_result run_command(const std::vector<std::string>& argv)
{
    spawn_options opt;
    opt.argv = argv;
    opt.capture_stdout = true;
    process_result r;
    try {
        r = run_process(opt, probe_timeout);
    } catch (const perfgate::error& e) {
        throw error(errors::env_perf_unavailable, e.what());
    }
    if (r.status.timed_out) {
        throw error(errors::env_perf_timeout,
                    fmt::format("'{}' did not finish within {} ms", argv[0], probe_timeout.count()));
    }
    command_result out;
    out.status = r.status.exited ? r.status.code : 128 + r.status.signal;
    out.output = std::move(r.stdout_text);
    for (const auto& line : r.stderr_tail) out.output += line + "\n";
    // A wrapper script whose perf is missing (Ubuntu's /usr/bin/perf without
    // linux-tools for this kernel) exits 127; perf itself never does (it uses
    // 255 for an unrunnable workload).
    if (out.status == 127) {
        auto detail = trim(out.output);
        throw error(errors::env_perf_unavailable,
                    fmt::format("cannot execute '{}' (exit status 127{}{})", argv[0], detail.empty() ? "" : ": ",
                                detail.substr(0, detail.find('\n'))));
    }
    return out;
}

std::string first_line(std::string_view text)
{
    auto t = trim(text);
    return std::string(t.substr(0, t.find('\n')));
}

// One `perf stat` over several events. When perf refused the whole
// invocation (status != 0) nothing is classified; else counted[i] says
// whether candidate i was counted (nullopt: perf printed no line for it).
struct batch_outcome {
    int status = 0;
    std::string output;
    std::vector<std::optional<bool>> counted; // nullopt: no line for it
};

// Does a CSV line's event field (everything after "value,unit,") name this
// candidate? perf appends modifiers it adds itself ("task-clock:u" when
// unprivileged) and hybrid CPUs print "cpu_core/cycles/".
bool line_names_event(std::string_view rest, std::string_view event)
{
    if (rest.starts_with(event)) {
        auto after = rest.substr(event.size());
        return after.empty() || after[0] == ',' || after[0] == ':';
    }
    auto slash = rest.find('/');
    if (slash != std::string_view::npos && slash > 0 && rest.substr(0, slash).find(',') == std::string_view::npos) {
        auto inner = rest.substr(slash + 1);
        return inner.starts_with(event) && inner.substr(event.size()).starts_with("/");
    }
    return false;
}

batch_outcome probe_batch(const std::vector<std::string>& events, const std::string& perf_binary)
{
    std::string list;
    for (const auto& e : events) list += (list.empty() ? "" : ",") + e;
    // --log-fd 1: the counters arrive complete on stdout, apart from perf's
    // own error messages on stderr.
    auto r = run_command({perf_binary, "stat", "-x,", "--log-fd", "1", "-e", list, "--", "true"});

    batch_outcome out{r.status, std::move(r.output), std::vector<std::optional<bool>>(events.size())};
    if (out.status != 0) return out;
    std::istringstream lines(out.output);
    for (std::string line; std::getline(lines, line);) {
        auto c1 = line.find(',');
        if (c1 == std::string::npos) continue;
        auto c2 = line.find(',', c1 + 1);
        if (c2 == std::string::npos) continue;
        std::string_view value = std::string_view(line).substr(0, c1);
        std::string_view rest = std::string_view(line).substr(c2 + 1);
        if (value.empty()) continue; // metric-only continuation line
        // <not counted> means the event opened but never ran (e.g. the
        // cpu_atom half of a hybrid event): it exists here.
        const bool counted = value != "<not supported>";
        for (std::size_t i = 0; i < events.size(); ++i) {
            if (line_names_event(rest, events[i])) {
                out.counted[i] = out.counted[i].value_or(false) || counted;
            }
        }
    }
    return out;
}

} // namespace

// ---------------------------------------------------------------- public helpers

std::string_view to_string(check_state state) noexcept
{
    switch (state) {
    case check_state::ok: return "ok";
    case check_state::warn: return "warn";
    case check_state::unknown: return "unknown";
    }
    return "unknown";
}

std::vector<int> parse_cpu_list(std::string_view text)
{
    auto bad = [&](std::string_view why) {
        return error(errors::usage_bad_cpus, fmt::format("bad CPU list '{}': {}", text, why));
    };
    auto number = [&](std::string_view s) {
        auto t = trim(s);
        auto v = to_integer(t);
        if (t.empty() || !v || t[0] == '-' || t[0] == '+') throw bad(fmt::format("'{}' is not a CPU number", t));
        if (*v > max_cpu_number) throw bad(fmt::format("CPU {} is above the kernel's limit of {}", *v, max_cpu_number));
        return static_cast<int>(*v);
    };
    if (trim(text).empty()) throw bad("it is empty");
    std::set<int> cpus;
    for (const auto& item : split(trim(text), ',')) {
        if (trim(item).empty()) throw bad("empty item between commas");
        auto dash = item.find('-', item.find_first_not_of(" \t") + 1);
        if (dash == std::string::npos) {
            cpus.insert(number(item));
            continue;
        }
        int lo = number(std::string_view(item).substr(0, dash));
        int hi = number(std::string_view(item).substr(dash + 1));
        if (lo > hi) throw bad(fmt::format("range '{}' is reversed", trim(item)));
        for (int c = lo; c <= hi; ++c) cpus.insert(c);
    }
    return {cpus.begin(), cpus.end()};
}

std::string format_cpu_list(const std::vector<int>& cpus)
{
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
        i = j + 1;
    }
    return out;
}

event_probe probe_events(const std::vector<std::string>& candidates, const std::string& perf_binary)
{
    std::vector<std::string> events;
    for (const auto& c : candidates) {
        if (std::find(events.begin(), events.end(), c) == events.end()) events.push_back(c);
    }
    event_probe result;
    if (events.empty()) return result;

    auto classify = [&](const std::vector<std::string>& evs, const batch_outcome& b) {
        for (std::size_t i = 0; i < evs.size(); ++i) {
            (b.counted[i].value_or(false) ? result.supported : result.unsupported).push_back(evs[i]);
        }
    };
    auto batch = probe_batch(events, perf_binary);
    if (batch.status == 0) {
        classify(events, batch);
        return result;
    }
    // perf refuses the whole list when one name does not parse (exit 129) or
    // one event cannot be opened at all; probe one by one to find which.
    auto sort_single = [&](const std::string& e, const batch_outcome& single) {
        if (single.status == 0) {
            classify({e}, single);
        } else if (single.status == perf_exit_bad_event) {
            result.invalid.push_back(e);
        } else {
            result.unsupported.push_back(e);
        }
    };
    if (events.size() == 1) { // the batch was that one event's probe
        sort_single(events.front(), batch);
        return result;
    }
    for (const auto& e : events) sort_single(e, probe_batch({e}, perf_binary));
    return result;
}

std::vector<std::string> probe_supported_events(const std::vector<std::string>& candidates,
                                                const std::string& perf_binary)
{
    return probe_events(candidates, perf_binary).supported;
}

bool can_disable_aslr() noexcept
{
    // A child tries it, so our own personality is never changed. vfork: no
    // copy of our page tables (fork cost ~1 ms of every perfgate run); the
    // child makes system calls only, with every signal blocked so that no
    // handler of ours runs on our stack in it.
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t pid = ::vfork();
    if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) return false;
    if (pid == 0) {
        int current = ::personality(0xffffffff);
        int rc = current == -1 ? -1 : ::personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE);
        int now = ::personality(0xffffffff);
        ::_exit(rc != -1 && now != -1 && (now & ADDR_NO_RANDOMIZE) ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return false;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

env_options default_env_options()
{
    env_options o;
    if (const char* s = std::getenv("PERFGATE_SYSFS_ROOT"); s && *s) o.sys_root = s;
    if (const char* p = std::getenv("PERFGATE_PROCFS_ROOT"); p && *p) o.proc_root = p;
    return o;
}

// ---------------------------------------------------------------- the checks

namespace {

check check_governor(const env_options& o)
{
    check c = make("cpu.governor", "CPU frequency governor");
    std::map<std::string, std::vector<int>> by_governor;
    std::vector<int> missing;
    for (int cpu : target_cpus(o)) {
        auto g = read_value(cpu_dir(o) / fmt::format("cpu{}/cpufreq/scaling_governor", cpu));
        if (g && !g->empty()) by_governor[*g].push_back(cpu);
        else missing.push_back(cpu);
    }
    if (by_governor.empty()) {
        c.value = "no cpufreq/scaling_governor";
        c.hint = "no cpufreq driver (typical in VMs: the host sets the frequency); nothing to tune from here";
        return c;
    }
    std::vector<std::string> parts;
    parts.reserve(by_governor.size() + 1);
    for (const auto& [g, cpus] : by_governor) parts.push_back(fmt::format("{} on {}", g, cpus_phrase(cpus)));
    if (!missing.empty()) parts.push_back(fmt::format("unknown on {}", cpus_phrase(missing)));
    c.value = fmt::format("{}", fmt::join(parts, "; "));
    bool all_performance = by_governor.size() == 1 && by_governor.begin()->first == "performance";
    c.state = all_performance ? check_state::ok : check_state::warn;
    if (!all_performance) {
        c.hint = o.cpus ? fmt::format("sudo cpupower -c {} frequency-set -g performance", format_cpu_list(*o.cpus))
                        : "sudo cpupower frequency-set -g performance";
    }
    return c;
}

check check_turbo(const env_options& o)
{
    check c = make("cpu.turbo", "Turbo / boost");
    std::vector<std::string> parts, hints;
    bool seen = false, enabled = false;

    if (auto v = read_value(cpu_dir(o) / "intel_pstate/no_turbo")) {
        if (*v == "1" || *v == "0") {
            seen = true;
            parts.push_back(fmt::format("intel_pstate/no_turbo={} (turbo {})", *v, *v == "1" ? "off" : "on"));
            if (*v == "0") {
                enabled = true;
                hints.push_back("echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo");
            }
        }
    }
    if (auto v = read_value(cpu_dir(o) / "cpufreq/boost")) {
        if (*v == "1" || *v == "0") {
            seen = true;
            parts.push_back(fmt::format("cpufreq/boost={} (boost {})", *v, *v == "1" ? "on" : "off"));
            if (*v == "1") {
                enabled = true;
                hints.push_back("echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost");
            }
        }
    }
    // Per-policy boost (amd-pstate, newer acpi-cpufreq), seen through cpuN/cpufreq.
    std::vector<int> boost_on, boost_off;
    for (int cpu : target_cpus(o)) {
        auto v = read_value(cpu_dir(o) / fmt::format("cpu{}/cpufreq/boost", cpu));
        if (v && *v == "1") boost_on.push_back(cpu);
        else if (v && *v == "0") boost_off.push_back(cpu);
    }
    if (!boost_on.empty() || !boost_off.empty()) {
        seen = true;
        if (!boost_on.empty()) {
            enabled = true;
            parts.push_back(fmt::format("boost on for {}", cpus_phrase(boost_on)));
            hints.push_back(boost_on.size() == 1
                                ? fmt::format("echo 0 | sudo tee /sys/devices/system/cpu/cpu{}/cpufreq/boost",
                                              boost_on[0])
                                : std::string("echo 0 | sudo tee /sys/devices/system/cpu/cpu*/cpufreq/boost"));
        }
        if (!boost_off.empty()) parts.push_back(fmt::format("boost off for {}", cpus_phrase(boost_off)));
    }
    if (!seen) {
        c.value = "no intel_pstate/no_turbo or cpufreq boost file";
        c.hint = "turbo is not controllable from this OS (VM, or a driver without a boost knob)";
        return c;
    }
    c.value = fmt::format("{}", fmt::join(parts, "; "));
    c.state = enabled ? check_state::warn : check_state::ok;
    c.hint = fmt::format("{}", fmt::join(hints, "; "));
    return c;
}

check check_smt(const env_options& o)
{
    check c = make("cpu.smt", "SMT (hyper-threading)");
    auto control = read_value(cpu_dir(o) / "smt/control");
    auto active = read_value(cpu_dir(o) / "smt/active");
    const std::string hint =
        "echo off | sudo tee /sys/devices/system/cpu/smt/control (or keep the benchmark CPUs' siblings idle)";

    std::optional<bool> on;
    if (active && (*active == "0" || *active == "1")) on = *active == "1";
    else if (control && *control == "on") on = true;
    else if (control && (*control == "off" || *control == "forceoff" || *control == "notsupported")) on = false;

    std::vector<std::string> parts;
    if (control) parts.push_back(fmt::format("control={}", *control));
    if (active) parts.push_back(fmt::format("active={}", *active));
    c.value = parts.empty() ? "no smt/control or smt/active" : fmt::format("{}", fmt::join(parts, ", "));
    if (!on) {
        c.hint = "the kernel does not say whether sibling threads share the benchmark's cores";
        return c;
    }
    c.state = *on ? check_state::warn : check_state::ok;
    if (*on) c.hint = hint;
    return c;
}

// isolcpus= from the kernel command line, minus its leading flags
// ("isolcpus=domain,managed_irq,2-3" -> {2,3}). Arguments after "--" belong
// to init and are ignored.
std::optional<std::vector<int>> cmdline_isolcpus(std::string_view cmdline)
{
    std::istringstream words{std::string(cmdline)};
    for (std::string w; words >> w;) {
        if (w == "--") break;
        if (!w.starts_with("isolcpus=")) continue;
        std::vector<std::string> cpu_items;
        for (auto& item : split(std::string_view(w).substr(9), ',')) {
            if (!item.empty() && (std::isdigit(static_cast<unsigned char>(item[0])) != 0)) cpu_items.push_back(item);
        }
        return parse_kernel_cpu_list(fmt::format("{}", fmt::join(cpu_items, ",")));
    }
    return std::nullopt;
}

check check_isolated(const env_options& o)
{
    check c = make("cpu.isolated", "Isolated CPUs");
    auto isolated_text = read_file(cpu_dir(o) / "isolated");
    auto nohz_text = read_file(cpu_dir(o) / "nohz_full");
    auto cmdline = read_file(o.proc_root / "cmdline");

    std::optional<std::vector<int>> isolated;
    if (isolated_text) isolated = parse_kernel_cpu_list(*isolated_text);
    if (cmdline) {
        if (auto from_cmdline = cmdline_isolcpus(*cmdline)) {
            std::set<int> u(from_cmdline->begin(), from_cmdline->end());
            if (isolated) u.insert(isolated->begin(), isolated->end());
            isolated = std::vector<int>(u.begin(), u.end());
        } else if (!isolated) {
            isolated = std::vector<int>{}; // a readable cmdline without isolcpus= says "none"
        }
    }
    if (!isolated) {
        c.value = "no cpu/isolated file and no /proc/cmdline";
        c.hint = "cannot tell whether other tasks share the benchmark CPUs";
        return c;
    }
    std::vector<int> nohz;
    if (nohz_text) nohz = parse_kernel_cpu_list(*nohz_text).value_or(std::vector<int>{});

    std::string found = isolated->empty() ? "none isolated" : fmt::format("isolated: {}", format_cpu_list(*isolated));
    if (!nohz.empty()) found += fmt::format("; nohz_full: {}", format_cpu_list(nohz));

    const std::string boot_hint =
        "boot with isolcpus=LIST nohz_full=LIST (or a cpuset shield) and pass those CPUs to --cpus";
    if (o.cpus) {
        auto shared = set_difference(*o.cpus, *isolated);
        if (shared.empty()) {
            c.state = check_state::ok;
            c.value = fmt::format("{} isolated ({})", cpus_phrase(*o.cpus), found);
        } else {
            c.state = check_state::warn;
            c.value = fmt::format("{} not isolated ({})", cpus_phrase(shared), found);
            c.hint = isolated->empty() ? boot_hint : fmt::format("use --cpus {}", format_cpu_list(*isolated));
        }
        return c;
    }
    if (isolated->empty()) {
        c.state = check_state::warn;
        c.value = found;
        c.hint = boot_hint;
    } else {
        c.state = check_state::ok;
        c.value = found;
        c.hint = fmt::format("pass --cpus {} to run the benchmark there", format_cpu_list(*isolated));
    }
    return c;
}

std::optional<std::vector<int>> sched_affinity()
{
    // CPU_ALLOC sized for the kernel's maximum, so machines with more than
    // CPU_SETSIZE (1024) CPUs are handled.
    const int n = max_cpu_number + 1;
    struct cpu_set_free {
        void operator()(cpu_set_t* s) const noexcept { CPU_FREE(s); }
    };
    std::unique_ptr<cpu_set_t, cpu_set_free> set(CPU_ALLOC(n));
    if (!set) return std::nullopt;
    const std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set.get());
    if (::sched_getaffinity(0, size, set.get()) != 0) return std::nullopt;
    std::vector<int> out;
    for (int cpu = 0; cpu < n; ++cpu) {
        if (CPU_ISSET_S(cpu, size, set.get())) out.push_back(cpu);
    }
    return out;
}

check check_affinity(const env_options& o)
{
    check c = make("cpu.affinity", "CPU affinity");
    auto allowed = o.allowed_cpus ? o.allowed_cpus() : sched_affinity();
    if (!allowed) {
        c.value = "sched_getaffinity failed";
        c.hint = "cannot tell which CPUs perfgate may pin the benchmark to";
        return c;
    }
    std::sort(allowed->begin(), allowed->end());
    if (!o.cpus) {
        c.state = check_state::ok;
        c.value = fmt::format("not pinned; allowed: {}", format_cpu_list(*allowed));
        c.hint = "pass --cpus LIST to pin the benchmark";
        return c;
    }
    auto refused = set_difference(*o.cpus, *allowed);
    std::vector<int> offline;
    if (auto online = online_cpus(o)) offline = set_difference(*o.cpus, *online);
    if (refused.empty() && offline.empty()) {
        c.state = check_state::ok;
        c.value = fmt::format("{} allowed", cpus_phrase(*o.cpus));
        return c;
    }
    std::vector<std::string> parts;
    if (!refused.empty())
        parts.push_back(fmt::format("{} not allowed (allowed: {})", cpus_phrase(refused), format_cpu_list(*allowed)));
    if (!offline.empty()) parts.push_back(fmt::format("{} offline", cpus_phrase(offline)));
    c.state = check_state::warn;
    c.value = fmt::format("{}", fmt::join(parts, "; "));
    c.hint = fmt::format("choose --cpus within {} (a container's cpuset or taskset restricts this set)",
                         format_cpu_list(*allowed));
    return c;
}

check check_load(const env_options& o)
{
    check c = make("cpu.load", "System load");
    auto text = read_value(o.proc_root / "loadavg");
    // "0.34 0.15 0.08 2/103 6138": 1, 5, 15-minute averages, runnable/total.
    std::istringstream in(text.value_or(""));
    double l1 = 0, l5 = 0, l15 = 0;
    std::string running;
    if (!text || !(in >> l1 >> l5 >> l15 >> running)) {
        c.value = text ? fmt::format("unreadable loadavg '{}'", *text) : "no loadavg";
        c.hint = "cannot tell whether other work competes with the benchmark";
        return c;
    }
    auto online = online_cpus(o);
    const std::size_t n = online ? online->size() : std::max(1u, std::thread::hardware_concurrency());
    c.value = fmt::format("load average {:.2f} {:.2f} {:.2f} on {} CPUs; {} runnable/total", l1, l5, l15, n, running);
    const double limit = max_idle_load_per_cpu * static_cast<double>(n);
    if (l1 > limit) {
        c.state = check_state::warn;
        c.hint = fmt::format(
            "1-minute load is above {:.2f}: stop other jobs or wait for the machine to settle (see top)", limit);
    } else {
        c.state = check_state::ok;
    }
    return c;
}

check check_aslr(const env_options& o)
{
    check c = make("aslr", "Address space randomisation (ASLR)");
    auto v = read_value(o.proc_root / "sys/kernel/randomize_va_space");
    if (!v || !to_integer(*v)) {
        c.value = v ? fmt::format("unreadable randomize_va_space '{}'", *v) : "no kernel/randomize_va_space";
        c.hint = "cannot tell whether stack and heap addresses vary between runs";
        return c;
    }
    if (*v == "0") {
        c.state = check_state::ok;
        c.value = "randomize_va_space=0 (off)";
        return c;
    }
    if (o.will_disable_aslr && can_disable_aslr()) {
        c.state = check_state::ok;
        c.value = fmt::format("randomize_va_space={}; perfgate disables it per benchmark process", *v);
        return c;
    }
    c.state = check_state::warn;
    c.value = o.will_disable_aslr
                  ? fmt::format("randomize_va_space={}; personality(ADDR_NO_RANDOMIZE) is refused here (seccomp?)", *v)
                  : fmt::format("randomize_va_space={} (on)", *v);
    c.hint = "sudo sysctl kernel.randomize_va_space=0";
    return c;
}

check check_paranoid(const env_options& o)
{
    check c = make("perf.paranoid", "perf_event_paranoid");
    auto v = read_value(o.proc_root / "sys/kernel/perf_event_paranoid");
    auto level = v ? to_integer(*v) : std::nullopt;
    if (!level) {
        c.value = v ? fmt::format("unreadable perf_event_paranoid '{}'", *v) : "no kernel/perf_event_paranoid";
        c.hint = "kernel without perf events? use --backend rusage if perf stat fails";
        return c;
    }
    const bool privileged = o.privileged.value_or(::geteuid() == 0);
    // Levels from the kernel's perf-security.rst: <= 1 allows user and kernel
    // counting of one's own processes, 2 user space only, and Debian's and
    // Ubuntu's patched 3/4 refuse unprivileged perf entirely.
    if (*level <= 1 || privileged) {
        c.state = check_state::ok;
        c.value = privileged && *level > 1 ? fmt::format("{} (running as root: not restricted)", *level)
                                           : fmt::format("{}", *level);
        return c;
    }
    c.state = check_state::warn;
    c.value = *level == 2 ? "2: user-space counting only (events get a ':u' suffix)"
                          : fmt::format("{}: perf refused to unprivileged users", *level);
    c.hint = "sudo sysctl kernel.perf_event_paranoid=1";
    return c;
}

void check_perf(const env_options& o, std::vector<check>& out)
{
    check available = make("perf.available", "perf");
    check events = make("perf.events", "perf events");
    if (!o.probe_perf) {
        available.value = events.value = "not probed";
        available.hint = events.hint = "probing perf was turned off";
        out.push_back(std::move(available));
        out.push_back(std::move(events));
        return;
    }
    try {
        auto r = run_command({o.perf_binary, "--version"});
        available.value = first_line(r.output);
        if (r.status == 0) {
            available.state = check_state::ok;
        } else {
            available.state = check_state::warn;
            available.value = fmt::format("'{} --version' exited {}: {}", o.perf_binary, r.status, available.value);
            available.hint = "reinstall perf for this kernel (Debian: linux-perf; Ubuntu: linux-tools-$(uname -r))";
        }
    } catch (const perfgate::error& e) {
        available.state = check_state::warn;
        available.value = e.what();
        available.hint = "install perf (Debian: linux-perf; Ubuntu: linux-tools-$(uname -r)) or use --backend rusage";
    }
    if (available.state != check_state::ok) {
        events.value = "perf is not usable";
        events.hint = "install perf to probe events";
        out.push_back(std::move(available));
        out.push_back(std::move(events));
        return;
    }
    try {
        auto probe = probe_events(default_probe_events, o.perf_binary);
        auto has = [&](std::string_view e) {
            return std::find(probe.supported.begin(), probe.supported.end(), e) != probe.supported.end();
        };
        std::vector<std::string> missing = probe.unsupported;
        missing.insert(missing.end(), probe.invalid.begin(), probe.invalid.end());
        events.value = fmt::format("supported: {}", probe.supported.empty()
                                                        ? "none"
                                                        : fmt::format("{}", fmt::join(probe.supported, ",")));
        if (!missing.empty()) events.value += fmt::format("; not supported: {}", fmt::join(missing, ","));
        if (!has("task-clock")) {
            events.state = check_state::warn;
            events.hint =
                "perf cannot count even task-clock: sudo sysctl kernel.perf_event_paranoid=1, or use --backend rusage";
        } else if (!has("cycles") || !has("instructions")) {
            events.state = check_state::warn;
            events.hint =
                "no hardware counters (no PMU: VM or hosted runner): gate on task-clock, or use --backend callgrind on machines without a PMU";
        } else {
            events.state = check_state::ok;
        }
    } catch (const perfgate::error& e) {
        events.state = check_state::warn;
        events.value = e.what();
        events.hint = "perf stat does not run here; use --backend rusage";
    }
    out.push_back(std::move(available));
    out.push_back(std::move(events));
}

// DMI vendors and products that only virtual machines report (systemd's
// detect-virt table, src/basic/virt.c, is the reference list).
bool dmi_says_vm(std::string_view vendor, std::string_view product)
{
    for (std::string_view v :
         {"QEMU", "KVM", "VMware", "innotek GmbH", "Xen", "Bochs", "Parallels", "BHYVE", "OpenStack", "Google"}) {
        if (vendor.find(v) != std::string_view::npos || product.find(v) != std::string_view::npos) return true;
    }
    return vendor.find("Microsoft") != std::string_view::npos &&
           product.find("Virtual Machine") != std::string_view::npos;
}

check check_virtualization(const env_options& o)
{
    check c = make("virtualization", "Virtualization");
    const std::string hint =
        "a VM shares its host (noisy neighbours, usually no PMU): prefer a dedicated bare-metal runner, or --backend callgrind";
    auto cpuinfo = read_file(o.proc_root / "cpuinfo");
    auto vendor = read_value(o.sys_root / "class/dmi/id/sys_vendor").value_or("");
    auto product = read_value(o.sys_root / "class/dmi/id/product_name").value_or("");
    auto hv_type = read_value(o.sys_root / "hypervisor/type").value_or("");

    // x86 sets the "hypervisor" CPUID bit in every guest; other
    // architectures have no "flags" line, so only DMI can tell there.
    std::optional<bool> hypervisor_flag;
    if (cpuinfo) {
        std::istringstream lines(*cpuinfo);
        for (std::string line; std::getline(lines, line);) {
            if (!line.starts_with("flags")) continue;
            auto colon = line.find(':');
            std::istringstream flags(colon == std::string::npos ? "" : line.substr(colon + 1));
            hypervisor_flag = false;
            for (std::string f; flags >> f;) {
                if (f == "hypervisor") hypervisor_flag = true;
            }
            break;
        }
    }
    std::string who = trim(fmt::format("{} {}", vendor, product));
    if (!hv_type.empty()) who = trim(fmt::format("{} (hypervisor type {})", who, hv_type));
    const bool dmi_vm = dmi_says_vm(vendor, product) || !hv_type.empty();

    if ((hypervisor_flag && *hypervisor_flag) || dmi_vm) {
        c.state = check_state::warn;
        c.value = fmt::format("virtual machine ({})",
                              who.empty() ? std::string("hypervisor CPU flag")
                                          : (hypervisor_flag.value_or(false) ? "hypervisor CPU flag; " + who : who));
        c.hint = hint;
    } else if (hypervisor_flag) {
        c.state = check_state::ok;
        c.value = who.empty() ? "bare metal (no hypervisor CPU flag)" : fmt::format("bare metal ({})", who);
    } else {
        c.value = who.empty() ? "no cpuinfo flags and no DMI identity"
                              : fmt::format("no hypervisor flag to read; DMI: {}", who);
        c.hint = "cannot tell whether this is a virtual machine";
    }
    return c;
}

} // namespace

std::vector<check> check_environment(const env_options& options)
{
    std::vector<check> out;
    out.push_back(check_governor(options));
    out.push_back(check_turbo(options));
    out.push_back(check_smt(options));
    out.push_back(check_isolated(options));
    out.push_back(check_affinity(options));
    out.push_back(check_load(options));
    out.push_back(check_aslr(options));
    out.push_back(check_paranoid(options));
    check_perf(options, out);
    out.push_back(check_virtualization(options));
    return out;
}

bool any_warning(const std::vector<check>& checks) noexcept
{
    return std::any_of(checks.begin(), checks.end(), [](const check& c) { return c.state == check_state::warn; });
}

nlohmann::json to_json(const std::vector<check>& checks)
{
    nlohmann::json list = nlohmann::json::array();
    std::map<std::string, int> summary{{"ok", 0}, {"warn", 0}, {"unknown", 0}};
    for (const auto& c : checks) {
        ++summary[std::string(to_string(c.state))];
        list.push_back(
            {{"id", c.id}, {"title", c.title}, {"state", to_string(c.state)}, {"value", c.value}, {"hint", c.hint}});
    }
    return {{"schema", "perfgate.environment/v1"}, {"summary", summary}, {"checks", std::move(list)}};
}

std::string render_text(const std::vector<check>& checks, bool colour)
{
    std::size_t width = 0;
    for (const auto& c : checks) width = std::max(width, c.title.size());
    auto paint = [&](check_state s) -> std::pair<std::string_view, std::string_view> {
        if (!colour) return {"", ""};
        switch (s) {
        case check_state::ok: return {"\x1b[32m", "\x1b[0m"};
        case check_state::warn: return {"\x1b[33m", "\x1b[0m"};
        case check_state::unknown: return {"\x1b[2m", "\x1b[0m"};
        }
        return {"", ""};
    };
    std::string out;
    int counts[3] = {0, 0, 0};
    for (const auto& c : checks) {
        ++counts[static_cast<int>(c.state)];
        auto [on, off] = paint(c.state);
        out += fmt::format("{}{:<8}{} {:<{}}  {}\n", on, to_string(c.state), off, c.title, width, c.value);
        if (c.state != check_state::ok && !c.hint.empty()) {
            out += fmt::format("{:<8} {:<{}}  hint: {}\n", "", "", width, c.hint);
        }
    }
    out += fmt::format("\n{} ok, {} warn, {} unknown\n", counts[0], counts[1], counts[2]);
    return out;
}

} // namespace perfgate::runner
