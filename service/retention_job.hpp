// Projects' retention applied by perfgate serve: a thread that, every
// check interval, claims the projects whose retention is set and whose last
// prune started a day or more ago (store::projects::claim_due_retention: of
// several servers on one database, one prunes a given project), prunes each
// by its ages (store::maintenance::prune), gives the space back
// (reclaim_space) and says what it did to its reporter (the server's log).
// docs/history.md "Retention".
#pragma once

#include "store/prune.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace perfgate::store {
class store;
}

namespace perfgate::service {

// What a project's prune did, or the error it met.
struct retention_outcome {
    std::string project;
    store::prune_counts removed;
    store::reclaim_report space;
    std::string error; // empty on success
};

// How often the job looks for projects due (a server started at any hour
// prunes within this of a project's day being up), and the time between
// two prunes of a project.
inline constexpr std::chrono::milliseconds retention_check_every = std::chrono::hours(1);
inline constexpr std::int64_t retention_interval_s = 86400;

class retention_job {
public:
    using reporter = std::function<void(const retention_outcome&)>;
    // after_prune: called on the job's thread after a prune removed rows
    // (the service drops its caches of stored rows).
    retention_job(store::store& db, reporter report, std::function<void()> after_prune,
                  std::chrono::milliseconds check_every = retention_check_every);
    // Stops the thread; a prune under way finishes its current project first.
    ~retention_job();
    retention_job(const retention_job&) = delete;
    retention_job& operator=(const retention_job&) = delete;

    // Checks completed (each: every due project pruned).
    [[nodiscard]] std::uint64_t checks() const;

private:
    void work();
    void check_once();

    store::store& db_;
    reporter report_;
    std::function<void()> after_prune_;
    std::chrono::milliseconds check_every_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::uint64_t checks_ = 0;
    std::thread worker_; // last: starts after everything it uses exists
};

} // namespace perfgate::service
