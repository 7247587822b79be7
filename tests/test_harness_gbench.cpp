// google/benchmark's JSON as an input (capture/harness.hpp): real outputs of
// a google/benchmark program (tests/data/gbench/README.txt) and
// google/benchmark's own compare.py inputs, against scipy's reference values
// (tests/reference/gen_gbench_refs.py says which call produced each).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/harness.hpp"
#include "gate/compare.hpp"
#include "model/error.hpp"
#include "stats/mann_whitney.hpp"

namespace capture = perfgate::capture;
namespace gate = perfgate::gate;

namespace {

const std::filesystem::path data_dir = std::filesystem::path(PERFGATE_TESTDATA_DIR) / "gbench";

std::string read(const std::string& name)
{
    std::ifstream in(data_dir / name, std::ios::binary);
    REQUIRE_MESSAGE(in, "cannot read " << name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

capture::sample_set load(const std::string& name)
{
    return capture::read_input(data_dir / name, capture::input_format::gbench).set;
}

const gate::counter_report& counter_of(const gate::report& r, std::string_view bench, std::string_view counter)
{
    for (const auto& b : r.benchmarks) {
        if (b.name != bench) continue;
        for (const auto& c : b.counters)
            if (c.name == counter) return c;
    }
    FAIL("no counter " << bench << "/" << counter);
    throw std::logic_error("unreachable");
}

perfgate::error parse_error(const std::string& text, const std::string& source = "bench.json")
{
    try {
        (void)capture::parse_gbench_json(text, source);
    } catch (const perfgate::error& e) {
        return e;
    }
    FAIL("no error for " << text.substr(0, 80));
    throw std::logic_error("unreachable");
}

struct scipy_ref {
    const char* bench;
    const char* counter;
    const char* method;
    double p, delta_pct;
};

// tests/reference/gen_gbench_refs.py, part 1 (scipy 1.10.1):
// scipy.stats.mannwhitneyu(b, c, alternative="two-sided", method=M) and
// 100 * (median(c) / median(b) - 1) on baseline.json vs candidate.json.
// clang-format off
constexpr scipy_ref scipy_refs[] = {
    {"BM_Sort/64", "real_time", "exact", 0.35268137435320107, 3.906138552117522},
    {"BM_Sort/64", "cpu_time", "exact", 0.35268137435320107, 3.920982371935411},
    {"BM_Sort/1024", "real_time", "exact", 1.082508822446903e-05, 13.261737105975445},
    {"BM_Sort/1024", "cpu_time", "exact", 1.082508822446903e-05, 13.403175862948169},
    {"BM_Accumulate", "real_time", "exact", 1.082508822446903e-05, 102.20707863167276},
    {"BM_Accumulate", "cpu_time", "exact", 1.082508822446903e-05, 102.2112517562213},
    {"BM_StringCat/threads:2", "real_time", "exact", 0.6305289138106477, 0.4762476326346743},
    {"BM_StringCat/threads:2", "cpu_time", "exact", 0.7959362618805345, -0.05586497503936583},
};
// clang-format on

void check_against_scipy(const gate::report& r)
{
    for (const auto& ref : scipy_refs) {
        CAPTURE(ref.bench);
        CAPTURE(ref.counter);
        const auto& c = counter_of(r, ref.bench, ref.counter);
        REQUIRE(c.test.has_value());
        CHECK(gate::to_string(*c.test) == ref.method);
        REQUIRE(c.p_value.has_value());
        CHECK(*c.p_value == doctest::Approx(ref.p).epsilon(1e-9));
        REQUIRE(c.delta_pct.has_value());
        CHECK(std::abs(*c.delta_pct - ref.delta_pct) < 1e-6);
    }
}

} // namespace

TEST_CASE("gbench: one benchmark per name, the iteration rows as samples, times in ns")
{
    const capture::sample_set s = load("baseline.json");
    std::vector<std::string> names;
    for (const auto& b : s.benchmarks) names.push_back(b.name);
    CHECK(names == std::vector<std::string>{"BM_Sort/64", "BM_Sort/1024", "BM_Accumulate", "BM_StringCat/threads:2"});
    const capture::benchmark_samples* sort = s.find("BM_Sort/64");
    REQUIRE(sort);
    CHECK_FALSE(sort->summary_only);
    REQUIRE(sort->find("real_time"));
    CHECK(sort->find("real_time")->values.size() == 10); // 10 repetitions; the 4 aggregate rows are not samples
    CHECK(sort->find("real_time")->unit == "ns");
    CHECK(sort->find("cpu_time")->values.size() == 10);
    REQUIRE(sort->find("items_per_second"));
    CHECK(sort->find("items_per_second")->unit == "/s");
    CHECK(sort->find("iterations") == nullptr); // how many, not how fast
    const capture::benchmark_samples* acc = s.find("BM_Accumulate");
    REQUIRE(acc);
    REQUIRE(acc->find("bytes_per_second"));
    REQUIRE(acc->find("elements"));
    CHECK(acc->find("elements")->values == std::vector<double>(10, 4096.0));

    // Rates are better higher; times gate; a user counter is reported only.
    const gate::policy rules;
    CHECK(rules.resolve("BM_Sort/64", "items_per_second", "/s").direction == capture::better::higher);
    CHECK(rules.resolve("BM_Accumulate", "bytes_per_second", "B/s").direction == capture::better::higher);
    CHECK(rules.resolve("BM_Sort/64", "real_time", "ns").gated);
    CHECK(rules.resolve("BM_Sort/64", "cpu_time", "ns").gated);
    CHECK_FALSE(rules.resolve("BM_Accumulate", "elements").gated);
    CHECK(rules.resolve("BM_Accumulate", "elements").direction == capture::better::lower);
}

TEST_CASE("gbench: p-values and median deltas equal scipy's on real output, 10 repetitions a side")
{
    const gate::report r = gate::compare(load("baseline.json"), load("candidate.json"), gate::policy{});
    check_against_scipy(r);
    // The candidate doubled BM_Accumulate's work: a regression on both times.
    CHECK(counter_of(r, "BM_Accumulate", "real_time").state == gate::status::regression);
    CHECK(counter_of(r, "BM_Accumulate", "cpu_time").state == gate::status::regression);
    // Its bytes_per_second halved: worse, as a rate that is better higher.
    const auto& rate = counter_of(r, "BM_Accumulate", "bytes_per_second");
    CHECK(rate.direction == capture::better::higher);
    REQUIRE(rate.delta_pct.has_value());
    CHECK(*rate.delta_pct < -40);
    CHECK_FALSE(rate.gated);
    CHECK(r.result == gate::verdict::fail);
}

TEST_CASE("gbench: the same candidate written in microseconds gives the same deltas and p-values")
{
    nlohmann::json doc = nlohmann::json::parse(read("candidate.json"));
    for (auto& row : doc["benchmarks"]) {
        REQUIRE(row["time_unit"] == "ns");
        row["real_time"] = row["real_time"].get<double>() / 1e3;
        row["cpu_time"] = row["cpu_time"].get<double>() / 1e3;
        row["time_unit"] = "us";
    }
    const capture::sample_set in_us = capture::parse_gbench_json(doc.dump(), "candidate-us.json");
    const gate::report ns = gate::compare(load("baseline.json"), load("candidate.json"), gate::policy{});
    const gate::report us = gate::compare(load("baseline.json"), in_us, gate::policy{});
    check_against_scipy(us);
    REQUIRE(ns.benchmarks.size() == us.benchmarks.size());
    for (std::size_t b = 0; b < ns.benchmarks.size(); ++b) {
        for (std::size_t c = 0; c < ns.benchmarks[b].counters.size(); ++c) {
            const auto& x = ns.benchmarks[b].counters[c];
            const auto& y = us.benchmarks[b].counters[c];
            CAPTURE(x.name);
            CHECK(x.state == y.state);
            CHECK(x.p_value == y.p_value);
            REQUIRE(x.delta_pct.has_value());
            CHECK(*y.delta_pct == doctest::Approx(*x.delta_pct).epsilon(1e-9));
        }
    }
}

TEST_CASE("gbench: compare.py's own inputs, its U-test p-values, and where perfgate differs")
{
    // tests/reference/gen_gbench_refs.py, part 2: the samples compare.py
    // (gbench.report.get_difference_report(run0, run1, utest=True)) tests,
    // aggregate rows of the same name included, and scipy's default method.
    struct utest_ref {
        std::vector<double> x, y;
        double p;
        perfgate::stats::mwu_method method;
    };
    // clang-format off
    const std::vector<utest_ref> refs = {
        {{9.0, 8.0}, {10.0, 7.0}, 1.0, perfgate::stats::mwu_method::exact},                          // BM_Two real_time
        {{90.0, 86.0}, {89.0, 72.0}, 0.6666666666666666, perfgate::stats::mwu_method::exact},         // BM_Two cpu_time
        {{8.0, 8.0}, {7.0, 4.54, 800.0}, 0.7670968684102772, perfgate::stats::mwu_method::asymptotic}, // short real_time (ties)
        {{80.0, 77.0}, {75.0, 66.6, 1.0}, 0.2, perfgate::stats::mwu_method::exact},                  // short cpu_time
    };
    // clang-format on
    for (const auto& ref : refs) {
        const auto r = perfgate::stats::mann_whitney_u(ref.x, ref.y);
        CHECK(r.method == ref.method);
        CHECK(r.p_value == doctest::Approx(ref.p).epsilon(1e-9));
    }

    // perfgate never takes an aggregate row as a sample: BM_One is an
    // aggregate in run0 and "short" has only aggregates there, so neither
    // is compared; BM_Two's candidate is its one iteration row.
    const capture::sample_set run0 = load("compare_py_test3_run0.json");
    const capture::sample_set run1 = load("compare_py_test3_run1.json");
    REQUIRE(run0.find("BM_Two"));
    CHECK(run0.find("BM_Two")->find("real_time")->values == std::vector<double>{9.0, 8.0});
    REQUIRE(run1.find("BM_Two"));
    CHECK(run1.find("BM_Two")->find("real_time")->values == std::vector<double>{7.0});
    CHECK(run0.find("BM_One") == nullptr);
    CHECK(run0.find("short") == nullptr);
    bool warned = false;
    for (const auto& w : run0.warnings) warned = warned || w.find("'short' has 2 aggregate rows") != std::string::npos;
    CHECK(warned);
    const gate::report r = gate::compare(run0, run1, gate::policy{});
    CHECK(r.added == std::vector<std::string>{"BM_One", "short"});
    CHECK(r.removed.empty());
    // Two samples against one are below min_samples: nothing can be decided.
    CHECK(counter_of(r, "BM_Two", "real_time").state == gate::status::insufficient);
    CHECK(r.result == gate::verdict::inconclusive);
}

TEST_CASE("gbench: an output of aggregates only is refused, saying to keep the repetitions")
{
    try {
        (void)capture::read_input(data_dir / "aggregates_only.json");
        FAIL("aggregates-only input accepted");
    } catch (const perfgate::error& e) {
        CHECK(e.id() == "ingest.bad_input");
        const std::string m = e.what();
        CHECK(m.find("aggregates_only.json") != std::string::npos);
        CHECK(m.find("only aggregates") != std::string::npos);
        CHECK(m.find("--benchmark_report_aggregates_only") != std::string::npos);
    }
}

TEST_CASE("gbench: a benchmark that failed (SkipWithError) is named with its message, not compared")
{
    const capture::sample_set s = load("with_error.json");
    const capture::benchmark_samples* err = s.find("BM_Err");
    REQUIRE(err);
    CHECK(err->error == "no input file");
    CHECK(err->counters.empty());

    // Failed on the candidate side only: the baseline ran it.
    nlohmann::json fine = nlohmann::json::parse(read("with_error.json"));
    for (auto& row : fine["benchmarks"]) {
        if (row["name"] != "BM_Err") continue;
        row.erase("error_occurred");
        row.erase("error_message");
        row["real_time"] = 12.5;
        row["cpu_time"] = 12.5;
    }
    const capture::sample_set base = capture::parse_gbench_json(fine.dump(), "base.json");
    REQUIRE(base.find("BM_Err"));
    CHECK(base.find("BM_Err")->error.empty());
    const gate::report r = gate::compare(base, s, gate::policy{});
    REQUIRE(r.failed.size() == 1);
    CHECK(r.failed[0].name == "BM_Err");
    CHECK(r.failed[0].side == "candidate");
    CHECK(r.failed[0].message == "no input file");
    for (const auto& b : r.benchmarks) CHECK(b.name != "BM_Err");
    // The other benchmark is the same data on both sides: unchanged, yet the
    // gate did not see BM_Err run, so it cannot pass.
    CHECK(r.result == gate::verdict::inconclusive);
}

TEST_CASE("gbench: perf counter columns become perf's counters and gate")
{
    const capture::sample_set s = load("perf_counters.json");
    const capture::benchmark_samples* acc = s.find("BM_Accumulate");
    REQUIRE(acc);
    REQUIRE(acc->find("cycles"));
    REQUIRE(acc->find("instructions"));
    REQUIRE(acc->find("ipc")); // derived, as from perf stat
    CHECK(acc->find("ipc")->computed);
    CHECK(acc->find("CYCLES") == nullptr);
    // Stored, a run keeps the measured counters; ipc is recomputed on read.
    const auto stored = capture::run_counters_of(*acc);
    for (const auto& c : stored) CHECK(c.counter != "ipc");

    nlohmann::json doc = nlohmann::json::parse(read("perf_counters.json"));
    for (auto& row : doc["benchmarks"]) row["INSTRUCTIONS"] = row["INSTRUCTIONS"].get<double>() * 1.10;
    const gate::report r = gate::compare(s, capture::parse_gbench_json(doc.dump(), "more.json"), gate::policy{});
    const auto& ins = counter_of(r, "BM_Accumulate", "instructions");
    CHECK(ins.gated);
    CHECK(ins.state == gate::status::regression);
    REQUIRE(ins.delta_pct.has_value());
    CHECK(*ins.delta_pct == doctest::Approx(10.0).epsilon(1e-3));
    CHECK(r.result == gate::verdict::fail);
}

TEST_CASE("gbench: bad input names the file and the field")
{
    struct bad_case {
        std::string text, where;
    };
    const std::vector<bad_case> cases = {
        {"{\"benchmarks\": [", "bench.json: byte"},
        {"[1, 2]", "expected google/benchmark's JSON object"},
        {"{\"context\": {}}", "bench.json: benchmarks: missing"},
        {"{\"benchmarks\": []}", "no benchmark results"},
        {"{\"benchmarks\": [7]}", "benchmarks[0]: expected an object"},
        {"{\"benchmarks\": [{\"real_time\": 1, \"cpu_time\": 1}]}", "benchmarks[0].name: missing"},
        {"{\"benchmarks\": [{\"name\": \"a\", \"real_time\": \"1\", \"cpu_time\": 1}]}",
         "benchmarks[0].real_time: expected a number"},
        {"{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"cpu_time\": 1, \"time_unit\": \"h\"}]}",
         "benchmarks[0].time_unit: 'h' is not a time unit"},
        {"{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1}]}", "benchmarks[0].cpu_time: missing"},
        {"{\"benchmarks\": [{\"name\": \"\", \"real_time\": 1, \"cpu_time\": 1}]}", "empty benchmark name"},
        {"{\"benchmarks\": [{\"name\": \"a\", \"real_time\": 1, \"cpu_time\": 1, \"x\": 1e999}]}",
         "a number out of range"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        const perfgate::error e = parse_error(c.text);
        CHECK(e.id() == "ingest.bad_input");
        CHECK(std::string(e.what()).find(c.where) != std::string::npos);
    }
}

TEST_CASE("gbench: template names lose the space after a comma, other bytes a name may not hold become _")
{
    const std::string text = R"({"benchmarks": [
        {"name": "BM_Fill<int, 8>", "run_type": "iteration", "real_time": 1, "cpu_time": 1, "time_unit": "ns"},
        {"name": "BM_Fill<int, 8>_mean", "run_name": "BM_Fill<int, 8>", "run_type": "aggregate", "real_time": 1,
         "cpu_time": 1, "time_unit": "ns"},
        {"name": "odd name \"q\"", "run_type": "iteration", "real_time": 1, "cpu_time": 1, "time_unit": "ns",
         "my rate": 2}]})";
    const capture::sample_set s = capture::parse_gbench_json(text, "t.json");
    REQUIRE(s.benchmarks.size() == 2);
    CHECK(s.benchmarks[0].name == "BM_Fill<int,8>");
    CHECK(s.benchmarks[1].name == "odd_name__q_");
    CHECK(s.benchmarks[1].find("my_rate") != nullptr);
    CHECK(s.warnings.empty()); // the aggregate belongs to a benchmark with samples
}

