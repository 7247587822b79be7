#include "github/github.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/cmd_run_qualification.hpp"
#include "cli/commands.hpp"
#include "cli/target.hpp"
#include "connect_proxy.hpp"
#include "fake_github.hpp"
#include "github/comments.hpp"
#include "model/error.hpp"
#include "model/utf8.hpp"
#include "report/qualification.hpp"
#include "report/render.hpp"
#include "runner/testbed.hpp"
#include "support/database.hpp"
#include "support/numbers.hpp"
#include "support/process.hpp"
#include "support/server.hpp"
#include "test_cert.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgate::test::fake_github;
using perfgate::test::fault;
using namespace perfgate;
using namespace perfgate::github;
using namespace perfgate::cli;
namespace gate = perfgate::gate;

namespace {

constexpr const char* head_sha = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* merge_sha = "fedcba9876543210fedcba9876543210fedcba98";
constexpr std::int64_t pr = 7;

std::string slurp(const fs::path& p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::size_t utf8_chars(const std::string& s)
{
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

// The whole Actions environment of one job, pointing at a fake GitHub, in a
// temp directory; restored on destruction.
class actions_env {
public:
    explicit actions_env(const std::string& api_url, const std::string& token = "ghs_faketoken")
    {
        write_event(json{{"action", "synchronize"},
                         {"number", pr},
                         {"pull_request", {{"number", pr}, {"head", {{"sha", head_sha}}}}}});
        set("GITHUB_API_URL", api_url);
        set("GITHUB_SERVER_URL", "https://github.example");
        set("GITHUB_REPOSITORY", "octo/widgets");
        set("GITHUB_EVENT_NAME", "pull_request");
        set("GITHUB_EVENT_PATH", event().string());
        set("GITHUB_TOKEN", token);
        set("GITHUB_SHA", merge_sha);
        set("GITHUB_RUN_ID", "4242");
        set("GITHUB_STEP_SUMMARY", summary().string());
        set("GITHUB_OUTPUT", output().string());
    }
    ~actions_env()
    {
        for (auto& [name, old] : saved_) {
            if (old) ::setenv(name.c_str(), old->c_str(), 1);
            else ::unsetenv(name.c_str());
        }
    }
    actions_env(const actions_env&) = delete;
    actions_env& operator=(const actions_env&) = delete;

    void set(const std::string& name, const std::string& value)
    {
        remember(name);
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    void unset(const std::string& name)
    {
        remember(name);
        ::unsetenv(name.c_str());
    }
    void write_event(const json& j) const { std::ofstream(event()) << j.dump(); }
    fs::path dir() const { return dir_; }
    fs::path event() const { return dir_ / "event.json"; }
    fs::path summary() const { return dir_ / "summary.md"; }
    fs::path output() const { return dir_ / "output.txt"; }

private:
    void remember(const std::string& name)
    {
        if (saved_.count(name)) return;
        const char* v = std::getenv(name.c_str());
        saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
    }
    perfgate::test::temp_dir scratch_{"perfgate-gh"};
    fs::path dir_ = scratch_.path();
    std::map<std::string, std::optional<std::string>> saved_;
};

gate::counter_report counter(std::string name, gate::status s, double delta)
{
    gate::counter_report c;
    c.name = std::move(name);
    c.unit = "msec";
    c.gated = true;
    c.state = s;
    c.test = gate::method::exact;
    c.baseline = {10, 100.0, 100.0, 1.0, 0.01, 99.0, 101.0};
    c.candidate = {10, 100.0 + delta, 100.0 + delta, 1.0, 0.01, 99.0 + delta, 101.0 + delta};
    c.delta_pct = delta;
    c.shift = delta;
    c.shift_pct = delta;
    c.shift_ci = std::make_pair(delta - 0.5, delta + 0.5);
    c.u = 0;
    c.p_value = 1e-4;
    c.p_adjusted = 2e-4;
    c.mde_pct = 1.0;
    return c;
}

// extra_counters more counters (gated or not) make the report as long as needed.
gate::report failing_report(std::size_t extra_counters = 0, bool extra_gated = false)
{
    gate::report r;
    r.result = gate::verdict::fail;
    r.warnings = {"cpu frequency scaling is on"};
    gate::benchmark_report b;
    b.name = "default";
    b.result = gate::verdict::fail;
    b.counters.push_back(counter("task-clock", gate::status::regression, 5.0));
    b.counters.push_back(counter("page-faults", gate::status::unchanged, 0.0));
    for (std::size_t i = 0; i < extra_counters; ++i) {
        b.counters.push_back(counter("a-rather-long-counter-name-number-" + std::to_string(i), gate::status::unchanged,
                                     0.1));
        b.counters.back().gated = extra_gated;
    }
    r.benchmarks.push_back(b);
    return r;
}

gate::report passing_report()
{
    gate::report r;
    r.result = gate::verdict::pass;
    gate::benchmark_report b;
    b.name = "default";
    b.counters.push_back(counter("task-clock", gate::status::unchanged, 0.1));
    r.benchmarks.push_back(b);
    return r;
}

// Options with no real sleeping: waits are recorded instead.
github_options test_options(std::vector<std::chrono::milliseconds>* waits = nullptr)
{
    github_options o;
    o.report_path = "perfgate-report.json";
    o.retry.backoff = std::chrono::milliseconds(10);
    o.retry.max_wait = std::chrono::milliseconds(60000);
    o.retry.timeout = std::chrono::milliseconds(5000);
    o.retry.sleep = [waits](std::chrono::milliseconds d) {
        if (waits) waits->push_back(d);
    };
    return o;
}

std::vector<perfgate::test::recorded_request> with_method(const fake_github& gh, const std::string& method)
{
    std::vector<perfgate::test::recorded_request> out;
    for (auto& r : gh.requests()) {
        if (r.method == method) out.push_back(r);
    }
    return out;
}

// An entry of workflow_run.pull_requests[] (webhook schema
// "pull-request-minimal": the repos carry only id, url and name).
json run_pr(std::int64_t number, const std::string& head, std::int64_t base_repo_id = 4242,
            const std::string& base_repo_name = "widgets")
{
    auto repo = [](std::int64_t id, const std::string& owner_name) {
        return json{{"id", id},
                    {"url", "https://api.github.com/repos/" + owner_name},
                    {"name", owner_name.substr(owner_name.find('/') + 1)}};
    };
    return {{"id", 100000 + number},
            {"number", number},
            {"url", "https://api.github.com/repos/octo/widgets/pulls/" + std::to_string(number)},
            {"head", {{"ref", "feature"}, {"sha", head}, {"repo", repo(4242, "octo/widgets")}}},
            {"base",
             {{"ref", "main"},
              {"sha", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
              {"repo", repo(base_repo_id, base_repo_id == 4242 ? "octo/widgets" : "someone/" + base_repo_name)}}}};
}

// A workflow_run event of octo/widgets (repository id 4242), for a run on head.
json workflow_run_event(const std::string& head, json pull_requests, const std::string& trigger = "pull_request")
{
    return {{"action", "completed"},
            {"workflow_run",
             {{"id", 99}, {"event", trigger}, {"head_sha", head}, {"pull_requests", std::move(pull_requests)}}},
            {"repository",
             {{"id", 4242}, {"full_name", "octo/widgets"}, {"url", "https://api.github.com/repos/octo/widgets"}}}};
}

unsigned short closed_port()
{
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}

} // namespace

TEST_CASE("sticky comment: created once, then updated in place")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    const auto marker = comment_marker("perfgate");

    auto first = publish_to_github(failing_report(), exit_regression, test_options(), log);
    CHECK(first.warnings.empty());
    CHECK(first.comment_posted);
    CHECK(first.status_posted);
    REQUIRE(gh.comments(pr).size() == 1);
    const auto id = gh.comments(pr)[0].id;
    CHECK(first.comment_id == id);
    CHECK(gh.comments(pr)[0].body.starts_with(marker));
    CHECK(gh.comments(pr)[0].body.find("task-clock") != std::string::npos);
    CHECK(gh.comments(pr)[0].body.find("https://github.example/octo/widgets/actions/runs/4242") != std::string::npos);

    SUBCASE("every API call carries GitHub's required headers")
    {
        auto reqs = gh.requests();
        REQUIRE(reqs.size() == 3); // list, create, status
        for (const auto& r : reqs) {
            CAPTURE(r.target);
            CHECK(r.headers.at("authorization") == "Bearer ghs_faketoken");
            CHECK(r.headers.at("accept") == "application/vnd.github+json");
            CHECK(r.headers.at("x-github-api-version") == "2022-11-28");
            CHECK(r.headers.at("user-agent").starts_with("perfgate/"));
        }
        CHECK(reqs[0].method == "GET");
        CHECK(reqs[0].target == "/repos/octo/widgets/issues/7/comments?per_page=100");
        CHECK(reqs[1].method == "POST");
        CHECK(reqs[1].path == "/repos/octo/widgets/issues/7/comments");
        CHECK(reqs[1].headers.at("content-type") == "application/json");
        auto body = json::parse(reqs[1].body);
        CHECK(body.size() == 1);
        CHECK(body["body"].is_string());
    }
    SUBCASE("the commit status goes on the PR head, not the merge commit")
    {
        auto st = gh.statuses();
        REQUIRE(st.size() == 1);
        CHECK(st[0].first == head_sha);
        auto s = json::parse(st[0].second);
        CHECK(s["state"] == "failure");
        CHECK(s["context"] == "perfgate");
        CHECK(s["target_url"] == "https://github.example/octo/widgets/actions/runs/4242");
        CHECK(s["description"] == "fail: 1 regressed, 0 improved, 1 unchanged, 0 inconclusive");
        CHECK(utf8_chars(s["description"].get<std::string>()) <= 140);
    }
    SUBCASE("the second run edits the same comment")
    {
        gh.clear_requests();
        auto second = publish_to_github(passing_report(), exit_pass, test_options(), log);
        CHECK(second.comment_posted);
        REQUIRE(gh.comments(pr).size() == 1);
        CHECK(gh.comments(pr)[0].id == id);
        CHECK(gh.comments(pr)[0].body.find("pass") != std::string::npos);
        auto patches = with_method(gh, "PATCH");
        REQUIRE(patches.size() == 1);
        CHECK(patches[0].path == "/repos/octo/widgets/issues/comments/" + std::to_string(id));
        CHECK(with_method(gh, "POST").size() == 1); // only the status
        CHECK(json::parse(gh.statuses().back().second)["state"] == "success");
    }
    SUBCASE("another context keeps its own comment")
    {
        auto opt = test_options();
        opt.context = "perfgate/parser";
        publish_to_github(failing_report(), exit_regression, opt, log);
        REQUIRE(gh.comments(pr).size() == 2);
        CHECK(gh.comments(pr)[1].body.starts_with(comment_marker("perfgate/parser")));
        CHECK(json::parse(gh.statuses().back().second)["context"] == "perfgate/parser");
    }
}

TEST_CASE("the comment and the job summary show where a regression came from and link the run's artifacts")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    gate::report r = failing_report();
    gate::attribution a;
    a.callgrind.emplace().top.push_back({"checksum(std::vector<int, std::allocator<int> >)", "checksum.cpp", 0, 4e6,
                                         4e6, 0.9, std::nullopt, std::nullopt});
    r.benchmarks[0].attribution_info = a;

    SUBCASE("with the artifact this run uploads")
    {
        auto opt = test_options();
        opt.artifact_name = "perfgate-artifacts";
        publish_to_github(r, exit_regression, opt, log);
        REQUIRE(gh.comments(pr).size() == 1);
        for (const std::string& body : {gh.comments(pr)[0].body, slurp(env.summary())}) {
            CAPTURE(body);
            CHECK(body.find("<details><summary>Where did it come from</summary>") != std::string::npos);
            CHECK(body.find("| checksum\\(std::vector&lt;int, std::allocator&lt;int&gt; &gt;\\) | 0 | 4,000,000 | "
                            "+4,000,000 | +90.0% |") != std::string::npos);
            // callgrind makes no flame graph: the line names what the artifact holds.
            CHECK(body.find(
                      "Raw callgrind profiles and attribution.json: `perfgate-artifacts` in the [workflow artifacts]"
                      "(https://github.example/octo/widgets/actions/runs/4242#artifacts).") != std::string::npos);
        }
    }
    SUBCASE("without one: the table, no link")
    {
        publish_to_github(r, exit_regression, test_options(), log);
        REQUIRE(gh.comments(pr).size() == 1);
        CHECK(gh.comments(pr)[0].body.find("Where did it come from") != std::string::npos);
        CHECK(gh.comments(pr)[0].body.find("#artifacts") == std::string::npos);
    }
}

TEST_CASE("the comment's head names both commits, linked to the repository, the backend and the testbed")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    gate::report r = failing_report();
    const std::string head(40, 'c'), base(40, 'a'), tip(40, 'b');
    r.baseline = gate::baseline_choice{"merge-base", base, tip, head};
    r.measured = gate::measurement{"callgrind", "ci-runner-2", base, head};
    publish_to_github(r, exit_regression, test_options(), log);
    REQUIRE(gh.comments(pr).size() == 1);
    const std::string body = gh.comments(pr)[0].body;
    CAPTURE(body);
    CHECK(body.find("Head [`ccccccc`](https://github.example/octo/widgets/commit/" + head +
                    ") vs baseline [`aaaaaaa`]"
                    "(https://github.example/octo/widgets/commit/" +
                    base +
                    "), the **merge-base** (base tip "
                    "[`bbbbbbb`](https://github.example/octo/widgets/commit/" +
                    tip +
                    ")) · backend **callgrind** · "
                    "testbed **ci-runner-2**\n") != std::string::npos);
    // Above the table.
    CHECK(body.find("Head [") < body.find("| | benchmark |"));

    // The merge-base is the base tip (a branch made from it): one SHA, not
    // the same commit twice (issue 44, item 13); the text report the same.
    r.baseline = gate::baseline_choice{"merge-base", base, base, head};
    const std::string md = perfgate::report::render_markdown(r);
    CHECK(md.find("the **merge-base** · backend") != std::string::npos);
    CHECK(md.find("base tip") == std::string::npos);
    const std::string text = perfgate::report::render_text(r, false);
    CHECK(text.find("baseline: merge-base aaaaaaaaaaaa · head cccccccccccc") != std::string::npos);
    CHECK(text.find(" of base ") == std::string::npos);
}

TEST_CASE("comments by other users with the marker are left alone")
{
    const auto marker = comment_marker("perfgate");

    SUBCASE("GITHUB_TOKEN (a bot): a human's comment quoting the marker is not ours")
    {
        fake_github gh;
        actions_env env(gh.url());
        const auto theirs = gh.add_comment(pr, "mallory", "User", marker + "\nlooks like perfgate");
        std::ostringstream log;
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.comment_posted);
        auto cs = gh.comments(pr);
        REQUIRE(cs.size() == 2);
        CHECK(cs[0].id == theirs);
        CHECK(cs[0].body == marker + "\nlooks like perfgate");
        CHECK(cs[1].login == "github-actions[bot]");
        CHECK(with_method(gh, "PATCH").empty());
    }
    SUBCASE("a personal token: only that user's comments match (GET /user)")
    {
        fake_github gh("ghp_personal", "alice", "User");
        actions_env env(gh.url(), "ghp_personal");
        gh.add_comment(pr, "bob", "User", marker + "\nbob's copy");
        const auto mine = gh.add_comment(pr, "alice", "User", marker + "\nold report");
        std::ostringstream log;
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        auto cs = gh.comments(pr);
        REQUIRE(cs.size() == 2);
        CHECK(cs[0].body == marker + "\nbob's copy");
        CHECK(cs[1].id == mine);
        CHECK(cs[1].body.find("task-clock") != std::string::npos);
        CHECK(gh.requests()[0].path == "/user");
    }
}

