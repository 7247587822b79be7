// perfgate gitlab and perfgate accept --gitlab against a local fake of
// GitLab's REST API v4 (tests/fake_gitlab.hpp), the GitLab CI baseline of
// perfgate run (runner/git_info.cpp), and the CI template's MR pipeline
// replayed against the fake (ci/gitlab/perfgate.gitlab-ci.yml).
#include "gitlab/gitlab.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "fake_gitlab.hpp"
#include "model/error.hpp"
#include "model/qualification.hpp"
#include "report/qualification.hpp"
#include "report/render.hpp"
#include "runner/git_info.hpp"
#include "support/database.hpp"
#include "support/numbers.hpp"
#include "support/process.hpp"
#include "support/server.hpp"
#include "test_cert.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgate::test::fake_gitlab;
using perfgate::test::fault;
using namespace perfgate;
using namespace perfgate::gitlab;
namespace gate = perfgate::gate;

namespace {

constexpr const char* head_sha = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* before_sha = "89abcdef0123456789abcdef0123456789abcdef";
constexpr const char* base_sha = "fedcba9876543210fedcba9876543210fedcba98";
constexpr std::int64_t mr = 7;
constexpr std::int64_t bot_id = 900;
constexpr const char* bot = "project_42_bot";

// The variables of one GitLab CI job, pointing at a fake GitLab; restored
// on destruction. An MR pipeline unless changed.
class ci_env {
public:
    explicit ci_env(const fake_gitlab& gl)
    {
        set("GITLAB_CI", "true");
        set("CI_SERVER_URL", gl.url());
        set("CI_API_V4_URL", gl.api_url());
        set("CI_PROJECT_ID", "42");
        set("CI_PROJECT_URL", gl.url() + "/group/widgets");
        set("CI_MERGE_REQUEST_IID", std::to_string(mr));
        set("CI_MERGE_REQUEST_DIFF_BASE_SHA", base_sha);
        set("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feature");
        set("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main");
        set("CI_COMMIT_SHA", head_sha);
        set("CI_COMMIT_BEFORE_SHA", std::string(40, '0'));
        set("CI_COMMIT_REF_NAME", "feature");
        set("CI_PIPELINE_SOURCE", "merge_request_event");
        set("CI_PIPELINE_URL", gl.url() + "/group/widgets/-/pipelines/77");
        set("CI_JOB_URL", gl.url() + "/group/widgets/-/jobs/4242");
        set("PERFGATE_GITLAB_TOKEN", "glpat-faketoken");
        for (const char* name : {"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "CI_COMMIT_BRANCH", "CI_SERVER_TLS_CA_FILE",
                                 "PERFGATE_NOTE_ID", "GITHUB_ACTIONS"})
            unset(name);
    }
    ~ci_env()
    {
        for (auto& [name, old] : saved_) {
            if (old) ::setenv(name.c_str(), old->c_str(), 1);
            else ::unsetenv(name.c_str());
        }
    }
    ci_env(const ci_env&) = delete;
    ci_env& operator=(const ci_env&) = delete;

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
    // A push pipeline on main.
    void push()
    {
        unset("CI_MERGE_REQUEST_IID");
        unset("CI_MERGE_REQUEST_DIFF_BASE_SHA");
        unset("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME");
        unset("CI_MERGE_REQUEST_TARGET_BRANCH_NAME");
        set("CI_PIPELINE_SOURCE", "push");
        set("CI_COMMIT_BRANCH", "main");
        set("CI_COMMIT_REF_NAME", "main");
        set("CI_COMMIT_BEFORE_SHA", before_sha);
    }

private:
    void remember(const std::string& name)
    {
        if (saved_.count(name)) return;
        const char* v = std::getenv(name.c_str());
        saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
    }
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

gate::report report_with(gate::verdict v, std::string bench = "default")
{
    gate::report r;
    r.result = v;
    gate::benchmark_report b;
    b.name = std::move(bench);
    b.result = v;
    b.counters.push_back(counter("task-clock",
                                 v == gate::verdict::fail ? gate::status::regression : gate::status::unchanged,
                                 v == gate::verdict::fail ? 5.0 : 0.1));
    r.benchmarks.push_back(b);
    return r;
}

gitlab_options test_options(std::vector<std::chrono::milliseconds>* waits = nullptr)
{
    gitlab_options o;
    o.retry.backoff = std::chrono::milliseconds(10);
    o.retry.max_wait = std::chrono::milliseconds(60000);
    o.retry.timeout = std::chrono::milliseconds(5000);
    o.retry.sleep = [waits](std::chrono::milliseconds d) {
        if (waits) waits->push_back(d);
    };
    return o;
}

std::vector<perfgate::test::recorded_request> with_method(const fake_gitlab& gl, const std::string& method)
{
    std::vector<perfgate::test::recorded_request> out;
    for (auto& r : gl.requests())
        if (r.method == method) out.push_back(r);
    return out;
}

std::size_t utf8_chars(const std::string& s)
{
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

} // namespace

TEST_CASE("gitlab: a merge request pipeline creates one note, then edits it, and the status marks the MR head")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    const std::string marker = note_marker("perfgate");

    const auto first = publish_to_gitlab(report_with(gate::verdict::fail), exit_regression, test_options(), log);
    CHECK(first.warnings.empty());
    CHECK(first.note_posted);
    CHECK(first.status_posted);
    REQUIRE(gl.notes(mr).size() == 1);
    const auto note = gl.notes(mr)[0];
    CHECK(first.note_id == note.id);
    CHECK(note.author == bot);
    CHECK(note.body.starts_with(marker));
    CHECK(note.body.find("task-clock") != std::string::npos);
    CHECK(note.body.find(gl.url() + "/group/widgets/-/jobs/4242") != std::string::npos);

