// Alert notifications: bodies, signatures and the delivery threads
// (notifier.hpp; docs/history.md "Notifications").
#include "service/notifier.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "api/wire.hpp"
#include "model/digest.hpp"
#include "model/error.hpp"
#include "report/quantity.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"
#include "store/webhooks.hpp"

namespace perfgate::service {

namespace {

std::string delta_text(const std::optional<double>& pct)
{
    return pct ? fmt::format("{:+.2f}%", *pct) : std::string("n/a");
}

// Slack's mrkdwn treats &, < and > as markup: escape them in user text.
std::string slack_escaped(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (const char c : s) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else out += c;
    }
    return out;
}

std::string short_sha(const std::string& sha) { return sha.substr(0, std::min<std::size_t>(sha.size(), 12)); }

bool is_success(int status) { return status >= 200 && status < 300; }

} // namespace

std::string json_body(const alert_notice& n)
{
    const auto& a = n.alert;
    const auto& c = a.change;
    nlohmann::ordered_json alert{
        {"id", a.id},
        {"benchmark", c.series.benchmark},
        {"counter", c.series.counter},
        {"testbed", c.series.testbed},
        {"branch", c.series.branch},
        {"status", std::string(model::to_string(a.status))},
        {"run_id", c.run_id},
        {"commit", c.git_sha},
        {"mean_before", c.mean_before},
        {"mean_after", c.mean_after},
        {"step", c.mean_after - c.mean_before},
        {"delta_pct", c.delta_pct ? nlohmann::ordered_json(*c.delta_pct) : nlohmann::ordered_json(nullptr)},
        {"p_value", c.p_value},
        {"note", a.note},
        {"changed_by", a.changed_by},
    };
    nlohmann::ordered_json body{
        {"event", n.event},
        {"project", a.project},
        {"alert", std::move(alert)},
        {"commit_url", n.commit_url.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(n.commit_url)},
        {"dashboard_url",
         n.dashboard_url.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(n.dashboard_url)},
        {"time", n.time},
    };
    // The culprit's event carries what bisect stored (the shape of GET
    // .../alerts/{id}'s "culprit"), each culprit with its commit link.
    if (n.event == event_alert_culprit_found && a.culprit) {
        nlohmann::ordered_json culprit = nlohmann::ordered_json::parse(api::to_json(*a.culprit).dump());
        for (auto& c : culprit["culprits"]) {
            const auto sha = c.at("sha").get<std::string>();
            c["commit_url"] = n.repository_url.empty()
                                  ? nlohmann::ordered_json(nullptr)
                                  : nlohmann::ordered_json(fmt::format("{}/commit/{}", n.repository_url, sha));
        }
        body["culprit"] = std::move(culprit);
    }
    return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string slack_body(const alert_notice& n)
{
    const auto& a = n.alert;
    const auto& c = a.change;
    const bool opened = n.event == event_alert_opened;
    const bool culprit = n.event == event_alert_culprit_found && a.culprit && !a.culprit->culprits.empty();
    const std::string title = culprit  ? fmt::format("Culprit found for alert {} in {}: {} {}", a.id, a.project,
                                                     short_sha(a.culprit->culprits.front().sha),
                                                     a.culprit->culprits.front().subject)
                              : opened ? fmt::format("Performance regression in {}: {} {}", a.project,
                                                     c.series.benchmark, delta_text(c.delta_pct))
                                       : fmt::format("Alert {} in {} is now {}", a.id, a.project,
                                                     model::to_string(a.status));
    const std::string commit = c.git_sha.empty()      ? std::string("-")
                               : n.commit_url.empty() ? fmt::format("`{}`", short_sha(c.git_sha))
                                                      : fmt::format("<{}|{}>", n.commit_url, short_sha(c.git_sha));
    nlohmann::ordered_json fields = nlohmann::ordered_json::array();
    auto field = [&](std::string_view name, const std::string& value) {
        fields.push_back({{"type", "mrkdwn"}, {"text", fmt::format("*{}*\n{}", name, value)}});
    };
    // Values as the dashboard writes them (report/quantity.hpp: the counter's
    // unit, an SI prefix, no exponent), six digits so that a small step shows.
    auto value = [&c](double v) {
        return report::counter_quantity(v, c.series.counter, report::quantity_digits_exact);
    };
    field("Benchmark", slack_escaped(c.series.benchmark));
    field("Counter", slack_escaped(c.series.counter));
    field("Delta", fmt::format("{} ({} -> {})", delta_text(c.delta_pct), value(c.mean_before), value(c.mean_after)));
    field("Commit", commit);
    // Who triaged it, and their note, once someone has.
    field("Status", a.changed_by.empty()
                        ? std::string(model::to_string(a.status))
                        : fmt::format("{} (by {})", model::to_string(a.status), slack_escaped(a.changed_by)));
    const std::string& testbed = n.testbed_name.empty() ? c.series.testbed : n.testbed_name;
    field("Testbed", slack_escaped(testbed.empty() ? std::string("-") : testbed));
    if (!a.note.empty()) field("Note", slack_escaped(a.note));
    if (culprit) {
        // A section holds at most 10 fields (Slack's limit): the first three culprits.
        constexpr std::size_t max_shown = 3;
        const auto& list = a.culprit->culprits;
        for (std::size_t i = 0; i < list.size() && i < max_shown; ++i) {
            const auto& m = list[i];
            const std::string link = n.repository_url.empty()
                                         ? fmt::format("`{}`", short_sha(m.sha))
                                         : fmt::format("<{}/commit/{}|{}>", n.repository_url, m.sha, short_sha(m.sha));
            field("Culprit", fmt::format("{} {} ({}), {:.0f}% of the change", link, slack_escaped(m.subject),
                                         slack_escaped(m.author), m.share * 100));
        }
    }
    nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
    blocks.push_back({{"type", "header"}, {"text", {{"type", "plain_text"}, {"text", title.substr(0, 150)}}}});
    blocks.push_back({{"type", "section"}, {"fields", std::move(fields)}});
    if (!n.dashboard_url.empty()) {
        blocks.push_back(
            {{"type", "section"},
             {"text",
              {{"type", "mrkdwn"}, {"text", fmt::format("<{}|Open alert {} in perfgate>", n.dashboard_url, a.id)}}}});
    }
    nlohmann::ordered_json body{{"text", slack_escaped(title)}, {"blocks", std::move(blocks)}};
    return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string webhook_signature(std::string_view secret, std::int64_t timestamp, std::string_view body)
{
    const std::string signed_text = fmt::format("{}.{}", timestamp, body);
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac.data(), &length);
    return "sha256=" + model::to_hex(mac.data(), length);
}

std::string new_delivery_id()
{
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        throw error(errors::internal, "RAND_bytes failed: no delivery id");
    }
    return model::to_hex(bytes.data(), bytes.size());
}

