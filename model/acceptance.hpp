// A reviewer's acceptance of a comparison's regression ("perfgate accept",
// docs/github.md "Accepting a regression"): who, why, when and for which
// commit. Shared by the store, the server's wire format and the GitHub side.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/token_scope.hpp"

namespace perfgate::model {

struct acceptance {
    std::int64_t comparison_id = 0;
    std::string head_sha;         // the pull request head it was given for
    std::string login;            // the GitHub user whose permission was checked
    std::string reason;           // one line of the user's text (clean_acceptance_reason)
    std::int64_t accepted_at = 0; // unix seconds
    // The server token that stored it (019_token_scopes.sql): the GitHub
    // login is checked by whoever holds that token, so the token is the
    // record of who vouched; nullopt for older acceptances and the CLI on a
    // database.
    std::optional<token_ref> written_by;
};

// A reason is one line of at most this many bytes: a status description
// holds 140 characters, a sentence or two is what a reviewer writes, and a
// reason that needs more belongs in the PR thread it came from.
inline constexpr std::size_t max_acceptance_reason_bytes = 300;

// A GitHub login: 1 to 39 letters, digits and '-' (GitHub's rule for user
// and organisation names), or a GitHub App's bot, the same followed by
// "[bot]".
[[nodiscard]] bool is_github_login(std::string_view login);

// A GitLab username: 1 to 255 letters, digits, '_', '-' and '.' (GitLab's
// characters for usernames), not starting or ending with '.' or '-'.
[[nodiscard]] bool is_gitlab_username(std::string_view name);

// A full commit id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
[[nodiscard]] bool is_full_commit_sha(std::string_view sha);

// The user's reason as stored and shown: control characters (a newline
// included) and the bidirectional overrides and isolates become spaces,
// invalid UTF-8 bytes U+FFFD, runs of spaces one, the ends trimmed, and
// the rest cut to max_acceptance_reason_bytes at a character boundary,
// ending "..." when cut. Markdown is neutralised where it is rendered, not
// here.
[[nodiscard]] std::string clean_acceptance_reason(std::string_view text);

// Whether reason is what clean_acceptance_reason leaves unchanged: how the
// server checks a reason it is sent.
[[nodiscard]] bool is_clean_acceptance_reason(std::string_view reason);

} // namespace perfgate::model