    // Every call carries PRIVATE-TOKEN and goes under /api/v4/projects/42.
    for (const auto& r : gl.requests()) {
        CAPTURE(r.target);
        CHECK(r.headers.at("private-token") == "glpat-faketoken");
        CHECK(r.headers.count("authorization") == 0);
        CHECK((r.path == "/api/v4/user" || r.path.starts_with("/api/v4/projects/42/")));
    }
    const auto gets = with_method(gl, "GET");
    REQUIRE(gets.size() == 2); // GET /user, the notes' first page
    CHECK(gets[1].target == "/api/v4/projects/42/merge_requests/7/notes?sort=asc&order_by=created_at&per_page=100");

    // The status: failed, on the MR head, named, linked, described.
    REQUIRE(gl.statuses().size() == 1);
    CHECK(gl.statuses()[0].first == head_sha);
    const json status = json::parse(gl.statuses()[0].second);
    CHECK(status.at("state") == "failed");
    CHECK(status.at("name") == "perfgate");
    CHECK(status.at("target_url") == gl.url() + "/group/widgets/-/jobs/4242");
    CHECK(status.at("description") == "fail: 1 regressed, 0 improved, 0 unchanged, 0 inconclusive");
    // The job log: the text report in a collapsible section.
    CHECK(log.str().find("section_start:") != std::string::npos);
    CHECK(log.str().find("section_end:") != std::string::npos);
    CHECK(log.str().find("task-clock") != std::string::npos);

    // The second pipeline (a fix pushed) edits the same note in place.
    gl.clear_requests();
    const auto second = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(), log);
    CHECK(second.warnings.empty());
    REQUIRE(gl.notes(mr).size() == 1);
    CHECK(gl.notes(mr)[0].id == note.id);
    CHECK(second.note_id == note.id);
    CHECK(gl.notes(mr)[0].body.find("pass") != std::string::npos);
    CHECK(with_method(gl, "POST").size() == 1); // the status only
    const auto puts = with_method(gl, "PUT");
    REQUIRE(puts.size() == 1);
    CHECK(puts[0].path == fmt::format("/api/v4/projects/42/merge_requests/7/notes/{}", note.id));
    CHECK(json::parse(gl.statuses().back().second).at("state") == "success");
}

TEST_CASE("gitlab: the sticky note is ours only, found across pages by x-next-page")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    const std::string marker = note_marker("perfgate");
    // 230 notes before ours: a reviewer quoting the marker, a system note
    // with it, and chatter; ours is on the third page of 100.
    gl.add_note(mr, 11, "reviewer", "> " + marker + "\n> quoting perfgate");
    gl.add_note(mr, bot_id, bot, marker + " system", true);
    for (int i = 0; i < 228; ++i) gl.add_note(mr, 12, "dev", "looks good " + std::to_string(i));
    const auto ours = gl.add_note(mr, bot_id, bot, marker + "\nold report");
    const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(), log);
    CHECK(res.warnings.empty());
    CHECK(res.note_id == ours);
    CHECK(with_method(gl, "POST").size() == 1); // the status: no new note
    const auto gets = with_method(gl, "GET");
    REQUIRE(gets.size() == 4); // /user and three pages
    CHECK(gets[2].target.ends_with("&page=2"));
    CHECK(gets[3].target.ends_with("&page=3"));
    const auto notes = gl.notes(mr);
    CHECK(notes[0].body == "> " + marker + "\n> quoting perfgate");
    CHECK(notes[1].body == marker + " system");
    CHECK(notes.back().body.find("old report") == std::string::npos);

    SUBCASE("--note-author names our username without GET /user")
    {
        gl.clear_requests();
        auto o = test_options();
        o.note_author = bot;
        CHECK(publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, o, log).note_id == ours);
        for (const auto& r : gl.requests()) CHECK(r.path != "/api/v4/user");
    }
}

TEST_CASE("gitlab: a push pipeline sets the status on CI_COMMIT_SHA and posts no note, merged results mark the head")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;

    SUBCASE("push")
    {
        const std::string pushed = "aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000";
        env.push();
        env.set("CI_COMMIT_SHA", pushed);
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK_FALSE(res.note_posted);
        REQUIRE(gl.statuses().size() == 1);
        CHECK(gl.statuses()[0].first == pushed);
        CHECK(json::parse(gl.statuses()[0].second).at("state") == "success");
        CHECK(gl.requests().size() == 1); // the status, nothing else
        CHECK(log.str().find("no note posted") != std::string::npos);
    }
    SUBCASE("a merged results pipeline: CI_COMMIT_SHA is the merge commit, the status goes on the source head")
    {
        env.set("CI_COMMIT_SHA", "dddd3333dddd3333dddd3333dddd3333dddd3333");
        env.set("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", head_sha);
        publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(), log);
        REQUIRE(gl.statuses().size() == 1);
        CHECK(gl.statuses()[0].first == head_sha);
    }
    SUBCASE("--comment never: the status only")
    {
        auto o = test_options();
        o.comment = "never";
        publish_to_gitlab(report_with(gate::verdict::fail), exit_regression, o, log);
        CHECK(gl.notes(mr).empty());
        CHECK(gl.requests().size() == 1);
    }
    SUBCASE("an inconclusive or broken gate is failed, a pass with --no-fail-on-regression says so")
    {
        CHECK(status_state(exit_inconclusive) == "failed");
        CHECK(status_state(exit_measurement) == "failed");
        CHECK(status_state(exit_pass) == "success");
        publish_to_gitlab(report_with(gate::verdict::fail), exit_pass, test_options(), log);
        const json status = json::parse(gl.statuses().back().second);
        CHECK(status.at("state") == "success");
        CHECK(status.at("description").get<std::string>().starts_with("regression (not failing"));
    }
}

