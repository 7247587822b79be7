// Tests of service/: the gate service over a real store (":memory:" and temp
// files; ctest runs the "service: ..." cases on PostgreSQL too, see
// support/database.hpp): idempotent compares, the name rules every stored run
// obeys, one testbed identity whichever client stored the run.
#include "service/service.hpp"

#include <doctest/doctest.h>

#include "support/database.hpp"

#include "support/numbers.hpp"
#include "support/report.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/perf_csv.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "model/testbed.hpp"
#include "report/render.hpp"
#include "service/lru_cache.hpp"
#include "service/notifier.hpp"
#include "store/comparisons.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"

using namespace perfgate;
using namespace perfgate::capture;
using namespace perfgate::gate;
using namespace perfgate::report;
using nlohmann::json;
using perfgate::service::commit_queue;
using perfgate::service::comparison;
using perfgate::service::watch_job;
using perfgate::service::watch_outcome;
using perfgate::service::watch_queue;
using perfgate::test::counter;
using perfgate::test::ramp;
using perfgate::test::test_database;

namespace {

model::run_record stored_run(std::string role, std::vector<double> task_clock, std::string benchmark = "parse")
{
    model::run_record r;
    r.project = "demo";
    r.benchmark = std::move(benchmark);
    r.role = std::move(role);
    r.git_sha = "0123456789abcdef0123456789abcdef01234567";
    r.branch = "main";
    // The baseline feeds the series, as a local perfgate run's does
    // (runner::mainline_side_of): these tests' series are baseline runs.
    r.mainline = r.role == "baseline";
    r.testbed = {"ci-1", "cpu", 2, "6.1", "fp-1"};
    // One perfgate run's session: the pairs of these tests were measured
    // interleaved (test_server_interleaved.cpp has those that were not).
    r.session = "session-1";
    model::counter_samples cs{"task-clock", "msec", {}};
    for (std::size_t i = 0; i < task_clock.size(); ++i) {
        cs.samples.push_back({static_cast<int>(i), task_clock[i], 100.0, std::nullopt});
    }
    r.counters.push_back(std::move(cs));
    return r;
}

// A request key (64 hex digits) named by a short text.
std::string request_key_of(std::string_view name)
{
    std::string hex;
    for (const unsigned char c : name) hex += fmt::format("{:02x}", c);
    hex.resize(64, '0');
    return hex;
}

} // namespace

TEST_CASE("service: compare is idempotent per (project, pairs, policy)")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    const auto base = svc.runs().ingest_run(stored_run("baseline", ramp())).run_id;
    const auto cand = svc.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
    const std::vector<std::pair<std::int64_t, std::int64_t>> pairs{{base, cand}};
    const policy defaults;

    const service::comparison first = svc.comparisons().compare("demo", pairs, defaults);
    REQUIRE(first.result.comparison_id == first.id);
    CHECK(first.result.result == verdict::fail);

    SUBCASE("the served text is the report with its id, the stored text the same without it, both compact dumps")
    {
        // One serialisation makes both (service.cpp, report_texts): each
        // must be byte for byte what dumping the whole document gives.
        const auto dump = [](const nlohmann::json& doc) {
            return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        };
        nlohmann::json served = nlohmann::json::parse(*first.json);
        CHECK(served.at("comparison_id") == first.id);
        CHECK(dump(served) == *first.json);
        const auto stored = db.comparisons().load("demo", first.id);
        REQUIRE(stored.has_value());
        served.erase("comparison_id");
        CHECK(dump(served) == *stored);
        CHECK(stored->find("comparison_id") == std::string::npos);
        // The id sits between the top-level keys around it, not first or
        // last ("verdict" is the report's last key; benchmarks have their own).
        CHECK(first.json->find("\"comparison_id\":") > first.json->find("\"benchmarks\":"));
        CHECK(first.json->find("\"comparison_id\":") < first.json->rfind("\"verdict\":"));
    }

    SUBCASE("the same request returns the stored comparison and stores nothing")
    {
        const service::comparison again = svc.comparisons().compare("demo", pairs, defaults);
        CHECK(again.id == first.id);
        CHECK(again.result.comparison_id == first.id);
        CHECK(to_json(again.result) == to_json(first.result));
        // A service with nothing in memory (another process, a restart)
        // finds the same comparison in the store.
        service::service restarted(db);
        const service::comparison stored = restarted.comparisons().compare("demo", pairs, defaults);
        CHECK(stored.id == first.id);
        CHECK(stored.result.comparison_id == first.id);
        CHECK(to_json(stored.result) == to_json(first.result));
        // Ids are rowids: had the repeat stored a row, the next comparison
        // would not get first.id + 1.
        policy stricter;
        stricter.threshold_pct = 10.0;
        const service::comparison other = svc.comparisons().compare("demo", pairs, stricter);
        CHECK(other.id == first.id + 1);
        CHECK_FALSE(svc.comparisons().load("demo", first.id + 2).has_value());
    }
    SUBCASE("a different policy or different pairs are a new comparison")
    {
        policy stricter;
        stricter.threshold_pct = 10.0;
        const service::comparison other = svc.comparisons().compare("demo", pairs, stricter);
        CHECK(other.id != first.id);
        CHECK(counter(other.result, "task-clock").state == status::unchanged);
        CHECK(svc.comparisons().compare("demo", pairs, stricter).id == other.id);

        const auto cand2 = svc.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
        CHECK(svc.comparisons().compare("demo", {{base, cand2}}, defaults).id != first.id);
        CHECK(svc.comparisons().compare("demo", {{cand, base}}, defaults).id != first.id);
    }
    SUBCASE("the key covers project, pair order and every policy field")
    {
        const std::string key = service::comparison_request_key("demo", pairs, defaults);
        CHECK(key.size() == 64);
        CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
        CHECK(service::comparison_request_key("demo", pairs, defaults) == key);
        CHECK(service::comparison_request_key("demo2", pairs, defaults) != key);
        CHECK(service::comparison_request_key("demo", {{cand, base}}, defaults) != key);
        CHECK(service::comparison_request_key("demo", {{base, cand}, {base + 10, cand + 10}}, defaults) != key);
        policy p = defaults;
        p.counters["task-clock"].gate = false;
        CHECK(service::comparison_request_key("demo", pairs, p) != key);
        policy q = defaults;
        q.history = 31;
        CHECK(service::comparison_request_key("demo", pairs, q) != key);
    }
    SUBCASE("errors are still reported for requests that were never stored")
    {
        CHECK_THROWS_WITH_AS(svc.comparisons().compare("demo", {{base, 9999}}, defaults),
                             "candidate run 9999 not found in project 'demo'", error);
        CHECK_THROWS_WITH_AS(svc.comparisons().compare("other", pairs, defaults),
                             doctest::Contains("not found in project 'other'"), error);
        try {
            svc.comparisons().compare("demo", {}, defaults);
            FAIL("expected compare.bad_request");
        } catch (const error& e) {
            CHECK(e.id() == "compare.bad_request");
        }
    }
}

TEST_CASE("service: identical compares racing on one database store one comparison")
{
    // Two store objects on one database act as two processes; two threads each.
    test_database where;
    store::store db1(where.location()), db2(where.location());
    service::service s1(db1), s2(db2);
    const auto base = s1.runs().ingest_run(stored_run("baseline", ramp())).run_id;
    const auto cand = s1.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
    const std::vector<std::pair<std::int64_t, std::int64_t>> pairs{{base, cand}};

    constexpr int workers = 4;
    std::vector<std::int64_t> ids(workers, 0);
    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < workers; ++i) {
            threads.emplace_back([&, i] {
                ids[i] = (i % 2 ? s2 : s1).comparisons().compare("demo", pairs, policy{}).id;
            });
        }
    }
    for (int i = 1; i < workers; ++i) CHECK(ids[i] == ids[0]);
    CHECK(s1.comparisons().load("demo", ids[0]).has_value());
    CHECK_FALSE(s1.comparisons().load("demo", ids[0] + 1).has_value());
    CHECK_FALSE(s1.comparisons().load("demo", ids[0] - 1).has_value());
}

TEST_CASE("service: an Idempotency-Key stores one run per request, and refuses another request under it")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    model::ingest_request req;
    req.project = "demo";
    req.role = "baseline";
    req.git_sha = "0123abcd";
    req.branch = "main";
    req.perf_csv = perfgate::test::read_testdata("appended-10-runs.csv");
    const auto first = svc.runs().ingest(req, std::string("upload-1"));
    CHECK_FALSE(first.replayed);
    const auto again = svc.runs().ingest(req, std::string("upload-1"));
    CHECK(again.replayed);
    CHECK(again.run_id == first.run_id);
    CHECK(again.counters == first.counters);
    CHECK(again.samples == first.samples);
    CHECK(db.maintenance().runs_count() == 1);
    // No key: every upload is a run, as before.
    CHECK(svc.runs().ingest(req).run_id != first.run_id);
    CHECK(db.maintenance().runs_count() == 2);

    // The same key with another body: 409's error, naming the key.
    auto changed = req;
    changed.branch = "feature";
    try {
        svc.runs().ingest(changed, std::string("upload-1"));
        FAIL("expected ingest.idempotency_conflict");
    } catch (const error& e) {
        CHECK(e.id() == "ingest.idempotency_conflict");
        CHECK(std::string(e.what()) ==
              "Idempotency-Key 'upload-1' was already used for a different upload to project 'demo': send a new key "
              "for a new run (the same key only to retry the same request)");
    }
    CHECK(service::ingest_request_digest(changed) != service::ingest_request_digest(req));
    changed.source = "another name for the same input"; // not content
    changed.branch = req.branch;
    CHECK(service::ingest_request_digest(changed) == service::ingest_request_digest(req));

    for (const auto& bad : {std::string(), std::string(256, 'k'), std::string("has space"), std::string("tab\t")}) {
        CAPTURE(bad);
        try {
            svc.runs().ingest(req, bad);
            FAIL("expected ingest.bad_idempotency_key");
        } catch (const error& e) {
            CHECK(e.id() == "ingest.bad_idempotency_key");
            CHECK(std::string(e.what()).starts_with("Idempotency-Key: expected 1 to 255 printable ASCII characters"));
        }
    }
    CHECK(db.maintenance().runs_count() == 2);
}

TEST_CASE("service: a compare's history z-scores read every counter's series, derived ones included")
{
    // cycles and instructions make a derived counter (ipc) that no stored
    // series has: its history is read on its own, and is empty.
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    auto run_of = [](const std::string& role, double cycles, double instructions) {
        model::run_record r = stored_run(role, ramp());
        for (const auto& [name, level] : {std::pair{"cycles", cycles}, std::pair{"instructions", instructions}}) {
            model::counter_samples cs{name, "", {}};
            for (int i = 0; i < 10; ++i) cs.samples.push_back({i, level * (1 + 0.001 * i), 100.0, std::nullopt});
            r.counters.push_back(std::move(cs));
        }
        return r;
    };
    // A history of 12 baselines, then the pair to compare.
    for (int i = 0; i < 12; ++i) svc.runs().ingest_run(run_of("baseline", 1e9 * (1 + 0.001 * i), 2e9));
    const auto base = svc.runs().ingest_run(run_of("baseline", 1e9, 2e9)).run_id;
    const auto cand = svc.runs().ingest_run(run_of("candidate", 1.2e9, 2e9)).run_id;
    policy rules;
    rules.history_min = 5;
    const auto c = svc.comparisons().compare("demo", {{base, cand}}, rules);
    std::map<std::string, const counter_report*> by_name;
    for (const auto& cr : c.result.benchmarks.at(0).counters) by_name[cr.name] = &cr;
    REQUIRE(by_name.count("cycles") == 1);
    REQUIRE(by_name.count("ipc") == 1);
    CHECK(by_name["cycles"]->band.has_value());    // 13 stored baselines before the candidate
    CHECK_FALSE(by_name["ipc"]->band.has_value()); // never stored: no series
    CHECK(svc.comparisons().compare("demo", {{base, cand}}, rules).id == c.id);
}

TEST_CASE("service: every stored run obeys the same name rules as the server")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    perfgate::model::run_record run;
    run.project = "demo";
    run.benchmark = "BM_Sort/1024";
    run.role = "baseline";
    run.counters.push_back({"task-clock", "msec", {{0, 1.5, 100.0, std::nullopt}}});
    CHECK(svc.runs().ingest_run(run).run_id > 0);

    run.benchmark = "x'; DROP TABLE runs; --";
    CHECK_THROWS_WITH_AS(svc.runs().ingest_run(run),
                         doctest::Contains("field 'benchmark': ''' at offset 1 is not allowed"), perfgate::error);
    run.benchmark = "ok";
    run.role = "other";
    CHECK_THROWS_WITH_AS(svc.runs().ingest_run(run), doctest::Contains("expected 'baseline' or 'candidate'"),
                         perfgate::error);
    run.role = "candidate";
    run.backend = "vtune";
    CHECK_THROWS_WITH_AS(svc.runs().ingest_run(run), doctest::Contains("field 'backend'"), perfgate::error);
    CHECK(db.maintenance().runs_count() == 1); // nothing stored by the rejected runs
}

namespace {

// A run of `counters` counters "c0".."cN" with `reps` samples each, values
// around 100 * (1 + counter) scaled by factor.
model::run_record wide_run(std::string role, std::size_t counters, std::size_t reps, std::string benchmark = "parse",
                           double factor = 1.0)
{
    model::run_record r = stored_run(std::move(role), {}, std::move(benchmark));
    r.counters.clear();
    for (std::size_t k = 0; k < counters; ++k) {
        model::counter_samples cs{"c" + std::to_string(k), "msec", {}};
        cs.samples.reserve(reps);
        for (std::size_t i = 0; i < reps; ++i) {
            const double v = (100.0 + 0.1 * static_cast<double>(i % 10)) * static_cast<double>(k + 1) * factor;
            cs.samples.push_back({static_cast<int>(i), v, 100.0, std::nullopt});
        }
        r.counters.push_back(std::move(cs));
    }
    return r;
}

std::string id_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const error& e) {
        return e.id();
    }
    return "no error";
}

} // namespace

