// perfgate's own comments on a pull request: whose login the token comments
// as, and the sticky comment that carries a marker (publish.hpp, accept.hpp).
// Internal to github/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "github/api.hpp"

namespace perfgate::github::detail {

// The login our comments are written by. GITHUB_TOKEN is an installation
// token (ghs_) of the GitHub Actions app, which comments as
// github-actions[bot] and cannot call GET /user; any other token acts as its
// user, whom GET /user names. Another app's installation token (also ghs_)
// comments as "<slug>[bot]": comment_author. "github.bad_response" when
// GET /user names no login.
std::string own_login(github_api& api, const std::string& token, const std::optional<std::string>& comment_author);

// The first comment of pull request `pr` of `repository` that carries
// `marker` and was written by `self` (case-insensitive): its id and body.
// Another user or app quoting the marker (a reply, a copy, a bot of its own)
// is not ours, and GitHub would refuse to let us edit it anyway. Read 100 a
// page, at most 1000 pages.
std::optional<std::pair<std::int64_t, std::string>> find_own_comment(github_api& api, const std::string& repository,
                                                                     std::int64_t pr, const std::string& marker,
                                                                     const std::string& self);

// GitHub's limits (docs.github.com/rest): a commit status description holds
// at most 140 characters.
inline constexpr std::size_t status_description_limit = 140;

// Cuts s to at most max_chars Unicode characters, never inside a UTF-8 sequence.
std::string utf8_truncate(std::string_view s, std::size_t max_chars);
std::size_t utf8_length(std::string_view s);

// text as a commit status description: cut to 140 characters, ending "...".
std::string status_description(std::string_view text);

} // namespace perfgate::github::detail
