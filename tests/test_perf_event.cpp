// Tests of the native backend (`perfgate run --backend native`): event names,
// the vfork spawn it relies on, counters opened on perfgate's thread and
// inherited by the benchmark, and real executions measured both by it and by
// the perf CLI backend, which stays the reference. Only software events are
// asserted on values (this machine and hosted CI runners have no PMU); the
// hardware ones are compared between the two backends, supported or not.
#include "runner/perf_event.hpp"

#include <linux/perf_event.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "support/process.hpp"

#include "model/error.hpp"
#include "runner/config.hpp"
#include "runner/measure.hpp"
#include "runner/process.hpp"

using namespace perfgate;
using namespace perfgate::runner;
using namespace std::chrono_literals;

namespace {

using namespace perfgate::test;


// Pages the workload touches: page-faults is then about this plus the
// program's start-up faults (~50-100), the same under both backends.
constexpr long touched_pages = 3000;

// Voluntary context switches the workload makes by sleeping: they outweigh
// the preemptions of a busy machine, which vary run to run.
constexpr long workload_sleeps = 40;

// A program that touches `pages` fresh pages (one fault each: huge pages
// off), burns CPU for `iterations` rounds of an LCG (~1 ns each), and
// sleeps 100 us `sleeps` times (one context switch each); sleeps defaults
// to 0.
std::string compile_workload(const std::filesystem::path& dir)
{
    std::ofstream(dir / "w.c") << R"(
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
int main(int argc, char** argv) {
    long pages = atol(argv[1]), iterations = atol(argv[2]), sleeps = argc > 3 ? atol(argv[3]) : 0;
    char* p = mmap(0, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 2;
    madvise(p, pages * 4096, MADV_NOHUGEPAGE);
    for (long i = 0; i < pages; ++i) p[i * 4096] = 1;
    volatile unsigned long x = 1;
    for (long i = 0; i < iterations; ++i) x = x * 6364136223846793005UL + 1442695040888963407UL;
    struct timespec nap = {0, 100000};
    for (long i = 0; i < sleeps; ++i) nanosleep(&nap, 0);
    return p[0] - 1;
}
)";
    spawn_options so;
    so.argv = {"cc", "-O1", "-o", (dir / "w").string(), (dir / "w.c").string()};
    REQUIRE(run_process(so).status.success());
    return (dir / "w").string();
}

measure_options options(backend b, std::vector<std::string> events, int repetitions = 2)
{
    measure_options opt;
    opt.which = b;
    opt.repetitions = repetitions;
    opt.warmup = 0;
    opt.exec_helper = exec_helper;
    opt.events = std::move(events);
    return opt;
}

benchmark_spec spec_of(const std::string& name, const std::string& base, const std::string& cand)
{
    benchmark_spec s;
    s.name = name;
    s.baseline = parse_command(base);
    s.candidate = parse_command(cand);
    return s;
}

// One side's run of one benchmark measured with `opt`.
model::run_record measure_one(const measure_options& opt, const std::string& cmd)
{
    std::ostringstream progress;
    auto m = measure({spec_of("w", cmd, cmd)}, opt, progress);
    REQUIRE(m.size() == 1);
    return m[0].baseline.run;
}

const model::counter_samples& counter(const model::run_record& run, std::string_view name)
{
    auto it = std::find_if(run.counters.begin(), run.counters.end(), [&](auto& c) { return c.counter == name; });
    REQUIRE_MESSAGE(it != run.counters.end(), "no counter " << name);
    return *it;
}

double median_of(const model::counter_samples& c)
{
    std::vector<double> v;
    for (auto& s : c.samples) {
        REQUIRE(s.value.has_value());
        v.push_back(*s.value);
    }
    REQUIRE(!v.empty());
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Name and unit of every counter, in order.
std::vector<std::pair<std::string, std::string>> names_and_units(const model::run_record& run)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& c : run.counters) out.emplace_back(c.counter, c.unit);
    return out;
}

// The counter's name under this machine's perf_event_paranoid: perf and the
// native backend both fall back to user-only counting (NAME:u) when not
// allowed to count the kernel.
std::string effective(const model::run_record& run, const std::string& name)
{
    for (auto& c : run.counters) {
        if (c.counter == name || c.counter == name + ":u") return c.counter;
    }
    FAIL("no counter " << name);
    return name;
}

} // namespace

