// The one check of text the service stores (issue 31, finding 7): valid
// UTF-8, no NUL, no control characters (C0, DEL, C1) except tab and newline
// where a field is multi-line. Both engines then store the same texts:
// SQLite would keep anything, PostgreSQL refuses NUL and invalid UTF-8 with
// an opaque constraint error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "model/error.hpp"

namespace perfgate::service {

enum class text_kind {
    line,      // one line: no control character at all
    multiline, // tabs and newlines allowed (alert notes)
};

// Throws `id` naming `field` and the byte offset of the first fault.
void check_stored_text(error_id id, std::string_view field, std::string_view value, text_kind kind = text_kind::line);

// An http(s) URL a user gave (the repository URL, a webhook), before the
// caller's own rules: it starts with https:// or http:// in any case (RFC
// 3986 §3.1: schemes are case-insensitive), and every byte is printable
// ASCII other than quotes, <, >, ` and \ (it goes into href attributes,
// request lines and terminal output). Returns the URL with its scheme in
// lower case (the form stored, compared and connected to).
// "ingest.bad_field" naming `label`, quoting at most 80 bytes of the URL and
// the offset of the fault.
[[nodiscard]] std::string checked_url(std::string_view label, std::string_view url);
// The URL as messages quote it: in single quotes, cut at 80 bytes.
std::string shown_url(std::string_view url);

// The longest prefix of value of at most max_bytes that does not end inside a
// UTF-8 sequence (value itself when it fits).
std::string_view utf8_prefix(std::string_view value, std::size_t max_bytes);

} // namespace perfgate::service
