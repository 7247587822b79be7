// The PR comment (report/markdown.cpp) of each shape a reviewer meets,
// compared byte for byte with tests/data/comments/*.md: fail, pass,
// inconclusive, callgrind, memcheck and a 500-benchmark suite, and the
// testbed's qualification line and advice (qualified.md, suite-qualified.md).
// The goldens are the review artefact: read them as a reviewer would.
//
// Regenerate after a deliberate change, then read the diff:
//   PERFGATE_UPDATE_GOLDEN=1 build/dev/bin/test_comments
#include "report/render.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "capture/samples.hpp"
#include "gate/compare.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "model/qualification.hpp"
#include "report/format.hpp"
#include "report/qualification.hpp"
#include "support/numbers.hpp"
#include "support/report.hpp"

using namespace perfgate;
using namespace perfgate::gate;
using namespace perfgate::report;

namespace {

namespace fs = std::filesystem;

capture::counter_series series(std::string name, std::vector<double> values, std::string unit = "")
{
    capture::counter_series s;
    s.name = std::move(name);
    s.unit = std::move(unit);
    s.values = std::move(values);
    return s;
}

capture::sample_set one(std::vector<capture::counter_series> counters, std::string bench)
{
    capture::sample_set s;
    capture::benchmark_samples b;
    b.name = std::move(bench);
    b.counters = std::move(counters);
    s.benchmarks.push_back(std::move(b));
    return s;
}

// n values around `level`, spread by `spread` (a fraction) with a fixed
// pseudo-random sequence: the same report on every machine.
std::vector<double> noisy(double level, double spread, std::uint64_t seed, std::size_t n = 10)
{
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(level * (1 + spread * perfgate::test::lcg_uniform(seed)));
    return v;
}

// Two speeds, alternating: the machine switching clocks (bimodal).
std::vector<double> two_speed(double slow, double fast, std::size_t n = 12)
{
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back((i % 2 ? fast : slow) * (1 + 0.001 * static_cast<double>(i)));
    return v;
}

counter_report& counter_of(gate::report& r, std::string_view name)
{
    for (auto& c : r.benchmarks.at(0).counters) {
        if (c.name == name) return c;
    }
    FAIL("counter not in report: " << name);
    throw 0;
}

constexpr std::string_view head_sha = "9f2c4e1a7b3d5f60718293a4b5c6d7e8f9012345";
constexpr std::string_view base_sha = "1a2b3c4d5e6f708192a3b4c5d6e7f80912345678";
constexpr std::string_view tip_sha = "77e1d0c3b2a1908f7e6d5c4b3a29180706050403";

// What `perfgate run --github` on a pull request gives the report: the
// merge-base rule and the runs' backend and testbed.
void as_measured(gate::report& r, std::string backend)
{
    r.baseline = baseline_choice{"merge-base", std::string(base_sha), std::string(tip_sha), std::string(head_sha)};
    r.measured = measurement{std::move(backend), "ci-runner-2", std::string(base_sha), std::string(head_sha)};
    r.comparison_id = 7;
}

// The options publish_to_github gives the renderer in a pull request's job.
markdown_options pr_options()
{
    markdown_options o;
    o.marker = "<!-- perfgate-comment: perfgate -->";
    o.run_url = "https://github.com/acme/parser/actions/runs/4242";
    o.comparison_url = "https://perf.acme.example/p/parser/comparisons/7";
    o.repository_url = "https://github.com/acme/parser";
    return o;
}

// Compares md with the golden file; PERFGATE_UPDATE_GOLDEN=1 rewrites it.
void check_golden(const std::string& name, const std::string& md)
{
    const fs::path path = fs::path(PERFGATE_TESTDATA_DIR) / "comments" / name;
    if (const char* update = std::getenv("PERFGATE_UPDATE_GOLDEN"); update && std::string_view(update) == "1") {
        std::ofstream out(path, std::ios::binary);
        out << md;
        REQUIRE_MESSAGE(out.flush(), "cannot write " << path);
        MESSAGE("rewrote " << path);
        return;
    }
    std::ifstream in(path, std::ios::binary);
    REQUIRE_MESSAGE(in, path << " is missing: PERFGATE_UPDATE_GOLDEN=1 writes it");
    std::ostringstream golden;
    golden << in.rdbuf();
    const std::string want = golden.str();
    if (want == md) return;
    // The first line that differs, to read without a diff tool.
    std::istringstream a(want), b(md);
    std::string la, lb;
    int line = 0;
    while (true) {
        ++line;
        const bool more_a = static_cast<bool>(std::getline(a, la)), more_b = static_cast<bool>(std::getline(b, lb));
        if (!more_a && !more_b) break;
        if (la != lb || more_a != more_b) break;
    }
    FAIL_CHECK(name << " differs from the golden at line " << line << "\n golden:   " << la << "\n rendered: " << lb
                    << "\n(PERFGATE_UPDATE_GOLDEN=1 rewrites it after a deliberate change)");
}

// A PR that slowed BM_Parse down: task-clock, cycles and instructions up,
// history saying the same; page faults (ungated) outside their band too.
gate::report fail_report()
{
    const std::vector<capture::counter_series> base = {
        series("task-clock", noisy(12.31, 0.01, 1), "msec"),      series("cycles", noisy(41.2e6, 0.01, 2)),
        series("instructions", noisy(30048892, 0.0001, 3)),       series("page-faults", noisy(1520, 0.01, 4)),
        series("branch-misses", noisy(181000, 0.02, 5)),          series("cache-misses", noisy(52000, 0.05, 6)),
        series("context-switches", std::vector<double>(10, 0.0)),
    };
    const std::vector<capture::counter_series> cand = {
        series("task-clock", noisy(13.79, 0.01, 11), "msec"),     series("cycles", noisy(45.9e6, 0.01, 12)),
        series("instructions", noisy(31046351, 0.0001, 13)),      series("page-faults", noisy(1610, 0.01, 14)),
        series("branch-misses", noisy(179000, 0.02, 15)),         series("cache-misses", noisy(51000, 0.05, 16)),
        series("context-switches", std::vector<double>(10, 0.0)),
    };
    gate::report r = compare(one(base, "BM_Parse"), one(cand, "BM_Parse"), policy{});
    as_measured(r, "perf");
    auto& tc = counter_of(r, "task-clock");
    tc.band = history_band{12.2, 12.6, 30, std::nullopt};
    tc.outside_band = true;
    tc.open_alerts = std::vector<open_alert>{};
    auto& cy = counter_of(r, "cycles");
    cy.band = history_band{40.8e6, 41.9e6, 30, std::nullopt};
    cy.outside_band = true;
    cy.open_alerts = std::vector<open_alert>{{3, model::alert_status::untriaged, 2.4, 118, std::string(tip_sha)}};
    auto& pf = counter_of(r, "page-faults");
    pf.band = history_band{1490, 1560, 30, std::nullopt};
    pf.outside_band = true;
    return r;
}

// The common noisy run: nothing changed beyond the threshold, while the
// machine ran faster than the branch's recent runs, so the band notes of
// every counter, gated or not, fire the better way.
gate::report pass_report()
{
    const std::vector<capture::counter_series> base = {
        series("task-clock", noisy(12.31, 0.02, 21), "msec"), series("cycles", noisy(41.2e6, 0.02, 22)),
        series("instructions", noisy(30048892, 0.0001, 23)),  series("page-faults", noisy(1520, 0.01, 24)),
        series("branch-misses", noisy(181000, 0.02, 25)),     series("cache-misses", noisy(52000, 0.05, 26)),
    };
    const std::vector<capture::counter_series> cand = {
        series("task-clock", noisy(12.30, 0.02, 31), "msec"), series("cycles", noisy(41.1e6, 0.02, 32)),
        series("instructions", noisy(30049000, 0.0001, 33)),  series("page-faults", noisy(1521, 0.01, 34)),
        series("branch-misses", noisy(180500, 0.02, 35)),     series("cache-misses", noisy(51800, 0.05, 36)),
    };
    gate::report r = compare(one(base, "BM_Parse"), one(cand, "BM_Parse"), policy{});
    as_measured(r, "perf");
    // Faster than the band: good news, and not above the details.
    for (auto* name : {"task-clock", "cycles", "page-faults", "branch-misses", "cache-misses"}) {
        auto& c = counter_of(r, name);
        const double m = c.candidate.median.value_or(0);
        c.band = history_band{m * 1.03, m * 1.10, 30, std::nullopt};
        c.outside_band = true;
    }
    return r;
}

// A shared runner switching speeds: both time counters bimodal, too noisy
// to decide; the instruction count decides nothing above its threshold.
gate::report inconclusive_report()
{
    const std::vector<capture::counter_series> base = {
        series("task-clock", two_speed(12.3, 15.4), "msec"),
        series("cycles", two_speed(41.2e6, 51.5e6)),
        series("instructions", noisy(30048892, 0.0001, 43, 12)),
    };
    const std::vector<capture::counter_series> cand = {
        series("task-clock", two_speed(12.6, 15.8), "msec"),
        series("cycles", two_speed(42.2e6, 52.8e6)),
        series("instructions", noisy(30101000, 0.0001, 53, 12)),
    };
    gate::report r = compare(one(base, "BM_Parse"), one(cand, "BM_Parse"), policy{});
    as_measured(r, "perf");
    return r;
}

// --backend callgrind: one execution per side, exact counts, and the
// functions that account for the change.
gate::report callgrind_report()
{
    const std::vector<capture::counter_series> base = {series("instructions", {30048892}),
                                                       series("estimated-cycles", {41208811})};
    const std::vector<capture::counter_series> cand = {series("instructions", {31046351}),
                                                       series("estimated-cycles", {42950017})};
    gate::report r = compare(one(base, "BM_Parse"), one(cand, "BM_Parse"), policy{});
    as_measured(r, "callgrind");
    callgrind_attribution cg;
    cg.total_before = 30048892;
    cg.total_after = 31046351;
    cg.top = {{"parser::tokenize(std::basic_string_view<char, std::char_traits<char> >)", "src/tokenize.cpp", 8120433,
               9031874, 911441, 0.8879, std::nullopt, std::nullopt},
              {"__memcpy_avx_unaligned_erms", "", 1203311, 1301544, 98233, 0.0957, std::nullopt, std::nullopt},
              {"parser::intern(std::string const&)", "src/intern.cpp", 2201987, 2185772, -16215, -0.0158, std::nullopt,
               std::nullopt}};
    r.benchmarks[0].attribution_info = attribution{cg, std::nullopt, std::nullopt, {}};
    return r;
}

// --backend memcheck: a leak and more allocations.
gate::report memcheck_report()
{
    const std::vector<capture::counter_series> base = {
        series("heap-allocs", {18231}),
        series("heap-bytes", {4718592}, "B"),
        series("heap-peak-bytes", {1245184}, "B"),
        series("leaked-bytes", {0}, "B"),
        series("memcheck-errors", {0}),
    };
    const std::vector<capture::counter_series> cand = {
        series("heap-allocs", {19911}),
        series("heap-bytes", {4720640}, "B"),
        series("heap-peak-bytes", {1245184}, "B"),
        series("leaked-bytes", {4096}, "B"),
        series("memcheck-errors", {0}),
    };
    gate::report r = compare(one(base, "BM_Parse"), one(cand, "BM_Parse"), policy{});
    as_measured(r, "memcheck");
    memory_attribution m;
    m.top = {{"leaked-bytes",
              "parser::cache::grow(unsigned long)",
              {"malloc (vg_replace_malloc.c:381)", "parser::cache::grow(unsigned long) (cache.cpp:41)",
               "parser::parse(std::string_view) (parser.cpp:88)"},
              "Leak_DefinitelyLost",
              "4,096 bytes in 1 blocks are definitely lost",
              0,
              4096},
             {"heap-allocs", "parser::intern(std::string const&)", {}, "", "", 2210, 3890}};
    r.benchmarks[0].attribution_info = attribution{std::nullopt, std::nullopt, m, {}};
    return r;
}

// 500 google/benchmark benchmarks (support/report.hpp generated_suite, no rate):
// 10 regressions, 5 improvements, the rest unchanged; 3 added, 2 removed,
// 1 failed.
gate::report suite_report()
{
    const auto [base, cand] = perfgate::test::generated_suite(500, false);
    gate::report r = compare(base, cand, policy{});
    as_measured(r, "perf");
    return r;
}

// Stored qualifications (perfgate qualify --server) of the testbed the
// reports ran on, as GET .../qualifications answers them.
constexpr const char* fingerprint = "5e1f0a9c2b7d4e31";
constexpr std::int64_t nov_28 = 1795856400; // 2026-11-28T09:00:00Z
constexpr std::int64_t nov_20 = 1795165200; // 2026-11-20T09:00:00Z

model::qualification stored(std::string benchmark, std::vector<model::qualified_counter> counters,
                            std::int64_t at = nov_28, std::string testbed_fp = fingerprint)
{
    model::qualification q;
    q.id = 1;
    q.testbed_fingerprint = std::move(testbed_fp);
    q.testbed = "ci-runner-2";
    q.benchmark = std::move(benchmark);
    q.backend = "perf";
    q.qualified_at = at;
    q.stored_at = at + 60;
    q.counters = std::move(counters);
    return q;
}

// detects_80_pct, detects_95_pct at a 2% threshold, not deterministic.
model::qualified_counter reach(std::string counter, std::optional<double> d80, std::optional<double> d95 = {})
{
    return {std::move(counter), 2, d80, d95, d80 && *d80 <= 2, false};
}

// What the verdict is made of, to compare a report with and without its qualification.
std::vector<std::string> verdicts(const gate::report& r)
{
    std::vector<std::string> out{std::string(to_string(r.result))};
    for (const auto& b : r.benchmarks) {
        out.emplace_back(to_string(b.result));
        for (const auto& c : b.counters) out.push_back(c.name + ":" + std::string(to_string(c.state)));
    }
    return out;
}

} // namespace

