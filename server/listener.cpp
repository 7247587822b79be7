#include "server/listener.hpp"

#include <algorithm>
#include <cerrno>
#include <sstream>

#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>

#include "model/error.hpp"
#include "server/metrics.hpp"

namespace perfgate::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// Errors that say the process or system is out of something a later accept
// may find again; retrying at once would spin (the pending connection keeps
// the acceptor readable).
bool out_of_resources(const beast::error_code& ec)
{
    if (ec.category() != boost::system::system_category()) return false;
    const int e = ec.value();
    return e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
}

// One connection failed before we saw it (the client reset it while it sat
// in the backlog): nothing is wrong with the acceptor, accept the next.
bool connection_specific(const beast::error_code& ec)
{
    return ec == net::error::connection_aborted || ec == net::error::connection_reset ||
           (ec.category() == boost::system::system_category() && ec.value() == EPROTO);
}

} // namespace

listener::listener(net::io_context& ioc, const tcp::endpoint& endpoint, const session_limits& limits,
                   std::size_t max_connections, context& ctx, session_registry& registry)
    : ioc_(ioc), acceptor_(net::make_strand(ioc)), retry_timer_(acceptor_.get_executor()), limits_(limits),
      max_connections_(std::max<std::size_t>(1, max_connections)), ctx_(ctx), registry_(registry)
{
    // Startup, not async code: failing here is fatal, so an exception that
    // names the address is the clearest report.
    auto fail = [&](beast::error_code ec, const char* what) {
        throw error(errors::server_listen,
                    fmt::format("cannot listen on {}:{}: {} failed: {}", endpoint.address().to_string(),
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

    response busy = error_response(errors::http_over_capacity,
                                   fmt::format("the server is at its limit of {} connections, all busy; retry later "
                                               "(--max-connections)",
                                               max_connections_),
                                   11, false);
    busy.result(http::status::service_unavailable);
    busy.set(http::field::retry_after, "1");
    std::ostringstream out;
    out << busy;
    busy_response_ = out.str();
    ctx_.stats.set_max_connections(max_connections_);
}

tcp::endpoint listener::local_endpoint() const
{
    beast::error_code ec;
    return acceptor_.local_endpoint(ec);
}

void listener::run() { do_accept(); }

void listener::stop()
{
    net::post(acceptor_.get_executor(), [self = shared_from_this()] {
        beast::error_code ec;
        self->acceptor_.close(ec);
        self->retry_timer_.cancel();
    });
}

void listener::do_accept()
{
    // Each connection gets its own strand: its handlers never run concurrently.
    acceptor_.async_accept(net::make_strand(ioc_), beast::bind_front_handler(&listener::on_accept, shared_from_this()));
}

void listener::on_accept(beast::error_code ec, tcp::socket socket)
{
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return; // stopped
    if (ec) return on_accept_error(ec);
    backoff_ = accept_backoff_min;
    if (registry_.stopping()) return;

    const std::size_t live = registry_.size();
    if (live >= max_connections_) {
        // Make room by closing the connection that has waited longest for a
        // request; if every connection is busy with one, refuse this one.
        if (live < max_connections_ + eviction_slack && registry_.evict_idle()) {
            cap_log_.write(fmt::format("perfgate serve: at the limit of {} connections: closing idle ones to make "
                                       "room (--max-connections)",
                                       max_connections_));
        } else {
            refuse(socket);
            cap_log_.write(fmt::format("perfgate serve: at the limit of {} connections, all busy: answering 503 "
                                       "(--max-connections)",
                                       max_connections_));
            return do_accept();
        }
    }
    std::make_shared<session>(std::move(socket), limits_, ctx_, registry_)->run();
    do_accept();
}

void listener::on_accept_error(const beast::error_code& ec)
{
    ctx_.stats.accept_failed();
    accept_log_.write(fmt::format("perfgate serve: accept: {}", ec.message()));
    if (connection_specific(ec)) return do_accept();
    if (out_of_resources(ec) && registry_.evict_idle()) {
        // A descriptor is being freed: try again soon.
        return accept_after(accept_backoff_min);
    }
    // Nothing to free (or an error we do not know): wait longer each time.
    const auto delay = backoff_;
    backoff_ = std::min(backoff_ * 2, accept_backoff_max);
    accept_after(delay);
}

void listener::accept_after(std::chrono::milliseconds delay)
{
    retry_timer_.expires_after(delay);
    retry_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (ec || !self->acceptor_.is_open()) return;
        self->do_accept();
    });
}

void listener::refuse(tcp::socket& socket)
{
    ctx_.stats.connection_refused();
    // Never block the acceptor on a client: one non-blocking write of a
    // response that fits any socket buffer, then close.
    beast::error_code ec;
    socket.non_blocking(true, ec);
    socket.write_some(net::buffer(busy_response_), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    socket.close(ec);
}

} // namespace perfgate::server
