// The harness formats besides google/benchmark (capture/harness.hpp,
// docs/inputs.md): hyperfine, Catch2's XML, nanobench's JSON and perfgate's
// samples format, on real outputs captured into tests/data/<format>/ (see
// the README.txt there), detected by content, compared end to end by the
// perfgate binary, and their bad inputs and limits.
#include "capture/harness.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/names.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "support/process.hpp"

using perfgate::capture::input_format;
using perfgate::capture::parse_input;
using perfgate::capture::read_input;
using perfgate::capture::sample_set;

namespace {

const std::filesystem::path data_dir = std::filesystem::path(PERFGATE_TESTDATA_DIR);

std::string text_of(const std::string& rel) { return perfgate::model::read_text_file(data_dir / rel, "test"); }

sample_set load(const std::string& rel, input_format expected)
{
    const auto in = read_input(data_dir / rel);
    CHECK(in.format == expected);
    return in.set;
}

const perfgate::capture::counter_series& series(const sample_set& s, std::string_view bench, std::string_view counter)
{
    const auto* b = s.find(bench);
    REQUIRE_MESSAGE(b != nullptr, "no benchmark " << bench);
    const auto* c = b->find(counter);
    REQUIRE_MESSAGE(c != nullptr, "no counter " << counter << " in " << bench);
    return *c;
}

// The perfgate::error of parsing text in `format`, or a failed check.
perfgate::error parse_error(std::string_view text, input_format format, std::string_view source = "in.json")
{
    try {
        (void)parse_input(text, source, format);
    } catch (const perfgate::error& e) {
        return e;
    }
    FAIL("parsing did not throw: " << text.substr(0, 200));
    return perfgate::error("none", "none");
}

// A bad input: "ingest.bad_input" naming the source and `where`.
void check_bad(std::string_view text, input_format format, std::string_view where)
{
    const perfgate::error e = parse_error(text, format);
    CHECK(std::string(e.id()) == "ingest.bad_input");
    const std::string what = e.what();
    CHECK_MESSAGE(what.find("in.json") != std::string::npos, what);
    CHECK_MESSAGE(what.find(where) != std::string::npos, "expected '" << where << "' in: " << what);
}

bool near(double a, double b, double rel = 1e-9) { return std::fabs(a - b) <= rel * std::fabs(b); }

} // namespace

TEST_CASE("harness names: spaces and shell characters become '_', one for one")
{
    using perfgate::capture::to_valid_name;
    CHECK(to_valid_name("sort 1000 ints") == "sort_1000_ints");
    CHECK(to_valid_name("gzip -1 -c /usr/bin/hyperfine > /dev/null") == "gzip_-1_-c_/usr/bin/hyperfine_>_/dev/null");
    CHECK(to_valid_name("sh -c \"exit 3\"") == "sh_-c__exit_3_");
    CHECK(to_valid_name("BM_Sort/1024/threads:4") == "BM_Sort/1024/threads:4");
    CHECK(to_valid_name("caf\xc3\xa9") == "caf__");
    CHECK(to_valid_name(std::string(300, 'a')).size() == perfgate::capture::max_name_bytes);
    CHECK_NOTHROW(perfgate::capture::validate_name("benchmark", to_valid_name("a|b;c$d*e&f!g?h'i\\j\tk")));
}

