// The store opening a database: the migrations applied once, and each
// migration on a database of the version before it (SQLite).
#include "store/comparisons.hpp"
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/tokens.hpp"
#include "store_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

TEST_CASE("store (sqlite): opening applies the migrations once")
{
    scratch_dir dir;
    const auto path = dir / "perfgate.db";

    SUBCASE("temp file: WAL, user_version, tables")
    {
        {
            ps::store db(path);
            CHECK(db.maintenance().runs_count() == 0);
            CHECK(db.maintenance().size_bytes() > 0);
        }
        raw_db raw(path);
        CHECK(raw.integer("PRAGMA user_version") == schema_version);
        CHECK(raw.one("PRAGMA journal_mode") == "wal");
        // A new file frees the pages of pruned rows (maintenance::reclaim_space).
        CHECK(raw.integer("PRAGMA auto_vacuum") == 2);
        const auto tables = raw.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
        CHECK(tables == std::vector<std::string>{"acceptances", "alert_culprit_commits", "alert_culprit_effects",
                                                 "alert_culprits", "alerts", "api_tokens", "benchmark_counters",
                                                 "benchmarks", "change_points", "comparison_artifacts", "comparisons",
                                                 "counters", "ingest_keys", "projects", "qualification_counters",
                                                 "qualifications", "runs", "samples",
                                                 // AUTOINCREMENT's (019_token_scopes.sql)
                                                 "sqlite_sequence", "summaries", "testbeds", "webhooks"});
        CHECK(raw.integer("SELECT count(*) FROM sqlite_schema WHERE type = 'index' "
                          "AND name LIKE 'summaries_history%'") == 3);
    }
    SUBCASE("reopening is idempotent and keeps the data")
    {
        std::int64_t id = 0;
        {
            ps::store db(path);
            id = db.runs().insert(make_run());
        }
        {
            ps::store db(path); // migrations must not run again (CREATE TABLE would fail)
            CHECK(db.maintenance().runs_count() == 1);
            CHECK(db.runs().load("demo", id).has_value());
        }
        raw_db raw(path);
        CHECK(raw.integer("PRAGMA user_version") == schema_version);
    }
    SUBCASE("a database at version 1 gets only migrations 2 to 8")
    {
        std::int64_t id = 0;
        {
            ps::store db(path);
            id = db.runs().insert(make_run());
        }
        {
            raw_db raw(path);
            raw.rows("DROP INDEX runs_retention");
            raw.rows("DROP TABLE qualification_counters");
            raw.rows("DROP TABLE qualifications");
            raw.rows("DROP INDEX comparisons_baseline");
            for (const char* column : {"retention_thin_after", "retention_older_than", "retention_pruned_at"})
                raw.rows(std::string("ALTER TABLE projects DROP COLUMN ") + column);
            raw.rows("ALTER TABLE runs DROP COLUMN session");
            raw.rows("ALTER TABLE runs DROP COLUMN toolchain");
            for (const char* column :
                 {"change_point_method", "change_point_window", "change_point_max_p", "change_point_min_magnitude"})
                raw.rows(std::string("ALTER TABLE projects DROP COLUMN ") + column);
            raw.rows("DROP TABLE ingest_keys");
            raw.rows("DROP TABLE comparison_artifacts");
            raw.rows("DROP INDEX comparisons_recent");
            raw.rows("DROP INDEX runs_project_sha");
            raw.rows("ALTER TABLE comparisons DROP COLUMN verdict");
            raw.rows("ALTER TABLE comparisons DROP COLUMN benchmark_count");
            raw.rows("ALTER TABLE projects DROP COLUMN repository_url");
            raw.rows("DROP INDEX summaries_history");
            raw.rows("DROP INDEX summaries_history_branch");
            raw.rows("DROP INDEX summaries_history_testbed");
            raw.rows("ALTER TABLE runs DROP COLUMN mainline");
            raw.rows("ALTER TABLE summaries DROP COLUMN mainline");
            raw.rows("DROP INDEX comparisons_request_key");
            raw.rows("ALTER TABLE comparisons DROP COLUMN request_key");
            raw.rows("DROP TABLE alert_culprit_effects");
            raw.rows("DROP TABLE alert_culprit_commits");
            raw.rows("DROP TABLE alert_culprits");
            raw.rows("DROP TABLE alerts");
            raw.rows("DROP TABLE change_points");
            raw.rows("ALTER TABLE projects DROP COLUMN baseline_branch");
            raw.rows("ALTER TABLE api_tokens DROP COLUMN expires_at");
            raw.rows("DROP TABLE acceptances");
            raw.rows("DROP INDEX comparisons_candidate");
            raw.rows("DROP TABLE webhooks");
            raw.rows("ALTER TABLE api_tokens DROP COLUMN last_used_at");
            raw.rows("ALTER TABLE api_tokens DROP COLUMN scopes");
            raw.rows("ALTER TABLE runs DROP COLUMN token_id");
            raw.rows("ALTER TABLE runs DROP COLUMN token_name");
            raw.rows("PRAGMA user_version = 1");
        }
        ps::store db(path); // 001 again would fail: its tables exist
        raw_db raw(path);
        CHECK(raw.integer("PRAGMA user_version") == schema_version);
        CHECK(db.projects().baseline_branch("demo") == "main");
        CHECK_FALSE(db.projects().repository_url("demo").has_value());
        CHECK_FALSE(db.projects().change_point_settings_of("demo").window.has_value());
        CHECK(db.comparisons().recent("demo", 10).empty());
        CHECK(raw.integer("SELECT count(*) FROM sqlite_schema WHERE type = 'index' "
                          "AND name LIKE 'summaries_history%'") == 3);
        CHECK(db.history().points(query("demo", "default", "task-clock")).front().run_id == id);
        // 011: runs stored before it have no session (not interleaved with anything).
        CHECK(db.runs().load("demo", id)->session.empty());
        // 016: nor a toolchain key (unknown: never reused as a baseline).
        CHECK(db.runs().load("demo", id)->toolchain.empty());
        // 022: no retention (the server prunes nothing of it).
        CHECK_FALSE(db.projects().retention_of("demo").older_than_s.has_value());
    }
    SUBCASE("a failing migration is store.migrate and leaves the version unchanged")
    {
        {
            ps::store db(path);
        }
        {
            raw_db(path).rows("PRAGMA user_version = 1");
        } // 002's indexes exist already
        try {
            ps::store db(path);
            FAIL("expected store.migrate");
        } catch (const error& e) {
            CHECK(e.id() == "store.migrate");
            const std::string msg = e.what();
            CHECK(msg.find(path.string()) != std::string::npos);
            CHECK(msg.find("migration 002_history_indexes.sql (to version 2) failed") != std::string::npos);
            CHECK(msg.find("already exists") != std::string::npos);
        }
        CHECK(raw_db(path).integer("PRAGMA user_version") == 1);
    }
    SUBCASE(":memory:")
    {
        ps::store db(":memory:");
        const auto id = db.runs().insert(make_run());
        CHECK(db.maintenance().runs_count() == 1);
        CHECK(db.runs().load("demo", id)->counters.size() == 2);
        CHECK(db.maintenance().size_bytes() > 0);
    }
    SUBCASE("a database from a newer perfgate is refused")
    {
        {
            ps::store db(path);
        }
        {
            raw_db(path).rows("PRAGMA user_version = 99");
        }
        try {
            ps::store db(path);
            FAIL("expected store.migrate");
        } catch (const error& e) {
            CHECK(e.id() == "store.migrate");
            const std::string msg = e.what();
            CHECK(msg.find(path.string()) != std::string::npos);
            CHECK(msg.find("version 99") != std::string::npos);
            CHECK(msg.find(fmt::format("version {}", schema_version)) != std::string::npos);
            CHECK(msg.find(std::string(ps::detail::migrations().back().file)) != std::string::npos);
        }
    }
    SUBCASE("unopenable paths are store.open naming the path")
    {
        const auto missing = dir / "no-such-dir" / "x.db";
        CHECK_THROWS_WITH_AS(ps::store{missing}, doctest::Contains(missing.string().c_str()), error);
        try {
            ps::store db(missing);
        } catch (const error& e) {
            CHECK(e.id() == "store.open");
        }

        const auto garbage = dir / "garbage.db";
        std::ofstream(garbage) << std::string(4096, 'x');
        try {
            ps::store db(garbage);
            FAIL("expected store.open");
        } catch (const error& e) {
            CHECK(e.id() == "store.open");
            CHECK(std::string(e.what()).find(garbage.string()) != std::string::npos);
            CHECK(std::string(e.what()).find("not a database") != std::string::npos);
        }
    }
}