TEST_CASE("pagination: the marker is found on page 2 through the Link header")
{
    fake_github gh;
    actions_env env(gh.url());
    for (int i = 0; i < 130; ++i)
        gh.add_comment(pr, "user" + std::to_string(i), "User", "comment " + std::to_string(i));
    const auto ours = gh.add_comment(pr, "github-actions[bot]", "Bot", comment_marker("perfgate") + "\nold");
    std::ostringstream log;
    auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
    CHECK(res.comment_posted);
    CHECK(res.comment_id == ours);
    CHECK(gh.comments(pr).size() == 131);
    auto gets = with_method(gh, "GET");
    REQUIRE(gets.size() == 2);
    CHECK(gets[0].target == "/repos/octo/widgets/issues/7/comments?per_page=100");
    // The next page is the URL GitHub gave, verbatim.
    CHECK(gets[1].target == "/repositories/4242/issues/7/comments?per_page=100&page=2");
    CHECK(with_method(gh, "PATCH").size() == 1);
}

TEST_CASE("a report over GitHub's limit is truncated, keeping the marker")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    SUBCASE("details are cut, the summary table stays")
    {
        const auto big = failing_report(2000); // ~400 KB of details when whole
        auto res = publish_to_github(big, exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_posted);
        REQUIRE(gh.comments(pr).size() == 1);
        const std::string body = gh.comments(pr)[0].body;
        CHECK(utf8_chars(body) <= 65536);
        CHECK(body.size() > 30000); // truncated, not dropped
        CHECK(body.starts_with(comment_marker("perfgate")));
        CHECK(body.find("task-clock") != std::string::npos);
        CHECK(body.find("truncated") != std::string::npos);
        // The job summary has room for more (1 MiB).
        CHECK(slurp(env.summary()).size() > body.size());
    }
    SUBCASE("even the gated table is too long: the marker and verdict stay")
    {
        const auto big = failing_report(2000, true);
        auto res = publish_to_github(big, exit_regression, test_options(), log);
        CHECK(res.comment_posted);
        REQUIRE(gh.comments(pr).size() == 1);
        const std::string body = gh.comments(pr)[0].body;
        CHECK(utf8_chars(body) <= 65536);
        CHECK(body.starts_with(comment_marker("perfgate")));
        CHECK(body.find("fail") != std::string::npos);
    }
}

TEST_CASE("a 500-benchmark suite: the comment fits GitHub's limit with every regression, the job summary has every row")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    // 500 benchmarks x 4 counters (3 gated): every 50th (from 7) regressed, the rest unchanged.
    gate::report r;
    r.result = gate::verdict::fail;
    std::vector<std::string> regressed;
    for (int i = 0; i < 500; ++i) {
        gate::benchmark_report b;
        b.name = "BM/suite:" + std::to_string(i);
        const bool slower = i % 50 == 7;
        b.result = slower ? gate::verdict::fail : gate::verdict::pass;
        for (const char* name : {"real-time", "cpu-time", "instructions"})
            b.counters.push_back(counter(name, slower ? gate::status::regression : gate::status::unchanged,
                                         slower ? 30.0 : 0.1));
        b.counters.push_back(counter("items-per-second", gate::status::unchanged, 0.1));
        b.counters.back().gated = false;
        if (slower) regressed.push_back(b.name);
        r.benchmarks.push_back(b);
    }
    REQUIRE(regressed.size() == 10);
    auto res = publish_to_github(r, exit_regression, test_options(), log);
    CHECK(res.warnings.empty());
    REQUIRE(gh.comments(pr).size() == 1);
    const std::string comment = gh.comments(pr)[0].body;
    const std::string summary = slurp(env.summary());
    CHECK(utf8_chars(comment) <= 65536);
    CHECK(comment.starts_with(comment_marker("perfgate")));
    CHECK(summary.size() <= std::size_t{1024 * 1024});
    CHECK(summary.size() > comment.size());
    for (const std::string* body : {&comment, &summary}) {
        CHECK(
            body->find("**500 benchmarks compared: 10 regressions, 0 improvements, 490 unchanged, 0 inconclusive**") !=
            std::string::npos);
        CHECK(body->find("<details><summary>1,470 unchanged rows of gated counters</summary>") != std::string::npos);
        for (const auto& name : regressed) {
            for (const char* counter_name : {"real-time", "cpu-time", "instructions"}) {
                const std::string row = "| 🔴 | " + name + " | " + counter_name + " |";
                CAPTURE(row);
                CHECK(body->find(row) != std::string::npos);
                CHECK(body->find(row) < body->find("unchanged rows of gated counters"));
            }
        }
    }
    CHECK(comment.find("unchanged rows not listed") != std::string::npos);
    CHECK(summary.find("unchanged rows not listed") == std::string::npos); // 1 MiB holds them all
}

TEST_CASE("posting the same truncated report twice still updates one comment")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    const auto big = failing_report(2000);
    publish_to_github(big, exit_regression, test_options(), log);
    auto res = publish_to_github(big, exit_regression, test_options(), log);
    CHECK(res.warnings.empty());
    CHECK(res.comment_posted);
    REQUIRE(gh.comments(pr).size() == 1);
    CHECK(with_method(gh, "PATCH").size() == 1); // the marker survived truncation
}

TEST_CASE("permissions, rate limits, server errors and outages become warnings")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    std::vector<std::chrono::milliseconds> waits;

    SUBCASE("403 Resource not accessible by integration names the missing permission")
    {
        gh.deny_pull_requests(true);
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK_FALSE(res.comment_posted);
        CHECK(res.status_posted);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].starts_with("could not post the PR comment: POST "));
        CHECK(res.warnings[0].find("Resource not accessible by integration") != std::string::npos);
        CHECK(res.warnings[0].find("`pull-requests: write`") != std::string::npos);
        CHECK(res.warnings[0].find("workflow_run") != std::string::npos);
        CHECK(log.str().find("::warning title=perfgate::could not post the PR comment") != std::string::npos);
    }
    SUBCASE("a 403 that is not a rate limit is not waited on")
    {
        gh.deny_pull_requests(true);
        auto res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log);
        CHECK_FALSE(res.comment_posted);
        CHECK(waits.empty());
        CHECK(with_method(gh, "POST").size() == 2); // the comment once, the status
    }
    SUBCASE("statuses: write missing")
    {
        gh.deny_statuses(true);
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.comment_posted);
        CHECK_FALSE(res.status_posted);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("`statuses: write`") != std::string::npos);
    }
    SUBCASE("429 with retry-after is waited out and retried")
    {
        gh.add_fault({"GET", "/comments", 429, {{"retry-after", "2"}}, R"({"message":"secondary rate limit"})", 1});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_posted);
        REQUIRE(waits.size() == 1);
        CHECK(waits[0] == std::chrono::seconds(2));
        CHECK(with_method(gh, "GET").size() == 2);
    }
    SUBCASE("403 with an exhausted primary limit waits until x-ratelimit-reset")
    {
        auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                       .count();
        gh.add_fault({"POST",
                      "/statuses/",
                      403,
                      {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", std::to_string(now + 5)}},
                      R"({"message":"API rate limit exceeded"})",
                      1});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log);
        CHECK(res.status_posted);
        REQUIRE(waits.size() == 1);
        CHECK(waits[0] >= std::chrono::seconds(4));
        CHECK(waits[0] <= std::chrono::seconds(7));
    }
    SUBCASE("a wait beyond the cap gives up at once with a warning")
    {
        gh.add_fault({"GET", "/comments", 429, {{"retry-after", "3600"}}, R"({"message":"slow down"})", 1});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log);
        CHECK(waits.empty());
        CHECK_FALSE(res.comment_posted);
        CHECK(res.status_posted);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("rate limited (HTTP 429); GitHub asks to wait 3600 s, more than the 60 s left "
                                   "of the 60 s perfgate waits: slow down") != std::string::npos);
    }
    SUBCASE("5xx is retried with exponential backoff")
    {
        gh.add_fault({"POST", "/statuses/", 502, {}, R"({"message":"Bad Gateway"})", 2});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log);
        CHECK(res.status_posted);
        CHECK(waits ==
              std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(10), std::chrono::milliseconds(20)});
    }
    SUBCASE("5xx that persists ends in a warning after max_attempts")
    {
        gh.add_fault({"POST", "/statuses/", 503, {}, R"({"message":"Service Unavailable"})", 10});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log);
        CHECK_FALSE(res.status_posted);
        CHECK(waits.size() == 3);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("HTTP 503 after 4 attempts: Service Unavailable") != std::string::npos);
    }
}

TEST_CASE("GitHub unreachable: the verdict, summary and outputs are not lost")
{
    actions_env env("http://127.0.0.1:" + std::to_string(closed_port()));
    std::ostringstream log;
    std::vector<std::chrono::milliseconds> waits;
    github_result res;
    CHECK_NOTHROW(res = publish_to_github(failing_report(), exit_regression, test_options(&waits), log));
    CHECK_FALSE(res.comment_posted);
    CHECK_FALSE(res.status_posted);
    REQUIRE(res.warnings.size() == 2);
    CHECK(res.warnings[0].starts_with("could not post the PR comment: GET http://127.0.0.1:"));
    CHECK(res.warnings[0].find("connect failed") != std::string::npos);
    CHECK(res.warnings[0].find("(after 4 attempts)") != std::string::npos);
    CHECK(res.warnings[1].starts_with("could not post the commit status"));
    CHECK(waits.size() == 6); // 3 backoffs per call

    const auto summary = slurp(env.summary());
    CHECK(summary.find("fail") != std::string::npos);
    CHECK(summary.find("task-clock") != std::string::npos);
    CHECK(summary.find("<!--") == std::string::npos); // no marker in the summary
    const auto out = slurp(env.output());
    CHECK(out.find("verdict<<ghadelimiter_") == 0);
    CHECK(out.find("\nfail\nghadelimiter_") != std::string::npos);
    CHECK(out.find("report-path<<") != std::string::npos);
    CHECK(out.find("\nperfgate-report.json\n") != std::string::npos);
    CHECK(out.find("comparison-url<<") != std::string::npos);
}

