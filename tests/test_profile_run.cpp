// Tests of perfgate run --profile (runner/profile_run.hpp) with real
// processes: perf record on the example's two builds (examples/checksum.cpp:
// the vector by const reference, and by value), an A/A run, every failure
// as an attribution error, and the perfgate binary's verdict and exit code
// unchanged when profiling fails. Real perf samples cpu-clock on a machine
// without a PMU; the assertions are about which function grew and about the
// intervals, never about timing.
#include "runner/profile_run.hpp"

#include <csignal>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "support/process.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/config.hpp"
#include "runner/process.hpp"

using namespace perfgate;
using namespace perfgate::runner;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using namespace perfgate::test;

const std::string example_baseline = PERFGATE_BINARY_DIR "/examples/example-baseline";
const std::string example_regressed = PERFGATE_BINARY_DIR "/examples/example-regressed";
// ~130 ms (baseline) and ~165 ms (by value) per execution on this VM: about
// 500-650 samples each at perf's default 4000 Hz.
const std::string example_rounds = "150";

// Without examples/ (PERFGATE_BUILD_EXAMPLES=OFF) the tests on the example's
// two builds are skipped, and ctest reports them as skipped.
const bool examples_missing = !fs::exists(example_baseline) || !fs::exists(example_regressed);

benchmark_spec spec_of(const std::string& name, const std::string& base, const std::string& cand)
{
    benchmark_spec s;
    s.name = name;
    s.baseline = parse_command(base);
    s.candidate = parse_command(cand);
    return s;
}

// A scratch directory for one test, removed at the end.
struct scratch {
    temp_dir dir{"perfgate-test-profile"};
    [[nodiscard]] const fs::path& path() const { return dir.path(); }
};

// A C program that loops `iterations` times in a function of its own
// (a few ms per million), compiled into dir; with `stripped`, without its
// symbol table. The source names its own path, so that every build has its
// own build-id: perf would otherwise find the symbols of an unstripped twin
// in its build-id cache (~/.debug).
fs::path compile_loop(const fs::path& dir, long iterations, bool stripped = false)
{
    const auto exe = dir / (stripped ? "loop-stripped" : "loop");
    std::ofstream(dir / "loop.c") << "const char* where = \"" << exe.string() << "\";\n"
                                  << "__attribute__((noinline)) long spin(long n) { volatile long s = 0; "
                                     "for (long i = 0; i < n; i++) s += i; return s; }\n"
                                  << "int main(void) { return spin(" << iterations << ") == 1; }\n";
    spawn_options so;
    so.argv = {"cc", "-O1", "-o", exe.string(), (dir / "loop.c").string()};
    REQUIRE(run_process(so).status.success());
    if (stripped) {
        so.argv = {"strip", exe.string()};
        REQUIRE(run_process(so).status.success());
    }
    return exe;
}

// An executable shell script.
fs::path write_script(const fs::path& path, const std::string& body)
{
    std::ofstream(path) << "#!/bin/sh\n" << body;
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    return path;
}

// The perf in PATH, by its full path: a fake perf earlier in PATH must not
// call itself.
std::string real_perf()
{
    const char* path = std::getenv("PATH");
    auto found = find_executable("perf", path ? path : "/usr/bin:/bin");
    REQUIRE(found.has_value());
    return *found;
}

// A perf that fails `perf record` as perf 6.1 does under
// kernel.perf_event_paranoid = 3 for a user without CAP_PERFMON, and runs the
// real perf for everything else (perf stat of the measured rounds).
fs::path refusing_perf(const fs::path& dir)
{
    return write_script(dir / "perf", "if [ \"$1\" = record ]; then\n"
                                      "cat >&2 <<'MSG'\n"
                                      "Error:\n"
                                      "Access to performance monitoring and observability operations is limited.\n"
                                      "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n"
                                      "access to performance monitoring and observability operations for processes\n"
                                      "without CAP_PERFMON, CAP_SYS_PTRACE or CAP_SYS_ADMIN Linux capability.\n"
                                      "perf_event_paranoid setting is 3:\n"
                                      "  -1: Allow use of (almost) all events by all users\n"
                                      ">= 2: Disallow kernel profiling\n"
                                      "MSG\n"
                                      "exit 255\n"
                                      "fi\n"
                                      "exec " +
                                          real_perf() + " \"$@\"\n");
}

