// Issue 33, item 2: no second build for deterministic backends. Real gcc
// builds, real callgrind, the real server on a SQLite file: the first
// `perfgate run --baseline-source server` of a baseline commit measures and
// stores its baseline, the next one reuses that run and measures only the
// candidate (one run stored, the same counts as measuring both); another
// toolchain is not reused; a noisy backend is refused; a server that answers
// the lookup badly stops the run before anything is measured.
#include "fake_github.hpp"
#include "support/process.hpp"
#include "support/server.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

#include "api/wire.hpp"
#include "model/error.hpp"
#include "runner/toolchain.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using perfgate::test::create_token;
using perfgate::test::run_perfgate;
using perfgate::test::send;
using perfgate::test::server_process;
using perfgate::test::shell_output;
using perfgate::test::shell_quoted;
using perfgate::test::temp_dir;
namespace http = perfgate::test::http;

const std::string base_sha = "1111111111111111111111111111111111111111";
const std::string head_sha = "2222222222222222222222222222222222222222";

// A program whose instruction count follows `iterations`, built with
// `flags` (-g: the DWARF producer records them, and so the toolchain key).
fs::path build(const fs::path& dir, const std::string& name, long iterations, const std::string& flags)
{
    const fs::path src = dir / (name + ".c");
    std::ofstream(src) << fmt::format("#include <stdio.h>\nint main(void) {{\n    volatile unsigned long s = 0;\n"
                                      "    for (unsigned long i = 0; i < {}UL; ++i) s += i * 7;\n"
                                      "    printf(\"%lu\\n\", (unsigned long)s);\n    return 0;\n}}\n",
                                      iterations);
    const fs::path exe = dir / name;
    shell_output(fmt::format("gcc {} -o {} {}", flags, shell_quoted(exe), shell_quoted(src)));
    return exe;
}

struct pr_runs {
    fs::path dir;
    std::string url, token;

    // perfgate run of a PR (head_sha on feature) against base_sha on main.
    perfgate::test::cli_result run(const fs::path& baseline, const fs::path& candidate,
                                   const std::vector<std::string>& extra, const std::string& format = "json") const
    {
        std::vector<std::string> args = {"run",
                                         "--backend",
                                         "callgrind",
                                         "--baseline",
                                         baseline.string(),
                                         "--candidate",
                                         candidate.string(),
                                         "--server",
                                         url,
                                         "--project",
                                         "demo",
                                         "--token",
                                         token,
                                         "--sha",
                                         head_sha,
                                         "--branch",
                                         "feature",
                                         "--base-sha",
                                         base_sha,
                                         "--base-branch",
                                         "main",
                                         "--testbed",
                                         "ci-1",
                                         "--format",
                                         format,
                                         "--output",
                                         (dir / "report.json").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_perfgate(args, dir);
    }
    [[nodiscard]] json report() const
    {
        std::ifstream in(dir / "report.json");
        return json::parse(in);
    }
};

// The instructions counter of the report's only benchmark.
json instructions(const json& report)
{
    for (const auto& c : report.at("benchmarks").at(0).at("counters")) {
        if (c.at("name") == "instructions") return c;
    }
    FAIL("no instructions counter in the report");
    return {};
}

} // namespace

