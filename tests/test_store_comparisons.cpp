// The store's comparisons: stored with their benchmarks and flame graphs,
// found by request key, stored in batches all or nothing.
#include "store/acceptances.hpp"
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

TEST_CASE("store: comparisons and benchmarks")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const auto base = db.runs().insert(make_run("demo", "parse", 1'700'000'000));
    auto cand_run = make_run("demo", "parse", 1'700'000'100, "feature", "candidate");
    cand_run.counters.push_back(counter("page-faults", "", {10, 10}));
    const auto cand = db.runs().insert(cand_run);
    db.runs().insert(make_run("demo", "alpha", 1'600'000'000));
    const auto foreign = db.runs().insert(make_run("other"));

    const std::string report = R"({"schema":"perfgate.report/v1","verdict":"pass"})";
    const auto cid = db.comparisons().insert("demo", base, cand, report);
    CHECK(db.comparisons().load("demo", cid) == report);
    CHECK_FALSE(db.comparisons().load("other", cid).has_value());
    CHECK_FALSE(db.comparisons().load("demo", cid + 1).has_value());

    CHECK_THROWS_WITH_AS(db.comparisons().insert("demo", base, foreign, report),
                         doctest::Contains(("run " + std::to_string(foreign) + " not found in project 'demo'").c_str()),
                         error);
    CHECK_THROWS_WITH_AS(db.comparisons().insert("demo", 9999, cand, report), doctest::Contains("run 9999"), error);
    CHECK_THROWS_WITH_AS(db.comparisons().insert("nope", base, cand, report), doctest::Contains("project 'nope'"),
                         error);
    try {
        db.comparisons().insert("demo", 9999, cand, report);
    } catch (const error& e) {
        CHECK(e.id() == "store.not_found");
    }

    const auto bs = db.history().benchmarks("demo");
    REQUIRE(bs.size() == 2);
    CHECK(bs[0].name == "alpha");
    CHECK(bs[0].runs == 1);
    CHECK(bs[0].last_run_at == 1'600'000'000);
    CHECK(bs[1].name == "parse");
    CHECK(bs[1].runs == 2);
    CHECK(bs[1].last_run_at == 1'700'000'100);
    CHECK(bs[1].counters == std::vector<std::string>{"cycles", "page-faults", "task-clock"});
    CHECK(db.history().benchmarks("nobody").empty());
    CHECK(db.maintenance().runs_count() == 4);

    CHECK(db.projects().ensure("fresh") == db.projects().ensure("fresh"));
    CHECK(db.projects().exists("fresh"));
    CHECK_FALSE(db.projects().exists("Fresh"));
}

TEST_CASE("store: flame graphs stored with a comparison (007_artifacts.sql)")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const auto base = db.runs().insert(make_run("demo", "parse", 1'700'000'000));
    const auto cand = db.runs().insert(make_run("demo", "parse", 1'700'000'100, "feature", "candidate"));
    const auto cid = db.comparisons().insert("demo", base, cand, R"({"schema":"perfgate.report/v1","verdict":"fail"})");
    db.runs().insert(make_run("other"));

    CHECK(db.artifacts().flame_graph_benchmarks("demo", cid).empty());
    CHECK_FALSE(db.artifacts().load_flame_graph("demo", cid, "parse").has_value());
    db.artifacts().put_flame_graph("demo", cid, "parse", "<svg>1</svg>");
    db.artifacts().put_flame_graph("demo", cid, "a/b", "<svg>2</svg>");
    CHECK(db.artifacts().load_flame_graph("demo", cid, "parse") == "<svg>1</svg>");
    CHECK(db.artifacts().flame_graph_benchmarks("demo", cid) == std::vector<std::string>{"a/b", "parse"});
    // Stored again: replaced.
    const auto before = db.generation();
    db.artifacts().put_flame_graph("demo", cid, "parse", "<svg>3</svg>");
    CHECK(db.artifacts().load_flame_graph("demo", cid, "parse") == "<svg>3</svg>");
    CHECK(db.generation() > before); // the dashboard's cached comparison page is stale
    // Another project sees none of them.
    CHECK_FALSE(db.artifacts().load_flame_graph("other", cid, "parse").has_value());
    CHECK(db.artifacts().flame_graph_benchmarks("other", cid).empty());

    CHECK_THROWS_WITH_AS(
        db.artifacts().put_flame_graph("other", cid, "parse", "<svg/>"),
        doctest::Contains(("comparison " + std::to_string(cid) + " not found in project 'other'").c_str()), error);
    CHECK_THROWS_WITH_AS(db.artifacts().put_flame_graph("demo", cid + 1, "parse", "<svg/>"),
                         doctest::Contains("not found"), error);
    CHECK_THROWS_WITH_AS(db.artifacts().put_flame_graph("demo", cid, "parse", ""),
                         doctest::Contains("a flame graph of 0 bytes"), error);
    CHECK_THROWS_WITH_AS(db.artifacts().put_flame_graph("demo", cid, "parse",
                                                        std::string(ps::artifacts::max_artifact_bytes + 1, 'x')),
                         doctest::Contains("(1 to 4194304 allowed)"), error);
    // The table's own checks, below the store's: an empty benchmark name.
    try {
        db.artifacts().put_flame_graph("demo", cid, "", "<svg/>");
        FAIL("an empty benchmark name was stored");
    } catch (const error& e) {
        CHECK(e.id() == "store.constraint");
    }
    // At the limit: stored.
    db.artifacts().put_flame_graph("demo", cid, "big", std::string(ps::artifacts::max_artifact_bytes, 'x'));
    CHECK(db.artifacts().load_flame_graph("demo", cid, "big")->size() == ps::artifacts::max_artifact_bytes);
}

TEST_CASE("store: a comparison's artifacts are bounded in number and bytes, replacements count their new size")
{
    test_database where(test_database::sqlite_kind::file);
    ps::store db(where.location());
    const auto base = db.runs().insert(make_run("demo", "parse", 1'700'000'000));
    const auto cand = db.runs().insert(make_run("demo", "parse", 1'700'000'100, "feature", "candidate"));
    const auto cid = db.comparisons().insert("demo", base, cand, R"({"schema":"perfgate.report/v1","verdict":"fail"})");
    const auto other = db.comparisons().insert("demo", base, cand,
                                               R"({"schema":"perfgate.report/v1","verdict":"fail"})");
    const auto refused = [&](auto&& put, const char* text) {
        try {
            put();
            FAIL("stored beyond the limit");
        } catch (const error& e) {
            CHECK(e.id() == "artifact.too_many");
            CHECK_MESSAGE(std::string(e.what()).find(text) != std::string::npos, e.what());
        }
    };

    // Bytes: 15 flame graphs of 4 MiB and one of 4 MiB - 1 fill 64 MiB but one byte.
    const std::string full(ps::artifacts::max_artifact_bytes, 'x');
    constexpr std::size_t n = ps::artifacts::max_artifact_bytes_per_comparison / ps::artifacts::max_artifact_bytes;
    static_assert(n == 16);
    for (std::size_t i = 0; i + 1 < n; ++i) db.artifacts().put_flame_graph("demo", cid, "b" + std::to_string(i), full);
    db.artifacts().put_flame_graph("demo", cid, "last", std::string(full.size() - 1, 'y'));
    refused([&] { db.artifacts().put_attribution("demo", cid, "more", "{}{}"); },
            "67108863 bytes of artifacts; 4 more");
    // Replacing one counts its new size, not old and new together.
    db.artifacts().put_flame_graph("demo", cid, "b0", full);
    db.artifacts().put_flame_graph("demo", cid, "last", full);
    refused([&] { db.artifacts().put_attribution("demo", cid, "more", "{}"); },
            "limit of 67108864 bytes (64 MiB) per comparison");
    CHECK(db.artifacts().load_attributions("demo", cid).empty());
    // Another comparison has its own budget.
    db.artifacts().put_flame_graph("demo", other, "b0", full);

    // Number: at most max_artifacts_per_comparison, flame graphs and attributions together.
    const auto third = db.comparisons().insert("demo", base, cand,
                                               R"({"schema":"perfgate.report/v1","verdict":"fail"})");
    for (std::size_t i = 0; i < ps::artifacts::max_artifacts_per_comparison / 2; ++i) {
        db.artifacts().put_flame_graph("demo", third, "f" + std::to_string(i), "<svg/>");
        db.artifacts().put_attribution("demo", third, "f" + std::to_string(i), "{}");
    }
    refused([&] { db.artifacts().put_flame_graph("demo", third, "one-more", "<svg/>"); },
            "already holds 1000 artifacts");
    db.artifacts().put_flame_graph("demo", third, "f0", "<svg>again</svg>"); // a replacement is not one more
    CHECK(db.artifacts().load_flame_graph("demo", third, "f0") == "<svg>again</svg>");
    CHECK(db.artifacts().flame_graph_benchmarks("demo", third).size() ==
          ps::artifacts::max_artifacts_per_comparison / 2);
}

TEST_CASE("store: comparisons by request key")
{
    test_database where(test_database::sqlite_kind::memory);
    ps::store db(where.location());
    const auto base = db.runs().insert(make_run("demo", "parse", 1'700'000'000));
    const auto cand = db.runs().insert(make_run("demo", "parse", 1'700'000'100, "feature", "candidate"));
    const auto other_base = db.runs().insert(make_run("other", "parse"));
    const auto other_cand = db.runs().insert(make_run("other", "parse", 1'700'000'100, "feature", "candidate"));
    const std::string key = sha256_hex("request 1"), key2 = sha256_hex("request 2");
    const std::string report = R"({"schema":"perfgate.report/v1","verdict":"pass"})";

    CHECK_FALSE(db.comparisons().find("demo", key).has_value());
    const auto id = db.comparisons().insert("demo", base, cand, report, key);
    const auto found = db.comparisons().find("demo", key);
    REQUIRE(found.has_value());
    CHECK(found->first == id);
    CHECK(found->second == report);
    CHECK(db.comparisons().load("demo", id) == report);

    SUBCASE("the same key again stores nothing and returns the first row")
    {
        CHECK(db.comparisons().insert("demo", base, cand, R"({"verdict":"fail"})", key) == id);
        CHECK(db.comparisons().find("demo", key)->second == report);
        const auto next = db.comparisons().insert("demo", base, cand, report, key2);
        // SQLite's rowids: the repeat did not take one. A PostgreSQL identity
        // draws its number before the conflict is found: a gap, no row.
        if (on_postgres()) CHECK(next > id);
        else CHECK(next == id + 1);
        CHECK(db.comparisons().find("demo", key2)->first == next);
    }
    SUBCASE("keys are per project")
    {
        CHECK_FALSE(db.comparisons().find("other", key).has_value());
        CHECK_FALSE(db.comparisons().find("nobody", key).has_value());
        const auto theirs = db.comparisons().insert("other", other_base, other_cand, report, key);
        CHECK(theirs != id);
        CHECK(db.comparisons().find("other", key)->first == theirs);
        CHECK(db.comparisons().find("demo", key)->first == id);
    }
    SUBCASE("unkeyed comparisons never collide")
    {
        const auto a = db.comparisons().insert("demo", base, cand, report);
        const auto b = db.comparisons().insert("demo", base, cand, report);
        CHECK(a != b);
        CHECK(db.comparisons().load("demo", b) == report);
    }
    SUBCASE("a key that is not a hex SHA-256 is store.constraint; errors of the plain insert still apply")
    {
        CHECK_THROWS_WITH_AS(db.comparisons().insert("demo", base, cand, report, "ABC"),
                             (ps::shown_location(where.location()) +
                              ": comparison request_key must be 64 lowercase hex digits (a SHA-256), got 'ABC'")
                                 .c_str(),
                             error);
        try {
            db.comparisons().insert("demo", base, cand, report, std::string(64, 'G'));
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
        }
        try {
            db.comparisons().insert("demo", base, other_cand, report, key2);
            FAIL("expected store.not_found");
        } catch (const error& e) {
            CHECK(e.id() == "store.not_found");
            CHECK(std::string(e.what()).find("run " + std::to_string(other_cand) + " not found in project 'demo'") !=
                  std::string::npos);
        }
        CHECK_FALSE(db.comparisons().find("demo", key2).has_value());
    }
}

TEST_CASE("store: insert_comparisons stores a batch in one transaction, all or nothing")
{
    test_database where;
    ps::store db(where.location());
    const auto base = db.runs().insert(make_run("demo", "parse", 1'700'000'000));
    const auto cand = db.runs().insert(make_run("demo", "parse", 1'700'000'100, "feature", "candidate"));
    const auto foreign = db.runs().insert(make_run("other", "parse", 1'700'000'100, "feature", "candidate"));
    const auto row = [&](std::string key, std::string report, std::int64_t candidate) {
        return ps::comparison_row{"demo", base, candidate, std::move(report), sha256_hex(key), "pass", 1};
    };
    const auto stored_before = db.comparisons().insert("demo", base, cand, R"({"verdict":"pass","n":0})",
                                                       sha256_hex("stored before"));

    SUBCASE("ids in order; a key seen earlier in the batch or in the store gives that row's id")
    {
        const std::vector<ps::comparison_row> rows{row("a", R"({"verdict":"pass","n":1})", cand),
                                                   row("b", R"({"verdict":"pass","n":2})", cand),
                                                   row("a", R"({"verdict":"pass","n":3})", cand),
                                                   row("stored before", R"({"verdict":"pass","n":4})", cand)};
        const auto ids = db.comparisons().insert_all(rows);
        REQUIRE(ids.size() == 4);
        CHECK(ids[0] > stored_before);
        CHECK(ids[1] > stored_before);
        CHECK(ids[1] != ids[0]);
        CHECK(ids[2] == ids[0]);
        CHECK(ids[3] == stored_before);
        // The first row under a key is the one kept.
        CHECK(db.comparisons().find("demo", sha256_hex("a"))->second == R"({"verdict":"pass","n":1})");
        CHECK(db.comparisons().load("demo", ids[1]) == R"({"verdict":"pass","n":2})");
        CHECK(db.comparisons().load("demo", stored_before) == R"({"verdict":"pass","n":0})");
        // The facts are stored as given.
        const auto recent = db.comparisons().recent("demo", 10);
        REQUIRE(recent.size() == 3);
        for (const auto& c : recent) CHECK(c.verdict == "pass");
    }
    SUBCASE("a bad row rolls the whole batch back and is thrown")
    {
        const std::vector<ps::comparison_row> rows{row("c", R"({"verdict":"pass"})", cand),
                                                   row("d", R"({"verdict":"pass"})", foreign),
                                                   row("e", R"({"verdict":"pass"})", cand)};
        try {
            db.comparisons().insert_all(rows);
            FAIL("expected store.not_found");
        } catch (const error& e) {
            CHECK(e.id() == "store.not_found");
            CHECK(std::string(e.what()).find("run " + std::to_string(foreign) + " not found in project 'demo'") !=
                  std::string::npos);
        }
        for (const char* key : {"c", "d", "e"}) CHECK_FALSE(db.comparisons().find("demo", sha256_hex(key)).has_value());
        CHECK(db.comparisons().recent("demo", 10).size() == 1);
    }
    SUBCASE("the insert checks its runs itself: a run never stored is refused, a run against itself is stored")
    {
        // The batch's insert counts the pair's runs in the statement that
        // inserts (one statement per row, issue 47): none missing, from
        // another project or counted twice.
        const std::vector<ps::comparison_row> missing{row("i", R"({"verdict":"pass"})", cand + foreign + 100)};
        try {
            db.comparisons().insert_all(missing);
            FAIL("expected store.not_found");
        } catch (const error& e) {
            CHECK(e.id() == "store.not_found");
            CHECK(std::string(e.what()).find("run " + std::to_string(cand + foreign + 100) +
                                             " not found in project 'demo'") != std::string::npos);
        }
        auto self = row("j", R"({"verdict":"pass"})", base);
        const auto ids = db.comparisons().insert_all(std::vector<ps::comparison_row>{self});
        REQUIRE(ids.size() == 1);
        CHECK(db.comparisons().load("demo", ids[0]) == R"({"verdict":"pass"})");
        // A stored key is found again even when it is a run against itself.
        CHECK(db.comparisons().insert_all(std::vector<ps::comparison_row>{self}) == ids);
        CHECK_FALSE(db.comparisons().find("demo", sha256_hex("i")).has_value());
        CHECK(db.comparisons().recent("demo", 10).size() == 2);
    }
    SUBCASE("a bad key or verdict is refused; an empty batch stores nothing")
    {
        auto bad_key = row("f", R"({"verdict":"pass"})", cand);
        bad_key.request_key = "ABC";
        const std::vector<ps::comparison_row> keyed{row("g", R"({"verdict":"pass"})", cand), bad_key};
        CHECK_THROWS_WITH_AS(db.comparisons().insert_all(keyed),
                             doctest::Contains("request_key must be 64 lowercase hex digits"), error);
        auto bad_verdict = row("h", R"({"verdict":"pass"})", cand);
        bad_verdict.verdict = "maybe";
        const std::vector<ps::comparison_row> judged{bad_verdict};
        try {
            db.comparisons().insert_all(judged);
            FAIL("expected store.constraint");
        } catch (const error& e) {
            CHECK(e.id() == "store.constraint");
        }
        CHECK(db.comparisons().insert_all({}).empty());
        CHECK_FALSE(db.comparisons().find("demo", sha256_hex("g")).has_value());
        CHECK(db.comparisons().recent("demo", 10).size() == 1);
    }
}

TEST_CASE("store: an acceptance is stored with the newest comparison of its candidate commit, never another's")
{
    test_database where(test_database::sqlite_kind::file);
    ps::store db(where.location());
    const auto base = db.runs().insert(commit_run(sha_a, "parse", "fp1", 1'700'000'000));
    const auto cand_b1 = db.runs().insert(commit_run(sha_b, "parse", "fp1", 1'700'000'100, "demo", "feature",
                                                     "candidate"));
    const auto cand_b2 = db.runs().insert(commit_run(sha_b, "parse", "fp1", 1'700'000'200, "demo", "feature",
                                                     "candidate"));
    const std::string sha_c = "cccc333ccccccccccccccccccccccccccccccccc";
    const auto cand_c = db.runs().insert(commit_run(sha_c, "parse", "fp1", 1'700'000'300, "demo", "feature",
                                                    "candidate"));
    db.runs().insert(make_run("other"));
    const std::string report = R"({"schema":"perfgate.report/v1","verdict":"fail"})";
    const auto older = db.comparisons().insert("demo", base, cand_b1, report);
    const auto newer = db.comparisons().insert("demo", base, cand_b2, report);
    const auto of_c = db.comparisons().insert("demo", base, cand_c, report);

    // No comparison has the commit as its candidate (sha_a is the baseline's): nothing stored.
    CHECK_FALSE(db.acceptances().accept("demo", sha_a, "octocat", "why").has_value());
    CHECK_FALSE(db.acceptances().accept("other", sha_b, "octocat", "why").has_value());
    CHECK(where.integer("SELECT count(*) FROM acceptances") == 0);
    CHECK_THROWS_WITH_AS((void)db.acceptances().accept("nope", sha_b, "octocat", "why"),
                         doctest::Contains("project 'nope'"), error);

    const auto before = db.generation();
    const auto a = db.acceptances().accept("demo", sha_b, "octocat", "the fix is worth 5%");
    REQUIRE(a.has_value());
    CHECK(a->comparison_id == newer);
    CHECK(a->head_sha == sha_b);
    CHECK(a->login == "octocat");
    CHECK(a->reason == "the fix is worth 5%");
    CHECK(a->accepted_at > 1'700'000'000);
    CHECK(db.generation() > before); // the dashboard's cached comparison page is stale

    const auto loaded = db.acceptances().load("demo", newer);
    REQUIRE(loaded.has_value());
    CHECK_FALSE(loaded->written_by.has_value()); // no token: the CLI on the database
    CHECK(loaded->login == "octocat");
    CHECK(loaded->reason == "the fix is worth 5%");
    CHECK(loaded->head_sha == sha_b);
    // The older comparison of the same commit, the other commit's, and another project see none.
    CHECK_FALSE(db.acceptances().load("demo", older).has_value());
    CHECK_FALSE(db.acceptances().load("demo", of_c).has_value());
    CHECK_FALSE(db.acceptances().load("other", newer).has_value());

    // Accepting again replaces who and why: one row per comparison.
    // ... and which token wrote it (issue 43, finding 10).
    const auto again = db.acceptances().accept("demo", sha_b, "hubot[bot]", "",
                                               perfgate::model::token_ref{7, "accept"});
    REQUIRE(again.has_value());
    CHECK(again->comparison_id == newer);
    CHECK(db.acceptances().load("demo", newer)->login == "hubot[bot]");
    CHECK(db.acceptances().load("demo", newer)->reason.empty());
    CHECK(db.acceptances().load("demo", newer)->written_by == perfgate::model::token_ref{7, "accept"});
    CHECK(where.integer("SELECT count(*) FROM acceptances") == 1);
}