const gate::function_change* row_named(const gate::perf_attribution& p, std::string_view name)
{
    for (const auto& r : p.top) {
        if (r.name == name) return &r;
    }
    return nullptr;
}

// The row with the largest growth of self share (interval midpoint).
const gate::function_change* top_grown(const gate::perf_attribution& p)
{
    const gate::function_change* best = nullptr;
    auto mid = [](const gate::function_change& r) { return (r.interval->first + r.interval->second) / 2; };
    for (const auto& r : p.top) {
        if (r.delta > 0 && (!best || mid(r) > mid(*best))) best = &r;
    }
    return best;
}

bool is_copy(std::string_view name)
{
    return name.find("memmove") != std::string_view::npos || name.find("memcpy") != std::string_view::npos ||
           name.find("::vector(") != std::string_view::npos;
}

std::string error_ids(const gate::attribution& a)
{
    std::string ids;
    for (const auto& e : a.errors) ids += e.id + ": " + e.message + "\n";
    return ids;
}

} // namespace

TEST_CASE("spawn_options: stdout into a file, bounded by max_file_bytes")
{
    scratch s;
    spawn_options so;
    so.argv = {"sh", "-c", "echo hello; echo world"};
    so.stdout_file = s.path() / "out.txt";
    auto r = run_process(so);
    CHECK(r.status.success());
    CHECK(model::read_text_file(s.path() / "out.txt") == "hello\nworld\n");

    SUBCASE("a write past the limit kills the child with SIGXFSZ and leaves at most the limit")
    {
        so.argv = {"sh", "-c", "exec head -c 100000 /dev/zero"};
        so.max_file_bytes = 4096;
        r = run_process(so);
        CHECK_FALSE(r.status.exited);
        CHECK(r.status.signal == SIGXFSZ);
        CHECK(fs::file_size(s.path() / "out.txt") <= 4096);
    }
    SUBCASE("capture_stdout and stdout_file exclude each other; an uncreatable file is an error")
    {
        so.capture_stdout = true;
        CHECK_THROWS_AS(run_process(so), error);
        so.capture_stdout = false;
        so.stdout_file = s.path() / "no" / "such" / "dir";
        CHECK_THROWS_WITH_AS(run_process(so), doctest::Contains("cannot create"), error);
    }
}

TEST_CASE("profile_event: cycles with a PMU, else cpu-clock")
{
    const auto e = profile_event("perf");
    CHECK((e == "cycles" || e == "cpu-clock"));
    CHECK(profile_event("/nonexistent/perf") == "cpu-clock");
}