TEST_CASE("service: a run holds at most max_counters_per_run counters and max_repetitions repetitions")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    REQUIRE(capture::max_counters_per_run == 256);
    REQUIRE(capture::max_repetitions == 10000);
    SUBCASE("counters")
    {
        CHECK(svc.runs().ingest_run(wide_run("baseline", 256, 2)).counters == 256);
        CHECK_THROWS_WITH_AS(svc.runs().ingest_run(wide_run("baseline", 257, 2)),
                             "the run has 257 counters; at most 256 counters per run", error);
        CHECK(id_of([&] { svc.runs().ingest_run(wide_run("baseline", 257, 2)); }) == "ingest.too_many_counters");
        // From a capture (local mode's `perfgate upload --db` and the server alike).
        model::ingest_request req;
        req.project = "demo";
        req.role = "baseline";
        req.git_sha = "abc";
        req.branch = "main";
        req.source = "t.csv";
        for (int e = 0; e < 257; ++e) req.perf_csv += "1,,ev" + std::to_string(e) + ",100,100.00,,\n";
        CHECK(id_of([&] { svc.runs().ingest(req); }) == "ingest.too_many_counters");
        CHECK(db.maintenance().runs_count() == 1);
    }
    SUBCASE("repetitions: sample counts and repetition numbers")
    {
        CHECK(svc.runs().ingest_run(wide_run("baseline", 1, 10000)).samples == 10000);
        CHECK_THROWS_WITH_AS(svc.runs().ingest_run(wide_run("baseline", 1, 10001)),
                             "counter 'c0' has 10001 samples; at most 10000 repetitions per run", error);
        model::run_record far = wide_run("baseline", 1, 1);
        far.counters[0].samples[0].repetition = 10000;
        CHECK_THROWS_WITH_AS(svc.runs().ingest_run(far),
                             "counter 'c0': repetition 10000 is outside [0, 10000): at most 10000 repetitions per run",
                             error);
        far.counters[0].samples[0].repetition = 9999; // sparse but inside: fine
        CHECK(svc.runs().ingest_run(far).samples == 1);
        far.counters[0].samples[0].repetition = -1;
        CHECK(id_of([&] { svc.runs().ingest_run(far); }) == "ingest.too_many_repetitions");
        CHECK(db.maintenance().runs_count() == 2);
    }
}

TEST_CASE("service: one compare reads at most max_compare_counters counters and max_compare_samples samples")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    REQUIRE(service::max_compare_counters == 4096);
    REQUIRE(service::max_compare_samples == 1000000);
    SUBCASE("counters: 16 pairs of 256 counters is the limit, a 17th pair is over it")
    {
        std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
        for (int i = 0; i < 17; ++i) {
            const std::string bench = "b" + std::to_string(i);
            pairs.emplace_back(svc.runs().ingest_run(wide_run("baseline", 256, 5, bench)).run_id,
                               svc.runs().ingest_run(wide_run("candidate", 256, 5, bench, 1.05)).run_id);
        }
        const auto at_limit = std::vector(pairs.begin(), pairs.begin() + 16);
        const service::comparison c = svc.comparisons().compare("demo", at_limit, policy{});
        std::size_t counters = 0;
        for (const auto& b : c.result.benchmarks) counters += b.counters.size();
        CHECK(counters == 4096);
        CHECK_THROWS_WITH_AS(
            svc.comparisons().compare("demo", pairs, policy{}),
            "this gate compares more than 4096 counters (4352 in the first 17 of its 17 pairs); at most "
            "4096 counters per compare: compare fewer pairs per request",
            error);
        CHECK(id_of([&] { svc.comparisons().compare("demo", pairs, policy{}); }) == "compare.too_large");
        // Counters of either run count once per pair.
        model::run_record other = wide_run("candidate", 256, 5, "b0");
        for (auto& cs : other.counters) cs.counter = "x" + cs.counter;
        const auto x = svc.runs().ingest_run(other).run_id;
        std::vector<std::pair<std::int64_t, std::int64_t>> mixed(pairs.begin() + 1, pairs.begin() + 16);
        mixed.emplace_back(pairs[0].first, x); // 15 x 256 + 512
        CHECK(id_of([&] { svc.comparisons().compare("demo", mixed, policy{}); }) == "compare.too_large");
    }
    SUBCASE("samples: 1,000,000 is the limit, one more is over it")
    {
        const auto b = svc.runs().ingest_run(wide_run("baseline", 50, 10000)).run_id;
        const auto c = svc.runs().ingest_run(wide_run("candidate", 50, 10000, "parse", 1.05)).run_id;
        model::run_record extra = wide_run("candidate", 50, 10000, "parse", 1.05);
        extra.counters.push_back(wide_run("candidate", 1, 1).counters[0]);
        extra.counters.back().counter = "one-more";
        const auto c2 = svc.runs().ingest_run(std::move(extra)).run_id;
        CHECK(svc.comparisons().compare("demo", {{b, c}}, policy{}).result.benchmarks.at(0).counters.size() == 50);
        CHECK_THROWS_WITH_AS(svc.comparisons().compare("demo", {{b, c2}}, policy{}),
                             "the runs of this gate hold more than 1000000 samples (1000001 in the first 2 of its 2 "
                             "runs); at most 1000000 samples per compare: compare fewer pairs per request",
                             error);
    }
}

TEST_CASE("service: the comparison cache is bounded in bytes, and large reports are not cached")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    REQUIRE(service::comparison_cache_bytes == 16u << 20);
    REQUIRE(service::comparison_cache_max_entry_bytes == 2u << 20);
    const auto base = svc.runs().ingest_run(wide_run("baseline", 256, 5)).run_id;
    const auto cand = svc.runs().ingest_run(wide_run("candidate", 256, 5, "parse", 1.05)).run_id;
    // One ~200 KB report per threshold: 256 counters.
    std::size_t before = 0;
    std::vector<std::int64_t> ids;
    for (int i = 0; i < 60; ++i) {
        policy p;
        p.threshold_pct = 1.0 + i;
        ids.push_back(svc.comparisons().compare("demo", {{base, cand}}, p).id);
        CHECK(svc.maintenance().cached_comparison_bytes() <= service::comparison_cache_bytes);
        if (i == 0) before = svc.maintenance().cached_comparison_bytes();
    }
    INFO("one entry: " << before << " bytes");
    CHECK(before > 256 * 750); // the JSON alone is ~750 bytes per counter
    CHECK(before < service::comparison_cache_max_entry_bytes);
    // Bytes, not a count, decided: fewer than 60 fit, and the cache is full
    // (entries differ by their reasons and noise advice: at a 1% threshold
    // more counters are inconclusive, with longer reasons, than at 60%).
    CHECK(svc.maintenance().cached_comparisons() < 60);
    CHECK(static_cast<double>(svc.maintenance().cached_comparisons() * before) ==
          doctest::Approx(static_cast<double>(svc.maintenance().cached_comparison_bytes())).epsilon(0.08));
    CHECK(svc.maintenance().cached_comparison_bytes() > service::comparison_cache_bytes - 2 * before);
    // The evicted first one is still the same comparison (from the store).
    policy first;
    first.threshold_pct = 1.0;
    CHECK(svc.comparisons().compare("demo", {{base, cand}}, first).id == ids[0]);

    SUBCASE("a report over comparison_cache_max_entry_bytes is served and stored, not cached")
    {
        std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
        for (int i = 0; i < 16; ++i) {
            const std::string bench = "wide" + std::to_string(i);
            pairs.emplace_back(svc.runs().ingest_run(wide_run("baseline", 256, 5, bench)).run_id,
                               svc.runs().ingest_run(wide_run("candidate", 256, 5, bench, 1.05)).run_id);
        }
        const std::size_t cached = svc.maintenance().cached_comparison_bytes(),
                          entries = svc.maintenance().cached_comparisons();
        const service::comparison big = svc.comparisons().compare("demo", pairs, policy{});
        CHECK(big.json->size() > service::comparison_cache_max_entry_bytes);
        CHECK(svc.maintenance().cached_comparison_bytes() == cached);
        CHECK(svc.maintenance().cached_comparisons() == entries);
        CHECK(svc.comparisons().compare("demo", pairs, policy{}).id == big.id);
    }
}

TEST_CASE("service: a compare's runs are cached per project, and a cached run gives the cold run's report")
{
    REQUIRE(service::run_cache_bytes == 32u << 20);
    REQUIRE(service::run_cache_max_entry_bytes == 4u << 20);
    // Two databases with the same runs: one service compares twice (the
    // second time from cached runs), the other once from the store.
    test_database warm_where(test_database::sqlite_kind::memory), cold_where(test_database::sqlite_kind::memory);
    store::store warm_db(warm_where.location()), cold_db(cold_where.location());
    service::service warm(warm_db), cold(cold_db);
    std::vector<std::int64_t> ids;
    for (service::service* svc : {&warm, &cold}) {
        ids = {svc->runs().ingest_run(wide_run("baseline", 12, 20)).run_id,
               svc->runs().ingest_run(wide_run("candidate", 12, 20, "parse", 1.05)).run_id};
    }
    CHECK(warm.maintenance().cached_runs() == 0);
    policy first, second;
    first.threshold_pct = 5;
    second.threshold_pct = 6;
    (void)warm.comparisons().compare("demo", {{ids[0], ids[1]}}, first);
    CHECK(warm.maintenance().cached_runs() == 2);
    const std::size_t bytes = warm.maintenance().cached_run_bytes();
    INFO("two runs of 12 counters x 20 repetitions: " << bytes << " bytes");
    CHECK(bytes > 2 * 12 * 20 * sizeof(model::sample));
    CHECK(bytes < 2 * 12 * 20 * (sizeof(model::sample) + 64) + 8192);
    json from_cache = json::parse(*warm.comparisons().compare("demo", {{ids[0], ids[1]}}, second).json);
    json from_store = json::parse(*cold.comparisons().compare("demo", {{ids[0], ids[1]}}, second).json);
    CHECK(warm.maintenance().cached_runs() == 2);
    CHECK(from_cache["benchmarks"][0]["counters"].size() == 12);
    from_cache.erase("comparison_id");
    from_store.erase("comparison_id");
    CHECK(from_cache == from_store);

    SUBCASE("another project's cached run is not found")
    {
        warm.projects().ensure("other");
        CHECK_THROWS_WITH_AS(warm.comparisons().compare("other", {{ids[0], ids[1]}}, first),
                             "baseline run 1 not found in project 'other'", error);
    }
    SUBCASE("a run over run_cache_max_entry_bytes is compared, not cached")
    {
        const auto b = warm.runs().ingest_run(wide_run("baseline", 10, 10000, "big")).run_id;
        const auto c = warm.runs().ingest_run(wide_run("candidate", 10, 10000, "big", 1.05)).run_id;
        CHECK(warm.comparisons().compare("demo", {{b, c}}, first).result.benchmarks.at(0).counters.size() == 10);
        CHECK(warm.maintenance().cached_runs() == 2);
        CHECK(warm.maintenance().cached_run_bytes() == bytes);
    }
}

TEST_CASE("lru_cache: bounded in bytes, least recent out first, first value stays, large entries skipped")
{
    // Each entry is charged its cost plus its bookkeeping (sizeof(entry),
    // twice its key, 64): measure that once with a one-letter key.
    service::lru_cache<int> probe(1 << 20, 1 << 20);
    probe.add("k", std::make_shared<const int>(0), 0);
    const std::size_t overhead = probe.size_bytes();
    REQUIRE(overhead > 0);

    service::lru_cache<int> lru(3 * (100 + overhead), 100 + overhead);
    for (int i = 0; i < 3; ++i)
        lru.add(std::string(1, static_cast<char>('a' + i)), std::make_shared<const int>(i), 100);
    CHECK(lru.size() == 3);
    CHECK(lru.size_bytes() == 3 * (100 + overhead));
    REQUIRE(lru.find("a")); // now the most recent: "b" is the least
    lru.add("d", std::make_shared<const int>(3), 100);
    CHECK(lru.size() == 3);
    CHECK_FALSE(lru.find("b"));
    CHECK(*lru.find("a") == 0);
    CHECK(*lru.find("d") == 3);
    // A key already there keeps its first value.
    lru.add("a", std::make_shared<const int>(42), 100);
    CHECK(*lru.find("a") == 0);
    // Over max_entry_bytes: not kept, nothing evicted.
    lru.add("e", std::make_shared<const int>(4), 101);
    CHECK_FALSE(lru.find("e"));
    CHECK(lru.size() == 3);
    // A value found stays valid after its entry is evicted.
    const auto held = lru.find("c");
    for (int i = 0; i < 3; ++i) lru.add("x" + std::to_string(i), std::make_shared<const int>(i), 50);
    CHECK_FALSE(lru.find("c"));
    CHECK(*held == 2);
    CHECK(lru.size_bytes() <= 3 * (100 + overhead));
}

namespace {

// A baseline run of `benchmark` on main whose five task-clock samples sit
// around `level` with ~1% deterministic noise (a fixed LCG, so the series
// and therefore the change points are the same on every machine).
model::run_record series_run(double level, std::uint64_t& state, std::int64_t created_at, std::string role = "baseline",
                             std::string branch = "main")
{
    std::vector<double> values;
    for (int i = 0; i < 5; ++i) {
        values.push_back(level * (1 + 0.02 * (perfgate::test::lcg_uniform(state) - 0.5)));
    }
    model::run_record r = stored_run(std::move(role), values);
    r.branch = std::move(branch);
    r.created_at = created_at;
    return r;
}

// Stores n runs, the ones from `step_at` on at level * (1 + step); returns their ids.
std::vector<std::int64_t> store_series(service::service& svc, std::size_t n, std::size_t step_at, double step,
                                       std::vector<std::int64_t>* opened = nullptr, std::string role = "baseline",
                                       std::string branch = "main")
{
    std::uint64_t state = 42;
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < n; ++i) {
        const double level = 100.0 * (i >= step_at ? 1 + step : 1.0);
        const auto res = svc.runs().ingest_run(series_run(level, state, 1'700'000'000 + static_cast<std::int64_t>(i),
                                                          role, branch));
        CHECK(res.warnings.empty());
        if (opened) opened->insert(opened->end(), res.alerts.begin(), res.alerts.end());
        ids.push_back(res.run_id);
    }
    return ids;
}

} // namespace

