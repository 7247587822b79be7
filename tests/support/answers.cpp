#include "support/answers.hpp"

#include "support/database.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <nlohmann/json.hpp>

namespace perfgate::test {

namespace {

// Fails the test program: no doctest macro here, since suites call send()
// from several threads and doctest's assertions are not thread-safe.
[[noreturn]] void fail(const std::string& message)
{
    std::fprintf(stderr, "record_answer: %s\n", message.c_str());
    std::abort();
}

} // namespace

void record_answer(std::string_view method, std::string_view target, unsigned status, std::string_view content_type,
                   std::string_view body)
{
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    const auto dir = std::filesystem::path(PERFGATE_BINARY_DIR) / "tests" / "api-answers" /
                     (on_postgres() ? "postgresql" : "sqlite");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail("cannot create " + dir.string() + ": " + ec.message());
    const auto file = dir / (std::to_string(::getpid()) + ".jsonl");
    const std::string line = nlohmann::json{{"method", method},
                                            {"target", target},
                                            {"status", status},
                                            {"content_type", content_type},
                                            {"body", body}}
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                             "\n";
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) fail("cannot open " + file.string());
    const auto written = ::write(fd, line.data(), line.size());
    ::close(fd);
    if (written != static_cast<ssize_t>(line.size())) fail("cannot write " + file.string());
}

} // namespace perfgate::test
