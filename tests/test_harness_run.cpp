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

TEST_CASE("run --harness gbench: a process is one sample, the median of its repetitions")
{
    temp_dir dir("pg-harness-reps");
    // The binary's own --benchmark_repetitions: 2 rows a process, one sample.
    const std::string twice = quick("") + " --benchmark_repetitions=2";
    const auto o = run({"--harness", "gbench", "--backend", "rusage", "--baseline", twice, "--candidate", twice, "-r",
                        "3", "--warmup", "0", "--filter", "BM_Copy"},
                       dir.path());
    INFO(o.err);
    REQUIRE(o.report.is_object());
    const json& c = counter(o.report, "BM_Copy", "cpu_time");
    CHECK(c.at("baseline").at("n") == 3); // 3 rounds, 1 sample each
    CHECK(c.at("candidate").at("n") == 3);

    // A command that says nothing of repetitions or min-time gets perfgate's
    // min-time, 0.17 s (the wrapper logs its arguments); one that gives its
    // own keeps it.
    const auto log = dir.path() / "args.log";
    const auto wrap = dir.path() / "wrap.sh";
    std::ofstream(wrap) << "#!/bin/sh\necho \"$@\" >> " << log.string() << "\nexec " << suite << " \"$@\"\n";
    std::filesystem::permissions(wrap, std::filesystem::perms::owner_all);
    const auto d = run({"--harness", "gbench", "--backend", "rusage", "--baseline", wrap.string(), "--candidate",
                        wrap.string() + " --benchmark_min_time=0.01", "-r", "1", "--warmup", "0", "--filter",
                        "BM_Copy"},
                       dir.path());
    INFO(d.err);
    REQUIRE(d.code == 0);
    std::ifstream in(log);
    std::string baseline_args, candidate_args;
    std::getline(in, baseline_args);
    std::getline(in, candidate_args);
    CHECK(baseline_args.find("--benchmark_min_time=0.17") != std::string::npos);
    CHECK(baseline_args.find("--benchmark_repetitions") == std::string::npos);
    CHECK(candidate_args.find("--benchmark_min_time=0.01") != std::string::npos);
    CHECK(candidate_args.find("--benchmark_repetitions") == std::string::npos);
    CHECK(candidate_args.find("--benchmark_min_time=0.17") == std::string::npos);
    CHECK(counter(d.report, "BM_Copy", "cpu_time").at("baseline").at("n") == 1);
}

TEST_CASE("run --harness gbench: cpu_time gates and real_time is reported, or a benchmark's declared time gates")
{
    temp_dir dir("pg-harness-times");
    const std::string timed = suite + "_timed --benchmark_min_time=0.01";
    const auto gated = [](const json& report, const std::string& bench, const std::string& name) {
        return counter(report, bench, name).at("gated").get<bool>();
    };
    // Under perf with no perf in PATH: google/benchmark's times need none.
    const auto o = run({"--harness", "gbench", "--backend", "perf", "--baseline", timed, "--candidate", timed, "-r",
                        "2", "--warmup", "0"},
                       dir.path());
    INFO(o.err);
    REQUIRE(o.report.is_object());
    CHECK(o.report.at("measured").at("backend") == "gbench");
    for (const char* plain : {"BM_Work/2048", "BM_Copy", "BM_Hash"}) {
        CAPTURE(plain);
        CHECK(gated(o.report, plain, "cpu_time"));
        CHECK_FALSE(gated(o.report, plain, "real_time"));
    }
    for (const char* declared : {"BM_Wall/real_time", "BM_Manual/manual_time"}) {
        CAPTURE(declared);
        CHECK(gated(o.report, declared, "real_time"));
        CHECK_FALSE(gated(o.report, declared, "cpu_time"));
    }
    // A policy that gates real_time everywhere is obeyed.
    std::ofstream(dir.path() / "policy.json") << R"({"counters": {"real_time": {"gate": true}}})";
    const auto both = run({"--harness", "gbench", "--backend", "rusage", "--baseline", timed, "--candidate", timed,
                           "-r", "2", "--warmup", "0", "--filter", "BM_(Copy|Wall)", "--policy",
                           (dir.path() / "policy.json").string()},
                          dir.path());
    INFO(both.err);
    REQUIRE(both.report.is_object());
    CHECK(gated(both.report, "BM_Copy", "real_time"));
    CHECK(gated(both.report, "BM_Copy", "cpu_time"));
    CHECK(gated(both.report, "BM_Wall/real_time", "real_time"));
    CHECK_FALSE(gated(both.report, "BM_Wall/real_time", "cpu_time"));
}

