#include "support/answers.hpp"

#include "support/database.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace perfgate::test {

void record_answer(std::string_view method, std::string_view target, unsigned status, std::string_view content_type,
                   std::string_view body)
{
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    const auto dir = std::filesystem::path(PERFGATE_BINARY_DIR) / "tests" / "api-answers" /
                     (on_postgres() ? "postgresql" : "sqlite");
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    REQUIRE_MESSAGE(!ec, "cannot create " << dir << ": " << ec.message());
    const auto file = dir / (std::to_string(::getpid()) + ".jsonl");
    const std::string line = nlohmann::json{{"method", method},
                                            {"target", target},
                                            {"status", status},
                                            {"content_type", content_type},
                                            {"body", body}}
                                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                             "\n";
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    REQUIRE_MESSAGE(fd >= 0, "cannot open " << file);
    const auto written = ::write(fd, line.data(), line.size());
    ::close(fd);
    REQUIRE_MESSAGE(written == static_cast<ssize_t>(line.size()), "cannot write " << file);
}

} // namespace perfgate::test
