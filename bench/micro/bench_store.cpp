// Store benchmarks.
//
// 1. Ingest: one run of 30 repetitions x 10 counters (300 samples) written
//    with bare SQLite (one prepared INSERT in one transaction, same samples
//    table shape) vs store::runs::insert (lookups, samples, summaries computed
//    with stats::summarize, 3 covering history indexes). Both on a WAL file
//    in /tmp with synchronous=NORMAL.
// 2. History: store::history (100 points) on databases of 10,000 and
//    1,000,000 runs, p50 / p99 per call. The databases are generated once
//    into /tmp (bulk INSERTs in one transaction, summaries only: the history
//    query never reads samples) and reused when present.
//
// Build Release: cmake -S . -B build-store-rel -DCMAKE_BUILD_TYPE=Release
//                cmake --build build-store-rel --target bench_store
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
namespace ps = perfgate::store;

namespace {

constexpr int repetitions = 30;
constexpr int counters_per_run = 10;

struct db_closer {
    void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
struct stmt_finalizer {
    void operator()(sqlite3_stmt* st) const noexcept { sqlite3_finalize(st); }
};
using db_ptr = std::unique_ptr<sqlite3, db_closer>;
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

db_ptr open_raw(const fs::path& path)
{
    sqlite3* p = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &p, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
    db_ptr db(p);
    if (rc != SQLITE_OK) throw std::runtime_error(fmt::format("{}: cannot open", path.string()));
    return db;
}

void exec(sqlite3* db, const char* sql)
{
    if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) {
        throw std::runtime_error(fmt::format("'{}': {}", sql, sqlite3_errmsg(db)));
    }
}

stmt_ptr prepare(sqlite3* db, const char* sql)
{
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) {
        throw std::runtime_error(fmt::format("'{}': {}", sql, sqlite3_errmsg(db)));
    }
    return stmt_ptr(st);
}

void step_done(sqlite3* db, sqlite3_stmt* st)
{
    if (sqlite3_step(st) != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
    sqlite3_reset(st);
}

fs::path fresh_path(const char* name)
{
    const fs::path p = fs::temp_directory_path() / name;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p.string() + suffix);
    return p;
}

ps::run_record bench_run(std::int64_t created_at)
{
    ps::run_record r;
    r.project = "bench";
    r.benchmark = "parse";
    r.role = "baseline";
    r.git_sha = "0123456789abcdef0123456789abcdef01234567";
    r.branch = "main";
    r.testbed = {"bench-box", "bench cpu", 2, "6.1.0", "fp-bench"};
    r.created_at = created_at;
    for (int c = 0; c < counters_per_run; ++c) {
        ps::counter_samples cs{fmt::format("counter-{}", c), "", {}};
        for (int i = 0; i < repetitions; ++i) cs.samples.push_back({i, 1000.0 + c * 10 + i % 7, 100.0, {}});
        r.counters.push_back(std::move(cs));
    }
    return r;
}