TEST_CASE("store (sqlite): migration 003 on an existing version 2 database")
{
    scratch_dir dir;
    const auto path = dir / "v2.db";
    {
        // A database exactly as a perfgate with migrations 001 and 002 left
        // it, with one comparison stored by that version.
        sqlite3* p = nullptr;
        REQUIRE(sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
        raw_db raw(path);
        sqlite3_close_v2(p);
        const auto all = ps::detail::migrations();
        REQUIRE(all.size() >= 3);
        for (std::size_t i = 0; i < 2; ++i)
            REQUIRE(sqlite3_exec(raw.db.get(), std::string(all[i].sql).c_str(), nullptr, nullptr, nullptr) ==
                    SQLITE_OK);
        raw.rows("PRAGMA user_version = 2");
        raw.rows("INSERT INTO projects (id, name, created_at) VALUES (1, 'demo', 0)");
        raw.rows(
            "INSERT INTO testbeds (id, fingerprint, name, cpu, cores, kernel) VALUES (1, 'fp', 'tb', 'cpu', 2, '6.1')");
        raw.rows("INSERT INTO benchmarks (id, project_id, name) VALUES (1, 1, 'parse')");
        raw.rows("INSERT INTO runs (id, project_id, benchmark_id, testbed_id, role, git_sha, branch, backend, "
                 "environment, summary_only, created_at) VALUES "
                 "(1, 1, 1, 1, 'baseline', 'a', 'main', 'perf', '{}', 0, 0), "
                 "(2, 1, 1, 1, 'candidate', 'b', 'main', 'perf', '{}', 0, 0)");
        raw.rows("INSERT INTO comparisons (id, project_id, baseline_run, candidate_run, report, created_at) "
                 "VALUES (1, 1, 1, 2, '{\"verdict\":\"pass\"}', 0)");
    }
    ps::store db(path);
    raw_db raw(path);
    CHECK(raw.integer("PRAGMA user_version") == schema_version);
    CHECK(raw.one("SELECT id, request_key FROM comparisons") == "1|NULL");
    CHECK(raw.integer("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'comparisons_request_key'") ==
          1);
    CHECK(db.comparisons().load("demo", 1) == R"({"verdict":"pass"})");
    // 006 read the verdict from the old row's report; it has no benchmarks array.
    CHECK(raw.one("SELECT verdict, benchmark_count FROM comparisons WHERE id = 1") == "pass|NULL");
    // Old rows are never found by key, and do not block new keyed rows.
    const std::string key = sha256_hex("after the upgrade");
    CHECK_FALSE(db.comparisons().find("demo", key).has_value());
    const auto id = db.comparisons().insert("demo", 1, 2, "{}", key);
    CHECK(id == 2);
    CHECK(db.comparisons().insert("demo", 1, 2, "{}", key) == id);
    CHECK(db.comparisons().insert("demo", 1, 2, "{}") == 3);
    CHECK(raw.integer("SELECT count(*) FROM comparisons WHERE request_key IS NULL") == 2);
}

TEST_CASE("store (sqlite): migration 005 on an existing version 4 database")
{
    scratch_dir dir;
    const auto path = dir / "v4.db";
    {
        // A database exactly as a perfgate with migrations 001 to 004 left
        // it: the history indexes without min and max, and runs on two
        // testbeds stored by that version.
        sqlite3* p = nullptr;
        REQUIRE(sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
        raw_db raw(path);
        sqlite3_close_v2(p);
        const auto all = ps::detail::migrations();
        REQUIRE(all.size() >= 5);
        REQUIRE(all[4].file == "005_history_minmax.sql");
        for (std::size_t i = 0; i < 4; ++i) {
            REQUIRE(sqlite3_exec(raw.db.get(), std::string(all[i].sql).c_str(), nullptr, nullptr, nullptr) ==
                    SQLITE_OK);
        }
        raw.rows("PRAGMA user_version = 4");
        raw.rows("INSERT INTO projects (id, name, created_at) VALUES (1, 'demo', 0)");
        raw.rows("INSERT INTO testbeds (id, fingerprint, name, cpu, cores, kernel) VALUES "
                 "(1, 'fp-a', 'runner-a', 'cpu', 2, '6.1'), (2, 'fp-b', 'runner-b', 'cpu', 4, '6.1')");
        raw.rows("INSERT INTO benchmarks (id, project_id, name, runs, last_run_at) VALUES (1, 1, 'parse', 3, 300)");
        raw.rows("INSERT INTO counters (id, name) VALUES (1, 'task-clock')");
        raw.rows("INSERT INTO benchmark_counters (benchmark_id, counter_id) VALUES (1, 1)");
        raw.rows("INSERT INTO runs (id, project_id, benchmark_id, testbed_id, role, git_sha, branch, backend, "
                 "environment, summary_only, created_at) VALUES "
                 "(1, 1, 1, 1, 'baseline', 'a', 'main', 'perf', '{}', 1, 100), "
                 "(2, 1, 1, 2, 'baseline', 'b', 'main', 'perf', '{}', 1, 200), "
                 "(3, 1, 1, 1, 'baseline', 'c', 'main', 'perf', '{}', 1, 300)");
        raw.rows("INSERT INTO summaries (run_id, counter_id, ordinal, unit, benchmark_id, testbed_id, branch, role, "
                 "git_sha, created_at, n, median, mean, stddev, cov, min, max) VALUES "
                 "(1, 1, 0, 'msec', 1, 1, 'main', 'baseline', 'a', 100, 3, 10, 10, 1, 0.1, 9, 11), "
                 "(2, 1, 0, 'msec', 1, 2, 'main', 'baseline', 'b', 200, 3, 20, 20, 2, 0.1, 18, 22), "
                 "(3, 1, 0, 'msec', 1, 1, 'main', 'baseline', 'c', 300, 1, 12, 12, NULL, NULL, 12, 12)");
        CHECK(raw.one("SELECT sql FROM sqlite_schema WHERE name = 'summaries_history'").find("min") ==
              std::string::npos);
    }
    ps::store db(path);
    raw_db raw(path);
    CHECK(raw.integer("PRAGMA user_version") == schema_version);
    for (const char* index : {"summaries_history", "summaries_history_branch", "summaries_history_testbed"}) {
        CAPTURE(index);
        const auto sql = raw.one(std::string("SELECT sql FROM sqlite_schema WHERE name = '") + index + "'");
        CHECK(sql.find("cov, min, max)") != std::string::npos);
        CHECK(sql.find("testbed_id") != std::string::npos);
        CHECK(sql.find("WHERE n > 0") != std::string::npos);
    }

    const auto h = db.history().points(query("demo", "parse", "task-clock"));
    REQUIRE(h.size() == 3);
    CHECK(h[0].run_id == 1);
    CHECK(h[0].min == 9.0);
    CHECK(h[0].max == 11.0);
    CHECK(h[0].testbed == "fp-a");
    CHECK(h[0].testbed_name == "runner-a");
    CHECK(h[1].min == 18.0);
    CHECK(h[1].max == 22.0);
    CHECK(h[1].testbed == "fp-b");
    CHECK(h[1].testbed_name == "runner-b");
    CHECK(h[2].min == 12.0);
    CHECK(h[2].max == 12.0);
    CHECK(h[2].testbed == "fp-a");

    SUBCASE("the testbed variant reads the recreated index")
    {
        auto q = query("demo", "parse", "task-clock");
        q.branch = "main";
        q.testbed = "runner-a";
        const auto a = db.history().points(q);
        REQUIRE(a.size() == 2);
        CHECK(a[0].run_id == 1);
        CHECK(a[1].run_id == 3);
        CHECK(a[1].testbed_name == "runner-a");
        CHECK(a[0].max == 11.0);
    }
    SUBCASE("runs stored after the upgrade join the same history")
    {
        auto r = make_run("demo", "parse", 400);
        r.testbed = {"runner-b", "cpu", 4, "6.1", "fp-b"};
        r.counters = {counter("task-clock", "msec", {30, 34, 32})};
        db.runs().insert(r);
        const auto after = db.history().points(query("demo", "parse", "task-clock"));
        REQUIRE(after.size() == 4);
        CHECK(after.back().min == 30.0);
        CHECK(after.back().max == 34.0);
        CHECK(after.back().testbed == "fp-b");
        CHECK(after.back().testbed_name == "runner-b");
    }
}

TEST_CASE("store (sqlite): migration 006 on an existing version 5 database")
{
    scratch_dir dir;
    const auto path = dir / "v5.db";
    {
        // A database as migrations 001 to 005 left it, with comparisons
        // stored by that version: reports with and without a verdict.
        sqlite3* p = nullptr;
        REQUIRE(sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
        raw_db raw(path);
        sqlite3_close_v2(p);
        const auto all = ps::detail::migrations();
        REQUIRE(all.size() >= 6);
        REQUIRE(all[5].file == "006_project_settings.sql");
        for (std::size_t i = 0; i < 5; ++i) {
            REQUIRE(sqlite3_exec(raw.db.get(), std::string(all[i].sql).c_str(), nullptr, nullptr, nullptr) ==
                    SQLITE_OK);
        }
        raw.rows("PRAGMA user_version = 5");
        raw.rows("INSERT INTO projects (id, name, created_at) VALUES (1, 'demo', 0)");
        raw.rows(
            "INSERT INTO testbeds (id, fingerprint, name, cpu, cores, kernel) VALUES (1, 'fp', 'tb', 'cpu', 2, '6.1')");
        raw.rows("INSERT INTO benchmarks (id, project_id, name) VALUES (1, 1, 'parse')");
        raw.rows("INSERT INTO runs (id, project_id, benchmark_id, testbed_id, role, git_sha, branch, backend, "
                 "environment, summary_only, created_at) VALUES "
                 "(1, 1, 1, 1, 'baseline', 'abc1234', 'main', 'perf', '{}', 0, 0), "
                 "(2, 1, 1, 1, 'candidate', 'def5678', 'pr-1', 'perf', '{}', 0, 0)");
        raw.rows(
            "INSERT INTO comparisons (id, project_id, baseline_run, candidate_run, report, created_at) VALUES "
            "(1, 1, 1, 2, '{\"verdict\":\"fail\",\"benchmarks\":[{\"name\":\"parse\"},{\"name\":\"render\"}]}', 10), "
            "(2, 1, 1, 2, '{\"verdict\":\"inconclusive\",\"benchmarks\":[]}', 20), "
            "(3, 1, 1, 2, 'truncated {', 30), "
            "(4, 1, 2, 1, '{\"verdict\":\"PASS\"}', 40)");
    }
    ps::store db(path);
    raw_db raw(path);
    CHECK(raw.integer("PRAGMA user_version") == schema_version);
    CHECK(raw.rows("SELECT id, verdict, benchmark_count FROM comparisons ORDER BY id") ==
          std::vector<std::string>{"1|fail|2", "2|inconclusive|0", "3|NULL|NULL", "4|NULL|NULL"});
    CHECK(raw.one("SELECT count(*) FROM projects WHERE repository_url IS NULL") == "1");

    const auto listed = db.comparisons().recent("demo", 3);
    REQUIRE(listed.size() == 3);
    CHECK(listed[0].id == 4);
    CHECK(listed[0].baseline.git_sha == "def5678");
    CHECK(listed[0].candidate.branch == "main");
    CHECK(listed[2].id == 2);
    CHECK(listed[2].verdict == "inconclusive");
    CHECK(listed[2].created_at == 20);

    // The new index serves runs stored before the upgrade.
    const auto runs = db.runs().by_sha("demo", "abc1234");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].id == 1);
}

TEST_CASE("store (sqlite): migration 018 on an existing version 17 database: old baselines feed the series")
{
    scratch_dir dir;
    const auto path = dir / "v17.db";
    {
        // A database as migrations 001 to 017 left it: a push's baseline, a
        // pull request's baseline labelled main, and a candidate.
        sqlite3* p = nullptr;
        REQUIRE(sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
        raw_db raw(path);
        sqlite3_close_v2(p);
        const auto all = ps::detail::migrations();
        REQUIRE(all.size() >= 18);
        REQUIRE(all[17].file == "018_mainline_runs.sql");
        for (std::size_t i = 0; i < 17; ++i) {
            REQUIRE(sqlite3_exec(raw.db.get(), std::string(all[i].sql).c_str(), nullptr, nullptr, nullptr) ==
                    SQLITE_OK);
        }
        raw.rows("PRAGMA user_version = 17");
        raw.rows("INSERT INTO projects (id, name, created_at) VALUES (1, 'demo', 0)");
        raw.rows("INSERT INTO testbeds (id, fingerprint, name, cpu, cores, kernel) VALUES (1, 'fp', 'tb', 'cpu', 2, "
                 "'6.1')");
        raw.rows("INSERT INTO benchmarks (id, project_id, name, runs, last_run_at) VALUES (1, 1, 'parse', 3, 300)");
        raw.rows("INSERT INTO counters (id, name) VALUES (1, 'task-clock')");
        raw.rows("INSERT INTO benchmark_counters (benchmark_id, counter_id) VALUES (1, 1)");
        raw.rows("INSERT INTO runs (id, project_id, benchmark_id, testbed_id, role, git_sha, branch, pr, backend, "
                 "environment, summary_only, created_at) VALUES "
                 "(1, 1, 1, 1, 'baseline', 'a', 'main', NULL, 'perf', '{}', 1, 100), "
                 "(2, 1, 1, 1, 'baseline', 'b', 'main', 7, 'perf', '{}', 1, 200), "
                 "(3, 1, 1, 1, 'candidate', 'c', 'main', NULL, 'perf', '{}', 1, 300)");
        raw.rows("INSERT INTO summaries (run_id, counter_id, ordinal, unit, benchmark_id, testbed_id, branch, role, "
                 "git_sha, created_at, n, median, mean, stddev, cov, min, max) VALUES "
                 "(1, 1, 0, 'msec', 1, 1, 'main', 'baseline', 'a', 100, 1, 10, 10, NULL, NULL, 10, 10), "
                 "(2, 1, 0, 'msec', 1, 1, 'main', 'baseline', 'b', 200, 1, 20, 20, NULL, NULL, 20, 20), "
                 "(3, 1, 0, 'msec', 1, 1, 'main', 'candidate', 'c', 300, 1, 30, 30, NULL, NULL, 30, 30)");
    }
    ps::store db(path);
    raw_db raw(path);
    CHECK(raw.integer("PRAGMA user_version") == schema_version);
    CHECK(raw.one("SELECT group_concat(mainline, ',') FROM (SELECT mainline FROM runs ORDER BY id)") == "1,0,0");
    CHECK(raw.one("SELECT group_concat(mainline, ',') FROM (SELECT mainline FROM summaries ORDER BY run_id)") ==
          "1,0,0");
    CHECK(db.runs().load("demo", 1)->mainline);
    CHECK_FALSE(db.runs().load("demo", 2)->mainline);
    auto q = query("demo", "parse", "task-clock");
    q.branch = "main";
    q.mainline_only = true;
    const auto series = db.history().points(q);
    REQUIRE(series.size() == 1);
    CHECK(series[0].run_id == 1);
    CHECK(series[0].mainline);
    q.mainline_only = false;
    CHECK(db.history().points(q).size() == 3);
    for (const char* index : {"summaries_history", "summaries_history_branch", "summaries_history_testbed"}) {
        CAPTURE(index);
        CHECK(raw.one(std::string("SELECT sql FROM sqlite_schema WHERE name = '") + index + "'").find("mainline") !=
              std::string::npos);
    }
    // New runs say it themselves.
    auto r = make_run("demo", "parse", 400, "main", "candidate");
    r.mainline = true;
    const auto id = db.runs().insert(r);
    CHECK(db.runs().load("demo", id)->mainline);
    q.mainline_only = true;
    CHECK(db.history().points(q).size() == 2);
}

TEST_CASE("store (sqlite): a database that cannot grow (SQLITE_FULL) is store.full naming the file")
{
    // PRAGMA max_page_count makes SQLite answer SQLITE_FULL as a full disk
    // does (the server over a real full tmpfs: test_server_signin.cpp).
    perfgate::test::temp_dir dir;
    const auto path = (dir.path() / "tiny.db").string();
    using perfgate::store::detail::sqlite_connection;
    sqlite_connection c(path, sqlite_connection::mode::read_write_create);
    c.exec("CREATE TABLE t (x BLOB); PRAGMA max_page_count = 8");
    const auto fill = [&] {
        for (int i = 0; i < 100; ++i) c.exec("INSERT INTO t VALUES (zeroblob(4096))");
    };
    CHECK_THROWS_WITH_AS(fill(), doctest::Contains("tiny.db"), perfgate::error);
    try {
        fill();
        FAIL("the insert did not fail");
    } catch (const perfgate::error& e) {
        CHECK(std::string(e.id()) == "store.full");
    }
}

// Issue 43, finding 3: 019 rebuilds api_tokens with AUTOINCREMENT. Tokens
// made before keep their ids, their hashes and every power (no scope list);
// afterwards a revoked newest token's id is never handed out again.
TEST_CASE("store (sqlite): migration 019 on a version 18 database: tokens kept as legacy, ids never reused")
{
    scratch_dir dir;
    const auto path = dir / "v18.db";
    {
        sqlite3* p = nullptr;
        REQUIRE(sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
        raw_db raw(path);
        sqlite3_close_v2(p);
        const auto all = ps::detail::migrations();
        REQUIRE(all.size() >= 19);
        REQUIRE(all[18].file == "019_token_scopes.sql");
        for (std::size_t i = 0; i < 18; ++i) {
            REQUIRE(sqlite3_exec(raw.db.get(), std::string(all[i].sql).c_str(), nullptr, nullptr, nullptr) ==
                    SQLITE_OK);
        }
        raw.rows("PRAGMA user_version = 18");
        raw.rows("INSERT INTO projects (id, name, created_at) VALUES (1, 'demo', 0)");
        raw.rows("INSERT INTO api_tokens (id, project_id, name, sha256, created_at, expires_at, last_used_at) VALUES "
                 "(1, 1, 'ci', '" +
                 std::string(64, 'a') +
                 "', 10, NULL, 20), "
                 "(2, 1, 'dash', '" +
                 std::string(64, 'b') + "', 11, 99999999999, NULL)");
    }
    ps::store db(path);
    raw_db raw(path);
    CHECK(raw.integer("PRAGMA user_version") == schema_version);
    CHECK(raw.rows("SELECT id, name, sha256 = '" + std::string(64, 'a') +
                   "', created_at, expires_at, last_used_at, scopes FROM api_tokens ORDER BY id") ==
          std::vector<std::string>{"1|ci|1|10|NULL|20|NULL", "2|dash|0|11|99999999999|NULL|NULL"});
    const auto tokens = db.tokens().list("demo");
    REQUIRE(tokens.size() == 2);
    CHECK(tokens[0].scopes.is_legacy());
    // Revoke the newest, make its replacement: a new id.
    CHECK(db.tokens().revoke("demo", 2));
    db.tokens().create("demo", "replacement", std::nullopt, *perfgate::model::scope_set::parse("read"));
    CHECK(raw.rows("SELECT id, name, scopes FROM api_tokens ORDER BY id") ==
          std::vector<std::string>{"1|ci|NULL", "3|replacement|read"});
    CHECK_FALSE(db.tokens().live(2, "demo"));
}