TEST_CASE("gbench: limits on benchmarks, counters and repetitions hold while reading")
{
    nlohmann::json many = {{"benchmarks", nlohmann::json::array()}};
    for (std::size_t i = 0; i <= capture::max_benchmarks_per_input; ++i)
        many["benchmarks"].push_back({{"name", "b" + std::to_string(i)}, {"real_time", 1}, {"cpu_time", 1}});
    CHECK(parse_error(many.dump()).id() == "ingest.bad_input");

    nlohmann::json wide = {{"benchmarks", {{{"name", "a"}, {"real_time", 1}, {"cpu_time", 1}}}}};
    for (std::size_t i = 0; i < capture::max_counters_per_run; ++i) wide["benchmarks"][0]["c" + std::to_string(i)] = 1;
    CHECK(parse_error(wide.dump()).id() == "ingest.too_many_counters");

    nlohmann::json deep = {{"benchmarks", nlohmann::json::array()}};
    for (std::size_t i = 0; i <= capture::max_repetitions; ++i)
        deep["benchmarks"].push_back({{"name", "a"}, {"real_time", 1}, {"cpu_time", 1}});
    CHECK(parse_error(deep.dump()).id() == "ingest.too_many_repetitions");
}

TEST_CASE("input formats: detected by content, forced by name")
{
    CHECK(capture::detect_input_format(read("baseline.json")) == capture::input_format::gbench);
    // compare.py's older inputs have no run_type on every row and still read.
    CHECK(capture::detect_input_format(read("compare_py_test3_run0.json")) == capture::input_format::gbench);
    CHECK(capture::detect_input_format("cycles,,1234,,100.00,,\n") == capture::input_format::perf);
    CHECK(capture::detect_input_format("") == capture::input_format::perf);
    // A harness's output cut short is still that harness's, whose parser
    // says what is wrong.
    CHECK(capture::detect_input_format("{\"benchmarks\": [{\"x\": 1e999}]}") == capture::input_format::gbench);
    const std::string cut = read("baseline.json").substr(0, 3000);
    CHECK(capture::detect_input_format(cut) == capture::input_format::gbench);
    try {
        (void)capture::parse_input(cut, "cut.json");
        FAIL("a truncated file accepted");
    } catch (const perfgate::error& e) {
        CHECK(e.id() == "ingest.bad_input");
        INFO(e.what());
        CHECK(std::string(e.what()).find("cut.json: byte 3001: not valid JSON") != std::string::npos);
    }
    CHECK(capture::detect_input_format("{\"counter-value\" : \"1.0\"}\n{\"x\": 1}\n") == capture::input_format::perf);
    // perf stat --json, real captures: one object per line.
    for (const char* f : {"repeat-3.json", "single-run.json"}) {
        std::ifstream in(std::filesystem::path(PERFGATE_TESTDATA_DIR) / "perf-stat" / f);
        std::ostringstream text;
        text << in.rdbuf();
        CAPTURE(f);
        CHECK(capture::detect_input_format(text.str()) == capture::input_format::perf);
    }
    CHECK(capture::parse_input_format("gbench") == capture::input_format::gbench);
    CHECK_FALSE(capture::parse_input_format("json").has_value());
    for (auto f : {capture::input_format::perf, capture::input_format::gbench, capture::input_format::hyperfine,
                   capture::input_format::catch2, capture::input_format::nanobench, capture::input_format::samples})
        CHECK(capture::parse_input_format(capture::to_string(f)) == f);
    // Forced: a gbench file read as perf stat output is perf's error.
    try {
        (void)capture::read_input(data_dir / "baseline.json", capture::input_format::perf);
        FAIL("gbench JSON accepted as perf stat output");
    } catch (const perfgate::error& e) {
        CHECK(e.id() == "ingest.bad_csv");
    }
}