TEST_CASE("annotations, outputs and escaping")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    auto r = failing_report();
    for (int i = 0; i < 12; ++i) r.warnings.push_back("warning " + std::to_string(i) + "\nsecond line 100%");
    auto opt = test_options();
    opt.comparison_url = "https://perfgate.example/c/9";
    publish_to_github(r, exit_regression, opt, log);
    const auto text = log.str();
    CHECK(text.find("::error title=perfgate%3A default regressed::default/task-clock: median +5.00%25 (threshold "
                    "2%25), p_adj 0.0002\n") != std::string::npos);
    CHECK(text.find("::warning title=perfgate::cpu frequency scaling is on\n") != std::string::npos);
    CHECK(text.find("::warning title=perfgate::warning 0%0Asecond line 100%25\n") != std::string::npos);
    CHECK(text.find("warning 9%0A") == std::string::npos); // 10 shown: the first plus 0..8
    CHECK(text.find("... and 3 more warnings") != std::string::npos);
    CHECK(json::parse(gh.statuses().back().second)["target_url"] == "https://perfgate.example/c/9");
    const auto out = slurp(env.output());
    CHECK(out.find("\nhttps://perfgate.example/c/9\n") != std::string::npos);

    CHECK(escape_command_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e");
    CHECK(escape_command_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce");
    CHECK(status_state(exit_pass) == "success");
    CHECK(status_state(exit_regression) == "failure");
    CHECK(status_state(exit_inconclusive) == "failure");
    CHECK(status_state(exit_measurement) == "error");
    CHECK(comment_marker("a--b>") == "<!-- perfgate-comment: a-b_ -->");
}

TEST_CASE("model::github_env and read_event_file: the one reader of GITHUB_* and the event file")
{
    // The reader runner/git_info.cpp and github/ share (model/github_actions.hpp).
    const std::map<std::string, std::string> vars = {{"GITHUB_ACTIONS", "true"},
                                                     {"GITHUB_API_URL", "https://api.example//"},
                                                     {"GITHUB_SERVER_URL", "https://gh"},
                                                     {"GITHUB_REPOSITORY", "o/r"},
                                                     {"GITHUB_RUN_ID", "42"},
                                                     {"GITHUB_HEAD_REF", "topic"},
                                                     {"GITHUB_BASE_REF", "main"},
                                                     {"GITHUB_REF_NAME", "7/merge"},
                                                     {"GITHUB_SHA", merge_sha}};
    const model::env_lookup env = [&](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    const auto e = model::github_env::read(env);
    CHECK(e.actions);
    CHECK(e.api_url == "https://api.example"); // trailing slashes dropped
    CHECK(e.run_url() == "https://gh/o/r/actions/runs/42");
    CHECK(e.head_ref == "topic");
    CHECK(e.base_ref == "main");
    CHECK(e.ref_name == "7/merge");
    CHECK(e.sha == merge_sha);
    CHECK(e.token.empty());
    CHECK_FALSE(model::github_env::read([](const char*) { return std::optional<std::string>(); }).actions);

    const perfgate::test::temp_dir scratch("pg-event");
    const fs::path dir = scratch.path();
    CHECK(model::read_event_file((dir / "missing.json").string()).state == model::event_file::outcome::unreadable);
    std::ofstream(dir / "bad.json") << "{not json";
    const auto bad = model::read_event_file((dir / "bad.json").string());
    CHECK(bad.state == model::event_file::outcome::not_json);
    CHECK_FALSE(bad.parse_error.empty());
    std::ofstream(dir / "list.json") << "[1]";
    const auto list = model::read_event_file((dir / "list.json").string());
    CHECK(list.state == model::event_file::outcome::ok);
    CHECK(list.payload.is_array()); // any JSON: each caller decides what it needs
}

TEST_CASE("comment modes")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    auto opt = test_options();

    SUBCASE("never: no comment traffic, the status still goes out")
    {
        opt.comment = "never";
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK_FALSE(res.comment_posted);
        CHECK(res.status_posted);
        CHECK(gh.requests().size() == 1);
    }
    SUBCASE("on-regression: a pass posts nothing new, but refreshes an existing comment")
    {
        opt.comment = "on-regression";
        auto res = publish_to_github(passing_report(), exit_pass, opt, log);
        CHECK_FALSE(res.comment_posted);
        CHECK(gh.comments(pr).empty());
        publish_to_github(failing_report(), exit_regression, opt, log);
        REQUIRE(gh.comments(pr).size() == 1);
        res = publish_to_github(passing_report(), exit_pass, opt, log);
        CHECK(res.comment_posted);
        REQUIRE(gh.comments(pr).size() == 1);
        CHECK(gh.comments(pr)[0].body.find("pass") != std::string::npos);
    }
    SUBCASE("on-change: unchanged posts nothing")
    {
        opt.comment = "on-change";
        auto res = publish_to_github(passing_report(), exit_pass, opt, log);
        CHECK_FALSE(res.comment_posted);
        res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK(res.comment_posted);
    }
    SUBCASE("an unknown mode is a usage error")
    {
        opt.comment = "sometimes";
        CHECK_THROWS_WITH_AS(publish_to_github(passing_report(), exit_pass, opt, log),
                             "--comment: expected always, on-change, on-regression or never, got 'sometimes'",
                             perfgate::error);
    }
}

TEST_CASE("events and the environment")
{
    fake_github gh;
    actions_env env(gh.url());

    auto source = [&](std::string name) {
        event_source src;
        src.path = env.event().string();
        src.name = std::move(name);
        src.repository = "octo/widgets";
        src.api_url = gh.url();
        src.fallback_sha = merge_sha;
        return src;
    };

    SUBCASE("read_event for pull_request, workflow_run and push")
    {
        auto t = read_event(source("pull_request"));
        CHECK(t.event_name == "pull_request");
        CHECK(t.pr_number == pr);
        CHECK(t.head_sha == head_sha);
        CHECK(t.warnings.empty());
        const std::string run_sha(40, 'c');
        env.write_event(workflow_run_event(run_sha, json::array({run_pr(3, run_sha)})));
        t = read_event(source("workflow_run"));
        CHECK(t.pr_number == 3);
        CHECK(t.head_sha == run_sha);
        env.write_event({{"after", "0000000000000000000000000000000000000000"}});
        t = read_event(source("push"));
        CHECK_FALSE(t.pr_number.has_value());
        CHECK(t.head_sha == merge_sha);
    }
    SUBCASE("bad event files are input.github_event naming the file")
    {
        std::ofstream(env.event()) << "not json";
        CHECK_THROWS_WITH_AS(read_event(source("pull_request")),
                             (env.event().string() + ": the event payload is not a JSON object").c_str(),
                             perfgate::error);
        env.write_event({{"after", head_sha}});
        CHECK_THROWS_WITH_AS(read_event(source("pull_request")),
                             (env.event().string() + ": a pull_request event without pull_request.number").c_str(),
                             perfgate::error);
        CHECK_THROWS_WITH_AS(read_event(source("workflow_run")),
                             (env.event().string() + ": a workflow_run event without workflow_run").c_str(),
                             perfgate::error);
        auto missing = source("push");
        missing.path = (env.dir() / "missing.json").string();
        try {
            read_event(missing);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.github_event");
            CHECK(std::string(e.what()).starts_with(missing.path));
        }
    }
    SUBCASE("a push event posts the status on the pushed commit and no comment")
    {
        env.set("GITHUB_EVENT_NAME", "push");
        env.write_event({{"after", head_sha}});
        std::ostringstream log;
        auto res = publish_to_github(passing_report(), exit_pass, test_options(), log);
        CHECK_FALSE(res.comment_posted);
        CHECK(res.status_posted);
        CHECK(gh.statuses().at(0).first == head_sha);
        CHECK(log.str().find("no pull request in this event") != std::string::npos);
    }
    SUBCASE("missing environment: a warning in run --github, an error for perfgate github")
    {
        env.unset("GITHUB_TOKEN");
        std::ostringstream log;
        auto res = publish_to_github(passing_report(), exit_pass, test_options(), log);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].starts_with("GITHUB_TOKEN not set"));
        CHECK(gh.requests().empty());
        CHECK(slurp(env.output()).find("\npass\n") != std::string::npos); // outputs still written

        auto opt = test_options();
        opt.require_environment = true;
        try {
            publish_to_github(passing_report(), exit_pass, opt, log);
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.github_env");
            CHECK(std::string(e.what()).starts_with("GITHUB_TOKEN not set"));
        }
    }
}

TEST_CASE("perfgate github posts a report file")
{
    fake_github gh;
    actions_env env(gh.url());
    const auto report_file = (env.dir() / "report.json").string();
    std::ofstream(report_file) << perfgate::report::to_json(failing_report()).dump();

    SUBCASE("exit code follows the verdict")
    {
        CHECK(cmd_github({"--report", report_file}) == exit_regression);
        CHECK(gh.comments(pr).size() == 1);
        CHECK(gh.statuses().size() == 1);
        CHECK(json::parse(gh.statuses().back().second)["description"].get<std::string>().starts_with("fail: "));
        CHECK(cmd_github({"--report", report_file, "--no-fail-on-regression"}) == exit_pass);
        CHECK(gh.comments(pr).size() == 1); // sticky
        CHECK(json::parse(gh.statuses().back().second)["state"] == "success");
        // A green check says what happened without saying "fail" (issue 44, item 13).
        const std::string green = json::parse(gh.statuses().back().second)["description"];
        CHECK(green.starts_with("regression (not failing: fail-on-regression false): 1 regressed"));
        CHECK(green.find("fail:") == std::string::npos);
    }
    SUBCASE("the fork split: --event and --expect-head-sha")
    {
        const std::string feed = "feedface" + std::string(32, '0');
        const std::string dead = "deadbeef" + std::string(32, '0');
        const auto artifact_event = (env.dir() / "pr-event.json").string();
        std::ofstream(artifact_event) << json{{"pull_request", {{"number", 12}, {"head", {{"sha", feed}}}}}}.dump();
        env.set("GITHUB_EVENT_NAME", "workflow_run");
        env.write_event({{"workflow_run",
                          {{"head_sha", feed}, {"event", "pull_request"}, {"pull_requests", json::array()}}}});
        CHECK(cmd_github({"--report", report_file, "--event", artifact_event, "--expect-head-sha", feed}) ==
              exit_regression);
        CHECK(gh.comments(12).size() == 1);
        CHECK(gh.statuses().at(0).first == feed);
        try {
            cmd_github({"--report", report_file, "--event", artifact_event, "--expect-head-sha", dead});
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.head_sha_mismatch");
            CHECK(std::string(e.what()).find("the pull_request event's head SHA '" + feed +
                                             "' is not the expected "
                                             "'" +
                                             dead + "'") != std::string::npos);
            CHECK(exit_code_for(e.id()) == exit_usage);
        }
        CHECK(gh.comments(12).size() == 1);
    }
    // Issue 43, finding 7: the fork's artifact is the fork's word; a verdict
    // its own counters do not give is not posted as fact.
    SUBCASE("the fork split: a report whose verdict its counters do not give is refused, nothing posted")
    {
        const std::string feed = "feedface" + std::string(32, '0');
        const auto artifact_event = (env.dir() / "pr-event.json").string();
        std::ofstream(artifact_event) << json{{"pull_request", {{"number", 12}, {"head", {{"sha", feed}}}}}}.dump();
        env.set("GITHUB_EVENT_NAME", "workflow_run");
        env.write_event({{"workflow_run",
                          {{"head_sha", feed}, {"event", "pull_request"}, {"pull_requests", json::array()}}}});
        gate::report forged = failing_report(); // task-clock regressed ...
        forged.result = gate::verdict::pass;    // ... "pass: 1 regressed"
        const auto forged_file = (env.dir() / "forged.json").string();
        std::ofstream(forged_file) << perfgate::report::to_json(forged).dump();
        const auto refused = [&](const std::string& file, const std::string& why) {
            try {
                cmd_github({"--report", file, "--event", artifact_event, "--expect-head-sha", feed});
                FAIL("no error");
            } catch (const perfgate::error& e) {
                CHECK(e.id() == "input.bad_report");
                CHECK(std::string(e.what()).find(why) != std::string::npos);
                CHECK(std::string(e.what()).find("refusing to post") != std::string::npos);
            }
        };
        refused(forged_file, "the report says pass but its benchmarks give fail (1 gated counters regressed)");
        forged = failing_report();
        forged.benchmarks[0].result = gate::verdict::pass; // a benchmark's own verdict forged too
        forged.result = gate::verdict::pass;
        std::ofstream(forged_file) << perfgate::report::to_json(forged).dump();
        refused(forged_file, "benchmark 'default' says pass but its gated counters give fail (1 regressed");
        CHECK(gh.statuses().empty());
        CHECK(gh.comments(12).empty());
        // The consistent report is posted.
        CHECK(cmd_github({"--report", report_file, "--event", artifact_event, "--expect-head-sha", feed}) ==
              exit_regression);
        CHECK(gh.statuses().size() == 1);
    }
    SUBCASE("input errors")
    {
        CHECK_THROWS_WITH_AS(cmd_github({}), "perfgate github: --report is required (see --help)", perfgate::error);
        CHECK_THROWS_WITH_AS(cmd_github({"--report", report_file, "--comment", "loud"}),
                             "--comment: expected always, on-change, on-regression or never, got 'loud'",
                             perfgate::error);
        CHECK_THROWS_WITH_AS(cmd_github({"--report", report_file, "--event-name", ""}),
                             "--event-name: must not be empty", perfgate::error);
        CHECK_THROWS_WITH_AS(cmd_github({"--report", report_file, "--comment-author", ""}),
                             "--comment-author: must not be empty", perfgate::error);
        std::ofstream(env.dir() / "bad.json") << "{";
        try {
            cmd_github({"--report", (env.dir() / "bad.json").string()});
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.bad_report");
            CHECK(std::string(e.what()).find("bad.json") != std::string::npos);
        }
        env.unset("GITHUB_REPOSITORY");
        try {
            cmd_github({"--report", report_file});
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "input.github_env");
            CHECK(std::string(e.what()).find("GITHUB_REPOSITORY") != std::string::npos);
            CHECK(exit_code_for(e.id()) == exit_usage);
        }
        CHECK(gh.requests().empty());
    }
}

