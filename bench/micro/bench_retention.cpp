// The store's size: bytes per stored run and per comparison (with and
// without artifacts), and a simulated year of a busy project with a daily
// prune (docs/performance.md "Store size and retention";
// bench/e2e/bench_retention.sh runs it on both engines).
//
//   bench_retention DB REPORT_JSON [DAYS] [BENCHMARKS] [PRS_A_DAY] [PUSHES_A_DAY]
//
// DB: a SQLite file (must not exist) or a postgresql:// URI of an empty
// database. REPORT_JSON: a real report of one benchmark (perfgate compare
// --format json); a comparison's report holds it once per benchmark. Each run
// has the report's counters' shape: 6 counters x 10 repetitions. Every day:
// PRS_A_DAY pull requests (a baseline and a candidate run per benchmark, one
// comparison of all benchmarks, a flame graph and an attribution for one
// pull request in ten) and PUSHES_A_DAY pushes to main (a baseline, and a
// candidate that feeds the series, per benchmark; one comparison), then the
// day's prune (--older-than 90d --thin-after 365d, the space given back).
// Times are simulated (created_at), the inserts go through the store's API.
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"
#include "store/maintenance.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using perfgate::model::run_record;
namespace ps = perfgate::store;

constexpr std::int64_t day_s = 86400;
constexpr int counters_per_run = 6;
constexpr int repetitions = 10;

run_record make_run(const std::string& bench, std::int64_t at, const std::string& sha, const std::string& branch,
                    const std::string& role, bool mainline, std::optional<std::int64_t> pr, unsigned& seed)
{
    run_record r;
    r.project = "busy";
    r.benchmark = bench;
    r.role = role;
    r.git_sha = sha;
    r.branch = branch;
    r.pr = pr;
    r.mainline = mainline;
    r.backend = "perf";
    r.session = sha + "-" + bench;
    r.testbed = {"ci-runner", "AMD EPYC 7B13", 2, "6.1.0-18-amd64", "fp-ci-runner"};
    r.environment_json = R"({"governor":"performance","turbo":"off","smt":"off","aslr":"off","load":0.12,)"
                         R"("perf_event_paranoid":1,"isolated_cpus":"2-3","kernel":"6.1.0-18-amd64"})";
    r.created_at = at;
    const char* names[counters_per_run] = {"task-clock",  "cycles",           "instructions",
                                           "page-faults", "context-switches", "duration_time"};
    for (int c = 0; c < counters_per_run; ++c) {
        perfgate::model::counter_samples cs{names[c], c == 0 ? "msec" : "", {}};
        for (int i = 0; i < repetitions; ++i) {
            seed = seed * 1664525u + 1013904223u;
            cs.samples.push_back({i, 1e6 * (c + 1) + static_cast<double>(seed % 10000), 100.0, std::nullopt});
        }
        r.counters.push_back(std::move(cs));
    }
    return r;
}

// A flame graph's SVG: ~60 KB, 400 frames (a small real profile's size).
std::string flame_graph_svg()
{
    std::string svg = R"(<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="600">)";
    for (int i = 0; i < 400; ++i) {
        svg += fmt::format(
            R"(<g><title>ns::function_{}(std::vector&lt;int&gt; const&amp;) ({} samples, {:.2f}%)</title>)"
            R"svg(<rect x="{}" y="{}" width="{}" height="15" fill="rgb({},{},50)"/></g>)svg",
            i, 37 * i % 997, (i % 91) / 9.1, 13 * i % 1200, 16 * (i % 36), 7 * i % 300, 200 + i % 55, i % 200);
    }
    return svg + "</svg>";
}

