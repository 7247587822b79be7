#include "server/request_text.hpp"

#include <algorithm>
#include <cctype>

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/error.hpp"

namespace perfgate::server::detail {

namespace {

int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

} // namespace

std::vector<std::string_view> path_segments(std::string_view path)
{
    std::vector<std::string_view> parts;
    std::size_t pos = !path.empty() && path[0] == '/' ? 1 : 0;
    while (pos <= path.size()) {
        auto next = path.find('/', pos);
        if (next == std::string_view::npos) next = path.size();
        parts.push_back(path.substr(pos, next - pos));
        pos = next + 1;
    }
    return parts;
}

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            const int hi = hex_digit(s[i + 1]);
            const int lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

std::string_view bearer_token(const request& req)
{
    const std::string_view header = sv(req[boost::beast::http::field::authorization]);
    if (header.empty()) {
        throw error(errors::auth_missing_token, "missing 'Authorization: Bearer <token>' header "
                                                "(create a token with `perfgate token create`)");
    }
    constexpr std::string_view scheme = "bearer ";
    if (header.size() <= scheme.size() || !std::equal(scheme.begin(), scheme.end(), header.begin(), [](char a, char b) {
            return a == std::tolower(static_cast<unsigned char>(b));
        })) {
        throw error(errors::auth_bad_token, "Authorization header: expected 'Bearer <token>'");
    }
    std::string_view token = header.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    return token;
}

query_params::query_params(std::string_view query)
{
    std::size_t pos = 0;
    while (pos < query.size()) {
        auto amp = query.find('&', pos);
        if (amp == std::string_view::npos) amp = query.size();
        std::string_view pair = query.substr(pos, amp - pos);
        pos = amp + 1;
        if (pair.empty()) continue;
        auto eq = pair.find('=');
        std::string_view raw_key = pair.substr(0, eq);
        std::string_view raw_value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
        auto key = percent_decode(raw_key, true);
        auto value = percent_decode(raw_value, true);
        if (!key || !value) {
            throw error(errors::http_bad_param,
                        fmt::format("query string: bad percent-encoding in '{}'", pair.substr(0, 64)));
        }
        values_[*key] = std::move(*value);
    }
}

std::optional<std::string> query_params::get(std::string_view key) const
{
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string query_params::required(std::string_view key) const
{
    auto v = get(key);
    if (!v || v->empty()) throw error(errors::http_missing_param, fmt::format("query parameter '{}' is required", key));
    return *v;
}

std::string query_params::canonical(std::initializer_list<std::string_view> ignored) const
{
    std::string out;
    for (const auto& [key, value] : values_) {
        if (std::find(ignored.begin(), ignored.end(), key) != ignored.end()) continue;
        // Lengths first: no key or value can fake a boundary.
        out += std::to_string(key.size()) + ':' + key + std::to_string(value.size()) + ':' + value;
    }
    return out;
}

void query_params::only(std::initializer_list<std::string_view> known) const
{
    only(std::span<const std::string_view>(known.begin(), known.size()));
}

void query_params::only(std::span<const std::string_view> known) const
{
    for (const auto& [key, value] : values_) {
        if (std::find(known.begin(), known.end(), key) != known.end()) continue;
        constexpr std::size_t max_shown = 64;
        const std::string shown = key.size() > max_shown ? key.substr(0, max_shown) + "..." : key;
        throw error(errors::http_bad_param,
                    known.size() == 0
                        ? fmt::format("unknown query parameter '{}' (this request takes none)", shown)
                        : fmt::format("unknown query parameter '{}' (known: {})", shown, fmt::join(known, ", ")));
    }
}

} // namespace perfgate::server::detail