TEST_CASE("comment golden: fail")
{
    const gate::report r = fail_report();
    REQUIRE(r.result == verdict::fail);
    check_golden("fail.md", render_markdown(r, pr_options()));
}

TEST_CASE("comment golden: pass on a noisy run")
{
    const gate::report r = pass_report();
    REQUIRE(r.result == verdict::pass);
    const std::string md = render_markdown(r, pr_options());
    // Band notes of counters that moved the better way, and of ungated
    // ones, are in the collapsed details only.
    CHECK(md.find("the baseline's recent band") > md.find("<details><summary>All counters"));
    check_golden("pass.md", md);
}

TEST_CASE("comment golden: inconclusive")
{
    const gate::report r = inconclusive_report();
    REQUIRE(r.result == verdict::inconclusive);
    check_golden("inconclusive.md", render_markdown(r, pr_options()));
}

TEST_CASE("comment golden: callgrind")
{
    const gate::report r = callgrind_report();
    REQUIRE(r.result == verdict::fail);
    markdown_options o = pr_options();
    o.artifacts_url = o.run_url + "#artifacts";
    o.artifact_name = "perfgate-artifacts";
    const std::string md = render_markdown(r, o);
    // callgrind makes no flame graph: the artifacts line does not promise one.
    CHECK(md.find("flame graph") == std::string::npos);
    check_golden("callgrind.md", md);
}