TEST_CASE("service: a step on the baseline branch opens one alert where it starts")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    std::vector<std::int64_t> opened;
    const auto ids = store_series(svc, 60, 40, 0.05, &opened);

    REQUIRE(opened.size() == 1);
    const model::alert a = svc.alerts().get("demo", opened.front());
    const auto at = std::find(ids.begin(), ids.end(), a.change.run_id) - ids.begin();
    CHECK(at >= 39);
    CHECK(at <= 41);
    CHECK(a.status == model::alert_status::untriaged);
    CHECK(a.change.series.benchmark == "parse");
    CHECK(a.change.series.counter == "task-clock");
    CHECK(a.change.series.branch == "main");
    CHECK(a.change.series.testbed == model::fingerprint_of({"ci-1", "cpu", 2, "6.1", "fp-1"}));
    REQUIRE(a.change.delta_pct);
    CHECK(*a.change.delta_pct == doctest::Approx(5.0).epsilon(0.2));
    CHECK(a.change.shift_lower < a.change.shift);
    CHECK(a.change.shift < a.change.shift_upper);
    CHECK(a.change.p_value < 0.001);

    // History marks the run where the change point starts, and only it.
    model::history_query q;
    q.project = "demo";
    q.benchmark = "parse";
    q.counter = "task-clock";
    q.branch = "main";
    q.limit = 100;
    const auto points = svc.history().points(q);
    REQUIRE(points.size() == 60);
    CHECK(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.change_point; }) == 1);
    CHECK(points[static_cast<std::size_t>(at)].change_point);
    const auto cps = svc.history().change_points("demo", "parse", "task-clock", std::nullopt, std::nullopt);
    REQUIRE(cps.size() == 1);
    CHECK(cps.front().run_id == a.change.run_id);

    SUBCASE("triage")
    {
        const auto acked = svc.alerts().update("demo", a.id,
                                               {model::alert_status::acknowledged, std::string("bisecting"), "ana"});
        CHECK(acked.status == model::alert_status::acknowledged);
        CHECK(acked.note == "bisecting");
        CHECK(acked.changed_by == "ana");
        CHECK(svc.alerts().list({"demo", model::alert_status::acknowledged, {}, {}, {}, 100}).size() == 1);
        CHECK(svc.alerts().list({"demo", model::alert_status::untriaged, {}, {}, {}, 100}).empty());
        // More runs at the new level keep the one alert (and its triage).
        std::uint64_t state = 7;
        for (int i = 0; i < 20; ++i)
            CHECK(svc.runs().ingest_run(series_run(105, state, 1'800'000'000 + i)).alerts.empty());
        const auto all = svc.alerts().list({"demo", {}, {}, {}, {}, 100});
        REQUIRE(all.size() == 1);
        CHECK(all.front().status == model::alert_status::acknowledged);
    }
    SUBCASE("bad triage input changes nothing")
    {
        CHECK_THROWS_WITH_AS(svc.alerts().update("demo", a.id + 1000, {model::alert_status::fixed, {}, "x"}),
                             doctest::Contains("has no alert"), perfgate::error);
        CHECK_THROWS_WITH_AS(svc.alerts().update("demo", a.id,
                                                 {model::alert_status::fixed, std::string(5000, 'n'), "x"}),
                             doctest::Contains("at most 4096 bytes"), perfgate::error);
        CHECK_THROWS_WITH_AS(svc.alerts().update("demo", a.id,
                                                 {model::alert_status::fixed, std::string("a\x1b[2Jb"), "x"}),
                             doctest::Contains("control character U+001B at offset 1"), perfgate::error);
        CHECK_THROWS_WITH_AS((void)svc.alerts().get("nope", a.id), doctest::Contains("no project 'nope'"),
                             perfgate::error);
        CHECK_THROWS_WITH_AS((void)svc.alerts().list({"demo", {}, {}, {}, {}, 0}), doctest::Contains("limit 0"),
                             perfgate::error);
        CHECK(svc.alerts().get("demo", a.id).status == model::alert_status::untriaged);
        CHECK(svc.alerts().get("demo", a.id).note.empty());
    }
}

TEST_CASE("service: history points are cached per query, and a cached history gives the cold one's report")
{
    // Two databases with the same series: one service compares three times
    // against one candidate (the history read once), the other once.
    test_database warm_where(test_database::sqlite_kind::memory), cold_where(test_database::sqlite_kind::memory);
    store::store warm_db(warm_where.location()), cold_db(cold_where.location());
    service::service warm(warm_db), cold(cold_db);
    std::vector<std::int64_t> ids;
    std::int64_t cand = 0, other_testbed = 0;
    for (service::service* svc : {&warm, &cold}) {
        ids = store_series(*svc, 40, 20, 0.05);
        cand = svc->runs().ingest_run(stored_run("candidate", {106, 106, 106, 106, 107})).run_id;
        auto other = stored_run("candidate", {106, 106, 106, 106, 107});
        other.testbed = {"ci-2", "cpu", 2, "6.1", "fp-2"};
        other_testbed = svc->runs().ingest_run(other).run_id;
    }
    CHECK(warm.maintenance().cached_histories() == 0);
    (void)warm.comparisons().compare("demo", {{ids[0], cand}}, policy{});
    CHECK(warm.maintenance().cached_histories() == 1);
    (void)warm.comparisons().compare("demo", {{ids[1], cand}}, policy{});
    CHECK(warm.maintenance().cached_histories() == 1); // same series, same candidate: the same points
    json from_cache = json::parse(*warm.comparisons().compare("demo", {{ids.back(), cand}}, policy{}).json);
    json from_store = json::parse(*cold.comparisons().compare("demo", {{ids.back(), cand}}, policy{}).json);
    const json& c = from_cache["benchmarks"][0]["counters"][0];
    CHECK(c["band"]["n"] == 20); // since the step's change point
    CHECK(c["z_score"].is_number());
    from_cache.erase("comparison_id");
    from_store.erase("comparison_id");
    CHECK(from_cache == from_store);
    // Another testbed is another query: no baseline runs there, no band.
    const json elsewhere = json::parse(
        *warm.comparisons().compare("demo", {{ids.back(), other_testbed}}, policy{}).json);
    CHECK(warm.maintenance().cached_histories() == 2);
    CHECK(elsewhere["benchmarks"][0]["counters"][0]["band"].is_null());
    CHECK(elsewhere["benchmarks"][0]["counters"][0]["z_score"].is_null());
}

TEST_CASE("service: a compare after a new baseline upload reads it, whatever the caches hold")
{
    // Staleness (issue 47): the history a compare reads is the baseline
    // branch's runs older than its candidate, cached per candidate. A
    // baseline uploaded after a compare must be in the next candidate's
    // history (band, between-run test, z-score), and never in the history of
    // a candidate stored before it.
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    const auto ids = store_series(svc, 30, 30, 0.0); // stationary: 100 +- 1%
    // Measured apart (no session): the between-run test reads the history too.
    auto apart = [](model::run_record r) {
        r.session.clear();
        return r;
    };
    const auto cand1 = svc.runs().ingest_run(apart(stored_run("candidate", {100, 100, 100, 100, 100}))).run_id;
    const auto counter_of = [&](std::int64_t base, std::int64_t cand, const policy& rules) {
        const json doc = json::parse(*svc.comparisons().compare("demo", {{base, cand}}, rules).json);
        return doc["benchmarks"][0]["counters"][0];
    };
    const json before = counter_of(ids.back(), cand1, policy{});
    REQUIRE(before["band"].is_object());
    CHECK(before["band"]["n"] == 30);
    CHECK(before["band"]["hi"].get<double>() < 101.01);
    CHECK(before["between_runs"]["history_runs"] == 30);
    CHECK(svc.maintenance().cached_histories() == 1);

    // A push's baseline at 102 (five equal samples: its median is exactly 102).
    auto pushed = stored_run("baseline", {102, 102, 102, 102, 102});
    pushed.created_at = 1'700'000'100;
    const auto new_base = svc.runs().ingest_run(pushed).run_id;
    const auto cand2 = svc.runs().ingest_run(apart(stored_run("candidate", {100, 100, 100, 100, 100}))).run_id;

    const json after = counter_of(new_base, cand2, policy{});
    REQUIRE(after["band"].is_object());
    CHECK(after["band"]["n"] == 30); // the last policy.history runs: the new one in, the oldest out
    CHECK(after["band"]["hi"].get<double>() == 102.0);
    CHECK(after["between_runs"]["history_runs"] == 30);
    // Its window moved by one run (a robust scale: one high point need not raise it).
    CHECK(after["between_runs"]["sd"].get<double>() != before["between_runs"]["sd"].get<double>());
    CHECK(svc.maintenance().cached_histories() == 2);

    // The first candidate's history stays what preceded it, recomputed (another
    // policy: not the stored report) or not.
    policy other;
    other.threshold_pct = 3.0;
    const json again = counter_of(ids.back(), cand1, other);
    CHECK(again["band"] == before["band"]);
    CHECK(again["between_runs"]["sd"] == before["between_runs"]["sd"]);
}

TEST_CASE("service: stationary runs, improvements, candidates and other branches open no alert")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    std::vector<std::int64_t> opened;
    SUBCASE("60 stationary baseline runs")
    {
        store_series(svc, 60, 60, 0.0, &opened);
        CHECK(opened.empty());
        CHECK(svc.history().change_points("demo", "parse", "task-clock", std::nullopt, std::nullopt).empty());
    }
    SUBCASE("a 5% improvement is a change point, not an alert")
    {
        store_series(svc, 60, 40, -0.05, &opened);
        CHECK(opened.empty());
        CHECK(svc.alerts().list({"demo", {}, {}, {}, {}, 100}).empty());
        CHECK(svc.history().change_points("demo", "parse", "task-clock", std::nullopt, std::nullopt).size() == 1);
    }
    SUBCASE("candidate runs and other branches are not watched")
    {
        store_series(svc, 60, 40, 0.05, &opened, "candidate");
        store_series(svc, 60, 40, 0.05, &opened, "baseline", "feature");
        CHECK(opened.empty());
        CHECK(svc.history().change_points("demo", "parse", "task-clock", std::nullopt, std::string("feature")).empty());
    }
    SUBCASE("the baseline branch is the project's setting")
    {
        svc.projects().ensure("demo");
        svc.projects().set_baseline_branch("demo", "trunk");
        CHECK(svc.projects().baseline_branch("demo") == "trunk");
        store_series(svc, 60, 40, 0.05, &opened); // main: not watched any more
        CHECK(opened.empty());
        store_series(svc, 60, 40, 0.05, &opened, "baseline", "trunk");
        CHECK(opened.size() == 1);
        CHECK_THROWS_WITH_AS(svc.projects().set_baseline_branch("demo", "bad branch\n"), doctest::Contains("branch"),
                             perfgate::error);
        CHECK_THROWS_WITH_AS(svc.projects().set_baseline_branch("nope", "main"), doctest::Contains("no project 'nope'"),
                             perfgate::error);
    }
}

TEST_CASE("service: the watch detects with the project's change-point settings over the server's defaults")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    std::vector<std::int64_t> opened;
    svc.projects().ensure("demo");
    CHECK(svc.projects().change_point_options("demo").method == stats::change_point_method::perfgate);
    CHECK(svc.projects().change_point_options("demo").window == 50);
    SUBCASE("min_magnitude above the step: no alert")
    {
        svc.projects().set_change_point_settings("demo", store::change_point_settings{std::nullopt, std::nullopt,
                                                                                      std::nullopt, 0.10});
        CHECK(svc.projects().change_point_options("demo").min_magnitude == 0.10);
        store_series(svc, 60, 40, 0.05, &opened);
        CHECK(opened.empty());
        CHECK(svc.history().change_points("demo", "parse", "task-clock", std::nullopt, std::nullopt).empty());
    }
    SUBCASE("the same step with min_magnitude below it: one alert")
    {
        svc.projects().set_change_point_settings("demo", store::change_point_settings{std::nullopt, std::nullopt,
                                                                                      std::nullopt, 0.02});
        store_series(svc, 60, 40, 0.05, &opened);
        CHECK(opened.size() == 1);
    }
    SUBCASE("the server's default applies where the project has no setting")
    {
        stats::change_point_options defaults;
        defaults.min_magnitude = 0.10;
        svc.background().set_change_point_defaults(defaults);
        store_series(svc, 60, 40, 0.05, &opened);
        CHECK(opened.empty());
        svc.projects().set_change_point_settings("demo", store::change_point_settings{"otava", 40, std::nullopt, 0.0});
        const auto o = svc.projects().change_point_options("demo");
        CHECK(o.method == stats::change_point_method::otava);
        CHECK(o.window == 40);
        CHECK(o.min_magnitude == 0.0);
        CHECK(o.max_p == 0.001);
    }
    SUBCASE("bad settings name the field and store nothing")
    {
        CHECK_THROWS_WITH_AS(
            svc.projects().set_change_point_settings("demo", store::change_point_settings{"cusum", std::nullopt,
                                                                                          std::nullopt, std::nullopt}),
            "change_point_method: expected perfgate or otava, got 'cusum'", perfgate::error);
        CHECK_THROWS_WITH_AS(svc.projects().set_change_point_settings(
                                 "demo", store::change_point_settings{std::nullopt, 1, std::nullopt, std::nullopt}),
                             "change_point_window: must be 2 to 1000000, got 1", perfgate::error);
        CHECK_THROWS_WITH_AS(svc.projects().set_change_point_settings(
                                 "demo", store::change_point_settings{std::nullopt, std::nullopt, 1.5, std::nullopt}),
                             "change_point_max_p: must be in (0, 1), got 1.5", perfgate::error);
        CHECK_THROWS_WITH_AS(svc.projects().set_change_point_settings(
                                 "demo", store::change_point_settings{std::nullopt, std::nullopt, std::nullopt, -1.0}),
                             "change_point_min_magnitude: must be finite and >= 0, got -1", perfgate::error);
        CHECK_THROWS_AS(svc.projects().set_change_point_settings(
                            "nope", store::change_point_settings{"otava", std::nullopt, std::nullopt, std::nullopt}),
                        perfgate::error);
        CHECK_FALSE(svc.projects().change_point_settings("demo").method);
        CHECK_FALSE(svc.projects().change_point_settings("demo").window);
        stats::change_point_options bad;
        bad.max_p = 0;
        CHECK_THROWS_AS(svc.background().set_change_point_defaults(bad), perfgate::error);
    }
}

