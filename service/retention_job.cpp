// perfgate serve's daily prune (service/retention_job.hpp), and a
// project's retention setting through the service (service/projects.hpp).
#include "service/retention_job.hpp"

#include "model/error.hpp"
#include "service/caches.hpp"
#include "service/service_impl.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/store.hpp"

#include <fmt/format.h>

#include <chrono>
#include <exception>

namespace perfgate::service {

namespace {

std::int64_t clock_now()
{
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

retention_job::retention_job(store::store& db, reporter report, std::function<void()> after_prune,
                             std::chrono::milliseconds check_every)
    : db_(db), report_(std::move(report)), after_prune_(std::move(after_prune)), check_every_(check_every),
      worker_([this] { work(); })
{}

retention_job::~retention_job()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    worker_.join();
}

std::uint64_t retention_job::checks() const
{
    std::lock_guard lock(mutex_);
    return checks_;
}

void retention_job::work()
{
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        check_once();
        lock.lock();
        ++checks_;
        wake_.wait_for(lock, check_every_, [this] { return stopping_; });
    }
}

void retention_job::check_once()
{
    std::vector<std::string> due;
    try {
        due = db_.projects().claim_due_retention(clock_now(), retention_interval_s);
    } catch (const std::exception& e) {
        if (report_) report_({"", {}, {}, fmt::format("finding the projects due for their prune: {}", e.what())});
        return;
    }
    for (const auto& project : due) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
        }
        retention_outcome out;
        out.project = project;
        try {
            const auto settings = db_.projects().retention_of(project);
            if (!settings.older_than_s) continue; // unset since claimed
            store::prune_rules rules;
            rules.older_than_s = *settings.older_than_s;
            rules.thin_after_s = settings.thin_after_s;
            out.removed = db_.maintenance().prune(std::string_view(project), rules, false).removed;
            if (out.removed.runs.rows > 0 || out.removed.ingest_keys.rows > 0) {
                if (after_prune_) after_prune_();
                out.space = db_.maintenance().reclaim_space();
            }
        } catch (const std::exception& e) {
            out.error = e.what();
        }
        if (report_) report_(out);
    }
}

} // namespace perfgate::service

namespace perfgate::service {

void detail::service_impl::prune_daily(retention_job::reporter report, std::chrono::milliseconds check_every)
{
    // The job outlives no cache it clears: it holds them.
    auto after = [recent = recent_, runs = runs_, histories = histories_] {
        recent->lru.clear();
        runs->lru.clear();
        histories->lru.clear();
    };
    retention_ = std::make_shared<retention_job>(db_, std::move(report), std::move(after), check_every);
}

std::uint64_t detail::service_impl::retention_checks() const { return retention_ ? retention_->checks() : 0; }

store::retention_settings detail::service_impl::retention(const std::string& project) const
{
    require_project(project);
    return db_.projects().retention_of(project);
}

void detail::service_impl::set_retention(const std::string& project, const store::retention_settings& settings)
{
    require_project(project);
    db_.projects().set_retention(project, settings);
}

void background::prune_daily(retention_job::reporter report, std::chrono::milliseconds check_every)
{
    impl_->prune_daily(std::move(report), check_every);
}

std::uint64_t background::retention_checks() const { return impl_->retention_checks(); }

store::retention_settings projects::retention(const std::string& project) const { return impl_->retention(project); }

void projects::set_retention(const std::string& project, const store::retention_settings& settings)
{
    impl_->set_retention(project, settings);
}

} // namespace perfgate::service