TEST_CASE("comment golden: memcheck")
{
    const gate::report r = memcheck_report();
    REQUIRE(r.result == verdict::fail);
    markdown_options o = pr_options();
    o.artifacts_url = o.run_url + "#artifacts";
    o.artifact_name = "perfgate-artifacts";
    check_golden("memcheck.md", render_markdown(r, o));
}

TEST_CASE("comment golden: 500 benchmarks")
{
    const gate::report r = suite_report();
    REQUIRE(r.result == verdict::fail);
    const std::string md = render_markdown(r, pr_options());
    // GitHub refuses a comment body over 65,536 characters
    // (github/publish.cpp, comment_limit), and the regressions come first.
    CHECK(md.size() <= 65536);
    CHECK(md.size() > 60000); // the limit, not the content, cut it
    CHECK(md.find("| 🔴 |") < md.find("| 🟢 |"));
    check_golden("suite-500.md", md);
}

TEST_CASE("comment values: units scaled, counts grouped, nothing invented")
{
    using perfgate::report::detail::display_value;
    using perfgate::report::detail::grouped;
    CHECK(grouped(30048892) == "30,048,892");
    CHECK(grouped(-1234.6) == "-1,235");
    CHECK(grouped(999) == "999");
    CHECK(grouped(1800, true) == "+1,800");
    CHECK(grouped(0, true) == "0");
    CHECK(display_value(12.3456, "msec") == "12.35 ms");
    CHECK(display_value(0.0421, "msec") == "42.10 us");
    CHECK(display_value(834, "ns") == "834.0 ns");
    CHECK(display_value(2.5e9, "ns") == "2.500 s");
    CHECK(display_value(0, "msec") == "0 ms");
    CHECK(display_value(4096, "B") == "4,096 B");
    CHECK(display_value(4718592, "B") == "4.500 MiB");
    CHECK(display_value(3.5 * 1024 * 1024, "KiB") == "3.500 GiB"); // max-rss is in KiB
    CHECK(display_value(30048892, "") == "30,048,892");
    CHECK(display_value(12.5, "") == "12.50");
    CHECK(display_value(1.25, "insn/cycle") == "1.25 insn/cycle");
    CHECK(display_value(std::nullopt, "ns") == "—");
    CHECK(display_value(std::numeric_limits<double>::quiet_NaN(), "ns") == "—");
    CHECK(display_value(std::numeric_limits<double>::infinity(), "") == "—");
}