TEST_CASE("gitlab: hostile shas and ids send zero requests")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    const std::vector<std::pair<std::string, std::string>> hostile = {
        {"CI_COMMIT_SHA", "../../../users"},
        {"CI_COMMIT_SHA", "0123456789abcdef0123456789abcdef0123456"},  // 39 digits
        {"CI_COMMIT_SHA", "0123456789ABCDEF0123456789ABCDEF01234567"}, // upper case
        {"CI_COMMIT_SHA", std::string(head_sha) + "?x=1"},
        {"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "HEAD"},
        {"CI_PROJECT_ID", "42/../43"},
        {"CI_PROJECT_ID", "group%2Fwidgets"},
        {"CI_PROJECT_ID", "-1"},
        {"CI_PROJECT_ID", "042"},
        {"CI_MERGE_REQUEST_IID", "7/notes/1"},
        {"CI_MERGE_REQUEST_IID", "0"},
        {"CI_MERGE_REQUEST_IID", "99999999999999999999"},
    };
    for (const auto& [name, value] : hostile) {
        // Plain copies: clang 14's CAPTURE cannot capture a structured binding.
        const std::string variable = name, hostile_value = value;
        CAPTURE(variable);
        CAPTURE(hostile_value);
        ci_env job(gl); // restores the variable at the end of the iteration
        job.set(name, value);
        gl.clear_requests();
        const auto res = publish_to_gitlab(report_with(gate::verdict::fail), exit_regression, test_options(), log);
        CHECK(gl.requests().empty());
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find(name) != std::string::npos);
        // perfgate gitlab (require_environment) refuses with input.gitlab_env.
        auto strict = test_options();
        strict.require_environment = true;
        try {
            publish_to_gitlab(report_with(gate::verdict::fail), exit_regression, strict, log);
            FAIL("expected input.gitlab_env");
        } catch (const error& e) {
            CHECK(e.id() == errors::input_gitlab_env.view());
        }
        CHECK(gl.requests().empty());
    }
}

TEST_CASE("gitlab: a 500-benchmark suite's note fits GitLab's 1,000,000-character limit with every row")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    // 500 benchmarks x 4 counters (3 gated): every 50th (from 7) regressed.
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
    const auto res = publish_to_gitlab(r, exit_regression, test_options(), log);
    CHECK(res.warnings.empty());
    REQUIRE(gl.notes(mr).size() == 1);
    const std::string body = gl.notes(mr)[0].body;
    CHECK(utf8_chars(body) <= note_limit);
    CHECK(body.starts_with(note_marker("perfgate")));
    CHECK(body.find("**500 benchmarks compared: 10 regressions, 0 improvements, 490 unchanged, 0 inconclusive**") !=
          std::string::npos);
    for (const auto& name : regressed) {
        const std::string row = "| 🔴 | " + name + " | real-time |";
        CAPTURE(row);
        CHECK(body.find(row) != std::string::npos);
    }
    // 1,000,000 characters hold every unchanged row too (GitHub's 65,536 do not).
    CHECK(body.find("unchanged rows not listed") == std::string::npos);
    CHECK(body.find("| BM/suite:499 |") != std::string::npos);
}

TEST_CASE("gitlab: 5xx and 429 are retried as GitLab says (Retry-After, RateLimit-Reset), 401 names the token")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    std::vector<std::chrono::milliseconds> waits;

    SUBCASE("a 502 on the status is sent again after the backoff")
    {
        gl.add_fault({"POST", "/statuses/", 502, {}, R"({"message":"502 Bad Gateway"})", 2});
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(&waits), log);
        CHECK(res.warnings.empty());
        CHECK(gl.statuses().size() == 1);
        CHECK(waits ==
              std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(10), std::chrono::milliseconds(20)});
    }
    SUBCASE("a 429 with Retry-After waits that long")
    {
        gl.add_fault({"GET", "/notes", 429, {{"Retry-After", "7"}}, R"({"message":"Retry later"})", 1});
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(&waits), log);
        CHECK(res.warnings.empty());
        CHECK(waits == std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(7000)});
    }
    SUBCASE("a 429 with RateLimit-Reset only waits until the reset")
    {
        auto o = test_options(&waits);
        o.retry.now = [] { return std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)); };
        gl.add_fault({"GET", "/user", 429, {{"RateLimit-Reset", "1700000020"}}, R"({"message":"Retry later"})", 1});
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, o, log);
        CHECK(res.warnings.empty());
        CHECK(waits == std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(21000)});
    }
    SUBCASE("a wait past the budget gives up with gitlab.rate_limited, as a warning; the status still goes")
    {
        gl.add_fault({"GET", "/user", 429, {{"Retry-After", "3600"}}, R"({"message":"Retry later"})", 1});
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(&waits), log);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("rate limited (HTTP 429)") != std::string::npos);
        CHECK(waits.empty());
        CHECK(gl.statuses().size() == 1);
    }
    SUBCASE("a wrong token: 401, a warning that names PERFGATE_GITLAB_TOKEN and CI_JOB_TOKEN")
    {
        env.set("PERFGATE_GITLAB_TOKEN", "wrong");
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(&waits), log);
        REQUIRE(res.warnings.size() == 2); // note and status
        CHECK(res.warnings[1].find("HTTP 401: 401 Unauthorized") != std::string::npos);
        CHECK(res.warnings[1].find("CI_JOB_TOKEN cannot write") != std::string::npos);
        CHECK(gl.statuses().empty());
    }
    SUBCASE("the environment missing: a warning naming the variables, no request")
    {
        env.unset("PERFGATE_GITLAB_TOKEN");
        env.unset("CI_API_V4_URL");
        env.unset("CI_SERVER_URL");
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(&waits), log);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("CI_API_V4_URL (or CI_SERVER_URL) not set") != std::string::npos);
        CHECK(gl.requests().empty());
    }
    SUBCASE("no token (a fork's merge request): a warning saying so, no request, even for perfgate gitlab")
    {
        env.unset("PERFGATE_GITLAB_TOKEN");
        auto o = test_options(&waits);
        o.require_environment = true;
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, o, log);
        REQUIRE(res.warnings.size() == 1);
        CHECK(res.warnings[0].find("PERFGATE_GITLAB_TOKEN not set (a merge request from a fork") != std::string::npos);
        CHECK(gl.requests().empty());
        CHECK(log.str().find("section_start:") != std::string::npos); // the job log still has the report
    }
    SUBCASE("CI_SERVER_URL alone is enough: the API is under /api/v4")
    {
        env.unset("CI_API_V4_URL");
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(&waits), log);
        CHECK(res.warnings.empty());
        CHECK(gl.statuses().size() == 1);
    }
}

