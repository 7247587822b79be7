// Stored qualifications (issue 46, "Stored and shown"): the newest per
// testbed and benchmark, counters kept exactly, bad values refused by the
// service naming the field with nothing stored.
#include "store/qualifications.hpp"
#include "store/runs.hpp"
#include "store_cases.hpp"

#include <doctest/doctest.h>

using namespace perfgate::test::store_cases;

namespace {

perfgate::model::qualification sample_qualification(std::string fingerprint, std::string benchmark, std::int64_t when)
{
    perfgate::model::qualification q;
    q.testbed_fingerprint = std::move(fingerprint);
    q.testbed = "ci-runner";
    q.benchmark = std::move(benchmark);
    q.backend = "rusage";
    q.qualified_at = when;
    q.counters = {{"task-clock", 5, 10, 30, true, false},
                  {"instructions", 1, std::nullopt, std::nullopt, false, false}};
    q.counters[1].deterministic = true;
    q.counters[1].reaches_threshold = true;
    return q;
}

} // namespace

TEST_CASE("store: qualifications keep every row and answer the newest per testbed and benchmark")
{
    test_database where(test_database::sqlite_kind::file);
    ps::store db(where.location());
    db.runs().insert(make_run("demo"));
    db.runs().insert(make_run("other"));
    perfgate::service::service svc(db);

    const auto first = svc.qualifications().add("demo", sample_qualification("fp1", "parse", 1'700'000'000));
    CHECK(first.id > 0);
    CHECK(first.stored_at > 0);
    auto newer_q = sample_qualification("fp1", "parse", 1'700'000'500);
    newer_q.counters[0].detects_80_pct = 7.5;
    const auto newer = svc.qualifications().add("demo", newer_q, perfgate::model::token_ref{42, "ci"});
    svc.qualifications().add("demo", sample_qualification("fp2", "parse", 1'700'000'100));
    svc.qualifications().add("demo", sample_qualification("fp1", "lex", 1'700'000'200));
    svc.qualifications().add("other", sample_qualification("fp1", "parse", 1'700'000'300));

    const auto listed = svc.qualifications().newest("demo");
    // (fp1, parse) once, its newest; newest stored first.
    REQUIRE(listed.size() == 3);
    CHECK(listed[0].benchmark == "lex");
    CHECK(listed[1].testbed_fingerprint == "fp2");
    const std::vector<perfgate::model::qualification> all{listed[2]};
    CHECK(all[0].id == newer.id);
    CHECK(all[0].qualified_at == 1'700'000'500);
    REQUIRE(all[0].written_by.has_value());
    CHECK(all[0].written_by->name == "ci");
    REQUIRE(all[0].counters.size() == 2);
    // Ordered by counter name.
    CHECK(all[0].counters[0].counter == "instructions");
    CHECK(all[0].counters[0].deterministic);
    CHECK_FALSE(all[0].counters[0].detects_80_pct.has_value());
    CHECK(all[0].counters[1].counter == "task-clock");
    CHECK(all[0].counters[1].detects_80_pct == 7.5);
    CHECK(all[0].counters[1].detects_95_pct == 30);
    CHECK(all[0].counters[1].threshold_pct == 5);
    CHECK_FALSE(all[0].counters[1].deterministic);

    const auto fp2 = svc.qualifications().newest("demo", "fp2");
    REQUIRE(fp2.size() == 1);
    CHECK(fp2[0].testbed_fingerprint == "fp2");
    const auto lex = svc.qualifications().newest("demo", "fp1", "lex");
    REQUIRE(lex.size() == 1);
    CHECK(lex[0].benchmark == "lex");
    CHECK(svc.qualifications().newest("demo", "fp9").empty());
    CHECK(svc.qualifications().newest("other").size() == 1);

    CHECK(perfgate::model::detects_line(all[0], all[0].counters[1]) ==
          "this testbed detects \u2265 7.5% of task-clock (qualified 2023-11-14)");
    CHECK(perfgate::model::detects_line(all[0], all[0].counters[0]).find("deterministic") != std::string::npos);
    auto none = all[0].counters[1];
    none.detects_80_pct.reset();
    CHECK(perfgate::model::detects_line(all[0], none) ==
          "this testbed caught no slowdown of task-clock in 80% of gates (qualified 2023-11-14)");

    // Bad values: 400-class errors naming the field, nothing stored.
    const auto rows_before = svc.qualifications().newest("demo");
    REQUIRE(rows_before.size() == 3);
    auto refused = [&](perfgate::model::qualification q, const std::string& field) {
        try {
            svc.qualifications().add("demo", std::move(q));
            FAIL("stored: " << field);
        } catch (const error& e) {
            CHECK(e.id() == "ingest.bad_field");
            CHECK_MESSAGE(std::string(e.what()).find(field) != std::string::npos, e.what());
        }
    };
    auto q = sample_qualification("", "parse", 1);
    refused(q, "testbed_fingerprint");
    q = sample_qualification("fp1", std::string(perfgate::model::max_qualification_text_bytes + 1, 'b'), 1);
    refused(q, "benchmark");
    q = sample_qualification("fp1", "parse", 0);
    refused(q, "date");
    q = sample_qualification("fp1", "parse", 1);
    q.counters.clear();
    refused(q, "counters");
    q.counters.assign(perfgate::model::max_qualified_counters + 1, {"c", 5, std::nullopt, std::nullopt, false, false});
    for (std::size_t i = 0; i < q.counters.size(); ++i) q.counters[i].counter = fmt::format("c{}", i);
    refused(q, "counters");
    q = sample_qualification("fp1", "parse", 1);
    q.counters[1].counter = "task-clock";
    refused(q, "counters[1].counter");
    q = sample_qualification("fp1", "parse", 1);
    q.counters[0].threshold_pct = 0;
    refused(q, "counters[0].threshold_pct");
    q = sample_qualification("fp1", "parse", 1);
    q.counters[0].detects_95_pct = std::nan("");
    refused(q, "counters[0].detects_95_pct");
    q = sample_qualification("fp1", "parse", 1);
    q.testbed = "two\nlines";
    refused(q, "testbed");
    CHECK_THROWS_AS(svc.qualifications().add("nope", sample_qualification("fp1", "parse", 1)), error);
    CHECK_THROWS_AS((void)svc.qualifications().newest("nope"), error);
    const auto rows_after = svc.qualifications().newest("demo");
    REQUIRE(rows_after.size() == rows_before.size());
    CHECK(rows_after[0].id == rows_before[0].id);
    // A full set of counters is stored.
    q = sample_qualification("fp3", "parse", 1);
    q.counters.assign(perfgate::model::max_qualified_counters, {"c", 5, std::nullopt, std::nullopt, false, false});
    for (std::size_t i = 0; i < q.counters.size(); ++i) q.counters[i].counter = fmt::format("c{:02}", i);
    svc.qualifications().add("demo", q);
    CHECK(svc.qualifications().newest("demo", "fp3")[0].counters.size() == perfgate::model::max_qualified_counters);
}