void set_rates(benchmark::State& state)
{
    state.counters["runs/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
    state.counters["samples/s"] = benchmark::Counter(
        static_cast<double>(state.iterations()) * repetitions * counters_per_run, benchmark::Counter::kIsRate);
}

// The floor: the same 300 rows through one prepared INSERT in one transaction.
void BM_ingest_bare_sqlite(benchmark::State& state)
{
    const auto path = fresh_path("perfgate-bench-bare.db");
    auto db = open_raw(path);
    exec(db.get(), "PRAGMA journal_mode = WAL");
    exec(db.get(), "PRAGMA synchronous = NORMAL");
    exec(db.get(), "CREATE TABLE samples (run_id INTEGER NOT NULL, counter_id INTEGER NOT NULL, "
                   "repetition INTEGER NOT NULL, value REAL, pcnt_running REAL NOT NULL, variance_pct REAL, "
                   "PRIMARY KEY (run_id, counter_id, repetition)) WITHOUT ROWID");
    auto ins = prepare(db.get(), "INSERT INTO samples VALUES (?, ?, ?, ?, ?, NULL)");
    std::int64_t run_id = 0;
    for (auto _ : state) {
        ++run_id;
        exec(db.get(), "BEGIN IMMEDIATE");
        for (int c = 0; c < counters_per_run; ++c) {
            for (int i = 0; i < repetitions; ++i) {
                sqlite3_bind_int64(ins.get(), 1, run_id);
                sqlite3_bind_int(ins.get(), 2, c);
                sqlite3_bind_int(ins.get(), 3, i);
                sqlite3_bind_double(ins.get(), 4, 1000.0 + c * 10 + i % 7);
                sqlite3_bind_double(ins.get(), 5, 100.0);
                step_done(db.get(), ins.get());
            }
        }
        exec(db.get(), "COMMIT");
    }
    set_rates(state);
}
BENCHMARK(BM_ingest_bare_sqlite)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_ingest_store_insert_run(benchmark::State& state)
{
    const auto path = fresh_path("perfgate-bench-store.db");
    ps::store db(path);
    auto run = bench_run(1'700'000'000);
    for (auto _ : state) {
        ++run.created_at;
        benchmark::DoNotOptimize(db.runs().insert(run));
    }
    set_rates(state);
}
BENCHMARK(BM_ingest_store_insert_run)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---- history ---------------------------------------------------------------

// Layout of the generated databases: runs spread over 10 benchmarks and 2
// testbeds, one minute apart; every 7th run is a PR candidate on one of 50
// feature branches, the rest main-branch baselines; 2 counters per run.
constexpr int gen_benchmarks = 10;
constexpr int gen_testbeds = 2;
constexpr int gen_counters = 2;

fs::path history_db(std::int64_t runs)
{
    const fs::path path = fs::temp_directory_path() / fmt::format("perfgate-bench-history-{}.db", runs);
    if (fs::exists(path)) {
        ps::store existing(path);
        if (existing.maintenance().runs_count() == runs) return path;
    }
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix);
    {
        ps::store create(path);
    } // the real schema, through the migrations

    const auto t0 = std::chrono::steady_clock::now();
    auto db = open_raw(path);
    exec(db.get(), "PRAGMA synchronous = OFF");
    exec(db.get(), "PRAGMA cache_size = -1048576"); // 1 GiB: keep the indexes in memory while building
    exec(db.get(), "BEGIN");
    exec(db.get(), "INSERT INTO projects (id, name, created_at) VALUES (1, 'bench', 0)");
    for (int t = 1; t <= gen_testbeds; ++t) {
        exec(db.get(),
             fmt::format("INSERT INTO testbeds VALUES ({0}, 'fp-{0}', 'runner-{0}', 'cpu', 2, '6.1')", t).c_str());
    }
    for (int b = 1; b <= gen_benchmarks; ++b) {
        exec(db.get(),
             fmt::format("INSERT INTO benchmarks (id, project_id, name) VALUES ({0}, 1, 'bench-{0}')", b).c_str());
        for (int c = 1; c <= gen_counters; ++c) {
            exec(db.get(), fmt::format("INSERT OR IGNORE INTO counters VALUES ({0}, 'counter-{0}')", c).c_str());
            exec(db.get(), fmt::format("INSERT INTO benchmark_counters VALUES ({}, {})", b, c).c_str());
        }
    }
    auto ins_run = prepare(db.get(),
                           "INSERT INTO runs VALUES (?1, 1, ?2, ?3, ?4, 'sha', ?5, NULL, 'perf', '{}', 0, ?6)");
    auto ins_sum = prepare(db.get(), "INSERT INTO summaries VALUES (?1, ?2, 0, 'msec', ?3, ?4, ?5, ?6, "
                                     "'0123456789abcdef0123456789abcdef01234567', ?7, 30, ?8, ?8, 1.5, 0.01, ?8, ?8)");
    std::string branch;
    for (std::int64_t i = 1; i <= runs; ++i) {
        const std::int64_t bench = 1 + i % gen_benchmarks;
        const std::int64_t testbed = 1 + (i / gen_benchmarks) % gen_testbeds;
        const bool pr = i % 7 == 0;
        branch = pr ? fmt::format("feature-{}", i % 50) : "main";
        const char* role = pr ? "candidate" : "baseline";
        const std::int64_t created_at = 1'600'000'000 + i * 60;
        sqlite3_bind_int64(ins_run.get(), 1, i);
        sqlite3_bind_int64(ins_run.get(), 2, bench);
        sqlite3_bind_int64(ins_run.get(), 3, testbed);
        sqlite3_bind_text(ins_run.get(), 4, role, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins_run.get(), 5, branch.c_str(), -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins_run.get(), 6, created_at);
        step_done(db.get(), ins_run.get());
        for (int c = 1; c <= gen_counters; ++c) {
            sqlite3_bind_int64(ins_sum.get(), 1, i);
            sqlite3_bind_int64(ins_sum.get(), 2, c);
            sqlite3_bind_int64(ins_sum.get(), 3, bench);
            sqlite3_bind_int64(ins_sum.get(), 4, testbed);
            sqlite3_bind_text(ins_sum.get(), 5, branch.c_str(), -1, SQLITE_STATIC);
            sqlite3_bind_text(ins_sum.get(), 6, role, -1, SQLITE_STATIC);
            sqlite3_bind_int64(ins_sum.get(), 7, created_at);
            sqlite3_bind_double(ins_sum.get(), 8, 100.0 + static_cast<double>(i % 13));
            step_done(db.get(), ins_sum.get());
        }
    }
    exec(db.get(), "UPDATE benchmarks SET runs = r.n, last_run_at = r.last FROM "
                   "(SELECT benchmark_id, count(*) AS n, max(created_at) AS last FROM runs GROUP BY benchmark_id) AS r "
                   "WHERE r.benchmark_id = benchmarks.id");
    exec(db.get(), "COMMIT");
    exec(db.get(), "ANALYZE");
    exec(db.get(), "PRAGMA wal_checkpoint(TRUNCATE)");
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "generated %s: %lld runs in %.1f s\n", path.c_str(), static_cast<long long>(runs), secs);
    return path;
}

