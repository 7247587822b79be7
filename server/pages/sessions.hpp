// Dashboard sign-in sessions: a project token, checked once at sign-in,
// becomes a random session id in an HttpOnly, SameSite=Strict cookie. The
// server keeps sessions in memory only (a restart signs everyone out) and
// never stores the token itself.
//
// Each session carries a CSRF token: every state-changing form
// (triage, sign-out) posts it back and must match, in constant time.
#pragma once

#include "model/token_scope.hpp"

#include <algorithm>
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
// At most this many at once per project (docs/dashboard.md#sessions): a
// browser each for a team's readers, with room to spare. Signing in beyond
// ends that project's expired sessions first, then its oldest; another
// project's sessions are never touched, so a token of one project cannot
// sign out the users of another (issue 31, finding 3). Memory stays bounded:
// projects are made by the operator, and sign-ins are throttled per client
// address (client_throttle.hpp).
inline constexpr std::size_t max_sessions_per_project = 1000;

struct web_session {
    std::string project;
    // The token signed in with (its id in the store, not the secret): every
    // request re-checks it (security.cpp, session_of), so revoking or
    // expiring the token ends the session.
    std::int64_t token_id = 0;
    // The token's label (perfgate token create --label), "" without one:
    // who a triage from this session is recorded as.
    std::string token_label;
    // The token's scopes (model/token_scope.hpp): what the session may do
    // (pages.cpp: reading needs read, triage admin, a compare upload).
    model::scope_set scopes;
    std::string csrf;
    std::chrono::steady_clock::time_point expires;
};

class session_store {
public:
    // lifetime and per_project: session_lifetime and max_sessions_per_project,
    // smaller in tests.
    explicit session_store(std::chrono::steady_clock::duration lifetime = session_lifetime,
                           std::size_t per_project = max_sessions_per_project)
        : lifetime_(lifetime), per_project_(std::max<std::size_t>(per_project, 1))
    {}

    // A new session for project: its id (64 hex digits from the OS's CSPRNG).
    // Ends every expired session first, then, at the project's cap, the
    // project's oldest.
    std::string create(const std::string& project, std::int64_t token_id, std::string token_label = {},
                       model::scope_set scopes = model::scope_set::legacy());
    // The live session with this id for this project, if any.
    [[nodiscard]] std::optional<web_session> find(std::string_view id, std::string_view project);
    void remove(std::string_view id);
    [[nodiscard]] std::size_t size() const;

    // Live sessions of project (expired ones not yet ended included).
    [[nodiscard]] std::size_t size(std::string_view project) const;

private:
    struct entry {
        web_session session;
        std::list<std::string>::iterator position;         // in order_
        std::list<std::string>::iterator project_position; // in by_project_[project]
    };
    using entry_map = std::unordered_map<std::string, entry>;
    void erase(entry_map::iterator it);                          // with mutex_ held
    void end_expired(std::chrono::steady_clock::time_point now); // with mutex_ held

    std::chrono::steady_clock::duration lifetime_;
    std::size_t per_project_;
    mutable std::mutex mutex_;
    // Ids, oldest first: all sessions (every session lives as long, so the
    // front expires first), and each project's.
    std::list<std::string> order_;
    std::unordered_map<std::string, std::list<std::string>> by_project_;
    entry_map sessions_;
};

// 32 random bytes as hex (getrandom(2)).
std::string random_hex_token();
// a == b without an early exit on the first difference.
bool equal_constant_time(std::string_view a, std::string_view b);

} // namespace perfgate::server::pages
