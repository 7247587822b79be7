// PostgreSQL's own behaviour: these always run on PostgreSQL (advisory
// locks, parameter numbering, plans, generations, replicas, lost sessions).
#include "store_cases.hpp"

#include "model/error_catalogue.hpp"
#include "store/alerts.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

namespace {

using perfgate::test::db_engine;

ps::run_record step_run(std::string benchmark, std::int64_t at, double value, std::string counter_name = "task-clock")
{
    auto r = make_run("demo", std::move(benchmark), at);
    r.mainline = true; // a push's run: it feeds the series the service watches
    r.counters = {
        counter(std::move(counter_name), "msec", {value, value + 0.5, value - 0.5, value + 0.25, value - 0.25})};
    return r;
}

// A SQL literal for a bound value (the EXPLAIN checks replay statements).
std::string sql_literal(const std::optional<std::string>& v)
{
    if (!v) return "NULL";
    std::string out = "'";
    for (const char ch : *v) {
        if (ch == '\'') out += '\'';
        out += ch;
    }
    return out + "'";
}

} // namespace

TEST_CASE("store (postgresql): opening applies the migrations once, under an advisory lock")
{
    // The newest version, and how many migrations lead there (numbers may
    // stand open while changes are written side by side: store/CMakeLists.txt).
    const auto latest = static_cast<long long>(ps::detail::pg_migrations().back().version);
    const auto applied = static_cast<long long>(ps::detail::pg_migrations().size());
    REQUIRE(latest == pg_schema_version);

    SUBCASE("tables, version, reopening keeps the data")
    {
        test_database raw(db_engine::postgresql);
        std::int64_t id = 0;
        {
            ps::store db(raw.location());
            CHECK(db.engine() == "postgresql");
            CHECK(db.maintenance().runs_count() == 0);
            CHECK(db.maintenance().size_bytes() > 0);
            id = db.runs().insert(make_run());
        }
        CHECK(raw.integer("SELECT max(version) FROM perfgate_migrations") == latest);
        CHECK(raw.one("SELECT file FROM perfgate_migrations WHERE version = 1") == "001_initial.sql");
        CHECK(raw.rows("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                       "ORDER BY table_name") == std::vector<std::string>{"acceptances",
                                                                          "alert_culprit_commits",
                                                                          "alert_culprit_effects",
                                                                          "alert_culprits",
                                                                          "alerts",
                                                                          "api_tokens",
                                                                          "benchmark_counters",
                                                                          "benchmarks",
                                                                          "change_points",
                                                                          "comparison_artifacts",
                                                                          "comparisons",
                                                                          "counters",
                                                                          "ingest_keys",
                                                                          "perfgate_migrations",
                                                                          "projects",
                                                                          "qualification_counters",
                                                                          "qualifications",
                                                                          "runs",
                                                                          "samples",
                                                                          "summaries",
                                                                          "testbeds",
                                                                          "webhooks"});
        // 004: LZ4 where the server has it (Debian's is built with it).
        CHECK(raw.rows("SELECT attname, attcompression FROM pg_attribute WHERE attrelid IN "
                       "('comparisons'::regclass, 'comparison_artifacts'::regclass) AND attcompression <> '' "
                       "ORDER BY attname") == std::vector<std::string>{"content|l", "report|l"});
        ps::store again(raw.location()); // 001 again would fail: its tables exist
        CHECK(again.maintenance().runs_count() == 1);
        CHECK(again.runs().load("demo", id).has_value());
        CHECK(raw.integer("SELECT count(*) FROM perfgate_migrations") == applied);
    }
    SUBCASE("replicas starting together: each migration is applied once")
    {
        test_database raw(db_engine::postgresql);
        constexpr int replicas = 6;
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < replicas; ++i) {
            threads.emplace_back([&] {
                try {
                    ps::store db(raw.location());
                    db.projects().ensure("demo");
                } catch (const std::exception& e) {
                    MESSAGE(e.what());
                    ++failures;
                }
            });
        }
        for (auto& t : threads) t.join();
        CHECK(failures == 0);
        CHECK(raw.integer("SELECT count(*) FROM perfgate_migrations") == applied);
        CHECK(raw.integer("SELECT count(*) FROM projects") == 1);
    }
    SUBCASE("a database from a newer perfgate is refused; a failing migration is store.migrate")
    {
        test_database raw(db_engine::postgresql);
        {
            ps::store db(raw.location());
        }
        raw.rows("INSERT INTO perfgate_migrations VALUES (99, '099_future.sql', 0)");
        try {
            ps::store db(raw.location());
            FAIL("expected store.migrate");
        } catch (const error& e) {
            CHECK(e.id() == "store.migrate");
            const std::string msg = e.what();
            CHECK(msg.find("version 99") != std::string::npos);
            CHECK(msg.find(fmt::format("version {}", latest)) != std::string::npos);
            CHECK(msg.find("pg/" + std::string(ps::detail::pg_migrations().back().file)) != std::string::npos);
        }
        raw.rows("DELETE FROM perfgate_migrations"); // claims version 0: 001 runs again and fails
        try {
            ps::store db(raw.location());
            FAIL("expected store.migrate");
        } catch (const error& e) {
            CHECK(e.id() == "store.migrate");
            const std::string msg = e.what();
            CHECK(msg.find("migration pg/001_initial.sql (to version 1) failed") != std::string::npos);
            CHECK(msg.find("already exists") != std::string::npos);
        }
        CHECK(raw.integer("SELECT count(*) FROM perfgate_migrations") == 0); // rolled back
    }
    SUBCASE("an unreachable server is store.open; the password is never shown")
    {
        const std::string uri = "postgresql://perfgate:s3cret@/perfgate?host=/nonexistent-perfgate-dir&port=1";
        try {
            ps::store db(uri);
            FAIL("expected store.open");
        } catch (const error& e) {
            CHECK(e.id() == "store.open");
            const std::string msg = e.what();
            CHECK(msg.find("postgresql://perfgate@/perfgate?host=/nonexistent-perfgate-dir&port=1") == 0);
            CHECK(msg.find("s3cret") == std::string::npos);
            CHECK(msg.find("cannot connect to PostgreSQL") != std::string::npos);
        }
        CHECK(ps::shown_location("postgres://u:pw@h:5432/db?sslmode=require&password=pw2") ==
              "postgres://u@h:5432/db?sslmode=require&password=***");
        CHECK(ps::is_postgres("postgres://h/db"));
        CHECK(ps::is_postgres("postgresql:///db"));
        CHECK_FALSE(ps::is_postgres("./postgresql.db"));
    }
}