TEST_CASE("hyperfine: real --export-json outputs of hyperfine 1.15")
{
    SUBCASE("baseline.json: a --command-name and a raw command, 10 runs each, times in ns")
    {
        const sample_set s = load("hyperfine/baseline.json", input_format::hyperfine);
        REQUIRE(s.benchmarks.size() == 2);
        CHECK(s.benchmarks[0].name == "sort-100k");
        CHECK(s.benchmarks[1].name == "gzip_-1_-c_/usr/bin/hyperfine_>_/dev/null");
        const auto& wall = series(s, "sort-100k", "wall-time");
        REQUIRE(wall.values.size() == 10);
        CHECK(wall.unit == "ns");
        const nlohmann::json doc = nlohmann::json::parse(text_of("hyperfine/baseline.json"));
        CHECK(near(wall.values[0], doc["results"][0]["times"][0].get<double>() * 1e9));
        CHECK(near(wall.values[9], doc["results"][0]["times"][9].get<double>() * 1e9));
        // hyperfine 1.15 writes user and system as means: not samples.
        CHECK(s.benchmarks[0].find("user-time") == nullptr);
        CHECK(s.benchmarks[0].find("sys-time") == nullptr);
        CHECK_FALSE(s.benchmarks[0].summary_only);
        CHECK(s.benchmarks[0].error.empty());
    }
    SUBCASE("scan.json: a -P parameter scan is one benchmark per value")
    {
        const sample_set s = load("hyperfine/scan.json", input_format::hyperfine);
        REQUIRE(s.benchmarks.size() == 3);
        CHECK(s.benchmarks[0].name == "sleep_0.001");
        CHECK(s.benchmarks[2].name == "sleep_0.003");
        CHECK(series(s, "sleep_0.003", "wall-time").values.size() == 5);
        CHECK(series(s, "sleep_0.003", "wall-time").values[0] > 3e6);
    }
    SUBCASE("failing.json: hyperfine -i with a command exiting 3: that benchmark failed, the other is kept")
    {
        const sample_set s = load("hyperfine/failing.json", input_format::hyperfine);
        REQUIRE(s.benchmarks.size() == 2);
        const auto* bad = s.find("sh_-c__exit_3_");
        REQUIRE(bad != nullptr);
        CHECK(bad->error.find("failed in 3 of 3 runs (exit codes: 3)") != std::string::npos);
        CHECK(bad->counters.empty());
        CHECK(s.find("true")->error.empty());
        CHECK(series(s, "true", "wall-time").values.size() == 3);
    }
}

TEST_CASE("hyperfine: per-run user, system and memory (arrays) become samples, killed runs fail")
{
    const std::string text = R"({"results": [{"command": "a", "mean": 0.2, "user": [0.1, 0.2], "system": [0.01, 0.02],
        "times": [0.2, 0.3], "memory_usage_byte": [2048, 4096], "exit_codes": [0, 0]},
        {"command": "b", "user": 0.1, "system": 0.1, "times": [0.2, 0.3], "exit_codes": [0, null]}]})";
    const sample_set s = parse_input(text, "in.json").set;
    CHECK(series(s, "a", "user-time").values == std::vector<double>{1e8, 2e8});
    CHECK(series(s, "a", "sys-time").values == std::vector<double>{1e7, 2e7});
    CHECK(series(s, "a", "max-rss").values == std::vector<double>{2.0, 4.0});
    CHECK(s.find("b")->error.find("exit codes: signal") != std::string::npos);
}

TEST_CASE("hyperfine: bad inputs name the file and the field")
{
    const auto f = input_format::hyperfine;
    const std::string good = text_of("hyperfine/baseline.json");
    check_bad(good.substr(0, good.size() / 2), f, "not valid JSON");
    check_bad(R"({"results": []})", f, "results: no benchmark results");
    check_bad(R"({"results": 3})", f, "results: missing");
    check_bad(R"({"results": [{"times": [1]}]})", f, "results[0].command");
    check_bad(R"({"results": [{"command": 7, "times": [1]}]})", f, "results[0].command: expected a string");
    check_bad(R"({"results": [{"command": "a"}]})", f, "results[0].times: missing");
    check_bad(R"({"results": [{"command": "a", "times": []}]})", f, "results[0].times: no runs");
    check_bad(R"({"results": [{"command": "a", "times": [1, "x"]}]})", f, "results[0].times[1]: expected a number");
    check_bad(R"({"results": [{"command": "a", "times": [1], "exit_codes": [0, 0]}]})", f,
              "results[0].exit_codes: 2 exit codes for 1 runs");
    check_bad(R"({"results": [{"command": "a", "times": [1], "user": [1, 2]}]})", f, "results[0].user: 2 values");
    check_bad(R"({"results": [{"command": "a b", "times": [1]}, {"command": "a|b", "times": [1]}]})", f,
              "results[1].command: command 'a b' and 'a|b' both become benchmark 'a_b'");
    check_bad(R"({"results": [{"command": "a", "times": [1]}, {"command": "a", "times": [1]}]})", f,
              "results[1].command: command 'a' appears twice");
}

