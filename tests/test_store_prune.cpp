// Retention (store/prune.hpp): a year of a project's history, stored
// through the store's API with simulated times, pruned; what the history
// needs stays (the series' change points found before and after are the
// same), pull requests' runs and their comparisons go, the file shrinks, a
// dry run changes nothing.
#include "store/acceptances.hpp"
#include "store/alerts.hpp"
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store_cases.hpp"

#include "stats/change_points.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

namespace {

constexpr std::int64_t day_s = 86400;
constexpr int sim_days = 365;
constexpr int pushes_a_day = 3;
constexpr int prs_a_day = 2;
// The main line's level steps up 30% on this day and back down on the other:
// one step in the part of the year that thinning reaches, one after it.
constexpr int step_up_day = 100;
constexpr int step_down_day = 300;

const std::string prune_fp = "fp-prune";

// A run of the simulated project: task-clock around `level` (a fixed
// wobble of +-0.6%, no randomness: the test's change points are the two
// planted steps and nothing else), instructions constant.
ps::run_record sim_run(std::int64_t at, const std::string& sha, const std::string& branch, const std::string& role,
                       bool mainline, std::optional<std::int64_t> pr, double level, int wobble)
{
    auto r = commit_run(sha, "parse", prune_fp, at, "demo", branch, role);
    r.mainline = mainline;
    r.pr = pr;
    r.session = "s-" + sha;
    r.environment_json = R"({"governor":"performance","aslr":"off","load":0.1,"note":"simulated"})";
    r.counters.clear();
    const double w = 1.0 + 0.002 * static_cast<double>((wobble * 7) % 7 - 3);
    r.counters.push_back(counter(
        "task-clock", "msec", {level * w, level * w * 1.001, level * w * 0.999, level * w * 1.002, level * w * 0.998}));
    r.counters.push_back(counter("instructions", "", {5e8, 5e8, 5e8, 5e8, 5e8}));
    return r;
}

std::string sim_sha(const char* kind, int day, int i)
{
    return fmt::format("{:0>8}{:0>32}", fmt::format("{}{}", kind, i), day);
}

struct simulated_year {
    std::int64_t now = 0;
    std::int64_t alert_run = 0;    // an old pull request's run an alert names
    std::int64_t accepted_run = 0; // the candidate of an old accepted comparison
    std::int64_t accepted_cmp = 0;
    std::int64_t recently_compared = 0; // an old pull request's run compared "now"
    std::int64_t old_pr_cmp = 0;        // an old pull request's comparison (with a flame graph)
};

// The series' medians in order, and their runs.
std::pair<std::vector<double>, std::vector<std::int64_t>> main_series(const ps::store& db)
{
    auto q = query("demo", "parse", "task-clock");
    q.branch = "main";
    q.mainline_only = true;
    q.limit = 100000;
    std::vector<double> values;
    std::vector<std::int64_t> ids;
    for (const auto& p : db.history().points(q)) {
        values.push_back(p.median);
        ids.push_back(p.run_id);
    }
    return {values, ids};
}

// The runs where change-point detection (perfgate's default method) finds
// the series' steps.
std::vector<std::int64_t> detected_runs(const ps::store& db)
{
    const auto [values, ids] = main_series(db);
    std::vector<std::int64_t> out;
    for (const auto& cp : perfgate::stats::change_points(values)) out.push_back(ids.at(cp.index));
    return out;
}

// Stores what detection finds over the whole series, as the watch stores a
// tail's: change points, and an alert for the step up.
void store_detection(ps::store& db)
{
    const auto [values, ids] = main_series(db);
    ps::series_detection d;
    d.series = {"parse", "task-clock", prune_fp, "main"};
    d.tail = ids;
    for (const auto& cp : perfgate::stats::change_points(values)) {
        perfgate::model::change_point_record r;
        r.series = d.series;
        r.run_id = ids.at(cp.index);
        r.p_value = cp.p_value;
        r.mean_before = cp.mean_before;
        r.mean_after = cp.mean_after;
        r.median_before = cp.median_before;
        r.median_after = cp.median_after;
        r.delta_pct = cp.delta_pct;
        r.shift = cp.shift.estimate;
        r.shift_lower = cp.shift.lower;
        r.shift_upper = cp.shift.upper;
        d.found.push_back({r, cp.mean_after > cp.mean_before});
    }
    db.alerts().apply_detection("demo", {d});
}

simulated_year simulate(ps::store& db, const test_database& where)
{
    simulated_year y;
    y.now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::int64_t start = y.now - sim_days * day_s;
    const std::string report(1500, ' ');
    const auto report_json = [&](int n) { return fmt::format(R"({{"verdict":"pass","n":{}{}}})", n, report); };
    int serial = 0;
    for (int day = 0; day < sim_days; ++day) {
        const double level = day >= step_up_day && day < step_down_day ? 130.0 : 100.0;
        std::vector<ps::run_record> runs;
        for (int i = 0; i < pushes_a_day; ++i) {
            const std::int64_t at = start + day * day_s + (i + 1) * 3600;
            // A push: the previous head remeasured as baseline, the pushed commit feeds the series.
            runs.push_back(sim_run(at, sim_sha("b", day, i), "main", "baseline", false, std::nullopt, level, ++serial));
            runs.push_back(sim_run(at, sim_sha("p", day, i), "main", "candidate", true, std::nullopt, level, ++serial));
        }
        for (int i = 0; i < prs_a_day; ++i) {
            const std::int64_t at = start + day * day_s + (i + 5) * 3600;
            const std::int64_t pr = day * 10 + i + 1;
            runs.push_back(sim_run(at, sim_sha("m", day, i), "main", "baseline", false, pr, level, ++serial));
            runs.push_back(sim_run(at, sim_sha("f", day, i), fmt::format("feature-{}", pr), "candidate", false, pr,
                                   level * 1.01, ++serial));
        }
        const auto ids = db.runs().insert_all(runs);
        for (std::size_t i = 0; i + 1 < ids.size(); i += 2) {
            const auto cmp = db.comparisons().insert("demo", ids[i], ids[i + 1], report_json(serial));
            if (i / 2 == pushes_a_day) { // the day's first pull request: a flame graph and an attribution
                db.artifacts().put_flame_graph("demo", cmp, "parse", std::string(2000, 'x'));
                db.artifacts().put_attribution("demo", cmp, "parse", R"({"functions":[]})");
                if (day == 10) y.old_pr_cmp = cmp;
            }
            if (day == 20 && i / 2 == pushes_a_day) {
                y.accepted_cmp = cmp;
                y.accepted_run = ids[i + 1];
            }
            if (day == 15 && i / 2 == pushes_a_day) y.alert_run = ids[i];
            if (day == 30 && i / 2 == pushes_a_day) y.recently_compared = ids[i + 1];
        }
    }
    // Comparisons are stored at the clock's time: put them at their runs'.
    where.rows(
        "UPDATE comparisons SET created_at = (SELECT created_at FROM runs WHERE runs.id = comparisons.candidate_run)");
    REQUIRE(db.acceptances().accept("demo", sim_sha("f", 20, 0), "alice", "a correctness fix").has_value());
    // Someone compares an old pull request's run today: it stays while the comparison is young.
    const auto main_run = main_series(db).second.back();
    db.comparisons().insert("demo", main_run, y.recently_compared, report_json(0));
    store_detection(db);
    // An alert found on a pull request's run before runs said whether they
    // feed a series (018_mainline_runs.sql): its run stays.
    where.rows(fmt::format(
        "INSERT INTO alerts (project_id, benchmark_id, counter_id, testbed_id, branch, run_id, p_value, mean_before, "
        "mean_after, median_before, median_after, shift, shift_lower, shift_upper, status, created_at, updated_at) "
        "SELECT r.project_id, r.benchmark_id, (SELECT id FROM counters WHERE name = 'task-clock'), r.testbed_id, "
        "r.branch, r.id, 0.0001, 1, 2, 1, 2, 1, 0.5, 1.5, 'wontfix', r.created_at, r.created_at FROM runs r WHERE r.id = {}",
        y.alert_run));
    return y;
}

// Every row of the tables a prune may touch, in a fixed order: equal
// digests, equal contents.
std::string table_digest(const test_database& where)
{
    std::string all;
    for (const char* sql :
         {"SELECT id, created_at, mainline, git_sha FROM runs ORDER BY id",
          "SELECT run_id, counter_id, repetition, value FROM samples ORDER BY run_id, counter_id, repetition",
          "SELECT run_id, counter_id, median FROM summaries ORDER BY run_id, counter_id",
          "SELECT run_id, counter_id FROM change_points ORDER BY run_id, counter_id",
          "SELECT id, baseline_run, candidate_run, length(report) FROM comparisons ORDER BY id",
          "SELECT comparison_id, kind, length(content) FROM comparison_artifacts ORDER BY comparison_id, kind",
          "SELECT id, run_id, status FROM alerts ORDER BY id", "SELECT comparison_id FROM acceptances",
          "SELECT id, runs FROM benchmarks ORDER BY id", "SELECT key, run_id FROM ingest_keys ORDER BY key"}) {
        for (const auto& row : where.rows(sql)) all += row + "\n";
        all += "--\n";
    }
    return sha256_hex(all);
}

} // namespace