TEST_CASE("store (postgresql): :name parameters are numbered outside quotes, comments and casts")
{
    const auto n = ps::detail::number_parameters(
        "SELECT ':skip', \":also\", x::text -- :comment\n/* :block */ FROM t WHERE a = :a AND b = :b OR a = :a");
    CHECK(n.sql ==
          "SELECT ':skip', \":also\", x::text -- :comment\n/* :block */ FROM t WHERE a = $1 AND b = $2 OR a = $1");
    CHECK(n.names == std::vector<std::string>{":a", ":b"});
    CHECK(ps::detail::number_parameters("SELECT :x::bigint").sql == "SELECT $1::bigint");
}

TEST_CASE("store (postgresql): libpq is loaded at run time, and its absence names the package")
{
    // What a system without libpq5 meets at the first connection.
    try {
        ps::detail::probe_libpq("libpq-perfgate-test-missing.so.5");
        FAIL("expected store.libpq_missing");
    } catch (const error& e) {
        CHECK(e.id() == "store.libpq_missing");
        const std::string msg = e.what();
        CHECK(msg.find("PostgreSQL databases need libpq") == 0);
        CHECK(msg.find("libpq-perfgate-test-missing.so.5") != std::string::npos);
        CHECK(msg.find("apt-get install libpq5") != std::string::npos);
    }
    // A library that is not libpq: the first function it lacks is named.
    try {
        ps::detail::probe_libpq("libc.so.6");
        FAIL("expected store.libpq_missing");
    } catch (const error& e) {
        CHECK(e.id() == "store.libpq_missing");
        CHECK(std::string(e.what()).find("libc.so.6 has no PQconnectdb") == 0);
    }
    CHECK_NOTHROW(ps::detail::probe_libpq("libpq.so.5"));
}