TEST_CASE("native event names: perf's generic ones, tool events, libpfm4")
{
    SUBCASE("generic names with perf's units")
    {
        auto tc = resolve_event("task-clock");
        CHECK(tc.name == "task-clock");
        CHECK(tc.unit == "msec");
        CHECK(tc.scale == 1e-6);
        CHECK(tc.type == PERF_TYPE_SOFTWARE);
        CHECK(tc.config == PERF_COUNT_SW_TASK_CLOCK);
        CHECK(resolve_event("cpu-clock").unit == "msec");

        auto cs = resolve_event("cs");
        CHECK(cs.name == "cs"); // perf prints the name as given
        CHECK(cs.unit == "");
        CHECK(cs.config == resolve_event("context-switches").config);
        CHECK(resolve_event("faults").config == PERF_COUNT_SW_PAGE_FAULTS);
        CHECK(resolve_event("migrations").config == PERF_COUNT_SW_CPU_MIGRATIONS);
        CHECK(resolve_event("major-faults").config == PERF_COUNT_SW_PAGE_FAULTS_MAJ);

        auto cycles = resolve_event("cycles");
        CHECK(cycles.type == PERF_TYPE_HARDWARE);
        CHECK(cycles.config == PERF_COUNT_HW_CPU_CYCLES);
        CHECK(resolve_event("branch-misses").config == PERF_COUNT_HW_BRANCH_MISSES);
        CHECK(resolve_event("cache-misses").config == PERF_COUNT_HW_CACHE_MISSES);
    }
    SUBCASE("modifiers as perf reads them")
    {
        auto u = resolve_event("cycles:u");
        CHECK(u.name == "cycles:u");
        CHECK((!u.exclude_user && u.exclude_kernel && u.exclude_hv));
        auto k = resolve_event("task-clock:k");
        CHECK((k.exclude_user && !k.exclude_kernel && k.exclude_hv));
        CHECK(k.unit == "msec");
        auto uk = resolve_event("instructions:uk");
        CHECK((!uk.exclude_user && !uk.exclude_kernel && uk.exclude_hv));
        auto plain = resolve_event("instructions");
        CHECK((!plain.exclude_user && !plain.exclude_kernel && !plain.exclude_hv));
        CHECK_THROWS_WITH_AS(resolve_event("cycles:pp"),
                             doctest::Contains("event 'cycles:pp': unsupported modifier ':pp'"), perfgate::error);
    }
    SUBCASE("tool events are measured by perfgate, in ns")
    {
        for (auto name : {"duration_time", "user_time", "system_time"}) {
            CAPTURE(name);
            auto e = resolve_event(name);
            CHECK(e.name == name);
            CHECK(e.unit == "ns");
            CHECK(e.source != native_event::kind::counter);
        }
    }
    SUBCASE("libpfm4 names")
    {
        // libpfm4's "perf" PMU is there on every machine.
        auto e = resolve_event("perf::PERF_COUNT_SW_TASK_CLOCK");
        CHECK(e.name == "perf::PERF_COUNT_SW_TASK_CLOCK");
        CHECK(e.from_libpfm);
        CHECK(e.type == PERF_TYPE_SOFTWARE);
        CHECK(e.config == PERF_COUNT_SW_TASK_CLOCK);
        CHECK(e.unit == "");
        auto u = resolve_event("perf::PERF_COUNT_HW_INSTRUCTIONS:u");
        CHECK(u.type == PERF_TYPE_HARDWARE);
        CHECK(u.config == PERF_COUNT_HW_INSTRUCTIONS);
        CHECK(u.exclude_kernel);
    }
    SUBCASE("perfgate does not load libpfm4 at start-up: on the first name that needs it")
    {
        // Linked, its event tables cost every perfgate process ~41,000
        // relocations; the release build links it statically.
        spawn_options so;
        so.argv = {"readelf", "-d", perfgate_exe};
        so.capture_stdout = true;
        auto res = run_process(so, 60s);
        REQUIRE(res.status.success());
        CHECK(res.stdout_text.find("(NEEDED)") != std::string::npos);
        CHECK(res.stdout_text.find("libpfm") == std::string::npos);
    }
    SUBCASE("an unknown name is a usage error naming it")
    {
        try {
            (void)resolve_event("no-such-event-xyz");
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "usage.bad_event");
            CHECK(std::string(e.what()).starts_with(
                "unknown event 'no-such-event-xyz': not one of perf's generic names"));
        }
        CHECK_THROWS_WITH_AS(resolve_event("duration_time:u"), doctest::Contains("unknown event 'duration_time:u'"),
                             perfgate::error);
    }
}

