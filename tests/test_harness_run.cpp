// perfgate run --harness gbench (runner/harness_gbench.cpp): the real
// perfgate binary on the four builds of tests/gbench_suite.cpp, a
// google/benchmark program of three benchmarks. Timing verdicts are asserted
// only for a 3x slowdown (this VM varies 10-20% run to run); everything
// else runs under callgrind, whose counts are deterministic.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"

using nlohmann::json;
using perfgate::test::run_perfgate;
using perfgate::test::temp_dir;

namespace {

const std::string suite = PERFGATE_BINARY_DIR "/tests/gbench_suite";

// The binary with a short minimum time per benchmark: a round takes ~0.1 s.
std::string quick(const std::string& variant) { return suite + variant + " --benchmark_min_time=0.02"; }

struct outcome {
    int code = -1;
    json report;
    std::string err;
};

outcome run(const std::vector<std::string>& args, const std::filesystem::path& dir)
{
    std::vector<std::string> all = {"run", "-q", "--format", "json", "--db", (dir / "p.db").string()};
    all.insert(all.end(), args.begin(), args.end());
    const auto r = run_perfgate(all, dir);
    outcome o;
    o.code = r.code;
    o.err = r.err;
    if (!r.out.empty()) o.report = json::parse(r.out, nullptr, false);
    return o;
}

const json* benchmark(const json& report, const std::string& name)
{
    for (const auto& b : report.at("benchmarks"))
        if (b.at("name") == name) return &b;
    return nullptr;
}

const json& counter(const json& report, const std::string& bench, const std::string& name)
{
    const json* b = benchmark(report, bench);
    REQUIRE_MESSAGE(b, "no benchmark " << bench);
    for (const auto& c : b->at("counters"))
        if (c.at("name") == name) return c;
    FAIL("no counter " << bench << "/" << name);
    throw std::logic_error("unreachable");
}

std::vector<std::string> names(const json& report)
{
    std::vector<std::string> out;
    for (const auto& b : report.at("benchmarks")) out.push_back(b.at("name"));
    return out;
}

} // namespace

TEST_CASE("run --harness gbench: the benchmark made 3x slower fails, the others do not")
{
    temp_dir dir("pg-harness-slow");
    // Threshold 50%: the two builds lay out the unchanged benchmarks'
    // code differently, a real shift of a few percent that a busy machine's
    // noise can make significant; what is asserted is the 3x one.
    std::ofstream(dir.path() / "policy.json") << R"({"threshold_pct": 50})";
    const auto o = run({"--harness", "gbench", "--baseline", quick(""), "--candidate", quick("_slow"), "-r", "10",
                        "--policy", (dir.path() / "policy.json").string()},
                       dir.path());
    INFO(o.err);
    REQUIRE(o.report.is_object());
    CHECK(o.code == 1);
    CHECK(o.report.at("verdict") == "fail");
    CHECK(names(o.report) == std::vector<std::string>{"BM_Work/2048", "BM_Copy", "BM_Hash"});
    for (const char* t : {"real_time", "cpu_time"}) {
        const json& hash = counter(o.report, "BM_Hash", t);
        CHECK(hash.at("status") == "regression");
        CHECK(hash.at("delta_pct").get<double>() > 100.0); // about +200%
        CHECK(hash.at("unit") == "ns");
        for (const char* other : {"BM_Work/2048", "BM_Copy"}) {
            CAPTURE(other);
            CHECK(counter(o.report, other, t).at("status") != "regression");
        }
    }
    CHECK(benchmark(o.report, "BM_Hash")->at("verdict") == "fail");
}

TEST_CASE("run --harness gbench: the binary's own --benchmark_repetitions give that many samples a round")
{
    temp_dir dir("pg-harness-reps");
    const std::string twice = quick("") + " --benchmark_repetitions=2";
    const auto o = run({"--harness", "gbench", "--backend", "rusage", "--baseline", twice, "--candidate", twice, "-r",
                        "3", "--warmup", "0", "--filter", "BM_Copy"},
                       dir.path());
    INFO(o.err);
    REQUIRE(o.report.is_object());
    const json& c = counter(o.report, "BM_Copy", "cpu_time");
    CHECK(c.at("baseline").at("n") == 6); // 3 rounds x 2 repetitions, aggregates not counted
    CHECK(c.at("candidate").at("n") == 6);
}

