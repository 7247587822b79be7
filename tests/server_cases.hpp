// What the server suites share (test_server*.cpp): the includes, a run
// body of project "demo", uploads, raw requests, /proc readings, metrics.
// The real server and the HTTP client are support/server.hpp.
#pragma once

#include "server/server.hpp"

#include <doctest/doctest.h>

#include "support/database.hpp"
#include "support/numbers.hpp"
#include "support/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "model/testbed.hpp"
#include "runner/testbed.hpp"

namespace perfgate::test::server_cases {

using namespace perfgate::test;
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using nlohmann::json;
using namespace std::chrono_literals;

inline json run_body(const std::string& role, const std::string& benchmark = "default")
{
    return {{"benchmark", benchmark},
            {"role", role},
            {"git_sha", "0123abcd"},
            {"branch", "main"},
            {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
            {"perf_csv", perfgate::test::read_testdata("appended-10-runs.csv")}};
}

// A baseline and a candidate run of project "demo", uploaded: their ids.
inline std::pair<std::int64_t, std::int64_t> upload_pair(unsigned short port, const std::string& token)
{
    const auto base = send(port, http::verb::post, "/api/v1/projects/demo/runs", run_body("baseline").dump(),
                           "application/json", token);
    const auto cand = send(port, http::verb::post, "/api/v1/projects/demo/runs", run_body("candidate").dump(),
                           "application/json", token);
    REQUIRE(base.status == 201);
    REQUIRE(cand.status == 201);
    return {base.parsed().at("run_id").get<std::int64_t>(), cand.parsed().at("run_id").get<std::int64_t>()};
}

// The bytes of a compare request of project "demo", for a raw socket.
inline std::string raw_compare(const std::string& token, const std::string& body)
{
    return "POST /api/v1/projects/demo/compare HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

inline std::int64_t count_runs(unsigned short port, const std::string& token)
{
    auto r = send(port, http::verb::get, "/api/v1/projects/demo/benchmarks", {}, {}, token);
    REQUIRE(r.status == 200);
    const json doc = r.parsed();
    std::int64_t n = 0;
    for (const auto& b : doc.at("benchmarks")) n += b.at("runs").get<std::int64_t>();
    return n;
}

// The whole database, read with sqlite3 directly (RAII over the handle).
struct sqlite_db {
    std::unique_ptr<sqlite3, decltype(&sqlite3_close)> db{nullptr, &sqlite3_close};
    explicit sqlite_db(const std::filesystem::path& p)
    {
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open_v2(p.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
        db.reset(raw);
    }
    std::vector<std::string> column(const std::string& sql)
    {
        sqlite3_stmt* raw = nullptr;
        REQUIRE(sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &raw, nullptr) == SQLITE_OK);
        std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> st(raw, &sqlite3_finalize);
        std::vector<std::string> out;
        while (sqlite3_step(st.get()) == SQLITE_ROW) {
            auto text = sqlite3_column_text(st.get(), 0);
            out.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
        }
        return out;
    }
};

inline std::string read_text(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// User + system CPU time of a process, from /proc/PID/stat (fields 14, 15).
inline double cpu_seconds(pid_t pid)
{
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    std::istringstream in(stat.substr(stat.rfind(')') + 2)); // after "pid (comm) "
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && in >> field; ++i) {
        if (i == 14 || i == 15) ticks += std::stod(field);
    }
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// Resident set size in KiB, from /proc/PID/status.
inline long rss_kib(pid_t pid)
{
    std::istringstream in(read_text("/proc/" + std::to_string(pid) + "/status"));
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("VmRSS:")) return std::stol(line.substr(6));
    }
    return -1;
}

// The value of an unlabelled metric in Prometheus text, or -1.
inline double metric_value(const std::string& text, const std::string& name)
{
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with(name + " ")) return std::stod(line.substr(name.size() + 1));
    }
    return -1;
}

inline std::size_t count_of(const std::string& haystack, const std::string& needle)
{
    std::size_t n = 0;
    for (auto at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
    return n;
}

inline tcp::socket connect_to(net::io_context& ioc, unsigned short port)
{
    tcp::socket s(ioc);
    s.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    return s;
}

// raw_exchange, and how long the server took to answer and close.
inline std::pair<std::string, std::chrono::milliseconds> timed_exchange(unsigned short port, const std::string& bytes,
                                                                        std::chrono::milliseconds timeout = 5s)
{
    const auto start = std::chrono::steady_clock::now();
    std::string got = raw_exchange(port, bytes, timeout);
    return {got, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)};
}

// perf stat -x, output of five repetitions of task-clock around `level`
// (msec), appended blocks as `perf stat -o FILE --append` writes them, with
// ~1% noise from a fixed LCG: the same series on every machine.
inline std::string task_clock_capture(double level, std::uint64_t& state)
{
    std::string out;
    for (int rep = 0; rep < 5; ++rep) {
        const double v = level * (1 + 0.02 * (perfgate::test::lcg_uniform(state) - 0.5));
        out += "# started on Sun Nov 22 02:11:05 2026\n\n";
        out += fmt::format("{:.3f},msec,task-clock,{},100.00,0.999,CPUs utilized\n", v,
                           static_cast<long long>(v * 1e6));
    }
    return out;
}

// n baseline runs of main uploaded over HTTP, those from step_at on at
// level * (1 + step); returns their run ids.
// Upload i goes to ports[i % ports.size()] (replicas behind a balancer).
inline std::vector<std::int64_t> upload_series(const std::vector<unsigned short>& ports, const std::string& project,
                                               const std::string& token, std::size_t n, std::size_t step_at,
                                               double step)
{
    std::uint64_t state = 42;
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < n; ++i) {
        const double level = 100.0 * (i >= step_at ? 1 + step : 1.0);
        json body = {{"benchmark", "parse"},
                     {"role", "baseline"},
                     {"git_sha", fmt::format("{:040x}", i)},
                     {"branch", "main"},
                     {"testbed", {{"name", "ci-box"}, {"cores", 2}}},
                     {"perf_csv", task_clock_capture(level, state)}};
        auto r = send(ports[i % ports.size()], http::verb::post, "/api/v1/projects/" + project + "/runs", body.dump(),
                      "application/json", token);
        REQUIRE_MESSAGE(r.status == 201, r.body);
        ids.push_back(r.parsed().at("run_id").get<std::int64_t>());
    }
    return ids;
}

inline std::vector<std::int64_t> upload_series(unsigned short port, const std::string& project,
                                               const std::string& token, std::size_t n, std::size_t step_at,
                                               double step)
{
    return upload_series(std::vector<unsigned short>{port}, project, token, n, step_at, step);
}

// The one alert a 5% step opens, once the watch has found it.
inline json wait_for_alert(unsigned short port, const std::string& token)
{
    for (int i = 0; i < 600; ++i) {
        const auto list = send(port, http::verb::get, "/api/v1/projects/demo/alerts", {}, {}, token);
        REQUIRE(list.status == 200);
        const json alerts = list.parsed().at("alerts");
        if (!alerts.empty()) return alerts.front();
        std::this_thread::sleep_for(50ms);
    }
    FAIL("no alert within 30 s");
    return {};
}

// A /metrics value of the server on port, -1 when absent.
inline double metric_of(unsigned short port, const std::string& token, const std::string& name)
{
    const std::string text = send(port, http::verb::get, "/metrics", {}, {}, token).body;
    const auto at = text.find("\n" + name + " ");
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + name.size() + 2));
}

} // namespace perfgate::test::server_cases