TEST_CASE("baseline reuse: the toolchain key of an ELF executable, none for scripts and shell commands")
{
    temp_dir dir("pg-toolchain");
    const fs::path o1 = build(dir.path(), "o1", 1000, "-g -O1");
    const fs::path o2 = build(dir.path(), "o2", 1000, "-g -O2");
    const fs::path plain = build(dir.path(), "plain", 1000, "-O1");

    const auto strings = perfgate::runner::toolchain_strings(o1);
    REQUIRE_FALSE(strings.empty());
    CHECK(strings.front().starts_with("GCC: ")); // .comment first
    // gcc's DW_AT_producer with its flags.
    CHECK(std::any_of(strings.begin(), strings.end(), [](const std::string& s) {
        return s.starts_with("GNU C") && s.find("-O1") != std::string::npos;
    }));

    const auto k1 = perfgate::runner::toolchain_key({o1.string()}, std::nullopt);
    const auto k2 = perfgate::runner::toolchain_key({o2.string()}, std::nullopt);
    const auto kp = perfgate::runner::toolchain_key({plain.string()}, std::nullopt);
    REQUIRE(k1.has_value());
    REQUIRE(k2.has_value());
    REQUIRE(kp.has_value());
    CHECK(k1->starts_with(strings.front() + " #"));
    CHECK(k1->size() == strings.front().size() + 2 + 16);
    CHECK(*k1 != *k2); // another recorded flag, another key
    CHECK(*k1 != *kp);
    // The same build again: the same key (a relative path resolved in cwd).
    CHECK(perfgate::runner::toolchain_key({"./o1"}, dir.path()) == k1);

    // A script, a shell command line, a missing file: no key.
    const fs::path script = dir.path() / "bench.sh";
    std::ofstream(script) << "#!/bin/sh\necho hi\n";
    fs::permissions(script, fs::perms::owner_all);
    CHECK_FALSE(perfgate::runner::toolchain_key({script.string()}, std::nullopt).has_value());
    CHECK_FALSE(perfgate::runner::toolchain_key({"/bin/sh", "-c", o1.string() + " | cat"}, std::nullopt).has_value());
    CHECK_FALSE(perfgate::runner::toolchain_key({(dir.path() / "missing").string()}, std::nullopt).has_value());
    CHECK_FALSE(perfgate::runner::toolchain_key_of({}).has_value());
}

