#include "server/pages/html.hpp"

#include <nlohmann/json.hpp>

namespace perfgate::server::html {

std::string escape(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string url_encode(std::string_view value)
{
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(value.size());
    for (const char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                                c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out += ch;
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::string url_query(std::initializer_list<std::pair<std::string_view, std::string_view>> params)
{
    std::string out;
    for (const auto& [key, value] : params) {
        if (value.empty()) continue;
        out += out.empty() ? '?' : '&';
        out += url_encode(key);
        out += '=';
        out += url_encode(value);
    }
    return out;
}

writer& writer::text(std::string_view s)
{
    out_ += escape(s);
    return *this;
}

writer& writer::json_data(const nlohmann::json& data)
{
    // Invalid UTF-8 in a name becomes U+FFFD rather than an exception.
    const std::string dumped = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    for (const char c : dumped) {
        switch (c) {
        case '<': out_ += "\\u003c"; break;
        case '>': out_ += "\\u003e"; break;
        case '&': out_ += "\\u0026"; break;
        default: out_ += c;
        }
    }
    return *this;
}

} // namespace perfgate::server::html
