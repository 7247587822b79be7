// A project's API tokens: authorising a request, creating, listing and revoking tokens
// (service::service::tokens(); bodies in service/service.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class tokens {
public:
    explicit tokens(detail::service_impl& s) noexcept : impl_(&s) {}
    tokens(const tokens&) = delete;
    tokens& operator=(const tokens&) = delete;

    // Projects and tokens. authorize: the token belongs to `project`, else
    // "auth.bad_token" (unknown or revoked) or "auth.forbidden" (another
    // project's).
    // Returns the token's id, name and scopes (store::tokens::lookup; an
    // expired token is unknown); require_scope checks the scopes.
    token_grant authorize(std::string_view token, const std::string& project) const;
    // Token `id` of project still exists and has not expired: a dashboard
    // session re-checks its token with this, so revoking ends it.
    [[nodiscard]] bool live(std::int64_t id, const std::string& project) const;
    // A new token of the project (created if needed), shown once.
    // expires_at: unix seconds, nullopt for never.
    // scopes: model/token_scope.hpp; legacy() only for tests of tokens made
    // before scopes (perfgate token create always names its scopes).
    std::string create(const std::string& project, std::string_view name,
                       std::optional<std::int64_t> expires_at = std::nullopt,
                       model::scope_set scopes = model::scope_set::legacy());
    // A project's tokens (never the secret); "project.not_found".
    [[nodiscard]] std::vector<store::token_info> list(const std::string& project) const;
    // Revokes one token of project named by its id (decimal) or by the token
    // itself; returns its id. "token.not_found" if the project has none such.
    std::int64_t revoke(const std::string& project, std::string_view id_or_token);

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
