#include "model/file.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::model {

namespace {

// Closes a descriptor on every path out.
struct fd_guard {
    int fd = -1;
    ~fd_guard()
    {
        if (fd >= 0) ::close(fd);
    }
};

} // namespace

std::string read_text_file(const std::filesystem::path& path, const std::string& error_id, std::size_t max_bytes)
{
    auto fail = [&](std::string_view why) {
        throw error(error_id, fmt::format("{}: cannot read: {}", path.string(), why));
    };
    // O_NONBLOCK: opening a FIFO that no one writes to returns at once (and
    // reads as empty) instead of blocking forever; cleared below so that a
    // pipe with a writer (a process substitution, /dev/stdin) is read whole.
    fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
    if (f.fd < 0) fail(std::generic_category().message(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) fail(std::generic_category().message(errno));
    if (S_ISDIR(st.st_mode)) fail("is a directory");
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        fail(fmt::format("{} bytes, more than the limit of {} MiB", st.st_size, max_bytes >> 20));
    }
    const int flags = ::fcntl(f.fd, F_GETFL);
    if (flags >= 0) ::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);

    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(f.fd, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(std::generic_category().message(errno));
        }
        if (text.size() + static_cast<std::size_t>(n) > max_bytes) {
            // /dev/zero, an endless pipe, a file that grows while read.
            fail(fmt::format("more than the limit of {} MiB", max_bytes >> 20));
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
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
