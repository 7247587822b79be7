#include "capture/perf_csv.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/error.hpp"

using perfgate::capture::parse_perf_stat;
using perfgate::capture::perf_capture;
using perfgate::capture::read_perf_stat;

namespace {

const std::filesystem::path data_dir = std::filesystem::path(PERFGATE_TESTDATA_DIR) / "perf-stat";

perf_capture load(const char* name) { return read_perf_stat(data_dir / name); }

// Reading of `event` in run `run`; fails the test if the event is missing.
const perfgate::capture::reading& at(const perf_capture& c, std::string_view event, std::size_t run = 0)
{
    auto e = c.find(event);
    REQUIRE_MESSAGE(e.has_value(), "no event " << event);
    REQUIRE(run < c.runs.size());
    REQUIRE(*e < c.runs[run].size());
    return c.runs[run][*e];
}

std::vector<std::string> names(const perf_capture& c)
{
    std::vector<std::string> out;
    for (const auto& e : c.events) out.push_back(e.name);
    return out;
}

// The perfgate::error thrown by parsing text, or a failed check.
perfgate::error parse_error(std::string_view text, std::string_view source = "t.csv")
{
    try {
        parse_perf_stat(text, source);
    } catch (const perfgate::error& e) {
        return e;
    }
    FAIL("parsing did not throw: " << text);
    return perfgate::error("none", "none");
}

} // namespace

TEST_CASE("real captures: plain single runs")
{
    SUBCASE("single-run.csv: 10 events, 6 unsupported hardware events absent, never 0")
    {
        auto c = load("single-run.csv");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults", "context-switches", "cpu-migrations",
                                                   "cycles", "instructions", "branches", "branch-misses",
                                                   "cache-references", "cache-misses"});
        CHECK_FALSE(c.summary_only);
        CHECK(c.warnings.empty());
        CHECK(c.events[0].unit == "msec");
        CHECK(c.events[1].unit == "");
        CHECK(at(c, "task-clock").value == doctest::Approx(2.27));
        CHECK(at(c, "page-faults").value == 64.0);
        CHECK(at(c, "context-switches").value == 1.0);
        CHECK(at(c, "cpu-migrations").value == 0.0); // a real zero stays a zero
        std::size_t absent = 0;
        for (const auto& r : c.runs[0]) {
            if (!r.value) ++absent;
            CHECK(r.pcnt_running == 100.0);
            CHECK_FALSE(r.variance_pct);
        }
        CHECK(absent == 6);
        CHECK_FALSE(at(c, "cycles").value);
    }
    SUBCASE("exit-3.csv: a workload's own exit status does not matter to the parser")
    {
        auto c = load("exit-3.csv");
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults"});
        CHECK(at(c, "task-clock").value == doctest::Approx(0.61));
        CHECK(at(c, "page-faults").value == 63.0);
    }
    SUBCASE("nonroot-user-suffix.csv: :u kept in the name")
    {
        auto c = load("nonroot-user-suffix.csv");
        CHECK(names(c) == std::vector<std::string>{"task-clock:u", "page-faults:u", "instructions:u"});
        CHECK(at(c, "task-clock:u").value == doctest::Approx(0.49));
        CHECK(at(c, "page-faults:u").value == 46.0);
        CHECK_FALSE(at(c, "instructions:u").value);
        CHECK_FALSE(c.find("task-clock"));
    }
    SUBCASE("semicolon-separator.csv: -x';' detected, '.' decimals untouched")
    {
        auto c = load("semicolon-separator.csv");
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults"});
        CHECK(at(c, "task-clock").value == doctest::Approx(0.50));
        CHECK(c.events[0].unit == "msec");
        CHECK(at(c, "page-faults").value == 48.0);
    }
    SUBCASE("killed-by-signal.csv: the workload's `sh: Killed` is skipped with a warning")
    {
        auto c = load("killed-by-signal.csv");
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults"});
        CHECK(at(c, "task-clock").value == doctest::Approx(0.61));
        REQUIRE(c.warnings.size() == 1);
        CHECK(c.warnings[0].find("killed-by-signal.csv:1: ") != std::string::npos);
        CHECK(c.warnings[0].find("'sh: Killed'") != std::string::npos);
    }
}

