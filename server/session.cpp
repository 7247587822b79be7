#include "server/session.hpp"

#include <unistd.h>

#include <ctime>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/metrics.hpp"

namespace perfgate::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using clock_type = std::chrono::steady_clock;

// ---------------------------------------------------------------------------

void session_registry::add(const std::shared_ptr<session>& s)
{
    std::lock_guard lock(mutex_);
    live_.emplace(s.get(), s);
}

void session_registry::remove(const session* s) noexcept
{
    std::lock_guard lock(mutex_);
    live_.erase(s);
}

void session_registry::shutdown_all()
{
    stopping_.store(true, std::memory_order_release);
    std::vector<std::shared_ptr<session>> sessions;
    {
        std::lock_guard lock(mutex_);
        for (auto& [key, weak] : live_) {
            if (auto s = weak.lock()) sessions.push_back(std::move(s));
        }
    }
    for (auto& s : sessions) s->on_shutdown();
}

std::size_t session_registry::size() const
{
    std::lock_guard lock(mutex_);
    return live_.size();
}

// ---------------------------------------------------------------------------

session::session(tcp::socket&& socket, const session_limits& limits, context& ctx, session_registry& registry)
    : stream_(std::move(socket)), limits_(limits), ctx_(ctx), registry_(registry)
{
    beast::error_code ec;
    auto ep = stream_.socket().remote_endpoint(ec);
    remote_ = ec ? std::string("-") : fmt::format("{}:{}", ep.address().to_string(), ep.port());
    ctx_.stats.connection_opened();
}

session::~session()
{
    registry_.remove(this);
    ctx_.stats.connection_closed();
}

void session::run()
{
    registry_.add(shared_from_this());
    // Start on the session's strand (the socket was accepted onto one), as
    // beast's async server example does.
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&session::do_read, shared_from_this()));
}

void session::on_shutdown()
{
    net::post(stream_.get_executor(), [self = shared_from_this()] {
        // Idle between requests (nothing of the next one received): close now.
        // Otherwise on_write sees registry_.stopping() and closes after answering.
        if (self->phase_ == phase::idle && !(self->parser_ && self->parser_->got_some())) {
            beast::error_code ec;
            self->stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
            self->stream_.cancel();
        }
    });
}

void session::do_read()
{
    if (registry_.stopping()) return do_close();
    // A fresh parser per request: limits apply to each request, not the connection.
    parser_.emplace();
    parser_->body_limit(limits_.body_limit);
    parser_->header_limit(limits_.header_limit);
    phase_ = phase::idle;
    stream_.expires_after(limits_.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&session::on_read_header, shared_from_this()));
}

void session::on_read_header(beast::error_code ec, std::size_t)
{
    if (ec == http::error::body_limit) {
        return reject("http.body_too_large",
                      fmt::format("request body: Content-Length over the limit of {} bytes (--max-body)",
                                  limits_.body_limit));
    }
    if (ec == http::error::header_limit) {
        return reject("http.header_too_large",
                      fmt::format("request header over the limit of {} bytes", limits_.header_limit));
    }
    // end_of_stream: the client closed; timeout: idle or dribbling; aborted: shutdown.
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted) {
        return do_close();
    }
    if (ec) return reject("http.bad_request", fmt::format("malformed request: {}", ec.message()));

    phase_ = phase::reading;
    stream_.expires_after(limits_.read_timeout);
    const auto& req = parser_->get();
    auto expect = req[http::field::expect];
    if (beast::iequals(expect, "100-continue") && !parser_->is_done()) {
        // curl sends "Expect: 100-continue" for large bodies and waits 1 s
        // for this interim response before sending anyway.
        static constexpr std::string_view interim = "HTTP/1.1 100 Continue\r\n\r\n";
        return net::async_write(stream_, net::buffer(interim.data(), interim.size()),
                                beast::bind_front_handler(&session::on_continue_sent, shared_from_this()));
    }
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&session::on_read, shared_from_this()));
}

void session::on_continue_sent(beast::error_code ec, std::size_t)
{
    if (ec) return do_close();
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&session::on_read, shared_from_this()));
}

