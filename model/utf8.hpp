// Text that is safe to store and print (issue 31, findings 7 and 9): valid
// UTF-8 (RFC 3629: no overlongs, surrogates or code points past U+10FFFF)
// without control characters: C0, DEL and C1 (U+0080..U+009F, where 8-bit
// terminals read CSI and OSC), nor the bidirectional overrides and isolates
// (U+202A..U+202E, U+2066..U+2069). Tab and newline only where a text is
// multi-line.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace perfgate::model {

struct text_fault {
    std::size_t offset = 0;  // byte offset of the fault
    char32_t code_point = 0; // the control character (when !invalid_utf8)
    bool invalid_utf8 = false;
    unsigned char byte = 0; // the byte at offset
};

// The first fault of text, or nullopt when it is clean.
std::optional<text_fault> find_text_fault(std::string_view text, bool multiline = false);

// "byte 0xff at offset 3 is not valid UTF-8" / "control character U+001B at
// offset 2 is not allowed".
std::string describe(const text_fault& f);

// text for a terminal or a text file: every fault find_text_fault would
// report, and the bidirectional overrides and isolates (U+202A..U+202E,
// U+2066..U+2069, which reorder what follows on screen), written as escapes
// that show what was there: "\x1b", "\u202e". Tab and newline are kept
// when multiline.
std::string escape_for_terminal(std::string_view text, bool multiline = false);

// The longest prefix of text of at most max_bytes that does not end inside a
// UTF-8 sequence (text itself when it fits).
std::string_view utf8_prefix(std::string_view text, std::size_t max_bytes);

} // namespace perfgate::model