TEST_CASE("real captures: several runs")
{
    SUBCASE("appended-10-runs.csv: one `# started on` block per run")
    {
        auto c = load("appended-10-runs.csv");
        CHECK(c.runs.size() == 10);
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults", "context-switches", "duration_time",
                                                   "instructions"});
        CHECK(c.events[3].unit == "ns");
        CHECK(at(c, "task-clock", 0).value == doctest::Approx(4.57));
        CHECK(at(c, "task-clock", 1).value == doctest::Approx(3.01));
        CHECK(at(c, "context-switches", 1).value == 1.0);
        CHECK(at(c, "duration_time", 3).value == 3194.0);
        for (std::size_t r = 0; r < 10; ++r) {
            CHECK(c.runs[r].size() == 5);
            CHECK_FALSE(at(c, "instructions", r).value);
            CHECK(at(c, "task-clock", r).value.has_value());
        }
        CHECK(c.warnings.empty());
    }
    SUBCASE("the same runs without headers: a repeated event starts the next run")
    {
        std::ifstream in(data_dir / "appended-10-runs.csv");
        std::string text, line;
        while (std::getline(in, line))
            if (line.rfind("# started on", 0) != 0) text += line + "\n";
        auto c = parse_perf_stat(text, "plain.csv");
        CHECK(c.runs.size() == 10);
        CHECK(c.events.size() == 5);
        CHECK(at(c, "task-clock", 0).value == doctest::Approx(4.57));
        auto ref = load("appended-10-runs.csv");
        for (std::size_t r = 0; r < 10; ++r) CHECK(at(c, "task-clock", r).value == at(ref, "task-clock", r).value);
    }
    SUBCASE("repeat-5-aggregate.csv: -r 5 means with variance%, summary only")
    {
        auto c = load("repeat-5-aggregate.csv");
        CHECK(c.summary_only);
        CHECK(c.runs.size() == 1);
        CHECK(c.events.size() == 10);
        CHECK(at(c, "task-clock").value == doctest::Approx(3.22));
        CHECK(at(c, "task-clock").variance_pct == doctest::Approx(8.23));
        CHECK(at(c, "page-faults").value == 65.0);
        CHECK(at(c, "page-faults").variance_pct == doctest::Approx(0.69));
        CHECK_FALSE(at(c, "cycles").value);
        CHECK(at(c, "cycles").variance_pct == 0.0);
    }
}

TEST_CASE("real captures: aggregation columns")
{
    SUBCASE("per-cpu-system-wide.csv: -A lines summed per event")
    {
        auto c = load("per-cpu-system-wide.csv");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock", "context-switches"});
        CHECK(at(c, "task-clock").value == doctest::Approx(102.80 + 102.83));
        CHECK(at(c, "context-switches").value == 5.0 + 31.0);
        CHECK(c.events[0].unit == "msec");
    }
    SUBCASE("per-core.csv: S0-D0-C0,1, lines summed per event")
    {
        auto c = load("per-core.csv");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock"});
        CHECK(at(c, "task-clock").value == doctest::Approx(102.21 + 102.15));
    }
    SUBCASE("per-CPU sums keep the lowest pcnt_running and absent stays absent")
    {
        auto c = parse_perf_stat("CPU0,10,,cycles,1000,100.00,,\n"
                                 "CPU1,20,,cycles,1000,60.00,,\n"
                                 "CPU0,<not supported>,,instructions,0,100.00,,\n"
                                 "CPU1,<not supported>,,instructions,0,100.00,,\n"
                                 "CPU0,10,,cycles,1000,100.00,,\n"
                                 "CPU1,20,,cycles,1000,100.00,,\n"
                                 "CPU0,<not supported>,,instructions,0,100.00,,\n"
                                 "CPU1,<not supported>,,instructions,0,100.00,,\n",
                                 "cpus.csv");
        CHECK(c.runs.size() == 2); // CPU0 cycles again: the next run
        CHECK(at(c, "cycles", 0).value == 30.0);
        CHECK(at(c, "cycles", 0).pcnt_running == 60.0);
        CHECK(at(c, "cycles", 1).pcnt_running == 100.0);
        CHECK_FALSE(at(c, "instructions", 0).value);
    }
    SUBCASE("per-CPU -r aggregates: variance% of the sum from the parts' standard errors")
    {
        auto c = parse_perf_stat("CPU0,300,,cycles,3.00%,1000,100.00,,\n"
                                 "CPU1,400,,cycles,3.00%,1000,100.00,,\n",
                                 "r.csv");
        CHECK(c.summary_only);
        // SE = sqrt(9^2 + 12^2) = 15 of a sum of 700.
        CHECK(at(c, "cycles").value == 700.0);
        CHECK(at(c, "cycles").variance_pct == doctest::Approx(15.0 / 700.0 * 100.0));
    }
    SUBCASE("per-CPU -r aggregates summing to zero: 0% as perf prints for a zero mean")
    {
        auto c = parse_perf_stat("CPU0,0,,context-switches,0.00%,1000,100.00,,\n"
                                 "CPU1,0,,context-switches,0.00%,1000,100.00,,\n"
                                 "CPU0,-3,,odd,5.00%,1000,100.00,,\n"
                                 "CPU1,3,,odd,5.00%,1000,100.00,,\n",
                                 "z.csv");
        CHECK(at(c, "context-switches").variance_pct == 0.0);
        CHECK(at(c, "odd").value == 0.0);
        CHECK(at(c, "odd").variance_pct == 0.0);
    }
}

