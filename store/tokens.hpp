// A project's API tokens (store::store::tokens(); store/projects.cpp).
// Tokens are "pg_" + 32 random bytes (OpenSSL RAND_bytes) in hex, stored as
// the hex SHA-256 of the whole token; the plain token is returned once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/token_scope.hpp"

namespace perfgate::store {

namespace detail {
struct store_impl;
}

// A token's id, project, name and scopes (tokens::lookup).
struct token_owner {
    std::int64_t id = 0;
    std::string project;
    std::string name;
    model::scope_set scopes;
};

// A project's token as listed: never the secret (only its hash is stored).
struct token_info {
    std::int64_t id = 0;
    std::string name;
    std::int64_t created_at = 0;
    std::optional<std::int64_t> last_used_at;
    std::optional<std::int64_t> expires_at;
    model::scope_set scopes; // legacy(): created before scopes, every power
};

class tokens {
public:
    explicit tokens(detail::store_impl& s) noexcept : impl_(&s) {}
    tokens(const tokens&) = delete;
    tokens& operator=(const tokens&) = delete;

    // A new token of the project, created if needed. expires_at: unix
    // seconds after which the token opens nothing (nullopt: never).
    // scopes: what the token may do (model/token_scope.hpp); legacy() stores
    // no scope list, as tokens created before scopes existed (every power).
    // Token ids are never reused, also after a revocation (019_token_scopes.sql).
    std::string create(std::string_view project, std::string_view name,
                       std::optional<std::int64_t> expires_at = std::nullopt,
                       model::scope_set scopes = model::scope_set::legacy());
    // The project a token belongs to (constant-time hash comparison), or
    // nullopt: unknown, revoked or expired.
    [[nodiscard]] std::optional<std::string> project_of(std::string_view token) const;
    // The same with the token's id. Records the use (last_used_at), at most
    // once an hour per token; a failure to record it is not an error.
    [[nodiscard]] std::optional<token_owner> lookup(std::string_view token) const;
    // Token `id` of project exists and has not expired (a dashboard session
    // re-checks its token with this on every request).
    [[nodiscard]] bool live(std::int64_t id, std::string_view project) const;
    // A project's tokens, oldest first.
    [[nodiscard]] std::vector<token_info> list(std::string_view project) const;
    // The id of a token of project, expired or not, or nullopt.
    [[nodiscard]] std::optional<std::int64_t> id_of(std::string_view project, std::string_view token) const;
    // Deletes token `id` of project; false if the project has no such token.
    bool revoke(std::string_view project, std::int64_t id);

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
