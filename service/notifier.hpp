// Alert notifications: the bodies posted to a project's webhooks when the
// history watch opens an alert or an alert's status changes, and the
// delivery threads that post them off the request path (docs/history.md
// "Notifications").
//
// The notifier does no HTTP itself: it is given a transport (perfgate serve
// passes client::http_try, libcurl), so the service stays below client/.
// Bodies are built when the event happens. Each project has its own bounded
// queue (webhook_queue_per_project; when full, that project's oldest
// delivery is dropped, logged and counted: one project's burst never drops
// another's). webhook_workers threads take the projects in turn (round
// robin) and never work on two deliveries of one project at once, so a slow
// receiver holds at most one thread. Before each attempt the URL's host is
// resolved and checked by the egress policy (egress.hpp) and the transport
// connects to the address checked. A failed attempt (a refusal, a transport
// error or a status other than 2xx; redirects are not followed) is retried
// with exponential back-off; the outcome goes to the store's delivery log
// (store::webhooks::record_delivery) as a coarse class (webhook_failure_*),
// and the log line names the URL by scheme and host only.
//
// Threading: every public member may be called from any thread. The
// destructor stops the threads after their current attempts; deliveries still
// queued are dropped (not logged as failed: the server is stopping).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "model/alert.hpp"
#include "service/egress.hpp"

namespace perfgate::store {
class store;
}

namespace perfgate::service {

// Deliveries of one project waiting or being retried: 64 covers a burst of
// alerts from a backfill of a dozen benchmarks to a few webhooks each;
// beyond that the project's oldest is dropped rather than memory growing
// while its receiver is down. Memory is bounded by projects x 64 deliveries.
inline constexpr std::size_t webhook_queue_per_project = 64;
// Delivery threads. A project has at most one attempt in flight, so a
// project's delivery waits for other projects' slow receivers only when
// this many are each in an attempt at once; then for at most one attempt
// (webhook_timeout) per project ahead of it in turn (docs/history.md
// "Delivery").
inline constexpr std::size_t webhook_workers = 4;
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
    // The address the policy checked (numeric) and the port: the transport
    // connects there, whatever the URL's host resolves to by then, and uses
    // no proxy.
    std::string connect_address;
    std::uint16_t connect_port = 0;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::milliseconds timeout{webhook_timeout};
};
// The coarse classes a failed attempt is recorded as (last_delivery.error):
// whoever set the URL learns no more than these (no port scanning through
// the server's error texts).
inline constexpr std::string_view webhook_failure_refused = "refused by policy";
inline constexpr std::string_view webhook_failure_resolve = "could not resolve";
inline constexpr std::string_view webhook_failure_connect = "could not connect";
inline constexpr std::string_view webhook_failure_timeout = "timeout";
inline constexpr std::string_view webhook_failure_tls = "TLS failed";
// "HTTP status 3xx" (redirects are not followed), "HTTP status 4xx", "HTTP status 5xx".
std::string webhook_status_class(int status);

// status: the HTTP status, 0 when no response came: error is then one of
// the webhook_failure_* classes, detail the transport's own words for the
// operator's log (without the URL's path).
struct webhook_answer {
    int status = 0;
    std::string error;
    std::string detail;
};
using webhook_transport = std::function<webhook_answer(const webhook_post&)>;

struct notifier_options {
    std::size_t queue_size = webhook_queue_per_project; // per project
    std::size_t workers = webhook_workers;
    int max_attempts = webhook_max_attempts;
    std::chrono::milliseconds first_backoff = webhook_first_backoff;
    std::chrono::milliseconds timeout = webhook_timeout;
    // The dashboard's public base URL ("https://perf.example.com"), "" when
    // unknown: the bodies then carry no dashboard link.
    std::string public_url;
    // Where deliveries may connect (perfgate serve --webhook-allow-private).
    egress_policy policy;
};

// What happened: "alert.opened", "alert.status_changed" or "alert.culprit_found".
inline constexpr std::string_view event_alert_opened = "alert.opened";
inline constexpr std::string_view event_alert_status_changed = "alert.status_changed";
// perfgate bisect stored a culprit on the alert (status found): the body
// carries it (docs/history.md "Notifications").
inline constexpr std::string_view event_alert_culprit_found = "alert.culprit_found";

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
    // The project's repository URL ("" when none): the culprits' commit
    // links (alert.culprit_found).
    std::string repository_url;
};
std::string json_body(const alert_notice& n);
std::string slack_body(const alert_notice& n);
// "sha256=" + lowercase hex HMAC-SHA256 of `timestamp + "." + body` under
// secret: the value of X-Perfgate-Signature, sent with X-Perfgate-Timestamp
// (unix seconds of the attempt) so that a receiver can refuse a replayed
// request (Slack signs "v0:timestamp:body" alike).
std::string webhook_signature(std::string_view secret, std::int64_t timestamp, std::string_view body);
// 32 lowercase hex digits from OpenSSL's RAND_bytes: X-Perfgate-Delivery,
// one per delivery, kept by its retries (as GitHub's X-GitHub-Delivery).
std::string new_delivery_id();

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
    // Where deliveries may connect (notifier_options::policy).
    [[nodiscard]] const egress_policy& policy() const { return options_.policy; }

private:
    struct delivery {
        std::string project;
        std::int64_t webhook_id = 0;
        std::string id; // X-Perfgate-Delivery
        std::string event;
        std::optional<std::string> secret;
        webhook_post post;
        int attempts = 0;
        std::chrono::steady_clock::time_point due;
        std::string last_error;
    };
    struct project_queue {
        std::deque<delivery> waiting;
        bool busy = false; // one of its deliveries is being attempted
    };
    void run();
    // With mutex_ held: the next project in turn with a delivery due and
    // none in flight, or when the earliest one is due.
    std::optional<std::string> next_project(std::chrono::steady_clock::time_point now,
                                            std::chrono::steady_clock::time_point& wake) const;
    void attempt(delivery& d);
    void record(const delivery& d, std::string_view outcome) noexcept;
    void log_quietly(const std::function<std::string()>& line) const noexcept;

    store::store& db_;
    webhook_transport send_;
    notifier_options options_;
    std::function<void(const std::string&)> log_;

    mutable std::mutex mutex_;
    mutable std::condition_variable changed_;
    std::map<std::string, project_queue, std::less<>> queues_;
    std::string last_served_; // round robin: the project after this one goes next
    std::size_t queued_ = 0;  // waiting in every queue
    std::size_t busy_ = 0;    // attempts in flight
    bool stopping_ = false;
    counts counts_;
    std::vector<std::thread> threads_; // last: start once the members above exist
};

} // namespace perfgate::service