std::int64_t size_of(ps::store& db) { return db.maintenance().size_bytes(); }

} // namespace

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_retention DB REPORT_JSON [DAYS] [BENCHMARKS] [PRS_A_DAY] [PUSHES_A_DAY]\n");
        return 2;
    }
    const std::string where = argv[1];
    const int days = argc > 3 ? std::stoi(argv[3]) : 365;
    const int benchmarks = argc > 4 ? std::stoi(argv[4]) : 3;
    const int prs = argc > 5 ? std::stoi(argv[5]) : 50;
    const int pushes = argc > 6 ? std::stoi(argv[6]) : 10;
    std::ifstream in(argv[2]);
    auto one = nlohmann::json::parse(in);
    auto report = one;
    report["benchmarks"] = nlohmann::json::array();
    for (int b = 0; b < benchmarks; ++b) {
        auto entry = one["benchmarks"].at(0);
        entry["name"] = fmt::format("bench_{}", b);
        report["benchmarks"].push_back(entry);
    }
    const std::string report_text = report.dump();
    const std::string svg = flame_graph_svg();
    // An attribution of 20 functions, as callgrind's per-function table gives.
    nlohmann::json functions = nlohmann::json::array();
    for (int f = 0; f < 20; ++f) {
        functions.push_back({{"function", fmt::format("ns::parser::step_{}(std::string_view, int)", f)},
                             {"file", "src/parser.cpp"},
                             {"baseline", 1000000 + 7919 * f},
                             {"candidate", 1100000 + 6151 * f},
                             {"delta", 100000 - 1768 * f}});
    }
    const std::string attribution =
        nlohmann::json{{"source", "callgrind"}, {"event", "Ir"}, {"functions", functions}}.dump();

    ps::store db(where);
    unsigned seed = 1;
    const auto t0 = std::chrono::steady_clock::now();
    // Simulated days start 100 days after the clock: a comparison is stored
    // at the clock's time, so every day's cutoff (90 days back) lies after
    // it and it keeps no run alive as a young comparison would.
    const std::int64_t clock =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::int64_t start = clock + 100 * day_s;

    // Unit figures: 1,000 runs, 200 comparisons, 200 artifacts of each kind.
    std::vector<std::int64_t> ids;
    auto size0 = size_of(db);
    for (int i = 0; i < 1000; ++i) {
        ids.push_back(db.runs().insert(make_run("unit", start - day_s + i, fmt::format("{:040x}", i), "unit",
                                                "baseline", false, std::nullopt, seed)));
    }
    auto size1 = size_of(db);
    std::vector<std::int64_t> cmps;
    for (int i = 0; i < 200; ++i)
        cmps.push_back(db.comparisons().insert("busy", ids[2 * i], ids[2 * i + 1], report_text));
    auto size2 = size_of(db);
    for (int i = 0; i < 200; ++i) db.artifacts().put_flame_graph("busy", cmps[i], "bench_0", svg);
    auto size3 = size_of(db);
    for (int i = 0; i < 200; ++i) db.artifacts().put_attribution("busy", cmps[i], "bench_0", attribution);
    auto size4 = size_of(db);
    std::printf("engine %s, %d counters x %d repetitions a run, a report of %d benchmark(s) %zu bytes, flame graph %zu "
                "bytes, attribution %zu bytes\n",
                std::string(db.engine()).c_str(), counters_per_run, repetitions, benchmarks, report_text.size(),
                svg.size(), attribution.size());
    std::printf("bytes per run %.0f, per comparison %.0f, per flame graph %.0f, per attribution %.0f\n",
                (size1 - size0) / 1000.0, (size2 - size1) / 200.0, (size3 - size2) / 200.0, (size4 - size3) / 200.0);
    {
        ps::prune_rules all;
        all.now = start + day_s; // the unit runs, at start - 1 day, are older than a day then
        all.older_than_s = day_s;
        db.maintenance().prune(std::string_view("busy"), all, false);
        db.maintenance().reclaim_space();
    }

    // The simulated year.
    std::printf("%5s %10s %14s %14s %9s\n", "day", "runs", "size_bytes", "removed_runs", "seconds");
    std::int64_t removed = 0;
    for (int day = 0; day < days; ++day) {
        const std::int64_t day_start = start + day * day_s;
        int serial = 0;
        const auto add_pair = [&](bool push, int n) {
            std::vector<run_record> runs;
            const std::int64_t at = day_start + 60 * (++serial);
            const std::string base = fmt::format("{:020x}{:08x}b{:011x}", day, n, push ? 1 : 0);
            const std::string head = fmt::format("{:020x}{:08x}h{:011x}", day, n, push ? 1 : 0);
            const std::optional<std::int64_t> pr = push ? std::nullopt : std::optional<std::int64_t>(day * 1000 + n);
            const std::string branch = push ? "main" : fmt::format("feature-{}", day * 1000 + n);
            for (int b = 0; b < benchmarks; ++b) {
                runs.push_back(make_run(fmt::format("bench_{}", b), at, base, "main", "baseline", false, pr, seed));
                runs.push_back(make_run(fmt::format("bench_{}", b), at, head, branch, "candidate", push, pr, seed));
            }
            const auto stored = db.runs().insert_all(runs);
            const auto cmp = db.comparisons().insert("busy", stored[0], stored[1], report_text);
            if (!push && n % 10 == 0) {
                db.artifacts().put_flame_graph("busy", cmp, "bench_0", svg);
                db.artifacts().put_attribution("busy", cmp, "bench_0", attribution);
            }
        };
        for (int i = 0; i < pushes; ++i) add_pair(true, i);
        for (int i = 0; i < prs; ++i) add_pair(false, i);
        ps::prune_rules rules;
        rules.now = day_start + day_s;
        rules.older_than_s = 90 * day_s;
        rules.thin_after_s = 365 * day_s;
        removed += db.maintenance().prune(std::string_view("busy"), rules, false).removed.runs.rows;
        db.maintenance().reclaim_space();
        if ((day + 1) % 30 == 0 || day + 1 == days) {
            std::printf("%5d %10lld %14lld %14lld %9.1f\n", day + 1,
                        static_cast<long long>(db.maintenance().runs_count()), static_cast<long long>(size_of(db)),
                        static_cast<long long>(removed),
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
            std::fflush(stdout);
        }
    }
    return 0;
}