TEST_CASE("Catch2: real XML reporter outputs of Catch2 v2.13.10 and v3.7.1")
{
    for (const char* file : {"catch2/v2-baseline.xml", "catch2/v3-baseline.xml"}) {
        CAPTURE(file);
        const sample_set s = load(file, input_format::catch2);
        REQUIRE(s.benchmarks.size() == 4);
        CHECK(s.benchmarks[0].name == "fib_20");
        CHECK(s.benchmarks[1].name == "fib_15");
        CHECK(s.benchmarks[2].name == "sort_10000_ints");
        const auto& b = *s.find("fib_15");
        CHECK(b.summary_only);
        REQUIRE(b.summary_repeats.has_value());
        CHECK(*b.summary_repeats == 30);
        const auto& rt = series(s, "fib_15", "real_time");
        REQUIRE(rt.values.size() == 1);
        REQUIRE(rt.variance_pct.size() == 1);
        CHECK(rt.unit == "ns");
        // The failed test case's benchmark is reported with its assertion.
        const auto* broken = s.find("accumulate");
        REQUIRE(broken != nullptr);
        CHECK(broken->error.find("test case 'broken': REQUIRE( fib(5) == 6 ) failed at c2.cpp:44") !=
              std::string::npos);
    }
    // The relative standard error from the file's numbers, v2:
    // <mean value="..."/> <standardDeviation value="..."/> samples="30".
    const std::string text = text_of("catch2/v2-baseline.xml");
    const auto at = text.find("name=\"fib 15\"");
    REQUIRE(at != std::string::npos);
    auto attr = [&](std::string_view element) {
        const auto e = text.find(element, at);
        const auto v = text.find("value=\"", e) + 7;
        return std::stod(text.substr(v, text.find('"', v) - v));
    };
    const double mean = attr("<mean ");
    const double sd = attr("<standardDeviation ");
    const sample_set s = load("catch2/v2-baseline.xml", input_format::catch2);
    CHECK(near(series(s, "fib_15", "real_time").values[0], mean));
    CHECK(near(series(s, "fib_15", "real_time").variance_pct[0], sd / std::sqrt(30.0) / mean * 100.0));
}

TEST_CASE("Catch2: --benchmark-no-analysis output has no spread and is refused, saying why")
{
    const perfgate::error e = parse_error(text_of("catch2/v2-no-analysis.xml"), input_format::catch2,
                                          "v2-no-analysis.xml");
    CHECK(std::string(e.id()) == "ingest.bad_input");
    CHECK(std::string(e.what()).find("--benchmark-no-analysis") != std::string::npos);
    CHECK(std::string(e.what()).find("BenchmarkResults[@name='fib 20']/standardDeviation") != std::string::npos);
}

TEST_CASE("Catch2: bad inputs name the file and the element")
{
    const auto f = input_format::catch2;
    const std::string good = text_of("catch2/v3-baseline.xml");
    check_bad(good.substr(0, good.size() / 2), f, "not valid XML");
    check_bad("<Other/>", f, "expected Catch2's XML reporter output");
    check_bad("<Catch2TestRun><TestCase name=\"t\"><OverallResult success=\"true\"/></TestCase></Catch2TestRun>", f,
              "no benchmark results");
    const std::string head = "<Catch2TestRun><TestCase name=\"t\">";
    const std::string tail = "</TestCase></Catch2TestRun>";
    check_bad(head + "<BenchmarkResults name=\"b\" samples=\"x\"/>" + tail, f,
              "BenchmarkResults[@name='b']/@samples: 'x' is not a number");
    check_bad(head + "<BenchmarkResults name=\"b\" samples=\"10\"/>" + tail, f, "BenchmarkResults[@name='b']/mean");
    check_bad(head + "<BenchmarkResults name=\"b\" samples=\"10\"><mean value=\"1\"/></BenchmarkResults>" + tail, f,
              "BenchmarkResults[@name='b']/standardDeviation: missing");
    check_bad(head + "<BenchmarkResults samples=\"10\"/>" + tail, f, "BenchmarkResults/@name");
    check_bad(head +
                  "<BenchmarkResults name=\"b\" samples=\"10\"><mean value=\"nan\"/><standardDeviation "
                  "value=\"1\"/></BenchmarkResults>" +
                  tail,
              f, "mean/@value: not a finite number");
    // The same benchmark name in two test cases.
    const std::string bench_b = "<BenchmarkResults name=\"b\" samples=\"4\"><mean value=\"10\"/><standardDeviation "
                                "value=\"2\"/></BenchmarkResults>";
    check_bad("<Catch2TestRun><TestCase name=\"t\">" + bench_b + "</TestCase><TestCase name=\"u\">" + bench_b +
                  "</TestCase></Catch2TestRun>",
              f, "TestCase[@name='u']/BenchmarkResults[@name='b']/@name: benchmark 'b' appears twice");
    // A BENCHMARK inside a SECTION is nested in <Section>; a failed assertion in
    // the section fails the test case's benchmarks.
    const sample_set nested = parse_input(
                                  head +
                                      "<Section name=\"s\"><BenchmarkResults name=\"in section\" samples=\"4\"><mean "
                                      "value=\"10\"/><standardDeviation value=\"2\"/></BenchmarkResults></Section>" +
                                      tail,
                                  "in.xml")
                                  .set;
    CHECK(series(nested, "in_section", "real_time").values == std::vector<double>{10.0});
    CHECK(series(nested, "in_section", "real_time").variance_pct == std::vector<double>{10.0}); // 2/sqrt(4)/10
    const sample_set failed_in_section =
        parse_input(
            head +
                "<Section name=\"s\"><BenchmarkResults name=\"b\"/><Expression success=\"false\" type=\"CHECK\" "
                "filename=\"x.cpp\" line=\"7\"><Original>a == b</Original></Expression></Section><OverallResult "
                "success=\"false\"/>" +
                tail,
            "in.xml")
            .set;
    CHECK(failed_in_section.find("b")->error == "test case 't': CHECK( a == b ) failed at x.cpp:7");
    // A benchmark that threw: <failed message>.
    const sample_set s =
        parse_input(head + "<BenchmarkResults name=\"b c\"><failed message=\"boom\"/></BenchmarkResults>" + tail,
                    "in.xml")
            .set;
    CHECK(s.find("b_c")->error == "benchmark failed: boom");
}