TEST_CASE("real captures: hardware counters from machines with a PMU")
{
    SUBCASE("public-hybrid-multiplexed.csv: cpu_core/ names and a multiplexed 95%")
    {
        auto c = load("public-hybrid-multiplexed.csv");
        CHECK(names(c) == std::vector<std::string>{"context-switches", "cpu-migrations", "cpu_core/cycles/",
                                                   "cpu_atom/cycles/", "instructions"});
        CHECK(at(c, "cpu_core/cycles/").value == 1000.0);
        CHECK(at(c, "cpu_core/cycles/").pcnt_running == 100.0);
        CHECK(at(c, "cpu_atom/cycles/").value == 500.0);
        CHECK(at(c, "cpu_atom/cycles/").pcnt_running == doctest::Approx(95.00));
    }
    SUBCASE("public-continuation.csv: the metric-only line is skipped silently")
    {
        auto c = load("public-continuation.csv");
        CHECK(c.runs.size() == 1);
        CHECK(c.events.size() == 9);
        CHECK(c.warnings.empty());
        CHECK(at(c, "instructions").value == 425064193324.0);
        CHECK(at(c, "branches").value == 85795758030.0);
        CHECK(at(c, "branch-misses").value == 2404110819.0);
    }
    SUBCASE("public-hw-counters.csv: an energy event in Joules")
    {
        auto c = load("public-hw-counters.csv");
        CHECK(names(c) ==
              std::vector<std::string>{"instructions", "cycles", "ref-cycles", "power/energy-pkg/", "cpu-clock"});
        CHECK(c.events[3].unit == "Joules");
        CHECK(at(c, "power/energy-pkg/").value == doctest::Approx(485.05));
        CHECK(at(c, "cpu-clock").value == doctest::Approx(450266.06));
        CHECK(at(c, "cycles").value == 23663214967.0);
    }
}

TEST_CASE("real captures: interval mode")
{
    SUBCASE("interval-100ms.csv: padded timestamps, one interval")
    {
        auto c = load("interval-100ms.csv");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults", "cycles"});
        CHECK(at(c, "task-clock").value == doctest::Approx(80.31));
        CHECK(at(c, "page-faults").value == 65.0);
        CHECK_FALSE(at(c, "cycles").value);
    }
    SUBCASE("interval-summary.csv: the `summary` line wins over the intervals")
    {
        auto c = load("interval-summary.csv");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock"});
        CHECK(at(c, "task-clock").value == doctest::Approx(1.01));
        CHECK(c.warnings.empty());
    }
    SUBCASE("interval-summary.csv without its summary line: intervals summed, <not counted> skipped")
    {
        auto c = parse_perf_stat("     0.100246446,0.94,msec,task-clock,937208,100.00,0.009,CPUs utilized\n"
                                 "     0.200669405,<not counted>,msec,task-clock,0,100.00,,\n"
                                 "     0.251928047,0.07,msec,task-clock,70135,100.00,0.001,CPUs utilized\n",
                                 "i.csv");
        CHECK(c.runs.size() == 1);
        CHECK(at(c, "task-clock").value == doctest::Approx(1.01));
    }
    SUBCASE("public-interval-summary.csv: perf 6.1 summary lines without a timestamp")
    {
        auto c = load("public-interval-summary.csv");
        CHECK(c.runs.size() == 1);
        CHECK(c.events.size() == 8);
        CHECK(at(c, "cpu-clock").value == doctest::Approx(8013.48));
        CHECK(at(c, "page-faults").value == 184.0);
        // No summary line for these four in the published excerpt: intervals summed, and said so.
        CHECK(at(c, "cycles").value == 20574191.0);
        REQUIRE(c.warnings.size() == 1);
        CHECK(c.warnings[0].find("public-interval-summary.csv:1: interval run has no summary line for 4 event(s)") !=
              std::string::npos);
    }
    SUBCASE("a timestamp going back starts the next run")
    {
        auto c = parse_perf_stat("0.1,5,,page-faults,100,100.00,,\n"
                                 "0.2,7,,page-faults,100,100.00,,\n"
                                 "0.1,1,,page-faults,100,100.00,,\n",
                                 "i.csv");
        CHECK(c.runs.size() == 2);
        CHECK(at(c, "page-faults", 0).value == 12.0);
        CHECK(at(c, "page-faults", 1).value == 1.0);
    }
}