TEST_CASE("baseline reuse: a stored callgrind baseline is reused, one side measured, counts identical")
{
    temp_dir dir("pg-reuse");
    const fs::path base = build(dir.path(), "base", 300000, "-g -O1");
    const fs::path head = build(dir.path(), "head", 290000, "-g -O1");
    const fs::path db = dir.path() / "perfgate.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log");
    const pr_runs pr{dir.path(), srv.url(), token};
    const auto stored_runs = [&] {
        const auto r = send(srv.port(), http::verb::get, "/api/v1/projects/demo/benchmarks", {}, {}, token);
        REQUIRE(r.status == 200);
        const json list = r.parsed().at("benchmarks");
        return list.empty() ? std::int64_t{0} : list.at(0).at("runs").get<std::int64_t>();
    };

    // The first run of the baseline commit: nothing stored, both measured and stored.
    CHECK(pr.run(base, head, {"--baseline-source", "server", "--check-reuse"}).out == "measure\n");
    const auto first = pr.run(base, head, {"--baseline-source", "server"});
    CAPTURE(first.err);
    REQUIRE(first.code == 0);
    CHECK(first.err.find("no stored run of commit " + base_sha.substr(0, 12)) != std::string::npos);
    const json measured = pr.report();
    CHECK_FALSE(measured.contains("baseline_reused"));
    CHECK(stored_runs() == 2);

    // A pull request's own baseline measurement is not main's history, so no
    // other job reuses it (issue 44, item 8; issue 43, finding 2): the push
    // that put the commit on main stores the run that is reused, its
    // candidate (docs/history.md#which-runs-feed-the-series).
    CHECK(pr.run(base, head, {"--baseline-source", "server", "--check-reuse"}).out == "measure\n");
    const auto push = run_perfgate(
        {"run",         "--backend", "callgrind", "--baseline", base.string(), "--candidate",
         base.string(), "--server",  pr.url,      "--project",  "demo",        "--token",
         token,         "--sha",     base_sha,    "--branch",   "main",        "--mainline",
         "--testbed",   "ci-1",      "--format",  "json",       "--output",    (dir.path() / "report.json").string()},
        dir.path());
    CAPTURE(push.err);
    REQUIRE(push.code == 0);
    const auto stored_baseline = pr.report().at("benchmarks").at(0).at("candidate_run").get<std::int64_t>();
    CHECK(stored_runs() == 4);

    // The next run of that commit: the stored baseline, the candidate only.
    CHECK(pr.run(base, head, {"--baseline-source", "server", "--check-reuse"}).out == "reuse\n");
    CHECK(stored_runs() == 4); // --check-reuse measures nothing
    const auto second = pr.run(base, head, {"--baseline-source", "server"});
    CAPTURE(second.err);
    REQUIRE(second.code == 0);
    CHECK(second.err.find(fmt::format("baseline reused from run {} (commit {})", stored_baseline,
                                      base_sha.substr(0, 12))) != std::string::npos);
    const json reused = pr.report();
    REQUIRE(reused.contains("baseline_reused"));
    const json entry = reused.at("baseline_reused").at(0);
    CHECK(entry.at("benchmark") == "default");
    CHECK(entry.at("run_id") == stored_baseline);
    CHECK(entry.at("commit") == base_sha);
    CHECK(entry.at("date").get<std::string>().size() == 20); // 2026-11-20T10:00:00Z
    CHECK(reused.at("benchmarks").at(0).at("baseline_run") == stored_baseline);
    CHECK(stored_runs() == 5); // one side measured: the candidate's run alone is new
    // Judged like a run that measured both sides together: not "measured apart".
    CHECK(reused.at("verdict") == measured.at("verdict"));
    CHECK(instructions(reused).at("status") == instructions(measured).at("status"));
    CHECK(instructions(reused).at("method") == "deterministic");
    CHECK_FALSE(instructions(reused).contains("between_runs")); // not weighed as measured apart

    // Measuring both again gives the very counts the reused run compared.
    const auto again = pr.run(base, head, {"--baseline-source", "measure"});
    REQUIRE(again.code == 0);
    const json both = pr.report();
    CHECK(stored_runs() == 7);
    CHECK(instructions(both).at("baseline").at("median") == instructions(reused).at("baseline").at("median"));
    CHECK(instructions(both).at("candidate").at("median") == instructions(reused).at("candidate").at("median"));
    CHECK(instructions(both).at("delta_pct") == instructions(reused).at("delta_pct"));

    SUBCASE("the text report says where the baseline came from, in one line")
    {
        const auto text = pr.run(base, head, {"--baseline-source", "server"}, "text");
        CHECK(text.code == 0);
        const std::string report = shell_output("cat " + shell_quoted(dir.path() / "report.json"));
        // Still the push's run: the measuring run above stored a pull
        // request's baseline, which no series holds.
        const auto measured_again = both.at("benchmarks").at(0).at("baseline_run").get<std::int64_t>();
        CHECK(measured_again > stored_baseline);
        CHECK(report.find(fmt::format("baseline reused from run {} (commit 1111111, ", stored_baseline)) !=
              std::string::npos);
        // Deterministic counts measured apart are not flagged as such.
        CHECK(report.find("not measured interleaved") == std::string::npos);
    }
    SUBCASE("another toolchain is not reused: its baseline is measured and stored")
    {
        const fs::path rebuilt = build(dir.path(), "head-o2", 290000, "-g -O2");
        CHECK(pr.run(base, rebuilt, {"--baseline-source", "server", "--check-reuse"}).out == "measure\n");
        const auto other = pr.run(base, rebuilt, {"--baseline-source", "server"});
        CAPTURE(other.err);
        REQUIRE(other.code == 0);
        CHECK(other.err.find("no stored run of commit") != std::string::npos);
        CHECK_FALSE(pr.report().contains("baseline_reused"));
        CHECK(stored_runs() == 9);
        // --toolchain names the key instead: a new one is not reused either.
        CHECK(pr.run(base, head, {"--baseline-source", "server", "--check-reuse", "--toolchain", "gcc-13 -O3"}).out ==
              "measure\n");
    }
    SUBCASE("--cache-sim counts other counters: a run without them is not reused")
    {
        const auto sim = pr.run(base, head, {"--baseline-source", "server", "--cache-sim"});
        CAPTURE(sim.err);
        REQUIRE(sim.code == 0);
        CHECK(sim.err.find("was measured without --cache-sim") != std::string::npos);
        CHECK_FALSE(pr.report().contains("baseline_reused"));
    }
    SUBCASE("the route: missing parameters are 400 naming them, an unknown toolchain matches nothing")
    {
        const auto missing = send(srv.port(), http::verb::get,
                                  "/api/v1/projects/demo/baseline-run?benchmark=default&git_sha=" + base_sha, {}, {},
                                  token);
        perfgate::test::check_error(missing, 400, "http.missing_param");
        CHECK(missing.body.find("'testbed'") != std::string::npos);
        const auto none = send(srv.port(), http::verb::get,
                               "/api/v1/projects/demo/baseline-run?benchmark=default&git_sha=" + base_sha +
                                   "&testbed=x&backend=callgrind&toolchain=y",
                               {}, {}, token);
        CHECK(none.status == 200);
        CHECK(none.parsed() == json{{"run", nullptr}});
    }
}