TEST_CASE("nanobench: real templates::json() outputs of nanobench 4.6")
{
    const sample_set s = load("nanobench/baseline.json", input_format::nanobench);
    REQUIRE(s.benchmarks.size() == 2);
    CHECK(s.benchmarks[0].name == "sort_1000_ints");
    CHECK(s.benchmarks[1].name == "xorshift");
    const auto& rt = series(s, "sort_1000_ints", "real_time");
    REQUIRE(rt.values.size() == 15); // one per epoch
    const nlohmann::json doc = nlohmann::json::parse(text_of("nanobench/baseline.json"));
    // elapsed is already per iteration (seconds): ns per op.
    CHECK(near(rt.values[3], doc["results"][0]["measurements"][3]["elapsed"].get<double>() * 1e9));
    // No PMU on the capturing machine: nanobench wrote 0, which is absent here.
    CHECK(s.benchmarks[0].find("instructions") == nullptr);
    CHECK(s.benchmarks[0].find("cycles") == nullptr);
    CHECK_FALSE(s.benchmarks[0].summary_only);
}

TEST_CASE("nanobench: counters per op when measured, batch divides")
{
    const std::string text = R"({"results": [{"name": "x y", "batch": 4, "measurements": [
        {"iterations": 10, "elapsed": 4e-9, "instructions": 40, "cpucycles": 20, "branchinstructions": 0,
         "branchmisses": 0},
        {"iterations": 10, "elapsed": 8e-9, "instructions": 44, "cpucycles": 24, "branchinstructions": 0,
         "branchmisses": 0}]}]})";
    const sample_set s = parse_input(text, "in.json").set;
    CHECK(series(s, "x_y", "real_time").values == std::vector<double>{1.0, 2.0});
    CHECK(series(s, "x_y", "instructions").values == std::vector<double>{10.0, 11.0});
    CHECK(series(s, "x_y", "cycles").values == std::vector<double>{5.0, 6.0});
    CHECK(s.find("x_y")->find("branches") == nullptr);
    CHECK(s.find("x_y")->find("ipc") != nullptr); // derived as for perf stat
}

TEST_CASE("nanobench: bad inputs name the file and the field")
{
    const auto f = input_format::nanobench;
    const std::string good = text_of("nanobench/baseline.json");
    check_bad(good.substr(0, good.size() / 2), f, "not valid JSON");
    check_bad(R"({"results": []})", f, "results: no benchmark results");
    check_bad(R"({"results": [{"measurements": []}]})", f, "results[0].name: missing");
    check_bad(R"({"results": [{"name": "a"}]})", f, "results[0].measurements: missing");
    check_bad(R"({"results": [{"name": "a", "measurements": []}]})", f, "results[0].measurements: no epochs");
    check_bad(R"({"results": [{"name": "a", "measurements": [{"iterations": 1}]}]})", f,
              "results[0].measurements[0].elapsed: missing");
    check_bad(R"({"results": [{"name": "a", "measurements": [{"iterations": 1, "elapsed": "1"}]}]})", f,
              "results[0].measurements[0].elapsed: expected a number");
    check_bad(R"({"results": [{"name": "a", "batch": 0, "measurements": [{"iterations": 1, "elapsed": 1}]}]})", f,
              "results[0].batch");
}