TEST_CASE("gitlab: a note POST whose answer is lost is looked for, not posted twice")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    auto o = test_options();
    o.retry.timeout = std::chrono::milliseconds(500);
    fault lost{"POST", "/notes", 200, {}, {}, 1};
    lost.delay = std::chrono::milliseconds(1500);
    lost.takes_effect = true;
    gl.add_fault(lost);
    const auto res = publish_to_gitlab(report_with(gate::verdict::fail), exit_regression, o, log);
    CHECK(res.warnings.empty());
    CHECK(gl.notes(mr).size() == 1);
    CHECK(res.note_id == gl.notes(mr)[0].id);
    CHECK(log.str().find("the lost POST had landed") != std::string::npos);
}

TEST_CASE("gitlab: user text cannot mention, reference or link in the note")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    const std::string hostile = "BM @all !12 #3 ~bug ~\"P 1\" %v1 $4 &5 https://evil.example";
    publish_to_gitlab(report_with(gate::verdict::fail, hostile), exit_regression, test_options(), log);
    REQUIRE(gl.notes(mr).size() == 1);
    const std::string body = gl.notes(mr)[0].body;
    const std::string zwsp = "\xe2\x80\x8b";
    for (const std::string ref : {"@all", "!12", "#3", "~bug", "~\"P", "%v1", "$4", "&amp;5", "https://evil"}) {
        CAPTURE(ref);
        CHECK(body.find(ref) == std::string::npos);
    }
    for (const std::string& broken :
         {"@" + zwsp + "all", "!" + zwsp + "12", "#" + zwsp + "3", "~" + zwsp + "bug", "%" + zwsp + "v1",
          "$" + zwsp + "4", "&amp;" + zwsp + "5", "https:" + zwsp + "//evil"}) {
        CAPTURE(broken);
        CHECK(body.find(broken) != std::string::npos);
    }
}

TEST_CASE("gitlab: a self-managed instance over HTTPS with its own CA (CI_SERVER_TLS_CA_FILE)")
{
    perfgate::test::test_cert cert("IP:127.0.0.1");
    fake_gitlab gl("42", "glpat-faketoken", bot_id, bot,
                   perfgate::test::tls_files{cert.cert.string(), cert.key.string()});
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    std::ostringstream log;
    env.unset("SSL_CERT_FILE");
    env.unset("CURL_CA_BUNDLE");
    SUBCASE("without the CA the handshake fails: a warning, nothing posted")
    {
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(), log);
        REQUIRE_FALSE(res.warnings.empty());
        CHECK(res.warnings.back().find("TLS") != std::string::npos);
        CHECK(gl.statuses().empty());
    }
    SUBCASE("with CI_SERVER_TLS_CA_FILE it verifies and posts")
    {
        env.set("CI_SERVER_TLS_CA_FILE", cert.cert.string());
        const auto res = publish_to_gitlab(report_with(gate::verdict::pass), exit_pass, test_options(), log);
        CHECK(res.warnings.empty());
        CHECK(gl.statuses().size() == 1);
        CHECK(gl.notes(mr).size() == 1);
    }
}