std::string webhook_status_class(int status) { return fmt::format("HTTP status {}xx", status / 100); }

notifier::notifier(store::store& db, webhook_transport send, notifier_options options,
                   std::function<void(const std::string&)> log)
    : db_(db), send_(std::move(send)), options_(std::move(options)), log_(std::move(log))
{
    const std::size_t workers = std::max<std::size_t>(1, options_.workers);
    threads_.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { run(); });
}

notifier::~notifier()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
}

void notifier::notify(std::string_view event, const model::alert& alert) noexcept
{
    try {
        const auto targets = db_.webhooks().targets(alert.project);
        if (targets.empty()) return;
        alert_notice n{std::string(event), alert, {}, {}, 0, {}, {}};
        n.time = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                     .count();
        if (auto repo = db_.projects().repository_url(alert.project)) {
            n.repository_url = *repo;
            if (!alert.change.git_sha.empty()) n.commit_url = fmt::format("{}/commit/{}", *repo, alert.change.git_sha);
        }
        if (!options_.public_url.empty()) {
            n.dashboard_url = fmt::format("{}/p/{}/alerts", options_.public_url, alert.project);
        }
        // The series names its testbed by fingerprint; people know its name.
        if (auto run = db_.runs().find(alert.project, alert.change.run_id)) n.testbed_name = run->testbed_name;
        std::vector<delivery> ready;
        for (const auto& t : targets) {
            delivery d;
            d.project = alert.project;
            d.webhook_id = t.id;
            d.id = new_delivery_id();
            d.event = n.event;
            d.secret = t.secret;
            d.post.url = t.url;
            d.post.timeout = options_.timeout;
            d.post.body = t.format == "slack" ? slack_body(n) : json_body(n);
            d.due = std::chrono::steady_clock::now();
            ready.push_back(std::move(d));
        }
        std::vector<delivery> dropped;
        {
            std::lock_guard lock(mutex_);
            auto& q = queues_[alert.project];
            for (auto& d : ready) {
                if (q.waiting.size() >= std::max<std::size_t>(1, options_.queue_size)) {
                    dropped.push_back(std::move(q.waiting.front()));
                    q.waiting.pop_front();
                    --queued_;
                    ++counts_.dropped;
                }
                q.waiting.push_back(std::move(d));
                ++queued_;
            }
        }
        changed_.notify_all();
        for (const auto& d : dropped) {
            log_(fmt::format("perfgate serve: webhook {} ({}) delivery dropped: project '{}' has {} deliveries queued",
                             d.webhook_id, redacted_url(d.post.url), d.project, options_.queue_size));
            record(d, "dropped");
        }
    } catch (const std::exception& e) {
        log_quietly([&] {
            return fmt::format("perfgate serve: alert {} of project '{}' not notified: {}", alert.id, alert.project,
                               e.what());
        });
    }
}

notifier::counts notifier::stats() const
{
    std::lock_guard lock(mutex_);
    counts c = counts_;
    c.queued = queued_ + busy_;
    return c;
}

void notifier::drain() const
{
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return stopping_ || (queued_ == 0 && busy_ == 0); });
}