void session::on_read(beast::error_code ec, std::size_t)
{
    if (ec == http::error::body_limit) {
        return reject("http.body_too_large",
                      fmt::format("request body over the limit of {} bytes (--max-body)", limits_.body_limit));
    }
    // A deadline that passes closes the socket (beast::tcp_stream), so a
    // slow body ends the connection without an answer.
    if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset) {
        return do_close();
    }
    if (ec) return reject("http.bad_request", fmt::format("malformed request: {}", ec.message()));
    handle();
}

void session::handle()
{
    phase_ = phase::handling;
    const request req = parser_->release();
    const auto start = clock_type::now();
    response res = route(req, ctx_);
    const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    ctx_.stats.observe(route_label(req), res.result_int(), seconds);
    log(std::string_view(req.method_string().data(), req.method_string().size()),
        std::string_view(req.target().data(), req.target().size()), res.result_int(), res.body().size(), seconds);
    send(std::move(res));
}

// Answers a request the transport refused (too large, malformed, too slow)
// and closes: the rest of the stream cannot be trusted to frame a request.
void session::reject(std::string_view id, std::string_view message)
{
    phase_ = phase::handling;
    response res = error_response(id, message, 11, false);
    std::string method = "-";
    std::string target = "-";
    if (parser_ && parser_->is_header_done()) {
        method = std::string(parser_->get().method_string());
        target = std::string(parser_->get().target());
    }
    ctx_.stats.observe("unmatched", res.result_int(), 0.0);
    drain_ = true;
    log(method, target, res.result_int(), res.body().size(), 0.0);
    send(std::move(res));
}

void session::send(response&& res)
{
    if (registry_.stopping()) res.keep_alive(false);
    res_ = std::move(res);
    phase_ = phase::writing;
    stream_.expires_after(limits_.write_timeout);
    const bool keep_alive = res_.keep_alive();
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&session::on_write, shared_from_this(), keep_alive));
}

void session::on_write(bool keep_alive, beast::error_code ec, std::size_t)
{
    res_ = {};
    if (!ec && drain_) return do_drain();
    if (ec || !keep_alive || registry_.stopping()) return do_close();
    do_read();
}

// After refusing a request whose body is still arriving: half-close and read
// (and discard) what the client is still sending, for a bounded time. Closing
// with unread data would make the kernel send RST, and a client still busy
// writing its body would see "connection reset" instead of our 413.
void session::do_drain()
{
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    phase_ = phase::closed;
    stream_.expires_after(drain_timeout);
    drain_buffer_.resize(64 * 1024);
    stream_.async_read_some(net::buffer(drain_buffer_),
                            beast::bind_front_handler(&session::on_drain, shared_from_this()));
}

void session::on_drain(beast::error_code ec, std::size_t)
{
    if (ec) return;   // EOF, timeout or reset: the session ends, the socket closes
    stream_.async_read_some(net::buffer(drain_buffer_),
                            beast::bind_front_handler(&session::on_drain, shared_from_this()));
}

void session::do_close()
{
    phase_ = phase::closed;
    // Send a TCP FIN; the socket closes when the last handler releases the session.
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
}

void session::log(std::string_view method, std::string_view target, unsigned status,
                  std::size_t bytes, double seconds) const
{
    if (!limits_.access_log) return;
    // Millisecond UTC timestamps: "2026-11-22T02:11:05.123Z".
    const auto now = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
    const auto millis = now.time_since_epoch().count() % 1000;
    // Targets are user input: bounded, and JSON-escaped by nlohmann.
    const nlohmann::json line = {
        {"ts", fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", fmt::gmtime(std::chrono::system_clock::to_time_t(now)), millis)},
        {"remote", remote_},
        {"method", method},
        {"target", target.substr(0, 256)},
        {"status", status},
        {"bytes", bytes},
        {"ms", static_cast<double>(static_cast<long long>(seconds * 1e6)) / 1e3},
    };
    std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
    // One write(2) per line so lines from worker threads never interleave.
    [[maybe_unused]] auto written = ::write(STDERR_FILENO, text.data(), text.size());
}

} // namespace perfgate::server
