// Accepts TCP connections and hands each to a new session on its own strand
// (beast example/http/server/async). Binding happens in the constructor, so
// the bound port (for --listen HOST:0) is known before run().
//
// Connection cap: at most max_connections sessions live at once. At the cap
// a new connection makes room by evicting the session that has waited
// longest for a request header (session_registry::evict_idle); when every
// session is busy with a request, the new connection is answered 503 and
// closed at once. So idle or slow-header connections cannot lock out
// /healthz or a CI upload.
//
// Accept errors: out of descriptors (EMFILE, ENFILE) or memory evicts an
// idle session to free a descriptor and retries after a backoff that doubles
// from accept_backoff_min to accept_backoff_max while nothing can be freed;
// the log gets at most one line a second about it, with a count of the
// lines suppressed.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>

#include "server/log.hpp"
#include "server/session.hpp"

namespace perfgate::server {

// Retry delays after an accept error (as Go's net/http server does: 5 ms
// doubling to 1 s; we start at 10 ms, a few accepts' worth of kernel time).
inline constexpr std::chrono::milliseconds accept_backoff_min{10};
inline constexpr std::chrono::milliseconds accept_backoff_max{1000};
// Connections admitted over the cap while the evicted ones are still
// closing (eviction is posted to the victim's strand). Bounds the
// descriptors in use to max_connections + eviction_slack.
inline constexpr std::size_t eviction_slack = 16;

class listener : public std::enable_shared_from_this<listener> {
public:
    // Opens, binds and listens. Errors: perfgate::error "server.listen" naming
    // the address (in use, permission denied, bad address).
    listener(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& endpoint, const session_limits& limits,
             std::size_t max_connections, context& ctx, session_registry& registry);

    [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;
    void run();
    // Stops accepting; thread-safe (posted to the acceptor's strand).
    void stop();

private:
    void do_accept();
    void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);
    void on_accept_error(const boost::beast::error_code& ec);
    void accept_after(std::chrono::milliseconds delay);
    // Over the cap with no idle session: a best-effort 503 and close.
    void refuse(boost::asio::ip::tcp::socket& socket);

    boost::asio::io_context& ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::steady_timer retry_timer_; // on the acceptor's strand
    const session_limits& limits_;
    std::size_t max_connections_;
    context& ctx_;
    session_registry& registry_;
    std::chrono::milliseconds backoff_ = accept_backoff_min;
    std::string busy_response_;   // the serialised 503
    rate_limited_log accept_log_; // accept errors
    rate_limited_log cap_log_;    // connections refused at the cap
};

} // namespace perfgate::server