TEST_CASE("real captures: --json")
{
    SUBCASE("single-run.json")
    {
        auto c = load("single-run.json");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults", "cycles"});
        CHECK(c.events[0].unit == "msec");
        CHECK(at(c, "task-clock").value == doctest::Approx(0.529790));
        CHECK(at(c, "page-faults").value == 50.0);
        CHECK_FALSE(at(c, "cycles").value);
        CHECK_FALSE(c.summary_only);
    }
    SUBCASE("repeat-3.json: variance makes it summary only")
    {
        auto c = load("repeat-3.json");
        CHECK(c.summary_only);
        CHECK(at(c, "task-clock").value == doctest::Approx(0.466225));
        CHECK(at(c, "task-clock").variance_pct == doctest::Approx(10.62));
        CHECK(at(c, "page-faults").variance_pct == doctest::Approx(0.67));
    }
    SUBCASE("appended JSON runs, a metric-only object, per-CPU objects")
    {
        auto c = parse_perf_stat(
            "# started on Sun Nov 22 02:11:05 2026\n\n"
            "{\"cpu\" : \"0\", \"counter-value\" : \"2.000000\", \"unit\" : \"\", \"event\" : \"page-faults\", "
            "\"event-runtime\" : 1, \"pcnt-running\" : 100.00}\n"
            "{\"cpu\" : \"1\", \"counter-value\" : \"3.000000\", \"unit\" : \"\", \"event\" : \"page-faults\", "
            "\"event-runtime\" : 1, \"pcnt-running\" : 80.00}\n"
            "{\"metric-value\" : \"0.04\", \"metric-unit\" : \"stalled cycles per insn\"}\n"
            "# started on Sun Nov 22 02:11:06 2026\n\n"
            "{\"cpu\" : \"0\", \"counter-value\" : \"4.000000\", \"unit\" : \"\", \"event\" : \"page-faults\"}\n",
            "j.json");
        CHECK(c.runs.size() == 2);
        CHECK(at(c, "page-faults", 0).value == 5.0);
        CHECK(at(c, "page-faults", 0).pcnt_running == 80.0);
        CHECK(at(c, "page-faults", 1).value == 4.0);
        CHECK(c.warnings.empty());
    }
}

TEST_CASE("real captures: perf's own errors")
{
    SUBCASE("bad-event.txt")
    {
        const auto path = data_dir / "bad-event.txt";
        CHECK_THROWS_WITH_AS(read_perf_stat(path),
                             (path.string() + ":1: no perf stat counter lines; perf said: 'event syntax error: "
                                              "'..clock,bogus-event''")
                                 .c_str(),
                             perfgate::error);
        try {
            read_perf_stat(path);
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "ingest.bad_csv");
        }
    }
    SUBCASE("missing-command.txt")
    {
        const auto path = data_dir / "missing-command.txt";
        CHECK_THROWS_WITH_AS(read_perf_stat(path),
                             (path.string() +
                              ":1: no perf stat counter lines; perf said: 'Workload failed: No such file or directory'")
                                 .c_str(),
                             perfgate::error);
    }
}