TEST_CASE("the vfork child gets default signal actions, not the parent's handlers")
{
    // exec_child runs on the parent's stack until execve: a handler of ours
    // must never run there, and an ignored SIGPIPE must not reach the benchmark.
    struct restore {
        struct sigaction usr1 {
        }, pipe{};
        restore()
        {
            ::sigaction(SIGUSR1, nullptr, &usr1);
            ::sigaction(SIGPIPE, nullptr, &pipe);
        }
        ~restore()
        {
            ::sigaction(SIGUSR1, &usr1, nullptr);
            ::sigaction(SIGPIPE, &pipe, nullptr);
        }
    } saved;
    static volatile sig_atomic_t handled = 0;
    struct sigaction sa {};
    sa.sa_handler = [](int) { handled = 1; };
    sigemptyset(&sa.sa_mask);
    REQUIRE(::sigaction(SIGUSR1, &sa, nullptr) == 0);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    REQUIRE(::sigaction(SIGPIPE, &ignore, nullptr) == 0);

    for (const char* sig : {"USR1", "PIPE"}) {
        CAPTURE(sig);
        spawn_options so;
        so.argv = {"sh", "-c", std::string("kill -") + sig + " $$; exit 0"};
        auto res = run_process(so, 10s);
        CHECK_FALSE(res.status.exited);
        CHECK(res.status.signal == (std::string(sig) == "USR1" ? SIGUSR1 : SIGPIPE));
    }
    CHECK(handled == 0);
    // The parent's own signal mask is as it was (every signal is blocked only around vfork).
    sigset_t now;
    REQUIRE(::pthread_sigmask(SIG_SETMASK, nullptr, &now) == 0);
    CHECK_FALSE(sigismember(&now, SIGUSR1));
    CHECK_FALSE(sigismember(&now, SIGINT));
}

TEST_CASE("native_counters on a real child, opened on this thread and inherited")
{
    temp_dir dir("pg-native");
    const auto workload = compile_workload(dir.path());
    std::vector<native_event> events = {resolve_event("task-clock"), resolve_event("page-faults"),
                                        resolve_event("duration_time"), resolve_event("user_time"),
                                        resolve_event("cycles")};
    auto spawn = [&](long pages) {
        spawn_options so;
        so.argv = {workload, std::to_string(pages), "1000000"};
        auto res = run_process(so, 60s);
        REQUIRE(res.status.success());
        return res;
    };
    SUBCASE("the benchmark's counts, in perf stat's names and units")
    {
        const native_counters counters(events);
        auto res = spawn(touched_pages);
        auto r = counters.read(res);
        REQUIRE(r.size() == 5);
        CHECK(r[0].name.starts_with("task-clock"));
        CHECK(r[0].unit == "msec");
        REQUIRE(r[0].value.has_value());
        CHECK(*r[0].value > 0);
        CHECK(*r[0].value < std::chrono::duration<double, std::milli>(res.wall).count() * 1.01 + 0.01);
        REQUIRE(r[1].value.has_value());
        CHECK(*r[1].value >= touched_pages);
        CHECK(*r[1].value < touched_pages + 1000);
        CHECK(r[1].pcnt_running == 100.0);
        REQUIRE(r[2].value.has_value());
        CHECK(r[2].unit == "ns");
        CHECK(*r[2].value == static_cast<double>(res.wall.count()));
        CHECK(r[3].value == static_cast<double>(res.user.count()));
        // cycles: counted where there is a PMU, <not supported> where not; never 0 for a running program.
        if (r[4].value) CHECK(*r[4].value > 0);
    }
    SUBCASE("perfgate's own work before the exec is not counted; each execution has its own counters")
    {
        for (long pages : {4 * touched_pages, touched_pages}) {
            const native_counters counters(events);
            // This thread faults in fresh pages of its own while the counters
            // are open: they are disabled on it, so none of these count.
            std::vector<char> scratch(16L << 20);
            for (std::size_t i = 0; i < scratch.size(); i += 4096) scratch[i] = 1;
            auto r = counters.read(spawn(pages));
            REQUIRE(r[1].value.has_value());
            CHECK(*r[1].value >= pages);
            CHECK(*r[1].value < pages + 1000);
        }
    }
}

