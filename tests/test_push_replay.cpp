// Issue 29's acceptance test: a push history replayed exactly as
// ci/examples/push-baseline.yml runs it (the parent build as baseline, the
// pushed build as candidate, the action's `perfgate run` command line made
// by ci/action-run.sh with base-sha: github.event.before) against a real
// `perfgate serve` on a real SQLite file. The history must name the commit
// each run measured: the alert and the series marker name the commit that
// made the step, the overview's comparisons show two commits, and "compare
// any two" by sha compares the builds of those commits.
#include "support/process.hpp"
#include "support/server.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using perfgate::test::create_token;
using perfgate::test::raw_exchange;
using perfgate::test::send;
using perfgate::test::server_process;
using perfgate::test::shell_output;
using perfgate::test::shell_quoted;
using perfgate::test::temp_dir;
namespace http = perfgate::test::http;
using namespace std::chrono_literals;

// What the test relies on, whatever the change-point method's tuning: the
// series is the baseline runs' instruction counts (callgrind: the same count
// for the same build on every run), 13 points before the step and 13 three
// times higher after it, each wobbling by a deterministic ~0.1% (the loop
// count varies with the commit number mod 3, so no test sees a zero
// variance). The default rank test of today needs 12 points on each side of
// even a perfect step (p 3.5e-4 < max_p 0.001; Otava's t-test far less), and
// +200% is above any minimum magnitude.
constexpr int commits = 27;
constexpr int step_commit = 14; // 1-based: commit 14 triples the work
constexpr long base_iterations = 1000000;
constexpr long wobble_iterations = 1000;

// The program of commit k (1-based): a loop whose work triples at step_commit.
std::string program_of(int k)
{
    const long iterations = (k >= step_commit ? 3 * base_iterations : base_iterations) + (k % 3) * wobble_iterations;
    return fmt::format("/* commit {} */\n#include <stdio.h>\n"
                       "int main(void) {{\n"
                       "    volatile unsigned long s = 0;\n"
                       "    for (unsigned long i = 0; i < {}UL; ++i) s += i * 7;\n"
                       "    printf(\"%lu\\n\", (unsigned long)s);\n"
                       "    return 0;\n}}\n",
                       k, iterations);
}

// The session cookie of a dashboard sign-in with the project's token.
std::string sign_in(unsigned short port, const std::string& token)
{
    const std::string body = "token=" + token;
    const std::string answer = raw_exchange(port, "POST /p/demo/signin HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                  "Content-Type: application/x-www-form-urlencoded\r\n"
                                                  "Connection: close\r\nContent-Length: " +
                                                      std::to_string(body.size()) + "\r\n\r\n" + body);
    INFO(answer);
    const auto at = answer.find("Set-Cookie: ");
    REQUIRE(at != std::string::npos);
    const auto start = at + std::string("Set-Cookie: ").size();
    return answer.substr(start, answer.find(';', start) - start);
}

} // namespace