TEST_CASE("separators, line endings and names")
{
    SUBCASE("tab separator and CRLF line endings")
    {
        auto c = parse_perf_stat("0.50\tmsec\ttask-clock\t504623\t100.00\t0.533\tCPUs utilized\r\n"
                                 "48\t\tpage-faults\t504623\t100.00\t95.121\tK/sec\r\n",
                                 "tab.csv");
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults"});
        CHECK(at(c, "task-clock").value == doctest::Approx(0.50));
        CHECK(at(c, "page-faults").value == 48.0);
        CHECK(c.warnings.empty());
    }
    SUBCASE("decimal comma under a locale, with -x';'")
    {
        auto c = parse_perf_stat("0,50;msec;task-clock;504623;100,00;0,533;CPUs utilized\n", "de.csv");
        CHECK(at(c, "task-clock").value == doctest::Approx(0.50));
    }
    SUBCASE("a metric unit containing the separator does not matter")
    {
        auto c = parse_perf_stat("0.50;msec;task-clock;504623;100.00;0.533;CPUs, utilized\n", "s.csv");
        CHECK(at(c, "task-clock").value == doctest::Approx(0.50));
    }
    SUBCASE("a PMU event whose terms contain the separator")
    {
        auto c = parse_perf_stat("1234,,cpu/event=0x3c,umask=0x00/,1000,100.00,,\n", "raw.csv");
        CHECK(names(c) == std::vector<std::string>{"cpu/event=0x3c,umask=0x00/"});
        CHECK(at(c, "cpu/event=0x3c,umask=0x00/").value == 1234.0);
    }
    SUBCASE("a cgroup column (-G)")
    {
        auto c = parse_perf_stat("5,,page-faults,/user.slice,100,100.00,,\n"
                                 "7,,page-faults,/system.slice,100,100.00,,\n",
                                 "cg.csv");
        CHECK(c.runs.size() == 1);
        CHECK(at(c, "page-faults").value == 12.0);
    }
    SUBCASE("no final newline, BOM, blank lines and other comments")
    {
        auto c = parse_perf_stat("\xEF\xBB\xBF# a comment\n\n\n64,,page-faults,1,100.00,,", "b.csv");
        CHECK(at(c, "page-faults").value == 64.0);
        CHECK(c.warnings.empty());
    }
    SUBCASE("negative and huge values are numbers as printed")
    {
        auto c = parse_perf_stat("-5,,weird,1,100.00,,\n1e300,,huge,1,100.00,,\n", "n.csv");
        CHECK(at(c, "weird").value == -5.0);
        CHECK(at(c, "huge").value == 1e300);
    }
    SUBCASE("a very long non-perf line is skipped, its quote bounded")
    {
        std::string text(1 << 20, 'x');
        text += "\n64,,page-faults,1,100.00,,\n";
        auto c = parse_perf_stat(text, "long.csv");
        CHECK(at(c, "page-faults").value == 64.0);
        REQUIRE(c.warnings.size() == 1);
        CHECK(c.warnings[0].find("long.csv:1: skipped non-perf line 'xxx") == 0);
        CHECK(c.warnings[0].size() < 200);
    }
    SUBCASE("a flood of non-perf lines: the first 20 listed, the rest counted")
    {
        std::string text;
        for (int i = 0; i < 25; ++i) text += "benchmark chatter\n";
        text += "64,,page-faults,1,100.00,,\n";
        auto c = parse_perf_stat(text, "noisy.csv");
        REQUIRE(c.warnings.size() == 21);
        CHECK(c.warnings[19].find("noisy.csv:20: ") == 0);
        CHECK(c.warnings[20] == "noisy.csv: skipped 5 more non-perf lines");
    }
    SUBCASE("find")
    {
        auto c = load("single-run.csv");
        CHECK(c.find("page-faults") == std::optional<std::size_t>(1));
        CHECK_FALSE(c.find("page"));
    }
}

TEST_CASE("reading line by line: comments, long lines, and the line that settles the separator")
{
    SUBCASE("before the first counter line a metric-only line is perf's and a foreign one is skipped")
    {
        auto c = parse_perf_stat("hello, world\n"
                                 ";;;;;0,04;stalled cycles per insn\n"
                                 "0,50;msec;task-clock;504623;100,00;0,533;CPUs utilized\n"
                                 "48,,page-faults,504623,100.00,95.121,K/sec\n",
                                 "t.csv");
        // ';' was settled by line 3: line 4, in ',', is then not perf's.
        CHECK(names(c) == std::vector<std::string>{"task-clock"});
        CHECK(at(c, "task-clock").value == doctest::Approx(0.50));
        CHECK(c.warnings ==
              std::vector<std::string>{"t.csv:1: skipped non-perf line 'hello, world'",
                                       "t.csv:4: skipped non-perf line '48,,page-faults,504623,100.00,95.121,K/sec'"});
    }
    SUBCASE("a comment line of any length is silent; a long JSON-looking line is skipped")
    {
        std::string text = "#" + std::string(1 << 20, 'x') + "\n{" + std::string(1 << 20, 'x') + "\n";
        text += "64,,page-faults,1,100.00,,\n";
        auto c = parse_perf_stat(text, "long.csv");
        CHECK(at(c, "page-faults").value == 64.0);
        REQUIRE(c.warnings.size() == 1);
        CHECK(c.warnings[0].find("long.csv:2: skipped non-perf line '{xxx") == 0);
    }
    SUBCASE("an indented `# started on` opens a block; CRLF and blank lines still count as lines")
    {
        auto e = parse_error("\r\n  # started on Thu Nov 26 12:00:00 2026\r\n\r\n"
                             "\t# started on Thu Nov 26 12:00:01 2026\r\n"
                             "64,,page-faults,1,100.00,,\r\n");
        CHECK(e.id() == "ingest.bad_csv");
        CHECK(std::string(e.what()) == "t.csv:2: this `# started on` block (one perf run) has no counter lines");
    }
}