TEST_CASE("gitlab: perfgate run's baseline in GitLab CI is the MR's merge base, or the commit before a push")
{
    std::map<std::string, std::string> vars = {{"GITLAB_CI", "true"},
                                               {"CI_PIPELINE_SOURCE", "merge_request_event"},
                                               {"CI_COMMIT_SHA", head_sha},
                                               {"CI_MERGE_REQUEST_IID", "7"},
                                               {"CI_MERGE_REQUEST_DIFF_BASE_SHA", base_sha},
                                               {"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "feature"},
                                               {"CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main"},
                                               {"CI_COMMIT_BEFORE_SHA", std::string(40, '0')},
                                               {"CI_COMMIT_REF_NAME", "feature"}};
    auto lookup = [&vars](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end() || it->second.empty()) return std::nullopt;
        return it->second;
    };
    perfgate::test::temp_dir dir("perfgate-gl-git");
    SUBCASE("merge request")
    {
        const auto g = runner::resolve_git_info({}, lookup, dir.path());
        CHECK(g.source == "gitlab");
        CHECK(g.sha == head_sha);
        CHECK(g.branch == "feature");
        CHECK(g.pr == 7);
        CHECK(g.base_sha == base_sha);
        CHECK(g.pr_base_sha == base_sha);
        CHECK(g.base_branch == "main");
        CHECK(runner::mainline_side_of(g, std::nullopt) == runner::mainline_side::none);
    }
    SUBCASE("merged results: the head is the source branch's sha")
    {
        vars["CI_COMMIT_SHA"] = "dddd3333dddd3333dddd3333dddd3333dddd3333";
        vars["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"] = head_sha;
        CHECK(runner::resolve_git_info({}, lookup, dir.path()).sha == head_sha);
    }
    SUBCASE("push: the commit before, and the candidate feeds the branch's series")
    {
        for (const char* name : {"CI_MERGE_REQUEST_IID", "CI_MERGE_REQUEST_DIFF_BASE_SHA",
                                 "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"})
            vars.erase(name);
        vars["CI_PIPELINE_SOURCE"] = "push";
        vars["CI_COMMIT_BRANCH"] = "main";
        vars["CI_COMMIT_BEFORE_SHA"] = before_sha;
        const auto g = runner::resolve_git_info({}, lookup, dir.path());
        CHECK_FALSE(g.pr);
        CHECK(g.branch == "main");
        CHECK(g.base_sha == before_sha);
        CHECK(runner::mainline_side_of(g, std::nullopt) == runner::mainline_side::candidate);
        SUBCASE("a new branch's all-zero CI_COMMIT_BEFORE_SHA is no baseline")
        {
            vars["CI_COMMIT_BEFORE_SHA"] = std::string(40, '0');
            CHECK(runner::resolve_git_info({}, lookup, dir.path()).base_sha.empty());
        }
    }
    SUBCASE("without GITLAB_CI=true the CI_* variables are not read")
    {
        vars["GITLAB_CI"] = "";
        CHECK(runner::resolve_git_info({}, lookup, dir.path()).source != "gitlab");
    }
}

namespace {

constexpr const char* accepted_head = "aaaa0000aaaa0000aaaa0000aaaa0000aaaa0000";
constexpr const char* base_commit = "cccc2222cccc2222cccc2222cccc2222cccc2222";

// A real perfgate server with one failing comparison per gated head.
struct gate_server {
    perfgate::test::test_database where;
    fs::path db = where.location();
    perfgate::test::temp_dir dir{"perfgate-gl-accept"};
    std::string token = perfgate::test::create_token(db, "demo");
    perfgate::test::server_process server{db, dir.path() / "server.log", {"--public-read"}};

