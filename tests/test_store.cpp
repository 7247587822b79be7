// Store tests: the real schema on a temporary file and on ":memory:", and on
// PostgreSQL. Test cases named "store: ..." run on the engine under test
// (support/database.hpp: ctest runs them on both); "store (sqlite): ..." and
// "store (postgresql): ..." test one engine's own behaviour (files,
// PRAGMAs, migrations from older versions; advisory locks, plans).
//
// This file: runs in and out, summaries, tokens, names, bound parameters,
// project settings, runs by id and sha. The others: test_store_migrations,
// _history, _comparisons, _concurrency, _postgresql.
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/tokens.hpp"
#include "store/webhooks.hpp"
#include "store_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

TEST_CASE("store: insert_run / load_run round trip")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    auto run = make_run();
    run.pr = 42;
    run.backend = "callgrind";
    run.environment_json = R"({"aslr":"off","governor":"performance"})";
    run.summary_only = true;
    run.counters.push_back({"instructions:u", "", {{0, 1.5e9, 87.5, 0.25}, {1, std::nullopt, 0.0, std::nullopt}}});

    const auto id = db.runs().insert(run);
    CHECK(id > 0);
    const auto loaded = db.runs().load("demo", id);
    REQUIRE(loaded);
    CHECK(loaded->id == id);
    CHECK(loaded->project == run.project);
    CHECK(loaded->benchmark == run.benchmark);
    CHECK(loaded->role == "baseline");
    CHECK(loaded->git_sha == run.git_sha);
    CHECK(loaded->branch == "main");
    CHECK(loaded->pr == 42);
    CHECK(loaded->backend == "callgrind");
    CHECK(loaded->environment_json == run.environment_json);
    CHECK(loaded->summary_only);
    CHECK(loaded->created_at == 1'700'000'000);
    CHECK(loaded->testbed.name == "ci-runner-1");
    CHECK(loaded->testbed.cpu == "AMD EPYC 7B13");
    CHECK(loaded->testbed.cores == 2);
    CHECK(loaded->testbed.kernel == "6.1.0-18-amd64");
    CHECK(loaded->testbed.fingerprint == "fp-runner-1");

    REQUIRE(loaded->counters.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& a = run.counters[i];
        const auto& b = loaded->counters[i];
        CHECK(b.counter == a.counter); // insertion order kept
        CHECK(b.unit == a.unit);
        REQUIRE(b.samples.size() == a.samples.size());
        for (std::size_t j = 0; j < a.samples.size(); ++j) {
            CHECK(b.samples[j].repetition == a.samples[j].repetition);
            CHECK(b.samples[j].value == a.samples[j].value); // absent stays absent, not 0
            CHECK(b.samples[j].pcnt_running == a.samples[j].pcnt_running);
            CHECK(b.samples[j].variance_pct == a.samples[j].variance_pct);
        }
    }

    SUBCASE("no pr, created_at 0 means now, empty fingerprint is computed")
    {
        auto r = make_run();
        r.created_at = 0;
        r.testbed.fingerprint.clear();
        const auto before = std::time(nullptr);
        const auto l = db.runs().load("demo", db.runs().insert(r));
        REQUIRE(l);
        CHECK_FALSE(l->pr.has_value());
        CHECK(l->created_at >= before);
        CHECK(l->created_at <= std::time(nullptr) + 1);
        // The one definition (model/testbed.hpp), as perfgate run computes it.
        CHECK(l->testbed.fingerprint == perfgate::model::testbed_fingerprint(r.testbed));
        CHECK(l->testbed.fingerprint.size() == 16);
    }
    SUBCASE("another project or a missing id is nullopt")
    {
        CHECK_FALSE(db.runs().load("other", id).has_value());
        CHECK_FALSE(db.runs().load("demo", id + 1000).has_value());
    }
}