TEST_CASE("malformed input is an ingest.bad_csv error naming source and line")
{
    SUBCASE("empty input")
    {
        for (const char* text : {"", "\n\n  \r\n"}) {
            auto e = parse_error(text);
            CHECK(e.id() == "ingest.bad_csv");
            CHECK(std::string(e.what()).find("t.csv:") == 0);
            CHECK(std::string(e.what()).find("empty input: no perf stat output") != std::string::npos);
        }
    }
    SUBCASE("only comments")
    {
        auto e = parse_error("# started on Sun Nov 22 02:11:05 2026\n\n# another\n");
        CHECK(e.id() == "ingest.bad_csv");
        CHECK(std::string(e.what()) == "t.csv:3: no perf stat counter lines (only comments or metric-only lines)");
    }
    SUBCASE("only metric continuation lines")
    {
        auto e = parse_error(",,,,,0.04,stalled cycles per insn\n,,,,,1.2,insn per cycle\n");
        CHECK(std::string(e.what()) == "t.csv:2: no perf stat counter lines (only comments or metric-only lines)");
    }
    SUBCASE("binary garbage")
    {
        const std::string garbage("\x01\x02\xff,\x00\x7f;;\n\x80\x81", 11);
        auto e = parse_error(garbage);
        CHECK(e.id() == "ingest.bad_csv");
        CHECK(std::string(e.what()) ==
              "t.csv:1: no perf stat counter lines; perf said: '\\x01\\x02\\xff,\\x00\\x7f;;'");
    }
    SUBCASE("a value that is not a number")
    {
        CHECK_THROWS_WITH_AS(parse_perf_stat("64,,page-faults,1,100.00,,\nabc,msec,task-clock,123,100.00,,\n", "v.csv"),
                             "v.csv:2: value 'abc' of event 'task-clock' is not a number", perfgate::error);
        CHECK_THROWS_WITH_AS(parse_perf_stat("nan,,page-faults,1,100.00,,\n", "v.csv"),
                             "v.csv:1: value 'nan' of event 'page-faults' is not a number", perfgate::error);
        CHECK_THROWS_WITH_AS(parse_perf_stat("1e400,,page-faults,1,100.00,,\n", "v.csv"),
                             "v.csv:1: value '1e400' of event 'page-faults' is not a number", perfgate::error);
        // With a timestamp column: not reinterpreted as event 'msec' in a cgroup.
        CHECK_THROWS_WITH_AS(parse_perf_stat("1.0,abc,msec,task-clock,123,100.00,,\n", "v.csv"),
                             "v.csv:1: value 'abc' of event 'task-clock' is not a number", perfgate::error);
        CHECK(parse_error("abc,msec,task-clock,123,100.00,,\n").id() == "ingest.bad_csv");
    }
    SUBCASE("an event missing from a later run")
    {
        const char* text = "# started on a\n"
                           "1,,page-faults,1,100.00,,\n"
                           "2,,context-switches,1,100.00,,\n"
                           "# started on b\n"
                           "1,,page-faults,1,100.00,,\n"
                           "2,,context-switches,1,100.00,,\n"
                           "# started on c\n"
                           "1,,page-faults,1,100.00,,\n";
        auto e = parse_error(text, "runs.csv");
        CHECK(e.id() == "ingest.bad_csv");
        CHECK(std::string(e.what()) ==
              "runs.csv:8: counters do not line up across runs: event 'context-switches' (run 1, line 3) is missing "
              "from run 3, which starts here");
    }
    SUBCASE("an event that only appears in a later run")
    {
        const char* text = "1,,page-faults,1,100.00,,\n"
                           "1,,page-faults,1,100.00,,\n"
                           "5,,cycles,1,100.00,,\n";
        CHECK_THROWS_WITH_AS(parse_perf_stat(text, "late.csv"),
                             "late.csv:3: counters do not line up across runs: event 'cycles' first appears in run 2 "
                             "but is missing from run 1 (line 1)",
                             perfgate::error);
    }
    SUBCASE("a `# started on` block with no counters names what perf said")
    {
        const char* text = "# started on a\n"
                           "1,,page-faults,1,100.00,,\n"
                           "# started on b\n"
                           "\n"
                           "Workload failed: No such file or directory\n"
                           "# started on c\n"
                           "1,,page-faults,1,100.00,,\n";
        CHECK_THROWS_WITH_AS(parse_perf_stat(text, "blk.csv"),
                             "blk.csv:3: this `# started on` block (one perf run) has no counter lines; perf said at "
                             "line 5: 'Workload failed: No such file or directory'",
                             perfgate::error);
    }
    SUBCASE("-r aggregates mixed with single runs")
    {
        const char* text = "3.22,msec,task-clock,8.23%,3219892,100.00,,\n"
                           "3.10,msec,task-clock,3219892,100.00,,\n";
        CHECK_THROWS_WITH_AS(parse_perf_stat(text, "mix.csv"),
                             "mix.csv:2: event 'task-clock' has no variance%, but line 1 is a -r aggregate with one: "
                             "-r N aggregates and single runs cannot be mixed in one capture",
                             perfgate::error);
    }
    SUBCASE("sums that overflow")
    {
        CHECK_THROWS_WITH_AS(parse_perf_stat("CPU0,1e308,,cycles,1,100.00,,\nCPU1,1e308,,cycles,1,100.00,,\n", "o.csv"),
                             "o.csv:1: event 'cycles': the sum of its values overflows", perfgate::error);
    }
    SUBCASE("JSON of an unknown shape")
    {
        CHECK_THROWS_WITH_AS(parse_perf_stat("{\"value\" : 1}\n", "j.json"),
                             "j.json:1: unknown JSON shape: no \"event\" field: '{\"value\" : 1}'", perfgate::error);
        CHECK_THROWS_WITH_AS(parse_perf_stat("{\"event\" : \"cycles\"}\n", "j.json"),
                             "j.json:1: unknown JSON shape: no \"counter-value\" field: '{\"event\" : \"cycles\"}'",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(
            parse_perf_stat("{\"event\" : \"cycles\", \"counter-value\" : \"1\", \"pcnt-running\" : \"x\"}\n",
                            "j.json"),
            "j.json:1: unknown JSON shape: \"pcnt-running\" is not a number: '{\"event\" : \"cycles\", "
            "\"counter-value\" : \"1\", \"pcnt-running\" : \"x\"}'",
            perfgate::error);
        CHECK_THROWS_WITH_AS(parse_perf_stat("{\"event\" : {\"a\" : [1, 2]}, \"counter-value\" : \"1\"}\n", "j.json"),
                             "j.json:1: unknown JSON shape (perf stat --json writes one flat object per line): "
                             "'{\"event\" : {\"a\" : [1, 2]}, \"counter-value\" : \"1\"}'",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(parse_perf_stat("{\"event\" : \"cycles\", \"counter-value\" : \"many\"}\n", "j.json"),
                             "j.json:1: value 'many' of event 'cycles' is not a number", perfgate::error);
    }
    SUBCASE("JSON that does not parse")
    {
        auto e = parse_error("{\"counter-value\" : \"0.5\", \"event\" : \n", "cut.json");
        CHECK(e.id() == "ingest.bad_csv");
        CHECK(std::string(e.what()).find("cut.json:1: not valid JSON: '{\"counter-value\"") == 0);
    }
    SUBCASE("deeply nested JSON costs nothing and is refused")
    {
        std::string text = "{\"a\":" + std::string(50000, '[') + "\n";
        CHECK(parse_error(text).id() == "ingest.bad_csv");
    }
}

TEST_CASE("read_perf_stat: unreadable files are ingest.unreadable")
{
    SUBCASE("missing file")
    {
        const auto path = data_dir / "no-such-file.csv";
        CHECK_THROWS_WITH_AS(read_perf_stat(path), (path.string() + ": cannot read: No such file or directory").c_str(),
                             perfgate::error);
        try {
            read_perf_stat(path);
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "ingest.unreadable");
        }
    }
    SUBCASE("a directory")
    {
        try {
            read_perf_stat(data_dir);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "ingest.unreadable");
            CHECK(std::string(e.what()) == data_dir.string() + ": cannot read: is a directory");
        }
    }
}

