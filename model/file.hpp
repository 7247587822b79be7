// The one reader of whole files: a capture, a policy, a config, an event
// payload. Errors name the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace perfgate::model {

// The file's bytes. Errors: error_id ("input.unreadable" unless the caller's
// area has its own) with "PATH: cannot read: WHY" (missing, permission, a
// directory, a read error).
std::string read_text_file(const std::filesystem::path& path, const std::string& error_id = "input.unreadable");

// The file's bytes, or nullopt when it is missing or cannot be read (sysfs
// files can exist and still fail to read, e.g. EIO or EPERM).
std::optional<std::string> read_file_if_readable(const std::filesystem::path& path);

} // namespace perfgate::model