TEST_CASE("store: summaries are computed at ingest")
{
    test_database raw;
    ps::store db(raw.location());
    auto run = make_run();
    run.counters[0] = counter("task-clock", "msec", {10, std::nullopt, 12, 11, 13, 14});
    const auto id = db.runs().insert(run);

    // x = {10, 12, 11, 13, 14}: median 12, mean 12, sd = sqrt(10/4) (R: sd(c(10,12,11,13,14))),
    // cov = sd / mean.
    const auto row = raw.rows("SELECT n, median, mean, min, max, stddev, cov FROM summaries s "
                              "JOIN counters c ON c.id = s.counter_id WHERE c.name = 'task-clock' AND run_id = " +
                              std::to_string(id));
    REQUIRE(row.size() == 1);
    // Doubles as each engine prints them.
    CHECK(row[0].starts_with(on_postgres() ? "5|12|12|10|14|" : "5|12.0|12.0|10.0|14.0|"));
    const auto h = db.history().points(query("demo", "default", "task-clock"));
    REQUIRE(h.size() == 1);
    CHECK(h[0].n == 5);
    CHECK(h[0].median == 12.0);
    CHECK(h[0].mean == 12.0);
    REQUIRE(h[0].stddev);
    CHECK(*h[0].stddev == doctest::Approx(std::sqrt(2.5)).epsilon(1e-12));
    REQUIRE(h[0].cov);
    CHECK(*h[0].cov == doctest::Approx(std::sqrt(2.5) / 12.0).epsilon(1e-12));
    CHECK(h[0].min == 10.0);
    CHECK(h[0].max == 14.0);
    CHECK(h[0].testbed == "fp-runner-1");
    CHECK(h[0].testbed_name == "ci-runner-1");

    // All-absent counter: a summary with n = 0 and NULL statistics, and no history.
    CHECK(raw.one("SELECT n, median, stddev FROM summaries s JOIN counters c ON c.id = s.counter_id "
                  "WHERE c.name = 'cycles'") == "0|NULL|NULL");
    CHECK(db.history().points(query("demo", "default", "cycles")).empty());

    SUBCASE("one value: stddev and cov are NULL")
    {
        auto r = make_run("demo", "single");
        r.counters = {counter("page-faults", "", {120})};
        db.runs().insert(r);
        const auto p = db.history().points(query("demo", "single", "page-faults"));
        REQUIRE(p.size() == 1);
        CHECK(p[0].n == 1);
        CHECK(p[0].median == 120.0);
        CHECK_FALSE(p[0].stddev.has_value());
        CHECK_FALSE(p[0].cov.has_value());
        CHECK(p[0].min == 120.0);
        CHECK(p[0].max == 120.0);
    }
}

TEST_CASE("store: tokens are random, hashed and bound to one project")
{
    test_database raw;
    ps::store db(raw.location());
    const auto token = db.tokens().create("demo", "ci");
    const auto other = db.tokens().create("other-project", "ci");

    CHECK(token.size() == 67);
    CHECK(token.starts_with("pg_"));
    CHECK(token.find_first_not_of("0123456789abcdef", 3) == std::string::npos);
    CHECK(token != other);
    CHECK(db.projects().exists("demo")); // create_token creates the project

    CHECK(db.tokens().project_of(token) == "demo");
    CHECK(db.tokens().project_of(other) == "other-project");

    auto wrong = token;
    wrong.back() = wrong.back() == '0' ? '1' : '0';
    CHECK_FALSE(db.tokens().project_of(wrong).has_value());
    CHECK_FALSE(db.tokens().project_of("").has_value());
    CHECK_FALSE(db.tokens().project_of("pg_").has_value());
    CHECK_FALSE(db.tokens().project_of(token.substr(3)).has_value());
    CHECK_FALSE(db.tokens().project_of(token + "0").has_value());

    // Only the SHA-256 of the whole token is stored, never the token.
    const auto stored = raw.rows("SELECT sha256 FROM api_tokens ORDER BY id");
    CHECK(stored == std::vector<std::string>{sha256_hex(token), sha256_hex(other)});
    CHECK(raw.integer("SELECT count(*) FROM api_tokens WHERE name = 'ci'") == 2);
}