// perf_event file descriptors this process holds.
int perf_event_fds()
{
    int n = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        if (std::filesystem::read_symlink(entry.path(), ec).string() == "anon_inode:[perf_event]") ++n;
    }
    return n;
}

// Waits up to 10 s for `want` perf_event descriptors (the keeper opens them
// on a thread of its own), then 200 ms more in which the count must stay.
int settled_perf_event_fds(int want)
{
    for (int i = 0; i < 1000 && perf_event_fds() < want; ++i) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(200ms);
    return perf_event_fds();
}

TEST_CASE("keep_perf_hooks_on: one disabled event per kind, opened once, changing no count")
{
    // Kinds no other test here keeps (the keepers are the process's).
    const int before = perf_event_fds();
    keep_perf_hooks_on(std::vector<native_event>{resolve_event("alignment-faults"), resolve_event("emulation-faults"),
                                                 resolve_event("alignment-faults:u")});
    CHECK(settled_perf_event_fds(before + 2) == before + 2);
    // Kept already: nothing more opens.
    keep_perf_hooks_on(std::vector<native_event>{resolve_event("emulation-faults:k")});
    CHECK(settled_perf_event_fds(before + 2) == before + 2);
    // By name: unknown names, bad modifiers and libpfm4's names are skipped.
    keep_perf_hooks_on(std::vector<std::string>{"major-faults", "no-such-event-xyz", "cpu-migrations:zz",
                                                "perf::PERF_COUNT_SW_CPU_MIGRATIONS", "major-faults:u"});
    CHECK(settled_perf_event_fds(before + 3) == before + 3);

    // A kept kind counts the benchmark as before: the keeper's event is
    // disabled and bound to a thread that has ended.
    temp_dir dir("pg-native");
    const auto workload = compile_workload(dir.path());
    std::vector<native_event> events = {resolve_event("page-faults"), resolve_event("major-faults")};
    keep_perf_hooks_on(events);
    const native_counters counters(events);
    spawn_options so;
    so.argv = {workload, std::to_string(touched_pages), "1000"};
    auto res = run_process(so, 60s);
    REQUIRE(res.status.success());
    auto r = counters.read(res);
    REQUIRE(r[0].value.has_value());
    CHECK(*r[0].value >= touched_pages);
    CHECK(*r[0].value < touched_pages + 1000);
    CHECK(r[1].value.has_value());
}