TEST_CASE("service: the background watch opens the same alert as the inline one, after the upload returns")
{
    test_database inline_where(test_database::sqlite_kind::memory),
        background_where(test_database::sqlite_kind::memory);
    store::store inline_db(inline_where.location()), background_db(background_where.location());
    service::service inline_svc(inline_db), background_svc(background_db);
    std::vector<service::watch_outcome> heard;
    std::mutex heard_mu;
    background_svc.background().watch_in_background([&](const watch_outcome& o) {
        std::lock_guard lock(heard_mu);
        heard.push_back(o);
    });
    std::vector<std::int64_t> opened_inline, opened_in_reply;
    const auto inline_ids = store_series(inline_svc, 60, 40, 0.05, &opened_inline);
    const auto ids = store_series(background_svc, 60, 40, 0.05, &opened_in_reply);
    // Candidate runs never reach the queue.
    store_series(background_svc, 5, 5, 0.0, nullptr, "candidate");
    CHECK(opened_in_reply.empty()); // uploads do not wait for detection
    background_svc.background().drain_watch();

    REQUIRE(opened_inline.size() == 1);
    const auto want = inline_svc.alerts().get("demo", opened_inline.front());
    const auto got = background_svc.alerts().list({"demo", {}, {}, {}, {}, 100});
    REQUIRE(got.size() == 1);
    const auto index_of = [](const std::vector<std::int64_t>& v, std::int64_t id) {
        return std::find(v.begin(), v.end(), id) - v.begin();
    };
    CHECK(index_of(ids, got.front().change.run_id) == index_of(inline_ids, want.change.run_id));
    CHECK(got.front().change.p_value == want.change.p_value);
    CHECK(got.front().change.delta_pct == want.change.delta_pct);

    const auto counts = background_svc.background().watch_stats();
    CHECK(counts.failed == 0);
    CHECK(counts.pending == 0);
    CHECK(counts.done + counts.coalesced == 60); // every baseline upload, none of the candidates
    std::lock_guard lock(heard_mu);
    CHECK(heard.size() == counts.done);
    const auto with_alert = std::count_if(heard.begin(), heard.end(), [](const auto& o) { return !o.alerts.empty(); });
    CHECK(with_alert == 1);
    CHECK(inline_svc.background().watch_stats().done == 0); // no worker: all zero
}

TEST_CASE("watch_queue: coalesces a series's waiting jobs, pushes back when full, survives failures, drains on stop")
{
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    std::vector<service::watch_job> ran;
    std::vector<service::watch_outcome> heard;
    auto runner = [&](const watch_job& j) -> std::vector<std::int64_t> {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return release; });
        ran.push_back(j);
        if (j.benchmark == "broken") throw std::runtime_error("database is locked");
        return {j.run_id * 10};
    };
    auto reporter = [&](const watch_outcome& o) {
        std::lock_guard lock(mu);
        heard.push_back(o);
    };
    const auto job = [](std::string bench, std::int64_t run, std::string counter) {
        return service::watch_job{"demo", std::move(bench), "main", "tb", {{std::move(counter), "msec"}}, run};
    };

    SUBCASE("runs of one series arriving while the worker is busy are examined once")
    {
        {
            service::watch_queue q(runner, reporter, 8);
            q.push(job("parse", 1, "task-clock")); // the worker takes it and blocks in runner
            for (int i = 0; i < 200 && q.stats().pending != 0; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            q.push(job("parse", 2, "task-clock"));
            q.push(job("parse", 3, "page-faults"));
            q.push(job("parse", 4, "task-clock"));
            q.push(job("lex", 5, "task-clock"));
            CHECK(q.stats().coalesced == 2);
            CHECK(q.stats().pending <= 2);
            {
                std::lock_guard lock(mu);
                release = true;
            }
            cv.notify_all();
            q.drain();
            const auto c = q.stats();
            CHECK(c.done == 3);
            CHECK(c.pending == 0);
            CHECK(c.failed == 0);
        }
        REQUIRE(ran.size() == 3);
        // The merged job covers the newest run and both counters.
        const auto merged = std::find_if(ran.begin(), ran.end(), [](const auto& j) { return j.run_id == 4; });
        REQUIRE(merged != ran.end());
        CHECK(merged->counters.size() == 2);
        CHECK(heard.size() == 3);
    }
    SUBCASE("a full queue makes the uploader run its own job; nothing is dropped")
    {
        {
            std::lock_guard lock(mu);
            release = true; // jobs finish at once
        }
        service::watch_queue q(runner, reporter, 1);
        for (int i = 1; i <= 50; ++i) q.push(job("bench-" + std::to_string(i), i, "task-clock"));
        q.drain();
        CHECK(q.stats().done == 50);
        CHECK(heard.size() == 50);
    }
    SUBCASE("a failing job is reported and counted; the worker goes on")
    {
        {
            std::lock_guard lock(mu);
            release = true;
        }
        service::watch_queue q(runner, reporter, 8);
        q.push(job("broken", 1, "task-clock"));
        q.push(job("parse", 2, "task-clock"));
        q.drain();
        CHECK(q.stats().failed == 1);
        CHECK(q.stats().done == 2);
        std::lock_guard lock(mu);
        REQUIRE(heard.size() == 2);
        CHECK(heard[0].error == "database is locked");
        CHECK(heard[0].alerts.empty());
        CHECK(heard[1].error.empty());
        CHECK(heard[1].alerts == std::vector<std::int64_t>{20});
    }
    SUBCASE("stopping finishes every queued job")
    {
        {
            service::watch_queue q(runner, reporter, 8);
            for (int i = 1; i <= 5; ++i) q.push(job("bench-" + std::to_string(i), i, "task-clock"));
            {
                std::lock_guard lock(mu);
                release = true;
            }
            cv.notify_all();
        } // destructor: joins after the queue is empty
        CHECK(ran.size() == 5);
        CHECK(heard.size() == 5);
    }
}

TEST_CASE("service: compare_later hands a fresh report to the committer and answers once it is stored")
{
    test_database where;
    store::store db(where.location());
    service::service svc(db);
    const auto base = svc.runs().ingest_run(stored_run("baseline", ramp())).run_id;
    const auto cand = svc.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
    const auto cand2 = svc.runs().ingest_run(stored_run("candidate", ramp(1.10))).run_id;
    const std::vector<std::pair<std::int64_t, std::int64_t>> pairs{{base, cand}};

    std::mutex mu;
    std::vector<std::pair<std::exception_ptr, std::optional<service::comparison>>> heard;
    const auto listen = [&](std::exception_ptr e, const comparison* c) {
        std::lock_guard lock(mu);
        heard.emplace_back(e, c ? std::optional<comparison>(*c) : std::nullopt);
    };

    SUBCASE("without a committer it is compare(): the answer is returned, done is not called")
    {
        const auto now = svc.comparisons().compare_later("demo", pairs, policy{}, listen);
        REQUIRE(now.has_value());
        CHECK(db.comparisons().load("demo", now->id).has_value());
        CHECK(heard.empty());
        CHECK(svc.background().commit_stats().rows == 0);
    }
    SUBCASE("with one: nullopt, then done once with the stored comparison; a repeat is answered at once")
    {
        svc.background().commit_in_background();
        CHECK_FALSE(svc.comparisons().compare_later("demo", pairs, policy{}, listen).has_value());
        svc.background().drain_commits();
        std::optional<service::comparison> got;
        {
            std::lock_guard lock(mu);
            REQUIRE(heard.size() == 1);
            CHECK_FALSE(heard[0].first);
            REQUIRE(heard[0].second.has_value());
            got = heard[0].second;
        }
        CHECK(got->id > 0);
        CHECK(got->result.comparison_id == got->id);
        CHECK(got->result.result == verdict::fail);
        CHECK(nlohmann::json::parse(*got->json).at("comparison_id") == got->id);
        // Stored without the id, as compare() stores it.
        nlohmann::json served = nlohmann::json::parse(*got->json);
        served.erase("comparison_id");
        CHECK(db.comparisons().load("demo", got->id) ==
              served.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        // The repeat: the report the service holds, now; nothing queued.
        const auto again = svc.comparisons().compare_later("demo", pairs, policy{}, listen);
        REQUIRE(again.has_value());
        CHECK(again->id == got->id);
        CHECK(*again->json == *got->json);
        CHECK(svc.comparisons().compare("demo", pairs, policy{}).id == got->id);
        svc.background().drain_commits();
        CHECK(heard.size() == 1);
        const auto counts = svc.background().commit_stats();
        CHECK(counts.rows == 1);
        CHECK(counts.batches == 1);
        CHECK(counts.failed == 0);
    }
    SUBCASE("errors before the write are thrown, and nothing is queued")
    {
        svc.background().commit_in_background();
        CHECK_THROWS_WITH_AS(svc.comparisons().compare_later("demo", {{base, 999999}}, policy{}, listen),
                             doctest::Contains("candidate run 999999 not found"), error);
        svc.background().drain_commits();
        CHECK(heard.empty());
        CHECK(svc.background().commit_stats().rows == 0);
    }
    SUBCASE("many threads: every request answered once, identical ones with one id, no more commits than rows")
    {
        svc.background().commit_in_background();
        constexpr int threads = 4, each = 24;
        {
            std::vector<std::jthread> pool;
            for (int t = 0; t < threads; ++t) {
                pool.emplace_back([&, t] {
                    for (int i = 0; i < each; ++i) {
                        // Half the requests name one pair; the rest, distinct policies of another.
                        policy rules;
                        std::vector<std::pair<std::int64_t, std::int64_t>> p{{base, cand}};
                        if (i % 2) {
                            p = {{base, cand2}};
                            rules.threshold_pct = 1.0 + t * each + i;
                        }
                        if (auto now = svc.comparisons().compare_later("demo", p, rules, listen))
                            listen(nullptr, &*now);
                    }
                });
            }
        }
        svc.background().drain_commits();
        std::lock_guard lock(mu);
        REQUIRE(heard.size() == threads * each);
        std::set<std::int64_t> shared_ids, distinct_ids;
        for (const auto& [e, c] : heard) {
            REQUIRE_FALSE(e);
            REQUIRE(c.has_value());
            CHECK(db.comparisons().load("demo", c->id).has_value());
            (c->result.benchmarks.front().candidate_run == cand ? shared_ids : distinct_ids).insert(c->id);
        }
        CHECK(shared_ids.size() == 1);
        CHECK(distinct_ids.size() == threads * each / 2);
        const auto counts = svc.background().commit_stats();
        CHECK(counts.failed == 0);
        CHECK(counts.fallbacks == 0);
        CHECK(counts.batches <= counts.rows);
        CHECK(db.comparisons().recent("demo", 200).size() == 1 + threads * each / 2);
    }
}

TEST_CASE("service: commit_queue stores waiting rows in one batch, a bad row fails alone, stopping answers all")
{
    test_database where;
    store::store db(where.location());
    service::service svc(db);
    const auto base = svc.runs().ingest_run(stored_run("baseline", ramp())).run_id;
    const auto cand = svc.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
    const auto row = [&](std::string key, std::int64_t candidate) {
        return store::comparison_row{
            "demo", base, candidate, R"({"verdict":"pass","key":")" + key + "\"}", request_key_of(key), "pass", 1};
    };

    // The first row's answer holds the committer until the rest are queued:
    // they then wait together and go in one batch.
    std::mutex mu;
    std::condition_variable cv;
    bool held = false, release = false;
    std::map<std::string, std::pair<std::string, std::int64_t>> answers; // label -> (error id, id)
    const auto answer = [&](std::string label, bool hold, std::string key = {}) {
        if (key.empty()) key = label;
        return [&, label, key, hold](std::exception_ptr e, std::int64_t id, store::comparison_row& r) {
            std::unique_lock lock(mu);
            CHECK(r.request_key == request_key_of(key));
            std::string what;
            if (e) {
                try {
                    std::rethrow_exception(e);
                } catch (const error& err) {
                    what = err.id();
                }
            }
            answers[label] = {what, id};
            if (!hold) return;
            held = true;
            cv.notify_all();
            cv.wait(lock, [&] { return release; });
        };
    };
    // Push the first row, and wait until the committer holds on its answer.
    const auto push_first = [&](service::commit_queue& q) {
        q.push(row("first", cand), answer("first", true));
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return held; });
    };
    const auto let_go = [&] {
        std::lock_guard lock(mu);
        release = true;
        cv.notify_all();
    };

    SUBCASE("rows that wait together are one transaction; a repeated key has one id")
    {
        service::commit_queue q(db);
        push_first(q);
        for (const char* k : {"a", "b", "c"}) q.push(row(k, cand), answer(k, false));
        q.push(row("a", cand), answer("a again", false, "a"));
        let_go();
        q.drain();
        const auto counts = q.stats();
        CHECK(counts.rows == 5);
        CHECK(counts.batches == 2);
        CHECK(counts.largest == 4);
        CHECK(counts.failed == 0);
        std::lock_guard lock(mu);
        REQUIRE(answers.size() == 5);
        CHECK(answers["a again"].second == answers["a"].second);
        CHECK(answers["b"].second != answers["a"].second);
        for (const auto& [key, a] : answers) {
            CHECK(a.first.empty());
            CHECK(db.comparisons().load("demo", a.second).has_value());
        }
    }
    SUBCASE("a batch with a bad row is stored row by row: the bad row fails alone")
    {
        service::commit_queue q(db);
        push_first(q);
        q.push(row("good", cand), answer("good", false));
        q.push(row("bad", 424242), answer("bad", false));
        q.push(row("also good", cand), answer("also good", false));
        let_go();
        q.drain();
        const auto counts = q.stats();
        CHECK(counts.rows == 4);
        CHECK(counts.failed == 1);
        CHECK(counts.fallbacks == 1);
        std::lock_guard lock(mu);
        CHECK(answers["bad"].first == "store.not_found");
        CHECK(answers["bad"].second == 0);
        CHECK_FALSE(db.comparisons().find("demo", request_key_of("bad")).has_value());
        for (const char* k : {"good", "also good"}) {
            CHECK(answers[k].first.empty());
            CHECK(db.comparisons().find("demo", request_key_of(k))->first == answers[k].second);
        }
    }
    SUBCASE("a batch of one bad row gets its own error")
    {
        service::commit_queue q(db);
        q.push(row("bad", 424242), answer("bad", false));
        q.drain();
        CHECK(q.stats().failed == 1);
        CHECK(q.stats().batches == 0);
        std::lock_guard lock(mu);
        CHECK(answers["bad"].first == "store.not_found");
    }
    SUBCASE("stopping stores and answers every queued row")
    {
        {
            service::commit_queue q(db);
            push_first(q);
            for (const char* k : {"x", "y", "z"}) q.push(row(k, cand), answer(k, false));
            let_go();
        }
        std::lock_guard lock(mu);
        CHECK(answers.size() == 4);
        for (const char* k : {"first", "x", "y", "z"}) {
            CHECK(db.comparisons().find("demo", request_key_of(k)).has_value());
        }
    }
}

