#include "service/commit_queue.hpp"
#include "store/comparisons.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace perfgate::service {

commit_queue::commit_queue(store::store& db, std::size_t max_batch)
    : db_(db), max_batch_(std::max<std::size_t>(max_batch, 1)), worker_([this] { work(); })
{}

commit_queue::~commit_queue()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
}

void commit_queue::push(store::comparison_row row, completion done)
{
    {
        std::lock_guard lock(mutex_);
        pending_.push_back(job{std::move(row), std::move(done)});
    }
    wake_.notify_one();
}

void commit_queue::drain()
{
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return pending_.empty() && !busy_; });
}

commit_queue::counts commit_queue::stats() const
{
    std::lock_guard lock(mutex_);
    return counts_;
}

void commit_queue::work()
{
    std::vector<job> batch;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            busy_ = false;
            if (pending_.empty()) idle_.notify_all();
            wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
            if (pending_.empty()) return; // stopping, and everything is answered
            // The oldest max_batch_ rows: those that waited longest go first.
            const auto n = static_cast<std::ptrdiff_t>(std::min(pending_.size(), max_batch_));
            batch.assign(std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.begin() + n));
            pending_.erase(pending_.begin(), pending_.begin() + n);
            busy_ = true;
        }
        commit(batch);
        batch.clear();
    }
}

void commit_queue::commit(std::vector<job>& batch)
{
    std::vector<store::comparison_row> rows;
    rows.reserve(batch.size());
    for (auto& j : batch) rows.push_back(std::move(j.row));
    std::vector<std::int64_t> ids;
    std::exception_ptr batch_error;
    try {
        ids = db_.comparisons().insert_all(rows);
    } catch (...) {
        batch_error = std::current_exception();
    }
    const bool fallback = batch_error && rows.size() > 1;
    std::uint64_t failed = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        std::exception_ptr error;
        std::int64_t id = 0;
        if (!batch_error) {
            id = ids[i];
        } else if (!fallback) {
            error = batch_error; // a batch of one: its error is the row's
        } else {
            // One transaction per row: a bad row fails alone.
            const auto& r = rows[i];
            try {
                id = db_.comparisons().insert(r.project, r.baseline_run, r.candidate_run, r.report_json, r.request_key,
                                              store::report_facts{r.verdict, r.benchmark_count});
            } catch (...) {
                error = std::current_exception();
            }
        }
        if (error) ++failed;
        batch[i].done(error, id, rows[i]);
    }
    std::lock_guard lock(mutex_);
    counts_.rows += batch.size();
    counts_.failed += failed;
    if (fallback) ++counts_.fallbacks;
    else if (!batch_error) ++counts_.batches;
    counts_.largest = std::max(counts_.largest, batch.size());
}

} // namespace perfgate::service