// Issue 31, finding 6: the event's head SHA once went into the status URL
// unchecked, and "../../../../orgs/victim/x" made perfgate POST to
// /orgs/victim/x with the job's token. The real binary against the fake
// GitHub: every such input is exit 2 naming the field, and no request leaves
// /repos/octo/widgets/.
TEST_CASE("request forgery: a hostile SHA or repository is exit 2 naming it, no request leaves the repository")
{
    fake_github gh;
    actions_env env(gh.url());
    const auto report_file = (env.dir() / "report.json").string();
    std::ofstream(report_file) << perfgate::report::to_json(failing_report()).dump();
    const auto publish = [&] {
        return perfgate::test::run_perfgate({"github", "--report", report_file}, {}, {}, std::chrono::seconds(60));
    };
    const auto only_under_repository = [&] {
        for (const auto& r : gh.requests()) {
            INFO(r.method << " " << r.target);
            CHECK(r.path.starts_with("/repos/octo/widgets/"));
            CHECK(r.target.find("..") == std::string::npos);
        }
    };
    const std::vector<std::string> hostile = {"../../../../orgs/victim/x",
                                              "%2e%2e/%2e%2e/orgs/victim/x",
                                              "0123456789abcdef0123456789abcdef01234567/../../x",
                                              "0123456789abcdef0123456789abcdef0123456?",
                                              "abc1234",
                                              std::string(40, 'g'),
                                              "0123456789abcdef0123456789abcdef0123456\n"};
    for (const auto& sha : hostile) {
        const std::vector<std::tuple<std::string, std::string, json>> events = {
            {"pull_request", "pull_request.head.sha",
             json{{"pull_request", {{"number", pr}, {"head", {{"sha", sha}}}}}}},
            {"workflow_run", "workflow_run.head_sha",
             json{{"workflow_run", {{"head_sha", sha}, {"event", "pull_request"}, {"pull_requests", json::array()}}}}},
            {"push", "after", json{{"after", sha}}},
            {"merge_group", "merge_group.head_sha", json{{"merge_group", {{"head_sha", sha}}}}},
        };
        for (const auto& e : events) {
            env.set("GITHUB_EVENT_NAME", std::get<0>(e));
            env.write_event(std::get<2>(e));
            const auto r = publish();
            INFO(std::get<0>(e) << " " << sha << ": " << r.err);
            CHECK(r.code == exit_usage);
            CHECK(r.err.find("[input.github_sha]") != std::string::npos);
            CHECK(r.err.find(std::get<1>(e) + ":") != std::string::npos);
            CHECK(gh.requests().empty());
        }
        env.set("GITHUB_EVENT_NAME", "workflow_dispatch");
        env.set("GITHUB_SHA", sha);
        const auto r = publish();
        INFO("GITHUB_SHA " << sha << ": " << r.err);
        CHECK(r.code == exit_usage);
        CHECK(r.err.find("GITHUB_SHA: ") != std::string::npos);
        CHECK(gh.requests().empty());
        env.set("GITHUB_SHA", merge_sha);
    }
    for (const std::string repo :
         {"octo/../../orgs/victim", "../orgs", "octo/widgets/../../x", "octo/wid gets", "octo", "octo/%2e%2e"}) {
        env.set("GITHUB_REPOSITORY", repo);
        env.set("GITHUB_EVENT_NAME", "workflow_dispatch");
        const auto r = publish();
        INFO(repo << ": " << r.err);
        CHECK(r.code == exit_usage);
        CHECK(r.err.find("[input.github_env]") != std::string::npos);
        CHECK(r.err.find("GITHUB_REPOSITORY") != std::string::npos);
        CHECK(gh.requests().empty());
    }
    env.set("GITHUB_REPOSITORY", "octo/widgets");
    // A whole SHA-256 object name is a commit too; the status lands under the repository.
    const std::string sha256(64, 'a');
    env.set("GITHUB_EVENT_NAME", "pull_request");
    env.write_event(json{{"pull_request", {{"number", pr}, {"head", {{"sha", sha256}}}}}});
    const auto r = publish();
    INFO(r.err);
    CHECK(r.code == exit_regression);
    REQUIRE(gh.statuses().size() == 1);
    CHECK(gh.statuses().at(0).first == sha256);
    CHECK_FALSE(gh.requests().empty());
    only_under_repository();
}

TEST_CASE("workflow_run: only the PR whose head is the run's commit, in this repository, gets the comment")
{
    // GitHub's workflow_run.pull_requests lists the open PRs whose head
    // branch matches the run's, "not necessarily" the one that triggered it.
    fake_github gh;
    actions_env env(gh.url());
    env.set("GITHUB_EVENT_NAME", "workflow_run");
    const std::string run_head = head_sha;
    const std::string stale_head = "1111111111111111111111111111111111111111";
    std::ostringstream log;

    SUBCASE("the first entry is another PR: no comment, a warning, the status still on the run's commit")
    {
        env.write_event(workflow_run_event(run_head, json::array({run_pr(5, stale_head)})));
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK_FALSE(res.comment_posted);
        CHECK(gh.comments(5).empty());
        CHECK(with_method(gh, "GET").empty());
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].starts_with("workflow_run: none of the pull requests the run lists (#5) has head " +
                                          run_head + " and base repository octo/widgets: no comment posted"));
        CHECK(log.str().find("::warning title=perfgate::workflow_run: none of the pull requests") != std::string::npos);
        CHECK(res.status_posted);
        CHECK(gh.statuses().at(0).first == run_head);
    }
    SUBCASE("the matching entry is second: that PR is used")
    {
        env.write_event(workflow_run_event(run_head, json::array({run_pr(5, stale_head), run_pr(8, run_head)})));
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_posted);
        CHECK(gh.comments(5).empty());
        CHECK(gh.comments(8).size() == 1);
    }
    SUBCASE("the right head but a PR of another repository (a fork's PR from our branch): no comment")
    {
        env.write_event(workflow_run_event(run_head, json::array({run_pr(2, run_head, 777, "widgets-fork")})));
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK_FALSE(res.comment_posted);
        CHECK(gh.comments(2).empty());
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("(#2)") != std::string::npos);
    }
    SUBCASE("without ids the base repository URL decides")
    {
        json entry = run_pr(8, run_head);
        entry["base"]["repo"].erase("id");
        entry["base"]["repo"]["url"] = gh.url() + "/repos/octo/widgets";
        env.write_event(workflow_run_event(run_head, json::array({entry})));
        CHECK(read_event(event_source_for(github_env::from_environment(), {})).pr_number == 8);
        entry["base"]["repo"]["url"] = gh.url() + "/repos/mallory/widgets";
        env.write_event(workflow_run_event(run_head, json::array({entry})));
        CHECK_FALSE(read_event(event_source_for(github_env::from_environment(), {})).pr_number.has_value());
    }
    SUBCASE("a fork PR's run lists none: the warning names the fork split")
    {
        env.write_event(workflow_run_event(run_head, json::array()));
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK_FALSE(res.comment_posted);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("every pull request from a fork") != std::string::npos);
        CHECK(res.warnings[0].find("`perfgate github --report FILE --event EVENT_FILE`") != std::string::npos);
        CHECK(res.status_posted);
    }
    SUBCASE("a run for a push lists none and needs no warning")
    {
        env.write_event(workflow_run_event(run_head, json::array(), "push"));
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK_FALSE(res.comment_posted);
        CHECK(res.status_posted);
    }
}

TEST_CASE("the event name decides how the payload is read")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;

    SUBCASE("issue_comment on a PR: the comment, but no status on a guessed commit")
    {
        // The payload has issue.pull_request but no head SHA, and GITHUB_SHA
        // is the default branch's head: read as a push, it marked that commit.
        env.set("GITHUB_EVENT_NAME", "issue_comment");
        env.write_event(
            {{"action", "created"},
             {"issue",
              {{"number", 9}, {"pull_request", {{"url", "https://api.github.com/repos/octo/widgets/pulls/9"}}}}},
             {"comment", {{"id", 1}, {"body", "/perfgate"}}}});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.comment_posted);
        CHECK(gh.comments(9).size() == 1);
        CHECK_FALSE(res.status_posted);
        CHECK(gh.statuses().empty());
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].starts_with("issue_comment: the event names no commit"));
    }
    SUBCASE("issue_comment on a plain issue: nothing posted, a warning")
    {
        env.set("GITHUB_EVENT_NAME", "issue_comment");
        env.write_event({{"action", "created"}, {"issue", {{"number", 10}}}, {"after", head_sha}});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(gh.requests().empty());
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0] == "issue_comment on issue #10 that is not a pull request: no comment and no commit "
                                 "status posted");
    }
    SUBCASE("a pull_request payload under another event name is not read as a pull request")
    {
        env.set("GITHUB_EVENT_NAME", "push");
        env.write_event({{"after", head_sha}, {"pull_request", {{"number", pr}, {"head", {{"sha", merge_sha}}}}}});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK_FALSE(res.comment_posted);
        CHECK(gh.statuses().at(0).first == head_sha);
    }
    SUBCASE("merge_group: the status on merge_group.head_sha")
    {
        env.set("GITHUB_EVENT_NAME", "merge_group");
        env.write_event({{"action", "checks_requested"},
                         {"merge_group", {{"head_sha", head_sha}, {"base_sha", merge_sha}}}});
        auto res = publish_to_github(passing_report(), exit_pass, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK_FALSE(res.comment_posted);
        CHECK(gh.statuses().at(0).first == head_sha);
    }
    SUBCASE("workflow_dispatch and schedule: the status on GITHUB_SHA")
    {
        for (const char* name : {"workflow_dispatch", "schedule"}) {
            env.set("GITHUB_EVENT_NAME", name);
            env.write_event({{"ref", "refs/heads/main"}});
            auto res = publish_to_github(passing_report(), exit_pass, test_options(), log);
            CHECK(res.warnings.empty());
            CHECK(res.status_posted);
        }
        REQUIRE(gh.statuses().size() == 2);
        CHECK(gh.statuses()[0].first == merge_sha);
        CHECK(gh.statuses()[1].first == merge_sha);
    }
    SUBCASE("an unsupported event posts nothing and says so")
    {
        env.set("GITHUB_EVENT_NAME", "release");
        env.write_event({{"action", "published"}, {"after", head_sha}});
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(gh.requests().empty());
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].starts_with("event 'release': perfgate does not publish for this event (supported: "
                                          "pull_request, pull_request_target, workflow_run"));
    }
    SUBCASE("no GITHUB_EVENT_NAME is missing environment")
    {
        env.unset("GITHUB_EVENT_NAME");
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].starts_with("GITHUB_EVENT_NAME not set"));
        CHECK(gh.requests().empty());
    }
    SUBCASE("a saved event: read as pull_request in a workflow_run job, else as --event-name says")
    {
        const auto saved = (env.dir() / "saved.json").string();
        std::ofstream(saved) << json{{"pull_request", {{"number", 12}, {"head", {{"sha", head_sha}}}}}}.dump();
        env.set("GITHUB_EVENT_NAME", "workflow_run");
        auto opt = test_options();
        opt.event_path = saved;
        auto t = read_event(event_source_for(github_env::from_environment(), opt));
        CHECK(t.event_name == "pull_request");
        CHECK(t.pr_number == 12);
        // The job's own workflow_run payload is never read as a pull request.
        env.write_event({{"pull_request", {{"number", 12}, {"head", {{"sha", head_sha}}}}},
                         {"workflow_run", {{"head_sha", head_sha}, {"pull_requests", json::array()}}}});
        CHECK_FALSE(read_event(event_source_for(github_env::from_environment(), {})).pr_number.has_value());

        std::ofstream(saved) << json{{"after", head_sha}}.dump();
        opt.event_name = "push";
        t = read_event(event_source_for(github_env::from_environment(), opt));
        CHECK(t.event_name == "push");
        CHECK(t.head_sha == head_sha);

        const auto report_file = (env.dir() / "report.json").string();
        std::ofstream(report_file) << perfgate::report::to_json(passing_report()).dump();
        CHECK(cmd_github({"--report", report_file, "--event", saved, "--event-name", "push"}) == exit_pass);
        CHECK(gh.statuses().at(0).first == head_sha);
        CHECK(gh.comments(12).empty());
    }
}

