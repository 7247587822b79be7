#include "runner/perf_event.hpp"

// The kernel's definitions first: libpfm4's header then uses them instead of
// its own copy of struct perf_event_attr.
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <deque>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/measure.hpp"

namespace perfgate::runner {

namespace {

struct generic_event {
    std::string_view name;
    std::uint32_t type;
    std::uint64_t config;
};

// perf's generic event names (perf list: "Hardware event", "Software
// event"; tools/perf/util/parse-events.c event_symbols_hw/_sw).
constexpr generic_event generic_events[] = {
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
};

// perf stat's tool events, which perf measures itself rather than the
// kernel. perf still opens a software dummy event for each, which is how
// the user-only fallback renames them too (duration_time:u); so does
// native_counters.
constexpr std::pair<std::string_view, native_event::kind> tool_events[] = {
    {"duration_time", native_event::kind::duration_time},
    {"user_time", native_event::kind::user_time},
    {"system_time", native_event::kind::system_time},
};

std::string errno_message(int err) { return std::system_category().message(err); }

// perf's modifier rule (parse-events.c, get_event_modifier): naming any of
// u, k, h excludes the privilege levels not named.
void apply_modifiers(native_event& e, std::string_view full, std::string_view mods)
{
    if (mods.empty() || mods.find_first_not_of("ukh") != std::string_view::npos) {
        throw error(errors::usage_bad_event, fmt::format("event '{}': unsupported modifier ':{}' (the native backend "
                                                         "takes u, k and h)",
                                                         full, mods));
    }
    e.exclude_user = mods.find('u') == std::string_view::npos;
    e.exclude_kernel = mods.find('k') == std::string_view::npos;
    e.exclude_hv = mods.find('h') == std::string_view::npos;
}

// libpfm4's three functions that resolve_with_libpfm calls. The system
// build loads the library with dlopen on the first name it is asked for
// (as store/postgres.cpp loads libpq): linked, its event tables cost every
// perfgate process ~41,000 relocations at start-up (+0.7 ms of CPU per
// process on the 2-core development VM, Debian's libpfm4 4.13), whether it
// resolves an event name or not. The release build (PERFGATE_PORTABLE)
// links libpfm.a, to stay self-contained.
struct pfm_api {
    decltype(&::pfm_initialize) initialize = nullptr;
    decltype(&::pfm_get_os_event_encoding) encode = nullptr;
    decltype(&::pfm_strerror) strerror = nullptr;
    std::string missing; // why the library could not be loaded; empty when it was
};

#ifdef PERFGATE_PFM_LINKED
pfm_api load_pfm() { return {&::pfm_initialize, &::pfm_get_os_event_encoding, &::pfm_strerror, {}}; }
#else
// The SONAME of Debian's libpfm4 (4.x).
constexpr const char* libpfm_soname = "libpfm.so.4";

template <class F>
bool look_up(void* lib, F& fn, const char* name)
{
    fn = reinterpret_cast<F>(::dlsym(lib, name));
    return fn != nullptr;
}

pfm_api load_pfm()
{
    pfm_api api;
    // Never closed: the encodings are used until exit.
    void* lib = ::dlopen(libpfm_soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* why = ::dlerror();
        api.missing = fmt::format("{} cannot be loaded ({}); install it: apt-get install libpfm4", libpfm_soname,
                                  why ? why : "unknown error");
        return api;
    }
    if (!look_up(lib, api.initialize, "pfm_initialize") || !look_up(lib, api.encode, "pfm_get_os_event_encoding") ||
        !look_up(lib, api.strerror, "pfm_strerror")) {
        const char* why = ::dlerror();
        api.missing = fmt::format("{} lacks a function perfgate needs ({})", libpfm_soname, why ? why : "dlsym");
    }
    return api;
}
#endif

native_event resolve_with_libpfm(std::string_view name)
{
    // Loaded and initialised once (pfm_initialize detects the PMUs); the
    // result is kept (C++ static initialization is thread-safe).
    static const pfm_api pfm = load_pfm();
    if (!pfm.missing.empty()) {
        throw error(errors::usage_bad_event, fmt::format("unknown event '{}': not one of perf's generic names, and "
                                                         "libpfm4, which knows the PMUs' own, is missing: {}",
                                                         name, pfm.missing));
    }
    static const int init = pfm.initialize();
    if (init != PFM_SUCCESS) {
        throw error(errors::usage_bad_event,
                    fmt::format("unknown event '{}': not one of perf's generic names, and libpfm4 "
                                "could not start: {}",
                                name, pfm.strerror(init)));
    }
    const std::string text(name);
    perf_event_attr attr{};
    pfm_perf_encode_arg_t arg{};
    arg.attr = &attr;
    arg.size = sizeof arg;
    // Kernel and user mode, as perf counts an event without modifiers.
    const int rc = pfm.encode(text.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
    if (rc != PFM_SUCCESS) {
        throw error(errors::usage_bad_event,
                    fmt::format("unknown event '{}': not one of perf's generic names, and libpfm4 does not know it "
                                "for this machine's PMUs ({})",
                                name, pfm.strerror(rc)));
    }
    native_event e;
    e.name = text;
    e.from_libpfm = true;
    e.type = attr.type;
    e.config = attr.config;
    e.config1 = attr.config1;
    e.config2 = attr.config2;
    e.exclude_user = attr.exclude_user;
    e.exclude_kernel = attr.exclude_kernel;
    e.exclude_hv = attr.exclude_hv;
    return e;
}

// The attributes that name the event: its type and configuration.
perf_event_attr attr_of(const native_event& e)
{
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = e.type;
    attr.config = e.config;
    attr.config1 = e.config1;
    attr.config2 = e.config2;
    return attr;
}

int open_event(const native_event& e)
{
    perf_event_attr attr = attr_of(e);
    // Opened on perfgate's thread but never counting it: disabled, and
    // enabled only in a child's copy when that child execs. inherit gives
    // every child started afterwards (and its descendants) a copy.
    attr.disabled = 1;
    attr.enable_on_exec = 1;
    attr.inherit = 1;
    attr.exclude_user = e.exclude_user;
    attr.exclude_kernel = e.exclude_kernel;
    attr.exclude_hv = e.exclude_hv;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    // pid 0, cpu -1: this thread (and, by inheritance, its children) on any CPU.
    return static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

// The errors after which perf stat prints <not supported> (builtin-stat.c,
// stat_handle_error): no such PMU or event here.
bool not_supported(int err)
{
    return err == EINVAL || err == ENOSYS || err == ENOENT || err == EOPNOTSUPP || err == ENXIO;
}

std::string paranoid_value()
{
    auto v = model::read_file_if_readable("/proc/sys/kernel/perf_event_paranoid");
    if (!v) return "unreadable";
    v->erase(std::remove(v->begin(), v->end(), '\n'), v->end());
    return *v;
}

unique_fd open_counter(native_event& e)
{
    int fd = open_event(e);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && !e.exclude_kernel && !e.exclude_user) {
        // perf stat's fallback (util/evsel.c, evsel__fallback): count user
        // mode only, and say so in the name. A ':' already in a generic
        // event's name is its modifier list, which the 'u' joins.
        const bool has_modifiers = e.name.find('/') != std::string::npos ||
                                   (e.name.find(':') != std::string::npos && !e.from_libpfm);
        e.name += has_modifiers ? "u" : ":u";
        e.exclude_kernel = true;
        e.exclude_hv = true;
        fd = open_event(e);
    }
    if (fd >= 0) return unique_fd(fd);
    const int err = errno;
    if (not_supported(err)) return {};
    if (err == EACCES || err == EPERM) {
        throw error(errors::measure_perf_unavailable,
                    fmt::format("perf_event_open refused to count {} (kernel.perf_event_paranoid = {}): {}. {}", e.name,
                                paranoid_value(), errno_message(err), perf_paranoid_fix));
    }
    throw error(errors::measure_perf_unavailable,
                fmt::format("perf_event_open failed for {}: {}", e.name, errno_message(err)));
}

// A tool event or one of perf's generic names; nullopt for anything else
// (libpfm4's names). Error "usage.bad_event" for a bad modifier.
std::optional<native_event> resolve_builtin(std::string_view name)
{
    for (auto& [tool, kind] : tool_events) {
        if (name == tool) {
            native_event e{std::string(name), "ns", kind};
            e.type = PERF_TYPE_SOFTWARE;
            e.config = PERF_COUNT_SW_DUMMY;
            return e;
        }
    }
    const auto colon = name.find(':');
    const auto base = name.substr(0, colon);
    auto it = std::find_if(std::begin(generic_events), std::end(generic_events),
                           [&](auto& g) { return g.name == base; });
    if (it == std::end(generic_events)) return std::nullopt;

    native_event e;
    e.name = std::string(name);
    e.type = it->type;
    e.config = it->config;
    if (base == "task-clock" || base == "cpu-clock") {
        e.unit = "msec";
        e.scale = 1e-6;
    }
    if (colon != std::string_view::npos) apply_modifiers(e, name, name.substr(colon + 1));
    return e;
}

// What one keeper holds on (keep_perf_hooks_on): each software event type
// has a hook of its own; any other event holds its PMU.
struct hook_kind {
    std::uint32_t type;
    std::uint64_t config;
    auto operator<=>(const hook_kind&) const = default;
};

hook_kind hook_kind_of(const native_event& e) { return {e.type, e.type == PERF_TYPE_SOFTWARE ? e.config : 0}; }

// The keepers of this process, open until it exits. Each call that brings
// new kinds starts a thread that opens them into a batch of its own; the
// destructor (at exit) waits for the threads, then the batches close.
class hook_keeper {
public:
    hook_keeper() = default;
    hook_keeper(const hook_keeper&) = delete;
    hook_keeper& operator=(const hook_keeper&) = delete;
    ~hook_keeper()
    {
        for (auto& b : batches_) {
            if (b.worker.joinable()) b.worker.join();
        }
    }

    void keep(const std::vector<native_event>& events)
    {
        const std::lock_guard lock(mutex_);
        std::vector<native_event> fresh;
        for (const auto& e : events) {
            if (kept_.insert(hook_kind_of(e)).second) fresh.push_back(e);
        }
        if (fresh.empty()) return;
        auto& b = batches_.emplace_back();
        // The thread writes its own batch only; nothing reads it before the join.
        b.worker = std::thread([&fds = b.fds, fresh = std::move(fresh)] {
            for (const auto& e : fresh) {
                perf_event_attr attr = attr_of(e);
                attr.disabled = 1;
                // User mode only: allowed wherever counting the benchmark is
                // (perf_event_paranoid <= 2), and the hook is the same.
                attr.exclude_kernel = 1;
                attr.exclude_hv = 1;
                // pid 0: this thread, which ends at once; the event stays
                // open (and the hook on) until its descriptor closes.
                const int fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
                if (fd >= 0) fds.emplace_back(fd);
            }
        });
    }

private:
    struct batch {
        std::vector<unique_fd> fds;
        std::thread worker;
    };
    std::mutex mutex_;
    std::set<hook_kind> kept_;
    std::deque<batch> batches_; // a deque: a batch never moves while its thread writes it
};

hook_keeper& keeper()
{
    static hook_keeper k;
    return k;
}

} // namespace

native_event resolve_event(std::string_view name)
{
    if (auto e = resolve_builtin(name)) return *std::move(e);
    return resolve_with_libpfm(name);
}

void keep_perf_hooks_on(const std::vector<native_event>& events) { keeper().keep(events); }

void keep_perf_hooks_on(const std::vector<std::string>& event_names) noexcept
{
    try {
        std::vector<native_event> events;
        auto add = [&](std::string_view name) {
            try {
                if (auto e = resolve_builtin(name)) events.push_back(*std::move(e));
            } catch (const error&) { // a bad modifier: the backend says so
            }
        };
        if (event_names.empty()) {
            for (auto name : default_perf_events) add(name);
        }
        for (const auto& name : event_names) add(name);
        keeper().keep(events);
    } catch (...) { // an optimisation only: out of memory or threads, the counters open as before
    }
}

native_counters::native_counters(std::vector<native_event>& events)
{
    fds_.reserve(events.size());
    for (auto& e : events) fds_.push_back(open_counter(e));
    events_ = events;
}

std::vector<native_reading> native_counters::read(const process_result& proc) const
{
    std::vector<native_reading> out;
    out.reserve(events_.size());
    for (std::size_t i = 0; i < events_.size(); ++i) {
        const auto& e = events_[i];
        native_reading r{e.name, e.unit, std::nullopt, 100.0};
        switch (e.source) {
        case native_event::kind::duration_time: r.value = static_cast<double>(proc.wall.count()); break;
        case native_event::kind::user_time: r.value = static_cast<double>(proc.user.count()); break;
        case native_event::kind::system_time: r.value = static_cast<double>(proc.sys.count()); break;
        case native_event::kind::counter: {
            if (!fds_[i]) break; // <not supported>
            // read_format TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING: value, enabled, running.
            std::array<std::uint64_t, 3> raw{};
            if (::read(fds_[i].get(), raw.data(), sizeof raw) != static_cast<ssize_t>(sizeof raw)) {
                throw error(errors::measure_perf_unavailable,
                            fmt::format("cannot read the counter of {}: {}", e.name, errno_message(errno)));
            }
            const auto [value, enabled, running] = raw;
            // perf stat's scaling (util/stat.c, perf_counts_values__scale):
            // never running is <not counted>; running part of the time is
            // extrapolated to the whole.
            if (enabled > 0) r.pcnt_running = 100.0 * static_cast<double>(running) / static_cast<double>(enabled);
            if (running == 0) break;
            double v = static_cast<double>(value);
            if (running < enabled) v = v * static_cast<double>(enabled) / static_cast<double>(running);
            r.value = v * e.scale;
            break;
        }
        }
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace perfgate::runner