TEST_CASE("service: the report shows open alerts on the gated series and the recent band")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    std::vector<std::int64_t> opened;
    const auto ids = store_series(svc, 60, 40, 0.05, &opened);
    REQUIRE(opened.size() == 1);
    const model::alert a = svc.alerts().get("demo", opened.front());
    const auto cps = svc.history().change_points("demo", "parse", "task-clock", std::nullopt, std::nullopt);
    REQUIRE(cps.size() == 1);
    const auto at = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), cps.front().run_id) - ids.begin());

    // Candidates of a PR: one at the new level, one far above it.
    const auto inside = svc.runs().ingest_run(stored_run("candidate", {105, 105, 105, 105, 105})).run_id;
    const auto outside = svc.runs().ingest_run(stored_run("candidate", {130, 130, 130, 130, 130})).run_id;
    const auto counter_json = [](const comparison& c) { return json::parse(*c.json)["benchmarks"][0]["counters"][0]; };

    const service::comparison first = svc.comparisons().compare("demo", {{ids.back(), inside}}, policy{});
    const json c = counter_json(first);
    INFO(c.dump());
    REQUIRE(c["open_alerts"].is_array());
    REQUIRE(c["open_alerts"].size() == 1);
    CHECK(c["open_alerts"][0]["id"] == a.id);
    CHECK(c["open_alerts"][0]["status"] == "untriaged");
    CHECK(c["open_alerts"][0]["run_id"] == a.change.run_id);
    CHECK(c["open_alerts"][0]["git_sha"] == a.change.git_sha);
    CHECK(c["open_alerts"][0]["delta_pct"].get<double>() == doctest::Approx(*a.change.delta_pct));
    // The band starts at the change point: the last 30 runs hold both levels,
    // the band only the new one.
    REQUIRE(c["band"].is_object());
    CHECK(c["band"]["since_run"] == cps.front().run_id);
    CHECK(c["band"]["n"] == 60 - at);
    CHECK(c["band"]["lo"].get<double>() > 103);
    CHECK(c["band"]["hi"].get<double>() < 107);
    CHECK(c["outside_band"] == false);
    // The parsed report says the same.
    const counter_report& cr = counter(first.result, "task-clock");
    REQUIRE(cr.open_alerts);
    REQUIRE(cr.open_alerts->size() == 1);
    CHECK(cr.open_alerts->front().id == a.id);
    CHECK(cr.outside_band == false);

    SUBCASE("far outside the band")
    {
        const json o = counter_json(svc.comparisons().compare("demo", {{ids.back(), outside}}, policy{}));
        CHECK(o["outside_band"] == true);
        CHECK(o["open_alerts"].size() == 1);
    }
    SUBCASE("an acknowledged alert is still open")
    {
        svc.alerts().update("demo", a.id, {model::alert_status::acknowledged, {}, "ana"});
        const json o = counter_json(svc.comparisons().compare("demo", {{ids.back(), outside}}, policy{}));
        REQUIRE(o["open_alerts"].size() == 1);
        CHECK(o["open_alerts"][0]["status"] == "acknowledged");
    }
    const auto closed_is_not_open = [&](model::alert_status closed) {
        svc.alerts().update("demo", a.id, {closed, {}, "ana"});
        const json o = counter_json(svc.comparisons().compare("demo", {{ids.back(), outside}}, policy{}));
        CHECK(o["open_alerts"].is_array());
        CHECK(o["open_alerts"].empty());
        CHECK(o["outside_band"] == true);
        // A repeat of the first request is the stored report: the context it
        // was computed with.
        const service::comparison again = svc.comparisons().compare("demo", {{ids.back(), inside}}, policy{});
        CHECK(again.id == first.id);
        CHECK(counter_json(again)["open_alerts"].size() == 1);
    };
    SUBCASE("a fixed alert is not open") { closed_is_not_open(model::alert_status::fixed); }
    SUBCASE("an invalid alert is not open") { closed_is_not_open(model::alert_status::invalid); }
    SUBCASE("alerts of another testbed or branch are not this series's")
    {
        auto other = stored_run("candidate", {105, 105, 105, 105, 105});
        other.testbed = {"ci-2", "cpu", 2, "6.1", "fp-2"};
        const auto elsewhere = svc.runs().ingest_run(other).run_id;
        const json o = counter_json(svc.comparisons().compare("demo", {{ids.back(), elsewhere}}, policy{}));
        CHECK(o["open_alerts"].is_array());
        CHECK(o["open_alerts"].empty());
        CHECK(o["band"].is_null()); // no baseline runs on that testbed
        CHECK(o["outside_band"].is_null());
    }
}

TEST_CASE("service: a report without baseline-branch history has no band and no alerts")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    SUBCASE("one baseline run on the branch: too few points for a band")
    {
        const auto base = svc.runs().ingest_run(stored_run("baseline", ramp())).run_id;
        const auto cand = svc.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
        const json c = json::parse(
            *svc.comparisons().compare("demo", {{base, cand}}, policy{}).json)["benchmarks"][0]["counters"][0];
        CHECK(c["open_alerts"].is_array());
        CHECK(c["open_alerts"].empty());
        CHECK(c["band"].is_null());
        CHECK(c["outside_band"].is_null());
    }
    SUBCASE("a baseline run without a branch names no series")
    {
        auto b = stored_run("baseline", ramp());
        b.branch.clear();
        const auto base = svc.runs().ingest_run(b).run_id;
        const auto cand = svc.runs().ingest_run(stored_run("candidate", ramp(1.05))).run_id;
        const service::comparison cmp = svc.comparisons().compare("demo", {{base, cand}}, policy{});
        const json c = json::parse(*cmp.json)["benchmarks"][0]["counters"][0];
        CHECK(c["open_alerts"].is_null());
        CHECK(c["band"].is_null());
        CHECK(c["outside_band"].is_null());
        CHECK_FALSE(counter(cmp.result, "task-clock").open_alerts);
    }
}

namespace {

// f throws the perfgate::error `id` with exactly `message`.
template <class F>
void check_error(F&& f, const std::string& id, const std::string& message)
{
    try {
        f();
        FAIL("expected the error " << id);
    } catch (const perfgate::error& e) {
        CHECK(e.id() == id);
        CHECK(std::string(e.what()) == message);
    }
}

// A stored run of `benchmark` at commit `sha` on testbed `fp`; run ids grow
// with the order of the calls.
std::int64_t store_commit(service::service& svc, const std::string& sha, const std::string& benchmark,
                          const std::string& fp, const std::string& role = "baseline", double factor = 1.0)
{
    auto r = stored_run(role, ramp(factor), benchmark);
    r.git_sha = sha;
    r.testbed = {"runner-" + fp, "cpu", 2, "6.1", fp};
    return svc.runs().ingest_run(r).run_id;
}

const std::string commit_a = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";
const std::string commit_b = "b1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

} // namespace

TEST_CASE("service: pairs_for resolves run ids and git shas and pairs runs by benchmark and testbed")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    // Base commit: parse on two testbeds (parse on fp-1 measured twice),
    // render on fp-1.
    const auto a_parse_1 = store_commit(svc, commit_a, "parse", "fp-1");
    const auto a_render_1 = store_commit(svc, commit_a, "render", "fp-1");
    const auto a_parse_2 = store_commit(svc, commit_a, "parse", "fp-2");
    const auto a_parse_1_rerun = store_commit(svc, commit_a, "parse", "fp-1");
    // Head commit: parse and render on fp-1, render also on fp-2 (no base
    // there), lex (no base at all).
    const auto b_parse_1 = store_commit(svc, commit_b, "parse", "fp-1", "candidate", 1.05);
    const auto b_render_1 = store_commit(svc, commit_b, "render", "fp-1", "candidate");
    const auto b_render_2 = store_commit(svc, commit_b, "render", "fp-2", "candidate");
    const auto b_lex_1 = store_commit(svc, commit_b, "lex", "fp-1", "candidate");
    using pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

    SUBCASE("two commits: the newest run of each common (benchmark, testbed), by benchmark name")
    {
        const pairs expected{{a_parse_1_rerun, b_parse_1}, {a_render_1, b_render_1}};
        CHECK(svc.comparisons().pairs_for("demo", commit_a, commit_b) == expected);
        // Prefixes of 7 to 40 digits, in either case.
        CHECK(svc.comparisons().pairs_for("demo", commit_a.substr(0, 7), commit_b.substr(0, 12)) == expected);
        std::string upper = commit_a.substr(0, 9);
        std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
        CHECK(svc.comparisons().pairs_for("demo", upper, commit_b) == expected);
        (void)a_parse_1;
        (void)b_render_2;
        (void)b_lex_1;

        // The pairs are one gate of compare().
        const auto c = svc.comparisons().compare("demo", expected, policy{});
        REQUIRE(c.result.benchmarks.size() == 2);
        CHECK(c.result.benchmarks[0].name == "parse");
        CHECK(c.result.benchmarks[1].name == "render");
    }
    SUBCASE("a benchmark on several common testbeds pairs on the testbed of its newest head run")
    {
        const auto b_parse_2 = store_commit(svc, commit_b, "parse", "fp-2", "candidate");
        CHECK(svc.comparisons().pairs_for("demo", commit_a, commit_b) ==
              pairs{{a_parse_2, b_parse_2}, {a_render_1, b_render_1}});
    }
    SUBCASE("a run id pairs with the other commit's run of its benchmark and testbed")
    {
        CHECK(svc.comparisons().pairs_for("demo", std::to_string(a_render_1), commit_b) ==
              pairs{{a_render_1, b_render_1}});
        CHECK(svc.comparisons().pairs_for("demo", commit_a, std::to_string(b_parse_1)) ==
              pairs{{a_parse_1_rerun, b_parse_1}});
        // An older run of the commit is still itself.
        CHECK(svc.comparisons().pairs_for("demo", std::to_string(a_parse_1), commit_b) ==
              pairs{{a_parse_1, b_parse_1}});
        check_error([&] { (void)svc.comparisons().pairs_for("demo", std::to_string(a_parse_2), commit_b); },
                    "compare.mismatch",
                    fmt::format("base '{}' and head '{}' have no benchmark measured on the same testbed: base has "
                                "parse on runner-fp-2; head has lex on runner-fp-1, render on runner-fp-2, render on "
                                "runner-fp-1 and 1 more",
                                a_parse_2, commit_b));
    }
    SUBCASE("two run ids are one pair, as given")
    {
        CHECK(svc.comparisons().pairs_for("demo", std::to_string(a_parse_2), std::to_string(b_lex_1)) ==
              pairs{{a_parse_2, b_lex_1}});
        // compare() is the one that checks what can be compared.
        CHECK_THROWS_WITH_AS(svc.comparisons().compare("demo", {{a_parse_2, b_lex_1}}, policy{}),
                             doctest::Contains("is benchmark 'parse' but run"), perfgate::error);
    }
}

TEST_CASE("service: pairs_for names the side and the ref of every bad ref")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    const auto a = store_commit(svc, commit_a, "parse", "fp-1");
    const auto b = store_commit(svc, commit_b, "parse", "fp-1", "candidate");
    const auto theirs = [&] {
        auto r = stored_run("baseline", ramp());
        r.project = "other";
        return svc.runs().ingest_run(r).run_id;
    }();

    SUBCASE("neither a run id nor a git sha")
    {
        for (const std::string& ref :
             std::vector<std::string>{"xyz", "main", "a1b2c3", "a1b2c3g", "-1", "12 34", "", commit_a + "0"}) {
            CAPTURE(ref);
            check_error([&] { (void)svc.comparisons().pairs_for("demo", ref, commit_b); }, "compare.bad_ref",
                        fmt::format("base: '{}' is neither a run id nor a git sha (7-40 hex digits)", ref));
        }
        check_error([&] { (void)svc.comparisons().pairs_for("demo", commit_a, "HEAD~1"); }, "compare.bad_ref",
                    "head: 'HEAD~1' is neither a run id nor a git sha (7-40 hex digits)");
        const std::string huge(5000, 'x');
        check_error([&] { (void)svc.comparisons().pairs_for("demo", huge, commit_b); }, "compare.bad_ref",
                    fmt::format("base: '{}...' (5000 bytes) is neither a run id nor a git sha (7-40 hex digits)",
                                std::string(64, 'x')));
    }
    SUBCASE("a run id the project does not have")
    {
        check_error([&] { (void)svc.comparisons().pairs_for("demo", "9999", commit_b); }, "compare.not_found",
                    "base: run 9999 not found in project 'demo'");
        check_error([&] { (void)svc.comparisons().pairs_for("demo", commit_a, std::to_string(theirs)); },
                    "compare.not_found", fmt::format("head: run {} not found in project 'demo'", theirs));
        check_error([&] { (void)svc.comparisons().pairs_for("demo", "0", std::to_string(b)); }, "compare.not_found",
                    "base: run 0 not found in project 'demo'");
        check_error([&] { (void)svc.comparisons().pairs_for("demo", "123456789012345678901234567890", commit_b); },
                    "compare.not_found", "base: run 123456789012345678901234567890 not found in project 'demo'");
    }
    SUBCASE("a git sha the project does not have")
    {
        check_error([&] { (void)svc.comparisons().pairs_for("demo", commit_a, "c1b2c3d"); }, "compare.not_found",
                    "head: no run of project 'demo' has a git sha starting with 'c1b2c3d'");
        // Another project's commit is not this project's.
        check_error([&] { (void)svc.comparisons().pairs_for("other", commit_a, "0123456"); }, "compare.not_found",
                    fmt::format("base: no run of project 'other' has a git sha starting with '{}'", commit_a));
    }
    SUBCASE("a prefix of several commits names up to three, newest first")
    {
        std::vector<std::string> shas;
        for (const char c : {'5', '6', '7', '8'}) {
            shas.push_back(commit_a.substr(0, 7) + c + commit_a.substr(8));
            store_commit(svc, shas.back(), "parse", "fp-1");
        }
        check_error([&] { (void)svc.comparisons().pairs_for("demo", commit_a.substr(0, 7), commit_b); },
                    "compare.ambiguous_ref",
                    fmt::format("base: git sha prefix 'a1b2c3d' matches 5 commits of project 'demo': {}, {}, {} and 2 "
                                "more; give more digits",
                                shas[3], shas[2], shas[1]));
        // One digit more picks one.
        CHECK(svc.comparisons().pairs_for("demo", commit_a.substr(0, 8), commit_b) ==
              std::vector<std::pair<std::int64_t, std::int64_t>>{{a, b}});
    }
    SUBCASE("no benchmark on a common testbed")
    {
        const auto c = store_commit(svc, "c1b2c3d4", "render", "fp-1", "candidate");
        const auto d = store_commit(svc, "d1b2c3d4", "parse", "fp-2", "candidate");
        (void)c;
        (void)d;
        check_error([&] { (void)svc.comparisons().pairs_for("demo", commit_a, "c1b2c3d4"); }, "compare.mismatch",
                    fmt::format("base '{}' and head 'c1b2c3d4' have no benchmark measured on the same testbed: base "
                                "has parse on runner-fp-1; head has render on runner-fp-1",
                                commit_a));
        check_error([&] { (void)svc.comparisons().pairs_for("demo", commit_a, "d1b2c3d4"); }, "compare.mismatch",
                    fmt::format("base '{}' and head 'd1b2c3d4' have no benchmark measured on the same testbed: base "
                                "has parse on runner-fp-1; head has parse on runner-fp-2",
                                commit_a));
    }
    SUBCASE("an unknown project")
    {
        check_error([&] { (void)svc.comparisons().pairs_for("nope", commit_a, commit_b); }, "project.not_found",
                    "no project 'nope' (projects are created by `perfgate token create`)");
    }
}