    std::int64_t upload(const std::string& sha, const std::string& role, const std::string& session, int slower) const
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
    std::int64_t gate(const std::string& head) const
    {
        const std::string session = "gate-" + head.substr(0, 12);
        const json body = {{"baseline_run", upload(base_commit, "baseline", session, 1)},
                           {"candidate_run", upload(head, "candidate", session, 3)}};
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
};

// The report gate on the MR head: failed status and the sticky note.
void gate_mr(ci_env& env, const char* head)
{
    env.set("CI_COMMIT_SHA", head);
    std::ostringstream log;
    const auto res = publish_to_gitlab(report_with(gate::verdict::fail), exit_regression, test_options(), log);
    REQUIRE(res.warnings.empty());
}

perfgate::gitlab::accept_options accept_opts(const std::string& note_id)
{
    perfgate::gitlab::accept_options o;
    o.note_id = note_id;
    o.retry = test_options().retry;
    return o;
}

std::string sticky(const fake_gitlab& gl)
{
    for (const auto& n : gl.notes(mr))
        if (n.author == bot && n.body.find(note_marker("perfgate")) != std::string::npos) return n.body;
    return {};
}

} // namespace

TEST_CASE(
    "accept --gitlab: a Developer or Maintainer flips the status, a Guest or Reporter gets a reply, nothing changes")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, accepted_head);
    ci_env env(gl);
    gate_mr(env, accepted_head);
    REQUIRE(gl.statuses().size() == 1);
    const std::string report_note = sticky(gl);
    REQUIRE_FALSE(report_note.empty());
    std::ostringstream log;

    SUBCASE("Developer (30) and Maintainer (40) may accept")
    {
        for (const int level : {30, 40}) {
            CAPTURE(level);
            gl.set_member(31, "jane.doe", level);
            const auto note = gl.add_note(mr, 31, "jane.doe", "/perfgate accept the bounds check costs 4% @all !3");
            gl.clear_requests();
            const auto res = accept_regression(accept_opts(std::to_string(note)), log);
            CHECK(res.outcome == accept_outcome::accepted);
            CHECK(res.access_level == level);
            CHECK(res.head_sha == accepted_head);
            // Read from GitLab: the note, the member (inherited too), the MR.
            const auto gets = with_method(gl, "GET");
            CHECK(std::any_of(gets.begin(), gets.end(), [&](const auto& r) {
                return r.path == fmt::format("/api/v4/projects/42/merge_requests/7/notes/{}", note);
            }));
            CHECK(std::any_of(gets.begin(), gets.end(),
                              [](const auto& r) { return r.path == "/api/v4/projects/42/members/all/31"; }));
            CHECK(std::any_of(gets.begin(), gets.end(),
                              [](const auto& r) { return r.path == "/api/v4/projects/42/merge_requests/7"; }));
            const json status = json::parse(gl.statuses().back().second);
            CHECK(gl.statuses().back().first == accepted_head);
            CHECK(status.at("state") == "success");
            CHECK(status.at("name") == "perfgate");
            CHECK(status.at("description") == "accepted by @jane.doe: the bounds check costs 4% @all !3");
            // The sticky note: the report stays, the acceptance is noted, neutralised.
            const std::string body = sticky(gl);
            CHECK(body.find(report::acceptance_note_begin) != std::string::npos);
            CHECK(body.find("jane.doe") != std::string::npos);
            CHECK(body.find("@all") == std::string::npos);
            CHECK(body.find("!3") == std::string::npos);
            CHECK(body.find(report_note.substr(report_note.find('\n') + 1)) != std::string::npos);
            const auto notes = gl.notes(mr);
            CHECK(std::count_if(notes.begin(), notes.end(), [](const auto& n) { return n.author == bot; }) == 1);
        }
    }
    SUBCASE("Guest (10), Reporter (20) and a non-member: a reply note, status and sticky note unchanged")
    {
        gl.set_member(41, "guest", 10);
        gl.set_member(42, "reporter", 20);
        for (const auto& [id, name] :
             std::vector<std::pair<std::int64_t, std::string>>{{41, "guest"}, {42, "reporter"}, {43, "stranger"}}) {
            const std::string login = name; // clang 14's CAPTURE cannot capture a structured binding
            CAPTURE(login);
            const auto note = gl.add_note(mr, id, name, "/perfgate accept trust me");
            const auto statuses = gl.statuses().size();
            const auto res = accept_regression(accept_opts(std::to_string(note)), log);
            CHECK(res.outcome == accept_outcome::denied);
            CHECK(res.reply_posted);
            CHECK_FALSE(res.status_posted);
            CHECK(gl.statuses().size() == statuses);
            CHECK(sticky(gl) == report_note);
            const auto reply = gl.notes(mr).back();
            CHECK(reply.author == bot);
            CHECK(reply.body.starts_with("@" + name + " perfgate did not accept"));
            CHECK(reply.body.find("Developer role or higher") != std::string::npos);
        }
        // perfgate accept --gitlab exits 2 (accept.denied) for them.
        const auto note = gl.add_note(mr, 42, "reporter", "/perfgate accept please");
        env.set("PERFGATE_NOTE_ID", std::to_string(note));
        try {
            cli::cmd_accept({"--gitlab"});
            FAIL("expected accept.denied");
        } catch (const error& e) {
            CHECK(e.id() == errors::accept_denied.view());
        }
    }
    SUBCASE("--min-access-level 40: a Developer is refused")
    {
        gl.set_member(31, "dev", 30);
        const auto note = gl.add_note(mr, 31, "dev", "/perfgate accept ok");
        auto o = accept_opts(std::to_string(note));
        o.min_access_level = maintainer_access;
        CHECK(accept_regression(o, log).outcome == accept_outcome::denied);
    }
    SUBCASE("a note that is not a request, or a system note, is ignored: one GET, nothing else")
    {
        gl.set_member(31, "dev", 40);
        for (const auto& [text, system] :
             std::vector<std::pair<std::string, bool>>{{"looks fine", false},
                                                       {"> /perfgate accept quoted", false},
                                                       {"/perfgate acceptable", false},
                                                       {"/perfgate accept by the system", true}}) {
            const std::string note_text = text; // clang 14's CAPTURE cannot capture a structured binding
            CAPTURE(note_text);
            const auto note = gl.add_note(mr, 31, "dev", text, system);
            gl.clear_requests();
            CHECK(accept_regression(accept_opts(std::to_string(note)), log).outcome == accept_outcome::ignored);
            CHECK(gl.requests().size() == 1);
        }
    }
    SUBCASE("hostile note ids, iids and project ids send zero requests")
    {
        for (const std::string id : {"../1", "1?x", "-5", "0", "12a", "99999999999999999999"}) {
            CAPTURE(id);
            gl.clear_requests();
            try {
                accept_regression(accept_opts(id), log);
                FAIL("expected input.gitlab_env");
            } catch (const error& e) {
                CHECK(e.id() == errors::input_gitlab_env.view());
            }
            auto o = accept_opts("5000");
            o.mr_iid = id;
            CHECK_THROWS(accept_regression(o, log));
            CHECK(gl.requests().empty());
        }
        env.set("CI_PROJECT_ID", "42/../1");
        CHECK_THROWS(accept_regression(accept_opts("5000"), log));
        CHECK(gl.requests().empty());
    }
}

TEST_CASE("accept --gitlab --server: the acceptance is stored with the head's comparison")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, accepted_head);
    ci_env env(gl);
    gate_server srv;
    const auto first = srv.gate(accepted_head);
    gate_mr(env, accepted_head);
    gl.set_member(31, "jane.doe", 30);
    const auto note = gl.add_note(mr, 31, "jane.doe", "/perfgate accept intended: bounds check");
    CHECK(cli::cmd_accept({"--gitlab", "--note-id", std::to_string(note), "--server", srv.server.url(), "--project",
                           "demo", "--token", srv.token}) == exit_pass);
    const json stored = srv.comparison(first).at("acceptance");
    CHECK(stored.at("login") == "jane.doe");
    CHECK(stored.at("reason") == "intended: bounds check");
    CHECK(stored.at("head_sha") == accepted_head);
    const json status = json::parse(gl.statuses().back().second);
    CHECK(status.at("state") == "success");
    CHECK(status.at("target_url") == srv.server.url() + "/p/demo/comparisons/" + std::to_string(first));

    SUBCASE("GitHub's options are refused with --gitlab, GitLab's without it")
    {
        CHECK_THROWS(cli::cmd_accept({"--gitlab", "--event", "x.json", "--note-id", "1"}));
        CHECK_THROWS(cli::cmd_accept({"--note-id", "1"}));
        CHECK_THROWS(cli::cmd_accept({"--gitlab", "--note-id", "1", "--min-access-level", "20"}));
    }
}