TEST_CASE("store (postgresql): every query of the history and compare paths uses an index")
{
    test_database raw(db_engine::postgresql);
    ps::store db(raw.location());
    perfgate::service::service service(db);
    // Enough rows that an index is worth it, in several projects,
    // benchmarks, testbeds and branches; a step that opens an alert.
    for (int project = 0; project < 3; ++project) {
        for (int i = 0; i < 40; ++i) {
            auto r = step_run(i % 2 ? "parse" : "render", 1'700'000'000 + i, i < 30 ? 10.0 : 12.0);
            r.project = project == 0 ? "demo" : "other-" + std::to_string(project);
            if (i % 5 == 0) r.testbed = {"ci-runner-2", "cpu", 4, "6.1", "fp-runner-2"};
            service.runs().ingest_run(r); // the service watches the series: change points and alerts
        }
    }
    // A long history of one series, older than the runs above: at this size
    // reading the newest points off the index beats sorting the series,
    // and the planner must see that (a plan for tens of rows proves little).
    raw.rows("INSERT INTO runs (project_id, benchmark_id, testbed_id, role, git_sha, branch, backend, environment, "
             "summary_only, created_at, mainline) "
             "SELECT p.id, b.id, t.id, 'baseline', 'bulk' || g, 'main', 'perf', '{}', 1, 1600000000 + g, 1 "
             "FROM generate_series(1, 20000) g, projects p, benchmarks b, testbeds t "
             "WHERE p.name = 'demo' AND b.project_id = p.id AND b.name = 'parse' AND t.fingerprint = 'fp-runner-1'");
    raw.rows(
        "INSERT INTO summaries (run_id, counter_id, ordinal, unit, benchmark_id, testbed_id, branch, role, git_sha, "
        "created_at, n, median, mean, stddev, cov, min, max, mainline) "
        "SELECT r.id, c.id, 0, 'msec', r.benchmark_id, r.testbed_id, r.branch, r.role, r.git_sha, r.created_at, "
        "5, 10, 10, 0.1, 0.01, 9.5, 10.5, r.mainline FROM runs r, counters c "
        "WHERE r.git_sha LIKE 'bulk%' AND c.name = 'task-clock'");
    raw.rows("VACUUM ANALYZE");
    const auto base = db.runs().insert(step_run("parse", 1'800'000'000, 12.0));
    auto cand_run = step_run("parse", 1'800'000'100, 12.5);
    cand_run.role = "candidate";
    cand_run.branch = "feature";
    const auto cand = db.runs().insert(cand_run);

    struct executed {
        std::string sql;
        std::vector<std::optional<std::string>> values;
    };
    std::vector<executed> seen;
    std::mutex seen_mu;
    ps::detail::set_pg_statement_observer([&](const std::string& sql, const auto& values) {
        std::lock_guard lock(seen_mu);
        seen.push_back({sql, values});
    });
    perfgate::service::service fresh(db); // no cached comparison
    const auto c = fresh.comparisons().compare("demo", {{base, cand}}, {});
    CHECK(c.id > 0);
    perfgate::model::history_query q;
    q.project = "demo";
    q.benchmark = "parse";
    q.counter = "task-clock";
    for (const auto& [branch, testbed] : std::vector<std::pair<std::optional<std::string>, std::optional<std::string>>>{
             {std::nullopt, std::nullopt},
             {"main", std::nullopt},
             {"main", "ci-runner-1"},
             {std::nullopt, "fp-runner-2"}}) {
        q.branch = branch;
        q.testbed = testbed;
        CHECK_FALSE(fresh.history().points(q).empty());
    }
    ps::detail::set_pg_statement_observer({});

    std::set<std::string> checked;
    int history_queries = 0;
    for (const auto& e : seen) {
        if (e.sql.starts_with("BEGIN") || e.sql == "COMMIT") continue;
        if (!checked.insert(e.sql).second) continue;
        std::string args;
        for (const auto& v : e.values) args += (args.empty() ? "" : ", ") + sql_literal(v);
        const std::string prepared = ps::detail::number_parameters(e.sql).sql;
        const bool history = e.sql.find("FROM summaries WHERE benchmark_id") != std::string::npos;
        history_queries += history;
        // Custom plans (the first executions of a prepared statement) and the
        // generic plan PostgreSQL switches to: an index either way. With
        // sequential scans priced out, a Seq Scan left means no index fits.
        for (const char* mode : {"force_custom_plan", "force_generic_plan"}) {
            CAPTURE(e.sql);
            CAPTURE(mode);
            const auto plan_rows = raw.rows(fmt::format("SET enable_seqscan = off; SET plan_cache_mode = {}; "
                                                        "PREPARE q AS {}; EXPLAIN EXECUTE q{}",
                                                        mode, prepared, args.empty() ? "" : "(" + args + ")"));
            std::string plan;
            for (const auto& row : plan_rows) plan += row + "\n";
            CAPTURE(plan);
            CHECK(plan.find("Seq Scan") == std::string::npos);
            if (history && std::string_view(mode) == "force_custom_plan") {
                // The covering index gives the order: no sort of the series.
                CHECK(plan.find("Index Only Scan Backward using summaries_history") != std::string::npos);
                CHECK(plan.find("Sort") == std::string::npos);
            }
        }
    }
    CHECK(history_queries >= 3); // the three variants of history_sql.hpp
    CHECK(checked.size() >= 12);
}

TEST_CASE("store (postgresql): the generation moves with another process's writes")
{
    test_database raw(db_engine::postgresql);
    ps::store a(raw.location()), b(raw.location());
    auto waits_for_move = [&](const ps::store& s, std::uint64_t from) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (s.generation() == from && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return s.generation() != from;
    };
    // The listener connects on its own thread: wait for its first count.
    REQUIRE(waits_for_move(b, 0));
    const auto before = b.generation();
    a.runs().insert(make_run());
    CHECK(waits_for_move(b, before));
    const auto after_run = b.generation();
    a.projects().ensure("another");
    CHECK(waits_for_move(b, after_run));
}

TEST_CASE("store (postgresql): replicas racing on the same names, keys and detections")
{
    test_database raw(db_engine::postgresql);
    constexpr int replicas = 4;
    std::vector<std::unique_ptr<ps::store>> stores;
    for (int i = 0; i < replicas; ++i) stores.push_back(std::make_unique<ps::store>(raw.location()));

    SUBCASE("runs of a new project with new counters in opposite orders: no error, one row per name")
    {
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < replicas; ++i) {
            threads.emplace_back([&, i] {
                try {
                    for (int k = 0; k < 10; ++k) {
                        auto r = make_run("racing", "bench-" + std::to_string(k % 3), 1'700'000'000 + k);
                        r.counters = {counter("c-" + std::to_string(k), "", {1, 2}),
                                      counter("d-" + std::to_string(k), "", {3, 4})};
                        if ((i + k) % 2) std::swap(r.counters[0], r.counters[1]);
                        stores[static_cast<std::size_t>(i)]->runs().insert(r);
                    }
                } catch (const std::exception& e) {
                    MESSAGE(e.what());
                    ++failures;
                }
            });
        }
        for (auto& t : threads) t.join();
        CHECK(failures == 0);
        CHECK(raw.integer("SELECT count(*) FROM projects WHERE name = 'racing'") == 1);
        CHECK(raw.integer("SELECT count(*) FROM benchmarks") == 3);
        CHECK(raw.integer("SELECT count(*) FROM counters") == 20);
        CHECK(raw.integer("SELECT count(*) FROM runs") == replicas * 10);
        CHECK(raw.integer("SELECT sum(runs) FROM benchmarks") == replicas * 10);
    }
    SUBCASE("the same detection from every replica at once opens one alert")
    {
        std::vector<std::int64_t> runs;
        for (int i = 0; i < 10; ++i)
            runs.push_back(stores[0]->runs().insert(make_run("demo", "parse", 1'700'000'000 + i)));
        ps::series_detection d;
        d.series = {"parse", "task-clock", "fp-runner-1", "main"};
        d.tail = runs;
        ps::detected_change change;
        change.record.run_id = runs[5];
        change.record.p_value = 1e-6;
        change.record.mean_before = change.record.median_before = 100;
        change.record.mean_after = change.record.median_after = 110;
        change.record.delta_pct = 10;
        change.record.shift = 10;
        change.record.shift_lower = 9;
        change.record.shift_upper = 11;
        change.worse = true;
        d.found = {change};
        std::atomic<int> opened{0}, failures{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < replicas; ++i) {
            threads.emplace_back([&, i] {
                try {
                    opened += static_cast<int>(
                        stores[static_cast<std::size_t>(i)]->alerts().apply_detection("demo", {d}).size());
                } catch (const std::exception& e) {
                    MESSAGE(e.what());
                    ++failures;
                }
            });
        }
        for (auto& t : threads) t.join();
        CHECK(failures == 0);
        CHECK(opened == 1);
        CHECK(raw.integer("SELECT count(*) FROM alerts") == 1);
        CHECK(raw.integer("SELECT count(*) FROM change_points") == 1);
    }
}

TEST_CASE("store (postgresql): sessions the server ended are replaced before a request gets one")
{
    test_database raw(perfgate::test::db_engine::postgresql);
    ps::store db(raw.location(), {3});
    db.runs().insert(make_run());
    // Every pooled connection has been used and sits idle.
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) readers.emplace_back([&] { CHECK(db.maintenance().runs_count() == 1); });
    for (auto& t : readers) t.join();
    // A restart or an operator ends them all (waiting until each has exited).
    raw.rows("SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity "
             "WHERE datname = current_database() AND pid <> pg_backend_pid()");
    for (int i = 0; i < 5; ++i) {
        CHECK(db.maintenance().runs_count() == 1 + i);
        CHECK(db.runs().insert(make_run("demo", "default", 1'700'000'100 + i)) > 0);
    }
}

TEST_CASE("store (postgresql): a full disk, SQLSTATE 53100, is store.full (HTTP 507), not a bare store.io")
{
    // Filling a real PostgreSQL server's disk needs a file system of its
    // own; the mapping from the SQLSTATE libpq reports is checked here
    // (Appendix A "Error Codes": 53100 disk_full, class 53 insufficient resources).
    CHECK(std::string(ps::detail::error_id_of("53100")) == "store.full");
    CHECK(std::string(ps::detail::error_id_of("53200")) == "store.io"); // out_of_memory
    CHECK(std::string(ps::detail::error_id_of("23505")) == "store.constraint");
    CHECK(std::string(ps::detail::error_id_of(nullptr)) == "store.io");
    const auto* e = perfgate::find_error("store.full");
    REQUIRE(e != nullptr);
    CHECK(e->http_status == 507);
}