TEST_CASE("run --harness gbench: A/A passes or is inconclusive, never fails")
{
    temp_dir dir("pg-harness-aa");
    // alpha 0.001: a family-wise false alarm rate of 0.1%, so that this test
    // cannot flake on the noise it measures.
    std::ofstream(dir.path() / "policy.json") << R"({"alpha": 0.001})";
    const auto o = run({"--harness", "gbench", "--baseline", quick(""), "--candidate", quick(""), "-r", "8", "--policy",
                        (dir.path() / "policy.json").string()},
                       dir.path());
    INFO(o.err);
    REQUIRE(o.report.is_object());
    CHECK(o.code == 0);
    CHECK(o.report.at("verdict") != "fail");
    CHECK(o.report.at("benchmarks").size() == 3);
}

TEST_CASE("run --harness gbench --backend callgrind: instructions per iteration, deterministic, 3x where it should be")
{
    temp_dir dir("pg-harness-callgrind");
    const auto slow = run({"--harness", "gbench", "--backend", "callgrind", "--baseline", suite, "--candidate",
                           suite + "_slow"},
                          dir.path());
    INFO(slow.err);
    REQUIRE(slow.report.is_object());
    CHECK(slow.code == 1);
    const json& hash = counter(slow.report, "BM_Hash", "instructions");
    CHECK(hash.at("status") == "regression");
    CHECK(hash.at("method") == "deterministic");
    const double ratio = hash.at("candidate").at("median").get<double>() /
                         hash.at("baseline").at("median").get<double>();
    CHECK(ratio > 2.8);
    CHECK(ratio < 3.1);
    for (const char* other : {"BM_Work/2048", "BM_Copy"}) {
        CAPTURE(other);
        const json& c = counter(slow.report, other, "instructions");
        CHECK(c.at("status") == "unchanged");
        CHECK(c.at("delta_pct") == 0.0);
    }
    // Per iteration, not per process: BM_Work's loop is 2048 additions
    // (under 1,000 instructions once clang vectorises it, ~8,000 with gcc),
    // far from a process's millions.
    const double work = counter(slow.report, "BM_Work/2048", "instructions").at("baseline").at("median").get<double>();
    CHECK(work > 100);
    CHECK(work < 50000);
    // The regressed benchmark's attribution names the function.
    const json* hb = benchmark(slow.report, "BM_Hash");
    REQUIRE(hb->contains("attribution"));
    CHECK(hb->at("attribution").dump().find("BM_Hash") != std::string::npos);

    // A/A, twice: the same counts every time.
    const auto a = run({"--harness", "gbench", "--backend", "callgrind", "--baseline", suite, "--candidate", suite},
                       dir.path());
    const auto b = run({"--harness", "gbench", "--backend", "callgrind", "--baseline", suite, "--candidate", suite},
                       dir.path());
    REQUIRE(a.report.is_object());
    REQUIRE(b.report.is_object());
    CHECK(a.code == 0);
    CHECK(a.report.at("verdict") == "pass");
    for (const char* bench : {"BM_Work/2048", "BM_Copy", "BM_Hash"}) {
        CAPTURE(bench);
        const json& x = counter(a.report, bench, "instructions");
        CHECK(x.at("baseline").at("median") == x.at("candidate").at("median"));
        CHECK(x.at("baseline").at("median") == counter(b.report, bench, "instructions").at("baseline").at("median"));
        CHECK(x.at("baseline").at("median") == counter(slow.report, bench, "instructions").at("baseline").at("median"));
    }
}