TEST_CASE("perfgate gitlab: the CLI posts a report file and exits with its verdict")
{
    fake_gitlab gl;
    gl.add_merge_request(mr, head_sha);
    ci_env env(gl);
    perfgate::test::temp_dir dir("perfgate-gl-cli");
    const fs::path report_file = dir.path() / "report.json";
    // With the testbed's qualification (perfgate run --server puts it in
    // the report JSON): the note's head carries its line and the advice.
    gate::report r = report_with(gate::verdict::fail);
    perfgate::model::qualification q;
    q.testbed_fingerprint = "5e1f0a9c2b7d4e31";
    q.benchmark = "default";
    q.qualified_at = 1795856400; // 2026-11-28T09:00:00Z
    q.counters = {{"task-clock", 2, 10, 20, false, false}};
    report::attach_qualifications(r, q.testbed_fingerprint, {q});
    REQUIRE(r.advice.size() == 1);
    std::ofstream(report_file) << report::to_json(r).dump();
    const auto res = perfgate::test::run_perfgate({"gitlab", "--report", report_file.string()}, {},
                                                  {{"GITLAB_CI", "true"},
                                                   {"CI_API_V4_URL", gl.api_url()},
                                                   {"CI_PROJECT_ID", "42"},
                                                   {"CI_MERGE_REQUEST_IID", "7"},
                                                   {"CI_COMMIT_SHA", head_sha},
                                                   {"PERFGATE_GITLAB_TOKEN", "glpat-faketoken"}},
                                                  std::chrono::seconds(60));
    CHECK(res.code == exit_regression);
    REQUIRE(gl.notes(mr).size() == 1);
    CHECK(gl.notes(mr)[0].body.find("Qualification: this testbed detects \u2265 10% of task-clock \\(qualified "
                                    "2026-11-28\\)\n") != std::string::npos);
    CHECK(gl.notes(mr)[0].body.find("**What this testbed can see**") != std::string::npos);
    CHECK(gl.statuses().size() == 1);
    SUBCASE("a hostile CI_COMMIT_SHA: exit 2, input.gitlab_env, nothing sent")
    {
        gl.clear_requests();
        const auto bad = perfgate::test::run_perfgate({"gitlab", "--report", report_file.string()}, {},
                                                      {{"CI_API_V4_URL", gl.api_url()},
                                                       {"CI_PROJECT_ID", "42"},
                                                       {"CI_COMMIT_SHA", "../../users"},
                                                       {"PERFGATE_GITLAB_TOKEN", "glpat-faketoken"}},
                                                      std::chrono::seconds(60));
        CHECK(bad.code == exit_usage);
        CHECK(bad.err.find("input.gitlab_env") != std::string::npos);
        CHECK(gl.requests().empty());
    }
}

