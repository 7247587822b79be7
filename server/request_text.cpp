#include "server/request_text.hpp"

#include <algorithm>
#include <cctype>

#include <boost/beast/http/field.hpp>

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
        throw error("auth.missing_token", "missing 'Authorization: Bearer <token>' header "
                                          "(create a token with `perfgate token create`)");
    }
    constexpr std::string_view scheme = "bearer ";
    if (header.size() <= scheme.size() ||
        !std::equal(scheme.begin(), scheme.end(), header.begin(),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
        throw error("auth.bad_token", "Authorization header: expected 'Bearer <token>'");
    }
    std::string_view token = header.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    return token;
}

} // namespace perfgate::server::detail