TEST_CASE("samples format: real timings written by tests/data/samples/measure.py")
{
    const sample_set s = load("samples/baseline.json", input_format::samples);
    REQUIRE(s.benchmarks.size() == 2);
    const auto& lat = series(s, "json_dumps", "latency");
    CHECK(lat.values.size() == 12);
    CHECK(lat.unit == "ns");
    REQUIRE(lat.direction.has_value());
    CHECK(*lat.direction == perfgate::capture::better::lower);
    const auto& thr = series(s, "json_dumps", "throughput");
    CHECK(*thr.direction == perfgate::capture::better::higher);
    REQUIRE(thr.gated.has_value());
    CHECK(*thr.gated);
    const auto& rss = series(s, "sha256_1MiB", "max-rss");
    CHECK(rss.values.size() == 11); // one null repetition
    CHECK(rss.absent == 1);
    CHECK_FALSE(*rss.gated);
    CHECK_FALSE(series(s, "sha256_1MiB", "latency").direction.has_value()); // the catalogue decides
}

TEST_CASE("samples format: a failed benchmark, and bad inputs naming the path")
{
    const sample_set s = parse_input(R"({"perfgate_samples": 1, "benchmarks": {"a": {"error": "crashed"},
        "b": {"counters": {"t": {"samples": [1, 2]}}}}})",
                                     "in.json")
                             .set;
    CHECK(s.find("a")->error == "crashed");
    CHECK(series(s, "b", "t").values.size() == 2);

    const auto f = input_format::samples;
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1)", f, "not valid JSON");
    check_bad(R"({"perfgate_samples": 2, "benchmarks": {}})", f, "perfgate_samples: version 2");
    check_bad(R"({"perfgate_samples": "1", "benchmarks": {}})", f, "perfgate_samples: expected the format version");
    check_bad(R"({"benchmarks": {}})", f, "perfgate_samples: missing");
    check_bad(R"({"perfgate_samples": 1})", f, "benchmarks: missing");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {}})", f, "benchmarks: no benchmarks");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {}, "extra": 1})", f, "extra: unknown key");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a b": {"counters": {}}}})", f,
              "benchmarks.a b: benchmark name 'a b'");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {}}}})", f, "benchmarks.a.counters: no");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counter": {}}}})", f,
              "benchmarks.a.counter: unknown key");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1], "gated": true}}}}})",
              f, "benchmarks.a.counters.t.gated: unknown key");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {}}}}})", f,
              "benchmarks.a.counters.t.samples: missing");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": []}}}}})", f,
              "benchmarks.a.counters.t.samples: no samples");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1, "2"]}}}}})", f,
              "benchmarks.a.counters.t.samples[1]: expected a number or null");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1], "better": "up"}}}}})",
              f, "benchmarks.a.counters.t.better");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1], "gate": 1}}}}})", f,
              "benchmarks.a.counters.t.gate: expected true or false");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1], "unit": 3}}}}})", f,
              "benchmarks.a.counters.t.unit: expected a string");
    check_bad(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [1]},
              "u": {"samples": [1, 2]}}}}})",
              f, "benchmarks.a.counters.u.samples: 2 samples, but counter 't' has 1");
}

TEST_CASE("harness formats: detected by content")
{
    using perfgate::capture::detect_input_format;
    CHECK(detect_input_format(text_of("hyperfine/baseline.json")) == input_format::hyperfine);
    CHECK(detect_input_format(text_of("hyperfine/scan.json")) == input_format::hyperfine);
    CHECK(detect_input_format(text_of("catch2/v2-baseline.xml")) == input_format::catch2);
    CHECK(detect_input_format(text_of("catch2/v3-baseline.xml")) == input_format::catch2);
    CHECK(detect_input_format(text_of("nanobench/baseline.json")) == input_format::nanobench);
    CHECK(detect_input_format(text_of("samples/baseline.json")) == input_format::samples);
    CHECK(detect_input_format(text_of("perf-stat/single-run.csv")) == input_format::perf);
}