TEST_CASE("the sticky comment is only ever one of our own login")
{
    const auto marker = comment_marker("perfgate");
    std::ostringstream log;

    SUBCASE("GITHUB_TOKEN: another bot's comment quoting the marker is left alone")
    {
        fake_github gh;
        actions_env env(gh.url());
        const auto theirs = gh.add_comment(pr, "renovate[bot]", "Bot", "Quoting perfgate:\n" + marker + "\nits report");
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_posted);
        CHECK(with_method(gh, "PATCH").empty());
        auto cs = gh.comments(pr);
        REQUIRE(cs.size() == 2);
        CHECK(cs[0].id == theirs);
        CHECK(cs[0].body == "Quoting perfgate:\n" + marker + "\nits report");
        CHECK(cs[1].login == "github-actions[bot]");
        CHECK(res.comment_id == cs[1].id);
    }
    SUBCASE("another app's token names its bot login; github-actions[bot]'s comment is then not ours")
    {
        fake_github gh("ghs_apptoken", "perfgate-app[bot]", "Bot");
        actions_env env(gh.url(), "ghs_apptoken");
        gh.add_comment(pr, "github-actions[bot]", "Bot", marker + "\nanother workflow's");
        const auto mine = gh.add_comment(pr, "perfgate-app[bot]", "Bot", marker + "\nold report");
        auto opt = test_options();
        opt.comment_author = "perfgate-app[bot]";
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_id == mine);
        auto cs = gh.comments(pr);
        REQUIRE(cs.size() == 2);
        CHECK(cs[0].body == marker + "\nanother workflow's");
        CHECK(cs[1].body.find("task-clock") != std::string::npos);
    }
}

TEST_CASE("a comment POST whose answer was lost is not posted twice")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    std::vector<std::chrono::milliseconds> waits;
    auto opt = test_options(&waits);
    // Long enough that no other request on a busy machine times out.
    opt.retry.timeout = std::chrono::milliseconds(1000);
    // GitHub creates the comment, then the answer comes too late for the client.
    fault lost;
    lost.method = "POST";
    lost.path_contains = "/issues/7/comments";
    lost.takes_effect = true;
    lost.delay = std::chrono::milliseconds(4000);
    gh.add_fault(lost);

    auto res = publish_to_github(failing_report(), exit_regression, opt, log);
    CHECK(res.warnings.empty());
    CHECK(res.comment_posted);
    auto cs = gh.comments(pr);
    REQUIRE(cs.size() == 1);
    CHECK(res.comment_id == cs[0].id);
    CHECK(with_method(gh, "POST").size() == 2);  // the lost comment, the status
    CHECK(with_method(gh, "PATCH").size() == 1); // the landed comment, found again
    CHECK(with_method(gh, "GET").size() == 2);   // before posting, and after the loss
    CHECK(waits.size() == 1);
    CHECK(log.str().find("the comment POST got no answer") != std::string::npos);
    CHECK(log.str().find("the lost POST had landed") != std::string::npos);

    SUBCASE("a POST that did not land is sent again")
    {
        gh.add_fault({"POST", "/issues/7/comments", 502, {}, R"({"message":"Bad Gateway"})", 1});
        auto again = test_options(&waits);
        again.context = "perfgate/other";
        res = publish_to_github(failing_report(), exit_regression, again, log);
        CHECK(res.comment_posted);
        REQUIRE(gh.comments(pr).size() == 2);
        CHECK(gh.comments(pr)[1].body.starts_with(comment_marker("perfgate/other")));
    }
}

TEST_CASE("rate limits: secondary limits wait a minute and more, within the budget")
{
    fake_github gh;
    actions_env env(gh.url());
    std::ostringstream log;
    std::vector<std::chrono::milliseconds> waits;
    auto opt = test_options(&waits);
    opt.retry.max_wait = std::chrono::minutes(3);
    using std::chrono::seconds;
    const fault secondary{
        "POST",
        "/statuses/",
        403,
        {{"x-ratelimit-remaining", "4000"}},
        R"({"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."})",
        1};

    SUBCASE("a 403 secondary limit without retry-after waits at least a minute, then succeeds")
    {
        gh.add_fault(secondary);
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK(res.warnings.empty());
        CHECK(res.status_posted);
        REQUIRE(waits.size() == 1);
        CHECK(waits[0] >= seconds(60));
    }
    SUBCASE("a 429 without headers is a secondary limit too; it persists: 60 s, then 120 s")
    {
        fault twice = secondary;
        twice.status = 429;
        twice.headers.clear();
        twice.times = 2;
        gh.add_fault(twice);
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK(res.status_posted);
        CHECK(waits == std::vector<std::chrono::milliseconds>{seconds(60), seconds(120)});
    }
    SUBCASE("a third wait (240 s) would pass the budget: give up with the reason")
    {
        fault thrice = secondary;
        thrice.times = 3;
        gh.add_fault(thrice);
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK_FALSE(res.status_posted);
        CHECK(waits == std::vector<std::chrono::milliseconds>{seconds(60), seconds(120)});
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("rate limited (HTTP 403); a secondary rate limit waits 240 s, more than "
                                   "the 0 s left of the 180 s perfgate waits") != std::string::npos);
    }
    SUBCASE("retry-after as an HTTP date, against the injected clock")
    {
        // Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example) is 784111777 s after the epoch.
        opt.retry.now = [] { return std::chrono::system_clock::time_point(seconds(784111777 - 42)); };
        gh.add_fault({"POST", "/statuses/", 429, {{"retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"}}, "{}", 1});
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK(res.status_posted);
        CHECK(waits == std::vector<std::chrono::milliseconds>{seconds(42)});
    }
    SUBCASE("the primary limit waits until x-ratelimit-reset, against the injected clock")
    {
        opt.retry.now = [] { return std::chrono::system_clock::time_point(seconds(1'700'000'000)); };
        gh.add_fault({"GET",
                      "/comments",
                      403,
                      {{"x-ratelimit-remaining", "0"}, {"x-ratelimit-reset", "1700000030"}},
                      R"({"message":"API rate limit exceeded"})",
                      1});
        auto res = publish_to_github(failing_report(), exit_regression, opt, log);
        CHECK(res.comment_posted);
        CHECK(waits == std::vector<std::chrono::milliseconds>{seconds(31)});
    }
}

TEST_CASE("GitHub over https through HTTPS_PROXY, and direct for NO_PROXY")
{
    // libcurl (7.88 here) applies HTTPS_PROXY to 127.0.0.1 as to any host (no
    // built-in loopback exception), so the fake stays on 127.0.0.1; a
    // request that bypassed the proxy would fail the CONNECT checks below.
    perfgate::test::test_cert cert("IP:127.0.0.1");
    fake_github gh("ghs_faketoken", "github-actions[bot]", "Bot",
                   perfgate::test::tls_files{cert.cert.string(), cert.key.string()});
    perfgate::test::connect_proxy proxy;
    REQUIRE(gh.url().starts_with("https://127.0.0.1:"));
    actions_env env(gh.url());
    env.set("SSL_CERT_FILE", cert.cert.string());
    env.set("HTTPS_PROXY", proxy.url());
    // curl prefers the lower-case names: clear them so the upper-case ones decide.
    env.unset("https_proxy");
    env.unset("no_proxy");
    env.unset("ALL_PROXY");
    env.unset("all_proxy");
    std::ostringstream log;

    SUBCASE("through the proxy: one CONNECT tunnel carries the list, the comment and the status")
    {
        env.unset("NO_PROXY");
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_posted);
        CHECK(res.status_posted);
        CHECK(gh.comments(pr).size() == 1);
        CHECK(proxy.connects() == std::vector<std::string>{"127.0.0.1:" + std::to_string(gh.port())});
        CHECK(gh.connections() == 1);
        CHECK(gh.requests().size() == 3);
    }
    SUBCASE("NO_PROXY naming the host: direct, the proxy sees nothing")
    {
        env.set("NO_PROXY", "127.0.0.1");
        auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK(res.comment_posted);
        CHECK(proxy.connections() == 0);
        CHECK(gh.comments(pr).size() == 1);
    }
}

namespace {

// The lines of each `uses: actions/checkout@...` step in a workflow file. A
// step is a "- " item; its keys sit at the column of `uses:`, its `with:`
// values deeper, so the step runs up to its "- " and down until a line that
// is indented less than its keys. Enough for the flat YAML of our examples.
std::vector<std::string> checkout_steps(const std::string& yaml)
{
    std::vector<std::string> lines;
    std::istringstream in(yaml);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    auto indent = [](const std::string& l) { return l.find_first_not_of(' '); };

    std::vector<std::string> steps;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto uses = lines[i].find("uses: actions/checkout@");
        if (uses == std::string::npos) continue;
        const std::size_t keys = lines[i][uses - 2] == '-' ? uses : indent(lines[i]);
        std::size_t first = i;
        while (first > 0 && lines[first].compare(keys - 2, 2, "- ") != 0) --first;
        std::size_t last = i + 1;
        while (last < lines.size() && (indent(lines[last]) == std::string::npos || indent(lines[last]) >= keys)) {
            ++last;
        }
        std::string step;
        for (std::size_t k = first; k < last; ++k) step += lines[k] + "\n";
        steps.push_back(step);
    }
    return steps;
}

} // namespace

TEST_CASE("the pull_request examples check out the PR head that the status marks")
{
    // actions/checkout checks out GITHUB_SHA by default, which on
    // pull_request is the merge commit; perfgate marks and stores
    // pull_request.head.sha, so the measured tree must be that commit.
    const fs::path source = PERFGATE_SOURCE_DIR;
    const std::string head_ref = "ref: ${{ github.event.pull_request.head.sha }}";
    int workflows = 0;
    for (const fs::path& dir : {source / ".github" / "workflows", source / "ci" / "examples"}) {
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (entry.path().extension() != ".yml") continue;
            const std::string text = slurp(entry.path());
            if (text.find("\n  pull_request:") == std::string::npos) continue; // not on pull_request
            CAPTURE(entry.path().string());
            ++workflows;
            const auto steps = checkout_steps(text);
            REQUIRE_FALSE(steps.empty());
            bool head = false;
            for (const auto& step : steps) {
                CAPTURE(step);
                CHECK(step.find("ref:") != std::string::npos); // never the default merge commit
                head = head || step.find(head_ref) != std::string::npos;
            }
            CHECK(head);
        }
    }
    // .github/workflows/perfgate.yml, same-repo-pr.yml, fork-measure.yml, gbench-cmake.yml
    CHECK(workflows == 4);
}

TEST_CASE("the action's measure step: budget inputs replace the fixed repetitions")
{
    // ci/action-run.sh with a stand-in perfgate that records its arguments
    // and writes a report where --output says.
    const perfgate::test::temp_dir scratch("pg-action");
    const fs::path dir = scratch.path();
    std::ofstream(dir / "perfgate") << "#!/bin/sh\n"
                                       "echo \"$*\" >> \"$(dirname \"$0\")/args\"\n"
                                       "while [ $# -gt 0 ]; do\n"
                                       "  if [ \"$1\" = --output ]; then echo '{\"verdict\": \"pass\"}' > \"$2\"; fi\n"
                                       "  shift\n"
                                       "done\n";
    fs::permissions(dir / "perfgate", fs::perms::owner_all);
    auto step = [&](const std::string& inputs) {
        fs::remove(dir / "args");
        const std::string cmd = "cd '" + dir.string() +
                                "' && env PERFGATE=./perfgate RUNNER_TEMP=. GITHUB_OUTPUT=out "
                                "IN_PUBLISH=false IN_BASELINE=true IN_CANDIDATE=true " +
                                inputs + " bash '" + PERFGATE_SOURCE_DIR + "/ci/action-run.sh' > /dev/null";
        CHECK(std::system(cmd.c_str()) == 0);
        return slurp(dir / "args");
    };
    std::string args = step("IN_BUDGET=120");
    CHECK(args.find("--budget 120") != std::string::npos);
    CHECK(args.find(" -r ") == std::string::npos);
    args = step("IN_BUDGET=30 IN_MAX_REPETITIONS=40 IN_REPETITIONS=15");
    CHECK(args.find("--budget 30 --max-repetitions 40") != std::string::npos);
    CHECK(args.find(" -r ") == std::string::npos);
    args = step("IN_REPETITIONS=15");
    CHECK(args.find(" -r 15 ") != std::string::npos);
    CHECK(args.find("--budget") == std::string::npos);
    CHECK(args.find("--base-sha") == std::string::npos);
    // base-sha (the push example passes github.event.before) reaches perfgate run.
    args = step("IN_BASE_SHA=0123abcd");
    CHECK(args.find(" --base-sha 0123abcd") != std::string::npos);
    CHECK(slurp(dir / "out").find("verdict=pass") != std::string::npos);
    // The baseline rule and the checkouts that show it, only when set.
    CHECK(args.find("--baseline-ref") == std::string::npos);
    CHECK(args.find("--repo") == std::string::npos);
    args = step("IN_BASELINE_REF=merge-base IN_REPO=head 'IN_BASELINE_DIR=base dir'");
    CHECK(args.find(" --baseline-ref merge-base --repo head --baseline-dir base dir") != std::string::npos);

    // The repetitions input is empty by default (ci/action.yml, issue 44 item
    // 10): no -r, so perfgate run's own default decides: 10 for perf, native
    // and rusage, one execution a side for the deterministic callgrind and
    // memcheck (docs/cli.md#perfgate-run), not ten identical ones.
    const std::string action = slurp(fs::path(PERFGATE_SOURCE_DIR) / "ci" / "action.yml");
    const auto input = action.find("\n  repetitions:\n");
    REQUIRE(input != std::string::npos);
    const std::string block = action.substr(input, action.find("\n  budget:", input) - input);
    CHECK(block.find("default: ''") != std::string::npos);
    for (const char* backend : {"callgrind", "memcheck", "perf", "native", "rusage"}) {
        CAPTURE(backend);
        args = step(std::string("IN_BACKEND=") + backend + " IN_REPETITIONS=");
        CHECK(args.find(std::string("--backend ") + backend) != std::string::npos);
        CHECK(args.find(" -r ") == std::string::npos);
        // An explicit count is passed as given, 10 included, for every backend.
        args = step(std::string("IN_BACKEND=") + backend + " IN_REPETITIONS=10");
        CHECK(args.find(" -r 10 ") != std::string::npos);
    }
}

