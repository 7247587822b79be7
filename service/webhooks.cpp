// A project's alert webhooks: what may be stored (docs/history.md
// "Notifications").
#include "service/service.hpp"

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::service {

namespace {

// The user's text, bounded: a message quotes at most this much of it.
std::string shown_url(std::string_view url)
{
    constexpr std::size_t max_shown = 80;
    return url.size() > max_shown ? fmt::format("'{}...'", url.substr(0, max_shown)) : fmt::format("'{}'", url);
}

} // namespace

std::string normalize_webhook_url(std::string_view label, std::string_view url)
{
    if (url.empty()) throw error(errors::ingest_bad_field, fmt::format("{}: the URL is empty", label));
    if (url.size() > max_webhook_url_bytes) {
        throw error(errors::ingest_bad_field, fmt::format("{}: {} is {} bytes, over the limit of {}", label,
                                                          shown_url(url), url.size(), max_webhook_url_bytes));
    }
    if (!url.starts_with("https://") && !url.starts_with("http://")) {
        throw error(errors::ingest_bad_field,
                    fmt::format("{}: {} must start with https:// or http://", label, shown_url(url)));
    }
    // The URL goes into an HTTP request line and into `perfgate project`'s
    // output: a byte that breaks either is refused, not escaped.
    constexpr std::string_view markup = "\"'<>`\\";
    for (std::size_t i = 0; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c <= 0x20 || c >= 0x7f) {
            throw error(errors::ingest_bad_field,
                        fmt::format("{}: byte 0x{:02x} at offset {} is not allowed in a URL (no whitespace, control "
                                    "or non-ASCII bytes: percent-encode them)",
                                    label, c, i));
        }
        if (markup.find(static_cast<char>(c)) != std::string_view::npos) {
            throw error(errors::ingest_bad_field,
                        fmt::format("{}: '{}' at offset {} is not allowed in a URL (no quotes, <, >, ` or \\)", label,
                                    static_cast<char>(c), i));
        }
    }
    const std::size_t scheme = url.starts_with("https://") ? 8 : 7;
    const std::string_view host = url.substr(scheme);
    if (host.empty() || host.front() == '/' || host.front() == '?' || host.front() == '#' || host.front() == ':') {
        throw error(errors::ingest_bad_field, fmt::format("{}: {} has no host", label, shown_url(url)));
    }
    return std::string(url);
}

std::int64_t service::add_webhook(const std::string& project, std::string_view url, std::string_view format,
                                  std::string_view secret, std::string_view url_label)
{
    require_project(project);
    const std::string checked = normalize_webhook_url(url_label, url);
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
    if (db_.webhooks(project).size() >= max_webhooks_per_project) {
        throw error(errors::ingest_bad_field,
                    fmt::format("{}: project '{}' has {} webhooks, the most it may have: remove one first", url_label,
                                project, max_webhooks_per_project));
    }
    std::optional<std::string> stored_secret;
    if (!secret.empty()) stored_secret = std::string(secret);
    return db_.add_webhook(project, checked, format, stored_secret);
}

std::vector<store::store::webhook_info> service::webhooks(const std::string& project) const
{
    require_project(project);
    return db_.webhooks(project);
}

bool service::remove_webhook(const std::string& project, std::int64_t id)
{
    require_project(project);
    return db_.remove_webhook(project, id);
}

} // namespace perfgate::service