TEST_CASE("service: recent comparisons carry the verdict of the stored report")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    const auto base = store_commit(svc, commit_a, "parse", "fp-1");
    const auto slower = store_commit(svc, commit_b, "parse", "fp-1", "candidate", 1.05);
    const auto same = store_commit(svc, commit_b, "parse", "fp-1", "candidate");
    const auto failed = svc.comparisons().compare("demo", {{base, slower}}, policy{});
    const auto passed = svc.comparisons().compare("demo", {{base, same}}, policy{});
    REQUIRE(failed.result.result == verdict::fail);
    REQUIRE(passed.result.result == verdict::pass);
    // A repeat is the stored comparison, not a new row.
    svc.comparisons().compare("demo", {{base, slower}}, policy{});

    const auto listed = svc.comparisons().recent("demo");
    REQUIRE(listed.size() == 2);
    CHECK(listed[0].id == passed.id);
    CHECK(listed[0].verdict == "pass");
    CHECK(listed[0].benchmarks == 1u);
    CHECK(listed[0].candidate.run_id == same);
    CHECK(listed[1].id == failed.id);
    CHECK(listed[1].verdict == "fail");
    CHECK(listed[1].baseline.git_sha == commit_a);
    CHECK(listed[1].candidate.git_sha == commit_b);
    CHECK(svc.comparisons().recent("demo", 1).size() == 1);
    CHECK(svc.comparisons().recent("demo", service::max_comparison_limit).size() == 2);

    check_error([&] { (void)svc.comparisons().recent("demo", 0); }, "query.bad_value", "limit 0: expected 1 to 200");
    check_error([&] { (void)svc.comparisons().recent("demo", 201); }, "query.bad_value",
                "limit 201: expected 1 to 200");
    check_error([&] { (void)svc.comparisons().recent("nope"); }, "project.not_found",
                "no project 'nope' (projects are created by `perfgate token create`)");
}

TEST_CASE("service: the repository URL is an absolute http(s) URL, stored without a trailing slash")
{
    SUBCASE("normalize_repository_url")
    {
        const std::string_view label = "--repository-url";
        CHECK(service::normalize_repository_url(label, "https://github.com/acme/demo") ==
              "https://github.com/acme/demo");
        CHECK(service::normalize_repository_url(label, "https://github.com/acme/demo///") ==
              "https://github.com/acme/demo");
        CHECK(service::normalize_repository_url(label, "http://git.example.org:8080/a/b-c_d.e~f%20") ==
              "http://git.example.org:8080/a/b-c_d.e~f%20");
        CHECK(service::normalize_repository_url(label, "").empty());
        // Schemes are case-insensitive (RFC 3986 §3.1): stored in lower case.
        CHECK(service::normalize_repository_url(label, "HTTPS://GitHub.com/acme/demo/") ==
              "https://GitHub.com/acme/demo");
        CHECK(service::normalize_repository_url(label, "Http://x.org/a") == "http://x.org/a");
        const std::string longest = "https://x.org/" + std::string(service::max_repository_url_bytes - 14, 'a');
        CHECK(service::normalize_repository_url(label, longest + "/") == longest);

        const std::pair<std::string, std::string> bad[] = {
            {"github.com/acme/demo", "--repository-url: 'github.com/acme/demo' must start with https:// or http://"},
            {"ftp://example.org/x", "--repository-url: 'ftp://example.org/x' must start with https:// or http://"},
            {"HTTPS:github.com/a", "--repository-url: 'HTTPS:github.com/a' must start with https:// or http://"},
            {"javascript:alert(1)", "--repository-url: 'javascript:alert(1)' must start with https:// or http://"},
            {"https://", "--repository-url: 'https://' has no host"},
            {"https:///acme/demo", "--repository-url: 'https:///acme/demo' has no host"},
            {"https://github.com/acme demo",
             "--repository-url: byte 0x20 at offset 23 is not allowed in a URL (no whitespace, control or non-ASCII "
             "bytes: percent-encode them)"},
            {"https://github.com/acme\n",
             "--repository-url: byte 0x0a at offset 23 is not allowed in a URL (no whitespace, control or non-ASCII "
             "bytes: percent-encode them)"},
            {"https://gïthub.com",
             "--repository-url: byte 0xc3 at offset 9 is not allowed in a URL (no whitespace, control or non-ASCII "
             "bytes: percent-encode them)"},
            {"https://x.org/\"onmouseover=\"x",
             "--repository-url: '\"' at offset 14 is not allowed in a URL (no quotes, <, >, ` or \\)"},
            {"https://x.org/'",
             "--repository-url: ''' at offset 14 is not allowed in a URL (no quotes, <, >, ` or \\)"},
            {"https://x.org/<script>",
             "--repository-url: '<' at offset 14 is not allowed in a URL (no quotes, <, >, ` or \\)"},
            {"https://x.org/a?tab=1",
             "--repository-url: '?' at offset 15: the URL cannot have a query or a fragment (pages append "
             "/commit/SHA to it)"},
            {"https://x.org/a#readme",
             "--repository-url: '#' at offset 15: the URL cannot have a query or a fragment (pages append "
             "/commit/SHA to it)"},
            {longest + "a", "--repository-url: 513 bytes, longer than the limit of 512"},
        };
        for (const auto& entry : bad) {
            const std::string& url = entry.first;
            CAPTURE(url);
            check_error([&] { (void)service::normalize_repository_url(label, url); }, "ingest.bad_field", entry.second);
        }
        // Quoted in part only.
        check_error([&] { (void)service::normalize_repository_url(label, std::string(1000, 'x')); }, "ingest.bad_field",
                    fmt::format("--repository-url: '{}...' must start with https:// or http://", std::string(80, 'x')));
    }
    SUBCASE("a project setting through the service")
    {
        test_database where(test_database::sqlite_kind::memory);
        store::store db(where.location());
        service::service svc(db);
        svc.projects().ensure("demo");
        CHECK_FALSE(svc.projects().repository_url("demo").has_value());
        svc.projects().set_repository_url("demo", "https://github.com/acme/demo/");
        CHECK(svc.projects().repository_url("demo") == "https://github.com/acme/demo");
        check_error([&] { svc.projects().set_repository_url("demo", "github.com/acme/demo"); }, "ingest.bad_field",
                    "field 'repository_url': 'github.com/acme/demo' must start with https:// or http://");
        CHECK(svc.projects().repository_url("demo") == "https://github.com/acme/demo"); // unchanged
        svc.projects().set_repository_url("demo", "");
        CHECK_FALSE(svc.projects().repository_url("demo").has_value());
        check_error([&] { svc.projects().set_repository_url("nope", "https://x.org"); }, "project.not_found",
                    "no project 'nope' (projects are created by `perfgate token create`)");
        check_error([&] { (void)svc.projects().repository_url("nope"); }, "project.not_found",
                    "no project 'nope' (projects are created by `perfgate token create`)");
    }
}

namespace {

std::string read_gbench(const std::string& name)
{
    std::ifstream in(std::string(PERFGATE_TESTDATA_DIR) + "/gbench/" + name, std::ios::binary);
    REQUIRE_MESSAGE(in, "cannot read " << name);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

model::ingest_request gbench_upload(const std::string& file, std::string role)
{
    model::ingest_request req;
    req.project = "demo";
    req.role = std::move(role);
    req.git_sha = "0123abcd";
    req.branch = "main";
    req.perf_csv = read_gbench(file);
    req.source = file;
    return req;
}

} // namespace

TEST_CASE("service: a google/benchmark upload stores a run per benchmark, all or none")
{
    test_database where;
    store::store db(where.location());
    service::service svc(db);
    svc.projects().ensure("demo");

    // Measured in one session (interleaved), as perfgate run would.
    auto base_req = gbench_upload("baseline.json", "baseline");
    base_req.session = "suite-session";
    const auto base = svc.runs().ingest(base_req);
    CHECK(base.benchmarks ==
          std::vector<std::string>{"BM_Sort/64", "BM_Sort/1024", "BM_Accumulate", "BM_StringCat/threads:2"});
    REQUIRE(base.run_ids.size() == 4);
    CHECK(base.run_id == base.run_ids.front());
    CHECK(db.maintenance().runs_count() == 4);
    const auto stored = db.runs().load("demo", base.run_ids[2]);
    REQUIRE(stored.has_value());
    CHECK(stored->benchmark == "BM_Accumulate");
    CHECK(stored->role == "baseline");
    bool has_real_time = false;
    for (const auto& c : stored->counters) {
        if (c.counter != "real_time") continue;
        has_real_time = true;
        CHECK(c.unit == "ns");
        CHECK(c.samples.size() == 10);
    }
    CHECK(has_real_time);

    // The stored runs compare as the files do: BM_Accumulate doubled.
    auto cand_req = gbench_upload("candidate.json", "candidate");
    cand_req.session = "suite-session";
    const auto cand = svc.runs().ingest(cand_req);
    REQUIRE(cand.run_ids.size() == 4);
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    for (std::size_t i = 0; i < 4; ++i) pairs.emplace_back(base.run_ids[i], cand.run_ids[i]);
    const service::comparison c = svc.comparisons().compare("demo", pairs, policy{});
    bool found = false;
    for (const auto& b : c.result.benchmarks) {
        if (b.name != "BM_Accumulate") continue;
        found = true;
        for (const auto& ctr : b.counters)
            if (ctr.name == "real_time") CHECK(ctr.state == status::regression);
    }
    CHECK(found);
    CHECK(c.result.result == verdict::fail);

    // A retry under one Idempotency-Key answers every run of the first upload.
    const auto first = svc.runs().ingest(gbench_upload("baseline.json", "baseline"), std::string("suite-1"));
    const auto again = svc.runs().ingest(gbench_upload("baseline.json", "baseline"), std::string("suite-1"));
    CHECK_FALSE(first.replayed);
    CHECK(again.replayed);
    CHECK(again.run_ids == first.run_ids);
    CHECK(again.benchmarks == first.benchmarks);
    CHECK(db.maintenance().runs_count() == 12);

    // One counter name the store refuses (empty): nothing of the upload is stored.
    auto doc = nlohmann::json::parse(read_gbench("baseline.json"));
    for (auto& row : doc["benchmarks"])
        if (row["name"] == "BM_Accumulate") row[""] = 1.0; // a user counter without a name
    auto spaced = gbench_upload("baseline.json", "baseline");
    spaced.perf_csv = doc.dump();
    try {
        (void)svc.runs().ingest(spaced);
        FAIL("a counter without a name was stored");
    } catch (const error& e) {
        CHECK(e.id() == "ingest.bad_field");
        CHECK(std::string(e.what()).find("counter") != std::string::npos);
    }
    CHECK(db.maintenance().runs_count() == 12);

    // Forced as perf stat output it is perf's error; an unknown format is named.
    auto forced = gbench_upload("baseline.json", "baseline");
    forced.input_format = "perf";
    CHECK_THROWS_WITH_AS((void)svc.runs().ingest(forced), doctest::Contains("baseline.json"), error);
    forced.input_format = "xml";
    try {
        (void)svc.runs().ingest(forced);
        FAIL("input_format xml accepted");
    } catch (const error& e) {
        CHECK(e.id() == "ingest.bad_field");
        CHECK(std::string(e.what()).starts_with("field 'input_format': 'xml' is not one of perf, gbench"));
    }
    CHECK(db.maintenance().runs_count() == 12);

    // A benchmark that failed (SkipWithError) is named, not stored.
    const auto with_error = svc.runs().ingest(gbench_upload("with_error.json", "candidate"));
    CHECK(with_error.benchmarks == std::vector<std::string>{"BM_Sort/64"});
    bool warned = false;
    for (const auto& w : with_error.warnings)
        warned = warned || w == "benchmark 'BM_Err' failed: no input file: not stored";
    CHECK(warned);
    CHECK(db.maintenance().runs_count() == 13);

    // Aggregates only: refused, nothing stored.
    CHECK_THROWS_WITH_AS((void)svc.runs().ingest(gbench_upload("aggregates_only.json", "baseline")),
                         doctest::Contains("only aggregates"), error);
    CHECK(db.maintenance().runs_count() == 13);
}

TEST_CASE("service: a harness upload with a value beyond a double in ns is ingest.bad_input, and NaN counters store")
{
    test_database where;
    store::store db(where.location());
    service::service svc(db);
    svc.projects().ensure("demo");
    // 1e300 s fits a double, not in ns: the store refused it as an opaque
    // store.constraint (HTTP 422); now the input error names the field.
    auto doc = nlohmann::json::parse(read_gbench("baseline.json"));
    doc["benchmarks"][3]["real_time"] = 1e300;
    doc["benchmarks"][3]["time_unit"] = "s";
    auto big = gbench_upload("baseline.json", "baseline");
    big.perf_csv = doc.dump();
    try {
        (void)svc.runs().ingest(big);
        FAIL("a time beyond a double in ns was stored");
    } catch (const error& e) {
        CHECK(std::string(e.id()) == "ingest.bad_input");
        CHECK(std::string(e.what()).find("baseline.json: benchmarks[3].real_time: benchmark '") != std::string::npos);
    }
    CHECK(db.maintenance().runs_count() == 0);
    // google/benchmark's bare NaN / Infinity user counters: the runs store,
    // those counters without values, and the upload says so.
    const auto nan = svc.runs().ingest(gbench_upload("nan_counters.json", "baseline"));
    REQUIRE(nan.run_ids.size() == 1);
    CHECK(db.maintenance().runs_count() == 1);
    bool warned = false;
    for (const auto& w : nan.warnings)
        warned = warned || w.find("counter 'nan' is NaN or Infinity") != std::string::npos;
    CHECK(warned);
}

TEST_CASE("service: webhooks are checked before they are stored, and the notifier's queue drops the oldest when full")
{
    test_database where(test_database::sqlite_kind::memory);
    perfgate::store::store db(where.location());
    perfgate::service::service svc(db);
    db.projects().ensure("demo");

    // Refused, naming the option, and nothing stored.
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "hooks.example.com", "json", "", "--webhook"),
                         "--webhook: 'hooks.example.com' must start with https:// or http://", perfgate::error);
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "https://", "json", ""),
                         "field 'url': 'https://' has no host", perfgate::error);
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "https://x.org/a b", "json", ""),
                         "field 'url': byte 0x20 at offset 15 is not allowed in a URL (no whitespace, control or "
                         "non-ASCII bytes: percent-encode them)",
                         perfgate::error);
    CHECK_THROWS_AS((void)svc.webhooks().add("demo", "https://x.org/" + std::string(2048, 'a'), "json", ""),
                    perfgate::error);
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "https://x.org", "xml", ""),
                         "format: expected json or slack, got 'xml'", perfgate::error);
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "https://x.org", "json", std::string(257, 's')),
                         "secret: 257 bytes, over the limit of 256", perfgate::error);
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "https://x.org", "json", "tab\tsecret"),
                         "secret: control bytes are not allowed", perfgate::error);
    CHECK(svc.webhooks().list("demo").empty());
    for (std::size_t i = 0; i < perfgate::service::max_webhooks_per_project; ++i) {
        (void)svc.webhooks().add("demo", fmt::format("https://x.org/{}", i), "json", "");
    }
    CHECK_THROWS_AS((void)svc.webhooks().add("demo", "https://x.org/17", "json", ""), perfgate::error);
    for (const auto& w : svc.webhooks().list("demo")) CHECK(svc.webhooks().remove("demo", w.id));
    // Schemes are case-insensitive (RFC 3986 §3.1): HTTP:// is stored as http://.
    const auto upper = svc.webhooks().add("demo", "HTTP://hooks.example/A", "json", "");
    REQUIRE(svc.webhooks().list("demo").size() == 1);
    CHECK(svc.webhooks().list("demo")[0].url == "http://hooks.example/A");
    CHECK_THROWS_WITH_AS((void)svc.webhooks().add("demo", "FTP://hooks.example", "json", ""),
                         "field 'url': 'FTP://hooks.example' must start with https:// or http://", perfgate::error);
    CHECK(svc.webhooks().remove("demo", upper));

    // One webhook; a transport that holds the first attempt until released.
    const auto id = svc.webhooks().add("demo", "http://127.0.0.1:9/hook", "json", "k");
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    int sent = 0;
    std::vector<std::string> lines;
    perfgate::service::notifier_options options;
    options.queue_size = 2;
    options.policy = perfgate::service::egress_policy({perfgate::service::parse_ip_range("test", "127.0.0.0/8")});
    {
        perfgate::service::notifier n(
            db,
            [&](const perfgate::service::webhook_post& p) {
                std::unique_lock lock(mu);
                ++sent;
                CHECK(p.connect_address == "127.0.0.1");
                CHECK(p.connect_port == 9);
                const auto ts = std::find_if(p.headers.begin(), p.headers.end(),
                                             [](const auto& h) { return h.first == "X-Perfgate-Timestamp"; });
                REQUIRE(ts != p.headers.end());
                CHECK(p.headers.back().second ==
                      perfgate::service::webhook_signature("k", std::stoll(ts->second), p.body));
                cv.notify_all();
                cv.wait(lock, [&] { return release; });
                return perfgate::service::webhook_answer{204, {}, {}};
            },
            options,
            [&](const std::string& line) {
                std::lock_guard lock(mu);
                lines.push_back(line);
            });
        perfgate::model::alert a;
        a.project = "demo";
        a.id = 1;
        n.notify(perfgate::service::event_alert_opened, a);
        {
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return sent == 1; }); // the first is being sent: the queue is empty
        }
        for (int i = 2; i <= 5; ++i) {
            a.id = i;
            n.notify(perfgate::service::event_alert_opened, a); // 2 fit, then 2 and 3 are dropped
        }
        CHECK(n.stats().dropped == 2);
        CHECK(n.stats().queued == 3); // two waiting, one being sent
        {
            std::lock_guard lock(mu);
            release = true;
        }
        cv.notify_all();
        n.drain();
        CHECK(n.stats().delivered == 3);
        CHECK(n.stats().dropped == 2);
        CHECK(n.stats().queued == 0);
    }
    CHECK(sent == 3);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "perfgate serve: webhook " + std::to_string(id) +
                          " (http://127.0.0.1:9) delivery dropped: project 'demo' has 2 deliveries queued");
    const auto hooks = svc.webhooks().list("demo");
    REQUIRE(hooks.size() == 1);
    CHECK(hooks[0].last_outcome == std::optional<std::string>("delivered"));
}

