// A project's alert webhooks (service::service::webhooks(); bodies in service/webhooks.cpp;
// delivery: service/notifier.hpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class webhooks {
public:
    explicit webhooks(detail::service_impl& s) noexcept : impl_(&s) {}
    webhooks(const webhooks&) = delete;
    webhooks& operator=(const webhooks&) = delete;

    // A project's alert webhooks. add checks the URL
    // (normalize_webhook_url, labelled url_label), the format ("json" or
    // "slack") and the secret (at most max_webhook_secret_bytes, no control
    // bytes; "" is no secret), and the project's count
    // (max_webhooks_per_project); its id. "project.not_found",
    // "ingest.bad_field" naming the field. list never returns a secret.
    std::int64_t add(const std::string& project, std::string_view url, std::string_view format, std::string_view secret,
                     std::string_view url_label = "field 'url'");
    [[nodiscard]] std::vector<store::webhook_info> list(const std::string& project) const;
    // false if the project has no such webhook; "project.not_found".
    bool remove(const std::string& project, std::int64_t id);

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
