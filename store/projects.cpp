// Projects and their API tokens (a project's settings: alerts.cpp).
#include "store/store.hpp"

#include "model/digest.hpp"
#include "model/error.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>

namespace perfgate::store {

using detail::connection;
using detail::ensure_project_row;
using detail::unix_now;
using model::sha256_hex;

namespace {

// Tokens: 32 random bytes (256 bits, as GitHub's and most API tokens) in hex,
// with a prefix that makes a leaked token recognisable to secret scanners.
constexpr std::string_view token_prefix = "pg_";
constexpr std::size_t token_random_bytes = 32;
constexpr std::size_t token_length = token_prefix.size() + 2 * token_random_bytes;
// last_used_at is written at most this often per token (seconds), so that
// reads with a token do not each become a write.
constexpr std::int64_t last_used_resolution_s = 3600;

} // namespace

std::int64_t projects::ensure(std::string_view project)
{
    return impl_->write([&](connection& c) { return ensure_project_row(c, project, unix_now()); });
}

bool projects::exists(std::string_view project) const
{
    impl::read_lease c(*impl_);
    return detail::project_id(impl_->ids_, *c, project, true).has_value();
}

std::string tokens::create(std::string_view project, std::string_view name, std::optional<std::int64_t> expires_at,
                           model::scope_set scopes)
{
    std::array<unsigned char, token_random_bytes> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        throw error(errors::store_io,
                    fmt::format("{}: cannot create a token: OpenSSL RAND_bytes failed", impl_->name_));
    }
    std::string token = std::string(token_prefix) + model::to_hex(bytes.data(), bytes.size());
    OPENSSL_cleanse(bytes.data(), bytes.size());
    const std::string hash = sha256_hex(token);

    impl_->write([&](connection& c) {
        const auto now = unix_now();
        const auto project_id = ensure_project_row(c, project, now);
        c.prepare("INSERT INTO api_tokens (project_id, name, sha256, created_at, expires_at, scopes) "
                  "VALUES (:project_id, :name, :sha256, :now, :expires_at, :scopes)")
            .bind(":project_id", project_id)
            .bind(":name", name)
            .bind(":sha256", hash)
            .bind(":now", now)
            .bind(":expires_at", expires_at)
            .bind(":scopes", scopes.is_legacy() ? std::optional<std::string>() : std::optional(scopes.to_string()))
            .run();
    });
    return token;
}

std::optional<std::string> tokens::project_of(std::string_view token) const
{
    auto owner = lookup(token);
    if (!owner) return std::nullopt;
    return std::move(owner->project);
}

std::optional<token_owner> tokens::lookup(std::string_view token) const
{
    if (token.size() != token_length || !token.starts_with(token_prefix)) return std::nullopt;
    const std::string hash = sha256_hex(token);
    const auto now = unix_now();

    token_owner owner;
    std::optional<std::int64_t> last_used;
    {
        impl::read_lease c(*impl_);
        // Looking up by the hash leaks nothing useful through timing (an
        // attacker cannot choose hash prefixes); the final comparison is
        // constant-time anyway, as the issue asks.
        auto st = (*c).prepare(
            "SELECT t.sha256, p.name, t.id, t.expires_at, t.last_used_at, t.name, t.scopes FROM api_tokens t "
            "JOIN projects p ON p.id = t.project_id WHERE t.sha256 = :sha256");
        st.bind(":sha256", hash);
        if (!st.step()) return std::nullopt;
        const std::string stored = st.text(0);
        if (stored.size() != hash.size() || CRYPTO_memcmp(stored.data(), hash.data(), hash.size()) != 0) {
            return std::nullopt;
        }
        const auto expires = st.opt_int64(3);
        if (expires && *expires <= now) return std::nullopt;
        owner.project = st.text(1);
        owner.id = st.int64(2);
        last_used = st.opt_int64(4);
        owner.name = st.text(5);
        owner.scopes = model::scope_set::from_stored(st.is_null(6) ? std::nullopt : std::optional(st.text(6)));
    }
    if (!last_used || *last_used <= now - last_used_resolution_s) {
        try {
            impl_->write([&](connection& c) {
                c.prepare("UPDATE api_tokens SET last_used_at = :now WHERE id = :id")
                    .bind(":now", now)
                    .bind(":id", owner.id)
                    .run();
            });
        } catch (const std::exception&) {
            // Best effort: the request was authorized; a store that cannot
            // write says so on the request's own write, or in /healthz.
        }
    }
    return owner;
}

bool tokens::live(std::int64_t id, std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT t.expires_at FROM api_tokens t JOIN projects p ON p.id = t.project_id "
                           "WHERE t.id = :id AND p.name = :project");
    st.bind(":id", id).bind(":project", project);
    if (!st.step()) return false;
    const auto expires = st.opt_int64(0);
    return !expires || *expires > unix_now();
}

std::vector<token_info> tokens::list(std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare(
        "SELECT t.id, t.name, t.created_at, t.last_used_at, t.expires_at, t.scopes FROM api_tokens t "
        "JOIN projects p ON p.id = t.project_id WHERE p.name = :project ORDER BY t.id");
    st.bind(":project", project);
    std::vector<token_info> out;
    while (st.step()) {
        out.push_back({st.int64(0), st.text(1), st.int64(2), st.opt_int64(3), st.opt_int64(4),
                       model::scope_set::from_stored(st.is_null(5) ? std::nullopt : std::optional(st.text(5)))});
    }
    return out;
}

std::optional<std::int64_t> tokens::id_of(std::string_view project, std::string_view token) const
{
    if (token.size() != token_length || !token.starts_with(token_prefix)) return std::nullopt;
    const std::string hash = sha256_hex(token);
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT t.id FROM api_tokens t JOIN projects p ON p.id = t.project_id "
                           "WHERE t.sha256 = :sha256 AND p.name = :project");
    st.bind(":sha256", hash).bind(":project", project);
    if (!st.step()) return std::nullopt;
    return st.int64(0);
}

bool tokens::revoke(std::string_view project, std::int64_t id)
{
    return impl_->write([&](connection& c) {
        {
            auto st = c.prepare("SELECT t.id FROM api_tokens t JOIN projects p ON p.id = t.project_id "
                                "WHERE t.id = :id AND p.name = :project");
            st.bind(":id", id).bind(":project", project);
            if (!st.step()) return false;
        }
        c.prepare("DELETE FROM api_tokens WHERE id = :id").bind(":id", id).run();
        return true;
    });
}

} // namespace perfgate::store