TEST_CASE("baseline reuse: refused for noisy backends and without a server, a bad answer stops the run")
{
    temp_dir dir("pg-reuse-errors");
    const fs::path prog = build(dir.path(), "prog", 1000, "-O1");
    const auto run = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args = {
            "run",    "-q",       "--baseline", prog.string(), "--candidate", prog.string(),       "--sha",
            head_sha, "--branch", "feature",    "--base-sha",  base_sha,      "--baseline-source", "server"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_perfgate(args, dir.path());
    };

    const auto noisy = run({"--backend", "rusage", "--server", "http://127.0.0.1:9", "--project", "demo", "--token",
                            "t"});
    CHECK(noisy.code == 2);
    CHECK(noisy.err.find("--baseline-source server needs a deterministic backend") != std::string::npos);
    CHECK(noisy.err.find("cache its build") != std::string::npos);
    const auto local = run({"--backend", "callgrind"});
    CHECK(local.code == 2);
    CHECK(local.err.find("--baseline-source server needs --server") != std::string::npos);
    CHECK(run({"--backend", "callgrind", "--baseline-source", "cache"}).code == 2);
    CHECK(run({"--backend", "callgrind", "--server", "http://127.0.0.1:9", "--project", "demo", "--token", "t",
               "--toolchain", std::string(300, 'x')})
              .err.find("--toolchain: expected 1 to 256 bytes") != std::string::npos);

    // A server whose lookup answer is not the API's: exit 4, nothing measured.
    perfgate::test::fake_github fake;
    fake.add_fault({"GET", "/comparisons", 200, {{"Content-Type", "application/json"}}, R"({"comparisons":[]})", 3});
    fake.add_fault({"GET", "/baseline-run", 200, {{"Content-Type", "application/json"}}, R"({"run":5})", 1});
    const auto bad = run({"--backend", "callgrind", "--server", fake.url(), "--project", "demo", "--token", "t"});
    CHECK(bad.code == 4);
    CHECK(bad.err.find("nothing measured: looking up the stored baseline of 'default'") != std::string::npos);
    CHECK(bad.err.find("server.bad_response") != std::string::npos);
    fake.add_fault({"GET", "/baseline-run", 500, {}, R"({"message":"down"})", 1});
    const auto failed = run({"--backend", "callgrind", "--server", fake.url(), "--project", "demo", "--token", "t"});
    CHECK(failed.code == 4);
    CHECK(failed.err.find("looking up the stored baseline") != std::string::npos);
    for (const auto& r : fake.requests()) CHECK(r.method == "GET"); // no run was uploaded

    // The wire format alone: a run id that is not positive, a missing field.
    CHECK_THROWS_WITH_AS((void)perfgate::api::reusable_run_from_json(json{{"run", {{"run_id", 0}}}}),
                         doctest::Contains("run_id must be positive"), perfgate::error);
    CHECK_THROWS_AS((void)perfgate::api::reusable_run_from_json(json{{"run", {{"run_id", 3}}}}), perfgate::error);
    CHECK_FALSE(perfgate::api::reusable_run_from_json(json{{"run", nullptr}}).has_value());
}