TEST_CASE("the CI template's merge request pipeline, replayed: real perfgate, real git, the fake GitLab")
{
    fake_gitlab gl;
    perfgate::test::temp_dir dir("perfgate-gl-replay");
    const fs::path repo = dir.path() / "project";
    fs::create_directories(repo);
    const auto q = [](const fs::path& p) { return perfgate::test::shell_quoted(p); };
    // Two commits: the merge base and the MR head, each with its "benchmark".
    const std::string git = "git -C " + q(repo) + " -c user.name=t -c user.email=t@example.com ";
    perfgate::test::shell_output(git + "init -q -b main");
    std::ofstream(repo / "bench.sh") << "#!/bin/sh\nexit 0\n";
    perfgate::test::shell_output(git + "add bench.sh && " + git + "commit -q -m base");
    const std::string base = perfgate::test::shell_output(git + "rev-parse HEAD");
    std::ofstream(repo / "bench.sh") << "#!/bin/sh\n: head\nexit 0\n";
    perfgate::test::shell_output(git + "commit -q -am head");
    const std::string head = perfgate::test::shell_output(git + "rev-parse HEAD");
    gl.add_merge_request(mr, head);

    // The job as GitLab runs it: the template's variables (the project's
    // overrides win), the predefined ones, then the script items in one
    // shell with `set -eo pipefail`.
    const fs::path job = dir.path() / "job.sh";
    const std::string extract = R"PY(
import shlex, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
overrides = dict(a.split("=", 1) for a in sys.argv[3:])
variables = dict(doc.get("variables", {}))
variables.update(doc["perfgate"].get("variables", {}))
variables.update(overrides)
with open(sys.argv[2], "w") as out:
    out.write("set -eo pipefail\n")
    for k, v in variables.items():
        out.write(f"export {k}={shlex.quote(v)}\n")
    out.write("\n".join(doc["perfgate"]["script"]) + "\n")
)PY";
    std::ofstream(dir.path() / "extract.py") << extract;
    const auto write_job = [&](const std::string& install) {
        perfgate::test::shell_output(
            "python3 " + q(dir.path() / "extract.py") + " " +
            q(fs::path(PERFGATE_SOURCE_DIR) / "ci" / "gitlab" / "perfgate.gitlab-ci.yml") + " " + q(job) + " " +
            install + " 'PERFGATE_BUILD=mkdir -p build && cp bench.sh build/bench && chmod +x build/bench'" +
            " PERFGATE_BENCH=build/bench 'PERFGATE_RUN_ARGS=--backend rusage --repetitions 5 --warmup 0 --quiet'");
    };
    write_job("PERFGATE_BIN=" + perfgate::test::perfgate_exe);
    const std::string vars = fmt::format(
        "GITLAB_CI=true CI_API_V4_URL={} CI_SERVER_URL={} CI_PROJECT_ID=42 CI_PROJECT_DIR={} CI_JOB_ID=1 "
        "CI_MERGE_REQUEST_IID=7 CI_MERGE_REQUEST_DIFF_BASE_SHA={} CI_COMMIT_SHA={} "
        "CI_COMMIT_BEFORE_SHA=0000000000000000000000000000000000000000 CI_PIPELINE_SOURCE=merge_request_event "
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=feature CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main "
        "CI_JOB_URL={}/group/widgets/-/jobs/1 PERFGATE_GITLAB_TOKEN=glpat-faketoken GITHUB_ACTIONS= NO_COLOR=1",
        gl.api_url(), gl.url(), q(repo), base, head, gl.url());
    const std::string cmd = "cd " + q(repo) + " && env " + vars + " timeout 120 bash " + q(job) + " > " +
                            q(dir.path() / "job.log") + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream log_in(dir.path() / "job.log");
    const std::string job_log((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
    CAPTURE(job_log);
    REQUIRE(WIFEXITED(rc));
    // The gate's own exit code: a verdict (0 pass, 1 fail, 3 inconclusive), never an error.
    CHECK((WEXITSTATUS(rc) == 0 || WEXITSTATUS(rc) == 1 || WEXITSTATUS(rc) == 3));
    // One note on the MR, one status on its head, the JUnit report for the widget.
    REQUIRE(gl.notes(mr).size() == 1);
    CHECK(gl.notes(mr)[0].body.starts_with(note_marker("perfgate")));
    REQUIRE(gl.statuses().size() == 1);
    CHECK(gl.statuses()[0].first == head);
    std::ifstream junit_in(repo / "perfgate-junit.xml");
    const std::string junit((std::istreambuf_iterator<char>(junit_in)), std::istreambuf_iterator<char>());
    CHECK(junit.find("<testsuites") != std::string::npos);
    CHECK(fs::exists(repo / "perfgate-report.json"));
    CHECK(job_log.find("section_start:") != std::string::npos);

    SUBCASE("the release tarball from PERFGATE_RELEASE_URL, checked against its .sha256; a mismatch is refused")
    {
        // A release as ci/release.sh lays it out, its perfgate a link to the build's.
        const fs::path rel = dir.path() / "release";
        const std::string name = "perfgate-9.9.9-linux-" + perfgate::test::shell_output("uname -m");
        fs::create_directories(rel / name / "bin");
        fs::create_symlink(perfgate::test::perfgate_exe, rel / name / "bin" / "perfgate");
        perfgate::test::shell_output("cd " + q(rel) + " && tar -czf " + name + ".tar.gz " + name + " && sha256sum " +
                                     name + ".tar.gz > " + name + ".tar.gz.sha256");
        write_job("PERFGATE_VERSION=9.9.9 PERFGATE_RELEASE_URL=file://" + rel.string());
        const auto rerun = [&] {
            fs::remove_all(repo / ".perfgate-base");
            fs::remove_all(repo / ".perfgate-release");
            perfgate::test::shell_output(git + "worktree prune");
            gl.clear_requests();
            return std::system(cmd.c_str());
        };
        const int tar_rc = rerun();
        REQUIRE(WIFEXITED(tar_rc));
        CHECK(WEXITSTATUS(tar_rc) == WEXITSTATUS(rc));
        CHECK(gl.notes(mr).size() == 1);
        CHECK(gl.statuses().size() == 2);

        std::ofstream(rel / (name + ".tar.gz.sha256")) << std::string(64, 'a') << "  " << name << ".tar.gz\n";
        const int bad_rc = rerun();
        REQUIRE(WIFEXITED(bad_rc));
        CHECK(WEXITSTATUS(bad_rc) == 1);
        CHECK(gl.requests().empty());
        std::ifstream bad_in(dir.path() / "job.log");
        const std::string bad_log((std::istreambuf_iterator<char>(bad_in)), std::istreambuf_iterator<char>());
        CHECK(bad_log.find("does not match its .sha256: refusing it") != std::string::npos);
    }
    SUBCASE("a fork's merge request (no token): the same gate, nothing posted, the JUnit report written")
    {
        fs::remove(repo / "perfgate-junit.xml");
        fs::remove_all(repo / ".perfgate-base");
        perfgate::test::shell_output(git + "worktree prune");
        gl.clear_requests();
        std::string fork_cmd = cmd;
        fork_cmd.replace(fork_cmd.find("PERFGATE_GITLAB_TOKEN=glpat-faketoken"),
                         std::string("PERFGATE_GITLAB_TOKEN=glpat-faketoken").size(), "PERFGATE_GITLAB_TOKEN=");
        const int fork_rc = std::system(fork_cmd.c_str());
        REQUIRE(WIFEXITED(fork_rc));
        CHECK(WEXITSTATUS(fork_rc) == WEXITSTATUS(rc));
        CHECK(gl.requests().empty());
        CHECK(fs::exists(repo / "perfgate-junit.xml"));
    }
}