TEST_CASE("store: prune keeps what a year's series and its change points need and removes pull requests' runs")
{
    test_database where;
    ps::store db(where.location());
    const auto y = simulate(db, where);

    const auto detected_before = detected_runs(db);
    REQUIRE(detected_before.size() == 2); // the two planted steps, nothing else
    const auto stored_before = db.alerts().change_points("demo", {"parse", "task-clock", "", ""});
    REQUIRE(stored_before.size() == 2);
    const auto series_before = main_series(db).second;
    const long long runs_before = where.integer("SELECT count(*) FROM runs");
    CHECK(runs_before == sim_days * 2 * (pushes_a_day + prs_a_day));

    ps::prune_rules rules;
    rules.now = y.now;
    rules.older_than_s = 90 * day_s;
    rules.thin_after_s = 180 * day_s;

    // The dry run changes nothing, and says what the prune then removes.
    const std::string digest = table_digest(where);
    const auto dry = db.maintenance().prune(std::string_view("demo"), rules, true);
    CHECK(dry.dry_run);
    CHECK(table_digest(where) == digest);
    CHECK(dry.removed.runs.rows > 0);
    CHECK(dry.removed.flame_graphs.rows > 0);

    const long long young_before = where.integer(
        fmt::format("SELECT count(*) FROM runs WHERE mainline = 0 AND created_at >= {}", y.now - rules.older_than_s));
    if (!on_postgres()) where.rows("PRAGMA wal_checkpoint(TRUNCATE)");
    const auto file_before = on_postgres() ? 0 : fs::file_size(where.location());
    const auto pruned = db.maintenance().prune(std::string_view("demo"), rules, false);
    const auto space = db.maintenance().reclaim_space();

    // What the dry run said is what went, row for row.
    CHECK(pruned.removed.runs.rows == dry.removed.runs.rows);
    CHECK(pruned.removed.runs.bytes == dry.removed.runs.bytes);
    CHECK(pruned.removed.samples.rows == dry.removed.samples.rows);
    CHECK(pruned.removed.comparisons.rows == dry.removed.comparisons.rows);
    CHECK(pruned.removed.flame_graphs.rows == dry.removed.flame_graphs.rows);
    CHECK(pruned.removed.attributions.rows == dry.removed.attributions.rows);
    CHECK(pruned.removed.bytes() == dry.removed.bytes());
    CHECK(where.integer("SELECT count(*) FROM runs") == runs_before - pruned.removed.runs.rows);
    CHECK(where.integer("SELECT count(*) FROM samples") == 10 * where.integer("SELECT count(*) FROM runs"));

    const std::int64_t cutoff = y.now - rules.older_than_s;
    const std::int64_t thin_cutoff = y.now - *rules.thin_after_s;
    // Pull requests' runs and push baselines past the age are gone but four:
    // an alert's run, the accepted comparison's two, and a run a young
    // comparison refers to; the younger ones stay, every one.
    CHECK(where.integer(fmt::format("SELECT count(*) FROM runs WHERE mainline = 0 AND created_at < {}", cutoff)) == 4);
    for (const auto id : {y.alert_run, y.accepted_run, y.recently_compared}) {
        CAPTURE(id);
        CHECK(where.integer(fmt::format("SELECT count(*) FROM runs WHERE id = {}", id)) == 1);
    }
    CHECK(where.integer(fmt::format("SELECT count(*) FROM runs WHERE mainline = 0 AND created_at >= {}", cutoff)) ==
          young_before);
    CHECK(where.integer(fmt::format("SELECT count(*) FROM comparisons WHERE id = {}", y.accepted_cmp)) == 1);
    CHECK(where.integer(fmt::format("SELECT count(*) FROM comparisons WHERE id = {}", y.old_pr_cmp)) == 0);
    CHECK(where.integer(fmt::format("SELECT count(*) FROM comparison_artifacts WHERE comparison_id = {}",
                                    y.old_pr_cmp)) == 0);
    CHECK(where.integer("SELECT count(*) FROM acceptances") == 1);
    CHECK(where.integer("SELECT count(*) FROM alerts") == 2); // the step up's, and the old one

    // The series: every point younger than the thinning age, at most one a
    // day before it (plus the change points and the points before them).
    const auto series_after = main_series(db).second;
    CHECK(series_after.size() < series_before.size());
    CHECK(where.integer(fmt::format("SELECT count(*) FROM runs WHERE mainline = 1 AND created_at >= {}",
                                    thin_cutoff)) == 180 * pushes_a_day);
    const auto old_days = where.integer(fmt::format(
        "SELECT count(DISTINCT created_at / 86400) FROM runs WHERE mainline = 1 AND created_at < {}", thin_cutoff));
    CHECK(where.integer(fmt::format("SELECT count(*) FROM runs WHERE mainline = 1 AND created_at < {}", thin_cutoff)) <=
          old_days + 2);
    // The change points: those stored are all there, and detection on the
    // thinned series finds them at the same runs.
    const auto stored_after = db.alerts().change_points("demo", {"parse", "task-clock", "", ""});
    REQUIRE(stored_after.size() == stored_before.size());
    for (std::size_t i = 0; i < stored_after.size(); ++i) {
        CHECK(stored_after[i].run_id == stored_before[i].run_id);
        CHECK(stored_after[i].p_value == stored_before[i].p_value);
    }
    CHECK(detected_runs(db) == detected_before);
    // benchmarks.runs follows.
    CHECK(where.integer("SELECT runs FROM benchmarks WHERE name = 'parse'") ==
          where.integer("SELECT count(*) FROM runs"));
    CHECK(db.maintenance().runs_count() == where.integer("SELECT count(*) FROM runs"));

    // The space is given back: a file this perfgate made frees its pages.
    if (!on_postgres()) {
        CHECK(space.incremental);
        CHECK(space.free_pages_before > 0);
        CHECK(where.integer("PRAGMA freelist_count") == 0);
        CHECK(space.size_after < space.size_before);
        const auto file_after = fs::file_size(where.location());
        CAPTURE(file_before);
        CAPTURE(file_after);
        CHECK(file_after < file_before * 3 / 4);
    }

    // Pruning again removes nothing more.
    const auto again = db.maintenance().prune(std::string_view("demo"), rules, false);
    CHECK(again.removed.runs.rows == 0);
}