TEST_CASE("run --harness gbench: SkipWithError is reported as failed, an added benchmark as added, --filter filters")
{
    temp_dir dir("pg-harness-skip");
    const auto skip = run({"--harness", "gbench", "--backend", "callgrind", "--baseline", suite, "--candidate",
                           suite + "_skip"},
                          dir.path());
    INFO(skip.err);
    REQUIRE(skip.report.is_object());
    CHECK(skip.code == 0); // inconclusive: exit 0 without --fail-on-inconclusive
    CHECK(skip.report.at("verdict") == "inconclusive");
    REQUIRE(skip.report.contains("failed"));
    REQUIRE(skip.report.at("failed").size() == 1);
    CHECK(skip.report.at("failed")[0].at("name") == "BM_Copy");
    CHECK(skip.report.at("failed")[0].at("side") == "candidate");
    CHECK(skip.report.at("failed")[0].at("message") == "input file missing");
    CHECK(names(skip.report) == std::vector<std::string>{"BM_Work/2048", "BM_Hash"});
    const auto strict = run({"--harness", "gbench", "--backend", "callgrind", "--baseline", suite, "--candidate",
                             suite + "_skip", "--fail-on-inconclusive"},
                            dir.path());
    CHECK(strict.code == 3);

    const auto more = run({"--harness", "gbench", "--backend", "callgrind", "--baseline", suite, "--candidate",
                           suite + "_more", "--filter", "BM_(Work|New)"},
                          dir.path());
    INFO(more.err);
    REQUIRE(more.report.is_object());
    CHECK(more.code == 0);
    CHECK(names(more.report) == std::vector<std::string>{"BM_Work/2048"});
    REQUIRE(more.report.contains("added"));
    CHECK(more.report.at("added") == json::array({"BM_New"}));
    CHECK_FALSE(more.report.contains("removed"));
}

TEST_CASE("run --harness gbench: usage errors and a binary that is not google/benchmark's")
{
    temp_dir dir("pg-harness-errors");
    auto code_and_err = [&](const std::vector<std::string>& args) {
        std::vector<std::string> all = {"run", "-q", "--db", (dir.path() / "p.db").string()};
        all.insert(all.end(), args.begin(), args.end());
        return run_perfgate(all, dir.path());
    };
    auto bad = code_and_err({"--harness", "catch", "--baseline", suite, "--candidate", suite});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--harness: expected gbench, got 'catch'") != std::string::npos);
    bad = code_and_err({"--filter", "BM_", "--baseline", suite, "--candidate", suite});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--filter applies to --harness gbench only") != std::string::npos);
    bad = code_and_err({"--harness", "gbench", "--budget", "30", "--baseline", suite, "--candidate", suite});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("sequential sampling") != std::string::npos);
    bad = code_and_err({"--harness", "gbench", "--profile", "--baseline", suite, "--candidate", suite});
    CHECK(bad.code == 2);

    // A filter that matches nothing: google/benchmark runs nothing, says so.
    const auto none = code_and_err({"--harness", "gbench", "--backend", "callgrind", "--filter", "BM_Nothing",
                                    "--baseline", suite, "--candidate", suite});
    CHECK(none.code == 4);
    CHECK(none.err.find("ran no benchmark (does --filter 'BM_Nothing' match any?)") != std::string::npos);

    // Not a google/benchmark binary: it writes no JSON.
    const auto not_gbench = code_and_err({"--harness", "gbench", "--backend", "rusage", "-r", "1", "--warmup", "0",
                                          "--baseline", "true", "--candidate", "true"});
    CHECK(not_gbench.code == 4);
    CHECK(not_gbench.err.find("wrote no JSON to --benchmark_out") != std::string::npos);

    // The same in a config file, with its keys checked.
    const auto config = dir.path() / "bench.json";
    std::ofstream(config) << json::array({{{"name", "suite"},
                                           {"harness", "gbench"},
                                           {"filter", "BM_Hash"},
                                           {"baseline", suite},
                                           {"candidate", suite + "_slow"}}})
                                 .dump();
    const auto from_config = run({"--backend", "callgrind", "--config", config.string()}, dir.path());
    INFO(from_config.err);
    REQUIRE(from_config.report.is_object());
    CHECK(from_config.code == 1);
    CHECK(names(from_config.report) == std::vector<std::string>{"BM_Hash"});
    std::ofstream(config)
        << json::array({{{"name", "suite"}, {"harness", "gbench2"}, {"baseline", suite}, {"candidate", suite}}}).dump();
    bad = code_and_err({"--config", config.string()});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("benchmarks[0].harness: expected \"gbench\"") != std::string::npos);
}
