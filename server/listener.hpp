// Accepts TCP connections and hands each to a new session on its own strand
// (beast example/http/server/async). Binding happens in the constructor, so
// the bound port (for --listen HOST:0) is known before run().
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>

#include "server/session.hpp"

namespace perfgate::server {

class listener : public std::enable_shared_from_this<listener> {
public:
    // Opens, binds and listens. Errors: perfgate::error "server.listen" naming
    // the address (in use, permission denied, bad address).
    listener(boost::asio::io_context& ioc, const boost::asio::ip::tcp::endpoint& endpoint,
             const session_limits& limits, context& ctx, session_registry& registry);

    [[nodiscard]] boost::asio::ip::tcp::endpoint local_endpoint() const;
    void run();
    // Stops accepting; thread-safe (posted to the acceptor's strand).
    void stop();

private:
    void do_accept();
    void on_accept(boost::beast::error_code ec, boost::asio::ip::tcp::socket socket);

    boost::asio::io_context& ioc_;
    boost::asio::ip::tcp::acceptor acceptor_;
    const session_limits& limits_;
    context& ctx_;
    session_registry& registry_;
};

} // namespace perfgate::server