TEST_CASE("store: prune refuses ages out of bounds and unknown projects, and a project's retention is stored")
{
    test_database where;
    ps::store db(where.location());
    const auto young =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count() -
        day_s;
    db.runs().insert(make_run("demo", "default", young));
    ps::prune_rules rules;
    rules.older_than_s = 3600;
    CHECK_THROWS_WITH_AS(db.maintenance().prune(std::nullopt, rules, true),
                         doctest::Contains("between 1 day and 36500 days"), error);
    rules.older_than_s = 90 * day_s;
    rules.thin_after_s = 30 * day_s;
    CHECK_THROWS_WITH_AS(db.maintenance().prune(std::nullopt, rules, true), doctest::Contains("thinning age"), error);
    rules.thin_after_s.reset();
    CHECK_THROWS_WITH_AS(db.maintenance().prune(std::string_view("nope"), rules, true),
                         doctest::Contains("project 'nope' not found"), error);
    const auto all = db.maintenance().prune(std::nullopt, rules, false);
    CHECK(all.projects == std::vector<std::string>{"demo"});
    CHECK(all.removed.runs.rows == 0);

    CHECK_FALSE(db.projects().retention_of("demo").older_than_s.has_value());
    db.projects().set_retention("demo", {90 * day_s, 365 * day_s});
    CHECK(db.projects().retention_of("demo").older_than_s == 90 * day_s);
    CHECK(db.projects().retention_of("demo").thin_after_s == 365 * day_s);
    CHECK_THROWS_AS(db.projects().set_retention("demo", {90 * day_s, 30 * day_s}), error);
    CHECK_THROWS_AS(db.projects().set_retention("demo", {std::nullopt, 30 * day_s}), error);
    CHECK_THROWS_AS(db.projects().set_retention("nope", {90 * day_s, std::nullopt}), error);
    CHECK(db.projects().retention_of("demo").thin_after_s == 365 * day_s); // unchanged by the refused ones

    // Once a day: the first claim wins, the next within the day gets nothing.
    const std::int64_t t = 1'800'000'000;
    CHECK(db.projects().claim_due_retention(t, day_s) == std::vector<std::string>{"demo"});
    CHECK(db.projects().claim_due_retention(t + 3600, day_s).empty());
    CHECK(db.projects().claim_due_retention(t + day_s, day_s) == std::vector<std::string>{"demo"});
    db.projects().set_retention("demo", {});
    CHECK(db.projects().claim_due_retention(t + 5 * day_s, day_s).empty());
}