void notifier::log_quietly(const std::function<std::string()>& line) const noexcept
{
    try {
        log_(line());
    } catch (...) {
        // A line that cannot be made or written is dropped: the callers
        // (the watch, the delivery threads) must not stop over a log.
    }
}

std::optional<std::string> notifier::next_project(std::chrono::steady_clock::time_point now,
                                                  std::chrono::steady_clock::time_point& wake) const
{
    wake = std::chrono::steady_clock::time_point::max();
    if (queues_.empty()) return std::nullopt;
    // The projects after the last one served, then from the start: each
    // project with work gets an attempt before any gets a second.
    auto it = queues_.upper_bound(last_served_);
    for (std::size_t i = 0; i < queues_.size(); ++i, ++it) {
        if (it == queues_.end()) it = queues_.begin();
        const project_queue& q = it->second;
        if (q.busy || q.waiting.empty()) continue;
        const auto first = std::min_element(q.waiting.begin(), q.waiting.end(),
                                            [](const delivery& a, const delivery& b) { return a.due < b.due; });
        if (first->due <= now) return it->first;
        wake = std::min(wake, first->due);
    }
    return std::nullopt;
}

void notifier::run()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopping_) return;
        auto wake = std::chrono::steady_clock::time_point::max();
        const auto project = next_project(std::chrono::steady_clock::now(), wake);
        if (!project) {
            if (wake == std::chrono::steady_clock::time_point::max()) changed_.wait(lock);
            else changed_.wait_until(lock, wake);
            continue;
        }
        project_queue& q = queues_.find(*project)->second;
        // The delivery due first: retries wait their back-off without
        // holding up the project's others.
        const auto next = std::min_element(q.waiting.begin(), q.waiting.end(),
                                           [](const delivery& a, const delivery& b) { return a.due < b.due; });
        delivery d = std::move(*next);
        q.waiting.erase(next);
        q.busy = true;
        --queued_;
        ++busy_;
        last_served_ = *project;
        lock.unlock();
        attempt(d);
        lock.lock();
        auto& after = queues_.find(*project)->second;
        after.busy = false;
        --busy_;
        // A queue with nothing left is forgotten: a project that stops
        // alerting costs nothing.
        if (after.waiting.empty()) queues_.erase(*project);
        changed_.notify_all();
    }
}

void notifier::attempt(delivery& d)
{
    ++d.attempts;
    webhook_answer answer;
    const auto verdict = options_.policy.resolve(d.post.url);
    if (!verdict.to) {
        answer = {0, verdict.failure, verdict.detail};
    } else {
        d.post.connect_address = verdict.to->address;
        d.post.connect_port = verdict.to->port;
        // Signed now, not when queued: the timestamp is the attempt's, so a
        // retry after its back-off is inside a receiver's 5-minute window.
        const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
        d.post.headers = {{"Content-Type", "application/json"},
                          {"User-Agent", "perfgate-webhook"},
                          {"X-Perfgate-Event", d.event},
                          {"X-Perfgate-Delivery", d.id},
                          {"X-Perfgate-Timestamp", std::to_string(now)}};
        if (d.secret)
            d.post.headers.emplace_back("X-Perfgate-Signature", webhook_signature(*d.secret, now, d.post.body));
        try {
            answer = send_(d.post);
        } catch (const std::exception& e) {
            answer = {0, std::string(webhook_failure_connect), e.what()};
        }
    }
    if (is_success(answer.status)) {
        {
            std::lock_guard lock(mutex_);
            ++counts_.delivered;
        }
        d.last_error.clear();
        record(d, "delivered");
        return;
    }
    d.last_error = answer.status != 0 ? webhook_status_class(answer.status) : answer.error;
    if (d.attempts < options_.max_attempts) {
        const auto backoff = options_.first_backoff * (1LL << (d.attempts - 1));
        d.due = std::chrono::steady_clock::now() + backoff;
        std::lock_guard lock(mutex_);
        ++counts_.retried;
        if (!stopping_) {
            queues_[d.project].waiting.push_back(std::move(d));
            ++queued_;
        }
        return;
    }
    {
        std::lock_guard lock(mutex_);
        ++counts_.failed;
    }
    const std::string detail = answer.status != 0 ? fmt::format("HTTP {}", answer.status) : answer.detail;
    log_(fmt::format("perfgate serve: webhook {} ({}) delivery failed after {} attempts: {}{}", d.webhook_id,
                     redacted_url(d.post.url), d.attempts, d.last_error,
                     detail.empty() || detail == d.last_error ? std::string() : fmt::format(" ({})", detail)));
    record(d, "failed");
}

void notifier::record(const delivery& d, std::string_view outcome) noexcept
{
    try {
        db_.webhooks().record_delivery(d.webhook_id, outcome, d.attempts, d.last_error);
    } catch (const std::exception& e) {
        log_quietly([&] {
            return fmt::format("perfgate serve: webhook {} delivery log not written: {}", d.webhook_id, e.what());
        });
    }
}

} // namespace perfgate::service