TEST_CASE("store: a failed insert_run stores nothing")
{
    test_database raw;
    ps::store db(raw.location());
    db.runs().insert(make_run());
    auto counts = [&] {
        return raw.one("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM samples), "
                       "(SELECT count(*) FROM summaries), (SELECT count(*) FROM benchmarks), "
                       "(SELECT count(*) FROM projects), (SELECT count(*) FROM counters), "
                       "(SELECT count(*) FROM testbeds)");
    };
    const auto before = counts();

    SUBCASE("duplicate repetition in the last counter of a new project")
    {
        auto r = make_run("fresh-project", "fresh-bench");
        r.testbed.fingerprint = "fresh-testbed";
        r.counters.push_back({"fresh-counter", "", {{0, 1.0, 100, {}}, {0, 2.0, 100, {}}}});
        try {
            db.runs().insert(r);
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
            const std::string msg = e.what();
            CHECK(msg.find(ps::shown_location(raw.location())) != std::string::npos);
            CHECK(msg.find("counter 'fresh-counter' repetition 0 appears twice") != std::string::npos);
        }
        CHECK_FALSE(db.projects().exists("fresh-project"));
    }
    SUBCASE("bad role")
    {
        auto r = make_run();
        r.role = "contender";
        CHECK_THROWS_WITH_AS(db.runs().insert(r), doctest::Contains(check_failed_text().c_str()), error);
    }
    SUBCASE("duplicate counter")
    {
        auto r = make_run();
        r.counters.push_back(r.counters.front());
        CHECK_THROWS_WITH_AS(db.runs().insert(r), doctest::Contains("counter 'task-clock' appears twice"), error);
    }
    SUBCASE("empty project or counter name")
    {
        auto r = make_run("");
        CHECK_THROWS_WITH_AS(db.runs().insert(r), doctest::Contains(check_failed_text().c_str()), error);
        r = make_run();
        r.counters[1].counter.clear();
        CHECK_THROWS_WITH_AS(db.runs().insert(r), doctest::Contains(check_failed_text().c_str()), error);
    }
    SUBCASE("non-finite value (SQLite would store NaN as NULL, i.e. absent)")
    {
        auto r = make_run();
        r.counters[0].samples[3].value = std::nan("");
        try {
            db.runs().insert(r);
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
            CHECK(std::string(e.what()).find("counter 'task-clock' repetition 3") != std::string::npos);
        }
    }
    CHECK(counts() == before);
    CHECK(db.maintenance().runs_count() == 1);
    if (!on_postgres()) CHECK(raw.one("PRAGMA integrity_check") == "ok");
}