TEST_CASE("egress policy: every spelling of an inside address is refused, public ones pass, allowed ranges open")
{
    using perfgate::service::egress_policy;
    using perfgate::service::parse_ip_range;
    const egress_policy closed;
    // Issue 43 finding 1: each of these reached the server's own network.
    const std::vector<std::string> inside = {
        "http://127.0.0.1/h",
        "http://2130706433/h",
        "http://0177.0.0.1/h",
        "http://0x7f.0.0.1/h",
        "http://0x7f000001/h",
        "http://017700000001/h",
        "http://127.1/h",
        "http://127.0.1/h",
        "http://127.0.0.1./h",
        "http://0x7F.1:8080/h",
        "http://localhost/h",
        "http://LOCALHOST./h",
        "http://a.b.localhost:9/h",
        "http://[::1]/h",
        "http://[0:0:0:0:0:0:0:1]/h",
        "http://[::ffff:127.0.0.1]/h",
        "http://[::ffff:7f00:1]/h",
        "http://[::127.0.0.1]/h",
        "http://[64:ff9b::7f00:1]/h",
        "http://[64:ff9b::a9fe:a9fe]/h",
        "http://[64:ff9b:1::1]/h",
        "http://[2002:7f00:1::]/h",
        "http://169.254.169.254/latest/meta-data",
        "http://0xa9fea9fe/",
        "http://2852039166/",
        "http://[::ffff:169.254.169.254]/",
        "http://10.1.2.3/",
        "http://012.1.2.3/",
        "http://172.16.0.1/",
        "http://172.31.255.255/",
        "http://192.168.0.1/",
        "http://[::ffff:192.168.0.1]/",
        "http://100.64.0.1/",
        "http://100.127.255.255/",
        "http://[fc00::1]/",
        "http://[fd12:3456::1]/",
        "http://[fe80::1]/",
        "http://[fec0::1]/",
        "http://[ff02::1]/",
        "http://224.0.0.1/",
        "http://239.255.255.250/",
        "http://0.0.0.0/",
        "http://0/",
        "http://[::]/",
        "http://255.255.255.255/",
        "http://240.0.0.1/",
        "https://[::ffff:10.0.0.1]:8443/h",
        "http://u:p@8.8.8.8/h",
        "http://[127.0.0.1]/",
    };
    for (const auto& url : inside) {
        INFO(url);
        CHECK_THROWS_AS(closed.check_url("field 'url'", url), perfgate::error);
    }
    const std::vector<std::string> outside = {
        "http://93.184.216.34/h",     "http://8.8.8.8:8080/x",     "https://[2606:4700::1111]/h",
        "http://172.32.0.1/",         "http://100.128.0.1/",       "http://[::ffff:8.8.8.8]/",
        "http://[64:ff9b::808:808]/", "http://hooks.example.com/", "https://hooks.slack.com/services/T0/B0/XXXX",
        "http://134744072/", // 8.8.8.8 spelt as one number
    };
    for (const auto& url : outside) {
        INFO(url);
        CHECK_NOTHROW(closed.check_url("field 'url'", url));
    }
    // The message names the field, the host as written, the address it is and the way out.
    CHECK_THROWS_WITH_AS(closed.check_url("field 'url'", "http://127.1:8080/x"),
                         "field 'url': host 127.1 is a loopback address (127.0.0.1); webhooks may not connect there "
                         "(perfgate serve --webhook-allow-private CIDR allows a range)",
                         perfgate::error);
    CHECK_THROWS_WITH_AS(closed.check_url("field 'url'", "http://[64:ff9b::a9fe:a9fe]/"),
                         doctest::Contains("is a NAT64 link-local address (64:ff9b::a9fe:a9fe)"), perfgate::error);
    CHECK_THROWS_WITH_AS(closed.check_url("field 'url'", "http://0/"),
                         doctest::Contains("host 0 is the unspecified address (0.0.0.0)"), perfgate::error);

    // --webhook-allow-private opens a range, in every spelling, and nothing else.
    const egress_policy loopback({parse_ip_range("--webhook-allow-private", "127.0.0.0/8")});
    CHECK_NOTHROW(loopback.check_url("u", "http://127.1:8080/x"));
    CHECK_NOTHROW(loopback.check_url("u", "http://[::ffff:127.0.0.1]/"));
    CHECK_NOTHROW(loopback.check_url("u", "http://2130706433/"));
    CHECK_THROWS_AS(loopback.check_url("u", "http://[::1]/"), perfgate::error);     // IPv6 loopback is not in 127/8
    CHECK_THROWS_AS(loopback.check_url("u", "http://localhost/"), perfgate::error); // ::1 too
    CHECK_THROWS_AS(loopback.check_url("u", "http://10.0.0.1/"), perfgate::error);
    const egress_policy office({parse_ip_range("--webhook-allow-private", "10.20.0.0/16"),
                                parse_ip_range("--webhook-allow-private", "fd00::/8")});
    CHECK_NOTHROW(office.check_url("u", "http://10.20.3.4/"));
    CHECK_NOTHROW(office.check_url("u", "http://[fd00::5]/"));
    CHECK_THROWS_AS(office.check_url("u", "http://10.21.0.1/"), perfgate::error);

    CHECK_THROWS_WITH_AS(parse_ip_range("--webhook-allow-private", "10.0.0.1/8"),
                         "--webhook-allow-private: '10.0.0.1/8' has host bits set (the range is 10.0.0.0/8) (expected "
                         "an address range such as 10.0.0.0/8, 192.168.1.7 or fd00::/8)",
                         perfgate::error);
    CHECK_THROWS_AS(parse_ip_range("--webhook-allow-private", "10.0.0.0/33"), perfgate::error);
    CHECK_THROWS_AS(parse_ip_range("--webhook-allow-private", "0177.0.0.1"), perfgate::error); // strict here
    CHECK_THROWS_AS(parse_ip_range("--webhook-allow-private", "intranet"), perfgate::error);
    CHECK(parse_ip_range("x", "192.168.1.7").to_string() == "192.168.1.7/32");

    // At delivery: resolved once, every address checked, the checked address handed on.
    const auto refused = closed.resolve("http://localhost:8080/h");
    CHECK_FALSE(refused.to.has_value());
    CHECK(refused.failure == "refused by policy");
    const auto opened = egress_policy({parse_ip_range("x", "127.0.0.0/8"), parse_ip_range("x", "::1/128")})
                            .resolve("http://LocalHost.:8080/h");
    REQUIRE(opened.to.has_value());
    CHECK(opened.to->address == "127.0.0.1");
    CHECK(opened.to->port == 8080);
    const auto v6 = egress_policy({parse_ip_range("x", "::1/128")}).resolve("https://[::1]/h");
    REQUIRE(v6.to.has_value());
    CHECK(v6.to->address == "::1");
    CHECK(v6.to->port == 443);
    const auto unknown = closed.resolve("http://no-such-host.invalid/h");
    CHECK_FALSE(unknown.to.has_value());
    CHECK(unknown.failure == "could not resolve");

    // Logs show scheme and host: a Slack webhook's path is its credential.
    CHECK(perfgate::service::redacted_url("https://hooks.slack.com/services/T0/B0/XXXX?x=1") ==
          "https://hooks.slack.com");
    CHECK(perfgate::service::redacted_url("http://[::1]:8080/a") == "http://[::1]:8080");
}

TEST_CASE("service: webhook deliveries queue per project: a burst drops only its own project's, projects take turns")
{
    test_database where(test_database::sqlite_kind::memory);
    perfgate::store::store db(where.location());
    perfgate::service::service svc(db);
    db.projects().ensure("burst");
    db.projects().ensure("quiet");
    (void)svc.webhooks().add("burst", "http://127.0.0.1:9/burst", "json", "k");
    (void)svc.webhooks().add("quiet", "http://127.0.0.1:9/quiet", "json", "k");
    std::mutex mu;
    std::condition_variable cv;
    bool release = false;
    std::vector<std::string> order; // project:alert id, as sent
    std::map<std::string, std::set<std::string>> ids_by_alert;
    perfgate::service::notifier_options options;
    options.queue_size = 2;
    options.workers = 1; // the order of turns is then exact
    options.first_backoff = std::chrono::milliseconds(1);
    options.policy = perfgate::service::egress_policy({perfgate::service::parse_ip_range("test", "127.0.0.0/8")});
    std::vector<std::string> lines;
    {
        int failures_left = 1; // the quiet project's first attempt fails once: a retry keeps its delivery id
        perfgate::service::notifier n(
            db,
            [&](const perfgate::service::webhook_post& p) {
                std::unique_lock lock(mu);
                const json body = json::parse(p.body);
                const std::string key = fmt::format("{}:{}", body.at("project").get<std::string>(),
                                                    body.at("alert").at("id").get<std::int64_t>());
                order.push_back(key);
                for (const auto& [name, value] : p.headers)
                    if (name == "X-Perfgate-Delivery") ids_by_alert[key].insert(value);
                cv.notify_all();
                cv.wait(lock, [&] { return release; });
                if (key.starts_with("quiet") && failures_left-- > 0)
                    return perfgate::service::webhook_answer{503, {}, {}};
                return perfgate::service::webhook_answer{204, {}, {}};
            },
            options,
            [&](const std::string& line) {
                std::lock_guard lock(mu);
                lines.push_back(line);
            });
        perfgate::model::alert a;
        a.project = "burst";
        a.id = 1;
        n.notify(perfgate::service::event_alert_opened, a);
        {
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return order.size() == 1; }); // burst:1 is being sent
        }
        for (int i = 2; i <= 5; ++i) {
            a.id = i;
            n.notify(perfgate::service::event_alert_opened, a); // burst's queue holds 2: 2 and 3 are dropped
        }
        a.project = "quiet";
        a.id = 100;
        n.notify(perfgate::service::event_alert_opened, a); // its own queue: nothing dropped
        CHECK(n.stats().dropped == 2);
        CHECK(n.stats().queued == 4);
        {
            std::lock_guard lock(mu);
            release = true;
        }
        cv.notify_all();
        n.drain();
        CHECK(n.stats().delivered == 4);
        CHECK(n.stats().retried == 1);
    }
    // Round robin: the quiet project's delivery went before the burst's backlog.
    REQUIRE(order.size() == 5);
    CHECK(order[0] == "burst:1");
    CHECK(order[1] == "quiet:100");
    CHECK(std::find(order.begin(), order.end(), "burst:2") == order.end());
    CHECK(std::find(order.begin(), order.end(), "burst:3") == order.end());
    CHECK(std::count(order.begin(), order.end(), "quiet:100") == 2);
    // One delivery id per delivery, kept by its retry; never shared.
    CHECK(ids_by_alert["quiet:100"].size() == 1);
    CHECK(ids_by_alert["burst:4"].size() == 1);
    CHECK(*ids_by_alert["quiet:100"].begin() != *ids_by_alert["burst:4"].begin());
    CHECK(ids_by_alert["burst:4"].begin()->size() == 32);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find("project 'burst' has 2 deliveries queued") != std::string::npos);
    CHECK(lines[0].find("/burst") == std::string::npos); // the URL by scheme and host only
}