TEST_CASE("the action's measure step: --artifacts, and the link and upload only when something was written")
{
    // A stand-in perfgate: records its arguments, writes a failing report,
    // and (FAKE_ARTIFACTS=1) an attribution under --artifacts DIR.
    const perfgate::test::temp_dir scratch("pg-action");
    const fs::path dir = scratch.path();
    std::ofstream(dir / "perfgate")
        << "#!/bin/sh\n"
           "echo \"$*\" >> \"$(dirname \"$0\")/args\"\n"
           "while [ $# -gt 0 ]; do\n"
           "  if [ \"$1\" = --output ]; then echo '{\"verdict\": \"fail\"}' > \"$2\"; fi\n"
           "  if [ \"$1\" = --artifacts ] && [ \"$FAKE_ARTIFACTS\" = 1 ]; then\n"
           "    mkdir -p \"$2/default\" && echo '{}' > \"$2/default/attribution.json\"; fi\n"
           "  shift\n"
           "done\n";
    fs::permissions(dir / "perfgate", fs::perms::owner_all);
    auto step = [&](const std::string& inputs) {
        fs::remove(dir / "args");
        fs::remove(dir / "out");
        const std::string cmd = "cd '" + dir.string() +
                                "' && env PERFGATE=./perfgate RUNNER_TEMP=. GITHUB_OUTPUT=out "
                                "IN_BASELINE=true IN_CANDIDATE=true IN_BACKEND=callgrind " +
                                inputs + " bash '" + PERFGATE_SOURCE_DIR + "/ci/action-run.sh' > /dev/null";
        std::system(cmd.c_str());
        return slurp(dir / "args");
    };
    std::string args = step("FAKE_ARTIFACTS=1 IN_TOP=5 IN_CACHE_SIM=true");
    CHECK(args.find("--artifacts ./perfgate-artifacts") != std::string::npos);
    CHECK(args.find("--top 5 --cache-sim") != std::string::npos);
    CHECK(args.find("github --report") != std::string::npos);
    CHECK(args.find("--artifact perfgate-artifacts") != std::string::npos);
    CHECK(slurp(dir / "out").find("artifacts-dir=./perfgate-artifacts\n") != std::string::npos);
    // A google/benchmark suite: harness and filter reach perfgate run as given.
    args = step("IN_HARNESS=gbench 'IN_FILTER=BM_(Sort|Copy) $(touch pwned)'");
    CHECK(args.find("--harness gbench --filter BM_(Sort|Copy) $(touch pwned)") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "pwned"));
    args = step("");
    CHECK(args.find("--harness") == std::string::npos);

    // Nothing written (no regression, or a backend without profiles): no
    // output for the upload step, no link; the last run's files are gone.
    args = step("FAKE_ARTIFACTS=0 IN_ARTIFACT_NAME=mine");
    CHECK(args.find("--artifact ") == std::string::npos);
    CHECK(slurp(dir / "out").find("artifacts-dir=") == std::string::npos);
    CHECK_FALSE(fs::exists(dir / "perfgate-artifacts" / "default"));

    args = step("FAKE_ARTIFACTS=1 IN_ARTIFACT_NAME=bench-linux");
    CHECK(args.find("--artifact bench-linux") != std::string::npos);
}

// ---------------------------------------------------------------------------
// perfgate accept (issue 33, item 3; docs/github.md "Accepting a regression")

namespace {

constexpr const char* accepted_head = "aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000";
constexpr const char* pushed_head = "bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111";
constexpr const char* base_commit = "cccc2222cccc2222cccc2222cccc2222cccc2222";

// created_at: when the comment was written; by default long after every
// status the fake records (statuses carry the real time unless set_clock).
json comment_event(const std::string& login, const std::string& body, const std::string& action = "created",
                   bool on_pull_request = true, const std::string& created_at = "2099-01-01T00:00:00Z")
{
    json issue = {{"number", pr}, {"title", "Faster parser"}};
    if (on_pull_request) issue["pull_request"] = {{"url", "https://api.github.com/repos/octo/widgets/pulls/7"}};
    // author_association says OWNER: perfgate never trusts it.
    return {{"action", action},
            {"issue", issue},
            {"comment",
             {{"id", 555},
              {"body", body},
              {"user", {{"login", login}, {"type", "User"}}},
              {"created_at", created_at},
              {"author_association", "OWNER"}}},
            {"sender", {{"login", login}}}};
}

json label_event(const std::string& login, const std::string& label)
{
    return {{"action", "labeled"},
            {"number", pr},
            {"label", {{"name", label}}},
            {"pull_request", {{"number", pr}, {"head", {{"sha", accepted_head}}}}},
            {"sender", {{"login", login}}}};
}

std::string status_of(const fake_github& gh, const std::string& sha, const std::string& state)
{
    std::string last;
    for (const auto& [s, body] : gh.statuses()) {
        if (s == sha) last = json::parse(body).at("state").get<std::string>();
    }
    return last == state ? state : "last is '" + last + "'";
}

// The real server with a comparison whose candidate is each of `heads`:
// the ids, by head.
// The engine is the test's (support/database.hpp): SQLite, or PostgreSQL
// for the postgresql/ variants ctest runs.
struct gate_server {
    perfgate::test::test_database where;
    std::filesystem::path db = where.location();
    perfgate::test::temp_dir dir{"perfgate-accept"};
    std::string token = (perfgate::test::create_token(db, "demo"));
    perfgate::test::server_process server{db, dir.path() / "server.log", {"--public-read"}};

    // The candidate's task-clock is `slower` times the capture's: 3 makes the
    // comparison a real regression, 1 an A/A pass. Both runs of a gate share
    // a session (measured interleaved, as perfgate run uploads them).
    std::int64_t upload(const std::string& sha, const std::string& role, const std::string& session,
                        int slower = 1) const
    {
        std::istringstream capture(perfgate::test::read_testdata("appended-10-runs.csv"));
        std::string csv, line;
        while (std::getline(capture, line)) {
            if (slower != 1 && line.find(",task-clock,") != std::string::npos)
                line = fmt::format("{:.2f}{}", std::stod(line) * slower, line.substr(line.find(',')));
            csv += line + "\n";
        }
        const json body = {{"benchmark", "parse"},
                           {"role", role},
                           {"git_sha", sha},
                           {"branch", role == "baseline" ? "main" : "feature"},
                           {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
                           {"session", session},
                           {"perf_csv", csv}};
        const auto r = perfgate::test::send(server.port(), boost::beast::http::verb::post, "/api/v1/projects/demo/runs",
                                            body.dump(), "application/json", token);
        REQUIRE(r.status == 201);
        return r.parsed().at("run_id").get<std::int64_t>();
    }
    std::int64_t gate(const std::string& head, int slower = 3) const
    {
        const std::string session = "gate-" + head.substr(0, 12);
        const json body = {{"baseline_run", upload(base_commit, "baseline", session)},
                           {"candidate_run", upload(head, "candidate", session, slower)}};
        const auto r = perfgate::test::send(server.port(), boost::beast::http::verb::post,
                                            "/api/v1/projects/demo/compare", body.dump(), "application/json", token);
        REQUIRE(r.status == 201);
        return r.parsed().at("comparison_id").get<std::int64_t>();
    }
    json comparison(std::int64_t id) const
    {
        const auto r = perfgate::test::send(server.port(), boost::beast::http::verb::get,
                                            "/api/v1/projects/demo/comparisons/" + std::to_string(id), {}, {}, token);
        REQUIRE(r.status == 200);
        return r.parsed();
    }
    std::vector<std::string> accept_args() const
    {
        return {"--server", server.url(), "--project", "demo", "--token", token};
    }
};

// The sticky comment's body (the one comment of our login with the marker).
std::string sticky_body(const fake_github& gh)
{
    for (const auto& c : gh.comments(pr)) {
        if (c.body.find(comment_marker("perfgate")) != std::string::npos && c.login == "github-actions[bot]")
            return c.body;
    }
    return {};
}

// What perfgate run --github does on a push: the failing report for head.
void gate_push(actions_env& env, const std::string& head)
{
    env.set("GITHUB_EVENT_NAME", "pull_request");
    env.write_event(
        {{"action", "synchronize"}, {"number", pr}, {"pull_request", {{"number", pr}, {"head", {{"sha", head}}}}}});
    std::ostringstream log;
    const auto res = publish_to_github(failing_report(), exit_regression, test_options(), log);
    REQUIRE(res.status_posted);
    REQUIRE(res.comment_posted);
}

std::string note_of(const std::string& body)
{
    const auto begin = body.find(perfgate::report::acceptance_note_begin);
    const auto end = body.find(perfgate::report::acceptance_note_end);
    if (begin == std::string::npos || end == std::string::npos) return {};
    const auto from = begin + perfgate::report::acceptance_note_begin.size();
    return body.substr(from, end - from);
}

} // namespace

TEST_CASE(
    "accept: a writer's comment turns the head's status to success, notes the sticky comment, stores who and why, and a new push re-gates")
{
    fake_github gh;
    actions_env env(gh.url());
    gate_server srv;
    const auto first = srv.gate(accepted_head);
    gh.add_pull(pr, accepted_head);
    gh.set_permission("maintainer", "write", "maintain");
    gate_push(env, accepted_head);
    CHECK(status_of(gh, accepted_head, "failure") == "failure");
    const std::string report_comment = sticky_body(gh);
    REQUIRE_FALSE(report_comment.empty());

    env.set("GITHUB_EVENT_NAME", "issue_comment");
    env.write_event(comment_event("maintainer", "/perfgate accept the bounds check fixes CVE-2026-1; 4% is its price"));
    CHECK(cmd_accept(srv.accept_args()) == exit_pass);

    // The permission came from the API, the head from the pull request.
    const auto gets = with_method(gh, "GET");
    CHECK(std::any_of(gets.begin(), gets.end(), [](const auto& r) {
        return r.path == "/repos/octo/widgets/collaborators/maintainer/permission";
    }));
    CHECK(std::any_of(gets.begin(), gets.end(), [](const auto& r) { return r.path == "/repos/octo/widgets/pulls/7"; }));
    // The status: success, who and why, linking the stored comparison.
    const json status = json::parse(gh.statuses().back().second);
    CHECK(gh.statuses().back().first == accepted_head);
    CHECK(status.at("state") == "success");
    CHECK(status.at("context") == "perfgate");
    CHECK(status.at("description") == "accepted by @maintainer: the bounds check fixes CVE-2026-1; 4% is its price");
    CHECK(status.at("target_url") == srv.server.url() + "/p/demo/comparisons/" + std::to_string(first));
    // The sticky comment: the report stays, the note says who and why; no second comment.
    const std::string body = sticky_body(gh);
    CHECK(gh.comments(pr).size() == 1);
    CHECK(body.find(report_comment.substr(report_comment.find('\n') + 1)) != std::string::npos);
    const std::string note = note_of(body);
    CHECK(note.find("**Accepted** by @\xe2\x80\x8bmaintainer for commit aaaa0000aaaa: the bounds check") !=
          std::string::npos);
    // Stored with the comparison: read back from the server.
    const json stored = srv.comparison(first).at("acceptance");
    CHECK(stored.at("login") == "maintainer");
    CHECK(stored.at("reason") == "the bounds check fixes CVE-2026-1; 4% is its price");
    CHECK(stored.at("head_sha") == accepted_head);
    CHECK(stored.at("comparison_id") == first);
    CHECK(stored.at("accepted_at").get<std::int64_t>() > 0);
    // And on the dashboard's comparison page.
    const auto page = perfgate::test::send(srv.server.port(), boost::beast::http::verb::get,
                                           "/p/demo/comparisons/" + std::to_string(first));
    REQUIRE(page.status == 200);
    CHECK(srv.comparison(first).at("verdict") == "fail");
    CHECK(page.body.find("id=\"acceptance\">Regression accepted by @maintainer for commit aaaa0000aaaa on ") !=
          std::string::npos);

    SUBCASE("an acceptance of a comparison that did not fail says 'Accepted', not 'Regression accepted'")
    {
        const std::string passing_head(40, 'c');
        const auto passing = srv.gate(passing_head, 1);
        REQUIRE(srv.comparison(passing).at("verdict") != "fail");
        const json accept = {{"head_sha", passing_head}, {"login", "maintainer"}, {"reason", "a pass"}};
        const auto stored = perfgate::test::send(srv.server.port(), boost::beast::http::verb::post,
                                                 "/api/v1/projects/demo/acceptances", accept.dump(), "application/json",
                                                 srv.token);
        REQUIRE(stored.status == 201);
        REQUIRE(stored.parsed().at("comparison_id") == passing);
        const auto passing_page = perfgate::test::send(srv.server.port(), boost::beast::http::verb::get,
                                                       "/p/demo/comparisons/" + std::to_string(passing));
        REQUIRE(passing_page.status == 200);
        CHECK(passing_page.body.find("id=\"acceptance\">Accepted by @maintainer for commit cccccccccccc on ") !=
              std::string::npos);
        CHECK(passing_page.body.find("Regression accepted") == std::string::npos);
    }

    SUBCASE("a new push is gated afresh: the acceptance stays with its commit")
    {
        const auto second = srv.gate(pushed_head);
        gh.add_pull(pr, pushed_head);
        gate_push(env, pushed_head);
        CHECK(status_of(gh, pushed_head, "failure") == "failure");
        CHECK(status_of(gh, accepted_head, "success") == "success");
        CHECK(srv.comparison(second).at("acceptance").is_null());
        CHECK(srv.comparison(first).at("acceptance").at("head_sha") == accepted_head);
        CHECK(note_of(sticky_body(gh)).empty()); // the new report replaced the note
        // Accepting again accepts the new head, stored with its own comparison.
        env.set("GITHUB_EVENT_NAME", "issue_comment");
        env.write_event(comment_event("maintainer", "/perfgate accept still the CVE fix"));
        CHECK(cmd_accept(srv.accept_args()) == exit_pass);
        CHECK(status_of(gh, pushed_head, "success") == "success");
        CHECK(srv.comparison(second).at("acceptance").at("head_sha") == pushed_head);
        CHECK(srv.comparison(first).at("acceptance").at("reason") ==
              "the bounds check fixes CVE-2026-1; 4% is its price");
    }
    SUBCASE("a reader's comment gets a reply saying why, and changes nothing")
    {
        gh.set_permission("reader", "read", "triage");
        const auto statuses = gh.statuses().size();
        const std::string before = sticky_body(gh);
        gh.clear_requests();
        env.write_event(comment_event("reader", "/perfgate accept trust me"));
        try {
            cmd_accept(srv.accept_args());
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "accept.denied");
            CHECK(exit_code_for(e.id()) == exit_usage);
            CHECK(std::string(e.what()).find("@reader has read permission on octo/widgets") != std::string::npos);
        }
        REQUIRE(gh.comments(pr).size() == 2);
        const auto reply = gh.comments(pr).back();
        CHECK(reply.body.find("@reader perfgate did not accept the regression") == 0);
        CHECK(reply.body.find("yours is read. Nothing changed") != std::string::npos);
        CHECK(gh.statuses().size() == statuses);
        CHECK(sticky_body(gh) == before);
        CHECK(srv.comparison(first).at("acceptance").at("login") == "maintainer");
        // Neither the pull request nor anything else was asked for: the permission, then the reply.
        const auto sent = gh.requests();
        REQUIRE(sent.size() == 2);
        CHECK(sent[0].path == "/repos/octo/widgets/collaborators/reader/permission");
        CHECK(sent[1].method == "POST");
        CHECK(sent[1].path == "/repos/octo/widgets/issues/7/comments");
    }
    SUBCASE("a user GitHub does not know is no writer")
    {
        gh.set_permission("ghost", "", "");
        env.write_event(comment_event("ghost", "/perfgate accept boo"));
        CHECK_THROWS_WITH_AS(cmd_accept(srv.accept_args()), doctest::Contains("@ghost has none permission"),
                             perfgate::error);
        CHECK(status_of(gh, accepted_head, "success") == "success");
    }
}