TEST_CASE("store: hostile names are stored verbatim and harmless")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const std::string project = "demo'; DROP TABLE runs; --";
    const std::string benchmark = std::string(10 * 1024, 'b') + "\" OR 1=1 --";
    const std::string counter_name = "task-clock'); DELETE FROM samples; --";
    auto r = make_run(project, benchmark, 1'700'000'000, "main' OR '1'='1");
    r.counters[0].counter = counter_name;
    r.git_sha = std::string("Robert'); DROP TABLE Students;--\0tail", 37);
    r.environment_json = std::string("{\"nul\": \"a\\u0000b\", \"q\": \"'\"}");
    if (on_postgres()) {
        // PostgreSQL's text holds no NUL byte: refused, never cut short.
        try {
            db.runs().insert(r);
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
            CHECK(std::string(e.what()).find("binding :git_sha: the value holds a NUL byte") != std::string::npos);
        }
        CHECK(db.maintenance().runs_count() == 0);
        r.git_sha = "Robert'); DROP TABLE Students;--";
    }
    const auto id = db.runs().insert(r);

    const auto l = db.runs().load(project, id);
    REQUIRE(l);
    CHECK(l->project == project);
    CHECK(l->benchmark == benchmark);
    CHECK(l->benchmark.size() == 10 * 1024 + 11);
    CHECK(l->branch == r.branch);
    CHECK(l->git_sha == r.git_sha);
    CHECK(l->environment_json == r.environment_json);
    CHECK(l->counters[0].counter == counter_name);

    auto q = query(project, benchmark, counter_name);
    q.branch = r.branch;
    CHECK(db.history().points(q).size() == 1);
    // Names with an array literal's syntax in them (PostgreSQL looks several
    // up at once: store/store.cpp, text_array).
    auto quoted = make_run(project, benchmark, 1'700'000'100, r.branch);
    quoted.git_sha = "0123";
    quoted.counters[0].counter = R"(a"b\c{d},e NULL)";
    db.runs().insert(quoted);
    const auto both = db.history().points_per_counter(q, {R"(a"b\c{d},e NULL)", counter_name, "NULL"});
    CHECK(both[0].size() == 1);
    CHECK(both[1].size() == 1);
    CHECK(both[2].empty());
    CHECK(db.history().points(query("demo", benchmark, counter_name)).empty()); // no prefix/wildcard matching
    const auto bs = db.history().benchmarks(project);
    REQUIRE(bs.size() == 1);
    CHECK(bs[0].name == benchmark);
    CHECK(db.maintenance().runs_count() == 2); // the tables are all still there
    CHECK(db.runs().load(project, id)->counters[0].samples.size() == 5);
}

// How f ended in a forked child: the aborting internal checks
// (PERFGATE_CHECK) end the process, so a test can only watch them from
// outside, as a death test does.
struct child_outcome {
    bool aborted = false; // killed by SIGABRT
    int exit_code = -1;   // when it exited instead: 0 f returned, 2 f threw
    std::string stderr_text;
};

child_outcome run_in_child(const std::function<void()>& f)
{
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // No doctest in the child (its state is the parent's), no core file,
        // and _exit: no atexit handlers, no second doctest report.
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        ::dup2(fds[1], STDERR_FILENO);
        ::close(fds[0]);
        ::close(fds[1]);
        try {
            f();
        } catch (...) {
            ::_exit(2);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    child_outcome out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.stderr_text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    out.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    return out;
}

TEST_CASE("store: a statement runs only with every parameter bound")
{
    // The statement layer is shared by both engines (store/db.hpp): the
    // same checks whichever one prepared the SQL.
    test_database where;
    auto projects = [&]() -> std::unique_ptr<perfgate::store::detail::connection> {
        if (on_postgres()) {
            auto c = std::make_unique<perfgate::store::detail::pg_connection>(where.location(), "test");
            c->exec("CREATE TABLE IF NOT EXISTS projects (id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                    "name text, note text)");
            c->exec("INSERT INTO projects (name) VALUES ('demo')");
            return c;
        }
        using perfgate::store::detail::sqlite_connection;
        auto c = std::make_unique<sqlite_connection>(":memory:", sqlite_connection::mode::read_write_create);
        c->exec("CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT, note TEXT)");
        c->exec("INSERT INTO projects (name) VALUES ('demo')");
        return c;
    };
    constexpr const char* select = "SELECT id FROM projects WHERE name = :project";

    SUBCASE("a misspelt name aborts at step, naming the unbound parameter and the SQL")
    {
        const auto out = run_in_child([&] {
            auto c = projects();
            auto st = c->prepare(select);
            st.bind(":projet", "demo"); // binds nothing: the SQL has no :projet
            st.step();                  // would find no row, as WHERE name = NULL
        });
        CHECK(out.aborted);
        CHECK(out.stderr_text.find("perfgate: internal check failed: every parameter is bound before the "
                                   "statement runs: :project is not, in \"SELECT id FROM projects WHERE "
                                   "name = :project\" (") != std::string::npos);
    }
    SUBCASE("the same statement, correctly bound, runs in the child")
    {
        const auto out = run_in_child([&] {
            auto c = projects();
            auto st = c->prepare(select);
            st.bind(":project", "demo");
            if (!st.step()) throw std::runtime_error("no row");
        });
        CHECK_FALSE(out.aborted);
        CHECK(out.exit_code == 0);
        CHECK(out.stderr_text.empty());
    }
    SUBCASE("the next lease on a cached statement starts unbound")
    {
        const auto out = run_in_child([&] {
            auto c = projects();
            {
                auto st = c->prepare(select);
                st.bind(":project", "demo");
                if (!st.step()) throw std::runtime_error("no row");
            } // the lease ends: bindings cleared
            c->prepare(select).step();
        });
        CHECK(out.aborted);
        CHECK(out.stderr_text.find(":project is not") != std::string::npos);
    }
    SUBCASE("bind_null binds; names the SQL lacks are ignored; run() keeps the bindings")
    {
        auto c = projects();
        {
            auto ins = c->prepare("INSERT INTO projects (name, note) VALUES (:name, :note)");
            ins.bind(":name", "a").bind_null(":note").bind(":branch", "not in this SQL: ignored");
            ins.run();
            ins.bind(":name", "b"); // :note is still bound (NULL)
            ins.run();
        }
        auto st = c->prepare("SELECT count(*) FROM projects WHERE note IS NULL AND name IN ('a', 'b')");
        REQUIRE(st.step());
        CHECK(st.int64(0) == 2);
    }
}

TEST_CASE("store: the repository URL is a project setting")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const std::string not_found = ps::shown_location(where.location()) + ": project 'nope' not found";
    db.projects().ensure("demo");
    db.projects().ensure("other");
    CHECK_FALSE(db.projects().repository_url("demo").has_value());
    db.projects().set_repository_url("demo", "https://github.com/acme/demo");
    CHECK(db.projects().repository_url("demo") == "https://github.com/acme/demo");
    CHECK_FALSE(db.projects().repository_url("other").has_value());
    db.projects().set_repository_url("demo", "");
    CHECK_FALSE(db.projects().repository_url("demo").has_value());

    CHECK_THROWS_WITH_AS((void)db.projects().repository_url("nope"), not_found.c_str(), error);
    CHECK_THROWS_WITH_AS(db.projects().set_repository_url("nope", "https://x.org"), not_found.c_str(), error);
    try {
        db.projects().set_repository_url("demo", "https://x.org/" + std::string(500, 'a'));
        FAIL("expected store.constraint");
    } catch (const error& e) {
        CHECK(e.id() == "store.constraint");
    }
    CHECK_FALSE(db.projects().repository_url("demo").has_value());
    db.projects().set_repository_url("demo", "https://x.org/" + std::string(498, 'a')); // 512 bytes
    CHECK(db.projects().repository_url("demo")->size() == 512);
}

TEST_CASE("store: change-point settings are a project setting, unset until set, each field on its own")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const std::string not_found = ps::shown_location(where.location()) + ": project 'nope' not found";
    db.projects().ensure("demo");
    db.projects().ensure("other");
    auto s = db.projects().change_point_settings_of("demo");
    CHECK_FALSE(s.method);
    CHECK_FALSE(s.window);
    CHECK_FALSE(s.max_p);
    CHECK_FALSE(s.min_magnitude);

    db.projects().set_change_point_settings("demo", ps::change_point_settings{"otava", 30, std::nullopt, std::nullopt});
    db.projects().set_change_point_settings("demo", ps::change_point_settings{std::nullopt, std::nullopt, 0.01, 0.025});
    s = db.projects().change_point_settings_of("demo");
    CHECK(s.method == "otava"); // kept by the second call
    CHECK(s.window == 30);
    CHECK(s.max_p == 0.01);
    CHECK(s.min_magnitude == 0.025);
    CHECK_FALSE(db.projects().change_point_settings_of("other").method);

    CHECK_THROWS_WITH_AS((void)db.projects().change_point_settings_of("nope"), not_found.c_str(), error);
    CHECK_THROWS_WITH_AS(db.projects().set_change_point_settings(
                             "nope", ps::change_point_settings{"otava", std::nullopt, std::nullopt, std::nullopt}),
                         not_found.c_str(), error);
    // The table's checks refuse what the service would (and change nothing).
    const std::vector<ps::change_point_settings> bad{
        ps::change_point_settings{"cusum", std::nullopt, std::nullopt, std::nullopt},
        ps::change_point_settings{std::nullopt, 1, std::nullopt, std::nullopt},
        ps::change_point_settings{std::nullopt, std::nullopt, 1.0, std::nullopt},
        ps::change_point_settings{std::nullopt, std::nullopt, 0.0, std::nullopt},
        ps::change_point_settings{std::nullopt, std::nullopt, std::nullopt, -0.5},
    };
    for (const auto& b : bad) {
        try {
            db.projects().set_change_point_settings("demo", b);
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
        }
    }
    s = db.projects().change_point_settings_of("demo");
    CHECK(s.method == "otava");
    CHECK(s.window == 30);
    CHECK(s.max_p == 0.01);
    CHECK(s.min_magnitude == 0.025);
}

