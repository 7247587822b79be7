// The rules for user-supplied names and fields of a run, in one place: the
// gate service applies them to every run it stores (local mode and server
// alike), and the server and CLI use them to name a bad field early.
// Errors: perfgate::error "ingest.bad_field", naming the field.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace perfgate::capture {

// Names end up in URLs, markdown tables and file names: short and plain.
inline constexpr std::size_t max_name_bytes = 256;

// A name (project, benchmark, counter, branch, git sha, testbed):
// 1..max_name_bytes bytes of [A-Za-z0-9] and "_.-/:+=@,<>[]()#%^~{}". No
// spaces, quotes, semicolons, backslashes, control or non-ASCII bytes.
void validate_name(std::string_view field, std::string_view value);

// Whether validate_name allows the byte in a name.
bool is_name_byte(char c);

// A harness's free-form benchmark name ("sort 1000 ints", a hyperfine
// command) as a valid name, deterministically: every byte validate_name does
// not allow (space, quote, '|', ';', '$', '*', '&', '!', '?', '\\', control and
// non-ASCII bytes) becomes '_', one for one, and the result is cut to
// max_name_bytes. "" stays "" (the parsers reject it). Different inputs can
// map to one name: the harness parsers report such a collision as an error.
std::string to_valid_name(std::string_view raw);

// Free text (CPU model, kernel): at most max_name_bytes, no control characters.
void validate_text(std::string_view field, std::string_view value);

// "baseline" or "candidate".
void validate_role(std::string_view role);

// "perf", "native", "callgrind", "rusage" or "memcheck".
void validate_backend(std::string_view backend);

} // namespace perfgate::capture
