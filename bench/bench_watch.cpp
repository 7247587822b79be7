// bench_watch: what watching the history costs an upload.
//
// Two copies of one SQLite database holding `stored` baseline runs of main
// (5 counters x 10 repetitions each, one benchmark, one testbed). In one the
// project's baseline branch is main, so every further baseline run of main
// re-runs change-point detection on the tail of each of its 5 series and
// stores the result (service::watch); in the other it is a branch nobody
// pushes to, so ingest stores the run and nothing else. Both then ingest the
// same `measured` runs through gate::service::ingest_run, alternating between
// the two databases run by run (so that drift of the machine hits both), and
// the median and p90 time per ingest are compared.
//
// The target: ratio (with / without) <= 1.2 on 10,000 stored runs,
// and flat as history grows (run it with 1000 and 10000).
//
// Usage: bench_watch [stored = 10000] [measured = 200] [dir = /tmp]
// Build Release: cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release &&
//                cmake --build build-rel --target bench_watch
#include "service/service.hpp"

#include "runner/measure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace perfgate;

namespace {

constexpr int counters = 5;
constexpr int repetitions = 10;

// One baseline run of main, values around 100 with ~1% noise from a fixed LCG.
model::run_record make_run(std::uint64_t& state, std::int64_t created_at)
{
    model::run_record r;
    r.project = "bench";
    r.benchmark = "parse";
    r.role = "baseline";
    r.git_sha = fmt::format("{:040x}", static_cast<std::uint64_t>(created_at));
    r.branch = "main";
    r.testbed = {"bench-box", "cpu", 2, "6.1", ""};
    r.created_at = created_at;
    for (int c = 0; c < counters; ++c) {
        model::counter_samples cs{fmt::format("counter-{}", c), "msec", {}};
        for (int i = 0; i < repetitions; ++i) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            const double u = static_cast<double>(state >> 11) / 9007199254740992.0;
            cs.samples.push_back({i, 100.0 * (1 + 0.02 * (u - 0.5)), 100.0, std::nullopt});
        }
        r.counters.push_back(std::move(cs));
    }
    return r;
}

// A database file with its WAL and shared-memory files: a stale -wal next to
// a fresh copy would be replayed into it.
void remove_db(const fs::path& p)
{
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(fs::path(p.string() + suffix));
}

double percentile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
    return v[std::min(i, v.size() - 1)];
}

} // namespace

int main(int argc, char** argv)
{
    const long stored = argc > 1 ? std::atol(argv[1]) : 10000;
    const long measured = argc > 2 ? std::atol(argv[2]) : 200;
    const fs::path dir = argc > 3 ? fs::path(argv[3]) : fs::temp_directory_path();
    if (stored < 1 || measured < 1) {
        fmt::print(stderr, "usage: bench_watch [stored >= 1] [measured >= 1] [dir]\n");
        return 2;
    }
    const fs::path history = dir / fmt::format("bench-watch-{}.db", stored);
    const fs::path quiet = dir / fmt::format("bench-watch-{}-off.db", stored);
    const fs::path watched = dir / fmt::format("bench-watch-{}-on.db", stored);

    // History: generated once without watching (fast) and reused; each run
    // measures on two fresh copies.
    if (!fs::exists(history)) {
        const fs::path tmp = dir / fmt::format("bench-watch-{}.tmp", stored);
        fs::remove(tmp);
        {
            store::store db(tmp);
            gate::service svc(db);
            svc.ensure_project("bench");
            svc.set_baseline_branch("bench", "unwatched");
            std::uint64_t state = 1;
            for (long i = 0; i < stored; ++i) svc.ingest_run(make_run(state, 1'700'000'000 + i));
        }
        fs::rename(tmp, history);
    }
    remove_db(quiet);
    remove_db(watched);
    fs::copy_file(history, quiet);
    fs::copy_file(history, watched);
    auto db_off = std::make_unique<store::store>(quiet), db_on = std::make_unique<store::store>(watched);
    gate::service off(*db_off), on(*db_on);
    on.set_baseline_branch("bench", "main");

    // Two upload paths: the runner's (samples in hand, service::ingest_run)
    // and the server's (perf stat CSV text parsed by service::ingest).
    std::vector<double> t[2][2];   // [csv][watch]
    std::uint64_t state = 99;
    std::size_t alerts = 0;
    for (long i = 0; i < measured; ++i) {
        const auto run = make_run(state, 1'800'000'000 + i);
        const model::ingest_request req = runner::ingest_request_of(run);
        for (int k = 0; k < 4; ++k) {
            const bool csv = k / 2 == 1;
            const bool watch = (k % 2 == 0) == (i % 2 == 0);   // alternate which goes first
            auto& svc = watch ? on : off;
            const auto start = std::chrono::steady_clock::now();
            const auto res = csv ? svc.ingest(req) : svc.ingest_run(run);
            const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
            t[csv][watch].push_back(took.count());
            alerts += res.alerts.size();
        }
    }
    db_off.reset();
    db_on.reset();
    remove_db(quiet);
    remove_db(watched);

    fmt::print("stored runs {}, measured ingests {} per path and side ({} counters x {} repetitions)\n", stored,
               measured, counters, repetitions);
    fmt::print("{:<34} {:>10} {:>10}\n", "", "median ms", "p90 ms");
    for (int csv = 0; csv < 2; ++csv) {
        const char* path = csv ? "perf CSV (server upload)" : "samples (runner)";
        for (int watch = 0; watch < 2; ++watch) {
            fmt::print("{:<34} {:>10.3f} {:>10.3f}\n", fmt::format("{}, {}", path, watch ? "watched" : "unwatched"),
                       percentile(t[csv][watch], 0.5), percentile(t[csv][watch], 0.9));
        }
        fmt::print("{:<34} {:>10.3f}\n", fmt::format("{}: ratio", path),
                   percentile(t[csv][1], 0.5) / percentile(t[csv][0], 0.5));
    }
    fmt::print("alerts opened {}\n", alerts);
    return 0;
}
