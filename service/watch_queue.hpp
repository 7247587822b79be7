// The history watch off the request path: one worker thread runs
// change-point detection for the series of stored baseline runs, so an
// upload answers as soon as its run is stored (perfgate serve).
//
// Why: detection re-reads and re-tests the tail of each of the run's series
// (five counters: ~1.5 ms on a Release build, three times the cost of
// storing the run; bench/bench_watch), and the uploader does not wait for
// its result: alerts are read from /alerts, by people, later.
//
// Jobs are coalesced per (project, benchmark, testbed, branch): runs of one
// series that arrive while the worker is busy are examined once, on the
// newest tail, which holds them all. The queue is bounded: when
// max_pending groups wait, the uploading thread runs its job itself (back
// pressure, nothing dropped). Stopping (the destructor) finishes every job
// already queued. A job lost to a crash is not lost for long: the series's
// next baseline run re-examines the same tail.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace perfgate::service {

// What the watch needs of a stored run: its series (one per counter with a
// value).
struct watch_job {
    std::string project;
    std::string benchmark;
    std::string branch;
    std::string testbed;                                       // fingerprint
    std::vector<std::pair<std::string, std::string>> counters; // (name, unit)
    std::int64_t run_id = 0;                                   // the newest run the job covers
    // Measured by a deterministic backend (callgrind, memcheck): its
    // counters that are not times are exact counts (service/watch.cpp).
    bool deterministic = false;
};

// What became of one job: the alerts it opened, or the error it met.
struct watch_outcome {
    watch_job job;
    std::vector<std::int64_t> alerts;
    std::string error; // empty on success
};

class watch_queue {
public:
    using runner = std::function<std::vector<std::int64_t>(const watch_job&)>;
    using reporter = std::function<void(const watch_outcome&)>;

    // run does the work (service::watch); report, when set, hears of every
    // job done, on the worker thread (or the uploader's, under back pressure).
    watch_queue(runner run, reporter report, std::size_t max_pending = 1024);
    ~watch_queue();
    watch_queue(const watch_queue&) = delete;
    watch_queue& operator=(const watch_queue&) = delete;

    void push(watch_job job);
    // Blocks until every job pushed so far is done.
    void drain();

    struct counts {
        std::uint64_t done = 0;      // jobs run
        std::uint64_t coalesced = 0; // pushes merged into a waiting job
        std::uint64_t failed = 0;    // jobs that threw
        std::size_t pending = 0;     // groups waiting now
    };
    [[nodiscard]] counts stats() const;

private:
    void work();
    void execute(watch_job job);

    runner run_;
    reporter report_;
    std::size_t max_pending_;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<watch_job> pending_;
    bool busy_ = false;
    bool stopping_ = false;
    counts counts_;
    std::thread worker_; // last: starts after everything it uses exists
};

} // namespace perfgate::service