// Issue 43, finding 6: the maintainer's request names the head they saw;
// a push after it is never accepted in its place.
TEST_CASE("accept: a head pushed after the comment or the label is not accepted: a reply, no status, nothing stored")
{
    fake_github gh;
    actions_env env(gh.url());
    gate_server srv;
    const auto first = srv.gate(accepted_head);
    gh.add_pull(pr, accepted_head);
    gh.set_permission("maintainer", "write", "maintain");
    gh.set_clock("2026-11-28T10:00:00Z");
    gate_push(env, accepted_head); // 10:00: the verdict the maintainer reads
    // 10:05: the comment; 10:10: a push, gated on GitHub and on the server.
    const auto second = srv.gate(pushed_head);
    gh.add_pull(pr, pushed_head);
    gh.set_clock("2026-11-28T10:10:00Z");
    gate_push(env, pushed_head);
    const auto statuses = gh.statuses().size();
    env.set("GITHUB_EVENT_NAME", "issue_comment");
    env.write_event(comment_event("maintainer", "/perfgate accept the price of the fix", "created", true,
                                  "2026-11-28T10:05:00Z"));
    try {
        cmd_accept(srv.accept_args());
        FAIL("no error");
    } catch (const perfgate::error& e) {
        CHECK(e.id() == "accept.denied");
        CHECK(std::string(e.what()).find("head moved after the request") != std::string::npos);
        CHECK(std::string(e.what()).find("was gated at 2026-11-28T10:10:00Z, after the comment "
                                         "(2026-11-28T10:05:00Z)") != std::string::npos);
    }
    CHECK(gh.statuses().size() == statuses); // no success on the new head
    CHECK(status_of(gh, pushed_head, "failure") == "failure");
    CHECK(gh.comments(pr).back().body.find("@maintainer perfgate did not accept: the pull request's head moved") == 0);
    CHECK(srv.comparison(second).at("acceptance").is_null());
    CHECK(srv.comparison(first).at("acceptance").is_null());

    SUBCASE("a comment after the new head's verdict accepts it")
    {
        env.write_event(comment_event("maintainer", "/perfgate accept still the price", "created", true,
                                      "2026-11-28T10:15:00Z"));
        CHECK(cmd_accept(srv.accept_args()) == exit_pass);
        CHECK(status_of(gh, pushed_head, "success") == "success");
        CHECK(srv.comparison(second).at("acceptance").at("head_sha") == pushed_head);
    }
    SUBCASE("a comment written while the head was not gated yet, or without created_at, is refused")
    {
        gh.add_pull(pr, "dddd3333dddd3333dddd3333dddd3333dddd3333"); // pushed, no verdict yet
        env.write_event(comment_event("maintainer", "/perfgate accept x"));
        CHECK_THROWS_WITH_AS(cmd_accept(srv.accept_args()), doctest::Contains("has no 'perfgate' status"),
                             perfgate::error);
        json no_time = comment_event("maintainer", "/perfgate accept x");
        no_time["comment"].erase("created_at");
        env.write_event(no_time);
        CHECK_THROWS_WITH_AS(cmd_accept(srv.accept_args()),
                             doctest::Contains("comment.created_at is not a GitHub time"), perfgate::error);
        CHECK(gh.statuses().size() == statuses);
    }
    SUBCASE("a label put on the old head")
    {
        env.set("GITHUB_EVENT_NAME", "pull_request");
        env.write_event(label_event("maintainer", "perfgate-accept")); // its head: accepted_head
        CHECK_THROWS_WITH_AS(cmd_accept(srv.accept_args()),
                             doctest::Contains("the label was put on aaaa0000aaaa and the head is now bbbb1111bbbb"),
                             perfgate::error);
        CHECK(gh.statuses().size() == statuses);
        CHECK(srv.comparison(second).at("acceptance").is_null());
    }
}

TEST_CASE("accept: the perfgate-accept label by a writer accepts, other labels and events do nothing")
{
    fake_github gh;
    actions_env env(gh.url());
    gh.add_pull(pr, accepted_head);
    gh.set_permission("admin-user", "admin", "admin");
    env.set("GITHUB_EVENT_NAME", "pull_request");

    env.write_event(label_event("admin-user", "needs-review"));
    CHECK(cmd_accept({}) == exit_pass);
    CHECK(gh.requests().empty());

    env.write_event(label_event("admin-user", "perfgate-accept"));
    CHECK(cmd_accept({}) == exit_pass);
    REQUIRE(gh.statuses().size() == 1);
    const json status = json::parse(gh.statuses().back().second);
    CHECK(status.at("state") == "success");
    CHECK(status.at("description") == "accepted by @admin-user: label perfgate-accept");
    // No perfgate comment yet: one is posted with the marker, for run --github to update later.
    REQUIRE(gh.comments(pr).size() == 1);
    CHECK(gh.comments(pr)[0].body.find(comment_marker("perfgate")) == 0);
    CHECK(note_of(gh.comments(pr)[0].body).find("label perfgate-accept") != std::string::npos);

    SUBCASE("a label by someone with triage permission is refused")
    {
        gh.set_permission("triager", "read", "triage");
        env.write_event(label_event("triager", "perfgate-accept"));
        CHECK_THROWS_WITH_AS(cmd_accept({}), doctest::Contains("accepting a regression needs write"), perfgate::error);
        CHECK(gh.statuses().size() == 1);
    }
    SUBCASE("events that are no request do nothing, and events of other kinds are an error")
    {
        gh.clear_requests();
        env.set("GITHUB_EVENT_NAME", "issue_comment");
        for (const std::string body :
             {"LGTM", "> /perfgate accept quoted", "/perfgate acceptable", "please /perfgate accept"}) {
            env.write_event(comment_event("admin-user", body));
            CHECK(cmd_accept({}) == exit_pass);
        }
        env.write_event(comment_event("admin-user", "/perfgate accept edited", "edited"));
        CHECK(cmd_accept({}) == exit_pass);
        env.write_event(comment_event("admin-user", "/perfgate accept on an issue", "created", false));
        CHECK(cmd_accept({}) == exit_pass);
        CHECK(gh.requests().empty());
        env.set("GITHUB_EVENT_NAME", "push");
        CHECK_THROWS_WITH_AS(cmd_accept({}),
                             doctest::Contains("runs on issue_comment and pull_request (labeled) events, not 'push'"),
                             perfgate::error);
        CHECK(gh.requests().empty());
    }
}

TEST_CASE(
    "accept: a hostile reason is cut, flattened and neutralised, an unknown PR and a missing comparison are errors")
{
    fake_github gh;
    actions_env env(gh.url());
    gate_server srv;
    const auto id = srv.gate(accepted_head);
    gh.add_pull(pr, accepted_head);
    gh.set_permission("maintainer", "write", "maintain");
    gate_push(env, accepted_head); // the verdict the maintainer saw
    env.set("GITHUB_EVENT_NAME", "issue_comment");

    SUBCASE("hostile reason")
    {
        const std::string hostile = "/perfgate accept <img src=x onerror=alert(1)> @everyone fixes #12 --> "
                                    "[click](https://evil.example) \x1b[31mred\n\nsecond line \xe2\x80\xae" +
                                    std::string(2000, 'x');
        env.write_event(comment_event("maintainer", hostile));
        CHECK(cmd_accept(srv.accept_args()) == exit_pass);
        const std::string description = json::parse(gh.statuses().back().second).at("description");
        CHECK(utf8_chars(description) <= 140);
        CHECK(description.ends_with("..."));
        CHECK(description.find('\x1b') == std::string::npos);
        const std::string reason = srv.comparison(id).at("acceptance").at("reason");
        CHECK(reason.size() <= perfgate::model::max_acceptance_reason_bytes);
        CHECK(reason.ends_with("..."));
        CHECK(reason.find('\n') == std::string::npos);
        CHECK(reason.find('\x1b') == std::string::npos);
        CHECK(reason.find("\xe2\x80\xae") == std::string::npos);
        CHECK(reason.find(" red second line ") == std::string::npos); // "[31mred" keeps its '[31m'
        CHECK(reason.find("[31mred second line") != std::string::npos);
        const std::string note = note_of(sticky_body(gh));
        REQUIRE_FALSE(note.empty());
        CHECK(note.find("<img") == std::string::npos);
        CHECK(note.find("&lt;img") != std::string::npos);
        CHECK(note.find("-->") == std::string::npos);
        CHECK(note.find("@\xe2\x80\x8b"
                        "everyone") != std::string::npos);
        CHECK(note.find("#\xe2\x80\x8b"
                        "12") != std::string::npos);
        CHECK(note.find("](https://evil") == std::string::npos);
    }
    SUBCASE("an unknown pull request")
    {
        json event = comment_event("maintainer", "/perfgate accept x");
        event["issue"]["number"] = 99;
        env.write_event(event);
        const auto statuses = gh.statuses().size();
        CHECK_THROWS_WITH_AS(cmd_accept(srv.accept_args()),
                             doctest::Contains("pull request #99 not found in octo/widgets"), perfgate::error);
        CHECK(gh.statuses().size() == statuses);
    }
    SUBCASE("a head the server has no comparison of: nothing changes on GitHub")
    {
        gh.add_pull(pr, pushed_head);
        gate_push(env, pushed_head); // gated on GitHub, never uploaded to the server
        env.set("GITHUB_EVENT_NAME", "issue_comment");
        const auto statuses = gh.statuses().size();
        const auto comments = gh.comments(pr).size();
        env.write_event(comment_event("maintainer", "/perfgate accept x"));
        try {
            cmd_accept(srv.accept_args());
            FAIL("no error");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == "server.rejected");
            CHECK(std::string(e.what()).find("[accept.no_comparison] project 'demo' has no comparison whose candidate "
                                             "is commit " +
                                             std::string(pushed_head)) != std::string::npos);
        }
        CHECK(gh.statuses().size() == statuses);
        CHECK(gh.comments(pr).size() == comments);
        CHECK(srv.comparison(id).at("acceptance").is_null());
    }
    SUBCASE("the server checks what it is sent")
    {
        using boost::beast::http::verb;
        const auto post = [&](const json& body, const std::string& token) {
            return perfgate::test::send(srv.server.port(), verb::post, "/api/v1/projects/demo/acceptances", body.dump(),
                                        "application/json", token);
        };
        const json good = {{"head_sha", accepted_head}, {"login", "maintainer"}, {"reason", "ok"}};
        CHECK(post(good, "").status == 401);
        auto with = [&](const char* field, json value) {
            json b = good;
            b[field] = std::move(value);
            return post(b, srv.token);
        };
        const auto bad_sha = with("head_sha", "ABC");
        CHECK(bad_sha.status == 400);
        CHECK(bad_sha.error().at("message").get<std::string>().find("head_sha") != std::string::npos);
        CHECK(with("login", "not a login").error().at("message").get<std::string>().find("login") == 0);
        CHECK(with("reason", "two\nlines").error().at("id") == "ingest.bad_field");
        CHECK(with("reason", std::string(301, 'r')).status == 400);
        CHECK(with("extra", 1).error().at("message").get<std::string>().find("unknown field 'extra'") !=
              std::string::npos);
        CHECK(srv.comparison(id).at("acceptance").is_null());
        const auto ok = post(good, srv.token);
        CHECK(ok.status == 201);
        CHECK(ok.parsed().at("comparison_id") == id);
    }
}