TEST_CASE("store: the service's daily retention prunes a project with a retention once a day and says so")
{
    test_database where;
    ps::store db(where.location());
    const auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& project : {"kept", "pruned"}) {
        auto old_pr = make_run(project, "parse", now - 200 * day_s, "feature", "candidate");
        old_pr.pr = 3;
        db.runs().insert(old_pr);
        auto young_pr = make_run(project, "parse", now - day_s, "feature", "candidate");
        young_pr.pr = 4;
        db.runs().insert(young_pr);
    }
    perfgate::service::service svc(db);
    svc.projects().set_retention("pruned", {90 * day_s, std::nullopt});
    CHECK_THROWS_WITH_AS(svc.projects().set_retention("nope", {90 * day_s, std::nullopt}),
                         doctest::Contains("no project 'nope'"), error);

    std::mutex mu;
    std::vector<perfgate::service::retention_outcome> seen;
    svc.background().prune_daily(
        [&](const perfgate::service::retention_outcome& out) {
            std::lock_guard lock(mu);
            seen.push_back(out);
        },
        std::chrono::milliseconds(20));
    // Several checks within the day: one prune.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (svc.background().retention_checks() < 5 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(svc.background().retention_checks() >= 5);
    std::lock_guard lock(mu);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].project == "pruned");
    CHECK(seen[0].error.empty());
    CHECK(seen[0].removed.runs.rows == 1);
    CHECK(where.integer("SELECT count(*) FROM runs r JOIN projects p ON p.id = r.project_id WHERE p.name = 'pruned'") ==
          1);
    CHECK(where.integer("SELECT count(*) FROM runs r JOIN projects p ON p.id = r.project_id WHERE p.name = 'kept'") ==
          2);
    CHECK(where.integer("SELECT count(*) FROM projects WHERE retention_pruned_at IS NOT NULL") == 1);
}
