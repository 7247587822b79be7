#include "runner/check_env.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include <sched.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "support/process.hpp"
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "model/testbed.hpp"
#include "runner/testbed.hpp"

namespace fs = std::filesystem;
using namespace perfgate;
using namespace perfgate::runner;
using namespace perfgate::cli;
using perfgate::model::testbed_fingerprint;

namespace {

// A throw-away root holding sys/ and proc/ trees shaped like the kernel's,
// removed when the test ends.
class fake_root {
public:
    fake_root() : dir_(scratch_.path())
    {
        fs::create_directories(sys());
        fs::create_directories(proc());
    }

    [[nodiscard]] fs::path sys() const { return dir_ / "sys"; }
    [[nodiscard]] fs::path proc() const { return dir_ / "proc"; }
    [[nodiscard]] const fs::path& dir() const { return dir_; }

    // write("sys/devices/system/cpu/online", "0-3\n")
    void write(const std::string& rel, const std::string& content) const
    {
        fs::path p = dir_ / rel;
        fs::create_directories(p.parent_path());
        std::ofstream(p) << content;
    }
    void cpu(const std::string& rel, const std::string& content) const
    {
        write("sys/devices/system/cpu/" + rel, content);
    }
    // An executable shell script standing in for perf.
    [[nodiscard]] std::string script(const std::string& name, const std::string& body) const
    {
        fs::path p = dir_ / name;
        std::ofstream(p) << "#!/bin/sh\n" << body;
        fs::permissions(p, fs::perms::owner_all);
        return p.string();
    }

    // Options reading only this tree; no perf, no privileges, CPUs 0-3
    // allowed, so that each test controls exactly one check.
    [[nodiscard]] env_options options() const
    {
        env_options o;
        o.sys_root = sys();
        o.proc_root = proc();
        o.probe_perf = false;
        o.will_disable_aslr = false;
        o.privileged = false;
        o.allowed_cpus = [] { return std::optional<std::vector<int>>(std::vector<int>{0, 1, 2, 3}); };
        return o;
    }

private:
    perfgate::test::temp_dir scratch_{"perfgate-env"};
    fs::path dir_;
};

check find(const std::vector<check>& checks, std::string_view id)
{
    auto it = std::find_if(checks.begin(), checks.end(), [&](const check& c) { return c.id == id; });
    REQUIRE_MESSAGE(it != checks.end(), "no check " << id);
    return *it;
}

check run_one(const env_options& o, std::string_view id) { return find(check_environment(o), id); }

void check_warn(const check& c)
{
    CHECK(c.state == check_state::warn);
    CHECK_FALSE(c.hint.empty());
}

void check_unknown(const check& c)
{
    CHECK(c.state == check_state::unknown);
    CHECK_FALSE(c.hint.empty());
}

std::vector<int> real_affinity()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
    std::vector<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) out.push_back(c);
    }
    return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s)
{
    return std::find(v.begin(), v.end(), s) != v.end();
}

// A perf stand-in: `--version` answers; `stat -x, --log-fd 1 -e LIST --
// true` prints one CSV line per event on stdout (the log fd), <not
// supported> for the events named in UNSUPPORTED, and exits 129 like perf's
// parser for "bogus*" names.
std::string fake_perf(const fake_root& root, const std::string& unsupported)
{
    return root.script("perf-" + std::to_string(unsupported.size()), "UNSUPPORTED='" + unsupported + "'\n" + R"(
if [ "$1" = "--version" ]; then echo "perf version 9.9.fake"; exit 0; fi
while [ $# -gt 0 ] && [ "$1" != "-e" ]; do shift; done
LIST="$2"
for ev in $(echo "$LIST" | tr ',' ' '); do
  case "$ev" in bogus*) echo "event syntax error: '$ev'" >&2; exit 129;; esac
done
for ev in $(echo "$LIST" | tr ',' ' '); do
  case " $UNSUPPORTED " in
    *" $ev "*) echo "<not supported>,,$ev,0,100.00,," ;;
    *) echo "12,,$ev:u,1000,100.00,1.0,K/sec" ;;
  esac
done
echo ",,,,,0.04,stalled cycles per insn"
exit 0
)");
}

