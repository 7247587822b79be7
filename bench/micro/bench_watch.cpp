// bench_watch: what watching the history costs an upload.
//
// Three copies of one SQLite database holding `stored` baseline runs of main
// (5 counters x 10 repetitions each, one benchmark, one testbed). In two the
// project's baseline branch is main, so every further baseline run of main
// re-runs change-point detection on the tail of each of its 5 series and
// stores the result (watch_series): inline, the upload waiting for it (as
// `perfgate run --db` does), or on the background worker (as `perfgate
// serve` does: the upload returns once the run is stored). In the third the
// baseline branch is one nobody pushes to, so ingest stores the run and
// nothing else. All three ingest the same `measured` runs, rotating which
// goes first run by run (so that drift of the machine hits all), and the
// median and p90 time per ingest are compared; for the background mode also
// the time from the upload's return to its detection being done.
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
    // measures on three fresh copies.
    if (!fs::exists(history)) {
        const fs::path tmp = dir / fmt::format("bench-watch-{}.tmp", stored);
        fs::remove(tmp);
        {
            store::store db(tmp);
            service::service svc(db);
            svc.projects().ensure("bench");
            svc.projects().set_baseline_branch("bench", "unwatched");
            std::uint64_t state = 1;
            for (long i = 0; i < stored; ++i) svc.runs().ingest_run(make_run(state, 1'700'000'000 + i));
        }
        fs::rename(tmp, history);
    }
    const fs::path deferred = dir / fmt::format("bench-watch-{}-bg.db", stored);
    const fs::path copies[3] = {quiet, watched, deferred};
    std::unique_ptr<store::store> dbs[3];
    for (int m = 0; m < 3; ++m) {
        remove_db(copies[m]);
        fs::copy_file(history, copies[m]);
        dbs[m] = std::make_unique<store::store>(copies[m]);
    }
    // Three ways to upload: unwatched; watched inline (the upload waits for
    // detection: `perfgate run --db`); watched in the background (perfgate
    // serve: the upload returns once stored, a worker thread detects).
    std::vector<service::service> svc{service::service(*dbs[0]), service::service(*dbs[1]), service::service(*dbs[2])};
    svc[1].projects().set_baseline_branch("bench", "main");
    svc[2].projects().set_baseline_branch("bench", "main");
    svc[2].background().watch_in_background({});
    const char* const mode_name[3] = {"unwatched", "watched inline", "watched in background"};

    // Two upload paths: the runner's (samples in hand, service::ingest_run)
    // and the server's (perf stat CSV text parsed by service::ingest).
    std::vector<double> t[2][3]; // [csv][mode]
    std::vector<double> worker;  // background: from upload returned to detection done
    std::uint64_t state = 99;
    std::size_t alerts = 0;
    for (long i = 0; i < measured; ++i) {
        const auto run = make_run(state, 1'800'000'000 + i);
        const model::ingest_request req = runner::ingest_request_of(run);
        for (int k = 0; k < 6; ++k) {
            const bool csv = k / 3 == 1;
            const int mode = static_cast<int>((k + i) % 3); // rotate which goes first
            const auto start = std::chrono::steady_clock::now();
            const auto res = csv ? svc[mode].runs().ingest(req) : svc[mode].runs().ingest_run(run);
            const auto stored_at = std::chrono::steady_clock::now();
            t[csv][mode].push_back(std::chrono::duration<double, std::milli>(stored_at - start).count());
            alerts += res.alerts.size();
            if (mode == 2) {
                // Outside the timed upload: let the worker finish, so that it
                // never runs during another measurement (a server sees one
                // upload every few seconds, not back to back).
                svc[mode].background().drain_watch();
                worker.push_back(
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stored_at).count());
            }
        }
    }
    const auto bg = svc[2].background().watch_stats();
    svc.clear();
    for (int m = 0; m < 3; ++m) {
        dbs[m].reset();
        remove_db(copies[m]);
    }

    fmt::print("stored runs {}, measured ingests {} per path and mode ({} counters x {} repetitions)\n", stored,
               measured, counters, repetitions);
    fmt::print("{:<66} {:>10} {:>10}\n", "", "median ms", "p90 ms");
    for (int csv = 0; csv < 2; ++csv) {
        const char* path = csv ? "perf CSV (server upload)" : "samples (runner)";
        for (int mode = 0; mode < 3; ++mode) {
            fmt::print("{:<66} {:>10.3f} {:>10.3f}\n", fmt::format("{}, {}", path, mode_name[mode]),
                       percentile(t[csv][mode], 0.5), percentile(t[csv][mode], 0.9));
        }
        for (int mode = 1; mode < 3; ++mode) {
            fmt::print("{:<66} {:>10.3f}\n", fmt::format("{}: ratio {} / unwatched", path, mode_name[mode]),
                       percentile(t[csv][mode], 0.5) / percentile(t[csv][0], 0.5));
        }
    }
    fmt::print("{:<66} {:>10.3f} {:>10.3f}\n", "background worker: upload returned -> detection done",
               percentile(worker, 0.5), percentile(worker, 0.9));
    fmt::print("background jobs {} (failed {}); alerts opened inline {}\n", bg.done, bg.failed, alerts);
    return 0;
}