TEST_CASE("store: runs by id and by git sha prefix")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const auto a_parse_1 = db.runs().insert(commit_run(sha_a, "parse", "fp-1", 100));
    const auto a_parse_1_again = db.runs().insert(commit_run(sha_a, "parse", "fp-1", 150, "demo", "main", "candidate"));
    const auto a_parse_2 = db.runs().insert(commit_run(sha_a, "parse", "fp-2", 120));
    const auto a_render_1 = db.runs().insert(commit_run(sha_a, "render", "fp-1", 110));
    const auto b_parse_1 = db.runs().insert(commit_run(sha_b, "parse", "fp-1", 200));
    const auto ab_parse_1 = db.runs().insert(commit_run("aaaa11f" + sha_a.substr(7), "parse", "fp-1", 300));
    const auto other = db.runs().insert(commit_run(sha_a, "parse", "fp-1", 400, "other"));

    SUBCASE("find_run: the run's identity, in its project only")
    {
        const auto r = db.runs().find("demo", a_parse_2);
        REQUIRE(r);
        CHECK(r->id == a_parse_2);
        CHECK(r->git_sha == sha_a);
        CHECK(r->branch == "main");
        CHECK(r->role == "baseline");
        CHECK(r->benchmark == "parse");
        CHECK(r->testbed == "fp-2");
        CHECK(r->testbed_name == "runner-fp-2");
        CHECK(r->created_at == 120);
        CHECK_FALSE(db.runs().find("demo", other).has_value());
        CHECK_FALSE(db.runs().find("demo", 9999).has_value());
        CHECK(db.runs().find("other", other)->benchmark == "parse");
    }
    SUBCASE("a whole sha: the newest run of each (benchmark, testbed), newest first")
    {
        const auto runs = db.runs().by_sha("demo", sha_a);
        REQUIRE(runs.size() == 3);
        CHECK(runs[0].id == a_render_1);
        CHECK(runs[1].id == a_parse_2);
        CHECK(runs[2].id == a_parse_1_again);
        CHECK(runs[2].role == "candidate");
        CHECK(runs[0].benchmark == "render");
        CHECK(runs[1].testbed == "fp-2");
        (void)a_parse_1;
    }
    SUBCASE("a prefix matches every sha that starts with it, and only those")
    {
        // "aaaa111" and "aaaa11f" both start with "aaaa11".
        const auto both = db.runs().by_sha("demo", "aaaa11");
        CHECK(both.size() == 4);
        CHECK(both.front().id == ab_parse_1);
        const auto one = db.runs().by_sha("demo", "aaaa111");
        CHECK(one.size() == 3);
        CHECK(std::none_of(one.begin(), one.end(), [&](const auto& r) { return r.id == ab_parse_1; }));
        // The range's upper end: "aaaa11f" raised is "aaaa11g"; nothing past it.
        const auto f = db.runs().by_sha("demo", "aaaa11f");
        REQUIRE(f.size() == 1);
        CHECK(f[0].id == ab_parse_1);
        const auto b = db.runs().by_sha("demo", "bbbb");
        REQUIRE(b.size() == 1);
        CHECK(b[0].id == b_parse_1);
    }
    SUBCASE("no match, another project's runs, an empty or unbounded prefix: nothing")
    {
        CHECK(db.runs().by_sha("demo", "cccc").empty());
        CHECK(db.runs().by_sha("demo", "").empty());
        CHECK(db.runs().by_sha("demo", "\xff\xff").empty());
        CHECK(db.runs().by_sha("nope", sha_a).empty());
        const auto theirs = db.runs().by_sha("other", "aaaa");
        REQUIRE(theirs.size() == 1);
        CHECK(theirs[0].id == other);
        // Case matters in the store; the service lowercases what people type.
        CHECK(db.runs().by_sha("demo", "AAAA111").empty());
    }
}