TEST_CASE("push replay: the history names the commit each run measured (issue 29)")
{
    temp_dir dir("pg-replay");
    const fs::path repo = dir.path() / "repo";
    fs::create_directories(repo);
    const std::string git = "git -C " + shell_quoted(repo) + " -c user.name=t -c user.email=t@example.com ";
    shell_output(git + "init -q -b main");
    std::vector<std::string> sha(commits + 1); // sha[k]: commit k, 1-based
    for (int k = 1; k <= commits; ++k) {
        std::ofstream(repo / "prog.c") << program_of(k);
        shell_output(git + "add prog.c");
        shell_output(git + fmt::format("commit -q -m 'commit {}'", k));
        sha[k] = shell_output(git + "rev-parse HEAD");
    }

    const fs::path db = dir.path() / "perfgate.db";
    const std::string token = create_token(db, "demo");
    server_process srv(db, dir.path() / "server.log", {"--public-read"});

    // Push k (2..commits): the workflow checks out github.event.before (the
    // previous head, commit k-1) as base and the pushed commit as head,
    // builds both and runs the action with the example's inputs.
    for (int k = 2; k <= commits; ++k) {
        CAPTURE(k);
        const fs::path push = dir.path() / fmt::format("push-{}", k);
        fs::create_directories(push / "tmp");
        for (const auto& [tree, at] : {std::pair{"base", k - 1}, std::pair{"head", k}}) {
            shell_output(git +
                         fmt::format("show {}:prog.c > {}", sha[at], shell_quoted(push / (std::string(tree) + ".c"))));
            shell_output(fmt::format("gcc -O1 -o {} {}", shell_quoted(push / tree),
                                     shell_quoted(push / (std::string(tree) + ".c"))));
        }
        std::ofstream(push / "event.json")
            << json{{"ref", "refs/heads/main"}, {"before", sha[k - 1]}, {"after", sha[k]}}.dump();
        // The example's inputs (events left to the backend: callgrind counts
        // instructions); one repetition per side, as callgrind is exact.
        const std::string env = fmt::format(
            "env GITHUB_ACTIONS=true GITHUB_EVENT_NAME=push GITHUB_REF_NAME=main GITHUB_SHA={} GITHUB_EVENT_PATH={} "
            "GITHUB_OUTPUT={} RUNNER_TEMP={} PERFGATE={} PERFGATE_TOKEN={} "
            "IN_BASELINE={} IN_CANDIDATE={} IN_BACKEND=callgrind IN_REPETITIONS=1 IN_SERVER_URL={} IN_PROJECT=demo "
            "IN_COMMENT=never IN_FAIL_ON_REGRESSION=false IN_PUBLISH=false IN_BASE_SHA={} ",
            sha[k], shell_quoted(push / "event.json"), shell_quoted(push / "out"), shell_quoted(push / "tmp"),
            shell_quoted(perfgate::test::perfgate_exe), token, shell_quoted(push / "base"), shell_quoted(push / "head"),
            srv.url(), sha[k - 1]);
        shell_output("cd " + shell_quoted(push) + " && " + env + "bash " +
                     shell_quoted(fs::path(PERFGATE_SOURCE_DIR) / "ci/action-run.sh") + " 2> " +
                     shell_quoted(push / "stderr"));
    }

    const auto get = [&](const std::string& target) {
        const auto r = send(srv.port(), http::verb::get, target, {}, {}, token);
        INFO(target << ": " << r.body);
        REQUIRE(r.status == 200);
        return r.parsed();
    };

    // The watch runs after each upload has answered: wait (bounded) until it
    // has examined the last run, then read the alert.
    json alerts;
    for (int i = 0; i < 300; ++i) {
        alerts = get("/api/v1/projects/demo/alerts").at("alerts");
        const auto metrics = send(srv.port(), http::verb::get, "/metrics").body;
        if (!alerts.empty() && metrics.find("perfgate_watch_pending 0") != std::string::npos) break;
        std::this_thread::sleep_for(100ms);
    }
    REQUIRE(alerts.size() == 1);
    CHECK(alerts[0].at("counter") == "instructions");
    CHECK(alerts[0].at("git_sha") == sha[step_commit]);

    // The series (the baseline runs of main): one point per baseline build,
    // commits 1 .. commits-1, and its change point on commit step_commit.
    const auto points = get("/api/v1/projects/demo/history?benchmark=default&counter=instructions").at("points");
    REQUIRE(points.size() == commits - 1);
    for (int i = 0; i < commits - 1; ++i) {
        CAPTURE(i);
        CHECK(points[i].at("git_sha") == sha[i + 1]);
        CHECK(points[i].at("role") == "baseline");
        CHECK(points[i].at("change_point") == (i + 1 == step_commit));
    }
    // The series page's markers, as dashboard.js draws them: one, on commit
    // step_commit (a marker has no array inside, so its list ends at the first ']').
    const auto page = send(srv.port(), http::verb::get, "/p/demo/series?benchmark=default&counter=instructions");
    REQUIRE(page.status == 200);
    const auto from = page.body.find("\"markers\":[");
    REQUIRE(from != std::string::npos);
    const auto markers = json::parse(page.body.substr(from + 10, page.body.find(']', from) - from - 9));
    REQUIRE(markers.size() == 1);
    CHECK(markers[0].at("git_sha") == sha[step_commit]);
    CHECK(markers[0].at("alert_id") == alerts[0].at("id"));

    // Recent comparisons: each push's base is its parent, not the pushed commit.
    const auto comparisons = get("/api/v1/projects/demo/comparisons?limit=100").at("comparisons");
    REQUIRE(comparisons.size() == commits - 1);
    for (const auto& c : comparisons) {
        CHECK(c.at("baseline").at("git_sha") != c.at("candidate").at("git_sha"));
    }
    CHECK(comparisons[0].at("baseline").at("git_sha") == sha[commits - 1]); // newest first
    CHECK(comparisons[0].at("candidate").at("git_sha") == sha[commits]);
    const auto overview = send(srv.port(), http::verb::get, "/p/demo");
    CHECK(overview.body.find("<code title=\"" + sha[commits - 1] + "\">" + sha[commits - 1].substr(0, 12) +
                             "</code> main</td><td><code title=\"" + sha[commits] + "\">" + sha[commits].substr(0, 12) +
                             "</code>") != std::string::npos);

    // "Compare any two" by sha: commit N-1 against commit N is the step.
    const std::string cookie = sign_in(srv.port(), token);
    const std::string answer = raw_exchange(
        srv.port(), fmt::format("GET /p/demo/compare?base={}&head={} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {}\r\n"
                                "Connection: close\r\n\r\n",
                                sha[step_commit - 1].substr(0, 12), sha[step_commit].substr(0, 12), cookie));
    INFO(answer);
    const auto at = answer.find("/p/demo/comparisons/");
    REQUIRE(at != std::string::npos);
    const std::string id = answer.substr(at + 20, answer.find_first_not_of("0123456789", at + 20) - at - 20);
    const auto report = get("/api/v1/projects/demo/comparisons/" + id);
    bool seen = false;
    for (const auto& c : report.at("benchmarks").at(0).at("counters")) {
        if (c.at("name") != "instructions") continue;
        seen = true;
        // Three times the loop's work: +200% less the program's fixed start-up.
        CHECK(c.at("delta_pct").get<double>() > 150);
        CHECK(c.at("delta_pct").get<double>() < 201);
    }
    CHECK(seen);
}
