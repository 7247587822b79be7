#include "server/listener.hpp"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::server {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

listener::listener(net::io_context& ioc, const tcp::endpoint& endpoint, const session_limits& limits,
                   context& ctx, session_registry& registry)
    : ioc_(ioc), acceptor_(net::make_strand(ioc)), limits_(limits), ctx_(ctx), registry_(registry)
{
    // Startup, not async code: failing here is fatal, so an exception that
    // names the address is the clearest report.
    auto fail = [&](beast::error_code ec, const char* what) {
        throw error("server.listen", fmt::format("cannot listen on {}:{}: {} failed: {}", endpoint.address().to_string(),
                                                 endpoint.port(), what, ec.message()));
    };
    beast::error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) fail(ec, "open");
    acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (ec) fail(ec, "set_option");
    acceptor_.bind(endpoint, ec);
    if (ec) fail(ec, "bind");
    acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) fail(ec, "listen");
}

tcp::endpoint listener::local_endpoint() const
{
    beast::error_code ec;
    return acceptor_.local_endpoint(ec);
}

void listener::run()
{
    do_accept();
}

void listener::stop()
{
    net::post(acceptor_.get_executor(), [self = shared_from_this()] {
        beast::error_code ec;
        self->acceptor_.close(ec);
    });
}

void listener::do_accept()
{
    // Each connection gets its own strand: its handlers never run concurrently.
    acceptor_.async_accept(net::make_strand(ioc_), beast::bind_front_handler(&listener::on_accept, shared_from_this()));
}

void listener::on_accept(beast::error_code ec, tcp::socket socket)
{
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;   // stopped
    if (ec) {
        // Out of descriptors and the like: log, keep accepting.
        const std::string line = fmt::format("perfgate serve: accept: {}\n", ec.message());
        [[maybe_unused]] auto n = ::write(STDERR_FILENO, line.data(), line.size());
    } else if (registry_.stopping()) {
        return;
    } else {
        std::make_shared<session>(std::move(socket), limits_, ctx_, registry_)->run();
    }
    do_accept();
}

} // namespace perfgate::server
