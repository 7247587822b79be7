#include "capture/names.hpp"

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::capture {

namespace {
constexpr std::string_view punctuation = "_.-/:+=@,<>[]()#%^~{}";
} // namespace

bool is_name_byte(char ch)
{
    const unsigned char c = static_cast<unsigned char>(ch);
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           punctuation.find(ch) != std::string_view::npos;
}

std::string to_valid_name(std::string_view raw)
{
    std::string out(raw.substr(0, max_name_bytes));
    for (auto& c : out)
        if (!is_name_byte(c)) c = '_';
    return out;
}

void validate_name(std::string_view field_name, std::string_view value)
{
    if (value.empty()) throw error(errors::ingest_bad_field, fmt::format("field '{}': must not be empty", field_name));
    if (value.size() > max_name_bytes) {
        throw error(errors::ingest_bad_field, fmt::format("field '{}': {} bytes, longer than the limit of {}",
                                                          field_name, value.size(), max_name_bytes));
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(value[i]);
        if (!is_name_byte(value[i])) {
            const std::string shown = c >= 0x21 && c < 0x7f ? fmt::format("'{}'", static_cast<char>(c))
                                                            : fmt::format("byte 0x{:02x}", c);
            throw error(errors::ingest_bad_field,
                        fmt::format("field '{}': {} at offset {} is not allowed (names use letters, digits and {})",
                                    field_name, shown, i, punctuation));
        }
    }
}

void validate_text(std::string_view field_name, std::string_view value)
{
    if (value.size() > max_name_bytes) {
        throw error(errors::ingest_bad_field, fmt::format("field '{}': {} bytes, longer than the limit of {}",
                                                          field_name, value.size(), max_name_bytes));
    }
    for (unsigned char c : value) {
        if (c < 0x20 || c == 0x7f) {
            throw error(errors::ingest_bad_field, fmt::format("field '{}': contains a control character", field_name));
        }
    }
}

void validate_role(std::string_view role)
{
    if (role != "baseline" && role != "candidate") {
        throw error(errors::ingest_bad_field,
                    fmt::format("field 'role': expected 'baseline' or 'candidate', got '{}'", role.substr(0, 64)));
    }
}

void validate_backend(std::string_view backend)
{
    if (backend != "perf" && backend != "native" && backend != "callgrind" && backend != "rusage" &&
        backend != "memcheck") {
        throw error(errors::ingest_bad_field,
                    fmt::format("field 'backend': expected perf, native, callgrind, rusage or memcheck, got '{}'",
                                backend.substr(0, 64)));
    }
}

} // namespace perfgate::capture