TEST_CASE("run times: what google/benchmark and perf stat files say about when they were measured")
{
    using capture::relate;
    using capture::time_relation;
    SUBCASE("ISO 8601 dates (google/benchmark's context.date)")
    {
        const auto utc = capture::parse_iso_date("2026-11-26T21:34:27+00:00");
        REQUIRE(utc);
        CHECK(utc->zoned);
        CHECK(utc->first_start == 1795728867); // date -d 2026-11-26T21:34:27Z +%s
        CHECK(utc->first_text == "2026-11-26T21:34:27+00:00");
        // The same moment written in another zone, or with Z.
        CHECK(capture::parse_iso_date("2026-11-26T22:34:27+01:00")->first_start == 1795728867);
        CHECK(capture::parse_iso_date("2026-11-26T16:04:27-05:30")->first_start == 1795728867);
        CHECK(capture::parse_iso_date("2026-11-26T21:34:27Z")->first_start == 1795728867);
        CHECK(capture::parse_iso_date("2026-11-26T21:34:27.123456Z")->first_start == 1795728867);
        // google/benchmark before 1.5: local time, no zone.
        const auto local = capture::parse_iso_date("2016-08-02 17:44:46");
        REQUIRE(local);
        CHECK_FALSE(local->zoned);
        CHECK(local->first_start == 1470159886);
        for (const char* bad : {"", "yesterday", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-11-26T25:00:00Z",
                                "2026-11-26T21:34:27+0100", "2026-11-26T21:34:27 UTC", "2026-11-26"}) {
            CAPTURE(bad);
            CHECK_FALSE(capture::parse_iso_date(bad));
        }
    }
    SUBCASE("perf stat -o's # started on lines, one per execution")
    {
        CHECK(capture::parse_ctime_date("Sun Nov 22 02:35:47 2026")->first_start == 1795314947);
        CHECK(capture::parse_ctime_date("Mon Nov  2 02:35:47 2026")->first_start == 1793586947);
        CHECK_FALSE(capture::parse_ctime_date("Sun Nox 22 02:35:47 2026"));
        CHECK_FALSE(capture::parse_ctime_date("22 Nov 2026"));
        const std::string text = "# started on Sun Nov 22 02:35:47 2026\n\n1,,page-faults,1,100.00,,\n"
                                 "# started on Sun Nov 22 02:35:49 2026\n\n1,,page-faults,1,100.00,,\n";
        const auto t = capture::perf_started_on(text);
        REQUIRE(t);
        CHECK(t->executions == 2);
        CHECK(t->last_start - t->first_start == 2);
        CHECK_FALSE(t->zoned);
        CHECK_FALSE(capture::perf_started_on("1,,page-faults,1,100.00,,\n"));
        // Read with the capture: the demo's bundled files, ten executions each.
        const auto demo = capture::read_input(std::filesystem::path(PERFGATE_SOURCE_DIR) /
                                              "examples/data/baseline.csv");
        REQUIRE(demo.times);
        CHECK(demo.times->executions == 10);
        CHECK(demo.times->measured_s > 0); // the last execution's duration_time
    }
    SUBCASE("google/benchmark: the date and the measured time from the file")
    {
        const auto in = capture::read_input(data_dir / "baseline.json");
        REQUIRE(in.times);
        CHECK(in.times->first_text == "2026-11-26T21:34:27+00:00");
        CHECK(in.times->executions == 1);
        // Sum of iterations x real_time of the 40 repetition rows (python3 over the file).
        CHECK(in.times->measured_s == doctest::Approx(1.0144304419918626).epsilon(1e-9));
        CHECK_FALSE(capture::read_input(data_dir / "compare_py_test3_run0.json").times->zoned);
    }
    SUBCASE("relate: apart only past the earlier file's measured range and the resolution")
    {
        capture::run_times a;
        a.first_start = a.last_start = 1000;
        a.measured_s = 2.5;
        a.zoned = true;
        capture::run_times b = a;
        b.first_start = b.last_start = 1004; // 1000 + 1 + 2.5 = 1003.5 <= 1004
        CHECK(relate(a, b) == time_relation::apart);
        CHECK(relate(b, a) == time_relation::apart);
        b.first_start = b.last_start = 1003; // could have started during a's run
        CHECK(relate(a, b) == time_relation::overlapping);
        CHECK(relate(a, std::nullopt) == time_relation::unknown);
        b.zoned = false;
        CHECK(relate(a, b) == time_relation::unknown);
        // The two real files, a second apart, a second of measuring: too close.
        const auto base = capture::read_input(data_dir / "baseline.json");
        const auto cand = capture::read_input(data_dir / "candidate.json");
        CHECK(relate(base.times, cand.times) == time_relation::overlapping);
    }
}