TEST_CASE("--profile on the example: the by-value copy is the top grown function, red in the flame graph" *
          doctest::skip(examples_missing))
{
    scratch s;
    profile_options o;
    o.artifacts = s.path() / "artifacts";
    // Five executions per side: this VM's neighbours make single executions
    // differ (the dispersion), and more of them estimate it better.
    o.executions = 5;
    measure_options m;
    const auto spec = spec_of("checksum", example_baseline + " " + example_rounds,
                              example_regressed + " " + example_rounds);
    const auto a = profile_benchmark(spec, m, o);
    INFO(error_ids(a));
    CHECK(a.errors.empty());
    REQUIRE(a.perf.has_value());
    const auto& p = *a.perf;
    CHECK(p.event == profile_event("perf"));
    CHECK(p.executions == 5);
    // Hundreds of samples per execution; never a timing assertion beyond that.
    CHECK(p.samples_before > 500);
    CHECK(p.samples_after > 500);
    REQUIRE(!p.top.empty());

    std::string listing;
    for (const auto& r : p.top) {
        listing += fmt::format("{} {} -> {} [{:.2f}, {:.2f}] {}\n", r.name, r.before, r.after, r.interval->first,
                               r.interval->second, *r.significant ? "significant" : "");
    }
    INFO(listing);
    const auto* grown = top_grown(p);
    REQUIRE(grown != nullptr);
    CHECK(is_copy(grown->name));
    CHECK(*grown->significant);
    CHECK(grown->interval->first > 0); // percentage points: the copy is ~20% of the candidate
    CHECK(grown->before == 0);
    CHECK(grown->share > 0.3);
    // Nothing else grew as much: every other interval lies below the copy's.
    // Not "nothing else grew significantly": the copy's page faults are
    // kernel work, and on a paravirtualised VM (seen: PVM guests) the
    // kernel's interrupt-enable path pvm_irq_enable grows significantly
    // with them, 164 -> 438 samples [2.5, 6.0] pp, a true consequence.
    for (const auto& r : p.top) {
        CAPTURE(r.name);
        if (&r != grown) CHECK(r.interval->second < grown->interval->first);
    }

    // The artifacts: the SVG and both sides' folded stacks.
    REQUIRE(p.flame_graph.has_value());
    CHECK(*p.flame_graph == "checksum/flame.svg");
    const auto svg = model::read_text_file(o.artifacts / *p.flame_graph);
    CHECK(fs::exists(o.artifacts / "checksum" / "baseline.folded"));
    CHECK(fs::exists(o.artifacts / "checksum" / "candidate.folded"));
    // The copy's frame: red (red channel up, the others down).
    const auto at = svg.find("<title>" + grown->name + "\n");
    REQUIRE(at != std::string::npos);
    const auto fill = svg.find("fill=\"rgb(", at) + 10;
    int r = 0, g = 0, b = 0;
    REQUIRE(std::sscanf(svg.c_str() + fill, "%d,%d,%d", &r, &g, &b) == 3);
    CHECK(r > 225);
    CHECK(g < 150);
    CHECK(b < 150);
    // The baseline's process name (example-baselin) is renamed to the
    // candidate's (example-regress): the two meet in one tree.
    CHECK(svg.find("<title>example-baselin\n") == std::string::npos);
    CHECK(svg.find("<title>example-regress\n") != std::string::npos);
}

TEST_CASE("--profile A/A: the same program on both sides marks no function" * doctest::skip(examples_missing))
{
    scratch s;
    profile_options o;
    o.artifacts = s.path();
    const auto spec = spec_of("aa", example_baseline + " " + example_rounds, example_baseline + " " + example_rounds);
    const auto a = profile_benchmark(spec, measure_options{}, o);
    INFO(error_ids(a));
    REQUIRE(a.perf.has_value());
    std::string listing;
    for (const auto& r : a.perf->top) {
        listing += fmt::format("{} {} -> {} [{:.2f}, {:.2f}]\n", r.name, r.before, r.after, r.interval->first,
                               r.interval->second);
    }
    INFO(listing);
    for (const auto& r : a.perf->top) {
        CAPTURE(r.name);
        CHECK_FALSE(*r.significant);
        // The interval logic: not significant <=> it contains 0.
        CHECK(r.interval->first <= 0);
        CHECK(r.interval->second >= 0);
    }
}