TEST_CASE("report JSON: measured is written by both writers, read back, and optional")
{
    gate::report r = fail_report();
    r.measured->testbed.clear(); // pairs that disagree: null
    const nlohmann::json j = to_json(r);
    CHECK(j.at("measured") == nlohmann::json{{"backend", "perf"},
                                             {"testbed", nullptr},
                                             {"baseline_sha", std::string(base_sha)},
                                             {"candidate_sha", std::string(head_sha)}});
    CHECK(to_json_text(r) == j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    const gate::report back = report_from_json(j);
    REQUIRE(back.measured);
    CHECK(back.measured->backend == "perf");
    CHECK(back.measured->testbed.empty());
    CHECK(back.measured->candidate_sha == head_sha);
    // Reports stored before it: absent, and the head says only what it knows.
    nlohmann::json old = j;
    old.erase("measured");
    old.erase("baseline_ref");
    const gate::report plain = report_from_json(old);
    CHECK_FALSE(plain.measured);
    const std::string md = render_markdown(plain, pr_options());
    CHECK(md.find("Head ") == std::string::npos);
    CHECK(md.find("backend") == std::string::npos);
    CHECK(md.find("### ❌ perfgate: **fail** — 3 regressions\n\n| | benchmark |") != std::string::npos);
}

TEST_CASE("junit: names are XML text, control characters visible, counts agree")
{
    gate::report r = fail_report();
    r.benchmarks.front().name = "BM_<a>&\"b\"\x1b[2J\nc";
    r.failed.push_back({"BM_Gone", "candidate", "exit 3 </failure>"});
    const std::string xml = render_junit(r, "perf & co");
    CHECK(xml.find('\x1b') == std::string::npos);
    CHECK(xml.find(R"(classname="BM_&lt;a&gt;&amp;&quot;b&quot;\x1b[2J\x0ac")") != std::string::npos);
    CHECK(xml.find(R"(<testsuites name="perf &amp; co")") != std::string::npos);
    CHECK(xml.find(R"(<error type="failed" message="failed (candidate): exit 3 &lt;/failure&gt;"/>)") !=
          std::string::npos);
    CHECK(xml.find(R"(<failure type="regression")") != std::string::npos);
    CHECK(xml.find(R"(name="verdict" value="fail")") != std::string::npos);
    // Ungated counters (page-faults, branch-misses, ...) are not test cases.
    CHECK(xml.find(R"(name="page-faults")") == std::string::npos);
}

TEST_CASE("comment golden: the testbed's qualification in the head, advice where it cannot reach the threshold")
{
    gate::report r = fail_report();
    const std::string plain = render_markdown(r, pr_options());
    attach_qualifications(r, fingerprint,
                          {stored("BM_Parse", {reach("task-clock", 1.5, 3), reach("cycles", 5, 10),
                                               reach("page-faults", 1, 2), reach("not-measured", 1)}),
                           // older, and another testbed's: not read
                           stored("BM_Parse", {reach("task-clock", 40)}, nov_20),
                           stored("BM_Parse", {reach("task-clock", 90)}, nov_28 + 5, "0000000000000000")});
    REQUIRE(r.qualification);
    REQUIRE(r.qualification->benchmarks.size() == 1);
    // Only the counters this report gates (page-faults is reported, not gated).
    REQUIRE(r.qualification->benchmarks[0].counters.size() == 2);
    CHECK(r.qualification->benchmarks[0].counters[0].counter == "task-clock");
    CHECK(r.qualification->benchmarks[0].counters[1].counter == "cycles");
    REQUIRE(r.advice.size() == 1);
    CHECK(r.advice[0].counter == "cycles");
    CHECK(r.advice[0].detectable_pct == 5);
    CHECK(r.advice[0].threshold_pct == 2);
    CHECK(r.advice[0].message == "cycles of BM_Parse: this testbed detects \u2265 5% in 80% of gates (qualified "
                                 "2026-11-28), above the 2% threshold: a smaller regression is likely to pass unseen "
                                 "here");
    const std::string md = render_markdown(r, pr_options());
    CHECK(md.find("Qualification: this testbed detects \u2265 1.5% of task-clock, \u2265 5% of cycles \\(qualified "
                  "2026-11-28\\)\n") != std::string::npos);
    // Under the head's context line, above the table; the advice above the links.
    CHECK(md.find("testbed **ci-runner-2**\n\nQualification:") != std::string::npos);
    CHECK(md.find("**What this testbed can see**") < md.find("[CI run]"));
    CHECK(plain.find("Qualification") == std::string::npos);
    CHECK(plain.find("What this testbed can see") == std::string::npos);
    check_golden("qualified.md", md);

    const std::string text = render_text(r, false);
    CHECK(text.find("qualification: this testbed detects \u2265 1.5% of task-clock") != std::string::npos);
    CHECK(text.find("advice (the testbed's qualification; not part of the verdict):\n  ! cycles of BM_Parse:") !=
          std::string::npos);
}

TEST_CASE("comment golden: a suite's qualification line, worst benchmark per counter")
{
    const auto [base, cand] = perfgate::test::generated_suite(12, false);
    gate::report r = compare(base, cand, policy{});
    as_measured(r, "perf");
    const std::string plain = render_markdown(r, pr_options());
    std::vector<model::qualification> found;
    found.push_back(stored("BM_Suite/0/real_time", {reach("real_time", 4, 6), reach("cpu_time", 3, 5)}, nov_20));
    found.push_back(stored("BM_Suite/3/real_time", {reach("real_time", 12, 20), reach("cpu_time", 2, 3)}));
    found.push_back(stored("BM_Suite/5/real_time", {reach("real_time", std::nullopt), reach("cpu_time", 1, 2)}));
    found.push_back(stored("BM_Elsewhere", {reach("real_time", 1)})); // not in the report
    attach_qualifications(r, fingerprint, found);
    REQUIRE(r.qualification);
    CHECK(r.qualification->benchmarks.size() == 3);
    const std::string line = model::qualification_line(*r.qualification, r.benchmarks.size());
    CAPTURE(line);
    CHECK(line.starts_with("3 of 11 benchmarks qualified: this testbed "));
    CHECK(line.ends_with(" (qualified 2026-11-20 to 2026-11-28)"));
    const std::string md = render_markdown(r, pr_options());
    CHECK(md.find("Qualification: 3 of 11 benchmarks qualified") != std::string::npos);
    CHECK(plain.find("Qualification") == std::string::npos);
    check_golden("suite-qualified.md", md);

    // Advice on every benchmark: ten lines in the comment, the rest counted.
    found.clear();
    for (const auto& b : r.benchmarks) found.push_back(stored(b.name, {reach("real_time", 50), reach("cpu_time", 50)}));
    attach_qualifications(r, fingerprint, found);
    REQUIRE(r.advice.size() == 22);
    const std::string many = render_markdown(r, pr_options());
    CHECK(many.find("- … and 12 more (the JSON report's `advice` has every one)\n") != std::string::npos);
    CHECK(many.find("real\\_time of BM\\_Suite/4/real\\_time") != std::string::npos);
    CHECK(many.find("cpu\\_time of BM\\_Suite/5/real\\_time") == std::string::npos);
    CHECK(to_json(r).at("advice").size() == 22);
}

TEST_CASE("qualification line: one counter, several, deterministic, none caught, a suite")
{
    using model::qualification_line;
    model::testbed_qualifications q{fingerprint, {stored("BM_Parse", {reach("task-clock", 10, 30)})}};
    // One counter: the dashboard's sentence (model::detects_line).
    CHECK(qualification_line(q, 1) == "this testbed detects \u2265 10% of task-clock (qualified 2026-11-28)");
    CHECK(qualification_line(q, 1) == model::detects_line(q.benchmarks[0], q.benchmarks[0].counters[0]));
    q.benchmarks[0].counters.push_back({"instructions", 2, 0, 0, true, true});
    q.benchmarks[0].counters.push_back(reach("cycles", std::nullopt));
    CHECK(qualification_line(q, 1) ==
          "this testbed detects \u2265 10% of task-clock, detects any change of instructions at or above the 2% "
          "threshold (deterministic), caught no slowdown of cycles in 80% of gates (qualified 2026-11-28)");
    // A suite names the worst benchmark, the first that caught nothing, and counts the others.
    q.benchmarks.push_back(stored(
        "BM_Emit", {reach("task-clock", 25), reach("cycles", std::nullopt), {"instructions", 5, 0, 0, true, true}},
        nov_20));
    q.benchmarks.push_back(stored("BM_Lex", {reach("cycles", std::nullopt)}));
    CHECK(qualification_line(q, 40) ==
          "3 of 40 benchmarks qualified: this testbed detects \u2265 25% of task-clock (worst: BM_Emit), detects any "
          "change of instructions at or above its threshold (deterministic), caught no slowdown of cycles in 80% of "
          "gates (BM_Parse and 2 more) (qualified 2026-11-20 to 2026-11-28)");
    // Nothing left to say: no line.
    CHECK(qualification_line(model::testbed_qualifications{fingerprint, {stored("BM_Parse", {})}}, 1).empty());
}

TEST_CASE("qualification advice: only a counter whose threshold is out of reach, the verdict never changes")
{
    // Reaches: deterministic, or the 80% figure at or below the gate's threshold.
    const model::qualification q = stored("BM_Parse", {});
    CHECK_FALSE(model::advice_for(q, {"instructions", 2, std::nullopt, std::nullopt, true, true}, 2));
    CHECK_FALSE(model::advice_for(q, reach("task-clock", 2), 2));
    CHECK(model::advice_for(q, reach("task-clock", 2.5), 2));
    const auto blind = model::advice_for(q, reach("task-clock", std::nullopt), 5);
    REQUIRE(blind);
    CHECK_FALSE(blind->detectable_pct);
    CHECK(blind->message == "task-clock of BM_Parse: this testbed caught no slowdown tried in 80% of gates "
                            "(qualified 2026-11-28): the 5% threshold is out of its reach (qualified at a 2% "
                            "threshold: qualify again with this policy)");
    const auto same = model::advice_for(q, reach("task-clock", 8), 2);
    REQUIRE(same);
    CHECK(same->message.find("qualified at a") == std::string::npos);

    // The same pass, fail and inconclusive with and without a qualification
    // that puts every gated counter out of reach.
    for (gate::report r : {fail_report(), pass_report(), inconclusive_report(), callgrind_report()}) {
        const auto before = verdicts(r);
        const std::string json_before = to_json(r).dump();
        std::vector<model::qualified_counter> counters;
        for (const auto& c : r.benchmarks[0].counters) counters.push_back(reach(c.name, 50, 80));
        attach_qualifications(r, fingerprint, {stored("BM_Parse", counters)});
        CHECK(verdicts(r) == before);
        CHECK_FALSE(r.advice.empty());
        CHECK(r.advice.size() == r.qualification->benchmarks[0].counters.size());
        // Taken off again: the report is the gate's, byte for byte.
        attach_qualifications(r, fingerprint, {});
        CHECK_FALSE(r.qualification);
        CHECK(to_json(r).dump() == json_before);
    }
}

TEST_CASE("qualification advice: a malformed figure is ignored, never part of the report")
{
    gate::report r = fail_report();
    model::qualification q = stored("BM_Parse", {reach("task-clock", -3), reach("cycles", 5)});
    q.counters.push_back({"instructions", std::numeric_limits<double>::quiet_NaN(), 1, 2, false, false});
    attach_qualifications(r, fingerprint, {q});
    REQUIRE(r.qualification);
    REQUIRE(r.qualification->benchmarks[0].counters.size() == 1);
    CHECK(r.qualification->benchmarks[0].counters[0].counter == "cycles");
    q.counters = {reach("task-clock", -1)};
    attach_qualifications(r, fingerprint, {q});
    CHECK_FALSE(r.qualification);
    CHECK(r.advice.empty());
}

TEST_CASE("report JSON: qualification and advice written by both writers, read back, optional")
{
    gate::report r = fail_report();
    attach_qualifications(r, fingerprint,
                          {stored("BM_Parse", {reach("task-clock", 1.5, 3), reach("cycles", std::nullopt)})});
    const nlohmann::json j = to_json(r);
    // Delimited raw strings: the messages hold ")\"".
    const nlohmann::json want_qualification = nlohmann::json::parse(R"json({"testbed_fingerprint": "5e1f0a9c2b7d4e31",
        "line": "this testbed detects \u2265 1.5% of task-clock, caught no slowdown of cycles in 80% of gates (qualified 2026-11-28)",
        "benchmarks": [{"benchmark": "BM_Parse", "testbed": "ci-runner-2", "backend": "perf",
                        "qualified_at": 1795856400, "date": "2026-11-28T09:00:00Z",
                        "counters": [{"counter": "task-clock", "threshold_pct": 2, "detects_80_pct": 1.5,
                                      "detects_95_pct": 3, "reaches_threshold": true, "deterministic": false},
                                     {"counter": "cycles", "threshold_pct": 2, "detects_80_pct": null,
                                      "detects_95_pct": null, "reaches_threshold": false, "deterministic": false}]}]
})json");
    const nlohmann::json want_advice = nlohmann::json::parse(R"json([{"benchmark": "BM_Parse", "counter": "cycles",
        "threshold_pct": 2, "detectable_pct": null, "qualified_at": 1795856400,
        "message": "cycles of BM_Parse: this testbed caught no slowdown tried in 80% of gates (qualified 2026-11-28): the 2% threshold is out of its reach"}])json");
    CHECK(j.at("qualification") == want_qualification);
    CHECK(j.at("advice") == want_advice);
    CHECK(to_json_text(r) == j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    const gate::report back = report_from_json(j);
    REQUIRE(back.qualification);
    CHECK(to_json(back) == j);
    CHECK(render_markdown(back, pr_options()) == render_markdown(r, pr_options()));
    // Absent without them, and reports without them read as before.
    nlohmann::json old = j;
    old.erase("qualification");
    old.erase("advice");
    const gate::report plain = report_from_json(old);
    CHECK_FALSE(plain.qualification);
    CHECK(plain.advice.empty());
    CHECK_FALSE(to_json(plain).contains("qualification"));
    CHECK_FALSE(to_json(plain).contains("advice"));
    // A malformed member is the report's error, naming it.
    nlohmann::json bad = j;
    bad["qualification"]["benchmarks"][0].erase("qualified_at");
    CHECK_THROWS_WITH_AS((void)report_from_json(bad), doctest::Contains("qualified_at"), perfgate::error);
}