TEST_CASE("gbench: a finite time that overflows in ns is refused naming the benchmark and the field")
{
    // 1e300 s is a double; 1e300 s in ns is not (it aborted perfgate compare).
    const std::string text = R"({"benchmarks": [
        {"name": "BM_a", "run_type": "iteration", "real_time": 1, "cpu_time": 1, "time_unit": "s"},
        {"name": "BM_a", "run_type": "iteration", "real_time": 1e300, "cpu_time": 1, "time_unit": "s"}]})";
    const perfgate::error e = parse_error(text);
    CHECK(std::string(e.id()) == "ingest.bad_input");
    CHECK(std::string(e.what()) == "bench.json: benchmarks[1].real_time: benchmark 'BM_a', counter 'real_time': the "
                                   "value is out of range in ns (beyond a double: inf); expected a finite number");
    const std::string cpu = R"({"benchmarks": [
        {"name": "BM_b", "real_time": 1, "cpu_time": 1e303, "time_unit": "ms"}]})";
    CHECK(std::string(parse_error(cpu).what()).find("benchmarks[0].cpu_time: benchmark 'BM_b', counter 'cpu_time'") !=
          std::string::npos);
    // The largest time that fits still reads.
    const std::string fits = R"({"benchmarks": [
        {"name": "BM_c", "real_time": 1e299, "cpu_time": 1, "time_unit": "s"}]})";
    const capture::sample_set big = capture::parse_gbench_json(fits, "f.json");
    const auto& kept = big.benchmarks.at(0).find("real_time")->values;
    REQUIRE(kept.size() == 1);
    CHECK(kept[0] == doctest::Approx(1e308));
}