TEST_CASE("harness formats: limits on benchmarks, counters and repetitions hold")
{
    using perfgate::capture::max_benchmarks_per_input;
    using perfgate::capture::max_counters_per_run;
    using perfgate::capture::max_repetitions;
    auto error_id = [](const std::string& text, input_format f) { return std::string(parse_error(text, f).id()); };
    SUBCASE("benchmarks")
    {
        std::string hf = R"({"results": [)";
        std::string nb = R"({"results": [)";
        std::string sm = R"({"perfgate_samples": 1, "benchmarks": {)";
        std::string c2 = "<Catch2TestRun><TestCase name=\"t\">";
        for (std::size_t i = 0; i <= max_benchmarks_per_input; ++i) {
            const std::string sep = i ? "," : "";
            hf += fmt::format(R"({}{{"command": "c{}", "times": [1]}})", sep, i);
            nb += fmt::format(R"({}{{"name": "n{}", "measurements": [{{"iterations": 1, "elapsed": 1}}]}})", sep, i);
            sm += fmt::format(R"({}"b{}": {{"counters": {{"t": {{"samples": [1]}}}}}})", sep, i);
            c2 += fmt::format(R"(<BenchmarkResults name="b{}" samples="10"><mean value="1"/>)"
                              R"(<standardDeviation value="1"/></BenchmarkResults>)",
                              i);
        }
        hf += "]}";
        nb += "]}";
        sm += "}}";
        c2 += "</TestCase></Catch2TestRun>";
        CHECK(error_id(hf, input_format::hyperfine) == "ingest.bad_input");
        CHECK(error_id(nb, input_format::nanobench) == "ingest.bad_input");
        CHECK(error_id(sm, input_format::samples) == "ingest.bad_input");
        CHECK(error_id(c2, input_format::catch2) == "ingest.bad_input");
        CHECK(std::string(parse_error(hf, input_format::hyperfine).what()).find("more than 10000 benchmarks") !=
              std::string::npos);
    }
    SUBCASE("repetitions")
    {
        std::string times;
        std::string epochs;
        for (std::size_t i = 0; i <= max_repetitions; ++i) {
            times += i ? ",1" : "1";
            epochs += i ? R"(,{"iterations": 1, "elapsed": 1})" : R"({"iterations": 1, "elapsed": 1})";
        }
        CHECK(error_id(R"({"results": [{"command": "a", "times": [)" + times + "]}]}", input_format::hyperfine) ==
              "ingest.too_many_repetitions");
        CHECK(error_id(R"({"results": [{"name": "a", "measurements": [)" + epochs + "]}]}", input_format::nanobench) ==
              "ingest.too_many_repetitions");
        CHECK(error_id(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {"t": {"samples": [)" + times +
                           "]}}}}}",
                       input_format::samples) == "ingest.too_many_repetitions");
        CHECK(error_id("<Catch2TestRun><TestCase><BenchmarkResults name=\"b\" samples=\"10001\"/>"
                       "</TestCase></Catch2TestRun>",
                       input_format::catch2) == "ingest.bad_input");
    }
    SUBCASE("counters")
    {
        std::string counters;
        for (std::size_t i = 0; i <= max_counters_per_run; ++i) {
            counters += fmt::format(R"({}"c{}": {{"samples": [1]}})", i ? "," : "", i);
        }
        CHECK(error_id(R"({"perfgate_samples": 1, "benchmarks": {"a": {"counters": {)" + counters + "}}}}",
                       input_format::samples) == "ingest.too_many_counters");
    }
}

TEST_CASE("harness formats: perfgate compare on the captured files, end to end")
{
    struct pair_case {
        const char* baseline;
        const char* candidate;
        const char* expect; // a benchmark name the report shows
    };
    for (const pair_case& c : {
             pair_case{"hyperfine/baseline.json", "hyperfine/candidate.json", "sort-100k"},
             pair_case{"catch2/v2-baseline.xml", "catch2/v2-candidate.xml", "fib_20"},
             pair_case{"catch2/v3-baseline.xml", "catch2/v3-candidate.xml", "fib_20"},
             pair_case{"nanobench/baseline.json", "nanobench/candidate.json", "sort_1000_ints"},
             pair_case{"samples/baseline.json", "samples/candidate.json", "json_dumps"},
         }) {
        CAPTURE(c.baseline);
        const auto r = perfgate::test::run_perfgate({"compare", "--baseline", (data_dir / c.baseline).string(),
                                                     "--candidate", (data_dir / c.candidate).string(), "--format",
                                                     "json"});
        INFO(r.err);
        // 0 pass, 1 regression, 3 inconclusive: a verdict, not an error (2).
        CHECK((r.code == 0 || r.code == 1 || r.code == 3));
        const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
        REQUIRE_FALSE(doc.is_discarded());
        CHECK(r.out.find(c.expect) != std::string::npos);
    }
    // The candidates that do twice the work regress.
    for (const char* dir : {"hyperfine", "nanobench", "samples"}) {
        CAPTURE(dir);
        const std::filesystem::path d = data_dir / dir;
        const auto r = perfgate::test::run_perfgate({"compare", "--baseline", (d / "baseline.json").string(),
                                                     "--candidate", (d / "candidate.json").string()});
        CHECK(r.code == 1);
    }
}

TEST_CASE("harness formats: a finite value that overflows in ns is refused naming the benchmark and the field")
{
    // hyperfine's seconds become ns: 1e300 s does not fit a double.
    check_bad(R"({"results": [{"command": "sleep 1", "times": [1, 1e300]}]})", input_format::hyperfine,
              "results[0].times[1]: benchmark 'sleep_1', counter 'wall-time': the value is out of range in ns");
    // nanobench's elapsed (s per op) divided by a tiny batch.
    check_bad(R"({"results": [{"name": "n", "measurements": [{"elapsed": 1e300, "iterations": 1, "batch": 1e-300}]}]})",
              input_format::nanobench, "benchmark 'n', counter 'real_time': the value is out of range in ns");
}

TEST_CASE("Catch2: nesting beyond the limit is refused by the limit, and nested test cases are read once")
{
    const auto f = input_format::catch2;
    const std::string bench = "<BenchmarkResults name=\"b\" samples=\"4\"><mean value=\"10\"/><standardDeviation "
                              "value=\"2\"/></BenchmarkResults>";
    // n elements nested around inner.
    const auto wrap = [](std::string_view element, std::size_t n, const std::string& inner) {
        std::string open, close;
        for (std::size_t i = 0; i < n; ++i) {
            open += fmt::format("<{} name=\"t\">", element);
            close += fmt::format("</{}>", element);
        }
        return open + inner + close;
    };
    const auto run = [](const std::string& inner) { return "<Catch2TestRun>" + inner + "</Catch2TestRun>"; };
    // 40,000 nested <TestCase> in 1.2 MB held a server's thread ~55 s (each
    // test case read its whole subtree again). Refused by the limit, at the
    // first element beyond it: the 256th test case (level 257).
    const std::string deep = run(wrap("TestCase", 40000, bench));
    CHECK(deep.size() > 1'000'000);
    const perfgate::error e = parse_error(deep, f);
    CHECK(std::string(e.id()) == "ingest.bad_input");
    const std::size_t tag = std::string_view("<TestCase name=\"t\">").size();
    CHECK(std::string(e.what()) == fmt::format("in.json: byte {}: <TestCase> is nested more than 256 elements deep, "
                                               "the limit for Catch2's XML (docs/inputs.md#catch2)",
                                               std::string_view("<Catch2TestRun>").size() + 255 * tag + 1));
    CHECK(perfgate::capture::max_xml_depth == 256);
    // Up to the limit it reads: the run, the test case, 252 sections, the
    // benchmark and its <mean> are 256 levels. One section more is refused.
    const sample_set ok = parse_input(run(wrap("TestCase", 1, wrap("Section", 252, bench))), "in.xml", f).set;
    CHECK(series(ok, "b", "real_time").values == std::vector<double>{10.0});
    check_bad(run(wrap("TestCase", 1, wrap("Section", 253, bench))), f, "<mean> is nested more than 256 elements deep");
    // A test case inside a test case (Catch2 writes none) is part of the
    // outer one: its benchmark is read once, not once per enclosing case.
    const sample_set inner = parse_input(run(wrap("TestCase", 3, bench)), "in.xml", f).set;
    CHECK(series(inner, "b", "real_time").values == std::vector<double>{10.0});
}
