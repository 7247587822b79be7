// The store's history: the series queries and their plans, change points
// and alerts, recent comparisons, the listing queries.
#include "store/alerts.hpp"
#include "store/comparisons.hpp"
#include "store/history.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

TEST_CASE("store: history filters, order and limit")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    // 10 main-branch baselines on runner-1, one per day; PR candidates and a
    // second testbed interleaved.
    std::vector<std::int64_t> main_ids;
    for (int day = 0; day < 10; ++day) {
        auto r = make_run("demo", "default", 1'700'000'000 + day * 86'400);
        r.counters[0] = counter("task-clock", "msec", {100.0 + day, 101.0 + day});
        main_ids.push_back(db.runs().insert(r));

        auto pr = make_run("demo", "default", 1'700'000'000 + day * 86'400 + 10, "feature", "candidate");
        pr.counters[0] = counter("task-clock", "msec", {500.0 + day});
        db.runs().insert(pr);

        auto other = make_run("demo", "default", 1'700'000'000 + day * 86'400 + 20);
        other.testbed = {"ci-runner-2", "Intel Xeon", 4, "6.1.0-18-amd64", "fp-runner-2"};
        other.counters[0] = counter("task-clock", "msec", {900.0 + day});
        db.runs().insert(other);
    }
    auto median_of = [](const std::vector<ps::history_point>& h) {
        std::vector<double> m;
        for (const auto& p : h) m.push_back(p.median);
        return m;
    };

    SUBCASE("branch + testbed (name or fingerprint): oldest first, the most recent `limit`")
    {
        auto q = query("demo", "default", "task-clock");
        q.branch = "main";
        q.testbed = "ci-runner-1";
        q.limit = 3;
        const auto h = db.history().points(q);
        CHECK(median_of(h) == std::vector<double>{107.5, 108.5, 109.5});
        CHECK(h.back().run_id == main_ids.back());
        CHECK(h.back().branch == "main");
        CHECK(h.back().git_sha == "0123456789abcdef0123456789abcdef01234567");
        CHECK(h.back().created_at == 1'700'000'000 + 9 * 86'400);
        CHECK(h.back().n == 2);
        CHECK(h.back().min == 109.0);
        CHECK(h.back().max == 110.0);
        for (const auto& p : h) {
            CHECK(p.testbed == "fp-runner-1");
            CHECK(p.testbed_name == "ci-runner-1");
        }
        q.testbed = "fp-runner-1";
        CHECK(median_of(db.history().points(q)) == std::vector<double>{107.5, 108.5, 109.5});
        q.testbed = "no-such-runner";
        CHECK(db.history().points(q).empty());
    }
    SUBCASE("branch only")
    {
        auto q = query("demo", "default", "task-clock");
        q.branch = "feature";
        const auto h = db.history().points(q);
        REQUIRE(h.size() == 10);
        CHECK(h.front().median == 500.0);
        CHECK(h.back().median == 509.0);
    }
    SUBCASE("testbed only")
    {
        auto q = query("demo", "default", "task-clock");
        q.testbed = "ci-runner-2";
        q.limit = 2;
        CHECK(median_of(db.history().points(q)) == std::vector<double>{908.0, 909.0});
    }
    SUBCASE("no filter: every run, by time")
    {
        const auto h = db.history().points(query("demo", "default", "task-clock"));
        REQUIRE(h.size() == 30);
        for (std::size_t i = 1; i < h.size(); ++i) CHECK(h[i - 1].created_at < h[i].created_at);
        CHECK(h.back().median == 909.0);
        // Each point names its own testbed: runner-1's baseline, then the
        // candidate (also runner-1), then runner-2, every day.
        for (std::size_t i = 0; i < h.size(); ++i) {
            CAPTURE(i);
            const auto day = static_cast<double>(i / 3);
            const bool second = i % 3 == 2;
            CHECK(h[i].testbed == (second ? "fp-runner-2" : "fp-runner-1"));
            CHECK(h[i].testbed_name == (second ? "ci-runner-2" : "ci-runner-1"));
            const double lo[] = {100.0 + day, 500.0 + day, 900.0 + day};
            const double hi[] = {101.0 + day, 500.0 + day, 900.0 + day};
            CHECK(h[i].min == lo[i % 3]);
            CHECK(h[i].max == hi[i % 3]);
        }
    }
    SUBCASE("since, role and before_run")
    {
        auto q = query("demo", "default", "task-clock");
        q.since = 1'700'000'000 + 8 * 86'400; // inclusive
        CHECK(db.history().points(q).size() == 6);
        q.role = "candidate";
        CHECK(median_of(db.history().points(q)) == std::vector<double>{508.0, 509.0});
        q.role = "baseline";
        q.branch = "main";
        q.testbed = "ci-runner-1";
        q.since.reset();
        q.before_run = main_ids.back();
        q.limit = 2;
        CHECK(median_of(db.history().points(q)) == std::vector<double>{107.5, 108.5});
    }
    SUBCASE("several counters at once: each as history() gives it, unknown ones empty")
    {
        for (const char* branch : {"", "main"}) {
            for (const char* testbed : {"", "ci-runner-1", "fp-runner-2"}) {
                CAPTURE(branch);
                CAPTURE(testbed);
                auto q = query("demo", "default", "");
                if (*branch) q.branch = branch;
                if (*testbed) q.testbed = testbed;
                q.limit = 4;
                const auto all = db.history().points_per_counter(q, {"cycles", "task-clock", "no-such-counter",
                                                                     "task-clock"});
                REQUIRE(all.size() == 4);
                CHECK(all[0].empty()); // never had a value
                CHECK(all[2].empty());
                q.counter = "task-clock";
                const auto one = db.history().points(q);
                REQUIRE(all[1].size() == one.size());
                REQUIRE(all[3].size() == one.size());
                for (std::size_t i = 0; i < one.size(); ++i) {
                    CHECK(all[1][i].run_id == one[i].run_id);
                    CHECK(all[1][i].median == one[i].median);
                    CHECK(all[1][i].testbed_name == one[i].testbed_name);
                    CHECK(all[3][i].run_id == one[i].run_id);
                }
            }
        }
        CHECK(db.history().points_per_counter(query("nope", "default", ""), {"task-clock"}).front().empty());
        CHECK(db.history().points_per_counter(query("demo", "default", ""), {}).empty());
    }
    SUBCASE("unknown names and limit 0 give nothing")
    {
        CHECK(db.history().points(query("nope", "default", "task-clock")).empty());
        CHECK(db.history().points(query("demo", "nope", "task-clock")).empty());
        CHECK(db.history().points(query("demo", "default", "nope")).empty());
        auto q = query("demo", "default", "task-clock");
        q.limit = 0;
        CHECK(db.history().points(q).empty());
    }
}

