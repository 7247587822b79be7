// A push history replayed exactly as ci/examples/push-baseline.yml runs it
// (the parent build as baseline, the pushed build as candidate, the
// action's `perfgate run` command line made by ci/action-run.sh with
// base-sha: github.event.before) against a real `perfgate serve` on a real
// SQLite file, with pull requests' jobs in between (issue 29; issue 44,
// items 8, 9 and 11). The history must name the commit each run measured,
// hold only the pushes' runs (a pull request's merge-base measurement is
// not main's history), and a deterministic step must open its alert at the
// push that made it, with the baseline measured or reused.
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

// The history: commit 3 halves the work (an improvement), commit 5 makes it
// 1.5 times (the regression), and every commit moves the count by a
// deterministic ~0.05% (the loop count varies with the commit number mod 3:
// code changes that are no step). Callgrind counts each build exactly, so
// the series of instruction counts is exact (docs/history.md "Exact
// counts"): each step is a change point on its own point.
constexpr int commits = 7;
constexpr int improvement_commit = 3;
constexpr int step_commit = 5;
constexpr long base_iterations = 200000;
constexpr long wobble_iterations = 100;

long iterations_of(int k)
{
    const long level = k < improvement_commit ? 2 * base_iterations
                       : k < step_commit      ? base_iterations
                                              : 3 * base_iterations / 2;
    return level + (k % 3) * wobble_iterations;
}

// The program of commit k (1-based).
std::string program_of(int k)
{
    return fmt::format("/* commit {} */\n#include <stdio.h>\n"
                       "int main(void) {{\n"
                       "    volatile unsigned long s = 0;\n"
                       "    for (unsigned long i = 0; i < {}UL; ++i) s += i * 7;\n"
                       "    printf(\"%lu\\n\", (unsigned long)s);\n"
                       "    return 0;\n}}\n",
                       k, iterations_of(k));
}

// A git repository with the main line's commits 1..commits and a docs-only
// pull request branch forked at commit 1, a server, and the action's
// scripts run for push and pull_request events against it.
struct replay {
    temp_dir dir{"pg-replay"};
    fs::path repo = dir.path() / "repo";
    std::string git = "git -C " + shell_quoted(repo) + " -c user.name=t -c user.email=t@example.com ";
    std::vector<std::string> sha = std::vector<std::string>(commits + 1); // sha[k]: commit k, 1-based
    std::string pr_head;                                                  // the pull request's head
    fs::path db = dir.path() / "perfgate.db";
    std::string token = make_history();
    server_process srv{db, dir.path() / "server.log", {"--public-read"}};
    bool reuse = false; // baseline-source: server
    int jobs = 0;

    std::string make_history()
    {
        fs::create_directories(repo);
        shell_output(git + "init -q -b main");
        for (int k = 1; k <= commits; ++k) {
            std::ofstream(repo / "prog.c") << program_of(k);
            shell_output(git + "add prog.c");
            shell_output(git + fmt::format("commit -q -m 'commit {}'", k));
            sha[k] = shell_output(git + "rev-parse HEAD");
            if (k == 1) {
                // A stale docs-only pull request: its merge-base stays commit 1.
                shell_output(git + "checkout -q -b docs");
                std::ofstream(repo / "README") << "docs\n";
                shell_output(git + "add README");
                shell_output(git + "commit -q -m 'docs'");
                pr_head = shell_output(git + "rev-parse HEAD");
                shell_output(git + "checkout -q main");
            }
        }
        return create_token(db, "demo");
    }

    // Builds the program at `commit` as job/name.
    void build(const fs::path& job, const std::string& name, const std::string& commit) const
    {
        const fs::path src = job / (name + ".c");
        shell_output(git + fmt::format("show {}:prog.c > {}", commit, shell_quoted(src)));
        shell_output(fmt::format("gcc -O1 -o {} {}", shell_quoted(job / name), shell_quoted(src)));
    }

