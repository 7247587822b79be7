// One HTTP/1.1 connection: transport only (beast example/http/server/async).
//
// Each request gets a fresh request_parser with a header limit, and a
// deadline: idle_timeout for the wait and the header (a silent or
// byte-dribbling client is dropped), read_timeout for the body,
// write_timeout for the response. The header is read first and judged
// before any of the body is read or "100 Continue" is sent:
//   - framing (RFC 9112): HTTP/1.1 without exactly one Host, a
//     Transfer-Encoding other than a single final "chunked", or both
//     Content-Length and Transfer-Encoding -> 400/501 and close, so a body
//     can never be read as the next request;
//   - route, method and token (auth_gate.hpp) -> 401/403/404/405 and close;
//   - Content-Length over body_limit (GET routes: any body) -> 413 and close.
// HEAD is answered as GET without the body (same headers, Content-Length of
// the GET body).
// Keep-alive until the client closes, a deadline passes, the server shuts
// down, or the listener evicts the connection while it waits for a request
// (session_registry::evict_idle). The meaning of a request is the router's
// (router.hpp); the session only measures, logs and transports it. A fresh
// compare that the service stores on its committer thread is answered from
// that thread, through this session's strand, once stored; until then the
// session is busy with the request (not evictable; a shutdown waits for it).
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
#include "service/service.hpp"

namespace perfgate::server {

struct session_limits {
    std::uint64_t body_limit = 8u << 20;            // --max-body; a 30x10 perf capture is ~20 KB
    std::uint32_t header_limit = 64u << 10;         // --max-header; room for a 10 KB query string to reach
                                                    // the router's field check; beast's default is 8 KB
    std::chrono::milliseconds idle_timeout{30000};  // keep-alive wait + request header (--idle-timeout-ms)
    std::chrono::milliseconds read_timeout{30000};  // request body (--read-timeout-ms)
    std::chrono::milliseconds write_timeout{30000}; // response (--write-timeout-ms)
    bool access_log = true;                         // one JSON line per request on stderr
};

// How long a refused request's remaining body is read and discarded before
// the connection closes (see session::do_drain).
inline constexpr std::chrono::milliseconds drain_timeout{2000};

class session;

// The live sessions, so that shutdown can close the idle ones and let the
// busy ones finish their request, and the listener can make room at its
// connection cap. Thread-safe.
class session_registry {
public:
    void add(const std::shared_ptr<session>& s);
    void remove(const session* s) noexcept;
    // Marks the server as stopping and asks every live session to close once
    // its in-flight request (if any) is answered.
    void shutdown_all();
    // Asks the session that has waited longest for a request header (an idle
    // keep-alive connection, or one whose header is still arriving) to close,
    // freeing its descriptor. False when every session is busy with a request
    // (body, handler or response). O(live sessions).
    bool evict_idle();
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
    friend class session_registry;
    // form_body: reading a dashboard form's body, evictable like idle.
    enum class phase { idle, reading, form_body, handling, writing, closed };

    // Called by session_registry::evict_idle once it has claimed this session
    // (waiting_since_ swapped to 0): closes it on its strand if it is still
    // waiting for a request header.
    void evict();

    void do_read();
    void on_read_header(boost::beast::error_code ec, std::size_t bytes);
    void read_body();
    void on_continue_sent(boost::beast::error_code ec, std::size_t bytes);
    void on_read(boost::beast::error_code ec, std::size_t bytes);
    void handle();
    // Sends the answer to req_ (routed at start) and lets req_ go.
    void answer(response&& res, std::chrono::steady_clock::time_point start);
    // Answers a request the transport refused (malformed, too large, bad
    // framing) and closes. status overrides status_for(id) (501).
    void reject(error_id id, std::string_view message, unsigned status = 0);
    // Logs, counts, strips a HEAD body and sends. close: the connection ends
    // after this response (the request's body was not read).
    void respond(response&& res, std::string_view method, std::string_view target, std::string_view label,
                 double seconds, bool close);
    void send(response&& res);
    void on_write(bool keep_alive, boost::beast::error_code ec, std::size_t bytes);
    void do_close();
    void do_drain();
    void on_drain(boost::beast::error_code ec, std::size_t bytes);
    void log(std::string_view method, std::string_view target, unsigned status, std::size_t bytes,
             double seconds) const noexcept;
    [[nodiscard]] std::string method_name() const;
    [[nodiscard]] std::string target_name() const;

    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    request req_;  // the request being handled, until it is answered
    response res_; // kept alive until its async_write completes
    const session_limits& limits_;
    context& ctx_;
    session_registry& registry_;
    std::string remote_;
    phase phase_ = phase::idle;
    bool head_ = false; // the current request is a HEAD, routed as GET
    // The header stage authorized the current request's token (route() then
    // does not look it up again).
    std::optional<service::token_grant> token_checked_;
    std::uint64_t body_limit_ = 0; // the current request's (0 for GET routes)
    bool drain_ = false;
    std::vector<char> drain_buffer_;
    // steady_clock ticks since this session began waiting for a request
    // header; 0 while it works on a request (then it is not evictable), or
    // once evict_idle has claimed it. Read by the listener's thread.
    std::atomic<std::int64_t> waiting_since_{0};
};

} // namespace perfgate::server