TEST_CASE("store: histories with history_detail::medians are the full points' run ids and medians")
{
    test_database where;
    ps::store db(where.location());
    for (int i = 0; i < 6; ++i) {
        auto r = make_run("demo", "parse", 1'700'000'000 + i);
        r.counters.push_back(counter("page-faults", "", {100.0 + i, 101.0 + i, 102.0 + i}));
        if (i == 3) r.testbed = {"ci-runner-2", "cpu", 4, "6.1", "fp-runner-2"};
        db.runs().insert(r);
    }
    db.runs().insert(make_run("demo", "parse", 1'700'000'100, "feature", "candidate"));
    const std::vector<std::string> counters{"page-faults", "no-such-counter", "task-clock"};
    for (const auto& filter : std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>>{
             {std::nullopt, std::nullopt},
             {"main", std::nullopt},
             {"main", "fp-runner-1"},
             {std::nullopt, "ci-runner-2"}}) {
        const auto& branch = filter.first;
        const auto& testbed = filter.second;
        auto q = query("demo", "parse", "");
        q.branch = branch;
        q.testbed = testbed;
        q.role = "baseline";
        q.limit = 4;
        CAPTURE(branch.value_or("-"));
        CAPTURE(testbed.value_or("-"));
        const auto full = db.history().points_per_counter(q, counters);
        const auto lean = db.history().points_per_counter(q, counters, ps::history_detail::medians);
        REQUIRE(full.size() == 3);
        REQUIRE(lean.size() == 3);
        CHECK(full[1].empty());
        CHECK(lean[1].empty());
        CHECK_FALSE(full[0].empty());
        for (std::size_t k = 0; k < 3; ++k) {
            REQUIRE(lean[k].size() == full[k].size());
            for (std::size_t i = 0; i < full[k].size(); ++i) {
                CHECK(lean[k][i].run_id == full[k][i].run_id);
                CHECK(lean[k][i].median == full[k][i].median);
                CHECK(lean[k][i].git_sha.empty()); // not read
                CHECK(lean[k][i].testbed.empty());
                CHECK_FALSE(full[k][i].git_sha.empty());
            }
        }
    }
}

TEST_CASE("store (sqlite): the history query is an index range scan")
{
    scratch_dir dir;
    const auto path = dir / "plan.db";
    {
        ps::store db(path);
        db.runs().insert(make_run());
    }
    raw_db raw(path);
    raw.rows("ANALYZE"); // the plan must not depend on missing statistics either
    using perfgate::store::detail::history_index;
    const std::pair<history_index, const char*> variants[] = {
        {history_index::all, "USING COVERING INDEX summaries_history ("},
        {history_index::branch, "USING COVERING INDEX summaries_history_branch ("},
        {history_index::testbed, "USING COVERING INDEX summaries_history_testbed ("},
    };
    for (const auto& variant : variants)
        for (const bool medians : {false, true}) {
            const history_index which = variant.first;
            const char* expected = variant.second;
            CAPTURE(expected);
            CAPTURE(medians);
            const auto plan = raw.rows("EXPLAIN QUERY PLAN " +
                                       std::string(perfgate::store::detail::history_sql(
                                           which, perfgate::store::detail::engine::sqlite, medians)));
            std::string all;
            for (const auto& row : plan) all += row + "\n";
            CAPTURE(all);
            CHECK(all.find(std::string("SEARCH summaries ") + expected) != std::string::npos);
            CHECK(all.find("SCAN summaries") == std::string::npos);
            CHECK(all.find("SCAN samples") == std::string::npos);
            CHECK(all.find("TEMP B-TREE") == std::string::npos);  // no sort: the index gives the order
            CHECK(all.find("created_at>?") != std::string::npos); // since bounds the range
        }
}

namespace {

// A change point at `run` whose numbers say "up by delta_pct".
ps::detected_change change_at(std::int64_t run, double delta_pct, bool worse = true)
{
    ps::detected_change d;
    d.record.run_id = run;
    d.record.p_value = 1e-6;
    d.record.mean_before = 100;
    d.record.mean_after = 100 + delta_pct;
    d.record.median_before = 100;
    d.record.median_after = 100 + delta_pct;
    d.record.delta_pct = delta_pct;
    d.record.shift = delta_pct;
    d.record.shift_lower = delta_pct - 1;
    d.record.shift_upper = delta_pct + 1;
    d.worse = worse;
    return d;
}

} // namespace

TEST_CASE("store: change points and alerts follow a series's detections")
{
    test_database where;
    ps::store db(where.location());
    std::vector<std::int64_t> runs;
    for (int i = 0; i < 10; ++i) runs.push_back(db.runs().insert(make_run("demo", "parse", 1'700'000'000 + i)));
    const perfgate::model::series_key series{"parse", "task-clock", "fp-runner-1", "main"};
    auto detection = [&](std::size_t first, std::vector<ps::detected_change> found) {
        ps::series_detection d;
        d.series = series;
        d.tail.assign(runs.begin() + static_cast<std::ptrdiff_t>(first), runs.end());
        d.found = std::move(found);
        return std::vector<ps::series_detection>{d};
    };

    const auto opened = db.alerts().apply_detection("demo", detection(0, {change_at(runs[5], 5.0)}));
    REQUIRE(opened.size() == 1);
    auto alerts = db.alerts().list({"demo", {}, {}, {}, {}, 100});
    REQUIRE(alerts.size() == 1);
    CHECK(alerts[0].id == opened[0]);
    CHECK(alerts[0].change.run_id == runs[5]);
    CHECK(alerts[0].status == perfgate::model::alert_status::untriaged);
    CHECK(alerts[0].change.series.counter == "task-clock");
    CHECK(alerts[0].change.delta_pct == doctest::Approx(5.0));
    REQUIRE(db.alerts().change_points("demo", series).size() == 1);

    SUBCASE("a change point that moves by up to two points is the same alert, triage kept")
    {
        REQUIRE(db.alerts().update("demo", opened[0], {perfgate::model::alert_status::acknowledged, "looking", "ana"}));
        CHECK(db.alerts().apply_detection("demo", detection(0, {change_at(runs[7], 6.0)})).empty());
        alerts = db.alerts().list({"demo", {}, {}, {}, {}, 100});
        REQUIRE(alerts.size() == 1);
        CHECK(alerts[0].change.run_id == runs[7]);
        CHECK(alerts[0].change.delta_pct == doctest::Approx(6.0));
        CHECK(alerts[0].status == perfgate::model::alert_status::acknowledged);
        CHECK(alerts[0].note == "looking");
        CHECK(alerts[0].changed_by == "ana");
        // The stored change points are the latest detection's.
        const auto points = db.alerts().change_points("demo", series);
        REQUIRE(points.size() == 1);
        CHECK(points[0].run_id == runs[7]);
    }
    SUBCASE("three points away is a new alert; the old one stays for triage")
    {
        const auto again = db.alerts().apply_detection("demo", detection(0, {change_at(runs[8], 5.0)}));
        REQUIRE(again.size() == 1);
        CHECK(again[0] != opened[0]);
        CHECK(db.alerts().list({"demo", {}, {}, {}, {}, 100}).size() == 2);
    }
    SUBCASE("an improvement is a change point without an alert")
    {
        CHECK(db.alerts().apply_detection("demo", detection(0, {change_at(runs[2], -5.0, false)})).empty());
        CHECK(db.alerts().list({"demo", {}, {}, {}, {}, 100}).size() == 1);
        CHECK(db.alerts().change_points("demo", series).front().run_id == runs[2]);
    }
    SUBCASE("change points before the tail stay as they were found")
    {
        CHECK(db.alerts().apply_detection("demo", detection(6, {})).empty());
        CHECK(db.alerts().change_points("demo", series).size() == 1);
        CHECK(db.alerts().apply_detection("demo", detection(4, {})).empty());
        CHECK(db.alerts().change_points("demo", series).empty());
        CHECK(db.alerts().list({"demo", {}, {}, {}, {}, 100}).size() == 1); // alerts are never dropped
    }
    SUBCASE("a change point outside its tail is refused and nothing changes")
    {
        CHECK_THROWS_WITH_AS(
            db.alerts().apply_detection("demo", detection(6, {change_at(runs[6], 5.0), change_at(runs[2], 5.0)})),
            doctest::Contains("is not in its series's tail"), perfgate::error);
        CHECK(db.alerts().change_points("demo", series).front().run_id == runs[5]);
        CHECK(db.alerts().list({"demo", {}, {}, {}, {}, 100}).size() == 1);
    }
    SUBCASE("filters, another project, triage")
    {
        using perfgate::model::alert_status;
        CHECK(db.alerts().list({"demo", alert_status::untriaged, {}, {}, {}, 100}).size() == 1);
        CHECK(db.alerts().list({"demo", alert_status::fixed, {}, {}, {}, 100}).empty());
        CHECK(db.alerts()
                  .list({"demo", {}, std::string("parse"), std::string("task-clock"), std::string("ci-runner-1"), 100})
                  .size() == 1);
        CHECK(db.alerts().list({"demo", {}, std::string("other"), {}, {}, 100}).empty());
        CHECK(db.alerts().list({"other", {}, {}, {}, {}, 100}).empty());
        CHECK_FALSE(db.alerts().load("other", opened[0]).has_value());
        CHECK_FALSE(db.alerts().update("other", opened[0], {alert_status::fixed, {}, "eve"}).has_value());
        CHECK(db.alerts().load("demo", opened[0])->status == alert_status::untriaged);
        const auto fixed = db.alerts().update("demo", opened[0], {alert_status::fixed, std::string("PR #12"), "ana"});
        REQUIRE(fixed);
        CHECK(fixed->status == alert_status::fixed);
        CHECK(fixed->note == "PR #12");
        CHECK(fixed->changed_at > 0);
        // No note given: the note stays.
        CHECK(db.alerts().update("demo", opened[0], {alert_status::wontfix, {}, "bob"})->note == "PR #12");
    }
    SUBCASE("open_alerts: a series group's untriaged and acknowledged alerts, every counter, the newest oldest first")
    {
        using perfgate::model::alert_status;
        // A second alert on another counter of the same benchmark, testbed and branch.
        auto cycles = detection(0, {change_at(runs[3], 8.0)});
        cycles[0].series.counter = "cycles";
        const auto second = db.alerts().apply_detection("demo", cycles);
        REQUIRE(second.size() == 1);
        auto open = db.alerts().open("demo", "parse", "fp-runner-1", "main", 100);
        REQUIRE(open.size() == 2);
        CHECK(open[0].id == opened[0]);
        CHECK(open[1].id == second[0]);
        CHECK(open[1].change.series.counter == "cycles");
        CHECK(open[1].change.delta_pct == doctest::Approx(8.0));
        // The limit keeps the newest.
        open = db.alerts().open("demo", "parse", "fp-runner-1", "main", 1);
        REQUIRE(open.size() == 1);
        CHECK(open[0].id == second[0]);
        CHECK(db.alerts().open("demo", "parse", "fp-runner-1", "main", 0).empty());
        // Acknowledged stays open; fixed, invalid and wontfix leave.
        REQUIRE(db.alerts().update("demo", opened[0], {alert_status::acknowledged, {}, "ana"}));
        CHECK(db.alerts().open("demo", "parse", "fp-runner-1", "main", 100).size() == 2);
        REQUIRE(db.alerts().update("demo", second[0], {alert_status::invalid, {}, "ana"}));
        open = db.alerts().open("demo", "parse", "fp-runner-1", "main", 100);
        REQUIRE(open.size() == 1);
        CHECK(open[0].status == alert_status::acknowledged);
        REQUIRE(db.alerts().update("demo", opened[0], {alert_status::fixed, {}, "ana"}));
        CHECK(db.alerts().open("demo", "parse", "fp-runner-1", "main", 100).empty());
        REQUIRE(db.alerts().update("demo", opened[0], {alert_status::untriaged, {}, "ana"})); // reopened
        CHECK(db.alerts().open("demo", "parse", "fp-runner-1", "main", 100).size() == 1);
        // Only that series group: the testbed by fingerprint (not its name), the branch, the benchmark, the project.
        CHECK(db.alerts().open("demo", "parse", "ci-runner-1", "main", 100).empty());
        CHECK(db.alerts().open("demo", "parse", "fp-runner-1", "feature", 100).empty());
        CHECK(db.alerts().open("demo", "other", "fp-runner-1", "main", 100).empty());
        CHECK(db.alerts().open("other", "parse", "fp-runner-1", "main", 100).empty());
    }
    SUBCASE("the baseline branch is a project setting")
    {
        CHECK(db.projects().baseline_branch("demo") == "main");
        db.projects().set_baseline_branch("demo", "trunk");
        CHECK(db.projects().baseline_branch("demo") == "trunk");
        CHECK_THROWS_WITH_AS(db.projects().set_baseline_branch("demo", ""), doctest::Contains("cannot be empty"),
                             perfgate::error);
        CHECK_THROWS_WITH_AS((void)db.projects().baseline_branch("nope"), doctest::Contains("project 'nope' not found"),
                             perfgate::error);
    }
}

TEST_CASE("store: recent comparisons, newest first, with the commits of their runs")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const auto base = db.runs().insert(commit_run(sha_a, "parse", "fp-1", 100));
    const auto cand = db.runs().insert(commit_run(sha_b, "parse", "fp-1", 200, "demo", "feature", "candidate"));
    const auto other_base = db.runs().insert(commit_run(sha_a, "parse", "fp-1", 100, "other"));
    const auto other_cand = db.runs().insert(commit_run(sha_b, "parse", "fp-1", 200, "other"));

    const auto first = db.comparisons().insert("demo", base, cand,
                                               R"({"verdict":"pass","benchmarks":[{"name":"parse"}]})");
    db.comparisons().insert("other", other_base, other_cand, R"({"verdict":"fail","benchmarks":[]})");
    const auto second = db.comparisons().insert("demo", cand, base, R"({"verdict":"fail","benchmarks":[{},{},{}]})",
                                                sha256_hex("second"));
    // Reports are stored verbatim: one that does not say has no verdict.
    const auto third = db.comparisons().insert("demo", base, cand, "not json");
    const auto fourth = db.comparisons().insert("demo", base, cand, R"({"verdict":"maybe","benchmarks":{}})");

    const auto all = db.comparisons().recent("demo", 10);
    REQUIRE(all.size() == 4);
    CHECK(all[0].id == fourth);
    CHECK(all[1].id == third);
    CHECK(all[2].id == second);
    CHECK(all[3].id == first);

    CHECK(all[3].verdict == "pass");
    CHECK(all[3].benchmarks == 1u);
    CHECK(all[3].created_at > 1'700'000'000);
    CHECK(all[3].baseline.run_id == base);
    CHECK(all[3].baseline.git_sha == sha_a);
    CHECK(all[3].baseline.branch == "main");
    CHECK(all[3].candidate.run_id == cand);
    CHECK(all[3].candidate.git_sha == sha_b);
    CHECK(all[3].candidate.branch == "feature");

    CHECK(all[2].verdict == "fail");
    CHECK(all[2].benchmarks == 3u);
    CHECK(all[2].baseline.git_sha == sha_b);
    CHECK(all[2].candidate.git_sha == sha_a);

    CHECK_FALSE(all[1].verdict.has_value());
    CHECK_FALSE(all[1].benchmarks.has_value());
    CHECK_FALSE(all[0].verdict.has_value());
    CHECK_FALSE(all[0].benchmarks.has_value());

    SUBCASE("limit keeps the newest")
    {
        const auto two = db.comparisons().recent("demo", 2);
        REQUIRE(two.size() == 2);
        CHECK(two[0].id == fourth);
        CHECK(two[1].id == third);
        CHECK(db.comparisons().recent("demo", 0).empty());
    }
    SUBCASE("each project sees its own")
    {
        const auto theirs = db.comparisons().recent("other", 10);
        REQUIRE(theirs.size() == 1);
        CHECK(theirs[0].verdict == "fail");
        CHECK(theirs[0].benchmarks == 0u);
        CHECK(theirs[0].baseline.run_id == other_base);
        CHECK(db.comparisons().recent("nope", 10).empty());
    }
    SUBCASE("a repeated keyed insert adds no row to the listing")
    {
        CHECK(db.comparisons().insert("demo", cand, base, R"({"verdict":"pass"})", sha256_hex("second")) == second);
        CHECK(db.comparisons().recent("demo", 10).size() == 4);
    }
    SUBCASE("the caller's facts are stored as given, and checked like the JSON's")
    {
        // service::service passes what it serialised the report from; the
        // store does not read the JSON then (it may be anything).
        const auto fifth = db.comparisons().insert("demo", base, cand, "{}", sha256_hex("fifth"),
                                                   ps::report_facts{"inconclusive", 2});
        const auto listed = db.comparisons().recent("demo", 1);
        REQUIRE(listed.size() == 1);
        CHECK(listed[0].id == fifth);
        CHECK(listed[0].verdict == "inconclusive");
        CHECK(listed[0].benchmarks == 2u);
        CHECK(db.comparisons().load("demo", fifth) == "{}");
        try {
            db.comparisons().insert("demo", base, cand, "{}", sha256_hex("sixth"), ps::report_facts{"maybe", 1});
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
        }
        CHECK(db.comparisons().recent("demo", 10).size() == 5); // the refused one stored nothing
    }
}

TEST_CASE("store (sqlite): the listing queries are index range scans")
{
    scratch_dir dir;
    const auto path = dir / "plan.db";
    {
        // A few benchmarks and testbeds: with one row each, ANALYZE's
        // statistics make a scan of that one row as cheap as a lookup.
        ps::store db(path);
        std::int64_t prev = 0;
        for (int i = 0; i < 12; ++i) {
            const auto id = db.runs().insert(commit_run(i % 2 ? sha_a : sha_b, "bench-" + std::to_string(i),
                                                        "fp-" + std::to_string(i), 100 + i));
            if (prev) db.comparisons().insert("demo", prev, id, R"({"verdict":"pass","benchmarks":[]})");
            prev = id;
        }
    }
    raw_db raw(path);
    const auto plan_of = [&](std::string_view sql) {
        std::string all;
        for (const auto& row : raw.rows("EXPLAIN QUERY PLAN " + std::string(sql))) all += row + "\n";
        return all;
    };
    // perfgate never runs ANALYZE; the plan must not depend on its statistics either.
    for (const bool analyzed : {false, true}) {
        CAPTURE(analyzed);
        if (analyzed) raw.rows("ANALYZE");
        {
            // A backward range of comparisons_recent, runs by id, no sort.
            const std::string plan = plan_of(perfgate::store::detail::recent_comparisons_sql.sqlite);
            CAPTURE(plan);
            CHECK(plan.find("SEARCH c USING COVERING INDEX comparisons_recent (project_id=?)") != std::string::npos);
            CHECK(plan.find("SEARCH b USING INTEGER PRIMARY KEY (rowid=?)") != std::string::npos);
            CHECK(plan.find("SEARCH h USING INTEGER PRIMARY KEY (rowid=?)") != std::string::npos);
            CHECK(plan.find("SCAN") == std::string::npos);
            CHECK(plan.find("TEMP B-TREE") == std::string::npos);
        }
        {
            // A compare's open alerts: the names by their unique keys, then
            // one backward range of the partial index alerts_open; no sort.
            const std::string plan = plan_of(perfgate::store::detail::open_alerts_sql.sqlite);
            CAPTURE(plan);
            CHECK(plan.find("SEARCH a USING INDEX alerts_open (benchmark_id=? AND testbed_id=? AND branch=?)") !=
                  std::string::npos);
            CHECK(plan.find("SCAN") == std::string::npos);
            CHECK(plan.find("TEMP B-TREE") == std::string::npos);
        }
        {
            // insert_comparison's run check: two lookups by id, never a walk
            // of the project's runs (it once took runs_project_sha's range
            // (project_id=?): every run of the project, on every compare).
            const std::string plan = plan_of(std::string(perfgate::store::detail::comparison_runs_sql));
            CAPTURE(plan);
            CHECK(plan.find("SEARCH runs USING INTEGER PRIMARY KEY (rowid=?)") != std::string::npos);
            CHECK(plan.find("runs_project_sha") == std::string::npos);
            CHECK(plan.find("SCAN") == std::string::npos);
        }
        {
            // A range of runs_project_sha, grouped in index order; the
            // groups' runs, benchmarks and testbeds by id.
            const std::string plan = plan_of(perfgate::store::detail::runs_by_sha_sql.sqlite);
            CAPTURE(plan);
            CHECK(plan.find("SEARCH runs USING COVERING INDEX runs_project_sha "
                            "(project_id=? AND git_sha>? AND git_sha<?)") != std::string::npos);
            for (const char* by_id :
                 {"SEARCH r USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH b USING INTEGER PRIMARY KEY (rowid=?)",
                  "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)"}) {
                CHECK(plan.find(by_id) != std::string::npos);
            }
            CHECK(plan.find("SCAN runs") == std::string::npos);
            CHECK(plan.find("SCAN b") == std::string::npos);
            CHECK(plan.find("SCAN t") == std::string::npos);
            CHECK(plan.find("TEMP B-TREE") == std::string::npos); // the index gives the grouping
        }
    }
}

namespace {

// A bisection's result as perfgate bisect stores it: two culprits, one with
// an effect without numbers (an unsupported counter) and one without any.
perfgate::model::alert_culprit culprit_fixture()
{
    perfgate::model::alert_culprit k;
    k.status = perfgate::model::culprit_status::found;
    k.backend = "callgrind";
    k.counter = "instructions";
    k.good_sha = std::string(40, 'a');
    k.bad_sha = std::string(40, 'b');
    k.commits = 64;
    k.steps = 6;
    k.builds = 8;
    k.detail = "skipped cccccccccccc: the build command failed";
    perfgate::model::culprit_commit first{std::string(40, 'c'),
                                          "parse: copy the buffer",
                                          "Ana <ana@example.com>",
                                          0.43,
                                          {}};
    first.effects.push_back({"instructions", "", "regression", 2.53e6, 2.61e6, 3.0, 3.0, 3.0});
    first.effects.push_back({"cycles", "", "unsupported", std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                             std::nullopt});
    perfgate::model::culprit_commit second{std::string(64, 'd'),
                                           "parse: ünïcode subject",
                                           "Bo <bo@example.com>",
                                           0.57,
                                           {}};
    k.culprits = {first, second};
    return k;
}

} // namespace

TEST_CASE("store: a bisection's culprit is stored on its alert, replaced, and read by load and list")
{
    test_database where;
    ps::store db(where.location());
    std::vector<std::int64_t> runs;
    for (int i = 0; i < 6; ++i) runs.push_back(db.runs().insert(make_run("demo", "parse", 1'700'000'000 + i)));
    ps::series_detection d;
    d.series = {"parse", "task-clock", "fp-runner-1", "main"};
    d.tail = runs;
    d.found = {change_at(runs[2], 5.0), change_at(runs[4], 7.0)};
    const auto opened = db.alerts().apply_detection("demo", {d});
    REQUIRE(opened.size() == 2);
    const auto id = opened[0];

    CHECK_FALSE(db.alerts().load("demo", id)->culprit);
    const auto k = culprit_fixture();
    const perfgate::model::token_ref by{7, "bisect-ci"};
    const auto stored = db.alerts().put_culprit("demo", id, k, by);
    REQUIRE(stored);
    REQUIRE(stored->culprit);
    const auto& got = *stored->culprit;
    CHECK(got.status == perfgate::model::culprit_status::found);
    CHECK(got.backend == "callgrind");
    CHECK(got.counter == "instructions");
    CHECK(got.good_sha == k.good_sha);
    CHECK(got.bad_sha == k.bad_sha);
    CHECK(got.commits == 64);
    CHECK(got.steps == 6);
    CHECK(got.builds == 8);
    CHECK(got.detail == k.detail);
    CHECK(got.stored_at > 0);
    REQUIRE(got.written_by);
    CHECK(*got.written_by == by);
    REQUIRE(got.culprits.size() == 2);
    CHECK(got.culprits[0].sha == k.culprits[0].sha);
    CHECK(got.culprits[0].subject == "parse: copy the buffer");
    CHECK(got.culprits[0].author == "Ana <ana@example.com>");
    CHECK(got.culprits[0].share == doctest::Approx(0.43));
    REQUIRE(got.culprits[0].effects.size() == 2);
    CHECK(got.culprits[0].effects[0].counter == "instructions");
    CHECK(got.culprits[0].effects[0].status == "regression");
    CHECK(got.culprits[0].effects[0].before == doctest::Approx(2.53e6));
    CHECK(got.culprits[0].effects[0].after == doctest::Approx(2.61e6));
    CHECK(got.culprits[0].effects[0].delta_pct == doctest::Approx(3.0));
    CHECK(got.culprits[0].effects[0].ci_lower_pct == doctest::Approx(3.0));
    CHECK(got.culprits[0].effects[1].counter == "cycles");
    CHECK_FALSE(got.culprits[0].effects[1].before);
    CHECK_FALSE(got.culprits[0].effects[1].ci_upper_pct);
    CHECK(got.culprits[1].sha == std::string(64, 'd'));
    CHECK(got.culprits[1].subject == "parse: ünïcode subject");
    CHECK(got.culprits[1].effects.empty());

    // list() carries it on its alert only; load() as well.
    auto listed = db.alerts().list({"demo", {}, {}, {}, {}, 100});
    REQUIRE(listed.size() == 2);
    for (const auto& a : listed) CHECK(a.culprit.has_value() == (a.id == id));
    CHECK(db.alerts().load("demo", id)->culprit->culprits.size() == 2);

    SUBCASE("a second bisection replaces the first, its commits and effects with it")
    {
        perfgate::model::alert_culprit again;
        again.status = perfgate::model::culprit_status::undecided;
        again.backend = "perf";
        again.counter = "task-clock";
        again.good_sha = k.good_sha;
        again.bad_sha = k.bad_sha;
        again.detail = "undecided: after aaaaaaaaaaaa up to bbbbbbbbbbbb (3 commits)";
        const auto replaced = db.alerts().put_culprit("demo", id, again);
        REQUIRE(replaced);
        REQUIRE(replaced->culprit);
        CHECK(replaced->culprit->status == perfgate::model::culprit_status::undecided);
        CHECK(replaced->culprit->culprits.empty());
        CHECK_FALSE(replaced->culprit->written_by);
        CHECK(replaced->culprit->detail == again.detail);
    }
    SUBCASE("an alert of another project, or none, stores nothing")
    {
        db.projects().ensure("other");
        CHECK_FALSE(db.alerts().put_culprit("other", opened[1], k));
        CHECK_FALSE(db.alerts().put_culprit("demo", opened[1] + 100, k));
        CHECK_FALSE(db.alerts().load("demo", opened[1])->culprit);
    }
    SUBCASE("a sha outside 7 to 64 characters is store.constraint, and the earlier culprit stays")
    {
        auto bad = k;
        bad.culprits[0].sha = "abc";
        try {
            (void)db.alerts().put_culprit("demo", id, bad);
            FAIL("a 3-character sha was stored");
        } catch (const perfgate::error& e) {
            CHECK(e.id() == perfgate::errors::store_constraint);
        }
        CHECK(db.alerts().load("demo", id)->culprit->culprits.size() == 2);
    }
}