    // Runs ci/action-run.sh in a fresh job directory with the event and
    // the inputs given; the action's own inputs: callgrind, one execution
    // a side (callgrind is exact), a fixed testbed (reuse needs one), no
    // publishing. Returns the job's report.
    json action(const std::string& event, const json& payload, const std::string& github_env, const std::string& inputs,
                const std::string& base, const std::string& head)
    {
        const fs::path job = dir.path() / fmt::format("job-{}", ++jobs);
        fs::create_directories(job / "tmp");
        build(job, "base", base);
        build(job, "head", head);
        std::ofstream(job / "event.json") << payload.dump();
        const std::string env = fmt::format(
            "env GITHUB_ACTIONS=true GITHUB_EVENT_NAME={} GITHUB_EVENT_PATH={} {} GITHUB_OUTPUT={} RUNNER_TEMP={} "
            "PERFGATE={} PERFGATE_TOKEN={} IN_BASELINE={} IN_CANDIDATE={} IN_BACKEND=callgrind IN_REPETITIONS=1 "
            "IN_SERVER_URL={} IN_PROJECT=demo IN_TESTBED=replay IN_COMMENT=never IN_FAIL_ON_REGRESSION=false "
            "IN_PUBLISH=false IN_BASELINE_SOURCE={} {} ",
            event, shell_quoted(job / "event.json"), github_env, shell_quoted(job / "out"), shell_quoted(job / "tmp"),
            shell_quoted(perfgate::test::perfgate_exe), token, shell_quoted(job / "base"), shell_quoted(job / "head"),
            srv.url(), reuse ? "server" : "measure", inputs);
        shell_output("cd " + shell_quoted(job) + " && " + env + "bash " +
                     shell_quoted(fs::path(PERFGATE_SOURCE_DIR) / "ci/action-run.sh") + " 2> " +
                     shell_quoted(job / "stderr"));
        std::ifstream in(job / "tmp" / "perfgate-report.json");
        INFO(shell_output("cat " + shell_quoted(job / "stderr")));
        REQUIRE(in.good());
        return json::parse(in);
    }

    // Push k: the workflow checks out github.event.before (commit k-1) as
    // base and the pushed commit as head and runs the action with
    // base-sha: github.event.before.
    json push(int k)
    {
        CAPTURE(k);
        return action("push", {{"ref", "refs/heads/main"}, {"before", sha[k - 1]}, {"after", sha[k]}},
                      fmt::format("GITHUB_REF_NAME=main GITHUB_SHA={}", sha[k]),
                      fmt::format("IN_BASE_SHA={}", sha[k - 1]), sha[k - 1], sha[k]);
    }

    // The docs pull request's job while main's tip is commit `tip`: its
    // baseline is the merge-base, commit 1, labelled with the base branch.
    json pull_request(int number, int tip)
    {
        CAPTURE(number);
        const json event = {
            {"pull_request", {{"number", number}, {"head", {{"sha", pr_head}}}, {"base", {{"sha", sha[tip]}}}}}};
        return action("pull_request", event,
                      fmt::format("GITHUB_REF_NAME={}/merge GITHUB_HEAD_REF=docs GITHUB_BASE_REF=main GITHUB_SHA={}",
                                  number, std::string(40, 'f')),
                      "IN_REPO=" + shell_quoted(repo), sha[1], pr_head);
    }

    json get(const std::string& target) const
    {
        const auto r = send(srv.port(), http::verb::get, target, {}, {}, token);
        INFO(target << ": " << r.body);
        REQUIRE(r.status == 200);
        return r.parsed();
    }

    // The alerts, once the watch has run `watched` jobs (the mainline
    // uploads so far: it runs after each upload has answered).
    json alerts_after(int watched) const
    {
        const std::string name = "\nperfgate_watch_jobs_total ";
        for (int i = 0; i < 600; ++i) {
            const auto metrics = send(srv.port(), http::verb::get, "/metrics").body;
            const auto at = metrics.find(name);
            if (at != std::string::npos && std::stoi(metrics.substr(at + name.size())) >= watched) break;
            std::this_thread::sleep_for(50ms);
        }
        return get("/api/v1/projects/demo/alerts").at("alerts");
    }
};

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

// The series (the runs that feed main's): one point per push, the pushed
// commit's candidate run, commits 2..commits; change points at the two steps.
void check_series(const replay& r)
{
    const auto points = r.get("/api/v1/projects/demo/history?benchmark=default&counter=instructions").at("points");
    REQUIRE(points.size() == commits - 1);
    for (int i = 0; i < commits - 1; ++i) {
        CAPTURE(i);
        CHECK(points[i].at("git_sha") == r.sha[i + 2]);
        CHECK(points[i].at("role") == "candidate");
        CHECK(points[i].at("mainline") == true);
        CHECK(points[i].at("change_point") == (i + 2 == step_commit || i + 2 == improvement_commit));
    }
}

} // namespace

