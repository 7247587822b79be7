#include "model/file.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::model {

std::string read_text_file(const std::filesystem::path& path, const std::string& error_id)
{
    auto fail = [&](std::string_view why) {
        throw error(error_id, fmt::format("{}: cannot read: {}", path.string(), why));
    };
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail("is a directory");
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(errno != 0 ? std::generic_category().message(errno) : "cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) fail("read error");
    return text.str();
}

std::optional<std::string> read_file_if_readable(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    return text.str();
}

} // namespace perfgate::model