TEST_CASE("--profile failures are attribution errors, never exceptions")
{
    scratch s;
    profile_options o;
    o.artifacts = s.path() / "artifacts";
    o.executions = 1;
    const auto loop = compile_loop(s.path(), 20'000'000).string();
    const auto spec = spec_of("bench", loop, loop);
    auto only_error = [](const gate::attribution& a) {
        INFO(error_ids(a));
        REQUIRE(a.errors.size() == 1);
        CHECK(a.errors[0].source == "perf");
        return a.errors[0];
    };

    SUBCASE("perf record refused (kernel.perf_event_paranoid)")
    {
        o.perf = refusing_perf(s.path()).string();
        const auto a = profile_benchmark(spec, measure_options{}, o);
        const auto e = only_error(a);
        CHECK(e.id == "profile.perf_refused");
        CHECK(e.message.find("benchmark 'bench', baseline side, profiled execution 1/1: perf record was refused by the "
                             "kernel (kernel.perf_event_paranoid = ") == 0);
        CHECK(e.message.find("sudo sysctl kernel.perf_event_paranoid=1") != std::string::npos);
        CHECK_FALSE(a.perf.has_value());
        CHECK_FALSE(fs::exists(o.artifacts / "bench" / "flame.svg"));
    }
    SUBCASE("perf missing")
    {
        o.perf = "/nonexistent/perf";
        const auto e = only_error(profile_benchmark(spec, measure_options{}, o));
        CHECK(e.id == "profile.perf_unavailable");
        CHECK(e.message.find("apt-get install linux-perf") != std::string::npos);
    }
    SUBCASE("perf script output that is not perf script output")
    {
        o.perf = write_script(s.path() / "perf",
                              "if [ \"$1\" = script ]; then printf '\\tffff main+0x1 (/bin/x)\\n'; exit 0; fi\n"
                              "exec " +
                                  real_perf() + " \"$@\"\n")
                     .string();
        const auto e = only_error(profile_benchmark(spec, measure_options{}, o));
        CHECK(e.id == "profile.bad_perf_script");
        CHECK(e.message.find("perf script's output could not be read: baseline-1.script:1: a stack frame outside a "
                             "sample") != std::string::npos);
    }
    SUBCASE("a profile above the size limit")
    {
        // 16 KB: about 170 samples' worth of this loop's perf script (~95
        // bytes each), which runs for 0.15-0.35 s (600-1400 samples).
        o.max_script_bytes = 16 * 1024;
        const auto big = spec_of("bench", compile_loop(s.path(), 200'000'000).string(), "true");
        const auto e = only_error(profile_benchmark(big, measure_options{}, o));
        CHECK(e.id == "profile.too_large");
        CHECK(e.message.find("exceeds the limit of 16 KB (--profile-max-mb): no profile") != std::string::npos);
    }
    SUBCASE("the benchmark fails under perf record")
    {
        const auto failing = spec_of("bench", "sh -c 'echo broken >&2; exit 3'", "true");
        const auto e = only_error(profile_benchmark(failing, measure_options{}, o));
        CHECK(e.id == "profile.record_failed");
        CHECK(e.message.find("exited with status 3") != std::string::npos);
        CHECK(e.message.find("| broken") != std::string::npos);
    }
    SUBCASE("artifacts that cannot be written: the attribution stays, without a flame graph")
    {
        std::ofstream(s.path() / "file") << "x";
        o.artifacts = s.path() / "file"; // a file where the directory should go
        const auto a = profile_benchmark(spec, measure_options{}, o);
        const auto e = only_error(a);
        CHECK(e.id == "profile.artifacts");
        REQUIRE(a.perf.has_value());
        CHECK_FALSE(a.perf->flame_graph.has_value());
    }
}

TEST_CASE("--profile of a stripped binary: said so, with the fix, and the attribution stays")
{
    scratch s;
    const auto plain = compile_loop(s.path(), 50'000'000);
    const auto stripped = compile_loop(s.path(), 50'000'000, true);
    profile_options o;
    o.artifacts = s.path();
    o.executions = 1;
    const auto a = profile_benchmark(spec_of("s", plain.string(), stripped.string()), measure_options{}, o);
    INFO(error_ids(a));
    REQUIRE(a.errors.size() == 1);
    CHECK(a.errors[0].id == "profile.stripped");
    CHECK(a.errors[0].message.find("candidate: " + stripped.string() + " (") != std::string::npos);
    CHECK(a.errors[0].message.find("the binary is stripped") != std::string::npos);
    CHECK(a.errors[0].message.find("build without stripping") != std::string::npos);
    REQUIRE(a.perf.has_value());
    // Its loop shows as [unknown]; the unstripped baseline's as spin.
    CHECK(row_named(*a.perf, "[unknown]") != nullptr);
    CHECK(row_named(*a.perf, "spin") != nullptr);
}