TEST_CASE("push replay: pull requests stay out of main's series, the step alerts at its own push (issues 29, 44)")
{
    replay r;
    for (int k = 2; k < step_commit; ++k) r.push(k);
    // The improvement (commit 3) is a change point, not an alert.
    CHECK(r.alerts_after(step_commit - 2).empty());
    r.push(step_commit);
    auto alerts = r.alerts_after(step_commit - 1);
    CHECK(alerts.size() == 1); // at the push that made it, as its gate failed
    for (const auto& a : alerts) {
        CHECK(a.at("counter") == "instructions");
        CHECK(a.at("git_sha") == r.sha[step_commit]);
    }
    // Stale docs-only pull requests: their baseline is commit 1, twice the
    // work of main's tip and labelled main; they must open no alert, shrink
    // nothing, and stay out of the series.
    r.pull_request(41, step_commit);
    r.push(6);
    r.pull_request(42, 6);
    r.pull_request(43, 6);
    r.push(7);
    alerts = r.alerts_after(commits - 1);
    CHECK(alerts.size() == 1); // the step's, and no false one from the pull requests
    for (const auto& a : alerts) {
        CHECK(a.at("git_sha") == r.sha[step_commit]);
        CHECK(a.at("delta_pct").get<double>() > 30);
    }
    check_series(r);
    // The pull requests' baselines are stored under main, shown on request
    // (role=all: every run of the branch), never mainline.
    const auto all =
        r.get("/api/v1/projects/demo/history?benchmark=default&counter=instructions&role=all").at("points");
    CHECK(all.size() == 2 * (commits - 1) + 3);
    int stale = 0;
    for (const auto& p : all) {
        if (p.at("git_sha") != r.sha[1]) continue;
        ++stale;
        CHECK(p.at("mainline") == false);
    }
    CHECK(stale == 3 + 1); // the 3 jobs' baselines, and push 2's of commit 1

    // The series page's markers, as dashboard.js draws them: one per change
    // point, the step's with its alert (a marker has no array inside, so its
    // list ends at the first ']').
    const auto page = send(r.srv.port(), http::verb::get, "/p/demo/series?benchmark=default&counter=instructions");
    REQUIRE(page.status == 200);
    const auto from = page.body.find("\"markers\":[");
    REQUIRE(from != std::string::npos);
    const auto markers = json::parse(page.body.substr(from + 10, page.body.find(']', from) - from - 9));
    REQUIRE(markers.size() == 2);
    CHECK(markers[0].at("git_sha") == r.sha[improvement_commit]);
    CHECK(markers[0].at("alert_id").is_null());
    CHECK(markers[1].at("git_sha") == r.sha[step_commit]);
    if (!alerts.empty()) CHECK(markers[1].at("alert_id") == alerts[0].at("id"));

    // Recent comparisons: each push's base is its parent, not the pushed commit.
    const auto comparisons = r.get("/api/v1/projects/demo/comparisons?limit=100").at("comparisons");
    REQUIRE(comparisons.size() == commits - 1 + 3);
    for (const auto& c : comparisons) {
        CHECK(c.at("baseline").at("git_sha") != c.at("candidate").at("git_sha"));
    }
    CHECK(comparisons[0].at("baseline").at("git_sha") == r.sha[commits - 1]); // newest first
    CHECK(comparisons[0].at("candidate").at("git_sha") == r.sha[commits]);
    const auto overview = send(r.srv.port(), http::verb::get, "/p/demo");
    CHECK(overview.body.find("<code title=\"" + r.sha[commits - 1] + "\">" + r.sha[commits - 1].substr(0, 12) +
                             "</code> main</td><td><code title=\"" + r.sha[commits] + "\">" +
                             r.sha[commits].substr(0, 12) + "</code>") != std::string::npos);

    // "Compare any two" by sha: commit N-1 against commit N is the step.
    const std::string cookie = sign_in(r.srv.port(), r.token);
    const std::string answer = raw_exchange(
        r.srv.port(), fmt::format("GET /p/demo/compare?base={}&head={} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {}\r\n"
                                  "Connection: close\r\n\r\n",
                                  r.sha[step_commit - 1].substr(0, 12), r.sha[step_commit].substr(0, 12), cookie));
    INFO(answer);
    const auto at = answer.find("/p/demo/comparisons/");
    REQUIRE(at != std::string::npos);
    const std::string id = answer.substr(at + 20, answer.find_first_not_of("0123456789", at + 20) - at - 20);
    const auto report = r.get("/api/v1/projects/demo/comparisons/" + id);
    bool seen = false;
    for (const auto& c : report.at("benchmarks").at(0).at("counters")) {
        if (c.at("name") != "instructions") continue;
        seen = true;
        // 1.5 times the loop's work: +50% less the program's fixed start-up.
        CHECK(c.at("delta_pct").get<double>() > 30);
        CHECK(c.at("delta_pct").get<double>() < 51);
    }
    CHECK(seen);
}

TEST_CASE("push replay: with baseline reuse every push stores its head, the step alerts at its own push (issue 44)")
{
    replay r;
    r.reuse = true;
    for (int k = 2; k <= commits; ++k) {
        CAPTURE(k);
        const json report = r.push(k);
        // Push 2 measures commit 1 (no push stored it); every later push
        // reuses the previous push's head and measures its own only.
        if (k == 2) {
            CHECK_FALSE(report.contains("baseline_reused"));
        } else {
            REQUIRE(report.contains("baseline_reused"));
            CHECK(report.at("baseline_reused").at(0).at("commit") == r.sha[k - 1]);
        }
        const auto alerts = r.alerts_after(k - 1);
        CHECK(alerts.size() == (k < step_commit ? 0U : 1U));
    }
    const auto alerts = r.alerts_after(commits - 1);
    REQUIRE(alerts.size() == 1);
    CHECK(alerts[0].at("git_sha") == r.sha[step_commit]);
    check_series(r);
}