TEST_CASE("store: webhooks are kept per project with their delivery log, removed by id")
{
    test_database raw;
    ps::store db(raw.location());
    db.projects().ensure("demo");
    db.projects().ensure("other");
    const auto signed_id = db.webhooks().add("demo", "https://hooks.example.com/a", "json", std::string("s3cret"));
    const auto slack_id = db.webhooks().add("demo", "http://127.0.0.1:9/slack", "slack", std::nullopt);
    db.webhooks().add("other", "https://hooks.example.com/o", "json", std::nullopt);

    auto hooks = db.webhooks().list("demo");
    REQUIRE(hooks.size() == 2);
    CHECK(hooks[0].id == signed_id);
    CHECK(hooks[0].url == "https://hooks.example.com/a");
    CHECK(hooks[0].format == "json");
    CHECK(hooks[0].has_secret);
    CHECK_FALSE(hooks[0].last_outcome.has_value());
    CHECK(hooks[1].id == slack_id);
    CHECK_FALSE(hooks[1].has_secret);
    const auto targets = db.webhooks().targets("demo");
    REQUIRE(targets.size() == 2);
    CHECK(targets[0].secret == std::optional<std::string>("s3cret"));
    CHECK_FALSE(targets[1].secret.has_value());

    db.webhooks().record_delivery(slack_id, "failed", 4, "HTTP 500");
    db.webhooks().record_delivery(signed_id, "delivered", 1, "");
    hooks = db.webhooks().list("demo");
    CHECK(hooks[0].last_outcome == std::optional<std::string>("delivered"));
    CHECK(hooks[0].last_attempts == 1);
    CHECK_FALSE(hooks[0].last_error.has_value());
    CHECK(hooks[1].last_outcome == std::optional<std::string>("failed"));
    CHECK(hooks[1].last_attempts == 4);
    CHECK(hooks[1].last_error == std::optional<std::string>("HTTP 500"));
    CHECK(hooks[1].last_at.has_value());

    // Bad values are the schema's to refuse: nothing stored.
    CHECK_THROWS_AS((void)db.webhooks().add("demo", "https://x.org", "xml", std::nullopt), perfgate::error);
    CHECK_THROWS_AS((void)db.webhooks().add("demo", std::string(2049, 'h'), "json", std::nullopt), perfgate::error);
    CHECK_THROWS_AS((void)db.webhooks().add("nobody", "https://x.org", "json", std::nullopt), perfgate::error);
    CHECK(db.webhooks().list("demo").size() == 2);

    CHECK_FALSE(db.webhooks().remove("other", signed_id)); // another project's id
    CHECK(db.webhooks().remove("demo", signed_id));
    CHECK_FALSE(db.webhooks().remove("demo", signed_id));
    REQUIRE(db.webhooks().list("demo").size() == 1);
    CHECK(db.webhooks().list("other").size() == 1);
    db.webhooks().record_delivery(signed_id, "failed", 1, "gone"); // a removed webhook: nothing
    CHECK(raw.integer("SELECT count(*) FROM webhooks") == 2);
}

