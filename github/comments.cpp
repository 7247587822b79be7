#include "github/comments.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "github/json_fields.hpp"
#include "model/error.hpp"

namespace perfgate::github::detail {

using nlohmann::json;

namespace {
// The comment list is read 100 at a time, GitHub's per_page maximum; 1000
// pages of 100 is far beyond any real pull request.
constexpr int comments_per_page = 100;
constexpr int max_comment_pages = 1000;
// GITHUB_TOKEN's prefix (github.blog 2021-04-05, "Behind GitHub's new
// authentication token formats") and the login its comments carry.
constexpr std::string_view installation_token_prefix = "ghs_";
constexpr std::string_view actions_bot_login = "github-actions[bot]";
} // namespace

std::string own_login(github_api& api, const std::string& token, const std::optional<std::string>& comment_author)
{
    if (comment_author) return *comment_author;
    if (token.starts_with(installation_token_prefix)) return std::string(actions_bot_login);
    const json me = api.call("GET", "/user");
    std::string login = string_at(me, "login");
    if (login.empty()) {
        throw error(errors::github_bad_response,
                    "GET /user: no login in the answer: cannot tell our comments from others'");
    }
    return login;
}

std::optional<std::pair<std::int64_t, std::string>> find_own_comment(github_api& api, const std::string& repository,
                                                                     std::int64_t pr, const std::string& marker,
                                                                     const std::string& self)
{
    std::string url = fmt::format("/repos/{}/issues/{}/comments?per_page={}", repository, pr, comments_per_page);
    for (int page = 0; page < max_comment_pages && !url.empty(); ++page) {
        std::string next;
        const json list = api.call("GET", url, nullptr, &next, "pull-requests: write");
        if (!list.is_array())
            throw error(errors::github_bad_response, fmt::format("GET {}: expected a JSON array", url));
        for (const auto& c : list) {
            std::string body = string_at(c, "body");
            if (body.find(marker) == std::string::npos) continue;
            if (!iequals(string_at(object_at(c, "user"), "login"), self)) continue;
            if (auto id = int_at(c, "id")) return std::pair{*id, std::move(body)};
        }
        url = next;
    }
    return std::nullopt;
}

std::string utf8_truncate(std::string_view s, std::size_t max_chars)
{
    std::size_t chars = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue; // continuation byte
        if (chars == max_chars) return std::string(s.substr(0, i));
        ++chars;
    }
    return std::string(s);
}

std::size_t utf8_length(std::string_view s)
{
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::string status_description(std::string_view text)
{
    constexpr std::string_view cut_mark = "...";
    if (utf8_length(text) <= status_description_limit) return std::string(text);
    return utf8_truncate(text, status_description_limit - cut_mark.size()) + std::string(cut_mark);
}

} // namespace perfgate::github::detail
