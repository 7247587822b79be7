// Alert notifications: the bodies posted to a project's webhooks when the
// history watch opens an alert or an alert's status changes, and the
// delivery thread that posts them off the request path (docs/history.md
// "Notifications").
//
// The notifier does no HTTP itself: it is given a transport (perfgate serve
// passes client::http_send, libcurl), so the service stays below client/.
// Bodies are built when the event happens; each delivery goes to one webhook
// through a bounded queue to one thread that retries a failed attempt (a
// transport error or a status other than 2xx) with exponential back-off,
// and records the outcome in the store's delivery log
// (store::webhooks::record_delivery). Enqueueing never blocks on a receiver:
// when the queue is full the oldest delivery is dropped, logged and counted.
//
// Threading: every public member may be called from any thread. The
// destructor stops the thread after its current attempt; deliveries still
// queued are dropped (not logged as failed: the server is stopping).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "model/alert.hpp"

namespace perfgate::store {
class store;
}

namespace perfgate::service {

// Deliveries waiting or being retried: 256 covers a burst of alerts from a
// backfill of dozens of benchmarks to a few webhooks each; beyond that the
// oldest is dropped rather than memory growing while a receiver is down.
inline constexpr std::size_t webhook_queue_size = 256;
// Attempts per delivery (the first and 3 retries), the first retry after
// 1 s, doubling: 1 + 2 + 4 s of back-off, as GitHub's webhook redelivery
// advice and Slack's retry policy keep a few tries within seconds.
inline constexpr int webhook_max_attempts = 4;
inline constexpr std::chrono::milliseconds webhook_first_backoff{1000};
// One attempt, connect to last byte: Slack answers in well under a second;
// a receiver slower than this is counted as failing.
inline constexpr std::chrono::milliseconds webhook_timeout{5000};

struct webhook_post {
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::milliseconds timeout{webhook_timeout};
};
// status: the HTTP status, 0 when no response came (error says why).
struct webhook_answer {
    int status = 0;
    std::string error;
};
using webhook_transport = std::function<webhook_answer(const webhook_post&)>;

struct notifier_options {
    std::size_t queue_size = webhook_queue_size;
    int max_attempts = webhook_max_attempts;
    std::chrono::milliseconds first_backoff = webhook_first_backoff;
    std::chrono::milliseconds timeout = webhook_timeout;
    // The dashboard's public base URL ("https://perf.example.com"), "" when
    // unknown: the bodies then carry no dashboard link.
    std::string public_url;
};

// What happened: "alert.opened" or "alert.status_changed".
inline constexpr std::string_view event_alert_opened = "alert.opened";
inline constexpr std::string_view event_alert_status_changed = "alert.status_changed";

// The bodies (pure functions, tested without a thread). commit_url is
// repository_url/commit/SHA, "" when the project has no repository URL;
// dashboard_url "" when the server has no public URL.
struct alert_notice {
    std::string event;
    model::alert alert;
    std::string commit_url;
    std::string dashboard_url;
    std::int64_t time = 0; // unix seconds
    // The testbed's name (alert.change.series.testbed is its fingerprint);
    // "" when unknown: the Slack body then shows the fingerprint.
    std::string testbed_name;
};
std::string json_body(const alert_notice& n);
std::string slack_body(const alert_notice& n);
// "sha256=" + lowercase hex HMAC-SHA256 of body under secret: the value of
// X-Perfgate-Signature (as GitHub's X-Hub-Signature-256).
std::string webhook_signature(std::string_view secret, std::string_view body);

class notifier {
public:
    // log: one line per dropped or failed delivery (perfgate serve's log).
    notifier(store::store& db, webhook_transport send, notifier_options options,
             std::function<void(const std::string&)> log);
    notifier(const notifier&) = delete;
    notifier& operator=(const notifier&) = delete;
    ~notifier();

    // Queues one delivery of the event per webhook of the alert's project.
    // Never throws and never waits on a receiver (a store error reading the
    // webhooks is logged).
    void notify(std::string_view event, const model::alert& alert) noexcept;

    struct counts {
        std::uint64_t delivered = 0; // a 2xx answer
        std::uint64_t failed = 0;    // every attempt failed
        std::uint64_t dropped = 0;   // the queue was full
        std::uint64_t retried = 0;   // attempts after a first
        std::size_t queued = 0;      // waiting, backing off or being sent now
    };
    [[nodiscard]] counts stats() const;
    // Waits until nothing is queued or being sent (tests, shutdown).
    void drain() const;

private:
    struct delivery {
        std::int64_t webhook_id = 0;
        webhook_post post;
        int attempts = 0;
        std::chrono::steady_clock::time_point due;
        std::string last_error;
    };
    void run();
    void attempt(delivery& d);
    void record(const delivery& d, std::string_view outcome) noexcept;
    void log_quietly(const std::function<std::string()>& line) const noexcept;

    store::store& db_;
    webhook_transport send_;
    notifier_options options_;
    std::function<void(const std::string&)> log_;

    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::deque<delivery> queue_;
    bool busy_ = false;
    bool stopping_ = false;
    counts counts_;
    std::thread thread_; // last: starts once the members above exist
};

} // namespace perfgate::service