ps::store& history_store(std::int64_t runs)
{
    static std::map<std::int64_t, std::unique_ptr<ps::store>> stores;
    auto& s = stores[runs];
    if (!s) s = std::make_unique<ps::store>(history_db(runs));
    return *s;
}

double thread_cpu_us()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Nearest-rank percentile (sorts v).
double percentile(std::vector<double>& v, double p)
{
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

enum filter { gate_query = 0, branch_only = 1, no_filter = 2 };

// state.range(0): runs in the database; state.range(1): which filter.
void BM_history(benchmark::State& state)
{
    auto& db = history_store(state.range(0));
    ps::history_query q;
    q.project = "bench";
    q.benchmark = "bench-3";
    q.counter = "counter-1";
    q.limit = 100;
    switch (static_cast<filter>(state.range(1))) {
    case gate_query: // the z-score baseline: branch, testbed, role, before the candidate
        q.branch = "main";
        q.testbed = "runner-1";
        q.role = "baseline";
        q.before_run = state.range(0) - 100;
        state.SetLabel("branch+testbed+role+before_run");
        break;
    case branch_only:
        q.branch = "main";
        state.SetLabel("branch");
        break;
    case no_filter: state.SetLabel("no filter"); break;
    }
    // Wall time per call, and this thread's CPU time per call: on a shared,
    // overloaded box the wall p99 measures the scheduler as much as the query.
    std::vector<double> wall_us, cpu_us;
    wall_us.reserve(1 << 16);
    cpu_us.reserve(1 << 16);
    for (auto _ : state) {
        const double c0 = thread_cpu_us();
        const auto t0 = std::chrono::steady_clock::now();
        const auto points = db.history().points(q);
        wall_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        cpu_us.push_back(thread_cpu_us() - c0);
        if (points.size() != 100) {
            state.SkipWithError("expected 100 points");
            break;
        }
    }
    if (wall_us.empty()) return;
    state.counters["p50_us"] = percentile(wall_us, 0.50);
    state.counters["p99_us"] = percentile(wall_us, 0.99);
    state.counters["cpu_p50_us"] = percentile(cpu_us, 0.50);
    state.counters["cpu_p99_us"] = percentile(cpu_us, 0.99);
    state.counters["db_MB"] = static_cast<double>(db.maintenance().size_bytes()) / 1e6;
}
BENCHMARK(BM_history)
    ->ArgsProduct({{10'000, 1'000'000}, {gate_query, branch_only, no_filter}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

} // namespace

BENCHMARK_MAIN();
