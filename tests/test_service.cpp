// Tests of service/: the gate service over a real SQLite store (":memory:"
// and temp files): idempotent compares, the name rules every stored run
// obeys, one testbed identity whichever client stored the run.
#include "service/service.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "model/testbed.hpp"
#include "schema/store.hpp"

using namespace perfgate;
using namespace perfgate::gate;
using nlohmann::json;

namespace {

// 10 values 100.0, 100.1, ... 100.9 scaled by factor: CoV ~0.3%.
std::vector<double> ramp(double factor = 1.0, std::size_t n = 10)
{
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back((100.0 + 0.1 * static_cast<double>(i)) * factor);
    return v;
}

const counter_report& counter(const report& r, std::string_view name, std::size_t bench = 0)
{
    for (const auto& c : r.benchmarks.at(bench).counters) {
        if (c.name == name) return c;
    }
    FAIL("no counter " << name);
    return r.benchmarks.at(bench).counters.front();
}

} // namespace
namespace {

model::run_record stored_run(std::string role, std::vector<double> task_clock, std::string benchmark = "parse")
{
    model::run_record r;
    r.project = "demo";
    r.benchmark = std::move(benchmark);
    r.role = std::move(role);
    r.git_sha = "0123456789abcdef0123456789abcdef01234567";
    r.branch = "main";
    r.testbed = {"ci-1", "cpu", 2, "6.1", "fp-1"};
    model::counter_samples cs{"task-clock", "msec", {}};
    for (std::size_t i = 0; i < task_clock.size(); ++i) {
        cs.samples.push_back({static_cast<int>(i), task_clock[i], 100.0, std::nullopt});
    }
    r.counters.push_back(std::move(cs));
    return r;
}

} // namespace

TEST_CASE("service: compare is idempotent per (project, pairs, policy)")
{
    store::store db(":memory:");
    service svc(db);
    const auto base = svc.ingest_run(stored_run("baseline", ramp())).run_id;
    const auto cand = svc.ingest_run(stored_run("candidate", ramp(1.05))).run_id;
    const std::vector<std::pair<std::int64_t, std::int64_t>> pairs{{base, cand}};
    const policy defaults;

    const comparison first = svc.compare("demo", pairs, defaults);
    REQUIRE(first.result.comparison_id == first.id);
    CHECK(first.result.result == verdict::fail);

    SUBCASE("the same request returns the stored comparison and stores nothing")
    {
        const comparison again = svc.compare("demo", pairs, defaults);
        CHECK(again.id == first.id);
        CHECK(again.result.comparison_id == first.id);
        CHECK(to_json(again.result) == to_json(first.result));
        // A service with nothing in memory (another process, a restart)
        // finds the same comparison in the store.
        service restarted(db);
        const comparison stored = restarted.compare("demo", pairs, defaults);
        CHECK(stored.id == first.id);
        CHECK(stored.result.comparison_id == first.id);
        CHECK(to_json(stored.result) == to_json(first.result));
        // Ids are rowids: had the repeat stored a row, the next comparison
        // would not get first.id + 1.
        policy stricter;
        stricter.threshold_pct = 10.0;
        const comparison other = svc.compare("demo", pairs, stricter);
        CHECK(other.id == first.id + 1);
        CHECK_FALSE(svc.load_comparison("demo", first.id + 2).has_value());
    }
    SUBCASE("a different policy or different pairs are a new comparison")
    {
        policy stricter;
        stricter.threshold_pct = 10.0;
        const comparison other = svc.compare("demo", pairs, stricter);
        CHECK(other.id != first.id);
        CHECK(counter(other.result, "task-clock").state == status::unchanged);
        CHECK(svc.compare("demo", pairs, stricter).id == other.id);

        const auto cand2 = svc.ingest_run(stored_run("candidate", ramp(1.05))).run_id;
        CHECK(svc.compare("demo", {{base, cand2}}, defaults).id != first.id);
        CHECK(svc.compare("demo", {{cand, base}}, defaults).id != first.id);
    }
    SUBCASE("the key covers project, pair order and every policy field")
    {
        const std::string key = comparison_request_key("demo", pairs, defaults);
        CHECK(key.size() == 64);
        CHECK(key.find_first_not_of("0123456789abcdef") == std::string::npos);
        CHECK(comparison_request_key("demo", pairs, defaults) == key);
        CHECK(comparison_request_key("demo2", pairs, defaults) != key);
        CHECK(comparison_request_key("demo", {{cand, base}}, defaults) != key);
        CHECK(comparison_request_key("demo", {{base, cand}, {base + 10, cand + 10}}, defaults) != key);
        policy p = defaults;
        p.counters["task-clock"].gate = false;
        CHECK(comparison_request_key("demo", pairs, p) != key);
        policy q = defaults;
        q.history = 31;
        CHECK(comparison_request_key("demo", pairs, q) != key);
    }
    SUBCASE("errors are still reported for requests that were never stored")
    {
        CHECK_THROWS_WITH_AS(svc.compare("demo", {{base, 9999}}, defaults),
                             "candidate run 9999 not found in project 'demo'", error);
        CHECK_THROWS_WITH_AS(svc.compare("other", pairs, defaults),
                             doctest::Contains("not found in project 'other'"), error);
        try {
            svc.compare("demo", {}, defaults);
            FAIL("expected compare.bad_request");
        } catch (const error& e) {
            CHECK(e.id() == "compare.bad_request");
        }
    }
}

