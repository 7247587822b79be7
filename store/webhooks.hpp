// A project's alert webhooks (store::store::webhooks(); store/webhooks.cpp,
// 015_webhooks.sql). The store keeps url, format and secret as given
// (service::service checks them); the secret is returned only by targets,
// for signing. The delivery log is the outcome of each webhook's newest
// delivery.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

struct webhook_info {
    std::int64_t id = 0;
    std::string url;
    std::string format; // "json" or "slack"
    bool has_secret = false;
    std::int64_t created_at = 0;
    std::optional<std::string> last_outcome; // "delivered", "failed", "dropped"; nullopt: none yet
    std::optional<std::int64_t> last_attempts;
    std::optional<std::int64_t> last_at;
    std::optional<std::string> last_error;
};

struct webhook_target {
    std::int64_t id = 0;
    std::string url;
    std::string format;
    std::optional<std::string> secret;
};

class webhooks {
public:
    explicit webhooks(detail::store_impl& s) noexcept : impl_(&s) {}
    webhooks(const webhooks&) = delete;
    webhooks& operator=(const webhooks&) = delete;

    // Adds a webhook; its id. "store.not_found" for an unknown project,
    // "store.constraint" for a format other than json/slack or a URL that is
    // empty or over 2048 bytes.
    std::int64_t add(std::string_view project, std::string_view url, std::string_view format,
                     const std::optional<std::string>& secret);
    // Oldest first; an unknown project has none.
    [[nodiscard]] std::vector<webhook_info> list(std::string_view project) const;
    [[nodiscard]] std::vector<webhook_target> targets(std::string_view project) const;
    // Deletes webhook `id` of project; false if the project has no such webhook.
    bool remove(std::string_view project, std::int64_t id);
    // Records the outcome of a delivery to webhook `id` (a removed webhook: nothing).
    void record_delivery(std::int64_t id, std::string_view outcome, std::int64_t attempts, std::string_view error_text);

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