TEST_CASE("accept: the reason of a comment, the note in the sticky comment and the status description")
{
    CHECK(accept_request_reason("/perfgate accept") == std::string());
    CHECK(accept_request_reason("  \n/perfgate accept  intended:\tcorrectness fix  \r\n") ==
          std::string("intended: correctness fix"));
    CHECK_FALSE(accept_request_reason("/perfgate accepted").has_value());
    CHECK_FALSE(accept_request_reason("/perfgate").has_value());
    CHECK_FALSE(accept_request_reason("/Perfgate accept x").has_value());

    const std::string marker = comment_marker("perfgate");
    const std::string one = with_acceptance_note(marker + "\n## report\n", marker, "NOTE1\n");
    CHECK(one == marker + "\nNOTE1\n\n## report\n");
    const std::string note_a = perfgate::report::render_acceptance_note(
        {1, accepted_head, "a", "first", 0, std::nullopt}, "perfgate");
    const std::string note_b = perfgate::report::render_acceptance_note(
        {1, accepted_head, "b", "second", 0, std::nullopt}, "perfgate");
    const std::string twice = with_acceptance_note(with_acceptance_note(marker + "\nbody", marker, note_a), marker,
                                                   note_b);
    CHECK(twice.find("first") == std::string::npos);
    CHECK(twice.find("second") != std::string::npos);
    CHECK(twice.ends_with("body"));

    CHECK(acceptance_description("octocat", "") == "accepted by @octocat");
    const std::string long_one = acceptance_description("octocat", std::string(200, 'y'));
    CHECK(long_one.size() == 140);
    CHECK(long_one.ends_with("y..."));
    // GitHub counts characters, not bytes: 140 of them, and multi-byte
    // characters are never cut in the middle.
    const std::string wide = acceptance_description(
        "octocat",
        std::string(100, 'y') +
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    CHECK(wide.size() > 140);
    CHECK(perfgate::github::detail::utf8_length(wide) == 140);
    CHECK(wide.ends_with("\xc3\xa9..."));
    CHECK(perfgate::model::find_text_fault(wide) == std::nullopt);
}

namespace {

// A stored qualification as perfgate qualify --server posts it (docs/http-api.md "Qualifications").
json qualification_body(const std::string& fingerprint, const std::string& benchmark, const std::string& counter)
{
    return {{"testbed_fingerprint", fingerprint},
            {"testbed", "ci-q"},
            {"benchmark", benchmark},
            {"backend", "callgrind"},
            {"date", "2026-11-28T09:00:00Z"},
            {"counters",
             {{{"counter", counter},
               {"threshold_pct", 2},
               {"detects_80_pct", 10},
               {"detects_95_pct", 20},
               {"reaches_threshold", false},
               {"deterministic", false}}}}};
}

} // namespace

TEST_CASE("perfgate run --server --github: the sticky comment carries the testbed's qualification, the verdict stays")
{
    perfgate::test::temp_dir dir("perfgate-qualpr");
    const fs::path db = dir.path() / "server.db";
    const std::string token = perfgate::test::create_token(db, "demo");
    perfgate::test::server_process server(db, dir.path() / "server.log");
    fake_github gh;
    std::ofstream(dir.path() / "event.json")
        << json{{"action", "synchronize"},
                {"number", pr},
                {"pull_request",
                 {{"number", pr}, {"head", {{"sha", head_sha}}}, {"base", {{"sha", std::string(40, 'b')}}}}}}
               .dump();
    const perfgate::test::env_list env = {{"GITHUB_ACTIONS", "true"},
                                          {"GITHUB_API_URL", gh.url()},
                                          {"GITHUB_SERVER_URL", "https://github.example"},
                                          {"GITHUB_REPOSITORY", "octo/widgets"},
                                          {"GITHUB_EVENT_NAME", "pull_request"},
                                          {"GITHUB_EVENT_PATH", (dir.path() / "event.json").string()},
                                          {"GITHUB_TOKEN", "ghs_faketoken"},
                                          {"GITHUB_SHA", merge_sha},
                                          {"GITHUB_RUN_ID", "4242"},
                                          {"GITHUB_STEP_SUMMARY", (dir.path() / "summary.md").string()},
                                          {"GITHUB_OUTPUT", (dir.path() / "output.txt").string()}};
    // callgrind: one deterministic execution per side, the same verdict every time.
    const auto run = [&] {
        return perfgate::test::run_perfgate(
            {"run",        "--backend",      "callgrind",   "--name",   "qbench",
             "--baseline", "true",           "--candidate", "true",     "--server",
             server.url(), "--project",      "demo",        "--token",  token,
             "--sha",      head_sha,         "--branch",    "feature",  "--testbed",
             "ci-q",       "--format",       "json",        "--output", (dir.path() / "report.json").string(),
             "--github",   "--baseline-ref", "base-tip"},
            dir.path(), env);
    };
    const auto report = [&] {
        std::ifstream in(dir.path() / "report.json");
        return json::parse(in);
    };

    const auto before = run();
    CAPTURE(before.err);
    REQUIRE(before.code == 0);
    const json plain = report();
    CHECK_FALSE(plain.contains("qualification"));
    CHECK_FALSE(plain.contains("advice"));
    REQUIRE(gh.comments(pr).size() == 1);
    CHECK(gh.comments(pr)[0].body.find("Qualification:") == std::string::npos);
    // The counter the gate gates, qualified on this testbed with a figure
    // above its threshold.
    std::string gated;
    for (const auto& c : plain.at("benchmarks").at(0).at("counters")) {
        if (c.at("gated").get<bool>()) {
            gated = c.at("name").get<std::string>();
            break;
        }
    }
    REQUIRE_FALSE(gated.empty());
    const std::string fp = perfgate::runner::detect_testbed("ci-q").fingerprint;
    const auto stored = perfgate::test::send(server.port(), perfgate::test::http::verb::post,
                                             "/api/v1/projects/demo/qualifications",
                                             qualification_body(fp, "qbench", gated).dump(), "application/json", token);
    REQUIRE(stored.status == 201);
    // Another testbed's and another benchmark's: not this run's.
    REQUIRE(
        perfgate::test::send(server.port(), perfgate::test::http::verb::post, "/api/v1/projects/demo/qualifications",
                             qualification_body("0000000000000000", "qbench", gated).dump(), "application/json", token)
            .status == 201);

    const auto after = run();
    CAPTURE(after.err);
    CHECK(after.code == before.code);
    const json qualified = report();
    CHECK(qualified.at("verdict") == plain.at("verdict"));
    CHECK(qualified.at("benchmarks").at(0).at("verdict") == plain.at("benchmarks").at(0).at("verdict"));
    REQUIRE(qualified.contains("qualification"));
    CHECK(qualified.at("qualification").at("testbed_fingerprint") == fp);
    const std::string line = fmt::format("this testbed detects \u2265 10% of {} (qualified 2026-11-28)", gated);
    CHECK(qualified.at("qualification").at("line") == line);
    REQUIRE(qualified.at("advice").size() == 1);
    CHECK(qualified.at("advice").at(0).at("counter") == gated);
    CHECK(qualified.at("advice").at(0).at("detectable_pct") == 10);
    // The sticky comment, updated in place, and the job summary carry the line and the advice.
    REQUIRE(gh.comments(pr).size() == 1);
    for (const std::string& body : {gh.comments(pr)[0].body, slurp(dir.path() / "summary.md")}) {
        CAPTURE(body);
        CHECK(body.find("Qualification: " + perfgate::report::markdown_literal(line) + "\n") != std::string::npos);
        CHECK(body.find("**What this testbed can see**") != std::string::npos);
    }

    // --db on the same store reads the same qualification (the CLI's
    // local path of add_qualification).
    target local;
    local.db = db;
    local.project = "demo";
    gate::report r = perfgate::report::report_from_json(plain);
    CHECK(add_qualification(local, fp, r).empty());
    REQUIRE(r.qualification);
    CHECK(perfgate::model::qualification_line(*r.qualification, 1) == line);
    // A testbed never qualified: no line, no warning.
    gate::report other = perfgate::report::report_from_json(plain);
    CHECK(add_qualification(local, "ffffffffffffffff", other).empty());
    CHECK_FALSE(other.qualification);
}

TEST_CASE("the qualification is advice: an older server, a malformed answer or a server error leave the report alone")
{
    // The fake stands for a perfgate server: it answers 404 to the
    // qualifications route, as a server older than issue 46 does.
    fake_github fake;
    target where;
    where.server.emplace(fake.url(), "demo", std::string("ghs_faketoken"));
    where.project = "demo";
    gate::report r = failing_report();
    const json before = perfgate::report::to_json(r);

    CHECK(add_qualification(where, "5e1f0a9c2b7d4e31", r).empty());
    CHECK(perfgate::report::to_json(r) == before);
    const auto asked = with_method(fake, "GET");
    REQUIRE(asked.size() == 1);
    CHECK(asked[0].target == "/api/v1/projects/demo/qualifications?testbed=5e1f0a9c2b7d4e31");

    struct bad_answer {
        int status;
        std::string body, says;
    };
    for (const auto& bad : std::vector<bad_answer>{
             {200, R"({"qualifications": [{"id": "one"}]})", "qualifications response"},
             {200, R"({"qualifications": [{"id": 1, "testbed_fingerprint": "5e1f0a9c2b7d4e31"}]})", "testbed"},
             {200, "<html>", "not a JSON object"},
             {500, R"({"error": {"id": "store.failed", "message": "disk"}})", "HTTP 500"},
             {403, R"({"error": {"id": "auth.scope", "message": "no read"}})", "HTTP 403"}}) {
        CAPTURE(bad.body);
        fake.add_fault({"GET", "/qualifications", bad.status, {}, bad.body, 1});
        const std::string w = add_qualification(where, "5e1f0a9c2b7d4e31", r);
        CHECK(w.find("the testbed's qualification was not read, so the report has no qualification line: ") == 0);
        CHECK(w.find(bad.says) != std::string::npos);
        CHECK(perfgate::report::to_json(r) == before);
    }
    // Well formed, with a figure no qualification has: that counter is left out.
    fake.add_fault({"GET",
                    "/qualifications",
                    200,
                    {},
                    json{{"qualifications",
                          {{{"id", 1},
                            {"testbed_fingerprint", "5e1f0a9c2b7d4e31"},
                            {"testbed", "ci"},
                            {"benchmark", "default"},
                            {"backend", "rusage"},
                            {"qualified_at", 1795856400},
                            {"stored_at", 1795856460},
                            {"written_by", nullptr},
                            {"counters",
                             {{{"counter", "task-clock"},
                               {"threshold_pct", 2},
                               {"detects_80_pct", -5},
                               {"detects_95_pct", nullptr},
                               {"reaches_threshold", false},
                               {"deterministic", false}}}}}}}}
                        .dump(),
                    1});
    CHECK(add_qualification(where, "5e1f0a9c2b7d4e31", r).empty());
    CHECK(perfgate::report::to_json(r) == before);
}
