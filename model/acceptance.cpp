#include "model/acceptance.hpp"

#include <algorithm>
#include <cctype>

#include "model/utf8.hpp"

namespace perfgate::model {

namespace {

// GitHub's limit on a user or organisation name.
constexpr std::size_t max_login_chars = 39;
constexpr std::string_view bot_suffix = "[bot]";
constexpr std::string_view ellipsis = "...";
constexpr std::string_view replacement_character = "\xef\xbf\xbd"; // U+FFFD, UTF-8

bool is_hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

} // namespace

bool is_github_login(std::string_view login)
{
    if (login.ends_with(bot_suffix)) login.remove_suffix(bot_suffix.size());
    return !login.empty() && login.size() <= max_login_chars && std::all_of(login.begin(), login.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
    });
}

bool is_gitlab_username(std::string_view name)
{
    constexpr std::size_t max_username_chars = 255;
    if (name.empty() || name.size() > max_username_chars) return false;
    const auto edge = [](char c) { return c == '.' || c == '-'; };
    return !edge(name.front()) && !edge(name.back()) && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
    });
}

bool is_full_commit_sha(std::string_view sha)
{
    return (sha.size() == 40 || sha.size() == 64) && std::all_of(sha.begin(), sha.end(), is_hex_lower);
}

std::string clean_acceptance_reason(std::string_view text)
{
    // Fault by fault (model/utf8.hpp): a control character becomes a space,
    // an invalid byte U+FFFD; the bidirectional controls, which
    // find_text_fault reports as control characters, too.
    std::string flat;
    flat.reserve(std::min(text.size(), max_acceptance_reason_bytes * 2));
    while (!text.empty() && flat.size() <= max_acceptance_reason_bytes * 2) {
        const auto fault = find_text_fault(text);
        const std::size_t good = fault ? fault->offset : text.size();
        flat.append(text.substr(0, good));
        if (!fault) break;
        std::size_t skip = 1;
        if (fault->invalid_utf8) {
            flat.append(replacement_character);
        } else {
            flat.push_back(' ');
            // The code point's UTF-8 length.
            const char32_t cp = fault->code_point;
            skip = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        }
        text.remove_prefix(std::min(text.size(), good + skip));
    }
    std::string out;
    out.reserve(flat.size());
    for (const char c : flat) {
        if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
        out.push_back(c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    if (out.size() > max_acceptance_reason_bytes) {
        out = std::string(utf8_prefix(out, max_acceptance_reason_bytes - ellipsis.size()));
        while (!out.empty() && out.back() == ' ') out.pop_back();
        out += ellipsis;
    }
    return out;
}

bool is_clean_acceptance_reason(std::string_view reason) { return clean_acceptance_reason(reason) == reason; }

} // namespace perfgate::model