TEST_CASE("gbench: NaN and Infinity user counters, as google/benchmark writes them, are no value, with a warning")
{
    // A real output (tests/data/gbench/nan_counters.cpp): counters 0/0 and
    // +-inf are written as bare NaN, Infinity, -Infinity, which JSON has not.
    const capture::sample_set s = load("nan_counters.json");
    REQUIRE(s.benchmarks.size() == 1);
    const capture::benchmark_samples& b = s.benchmarks[0];
    CHECK(b.name == "BM_n/iterations:10/repeats:5");
    REQUIRE(b.find("real_time") != nullptr);
    CHECK(b.find("real_time")->values.size() == 5);
    for (const char* counter : {"nan", "inf", "ninf"}) {
        CAPTURE(counter);
        const auto* c = b.find(counter);
        REQUIRE(c != nullptr);
        CHECK(c->values.empty());
        bool warned = false;
        for (const auto& w : s.warnings)
            warned = warned || w == fmt::format("{}: benchmark 'BM_n/iterations:10/repeats:5': counter '{}' is NaN or "
                                                "Infinity in 5 of its repetitions: no value there (not a sample)",
                                                (data_dir / "nan_counters.json").string(), counter);
        CHECK(warned);
    }
    // In a time it is no sample: refused, naming the field.
    const perfgate::error e = parse_error(
        R"({"benchmarks": [{"name": "BM_a", "real_time": NaN, "cpu_time": 1, "time_unit": "ns"}]})");
    CHECK(std::string(e.id()) == "ingest.bad_input");
    CHECK(std::string(e.what()) == "bench.json: benchmarks[0].real_time: NaN: not a finite number");
    // Inside a string the words are text; a parse error still names the byte as written.
    const capture::sample_set named = capture::parse_gbench_json(
        R"({"benchmarks": [{"name": "NaN Infinity", "real_time": 1, "cpu_time": 1, "x": -Infinity}]})", "n.json");
    CHECK(named.find("NaN_Infinity") != nullptr);
    // Only where a value stands: a bare NaN as a key is no JSON.
    CHECK(std::string(parse_error(R"({"benchmarks": [{"name": "a", "real_time": 1, "cpu_time": 1, NaN: 1}]})").what())
              .find("not valid JSON") != std::string::npos);
    const capture::sample_set in_array = capture::parse_gbench_json(
        R"({"benchmarks": [{"name": "a", "real_time": 1, "cpu_time": 1, "l": [NaN, -NaN]}]})", "a.json");
    CHECK(in_array.benchmarks.size() == 1);
    const std::string broken = R"({"benchmarks": [{"name": "a", "x": NaN, "y": Infinity, "z": ?}]})";
    CHECK(std::string(parse_error(broken).what()) ==
          fmt::format("bench.json: byte {}: not valid JSON", broken.find('?') + 1));
}