TEST_CASE("native and perf backends agree (perf stays the reference)")
{
    temp_dir dir("pg-native");
    const auto workload = compile_workload(dir.path());
    // ~30 ms of CPU after touching the pages, then a few sleeps.
    const std::string cmd = workload + " " + std::to_string(touched_pages) + " 30000000 " +
                            std::to_string(workload_sleeps);

    SUBCASE("task-clock, page-faults and context-switches within noise")
    {
        const std::vector<std::string> events = {"task-clock", "page-faults", "context-switches", "duration_time"};
        auto perf = measure_one(options(backend::perf, events, 5), cmd);
        auto native = measure_one(options(backend::native, events, 5), cmd);
        CHECK(native.backend == "native");
        CHECK(perf.backend == "perf");
        // The same counters under the same names and units.
        CHECK(names_and_units(native) == names_and_units(perf));

        // perf also counts its wrapper perfgate-exec: some tens of faults
        // for the static binary, thousands in a sanitizer build. The
        // faults of the pages the program touches are the same on both:
        // the difference to the same program touching one page.
        const std::string untouched = workload + " 1 1000";
        auto perf_none = measure_one(options(backend::perf, events, 3), untouched);
        auto native_none = measure_one(options(backend::native, events, 3), untouched);
        const double pf_perf = median_of(counter(perf, effective(perf, "page-faults")));
        const double pf_native = median_of(counter(native, effective(native, "page-faults")));
        const double touched_perf = pf_perf - median_of(counter(perf_none, effective(perf_none, "page-faults")));
        const double touched_native = pf_native -
                                      median_of(counter(native_none, effective(native_none, "page-faults")));
        CHECK(pf_native >= touched_pages);
        CHECK(pf_perf >= pf_native - 10);
        CHECK(touched_native >= touched_pages - 1);
        CHECK(std::abs(touched_native - touched_perf) <= 10 + 0.01 * touched_perf);

        // The VM is noisy (a 15 ms loop takes 8-14 ms): generous bounds.
        const double tc_perf = median_of(counter(perf, effective(perf, "task-clock")));
        const double tc_native = median_of(counter(native, effective(native, "task-clock")));
        CHECK(tc_native > tc_perf / 2);
        CHECK(tc_native < tc_perf * 2);

        // One switch per sleep, plus preemptions of the CPU-bound part that
        // depend on the machine's load; perf's wrapper adds its wait.
        const double cs_perf = median_of(counter(perf, effective(perf, "context-switches")));
        const double cs_native = median_of(counter(native, effective(native, "context-switches")));
        if (effective(native, "context-switches") == "context-switches") {
            CHECK(cs_native >= workload_sleeps);
            CHECK(cs_perf >= workload_sleeps);
        } // else user-only counting (context-switches:u): 0 on both, switches are kernel work
        CHECK(std::abs(cs_native - cs_perf) <= 5 + 0.5 * std::max(cs_native, cs_perf));

        // duration_time is the benchmark's own; wall-time adds fork/exec.
        const double dur = median_of(counter(native, effective(native, "duration_time")));
        CHECK(dur > 0);
        CHECK(dur <= median_of(counter(native, "wall-time")));
        CHECK(counter(native, "max-rss").unit == "KiB");
    }
    SUBCASE("explicit events: each supported by both or by neither")
    {
        const std::vector<std::string> events = {"task-clock",   "cycles",         "instructions", "branch-misses",
                                                 "cache-misses", "cpu-migrations", "duration_time"};
        auto perf = measure_one(options(backend::perf, events, 1), cmd);
        auto native = measure_one(options(backend::native, events, 1), cmd);
        REQUIRE(names_and_units(native) == names_and_units(perf));
        for (std::size_t i = 0; i < perf.counters.size(); ++i) {
            CAPTURE(perf.counters[i].counter);
            REQUIRE(perf.counters[i].samples.size() == 1);
            REQUIRE(native.counters[i].samples.size() == 1);
            // Kept as <not supported> (no value) when explicit, on both.
            CHECK(perf.counters[i].samples[0].value.has_value() == native.counters[i].samples[0].value.has_value());
        }
    }
    SUBCASE("default events: the same unsupported ones dropped, with the same warning")
    {
        std::ostringstream progress;
        auto perf = measure({spec_of("d", cmd, cmd)}, options(backend::perf, {}, 1), progress);
        auto native = measure({spec_of("d", cmd, cmd)}, options(backend::native, {}, 1), progress);
        CHECK(names_and_units(native[0].baseline.run) == names_and_units(perf[0].baseline.run));
        CHECK(native[0].baseline.warnings == perf[0].baseline.warnings);
        for (auto& c : native[0].baseline.run.counters) {
            CAPTURE(c.counter);
            REQUIRE(c.samples.size() == 1);
            CHECK(c.samples[0].value.has_value()); // unsupported defaults are gone
        }
    }
}

TEST_CASE("kernel-only counting: counted by both backends, or refused by both with the same fix")
{
    // Refused without CAP_PERFMON when perf_event_paranoid >= 2 (no
    // user-only fallback for an event that excludes user mode); counted as
    // root. Either way the two backends must agree.
    std::ostringstream progress;
    auto outcome = [&](backend b) -> std::string {
        try {
            auto m = measure({spec_of("k", "true", "true")}, options(b, {"task-clock:k"}, 1), progress);
            const auto& c = counter(m[0].baseline.run, "task-clock:k");
            REQUIRE(c.samples.size() == 1);
            return c.samples[0].value ? "counted" : "not supported";
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.perf_unavailable");
            CHECK(std::string(e.what()).starts_with("benchmark 'k', baseline side, round 1/1: "));
            CHECK(std::string(e.what()).find("Fix: sudo sysctl kernel.perf_event_paranoid=1") != std::string::npos);
            return "refused";
        }
    };
    const auto perf = outcome(backend::perf);
    CHECK(outcome(backend::native) == perf);
    if (::geteuid() == 0) CHECK(perf == "counted");
}