TEST_CASE("service: identical compares racing on one database file store one comparison")
{
    std::string dir = (std::filesystem::temp_directory_path() / "perfgate-gate-XXXXXX").string();
    REQUIRE(::mkdtemp(dir.data()) != nullptr);
    struct cleanup {
        std::string path;
        ~cleanup() { std::error_code ec; std::filesystem::remove_all(path, ec); }
    } remove_dir{dir};
    const auto path = std::filesystem::path(dir) / "perfgate.db";

    // Two store objects on one file act as two processes; two threads each.
    store::store db1(path), db2(path);
    service s1(db1), s2(db2);
    const auto base = s1.ingest_run(stored_run("baseline", ramp())).run_id;
    const auto cand = s1.ingest_run(stored_run("candidate", ramp(1.05))).run_id;
    const std::vector<std::pair<std::int64_t, std::int64_t>> pairs{{base, cand}};

    constexpr int workers = 4;
    std::vector<std::int64_t> ids(workers, 0);
    {
        std::vector<std::jthread> threads;
        for (int i = 0; i < workers; ++i) {
            threads.emplace_back([&, i] { ids[i] = (i % 2 ? s2 : s1).compare("demo", pairs, policy{}).id; });
        }
    }
    for (int i = 1; i < workers; ++i) CHECK(ids[i] == ids[0]);
    CHECK(s1.load_comparison("demo", ids[0]).has_value());
    CHECK_FALSE(s1.load_comparison("demo", ids[0] + 1).has_value());
    CHECK_FALSE(s1.load_comparison("demo", ids[0] - 1).has_value());
}

TEST_CASE("service: every stored run obeys the same name rules as the server")
{
    perfgate::store::store db(":memory:");
    service svc(db);
    perfgate::model::run_record run;
    run.project = "demo";
    run.benchmark = "BM_Sort/1024";
    run.role = "baseline";
    run.counters.push_back({"task-clock", "msec", {{0, 1.5, 100.0, std::nullopt}}});
    CHECK(svc.ingest_run(run).run_id > 0);

    run.benchmark = "x'; DROP TABLE runs; --";
    CHECK_THROWS_WITH_AS(svc.ingest_run(run), doctest::Contains("field 'benchmark': ''' at offset 1 is not allowed"),
                         perfgate::error);
    run.benchmark = "ok";
    run.role = "other";
    CHECK_THROWS_WITH_AS(svc.ingest_run(run), doctest::Contains("expected 'baseline' or 'candidate'"), perfgate::error);
    run.role = "candidate";
    run.backend = "vtune";
    CHECK_THROWS_WITH_AS(svc.ingest_run(run), doctest::Contains("field 'backend'"), perfgate::error);
    CHECK(db.runs_count() == 1);   // nothing stored by the rejected runs
}
