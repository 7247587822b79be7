// The one reader of whole files: a capture, a policy, a config, an event
// payload. Errors name the file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace perfgate::model {

// Largest input file read whole: a capture of 10,000 runs of 20 events is
// about 20 MB, policies and configs are kilobytes.
inline constexpr std::size_t max_input_bytes = 64u * 1024 * 1024;

// The file's bytes. Errors: error_id ("input.unreadable" unless the caller's
// area has its own) with "PATH: cannot read: WHY": missing, permission, a
// directory, a read error, or more than max_bytes (a huge file, /dev/zero,
// an endless pipe). A FIFO nobody writes to reads as empty instead of
// blocking forever.
std::string read_text_file(const std::filesystem::path& path, const std::string& error_id = "input.unreadable",
                           std::size_t max_bytes = max_input_bytes);

// The file's bytes, or nullopt when it is missing or cannot be read (sysfs
// files can exist and still fail to read, e.g. EIO or EPERM).
std::optional<std::string> read_file_if_readable(const std::filesystem::path& path);

} // namespace perfgate::model