TEST_CASE("the native backend counts the benchmark's children")
{
    temp_dir dir("pg-native");
    const auto workload = compile_workload(dir.path());
    const std::string one = workload + " " + std::to_string(touched_pages) + " 20000000";
    // A shell script whose work is all in its children.
    const std::string four = "sh -c '" + one + "; " + one + "; " + one + "; " + one + "'";
    const std::vector<std::string> events = {"task-clock", "page-faults"};
    auto single = measure_one(options(backend::native, events, 3), one);
    auto script = measure_one(options(backend::native, events, 3), four);
    // Four children touch four times the pages: deterministic.
    CHECK(median_of(counter(script, effective(script, "page-faults"))) >= 4 * touched_pages);
    CHECK(median_of(counter(single, effective(single, "page-faults"))) < 2 * touched_pages);
    // And burn four times the CPU (2x margin for the noise).
    CHECK(median_of(counter(script, effective(script, "task-clock"))) >
          2 * median_of(counter(single, effective(single, "task-clock"))));
}

TEST_CASE("native backend errors are those of the other backends")
{
    std::ostringstream progress;
    const std::vector<std::string> events = {"task-clock", "page-faults"};

    SUBCASE("an unknown event fails before anything runs")
    {
        try {
            measure({spec_of("x", "true", "true")}, options(backend::native, {"task-clock", "no-such-event-xyz"}),
                    progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "usage.bad_event");
            CHECK(std::string(e.what()).find("'no-such-event-xyz'") != std::string::npos);
        }
    }
    SUBCASE("a failing benchmark names benchmark, side, round and its stderr")
    {
        try {
            measure({spec_of("fails", "true", "sh -c 'echo something broke >&2; exit 3'")},
                    options(backend::native, events), progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.failed");
            std::string msg = e.what();
            CHECK(msg.starts_with("benchmark 'fails', candidate side, round 1/2: 'sh -c 'echo something broke >&2; "
                                  "exit 3'' exited with status 3"));
            CHECK(msg.find("| something broke") != std::string::npos);
        }
    }
    SUBCASE("killed by a signal")
    {
        CHECK_THROWS_WITH_AS(measure({spec_of("k", "sh -c 'kill -9 $$'", "true")}, options(backend::native, events),
                                     progress),
                             doctest::Contains("benchmark 'k', baseline side, round 1/2: 'sh -c 'kill -9 $$'' was "
                                               "killed by signal 9 (SIGKILL)"),
                             perfgate::error);
    }
    SUBCASE("a command that cannot be executed")
    {
        try {
            measure({spec_of("m", "/nonexistent/bench", "true")}, options(backend::native, events), progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.failed");
            CHECK(std::string(e.what()).starts_with("benchmark 'm', baseline side, round 1/2: cannot execute "
                                                    "'/nonexistent/bench': No such file or directory"));
        }
    }
    SUBCASE("timeout")
    {
        auto opt = options(backend::native, events);
        opt.timeout = 300ms;
        try {
            measure({spec_of("slow", "true", "sleep 10")}, opt, progress);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "measure.timeout");
            CHECK(std::string(e.what()).starts_with(
                "benchmark 'slow', candidate side, round 1/2: 'sleep 10' did not finish within --timeout 0.3 s"));
        }
    }
}

TEST_CASE("perfgate run --backend native end to end")
{
    temp_dir dir("pg-native");
    spawn_options so;
    // clang-format off
    so.argv = {perfgate_exe, "run", "-q", "-r", "3", "--backend", "native", "-e", "task-clock,page-faults,duration_time",
               "--db", (dir.path() / "p.db").string(), "--format", "json", "--name", "n", "--baseline", "true",
               "--candidate", "true"};
    // clang-format on
    so.cwd = dir.path();
    so.capture_stdout = true;
    so.env = {{"GITHUB_ACTIONS", ""}, {"NO_COLOR", "1"}};
    auto res = run_process(so, 120s);
    REQUIRE(res.status.exited);
    CHECK(res.status.code == 0);
    CHECK(res.stdout_text.find("\"task-clock") != std::string::npos);
    CHECK(res.stdout_text.find("\"duration_time") != std::string::npos);

    // clang-format off
    so.argv = {perfgate_exe, "run", "-q", "--backend", "native", "-e", "no-such-event-xyz", "--db",
               (dir.path() / "p.db").string(), "--baseline", "true", "--candidate", "true"};
    // clang-format on
    res = run_process(so, 120s);
    REQUIRE(res.status.exited);
    CHECK(res.status.code == 2);
    std::string err;
    for (auto& l : res.stderr_tail) err += l + "\n";
    CHECK(err.find("[usage.bad_event]") != std::string::npos);
    CHECK(err.find("no-such-event-xyz") != std::string::npos);
}
