// The work perfgate serve moves off the request threads: the comparison committer, the history
// watch and the alert notifier, and the watch's default detection (service::service::background();
// bodies in service/service.cpp and service/watch.cpp).
#pragma once

#include "service/common.hpp"
#include "service/retention_job.hpp"

#include <chrono>

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class background {
public:
    explicit background(detail::service_impl& s) noexcept : impl_(&s) {}
    background(const background&) = delete;
    background& operator=(const background&) = delete;

    // Stores compare_later's reports on a committer thread, many in one
    // transaction (group commit, commit_queue.hpp). Copies of the service
    // made afterwards share it. drain_commits waits until every report handed
    // over so far is stored and answered; commit_stats counts (all 0 without
    // a committer).
    void commit_in_background(std::size_t max_batch = 64);
    void drain_commits() const;
    [[nodiscard]] commit_queue::counts commit_stats() const;
    // Watching the history (service/watch.cpp). After storing a run that
    // feeds the project's baseline branch's series (run_record::mainline),
    // ingest re-runs change-point detection on the tail (watch_tail points)
    // of each of the run's series (one per counter with a value; exact
    // counts also by exact_steps) and opens alerts for changes in a gated
    // counter's worse direction; ingest_result::alerts lists them. A failure
    // there never loses the stored run: it becomes a warning.
    // watch_in_background moves that detection to a worker thread
    // (watch_queue): ingest then returns once the run is stored, with no
    // alerts listed, and report hears of each job done (perfgate serve logs
    // alerts and failures). Copies of the service share the worker.
    void watch_in_background(watch_queue::reporter report);
    // Waits for the background watch to finish every job queued so far (no-op
    // without one); and its counts (all 0 without one).
    void drain_watch() const;
    [[nodiscard]] watch_queue::counts watch_stats() const;
    // Alert notifications (service/notifier.hpp): once set, every alert the
    // watch opens and every status change alerts::update makes is posted to
    // the project's webhooks by `n`'s thread. Call it before
    // watch_in_background (whose worker keeps the notifier it was started
    // with). Without one (the CLI on a database) nothing is posted: delivery
    // happens from perfgate serve.
    // From then on webhooks::add also refuses a URL whose host is an IP literal
    // or a localhost name that n's egress policy refuses (perfgate serve;
    // without a notifier, as in the CLI with the database in hand, a URL is
    // not judged when added; every delivery is).
    void notify_with(std::shared_ptr<notifier> n);
    [[nodiscard]] std::optional<notifier::counts> notify_stats() const;
    // Projects' retention (service/retention_job.hpp): a thread that prunes
    // each project whose retention is set once a day (checking every
    // check_every), drops the caches of stored rows after a prune, and says
    // what it did to report (perfgate serve logs it). Copies of the
    // service share it; it stops with the last of them.
    void prune_daily(retention_job::reporter report, std::chrono::milliseconds check_every = retention_check_every);
    // The retention thread's completed checks (0 without one).
    [[nodiscard]] std::uint64_t retention_checks() const;
    void set_change_point_defaults(const stats::change_point_options& defaults);
    [[nodiscard]] const stats::change_point_options& change_point_defaults() const noexcept;

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
