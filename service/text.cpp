#include "service/text.hpp"

#include <cctype>

#include <fmt/format.h>

#include "model/utf8.hpp"

namespace perfgate::service {

void check_stored_text(error_id id, std::string_view field, std::string_view value, text_kind kind)
{
    const bool multiline = kind == text_kind::multiline;
    if (const auto fault = model::find_text_fault(value, multiline)) {
        throw error(id, fmt::format("field '{}': {}{}", field, model::describe(*fault),
                                    multiline && !fault->invalid_utf8 ? " (newlines and tabs are)" : ""));
    }
}

std::string_view utf8_prefix(std::string_view value, std::size_t max_bytes)
{
    return model::utf8_prefix(value, max_bytes);
}

std::string shown_url(std::string_view url)
{
    constexpr std::size_t max_shown = 80;
    return url.size() > max_shown ? fmt::format("'{}...'", url.substr(0, max_shown)) : fmt::format("'{}'", url);
}

std::string checked_url(std::string_view label, std::string_view url)
{
    std::string out(url);
    const std::size_t colon = out.find("://");
    for (std::size_t i = 0; colon != std::string::npos && i < colon; ++i)
        out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
    if (!out.starts_with("https://") && !out.starts_with("http://")) {
        throw error(errors::ingest_bad_field,
                    fmt::format("{}: {} must start with https:// or http://", label, shown_url(url)));
    }
    constexpr std::string_view markup = "\"'<>`\\";
    for (std::size_t i = 0; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c <= 0x20 || c >= 0x7f) {
            throw error(errors::ingest_bad_field,
                        fmt::format("{}: byte 0x{:02x} at offset {} is not allowed in a URL (no whitespace, control "
                                    "or non-ASCII bytes: percent-encode them)",
                                    label, c, i));
        }
        if (markup.find(static_cast<char>(c)) != std::string_view::npos) {
            throw error(errors::ingest_bad_field,
                        fmt::format("{}: '{}' at offset {} is not allowed in a URL (no quotes, <, >, ` or \\)", label,
                                    static_cast<char>(c), i));
        }
    }
    return out;
}

} // namespace perfgate::service