TEST_CASE("gbench: two names or two counters that become one are refused, naming both")
{
    const auto row = [](std::string_view name, std::string_view extra = "") {
        return fmt::format(R"({{"name": "{}", "run_type": "iteration", "real_time": 1, "cpu_time": 1{}}})", name,
                           extra);
    };
    const auto doc = [](const std::vector<std::string>& rows) {
        std::string out = R"({"benchmarks": [)";
        for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ", " : "") + rows[i];
        return out + "]}";
    };
    const auto refused = [&](const std::string& text, const std::string& message) {
        const perfgate::error e = parse_error(text);
        CHECK(std::string(e.id()) == "ingest.bad_input");
        CHECK_MESSAGE(std::string(e.what()).find(message) != std::string::npos, e.what());
    };
    // BENCHMARK_TEMPLATE's spelling and the hand-written one.
    refused(doc({row("BM_Fill<int, 8>"), row("BM_Fill<int,8>")}),
            "bench.json: benchmarks[1].name: benchmarks 'BM_Fill<int, 8>' and 'BM_Fill<int,8>' both become "
            "benchmark 'BM_Fill<int,8>'");
    // Names that differ after byte 256 (the limit of a name).
    const std::string stem(256, 'a');
    refused(doc({row(stem + "/1"), row(stem + "/2")}),
            fmt::format("benchmarks '{}/1' and '{}/2' both become benchmark '{}'", stem, stem, stem));
    // A user counter that becomes real_time; perf's names from two spellings.
    refused(doc({row("BM_a", R"(, "real time": 5)")}),
            "benchmarks[0].real time: members 'real_time' and 'real time' of benchmark 'BM_a' both become counter "
            "'real_time'");
    refused(doc({row("BM_a", R"(, "CYCLES": 5, "PERF_COUNT_HW_CPU_CYCLES": 6)")}),
            "members 'CYCLES' and 'PERF_COUNT_HW_CPU_CYCLES' of benchmark 'BM_a' both become counter 'cycles'");
    refused(doc({row("BM_a", R"(, "my rate": 5)"), row("BM_a", R"(, "my_rate": 5)")}),
            "benchmarks[1].my_rate: members 'my rate' and 'my_rate' of benchmark 'BM_a'");
    // Repetitions of one name, and one counter in every repetition, still read.
    const capture::sample_set s = capture::parse_gbench_json(
        doc({row("BM_Fill<int, 8>", R"(, "c": 1)"), row("BM_Fill<int, 8>", R"(, "c": 2)")}), "ok.json");
    REQUIRE(s.benchmarks.size() == 1);
    CHECK(s.benchmarks[0].find("c")->values == std::vector<double>{1, 2});
}