TEST_CASE("run --harness gbench --budget: decided benchmarks stop, the undecided ones run on alone")
{
    temp_dir dir("pg-harness-budget");
    // A/A, one binary. BM_Work and BM_Hash, threshold 1000%: unchanged at
    // the first look. BM_Copy, threshold 0.001%: an interval that narrow is
    // out of reach, and at alpha 0.001 a significant A/A difference at the
    // first looks has a chance of about 1e-5: undecided to the last look.
    std::ofstream(dir.path() / "policy.json") << R"({"alpha": 0.001, "threshold_pct": 1000,
        "benchmarks": {"BM_Copy": {"threshold_pct": 0.001}}})";
    // Not -q: the progress lines are on stderr.
    const auto r = run_perfgate({"run", "--format", "json", "--db", (dir.path() / "p.db").string(), "--harness",
                                 "gbench", "--baseline", quick(""), "--candidate", quick(""), "--budget", "600",
                                 "--min-repetitions", "10", "--max-repetitions", "20", "--policy",
                                 (dir.path() / "policy.json").string()},
                                dir.path());
    INFO(r.err);
    REQUIRE(r.code == 0);
    const json report = json::parse(r.out);
    for (const char* decided : {"BM_Work/2048", "BM_Hash"}) {
        CAPTURE(decided);
        const json& c = counter(report, decided, "cpu_time");
        CHECK(c.at("status") == "unchanged");
        CHECK(c.at("baseline").at("n") == 10);
        CHECK(c.at("candidate").at("n") == 10);
        CHECK(c.at("sequential").at("look") == 1);
    }
    // Only BM_Copy ran after the first look, to the last.
    const json& copy = counter(report, "BM_Copy", "cpu_time");
    CHECK(copy.at("baseline").at("n") == 20);
    CHECK(copy.at("candidate").at("n") == 20);
    CHECK(copy.at("status") == "inconclusive");
    // (the test sees stderr's last lines only)
    CHECK(r.err.find("round 12/20 done (1 benchmarks)") != std::string::npos);
    CHECK(r.err.find("look after 15 rounds: 0 decided, 1 of 3 benchmarks left, measuring them more") !=
          std::string::npos);
    CHECK(r.err.find("look after 20 rounds: max repetitions reached, 1 benchmarks measured so far") !=
          std::string::npos);
}

TEST_CASE("run --harness gbench --budget: a benchmark 3x slower is a regression at the first look")
{
    temp_dir dir("pg-harness-budget-ab");
    const auto o = run({"--harness", "gbench", "--baseline", quick(""), "--candidate", quick("_slow"), "--filter",
                        "BM_Hash", "--budget", "600", "--min-repetitions", "10", "--max-repetitions", "20"},
                       dir.path());
    INFO(o.err);
    REQUIRE(o.report.is_object());
    CHECK(o.code == 1);
    const json& hash = counter(o.report, "BM_Hash", "cpu_time");
    CHECK(hash.at("status") == "regression");
    CHECK(hash.at("baseline").at("n") == 10);
    CHECK(hash.at("sequential").at("look") == 1);
    CHECK(o.report.at("policy").at("sequential").at("max_repetitions") == 20);
}