TEST_CASE("hand-written seeds of the fuzz corpus parse as intended")
{
    const auto corpus = std::filesystem::path(PERFGATE_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
    SUBCASE("JSON interval per-CPU objects")
    {
        auto c = read_perf_stat(corpus / "hand-json-interval-per-cpu.json");
        CHECK(c.runs.size() == 1);
        CHECK(names(c) == std::vector<std::string>{"task-clock"});
        CHECK(at(c, "task-clock").value == 1.0); // CPU1 <not counted> adds nothing
        CHECK(c.warnings.empty());
    }
    SUBCASE("per-CPU -r aggregates of a raw PMU event")
    {
        auto c = read_perf_stat(corpus / "hand-per-cpu-repeat-raw-event.csv");
        CHECK(c.summary_only);
        CHECK(at(c, "cycles").value == 700.0);
        CHECK(at(c, "cycles").pcnt_running == 60.0);
        CHECK(at(c, "cpu/event=0x3c,umask=0x00/").value == 2468.0);
    }
    SUBCASE("decimal commas, CRLF and a cgroup column")
    {
        auto c = read_perf_stat(corpus / "hand-decimal-comma-crlf-cgroup.csv");
        CHECK(names(c) == std::vector<std::string>{"task-clock", "page-faults"});
        CHECK(at(c, "task-clock").value == doctest::Approx(0.50));
        CHECK(at(c, "page-faults").value == 48.0);
        CHECK(at(c, "page-faults").pcnt_running == 100.0);
    }
}

namespace {

// `runs` plain runs of `events` events each: "value,,evN,100,100.00,,".
std::string capture(std::size_t events, std::size_t runs)
{
    std::string out;
    for (std::size_t r = 0; r < runs; ++r) {
        for (std::size_t e = 0; e < events; ++e)
            out += std::to_string(r + 1) + ",,ev" + std::to_string(e) + ",100,100.00,,\n";
    }
    return out;
}

} // namespace

TEST_CASE("limits: counters and repetitions per run, found when first exceeded")
{
    using perfgate::capture::max_counters_per_run;
    using perfgate::capture::max_repetitions;
    REQUIRE(max_counters_per_run == 256);
    REQUIRE(max_repetitions == 10000);
    SUBCASE("max_counters_per_run events parse, one more is ingest.too_many_counters naming the line")
    {
        const auto c = parse_perf_stat(capture(max_counters_per_run, 2), "t.csv");
        CHECK(c.events.size() == 256);
        CHECK(c.runs.size() == 2);
        const auto e = parse_error(capture(max_counters_per_run + 1, 1));
        CHECK(e.id() == "ingest.too_many_counters");
        CHECK(std::string(e.what()) ==
              "t.csv:257: event 'ev256' is counter 257 of this capture; at most 256 counters per run");
        // 20,000 events (1 MB, the adversarial capture): stops at the 257th line.
        CHECK(parse_error(capture(20000, 1)).id() == "ingest.too_many_counters");
        // Per-CPU lines of one event are one counter.
        std::string per_cpu;
        for (int cpu = 0; cpu < 1000; ++cpu) per_cpu += "CPU" + std::to_string(cpu) + ",5,,cycles,100,100.00,,\n";
        CHECK(parse_perf_stat(per_cpu, "t.csv").events.size() == 1);
    }
    SUBCASE("max_repetitions runs parse, one more is ingest.too_many_repetitions naming the line")
    {
        const auto c = parse_perf_stat(capture(2, max_repetitions), "t.csv");
        CHECK(c.runs.size() == 10000);
        const auto e = parse_error(capture(2, max_repetitions + 1));
        CHECK(e.id() == "ingest.too_many_repetitions");
        CHECK(std::string(e.what()) ==
              "t.csv:20001: this line begins run 10001 of this capture; at most 10000 repetitions per run");
        // The same with `# started on` blocks.
        std::string blocks;
        for (std::size_t r = 0; r <= max_repetitions; ++r) blocks += "# started on x\n1,,ev0,100,100.00,,\n";
        CHECK(parse_error(blocks).id() == "ingest.too_many_repetitions");
    }
    SUBCASE("many events then many short runs: an error, in memory linear in the input")
    {
        // 256 events in run 1, then 9,999 runs of event 255 alone: each
        // finished run keeps only its own readings (before: runs x events
        // slots, ~120 MB from 300 KB).
        std::string text = capture(max_counters_per_run, 1);
        for (std::size_t r = 1; r < max_repetitions; ++r) text += "1,,ev255,100,100.00,,\n";
        const auto e = parse_error(text);
        CHECK(e.id() == "ingest.bad_csv");
        CHECK(std::string(e.what()) == "t.csv:257: counters do not line up across runs: event 'ev0' (run 1, line 1) is "
                                       "missing from run 2, which starts here");
    }
}
