// Alert notifications: bodies, signatures and the delivery thread
// (notifier.hpp; docs/history.md "Notifications").
#include "service/notifier.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "model/digest.hpp"
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
    return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string slack_body(const alert_notice& n)
{
    const auto& a = n.alert;
    const auto& c = a.change;
    const bool opened = n.event == event_alert_opened;
    const std::string title = opened ? fmt::format("Performance regression in {}: {} {}", a.project, c.series.benchmark,
                                                   delta_text(c.delta_pct))
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

std::string webhook_signature(std::string_view secret, std::string_view body)
{
    std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac.data(), &length);
    return "sha256=" + model::to_hex(mac.data(), length);
}

notifier::notifier(store::store& db, webhook_transport send, notifier_options options,
                   std::function<void(const std::string&)> log)
    : db_(db), send_(std::move(send)), options_(std::move(options)), log_(std::move(log)), thread_([this] { run(); })
{}

notifier::~notifier()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void notifier::notify(std::string_view event, const model::alert& alert) noexcept
{
    try {
        const auto targets = db_.webhooks().targets(alert.project);
        if (targets.empty()) return;
        alert_notice n{std::string(event), alert, {}, {}, 0, {}};
        n.time = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                     .count();
        if (auto repo = db_.projects().repository_url(alert.project); repo && !alert.change.git_sha.empty()) {
            n.commit_url = fmt::format("{}/commit/{}", *repo, alert.change.git_sha);
        }
        if (!options_.public_url.empty()) {
            n.dashboard_url = fmt::format("{}/p/{}/alerts", options_.public_url, alert.project);
        }
        // The series names its testbed by fingerprint; people know its name.
        if (auto run = db_.runs().find(alert.project, alert.change.run_id)) n.testbed_name = run->testbed_name;
        std::vector<delivery> ready;
        for (const auto& t : targets) {
            delivery d;
            d.webhook_id = t.id;
            d.post.url = t.url;
            d.post.timeout = options_.timeout;
            d.post.body = t.format == "slack" ? slack_body(n) : json_body(n);
            d.post.headers = {{"Content-Type", "application/json"},
                              {"User-Agent", "perfgate-webhook"},
                              {"X-Perfgate-Event", n.event}};
            if (t.secret)
                d.post.headers.emplace_back("X-Perfgate-Signature", webhook_signature(*t.secret, d.post.body));
            d.due = std::chrono::steady_clock::now();
            ready.push_back(std::move(d));
        }
        std::vector<delivery> dropped;
        {
            std::lock_guard lock(mutex_);
            for (auto& d : ready) {
                if (queue_.size() >= options_.queue_size) {
                    dropped.push_back(std::move(queue_.front()));
                    queue_.pop_front();
                    ++counts_.dropped;
                }
                queue_.push_back(std::move(d));
            }
        }
        changed_.notify_all();
        for (const auto& d : dropped) {
            log_(fmt::format("perfgate serve: webhook {} delivery dropped: the queue holds {} deliveries", d.webhook_id,
                             options_.queue_size));
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
    c.queued = queue_.size() + (busy_ ? 1 : 0);
    return c;
}

void notifier::drain() const
{
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return stopping_ || (queue_.empty() && !busy_); });
}

void notifier::log_quietly(const std::function<std::string()>& line) const noexcept
{
    try {
        log_(line());
    } catch (...) {
        // A line that cannot be made or written is dropped: the callers
        // (the watch, the delivery thread) must not stop over a log.
    }
}

void notifier::run()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stopping_) return;
        if (queue_.empty()) {
            changed_.wait(lock);
            continue;
        }
        // The delivery due first: retries wait their back-off without
        // holding up the others.
        const auto next = std::min_element(queue_.begin(), queue_.end(),
                                           [](const delivery& a, const delivery& b) { return a.due < b.due; });
        if (next->due > std::chrono::steady_clock::now()) {
            changed_.wait_until(lock, next->due);
            continue;
        }
        delivery d = std::move(*next);
        queue_.erase(next);
        busy_ = true;
        lock.unlock();
        attempt(d);
        lock.lock();
        busy_ = false;
        changed_.notify_all();
    }
}

void notifier::attempt(delivery& d)
{
    ++d.attempts;
    webhook_answer answer;
    try {
        answer = send_(d.post);
    } catch (const std::exception& e) {
        answer = {0, e.what()};
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
    d.last_error = answer.status != 0 ? fmt::format("HTTP {}", answer.status) : answer.error;
    if (d.attempts < options_.max_attempts) {
        const auto backoff = options_.first_backoff * (1LL << (d.attempts - 1));
        d.due = std::chrono::steady_clock::now() + backoff;
        std::lock_guard lock(mutex_);
        ++counts_.retried;
        if (!stopping_) queue_.push_back(std::move(d));
        return;
    }
    {
        std::lock_guard lock(mutex_);
        ++counts_.failed;
    }
    log_(fmt::format("perfgate serve: webhook {} delivery failed after {} attempts: {}", d.webhook_id, d.attempts,
                     d.last_error));
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
