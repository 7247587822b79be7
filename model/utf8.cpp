#include "model/utf8.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace perfgate::model {

namespace {

// Length of the UTF-8 sequence at s[i] and its code point, or 0 when it is
// not a well-formed one.
std::size_t sequence_at(std::string_view s, std::size_t i, char32_t& cp)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = byte(i);
    std::size_t len = 0;
    char32_t min = 0;
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    if ((b0 & 0xe0) == 0xc0) {
        len = 2, cp = b0 & 0x1f, min = 0x80;
    } else if ((b0 & 0xf0) == 0xe0) {
        len = 3, cp = b0 & 0x0f, min = 0x800;
    } else if ((b0 & 0xf8) == 0xf0) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

// The bidirectional embeddings, overrides and isolates (U+202A..U+202E,
// U+2066..U+2069): they reorder what follows on screen ("Trojan Source").
bool is_bidi_control(char32_t cp) { return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069); }

} // namespace

std::optional<text_fault> find_text_fault(std::string_view text, bool multiline)
{
    for (std::size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const std::size_t len = sequence_at(text, i, cp);
        const auto b = static_cast<unsigned char>(text[i]);
        if (len == 0) return text_fault{i, 0, true, b};
        const bool allowed_space = multiline && (cp == '\n' || cp == '\t');
        if ((cp < 0x20 && !allowed_space) || (cp >= 0x7f && cp <= 0x9f) || is_bidi_control(cp)) {
            return text_fault{i, cp, false, b};
        }
        i += len;
    }
    return std::nullopt;
}

std::string escape_for_terminal(std::string_view text, bool multiline)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        const std::size_t len = sequence_at(text, i, cp);
        if (len == 0) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
            ++i;
            continue;
        }
        const bool allowed_space = multiline && (cp == '\n' || cp == '\t');
        const bool control = (cp < 0x20 && !allowed_space) || (cp >= 0x7f && cp <= 0x9f);
        const bool bidi = is_bidi_control(cp);
        if (control && cp < 0x80) out += fmt::format("\\x{:02x}", static_cast<std::uint32_t>(cp));
        else if (control || bidi) out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
        else out.append(text.substr(i, len));
        i += len;
    }
    return out;
}

std::string describe(const text_fault& f)
{
    if (f.invalid_utf8) return fmt::format("byte 0x{:02x} at offset {} is not valid UTF-8", f.byte, f.offset);
    return fmt::format("control character U+{:04X} at offset {} is not allowed",
                       static_cast<std::uint32_t>(f.code_point), f.offset);
}

std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes)
{
    if (text.size() <= max_bytes) return text;
    std::size_t end = max_bytes;
    // Back up over continuation bytes to the start of the character cut.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
    return text.substr(0, end);
}

} // namespace perfgate::model
