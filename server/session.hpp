// One HTTP/1.1 connection: transport only (beast example/http/server/async).
//
// Each request gets a fresh request_parser with a body limit and a header
// limit, and a deadline: idle_timeout for the wait and the header (a silent
// or byte-dribbling client is dropped), read_timeout for the body,
// write_timeout for the response. Keep-alive until the client closes, a
// deadline passes, or the server shuts down. The meaning of a request is the
// router's (router.hpp); the session only measures, logs and transports it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/router.hpp"

namespace perfgate::server {

struct session_limits {
    std::uint64_t body_limit = 8u << 20;     // --max-body; a 30x10 perf capture is ~20 KB
    std::uint32_t header_limit = 64u << 10;  // room for a 10 KB query string to reach the router's
                                             // field check; beast's default is 8 KB
    std::chrono::milliseconds idle_timeout{30000};   // keep-alive wait + request header
    std::chrono::milliseconds read_timeout{30000};   // request body
    std::chrono::milliseconds write_timeout{30000};  // response
    bool access_log = true;                          // one JSON line per request on stderr
};

// How long a refused request's remaining body is read and discarded before
// the connection closes (see session::do_drain).
inline constexpr std::chrono::milliseconds drain_timeout{2000};

class session;

// The live sessions, so that shutdown can close the idle ones and let the
// busy ones finish their request. Thread-safe.
class session_registry {
public:
    void add(const std::shared_ptr<session>& s);
    void remove(const session* s) noexcept;
    // Marks the server as stopping and asks every live session to close once
    // its in-flight request (if any) is answered.
    void shutdown_all();
    [[nodiscard]] bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
    [[nodiscard]] std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::unordered_map<const session*, std::weak_ptr<session>> live_;
    std::atomic<bool> stopping_{false};
};

class session : public std::enable_shared_from_this<session> {
public:
    session(boost::asio::ip::tcp::socket&& socket, const session_limits& limits, context& ctx,
            session_registry& registry);
    ~session();
    session(const session&) = delete;
    session& operator=(const session&) = delete;

    void run();
    // Runs on the session's strand: closes now if idle between requests,
    // otherwise after the current response.
    void on_shutdown();

private:
    enum class phase { idle, reading, handling, writing, closed };

    void do_read();
    void on_read_header(boost::beast::error_code ec, std::size_t bytes);
    void on_continue_sent(boost::beast::error_code ec, std::size_t bytes);
    void on_read(boost::beast::error_code ec, std::size_t bytes);
    void handle();
    void reject(std::string_view id, std::string_view message);
    void send(response&& res);
    void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
    void do_close();
    void do_drain();
    void on_drain(boost::beast::error_code ec, std::size_t bytes);
    void log(std::string_view method, std::string_view target, unsigned status,
             std::size_t bytes, double seconds) const;

    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    response res_;   // kept alive until its async_write completes
    const session_limits& limits_;
    context& ctx_;
    session_registry& registry_;
    std::string remote_;
    phase phase_ = phase::idle;
    bool drain_ = false;
    std::vector<char> drain_buffer_;
};

} // namespace perfgate::server