TEST_CASE("store: find_reusable_run matches commit, branch, benchmark, testbed, backend and toolchain exactly")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const auto callgrind_run = [](std::string role, std::int64_t at, std::string toolchain) {
        auto r = make_run("demo", "default", at, "main", std::move(role));
        r.backend = "callgrind";
        r.toolchain = std::move(toolchain);
        r.mainline = true; // a push's run (a pull request's is never reused: below)
        r.counters = {counter("instructions", "", {1000}), counter("estimated-cycles", "", {1500})};
        return r;
    };
    const std::string gcc = "GCC: (Ubuntu 11.4.0) 11.4.0 #0123456789abcdef";
    const auto older = db.runs().insert(callgrind_run("baseline", 1'700'000'000, gcc));
    const auto newer = db.runs().insert(callgrind_run("candidate", 1'700'000'100, gcc));
    (void)db.runs().insert(callgrind_run("candidate", 1'700'000'200, "clang 14 #fedcba9876543210"));
    (void)db.runs().insert(callgrind_run("candidate", 1'700'000'300, ""));
    CHECK(newer > older);
    CHECK(db.runs().load("demo", newer)->toolchain == gcc); // stored and read back

    ps::reusable_run_query q{"demo", "default", make_run().git_sha, "main", "fp-runner-1", "callgrind", gcc};
    const auto found = db.runs().find_reusable(q);
    REQUIRE(found.has_value());
    CHECK(found->run_id == newer); // the newest of that commit, either role
    CHECK(found->role == "candidate");
    CHECK(found->git_sha == q.git_sha);
    CHECK(found->branch == "main");
    CHECK(found->toolchain == gcc);
    CHECK(found->created_at == 1'700'000'100);
    CHECK(found->counters == std::vector<std::string>{"instructions", "estimated-cycles"});

    // Each part of the key alone keeps a run from being reused.
    const auto without = [&](auto change) {
        auto other = q;
        change(other);
        return db.runs().find_reusable(other).has_value();
    };
    CHECK_FALSE(without([](auto& o) { o.toolchain = "GCC: (Ubuntu 12.3.0) 12.3.0 #1111111111111111"; }));
    CHECK_FALSE(without([](auto& o) { o.toolchain.clear(); })); // unknown is never reused
    CHECK_FALSE(without([](auto& o) { o.git_sha = std::string(40, 'f'); }));
    CHECK_FALSE(without([](auto& o) { o.branch = "feature"; }));
    CHECK_FALSE(without([](auto& o) { o.benchmark = "other"; }));
    CHECK_FALSE(without([](auto& o) { o.testbed = "fp-runner-2"; }));
    CHECK_FALSE(without([](auto& o) { o.backend = "memcheck"; }));
    CHECK_FALSE(without([](auto& o) { o.project = "elsewhere"; }));
    CHECK(db.runs()
              .find_reusable(ps::reusable_run_query{"demo", "default", q.git_sha, "main", "fp-runner-1", "callgrind",
                                                    "clang 14 #fedcba9876543210"})
              ->created_at == 1'700'000'200);

    SUBCASE("a newer run that does not feed the series (a pull request's) is never reused (issue 44)")
    {
        auto pr = callgrind_run("baseline", 1'700'000'500, gcc);
        pr.mainline = false;
        pr.pr = 12;
        const auto pr_run = db.runs().insert(pr);
        const auto again = db.runs().find_reusable(q);
        REQUIRE(again.has_value());
        CHECK(again->run_id == newer);
        CHECK(again->run_id != pr_run);
    }
    SUBCASE("a toolchain longer than the schema's 256 characters is refused")
    {
        CHECK_THROWS_AS((void)db.runs().insert(callgrind_run("baseline", 1'700'000'400, std::string(257, 'x'))), error);
    }
}
