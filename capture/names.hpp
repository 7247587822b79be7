// The rules for user-supplied names and fields of a run, in one place: the
// gate service applies them to every run it stores (local mode and server
// alike), and the server and CLI use them to name a bad field early.
// Errors: perfgate::error "ingest.bad_field", naming the field.
#pragma once

#include <cstddef>
#include <string_view>

namespace perfgate::capture {

// Names end up in URLs, markdown tables and file names: short and plain.
inline constexpr std::size_t max_name_bytes = 256;

// A name (project, benchmark, counter, branch, git sha, testbed):
// 1..max_name_bytes bytes of [A-Za-z0-9] and "_.-/:+=@,<>[]()#%^~{}". No
// spaces, quotes, semicolons, backslashes, control or non-ASCII bytes.
void validate_name(std::string_view field, std::string_view value);

// Free text (CPU model, kernel): at most max_name_bytes, no control characters.
void validate_text(std::string_view field, std::string_view value);

// "baseline" or "candidate".
void validate_role(std::string_view role);

// "perf", "native", "callgrind" or "rusage".
void validate_backend(std::string_view backend);

} // namespace perfgate::capture