// Runs cmd_check_env with stdout captured.
int run_cmd(const argv_t& args, std::string& out)
{
    std::ostringstream captured;
    auto* old = std::cout.rdbuf(captured.rdbuf());
    struct restore {
        std::streambuf* buf;
        ~restore() { std::cout.rdbuf(buf); }
    } guard{old};
    int rc = cmd_check_env(args);
    out = captured.str();
    return rc;
}

} // namespace

TEST_CASE("check_env: parse_cpu_list")
{
    SUBCASE("ranges and single CPUs, sorted and unique")
    {
        CHECK(parse_cpu_list("0-3,6") == std::vector<int>{0, 1, 2, 3, 6});
        CHECK(parse_cpu_list("3,1,1") == std::vector<int>{1, 3});
        CHECK(parse_cpu_list(" 2 \n") == std::vector<int>{2});
        CHECK(parse_cpu_list("5-5") == std::vector<int>{5});
        CHECK(parse_cpu_list("8191") == std::vector<int>{8191});
    }
    SUBCASE("bad lists are usage errors quoting the text")
    {
        CHECK_THROWS_WITH_AS(parse_cpu_list("3-1"), doctest::Contains("range '3-1' is reversed"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list(""), doctest::Contains("it is empty"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list("a"), doctest::Contains("'a' is not a CPU number"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list("1,,2"), doctest::Contains("bad CPU list '1,,2'"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list("-1"), doctest::Contains("'-1' is not a CPU number"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list("1-"), doctest::Contains("'' is not a CPU number"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list("0x1"), doctest::Contains("'0x1'"), perfgate::error);
        CHECK_THROWS_WITH_AS(parse_cpu_list("9000"), doctest::Contains("above the kernel's limit"), perfgate::error);
        try {
            parse_cpu_list("2-x");
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "usage.bad_cpus");
            CHECK(std::string(e.what()).find("'2-x'") != std::string::npos);
        }
    }
    SUBCASE("format_cpu_list is the inverse")
    {
        CHECK(format_cpu_list({0, 1, 2, 3, 6, 8, 9}) == "0-3,6,8-9");
        CHECK(format_cpu_list({}).empty());
        CHECK(parse_cpu_list(format_cpu_list({1, 2, 5, 7, 8})) == std::vector<int>{1, 2, 5, 7, 8});
    }
}

TEST_CASE("check_env: cpu.governor")
{
    fake_root root;
    root.cpu("online", "0-1\n");
    SUBCASE("ok: performance everywhere")
    {
        root.cpu("cpu0/cpufreq/scaling_governor", "performance\n");
        root.cpu("cpu1/cpufreq/scaling_governor", "performance\n");
        auto c = run_one(root.options(), "cpu.governor");
        CHECK(c.state == check_state::ok);
        CHECK(c.value == "performance on cpus 0-1");
    }
    SUBCASE("warn: one CPU on powersave")
    {
        root.cpu("cpu0/cpufreq/scaling_governor", "performance\n");
        root.cpu("cpu1/cpufreq/scaling_governor", "powersave\n");
        auto c = run_one(root.options(), "cpu.governor");
        check_warn(c);
        CHECK(c.value.find("powersave on cpu 1") != std::string::npos);
        CHECK(c.hint == "sudo cpupower frequency-set -g performance");
    }
    SUBCASE("--cpus restricts the check to the benchmark CPUs")
    {
        root.cpu("cpu0/cpufreq/scaling_governor", "performance\n");
        root.cpu("cpu1/cpufreq/scaling_governor", "powersave\n");
        auto o = root.options();
        o.cpus = std::vector<int>{0};
        CHECK(run_one(o, "cpu.governor").state == check_state::ok);
        o.cpus = std::vector<int>{1};
        auto c = run_one(o, "cpu.governor");
        check_warn(c);
        CHECK(c.hint == "sudo cpupower -c 1 frequency-set -g performance");
    }
    SUBCASE("unknown: no cpufreq directory (VM)") { check_unknown(run_one(root.options(), "cpu.governor")); }
}

TEST_CASE("check_env: cpu.turbo")
{
    fake_root root;
    root.cpu("online", "0-1\n");
    SUBCASE("ok: intel_pstate no_turbo=1")
    {
        root.cpu("intel_pstate/no_turbo", "1\n");
        auto c = run_one(root.options(), "cpu.turbo");
        CHECK(c.state == check_state::ok);
        CHECK(c.value.find("turbo off") != std::string::npos);
    }
    SUBCASE("ok: cpufreq boost=0")
    {
        root.cpu("cpufreq/boost", "0\n");
        CHECK(run_one(root.options(), "cpu.turbo").state == check_state::ok);
    }
    SUBCASE("warn: intel_pstate no_turbo=0")
    {
        root.cpu("intel_pstate/no_turbo", "0\n");
        auto c = run_one(root.options(), "cpu.turbo");
        check_warn(c);
        CHECK(c.hint == "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo");
    }
    SUBCASE("warn: global cpufreq boost=1")
    {
        root.cpu("cpufreq/boost", "1\n");
        auto c = run_one(root.options(), "cpu.turbo");
        check_warn(c);
        CHECK(c.hint.find("cpufreq/boost") != std::string::npos);
    }
    SUBCASE("warn: per-CPU boost on one CPU")
    {
        root.cpu("cpu0/cpufreq/boost", "0\n");
        root.cpu("cpu1/cpufreq/boost", "1\n");
        auto c = run_one(root.options(), "cpu.turbo");
        check_warn(c);
        CHECK(c.value.find("boost on for cpu 1") != std::string::npos);
        CHECK(c.hint == "echo 0 | sudo tee /sys/devices/system/cpu/cpu1/cpufreq/boost");
    }
    SUBCASE("unknown: no knob; a garbage value is not a state")
    {
        check_unknown(run_one(root.options(), "cpu.turbo"));
        root.cpu("intel_pstate/no_turbo", "maybe\n");
        check_unknown(run_one(root.options(), "cpu.turbo"));
    }
}

TEST_CASE("check_env: cpu.smt")
{
    fake_root root;
    SUBCASE("ok: off")
    {
        root.cpu("smt/control", "off\n");
        root.cpu("smt/active", "0\n");
        CHECK(run_one(root.options(), "cpu.smt").state == check_state::ok);
    }
    SUBCASE("ok: CPU without SMT")
    {
        root.cpu("smt/control", "notsupported\n");
        auto c = run_one(root.options(), "cpu.smt");
        CHECK(c.state == check_state::ok);
        CHECK(c.value == "control=notsupported");
    }
    SUBCASE("warn: on and active")
    {
        root.cpu("smt/control", "on\n");
        root.cpu("smt/active", "1\n");
        auto c = run_one(root.options(), "cpu.smt");
        check_warn(c);
        CHECK(c.hint.find("smt/control") != std::string::npos);
    }
    SUBCASE("unknown: no files, or an architecture without SMT control")
    {
        check_unknown(run_one(root.options(), "cpu.smt"));
        root.cpu("smt/control", "notimplemented\n");
        check_unknown(run_one(root.options(), "cpu.smt"));
    }
}

TEST_CASE("check_env: cpu.isolated")
{
    fake_root root;
    root.cpu("online", "0-3\n");
    SUBCASE("ok: the requested CPUs are isolated")
    {
        root.cpu("isolated", "2-3\n");
        root.cpu("nohz_full", "2-3\n");
        root.write("proc/cmdline", "BOOT_IMAGE=/vmlinuz isolcpus=2-3 nohz_full=2-3\n");
        auto o = root.options();
        o.cpus = std::vector<int>{2, 3};
        auto c = run_one(o, "cpu.isolated");
        CHECK(c.state == check_state::ok);
        CHECK(c.value == "cpus 2-3 isolated (isolated: 2-3; nohz_full: 2-3)");
    }
    SUBCASE("ok: isolcpus= with flags on the command line")
    {
        root.cpu("isolated", "\n");
        root.write("proc/cmdline", "ro isolcpus=domain,managed_irq,1,3 quiet\n");
        auto o = root.options();
        o.cpus = std::vector<int>{3};
        CHECK(run_one(o, "cpu.isolated").state == check_state::ok);
    }
    SUBCASE("warn: requested CPUs are not the isolated ones")
    {
        root.cpu("isolated", "2-3\n");
        auto o = root.options();
        o.cpus = std::vector<int>{0, 2};
        auto c = run_one(o, "cpu.isolated");
        check_warn(c);
        CHECK(c.value.find("cpu 0 not isolated") != std::string::npos);
        CHECK(c.hint == "use --cpus 2-3");
    }
    SUBCASE("warn: nothing isolated; arguments after -- belong to init")
    {
        root.cpu("isolated", "\n");
        root.write("proc/cmdline", "ro quiet -- isolcpus=1\n");
        auto c = run_one(root.options(), "cpu.isolated");
        check_warn(c);
        CHECK(c.value == "none isolated");
        CHECK(c.hint.find("isolcpus=") != std::string::npos);
    }
    SUBCASE("unknown: neither cpu/isolated nor /proc/cmdline")
    {
        check_unknown(run_one(root.options(), "cpu.isolated"));
    }
}

TEST_CASE("check_env: cpu.affinity")
{
    fake_root root;
    root.cpu("online", "0-7\n");
    auto o = root.options();
    SUBCASE("ok: requested CPUs allowed")
    {
        o.cpus = std::vector<int>{1, 3};
        auto c = run_one(o, "cpu.affinity");
        CHECK(c.state == check_state::ok);
        CHECK(c.value == "cpus 1,3 allowed");
    }
    SUBCASE("ok: the real sched_getaffinity allows one of its own CPUs")
    {
        o.allowed_cpus = nullptr;
        o.cpus = std::vector<int>{real_affinity().front()};
        CHECK(run_one(o, "cpu.affinity").state == check_state::ok);
    }
    SUBCASE("warn: a CPU outside the cpuset")
    {
        o.cpus = std::vector<int>{2, 5};
        auto c = run_one(o, "cpu.affinity");
        check_warn(c);
        CHECK(c.value == "cpu 5 not allowed (allowed: 0-3)");
    }
    SUBCASE("warn: an offline CPU")
    {
        root.cpu("online", "0-1\n");
        o.cpus = std::vector<int>{3};
        auto c = run_one(o, "cpu.affinity");
        check_warn(c);
        CHECK(c.value.find("cpu 3 offline") != std::string::npos);
    }
    SUBCASE("unknown: affinity cannot be read")
    {
        o.allowed_cpus = [] { return std::optional<std::vector<int>>{}; };
        check_unknown(run_one(o, "cpu.affinity"));
    }
}

TEST_CASE("check_env: cpu.load")
{
    fake_root root;
    root.cpu("online", "0-3\n");
    SUBCASE("ok: idle")
    {
        root.write("proc/loadavg", "0.10 0.20 0.30 1/100 1234\n");
        auto c = run_one(root.options(), "cpu.load");
        CHECK(c.state == check_state::ok);
        CHECK(c.value.find("0.10 0.20 0.30 on 4 CPUs") != std::string::npos);
    }
    SUBCASE("warn: busy (above a quarter of 4 CPUs)")
    {
        root.write("proc/loadavg", "1.50 0.20 0.30 3/100 1234\n");
        check_warn(run_one(root.options(), "cpu.load"));
    }
    SUBCASE("unknown: missing or unreadable")
    {
        check_unknown(run_one(root.options(), "cpu.load"));
        root.write("proc/loadavg", "garbage\n");
        check_unknown(run_one(root.options(), "cpu.load"));
    }
}

TEST_CASE("check_env: aslr")
{
    fake_root root;
    auto o = root.options();
    SUBCASE("ok: off system-wide")
    {
        root.write("proc/sys/kernel/randomize_va_space", "0\n");
        CHECK(run_one(o, "aslr").state == check_state::ok);
    }
    SUBCASE("warn: on, and perfgate will not disable it")
    {
        root.write("proc/sys/kernel/randomize_va_space", "2\n");
        auto c = run_one(o, "aslr");
        check_warn(c);
        CHECK(c.hint == "sudo sysctl kernel.randomize_va_space=0");
    }
    SUBCASE("on, and perfgate disables it per process: ok exactly when personality() allows it")
    {
        root.write("proc/sys/kernel/randomize_va_space", "2\n");
        o.will_disable_aslr = true;
        auto c = run_one(o, "aslr");
        CHECK(c.state == (can_disable_aslr() ? check_state::ok : check_state::warn));
    }
    SUBCASE("unknown: missing") { check_unknown(run_one(o, "aslr")); }
}

TEST_CASE("check_env: perf.paranoid")
{
    fake_root root;
    auto o = root.options();
    SUBCASE("ok: 1")
    {
        root.write("proc/sys/kernel/perf_event_paranoid", "1\n");
        CHECK(run_one(o, "perf.paranoid").state == check_state::ok);
    }
    SUBCASE("ok: 2 but privileged")
    {
        root.write("proc/sys/kernel/perf_event_paranoid", "2\n");
        o.privileged = true;
        CHECK(run_one(o, "perf.paranoid").state == check_state::ok);
    }
    SUBCASE("warn: 2 and 4 unprivileged")
    {
        root.write("proc/sys/kernel/perf_event_paranoid", "2\n");
        auto c = run_one(o, "perf.paranoid");
        check_warn(c);
        CHECK(c.hint == "sudo sysctl kernel.perf_event_paranoid=1");
        CHECK(c.value.find(":u") != std::string::npos);
        root.write("proc/sys/kernel/perf_event_paranoid", "4\n");
        check_warn(run_one(o, "perf.paranoid"));
    }
    SUBCASE("unknown: missing") { check_unknown(run_one(o, "perf.paranoid")); }
}

TEST_CASE("check_env: perf.available and perf.events")
{
    fake_root root;
    auto o = root.options();
    SUBCASE("unknown: probing off")
    {
        auto checks = check_environment(o);
        check_unknown(find(checks, "perf.available"));
        check_unknown(find(checks, "perf.events"));
    }
    SUBCASE("warn: perf not installed; events then unknown")
    {
        o.probe_perf = true;
        o.perf_binary = (root.dir() / "no-such-perf").string();
        auto checks = check_environment(o);
        auto a = find(checks, "perf.available");
        check_warn(a);
        CHECK(a.value.find("no-such-perf") != std::string::npos);
        CHECK(a.hint.find("linux-perf") != std::string::npos);
        check_unknown(find(checks, "perf.events"));
    }
    SUBCASE("ok: a perf with hardware counters")
    {
        o.probe_perf = true;
        o.perf_binary = fake_perf(root, "");
        auto checks = check_environment(o);
        auto a = find(checks, "perf.available");
        CHECK(a.state == check_state::ok);
        CHECK(a.value == "perf version 9.9.fake");
        auto e = find(checks, "perf.events");
        CHECK(e.state == check_state::ok);
        CHECK(e.value.find("cycles,instructions") != std::string::npos);
    }
    SUBCASE("warn: no PMU")
    {
        o.probe_perf = true;
        o.perf_binary = fake_perf(root, "cycles instructions branch-misses cache-misses");
        auto e = run_one(o, "perf.events");
        check_warn(e);
        CHECK(e.value.find("not supported: cycles,instructions,branch-misses,cache-misses") != std::string::npos);
        CHECK(e.hint.find("--backend callgrind") != std::string::npos);
    }
    SUBCASE("warn: not even task-clock")
    {
        o.probe_perf = true;
        o.perf_binary = fake_perf(root, "task-clock page-faults context-switches cpu-migrations cycles instructions");
        auto e = run_one(o, "perf.events");
        check_warn(e);
        CHECK(e.hint.find("perf_event_paranoid") != std::string::npos);
    }
}

TEST_CASE("check_env: virtualization")
{
    fake_root root;
    SUBCASE("ok: no hypervisor flag")
    {
        root.write("proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU\nflags\t\t: fpu vme sse2 avx2\n");
        auto c = run_one(root.options(), "virtualization");
        CHECK(c.state == check_state::ok);
        CHECK(c.value == "bare metal (no hypervisor CPU flag)");
    }
    SUBCASE("warn: hypervisor flag, named by DMI")
    {
        root.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu hypervisor sse2\n");
        root.write("sys/class/dmi/id/sys_vendor", "QEMU\n");
        root.write("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
        auto c = run_one(root.options(), "virtualization");
        check_warn(c);
        CHECK(c.value.find("QEMU Standard PC") != std::string::npos);
    }
    SUBCASE("warn: no flags line (ARM) but a VM's DMI vendor")
    {
        root.write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd\n");
        root.write("sys/class/dmi/id/sys_vendor", "Microsoft Corporation\n");
        root.write("sys/class/dmi/id/product_name", "Virtual Machine\n");
        check_warn(run_one(root.options(), "virtualization"));
    }
    SUBCASE("unknown: no flags line and no DMI")
    {
        check_unknown(run_one(root.options(), "virtualization"));
        root.write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd\n");
        check_unknown(run_one(root.options(), "virtualization"));
    }
}

TEST_CASE("check_env: an empty root: every check is unknown or a documented default, none throws")
{
    fake_root root;
    auto o = root.options();
    std::vector<check> checks;
    REQUIRE_NOTHROW(checks = check_environment(o));
    CHECK(checks.size() == 11);
    for (const auto& c : checks) {
        CAPTURE(c.id);
        // Affinity comes from the process, not the tree.
        if (c.id == "cpu.affinity") continue;
        // Without any sysfs the isolation check still knows nothing.
        CHECK(c.state == check_state::unknown);
        CHECK_FALSE(c.hint.empty());
    }
}

TEST_CASE("check_env: probe_events against the real perf")
{
    SUBCASE("task-clock is supported; a bogus name is invalid, not a crash")
    {
        auto probe = probe_events({"task-clock", "bogus-event-xyz", "page-faults"});
        CHECK(contains(probe.supported, "task-clock"));
        CHECK(contains(probe.supported, "page-faults"));
        CHECK(probe.invalid == std::vector<std::string>{"bogus-event-xyz"});
        CHECK_FALSE(contains(probe.supported, "bogus-event-xyz"));
    }
    SUBCASE("a hardware event lands in exactly one list (PMU or not)")
    {
        auto probe = probe_events({"task-clock", "cycles", "task-clock"});
        CHECK(contains(probe.supported, "task-clock"));
        CHECK(contains(probe.supported, "cycles") != contains(probe.unsupported, "cycles"));
        CHECK(probe.supported.size() + probe.unsupported.size() == 2); // duplicates probed once
    }
    SUBCASE("probe_supported_events is the supported subset")
    {
        CHECK(contains(probe_supported_events({"task-clock", "bogus-event-xyz"}), "task-clock"));
    }
    SUBCASE("no candidates: nothing to run") { CHECK(probe_supported_events({}, "/nonexistent/perf").empty()); }
    SUBCASE("a missing perf is env.perf_unavailable naming it")
    {
        CHECK_THROWS_WITH_AS(probe_events({"task-clock"}, "/nonexistent/perf"),
                             doctest::Contains("cannot execute '/nonexistent/perf'"), perfgate::error);
        try {
            probe_events({"task-clock"}, "/nonexistent/perf");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "env.perf_unavailable");
        }
    }
}

TEST_CASE("check_env: probe_events parsing with a fake perf")
{
    fake_root root;
    SUBCASE(":u suffixes, <not supported>, metric-only lines")
    {
        auto probe = probe_events({"task-clock", "cycles"}, fake_perf(root, "cycles"));
        CHECK(probe.supported == std::vector<std::string>{"task-clock"});
        CHECK(probe.unsupported == std::vector<std::string>{"cycles"});
        CHECK(probe.invalid.empty());
    }
    SUBCASE("a rejected batch is probed one event at a time")
    {
        auto probe = probe_events({"task-clock", "bogus-1", "cycles"}, fake_perf(root, "cycles"));
        CHECK(probe.supported == std::vector<std::string>{"task-clock"});
        CHECK(probe.unsupported == std::vector<std::string>{"cycles"});
        CHECK(probe.invalid == std::vector<std::string>{"bogus-1"});
    }
    SUBCASE("hybrid CPUs print cpu_core/cycles/")
    {
        auto perf = root.script("perf-hybrid", R"(echo "1000,,cpu_core/cycles/,100,100.00,,"
echo "<not counted>,,cpu_atom/cycles/,0,0.00,,"
echo "<not supported>,,cpu_core/cycles-ct/,0,100.00,,"
)");
        auto probe = probe_events({"cycles", "cycles-ct"}, perf);
        CHECK(probe.supported == std::vector<std::string>{"cycles"});
        CHECK(probe.unsupported == std::vector<std::string>{"cycles-ct"});
    }
    SUBCASE("a wrapper without its perf (exit 127) is env.perf_unavailable")
    {
        auto perf = root.script("perf-wrapper", "echo 'WARNING: perf not found for kernel 6.99' >&2\nexit 127\n");
        CHECK_THROWS_WITH_AS(probe_events({"task-clock"}, perf), doctest::Contains("perf not found for kernel 6.99"),
                             perfgate::error);
        env_options o = root.options();
        o.probe_perf = true;
        o.perf_binary = perf;
        check_warn(run_one(o, "perf.available"));
    }
    SUBCASE("an event perf prints nothing for is unsupported")
    {
        auto perf = root.script("perf-silent", "exit 0\n");
        auto probe = probe_events({"task-clock"}, perf);
        CHECK(probe.unsupported == std::vector<std::string>{"task-clock"});
    }
}

TEST_CASE("check_env: to_json and render_text")
{
    std::vector<check> checks = {
        {"cpu.governor", "CPU frequency governor", check_state::ok, "performance on cpus 0-1", ""},
        {"cpu.turbo", "Turbo / boost", check_state::warn, "cpufreq/boost=1 (boost on)",
         "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"},
        {"cpu.smt", "SMT (hyper-threading)", check_state::unknown, "no smt/control or smt/active", "cannot tell"},
    };
    SUBCASE("JSON shape")
    {
        auto j = to_json(checks);
        CHECK(j["schema"] == "perfgate.environment/v1");
        CHECK(j["summary"] == nlohmann::json{{"ok", 1}, {"warn", 1}, {"unknown", 1}});
        REQUIRE(j["checks"].size() == 3);
        CHECK(j["checks"][1] == nlohmann::json{{"id", "cpu.turbo"},
                                               {"title", "Turbo / boost"},
                                               {"state", "warn"},
                                               {"value", "cpufreq/boost=1 (boost on)"},
                                               {"hint", "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"}});
        CHECK(j["checks"][2]["state"] == "unknown");
    }
    SUBCASE("text: hints under warn and unknown; colour only when asked")
    {
        auto plain = render_text(checks, false);
        CHECK(plain.find("warn     Turbo / boost") != std::string::npos);
        CHECK(plain.find("hint: echo 0 | sudo tee") != std::string::npos);
        CHECK(plain.find("hint: cannot tell") != std::string::npos);
        CHECK(plain.find("1 ok, 1 warn, 1 unknown") != std::string::npos);
        CHECK(plain.find("\x1b[") == std::string::npos);
        CHECK(render_text(checks, true).find("\x1b[33mwarn") != std::string::npos);
    }
    SUBCASE("any_warning")
    {
        CHECK(any_warning(checks));
        checks.erase(checks.begin() + 1);
        CHECK_FALSE(any_warning(checks));
    }
}

TEST_CASE("check_env: perfgate check-env")
{
    fake_root root;
    const int cpu = real_affinity().front();
    const std::string cpu_text = std::to_string(cpu);
    // A quiet, well-tuned bare-metal machine for CPU `cpu`.
    root.cpu("online", cpu == 0 ? "0\n" : "0-" + cpu_text + "\n");
    root.cpu("cpu" + cpu_text + "/cpufreq/scaling_governor", "performance\n");
    root.cpu("intel_pstate/no_turbo", "1\n");
    root.cpu("smt/control", "off\n");
    root.cpu("smt/active", "0\n");
    root.cpu("isolated", cpu_text + "\n");
    root.write("proc/cmdline", "ro isolcpus=" + cpu_text + "\n");
    root.write("proc/loadavg", "0.00 0.00 0.00 1/50 99\n");
    root.write("proc/sys/kernel/randomize_va_space", "0\n");
    root.write("proc/sys/kernel/perf_event_paranoid", "1\n");
    root.write("proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2\n");
    const argv_t base = {"--sys-root", root.sys().string(), "--proc-root", root.proc().string(),
                         "--perf",     fake_perf(root, ""), "--cpus",      cpu_text};

    SUBCASE("--strict passes (0) when nothing warns; JSON lists every check")
    {
        argv_t args = base;
        args.insert(args.end(), {"--strict", "--format", "json"});
        std::string out;
        CHECK(run_cmd(args, out) == exit_pass);
        auto j = nlohmann::json::parse(out);
        CHECK(j["summary"]["warn"] == 0);
        CHECK(j["summary"]["unknown"] == 0);
        CHECK(j["checks"].size() == 11);
    }
    SUBCASE("--strict exits 4 on a warn; without it the exit is 0")
    {
        root.cpu("cpu" + cpu_text + "/cpufreq/scaling_governor", "powersave\n");
        argv_t args = base;
        std::string out;
        CHECK(run_cmd(args, out) == exit_pass);
        CHECK(out.find("powersave on cpu " + cpu_text) != std::string::npos);
        CHECK(out.find("hint: sudo cpupower -c " + cpu_text + " frequency-set -g performance") != std::string::npos);
        args.push_back("--strict");
        CHECK(run_cmd(args, out) == exit_measurement);
    }
    SUBCASE("PERFGATE_SYSFS_ROOT / PERFGATE_PROCFS_ROOT replace the roots")
    {
        REQUIRE(::setenv("PERFGATE_SYSFS_ROOT", root.sys().c_str(), 1) == 0);
        REQUIRE(::setenv("PERFGATE_PROCFS_ROOT", root.proc().c_str(), 1) == 0);
        auto o = default_env_options();
        ::unsetenv("PERFGATE_SYSFS_ROOT");
        ::unsetenv("PERFGATE_PROCFS_ROOT");
        CHECK(o.sys_root == root.sys());
        CHECK(o.proc_root == root.proc());
        CHECK(default_env_options().sys_root == "/sys");
    }
    SUBCASE("usage errors")
    {
        std::string out;
        CHECK_THROWS_WITH_AS(run_cmd({"--format", "xml"}, out), "--format: expected text or json, got 'xml'",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(run_cmd({"--cpus", "1-0"}, out), doctest::Contains("range '1-0' is reversed"),
                             perfgate::error);
        CHECK_THROWS_WITH_AS(run_cmd({"--bogus"}, out), doctest::Contains("unknown option --bogus"), perfgate::error);
        try {
            run_cmd({"--cpus", "x"}, out);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "usage.bad_cpus");
            CHECK(exit_code_for(e.id()) == exit_usage);
        }
    }
    SUBCASE("--help")
    {
        std::string out;
        CHECK(run_cmd({"--help"}, out) == exit_pass);
        CHECK(out.find("Usage: perfgate check-env [--cpus LIST] [--strict] [--format text|json]") == 0);
    }
}

TEST_CASE("check_env: testbed")
{
    SUBCASE("fingerprint: SHA-256 prefix of cpu|cores|kernel|name")
    {
        perfgate::model::testbed_info t{"ci-1", "AMD EPYC 7B13", 2, "6.1.0-18-amd64", ""};
        // python3 -c "import hashlib; print(hashlib.sha256(b'AMD EPYC 7B13|2|6.1.0-18-amd64|ci-1').hexdigest()[:16])"
        CHECK(testbed_fingerprint(t) == "c1d441d934659f74");
        auto other = t;
        other.cores = 4;
        CHECK(testbed_fingerprint(other) != testbed_fingerprint(t));
        other = t;
        other.name = "ci-2";
        CHECK(testbed_fingerprint(other) != testbed_fingerprint(t));
    }
    SUBCASE("detected from a fake tree")
    {
        fake_root root;
        root.write("proc/cpuinfo",
                   "processor\t: 0\nmodel name\t: Test CPU 3000\nprocessor\t: 1\nmodel name\t: Test CPU 3000\n");
        root.cpu("online", "0-7\n");
        auto t = detect_testbed("bench-1", root.sys(), root.proc());
        utsname u{};
        REQUIRE(::uname(&u) == 0);
        CHECK(t.cpu == "Test CPU 3000");
        CHECK(t.cores == 8);
        CHECK(t.kernel == u.release);
        CHECK(t.name == "bench-1");
        CHECK(t.fingerprint == testbed_fingerprint(t));
        CHECK(t.fingerprint.size() == 16);
    }
    SUBCASE("ARM cpuinfo, missing files")
    {
        fake_root root;
        root.write("proc/cpuinfo", "processor\t: 0\nFeatures\t: fp\nHardware\t: BCM2835\n");
        CHECK(detect_testbed("x", root.sys(), root.proc()).cpu == "BCM2835");
        fake_root empty;
        auto t = detect_testbed("x", empty.sys(), empty.proc());
        CHECK(t.cpu == "unknown");
        CHECK(t.cores >= 1);
    }
    SUBCASE("this machine: name defaults to the hostname")
    {
        auto t = detect_testbed();
        char host[256] = {};
        REQUIRE(::gethostname(host, sizeof host - 1) == 0);
        CHECK(t.name == host);
        CHECK(t.cores >= 1);
        CHECK_FALSE(t.cpu.empty());
        CHECK(detect_testbed().fingerprint == t.fingerprint); // stable
    }
}