TEST_CASE("run --harness gbench: --cwd, --env and the per-side variables reach the benchmark, as in a config file")
{
    temp_dir dir("pg-harness-env");
    const auto data = dir.path() / "data";
    std::filesystem::create_directory(data);
    // Each side checks its working directory and variables, then runs the
    // suite (/bin/sh -c: google/benchmark's flags go to the exec'd binary).
    const auto side = [&](const std::string& srcdir) {
        return "test \"$(pwd)\" = '" + data.string() + "' && test \"$COMMON\" = both && test \"$srcdir\" = " + srcdir +
               " && exec " + quick("");
    };
    const auto o = run({"--harness",
                        "gbench",
                        "--backend",
                        "rusage",
                        "-r",
                        "1",
                        "--warmup",
                        "0",
                        "--filter",
                        "BM_Copy",
                        "--cwd",
                        data.string(),
                        "--env",
                        "COMMON=both",
                        "--env",
                        "srcdir=wrong",
                        "--baseline-env",
                        "srcdir=old",
                        "--candidate-env",
                        "srcdir=new",
                        "--baseline",
                        side("old"),
                        "--candidate",
                        side("new")},
                       dir.path());
    INFO(o.err);
    CHECK(o.code == 0);
    CHECK(names(o.report) == std::vector<std::string>{"BM_Copy"});
    // Without them the checks fail: the run says which side and round.
    const auto without = run({"--harness", "gbench", "--backend", "rusage", "-r", "1", "--warmup", "0", "--filter",
                              "BM_Copy", "--baseline", side("old"), "--candidate", side("new")},
                             dir.path());
    CHECK(without.code == 4);
    CHECK(without.err.find("baseline side") != std::string::npos);

    // The config file's "cwd", "env", "baseline_env" and "candidate_env".
    const auto config = dir.path() / "bench.json";
    std::ofstream(config) << json::array({{{"name", "suite"},
                                           {"harness", "gbench"},
                                           {"filter", "BM_Copy"},
                                           {"cwd", "data"},
                                           {"env", {{"COMMON", "both"}}},
                                           {"baseline_env", {{"srcdir", "old"}}},
                                           {"candidate_env", {{"srcdir", "new"}}},
                                           {"baseline", side("old")},
                                           {"candidate", side("new")}}})
                                 .dump();
    const auto from_config = run({"--config", config.string(), "--backend", "rusage", "-r", "1", "--warmup", "0"},
                                 dir.path());
    INFO(from_config.err);
    CHECK(from_config.code == 0);

    // Usage errors, before anything runs.
    auto bad = run_perfgate({"run", "-q", "--env", "NOEQUALS", "--baseline", "true", "--candidate", "true"},
                            dir.path());
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--env: expected NAME=VALUE") != std::string::npos);
    bad = run_perfgate({"run", "-q", "--baseline-env", "=x", "--baseline", "true", "--candidate", "true"}, dir.path());
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--baseline-env: expected NAME=VALUE") != std::string::npos);
    bad = run_perfgate({"run", "-q", "--cwd", (dir.path() / "nowhere").string(), "--baseline", "true", "--candidate",
                        "true"},
                       dir.path());
    CHECK(bad.code == 2);
    CHECK(bad.err.find("--cwd: '") != std::string::npos);
    bad = run_perfgate({"run", "-q", "--config", config.string(), "--env", "A=b"}, dir.path());
    CHECK(bad.code == 2);
    std::ofstream(config) << json::array({{{"name", "suite"},
                                           {"baseline", "true"},
                                           {"candidate", "true"},
                                           {"candidate_env", {{"srcdir", 1}}}}})
                                 .dump();
    bad = run_perfgate({"run", "-q", "--config", config.string()}, dir.path());
    CHECK(bad.code == 2);
    CHECK(bad.err.find("benchmarks[0].candidate_env.srcdir: expected a string") != std::string::npos);
}

TEST_CASE("run --harness gbench --backend callgrind: a binary started through env or /bin/sh is the one measured")
{
    temp_dir dir("pg-harness-wrapped");
    for (const std::string& prefix :
         {std::string("env srcdir=") + dir.path().string() + " ", std::string("srcdir=") + dir.path().string() + " "}) {
        CAPTURE(prefix);
        const auto o = run({"--harness", "gbench", "--backend", "callgrind", "--filter", "BM_Hash", "--baseline",
                            prefix + suite, "--candidate", prefix + suite + "_slow"},
                           dir.path());
        INFO(o.err);
        REQUIRE(o.report.is_object());
        CHECK(o.code == 1);
        const json& hash = counter(o.report, "BM_Hash", "instructions");
        CHECK(hash.at("status") == "regression");
        const double ratio = hash.at("candidate").at("median").get<double>() /
                             hash.at("baseline").at("median").get<double>();
        CHECK(ratio > 2.8);
        CHECK(ratio < 3.1);
    }
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
    bad = code_and_err({"--harness", "gbench", "--backend", "callgrind", "--budget", "30", "--baseline", suite,
                        "--candidate", suite});
    CHECK(bad.code == 2);
    CHECK(bad.err.find("one repetition decides") != std::string::npos);
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