TEST_CASE("webhook signature: HMAC-SHA256 over timestamp.body, as the documented verifier computes it")
{
    // Reference value: python3 -c 'import hmac,hashlib;
    //   print(hmac.new(b"k", b"1700000000.{\"a\":1}", hashlib.sha256).hexdigest())'
    CHECK(perfgate::service::webhook_signature("k", 1700000000, R"({"a":1})") ==
          "sha256=1b6ad1bc9bf48c52ce01939866d5877c6cc4e87ddad27e16673cb8c4964394a3");
    CHECK(perfgate::service::webhook_signature("k", 1700000001, R"({"a":1})") !=
          perfgate::service::webhook_signature("k", 1700000000, R"({"a":1})"));
    CHECK(perfgate::service::new_delivery_id() != perfgate::service::new_delivery_id());
}

namespace {

// A run of one counter, one sample per counter value, of `backend`.
model::run_record counted_run(const std::string& backend, std::vector<std::pair<std::string, double>> values,
                              bool mainline, std::int64_t created_at)
{
    model::run_record r = stored_run(mainline ? "candidate" : "baseline", {});
    r.counters.clear();
    r.backend = backend;
    r.mainline = mainline;
    r.created_at = created_at;
    for (auto& [name, value] : values) r.counters.push_back({name, "", {{0, value, 100.0, std::nullopt}}});
    return r;
}

} // namespace

TEST_CASE("service: only the runs that feed the series make its points, its alerts and its reuse (issue 44)")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    // 30 pushes' candidates at 100, then stale pull requests' baselines at
    // 130 (an old merge-base labelled main) between 10 more pushes at 100:
    // had they fed the series, a +30% change would open an alert.
    std::uint64_t state = 3;
    std::vector<std::int64_t> pushes, prs, opened;
    for (int i = 0; i < 50; ++i) {
        const bool pr = i >= 30 && i % 2 == 0;
        model::run_record r = series_run(pr ? 130 : 100, state, 1'700'000'000 + i, pr ? "baseline" : "candidate");
        r.mainline = !pr;
        if (pr) r.pr = 40 + i;
        const auto res = svc.runs().ingest_run(r);
        opened.insert(opened.end(), res.alerts.begin(), res.alerts.end());
        (pr ? prs : pushes).push_back(res.run_id);
    }
    CHECK(opened.empty());
    CHECK(svc.alerts().list({"demo", {}, {}, {}, {}, 100}).empty());

    model::history_query q;
    q.project = "demo";
    q.benchmark = "parse";
    q.counter = "task-clock";
    q.branch = "main";
    q.limit = 100;
    q.mainline_only = true;
    const auto series = svc.history().points(q);
    REQUIRE(series.size() == pushes.size());
    for (std::size_t i = 0; i < series.size(); ++i) {
        CHECK(series[i].run_id == pushes[i]);
        CHECK(series[i].mainline);
        CHECK(series[i].role == "candidate");
    }
    // The pull requests' runs are there on request, marked.
    q.mainline_only = false;
    q.role = "baseline";
    const auto baselines = svc.history().points(q);
    REQUIRE(baselines.size() == prs.size());
    CHECK_FALSE(baselines.front().mainline);

    SUBCASE("a pull request's run is refused as a mainline run, and has no series")
    {
        model::run_record r = series_run(100, state, 1'800'000'000, "baseline");
        r.pr = 7;
        r.mainline = true;
        CHECK_THROWS_WITH_AS(svc.runs().ingest_run(r), doctest::Contains("field 'mainline': a run of pull request 7"),
                             perfgate::error);
    }
    SUBCASE("an upload without the field: a baseline without a pull request feeds the series, as before")
    {
        model::ingest_request req;
        req.role = "baseline";
        CHECK(service::mainline_of(req));
        req.pr = 3;
        CHECK_FALSE(service::mainline_of(req));
        req.pr.reset();
        req.role = "candidate";
        CHECK_FALSE(service::mainline_of(req));
        req.mainline = true;
        CHECK(service::mainline_of(req));
        req.role = "baseline";
        req.mainline = false;
        CHECK_FALSE(service::mainline_of(req));
        // The field is part of what an idempotency key covers.
        model::ingest_request other = req;
        other.mainline = true;
        CHECK(service::ingest_request_digest(req) != service::ingest_request_digest(other));
        other.mainline.reset();
        CHECK(service::ingest_request_digest(req) != service::ingest_request_digest(other));
    }
    SUBCASE("baseline reuse finds a push's run of the commit, never a pull request's")
    {
        auto reusable = [&](bool mainline, std::optional<std::int64_t> pr) {
            model::run_record r = counted_run("callgrind", {{"instructions", 1e6}}, mainline, 1'800'000'000);
            r.git_sha = std::string(40, mainline ? 'a' : 'b');
            r.toolchain = "gcc 13";
            r.pr = pr;
            return svc.runs().ingest_run(r).run_id;
        };
        const auto push = reusable(true, std::nullopt);
        reusable(false, 12);
        model::reusable_run_query rq{"demo", "parse", std::string(40, 'a'), "main", "fp-1", "callgrind", "gcc 13"};
        rq.testbed = model::fingerprint_of({"ci-1", "cpu", 2, "6.1", "fp-1"});
        const auto found = svc.runs().find_reusable(rq);
        REQUIRE(found.has_value());
        CHECK(found->run_id == push);
        rq.git_sha = std::string(40, 'b');
        CHECK_FALSE(svc.runs().find_reusable(rq).has_value());
    }
}

TEST_CASE("exact_steps: a step beyond the threshold that stays, on its own point")
{
    const auto steps = [](std::vector<double> v) { return service::exact_steps(v, 0.02); };
    using v = std::vector<std::size_t>;
    CHECK(steps({}).empty());
    CHECK(steps({100}).empty());
    CHECK(steps({100, 110}) == v{1});                          // one point before, none after: a step
    CHECK(steps({100, 100.1, 99.9, 100, 110}) == v{4});        // the newest point
    CHECK(steps({100, 100.1, 99.9, 100, 110, 110.1}) == v{4}); // confirmed: the same
    CHECK(steps({100, 100, 100, 110, 100}).empty());           // reverted: no step
    CHECK(steps({100, 101.9, 98.1, 100}).empty());             // within 2%
    CHECK(steps({100, 100, 90, 90}) == v{2});                  // down is a step too
    CHECK(steps({100, 100, 110, 110, 121}) == v{2, 4});        // two steps, each from its level
    CHECK(steps({0, 0, 1}) == v{2});                           // away from zero: beyond any threshold
    CHECK(steps({100, 100, 110, 90}) == v{3});                 // over and back is none; the newest, under, is one
    CHECK(service::exact_steps(std::vector<double>{100, 103}, 0.05).empty()); // a larger threshold
}

TEST_CASE("service: an exact count's step opens its alert on its own point (issue 44, item 11)")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    std::int64_t at = 1'700'000'000;
    // Ten commits whose instruction counts wobble by 0.1% (each commit
    // changes the code a little), then one that adds 10%.
    auto push = [&](const std::string& backend, double instructions) {
        return svc.runs().ingest_run(counted_run(backend, {{"instructions", instructions}}, true, at++));
    };
    SUBCASE("callgrind: the step's own push opens the alert; later points keep it; a revert opens none")
    {
        for (int i = 0; i < 10; ++i) CHECK(push("callgrind", 1e6 * (1 + 0.001 * (i % 3))).alerts.empty());
        const auto step = push("callgrind", 1.1e6);
        REQUIRE(step.alerts.size() == 1);
        const auto a = svc.alerts().get("demo", step.alerts.front());
        CHECK(a.change.run_id == step.run_id);
        CHECK(a.change.p_value == 0);
        REQUIRE(a.change.delta_pct);
        CHECK(*a.change.delta_pct == doctest::Approx(9.9).epsilon(0.01));
        CHECK(a.change.median_after == 1.1e6);
        CHECK(a.change.shift == doctest::Approx(1.1e6 - 1.001e6).epsilon(0.01));
        CHECK(push("callgrind", 1.1e6).alerts.empty());
        CHECK(push("callgrind", 1.1001e6).alerts.empty());
        REQUIRE(svc.alerts().list({"demo", {}, {}, {}, {}, 100}).size() == 1);
        CHECK(svc.alerts().get("demo", a.id).change.run_id == step.run_id); // the same alert, not moved
        // A revert: the step does not stay, and going back is no regression.
        CHECK(push("callgrind", 1e6).alerts.empty());
        CHECK(svc.alerts().list({"demo", {}, {}, {}, {}, 100}).size() == 1);
        const auto cps = svc.history().change_points("demo", "parse", "instructions", std::nullopt, std::nullopt);
        CHECK(std::none_of(cps.begin(), cps.end(), [&](const auto& cp) { return cp.run_id == step.run_id; }));
    }
    SUBCASE("perf's counts are not exact: one point is no change point")
    {
        for (int i = 0; i < 10; ++i) CHECK(push("perf", 1e6 * (1 + 0.001 * (i % 3))).alerts.empty());
        CHECK(push("perf", 1.1e6).alerts.empty());
    }
    SUBCASE("a time counter of callgrind's run is not exact either")
    {
        auto timed = [&](double ms) {
            return svc.runs().ingest_run(counted_run("callgrind", {{"task-clock", ms}}, true, at++));
        };
        for (int i = 0; i < 10; ++i) CHECK(timed(10 * (1 + 0.001 * (i % 3))).alerts.empty());
        CHECK(timed(11).alerts.empty());
    }
}

TEST_CASE("service: the change points of ungated counters open no alert (issue 44, item 12)")
{
    test_database where(test_database::sqlite_kind::memory);
    store::store db(where.location());
    service::service svc(db);
    std::int64_t at = 1'700'000'000;
    std::uint64_t state = 11;
    auto noisy = [&](double level) { return level * (1 + 0.02 * (perfgate::test::lcg_uniform(state) - 0.5)); };
    std::vector<std::int64_t> opened;
    SUBCASE("max-rss steps +30% beside a stationary instructions count: stored, not alerted")
    {
        for (int i = 0; i < 60; ++i) {
            const double rss = i >= 40 ? 1300 : 1000;
            const auto res = svc.runs().ingest_run(
                counted_run("perf", {{"instructions", noisy(1e6)}, {"max-rss", noisy(rss)}}, true, at++));
            opened.insert(opened.end(), res.alerts.begin(), res.alerts.end());
        }
        CHECK(opened.empty());
        CHECK(svc.history().change_points("demo", "parse", "max-rss", std::nullopt, std::nullopt).size() == 1);
    }
    SUBCASE("without a default-gated counter, the fallback ones alert (native: wall-time, not max-rss)")
    {
        for (int i = 0; i < 60; ++i) {
            const double level = i >= 40 ? 1.3 : 1.0;
            const auto res = svc.runs().ingest_run(counted_run(
                "native", {{"wall-time", noisy(1e7 * level)}, {"max-rss", noisy(1000 * level)}}, true, at++));
            opened.insert(opened.end(), res.alerts.begin(), res.alerts.end());
        }
        REQUIRE(opened.size() == 1);
        CHECK(svc.alerts().get("demo", opened.front()).change.series.counter == "wall-time");
        CHECK(svc.history().change_points("demo", "parse", "max-rss", std::nullopt, std::nullopt).size() == 1);
    }
}

TEST_CASE("webhook bodies: the Slack message writes numbers as the dashboard, names the testbed and who triaged")
{
    // issue 44, item 13: an instruction count read "2.06554e+08", the
    // testbed its fingerprint, and a status change did not say who made it.
    perfgate::service::alert_notice n;
    n.event = std::string(perfgate::service::event_alert_opened);
    n.alert.id = 7;
    n.alert.project = "snappy";
    n.alert.change.series = {"compress", "instructions", "3f9a0c1d2e4b5a6978", "main"};
    n.alert.change.mean_before = 206549123;
    n.alert.change.mean_after = 227788000;
    n.alert.change.delta_pct = 10.28;
    n.alert.change.git_sha = "3b57165000000000000000000000000000000000";
    n.testbed_name = "ci-callgrind";
    json body = json::parse(perfgate::service::slack_body(n));
    std::string fields = body.at("blocks").at(1).at("fields").dump();
    CHECK(fields.find("+10.28% (206.549 M -> 227.788 M)") != std::string::npos);
    CHECK(fields.find("e+") == std::string::npos);
    CHECK(fields.find("ci-callgrind") != std::string::npos);
    CHECK(fields.find("3f9a0c1d2e4b5a6978") == std::string::npos);
    CHECK(fields.find("*Status*\\nuntriaged\"") != std::string::npos);
    CHECK(fields.find("Note") == std::string::npos);

    // A time counter in its unit; a status change names who made it, and the note.
    n.event = std::string(perfgate::service::event_alert_status_changed);
    n.alert.change.series.counter = "task-clock";
    n.alert.change.mean_before = 12.5;
    n.alert.change.mean_after = 13.75;
    n.alert.status = perfgate::model::alert_status::acknowledged;
    n.alert.changed_by = "octocat";
    n.alert.note = "bisecting <#12>";
    n.testbed_name.clear(); // unknown: the fingerprint is all there is
    body = json::parse(perfgate::service::slack_body(n));
    fields = body.at("blocks").at(1).at("fields").dump();
    CHECK(fields.find("(12.5 ms -> 13.75 ms)") != std::string::npos);
    CHECK(fields.find("*Status*\\nacknowledged (by octocat)") != std::string::npos);
    CHECK(fields.find("*Note*\\nbisecting &lt;#12&gt;") != std::string::npos);
    CHECK(fields.find("3f9a0c1d2e4b5a6978") != std::string::npos);
}
