// Group commit of comparisons, off the request path (perfgate serve).
//
// Why: storing a fresh comparison's report was half of a compare's server
// time (bench/e2e/bench_engines.sh; the statistics and the report are the other
// half), and a request thread that stores its own report holds the store's
// one write lock, through its commit and behind SQLite's checkpoints, while
// the other requests wait for that lock instead of computing. Here the
// request thread computes, hands the row to one committer thread, and goes
// back to serving; the committer stores every row that waits in one
// transaction (store::comparisons::insert_all) and then hands each its id. One
// commit per batch writes the shared B-tree pages once, not once per row.
//
// A row is acknowledged (done called with its id) only after its batch has
// committed. When a batch fails, its rows are stored again one transaction
// each, so a bad row fails alone with its own error (store::comparisons::insert's)
// and the others are stored. A batch holds at most max_batch rows; the queue
// itself is bounded by the server's connections (one request in flight per
// connection). Stopping (the destructor) stores and answers every row queued.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "store/comparisons.hpp"
#include "store/store.hpp"

namespace perfgate::service {

class commit_queue {
public:
    // Called once per row, on the committer's thread: the row's id, or the
    // error that kept it out of the store (then id is 0), and the row itself
    // (the caller may take its report text back). Must not throw.
    using completion = std::function<void(std::exception_ptr error, std::int64_t id, store::comparison_row& row)>;

    explicit commit_queue(store::store& db, std::size_t max_batch = 64);
    ~commit_queue();
    commit_queue(const commit_queue&) = delete;
    commit_queue& operator=(const commit_queue&) = delete;

    void push(store::comparison_row row, completion done);
    // Blocks until every row pushed so far is stored (or failed) and answered.
    void drain();

    struct counts {
        std::uint64_t rows = 0;      // rows answered (stored or failed)
        std::uint64_t failed = 0;    // rows answered with an error
        std::uint64_t batches = 0;   // transactions that committed a batch
        std::uint64_t fallbacks = 0; // batches that failed and were stored row by row
        std::size_t largest = 0;     // the most rows in one batch
    };
    [[nodiscard]] counts stats() const;

private:
    struct job {
        store::comparison_row row;
        completion done;
    };
    void work();
    void commit(std::vector<job>& batch);

    store::store& db_;
    std::size_t max_batch_;
    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::vector<job> pending_;
    bool busy_ = false;
    bool stopping_ = false;
    counts counts_;
    std::thread worker_; // last: starts after everything it uses exists
};

} // namespace perfgate::service
