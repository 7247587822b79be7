// Dashboard sign-in sessions: a project token, checked once at sign-in,
// becomes a random session id in an HttpOnly, SameSite=Strict cookie. The
// server keeps sessions in memory only (a restart signs everyone out) and
// never stores the token itself.
//
// Each session carries a CSRF token: every state-changing form
// (triage, sign-out) posts it back and must match, in constant time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace perfgate::server::pages {

// Sessions live this long after sign-in.
inline constexpr std::chrono::hours session_lifetime{12};
// At most this many at once; signing in beyond evicts the oldest.
inline constexpr std::size_t max_sessions = 10000;

struct web_session {
    std::string project;
    // The token signed in with (its id in the store, not the secret): every
    // request re-checks it (security.cpp, session_of), so revoking or
    // expiring the token ends the session.
    std::int64_t token_id = 0;
    std::string csrf;
    std::chrono::steady_clock::time_point expires;
};

class session_store {
public:
    // A new session for project: its id (64 hex digits from the OS's CSPRNG).
    std::string create(const std::string& project, std::int64_t token_id);
    // The live session with this id for this project, if any.
    [[nodiscard]] std::optional<web_session> find(std::string_view id, std::string_view project);
    void remove(std::string_view id);
    [[nodiscard]] std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::list<std::string> order_; // ids, oldest first
    struct entry {
        web_session session;
        std::list<std::string>::iterator position;
    };
    std::unordered_map<std::string, entry> sessions_;
};

// 32 random bytes as hex (getrandom(2)).
std::string random_hex_token();
// a == b without an early exit on the first difference.
bool equal_constant_time(std::string_view a, std::string_view b);

} // namespace perfgate::server::pages