// The verdict and the exit code of perfgate run with --profile failing are
// those of the same run without --profile. Callgrind counts are
// deterministic, so the two runs' verdicts can be compared exactly.
TEST_CASE("perfgate run --profile: a failing profile changes neither the verdict nor the exit code" *
          doctest::skip(examples_missing))
{
    scratch s;
    const auto fake_dir = s.path() / "fakebin";
    fs::create_directories(fake_dir);
    refusing_perf(fake_dir);
    const char* path = std::getenv("PATH");
    const std::vector<std::pair<std::string, std::string>> env = {
        {"PATH", fake_dir.string() + ":" + (path ? path : "/usr/bin:/bin")}};
    // clang-format off
    const std::vector<std::string> args = {"run", "--backend", "callgrind", "--baseline", example_baseline + " 1",
                                           "--candidate", example_regressed + " 1", "--format", "json", "-q"};
    // clang-format on

    const auto plain = run_perfgate(args, s.path(), env);
    auto with_profile = args;
    with_profile.insert(with_profile.end(), {"--profile", "--profile-executions", "1"});
    const auto profiled = run_perfgate(with_profile, s.path(), env);
    INFO(plain.err);
    INFO(profiled.err);
    CHECK(plain.code == 1); // the copy: more instructions, a deterministic regression
    CHECK(profiled.code == plain.code);
    const auto jp = nlohmann::json::parse(plain.out);
    const auto jf = nlohmann::json::parse(profiled.out);
    CHECK(jf["verdict"] == jp["verdict"]);
    CHECK(jf["benchmarks"][0]["verdict"] == jp["benchmarks"][0]["verdict"]);
    // Without --profile: the callgrind side's attribution of the regression, no perf part.
    CHECK(jp["benchmarks"][0]["attribution"].contains("callgrind"));
    CHECK_FALSE(jp["benchmarks"][0]["attribution"].contains("perf"));
    const auto& attribution = jf["benchmarks"][0]["attribution"];
    CHECK_FALSE(attribution.contains("perf"));
    CHECK(attribution["callgrind"] == jp["benchmarks"][0]["attribution"]["callgrind"]);
    REQUIRE(attribution["errors"].size() == 1);
    CHECK(attribution["errors"][0]["source"] == "perf");
    CHECK(attribution["errors"][0]["id"] == "profile.perf_refused");
    // The warning is in the report (and, without -q, on stderr).
    bool warned = false;
    for (const auto& w : jf["warnings"]) warned |= w.get<std::string>().starts_with("profiling 'default' (perf): ");
    CHECK(warned);
}

TEST_CASE("perfgate run: the profile options need --profile")
{
    scratch s;
    const auto r = run_perfgate({"run", "--baseline", "true", "--candidate", "true", "--profile-executions", "2"},
                                s.path());
    CHECK(r.code == 2);
    CHECK(r.err.find("--profile-executions and --profile-max-mb apply to --profile only") != std::string::npos);
}

TEST_CASE("perfgate run --profile end to end: attribution in the JSON, the SVG under .perfgate/artifacts" *
          doctest::skip(examples_missing))
{
    scratch s;
    const auto r = run_perfgate({"run", "--backend", "rusage", "-r", "3", "--baseline",
                                 example_baseline + " " + example_rounds, "--candidate",
                                 example_regressed + " " + example_rounds, "--profile", "--format", "json"},
                                s.path());
    INFO(r.err);
    CHECK((r.code == 0 || r.code == 1 || r.code == 3));
    const auto j = nlohmann::json::parse(r.out);
    const auto& perf = j["benchmarks"][0]["attribution"]["perf"];
    CHECK(perf["executions"] == 3);
    CHECK(perf["flame_graph"] == "default/flame.svg");
    CHECK(fs::exists(s.path() / ".perfgate" / "artifacts" / "default" / "flame.svg"));
    CHECK(r.err.find("perfgate: default: profiling 3 execution(s) per side (perf record -g -e ") != std::string::npos);
    // The copy grew most (its significance is asserted with more executions
    // above), by a margin: kernel functions its page faults run grow too
    // (pvm_irq_enable on a PVM guest: ~4 pp against the copy's ~15 pp).
    double copy_change = 0, other_growth = 0;
    for (const auto& row : perf["top"]) {
        const double mid = (row["interval"][0].get<double>() + row["interval"][1].get<double>()) / 2;
        (is_copy(row["name"].get<std::string>())
             ? copy_change
             : other_growth) = std::max(is_copy(row["name"].get<std::string>()) ? copy_change : other_growth, mid);
    }
    CHECK(copy_change > 2 * other_growth);
}
