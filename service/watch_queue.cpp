#include "service/watch_queue.hpp"

#include <algorithm>
#include <exception>

namespace perfgate::service {

namespace {

bool same_series_group(const watch_job& a, const watch_job& b)
{
    return a.project == b.project && a.benchmark == b.benchmark && a.testbed == b.testbed && a.branch == b.branch;
}

// b's counters that a does not have yet join a; the newest run wins.
void merge_into(watch_job& a, const watch_job& b)
{
    for (const auto& c : b.counters) {
        const bool known = std::any_of(a.counters.begin(), a.counters.end(),
                                       [&](const auto& have) { return have.first == c.first; });
        if (!known) a.counters.push_back(c);
    }
    a.run_id = std::max(a.run_id, b.run_id);
    a.deterministic = a.deterministic && b.deterministic; // exact only if every run was
}

} // namespace

watch_queue::watch_queue(runner run, reporter report, std::size_t max_pending)
    : run_(std::move(run)), report_(std::move(report)), max_pending_(std::max<std::size_t>(max_pending, 1)),
      worker_([this] { work(); })
{}

watch_queue::~watch_queue()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
}

void watch_queue::push(watch_job job)
{
    {
        std::lock_guard lock(mutex_);
        for (auto& waiting : pending_) {
            if (same_series_group(waiting, job)) {
                merge_into(waiting, job);
                ++counts_.coalesced;
                return;
            }
        }
        if (pending_.size() < max_pending_) {
            pending_.push_back(std::move(job));
            wake_.notify_one();
            return;
        }
    }
    // Full: the uploader pays for its own job rather than lose it.
    execute(std::move(job));
}

void watch_queue::drain()
{
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return pending_.empty() && !busy_; });
}

watch_queue::counts watch_queue::stats() const
{
    std::lock_guard lock(mutex_);
    counts c = counts_;
    c.pending = pending_.size();
    return c;
}

void watch_queue::work()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
        if (pending_.empty()) return; // stopping, and everything queued is done
        watch_job job = std::move(pending_.front());
        pending_.pop_front();
        busy_ = true;
        lock.unlock();
        execute(std::move(job));
        lock.lock();
        busy_ = false;
        if (pending_.empty()) idle_.notify_all();
    }
}

void watch_queue::execute(watch_job job)
{
    watch_outcome out;
    try {
        out.alerts = run_(job);
    } catch (const std::exception& e) {
        out.error = e.what();
    }
    {
        std::lock_guard lock(mutex_);
        ++counts_.done;
        if (!out.error.empty()) ++counts_.failed;
    }
    if (report_) {
        out.job = std::move(job);
        try {
            report_(out);
        } catch (...) {
            // A reporter that fails (a log that cannot be written) must not
            // end the worker.
        }
    }
}

} // namespace perfgate::service
