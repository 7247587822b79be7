// A project's alert webhooks: what may be stored (docs/history.md
// "Notifications").
#include "service/service_impl.hpp"

#include <fmt/format.h>

#include "model/error.hpp"
#include "service/text.hpp"
#include "store/webhooks.hpp"

namespace perfgate::service {

std::string normalize_webhook_url(std::string_view label, std::string_view url)
{
    if (url.empty()) throw error(errors::ingest_bad_field, fmt::format("{}: the URL is empty", label));
    if (url.size() > max_webhook_url_bytes) {
        throw error(errors::ingest_bad_field, fmt::format("{}: {} is {} bytes, over the limit of {}", label,
                                                          shown_url(url), url.size(), max_webhook_url_bytes));
    }
    // The URL goes into an HTTP request line and into `perfgate project`'s
    // output: a byte that breaks either is refused, not escaped.
    std::string checked = checked_url(label, url); // HTTP:// is http://
    const std::size_t scheme = checked.starts_with("https://") ? 8 : 7;
    const std::string_view host = std::string_view(checked).substr(scheme);
    if (host.empty() || host.front() == '/' || host.front() == '?' || host.front() == '#' || host.front() == ':') {
        throw error(errors::ingest_bad_field, fmt::format("{}: {} has no host", label, shown_url(url)));
    }
    return checked;
}

std::int64_t detail::service_impl::add_webhook(const std::string& project, std::string_view url,
                                               std::string_view format, std::string_view secret,
                                               std::string_view url_label)
{
    require_project(project);
    const std::string checked = normalize_webhook_url(url_label, url);
    if (notifier_) notifier_->policy().check_url(url_label, checked);
    if (format != "json" && format != "slack") {
        throw error(errors::ingest_bad_field,
                    fmt::format("format: expected json or slack, got '{}'", format.substr(0, 32)));
    }
    if (secret.size() > max_webhook_secret_bytes) {
        throw error(errors::ingest_bad_field,
                    fmt::format("secret: {} bytes, over the limit of {}", secret.size(), max_webhook_secret_bytes));
    }
    for (const char c : secret) {
        // Never quoted back: a message about a secret does not echo it.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            throw error(errors::ingest_bad_field, "secret: control bytes are not allowed");
        }
    }
    if (db_.webhooks().list(project).size() >= max_webhooks_per_project) {
        throw error(errors::ingest_bad_field,
                    fmt::format("{}: project '{}' has {} webhooks, the most it may have: remove one first", url_label,
                                project, max_webhooks_per_project));
    }
    std::optional<std::string> stored_secret;
    if (!secret.empty()) stored_secret = std::string(secret);
    return db_.webhooks().add(project, checked, format, stored_secret);
}

std::vector<store::webhook_info> detail::service_impl::webhooks(const std::string& project) const
{
    require_project(project);
    return db_.webhooks().list(project);
}

bool detail::service_impl::remove_webhook(const std::string& project, std::int64_t id)
{
    require_project(project);
    return db_.webhooks().remove(project, id);
}

} // namespace perfgate::service
