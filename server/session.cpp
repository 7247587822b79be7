#include "server/session.hpp"
#include "server/request_text.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "server/auth_gate.hpp"
#include "server/log.hpp"
#include "server/metrics.hpp"
#include "server/pages/pages.hpp"
#include "server/routes.hpp"

namespace perfgate::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using clock_type = std::chrono::steady_clock;
using detail::sv;

namespace {


std::int64_t now_ticks() noexcept
{
    // Never 0, which means "not waiting".
    return std::max<std::int64_t>(1, clock_type::now().time_since_epoch().count());
}

// A request whose framing cannot be trusted, answered before its body.
struct framing_error {
    error_id id;
    std::string message;
    unsigned status = 0; // 0: status_for(id)
};

// RFC 9112 §3.2 (Host) and §6.1/§6.3 (Transfer-Encoding vs Content-Length).
// beast parses "Transfer-Encoding: gzip" as a request without a body (and
// takes a Content-Length that follows it), so the body would be read as the
// next request: request smuggling. We understand exactly one transfer
// coding, chunked, once and last.
std::optional<framing_error> check_framing(const request& req)
{
    const auto hosts = req.count(http::field::host);
    if (req.version() >= 11 && hosts == 0) {
        return framing_error{errors::http_bad_request, "HTTP/1.1 request without a Host header (RFC 9112 section 3.2)"};
    }
    if (hosts > 1) return framing_error{errors::http_bad_request, "more than one Host header (RFC 9112 section 3.2)"};

    const auto te = req.count(http::field::transfer_encoding);
    if (te == 0) return std::nullopt;
    if (req.version() < 11) {
        return framing_error{errors::http_bad_request,
                             "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 section 6.1)"};
    }
    if (req.count(http::field::content_length) > 0) {
        return framing_error{errors::http_bad_request,
                             "both Content-Length and Transfer-Encoding (RFC 9112 section 6.3)"};
    }
    std::vector<std::string> codings;
    std::string all;
    // Every Transfer-Encoding line, in order (fields::equal_range would also
    // walk the fields between two of them).
    for (const auto& field : req) {
        if (field.name() != http::field::transfer_encoding) continue;
        const std::string_view value = sv(field.value());
        if (!all.empty()) all += ", ";
        all.append(value.substr(0, 64));
        std::size_t pos = 0;
        while (pos <= value.size()) {
            auto comma = value.find(',', pos);
            if (comma == std::string_view::npos) comma = value.size();
            std::string_view element = value.substr(pos, comma - pos);
            while (!element.empty() && (element.front() == ' ' || element.front() == '\t')) element.remove_prefix(1);
            while (!element.empty() && (element.back() == ' ' || element.back() == '\t')) element.remove_suffix(1);
            if (!element.empty()) {
                std::string lower(element.substr(0, 64));
                std::transform(lower.begin(), lower.end(), lower.begin(),
                               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
                codings.push_back(std::move(lower));
            }
            pos = comma + 1;
        }
    }
    if (codings.empty() || codings.back() != "chunked") {
        return framing_error{errors::http_bad_request,
                             fmt::format("Transfer-Encoding '{}': chunked must be the final transfer coding "
                                         "(RFC 9112 section 6.3)",
                                         all)};
    }
    for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
        if (codings[i] == "chunked") {
            return framing_error{errors::http_bad_request,
                                 fmt::format("Transfer-Encoding '{}': chunked applied twice (RFC 9112 section 7.1)",
                                             all)};
        }
        return framing_error{errors::http_not_implemented,
                             fmt::format("Transfer-Encoding '{}': transfer coding '{}' is not supported, only chunked",
                                         all, codings[i]),
                             501};
    }
    return std::nullopt;
}

} // namespace

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

bool session_registry::evict_idle()
{
    std::shared_ptr<session> victim;
    {
        std::lock_guard lock(mutex_);
        // The oldest waiter: an idle keep-alive client is cheapest to lose (it
        // reconnects), and a header that has been arriving for long is the
        // slow-header (slowloris) pattern.
        for (;;) {
            std::shared_ptr<session> oldest;
            std::int64_t since = 0;
            for (auto& [key, weak] : live_) {
                const std::int64_t t = key->waiting_since_.load(std::memory_order_acquire);
                if (t == 0 || (since != 0 && t >= since)) continue;
                if (auto s = weak.lock()) {
                    oldest = std::move(s);
                    since = t;
                }
            }
            if (!oldest) return false;
            // Claim it; if it started on a request meanwhile, look again.
            if (oldest->waiting_since_.compare_exchange_strong(since, 0, std::memory_order_acq_rel)) {
                victim = std::move(oldest);
                break;
            }
        }
    }
    victim->evict();
    return true;
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
    // Evictable from the start: a connection that never sends a byte is the
    // first to go when the listener needs room.
    waiting_since_.store(now_ticks(), std::memory_order_release);
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

void session::evict()
{
    net::post(stream_.get_executor(), [self = shared_from_this()] {
        // Its header (or its form's body) completed meanwhile: keep it.
        if (self->phase_ != phase::idle && self->phase_ != phase::form_body) return;
        self->ctx_.stats.connection_evicted();
        // Closing releases the descriptor now; the pending read completes
        // with operation_aborted and the session ends.
        beast::error_code ec;
        self->stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
        self->stream_.close();
    });
}

void session::do_read()
{
    if (registry_.stopping()) return do_close();
    // A fresh parser per request: limits apply to each request, not the connection.
    parser_.emplace();
    parser_->header_limit(limits_.header_limit);
    // The body limit is chosen once the header is judged (on_read_header).
    // Not boost::none: beast 1.74 compares Content-Length with the optional
    // limit at the end of the header, and any length is "greater" than none.
    parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    head_ = false;
    token_checked_.reset();
    phase_ = phase::idle;
    waiting_since_.store(now_ticks(), std::memory_order_release);
    stream_.expires_after(limits_.idle_timeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&session::on_read_header, shared_from_this()));
}

void session::on_read_header(beast::error_code ec, std::size_t)
{
    waiting_since_.store(0, std::memory_order_release);
    if (ec == http::error::header_limit) {
        return reject(errors::http_header_too_large,
                      fmt::format("request header over the limit of {} bytes (--max-header)", limits_.header_limit));
    }
    // end_of_stream: the client closed; timeout: idle or dribbling; aborted:
    // shutdown or eviction.
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset) {
        return do_close();
    }
    if (ec) return reject(errors::http_bad_request, fmt::format("malformed request: {}", ec.message()));

    phase_ = phase::reading;
    request& req = parser_->get();
    if (auto bad = check_framing(req)) return reject(bad->id, bad->message, bad->status);
    if (req.method() == http::verb::head) {
        // Answered as GET without the body (RFC 9110 section 9.3.2).
        head_ = true;
        req.method(http::verb::get);
    }
    if (parser_->is_done()) return handle(); // no body

    // A body follows. Nothing of it is read, and no "100 Continue" sent,
    // until the header has earned it: the route exists, the method is
    // right, the token is valid, the length is within the limit.
    const auto start = clock_type::now();
    if (auto refusal = refuse_before_body(req, ctx_, &token_checked_)) {
        const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
        return respond(std::move(*refusal), method_name(), target_name(), route_label(req), seconds, true);
    }
    // GET routes take no body (routes.hpp, body_rule::none): accepting one
    // would let a client without a token (/healthz, --public-read) make the
    // server hold --max-body bytes.
    // A dashboard form (POST /p/..., no token needed) gets the form limit,
    // a short deadline, and stays evictable while it arrives (pages.hpp).
    const bool form = req.method() == http::verb::post && route_label(req).starts_with("POST /p/");
    body_limit_ = !takes_body(req) ? 0 : form ? pages::max_form_bytes : limits_.body_limit;
    if (auto length = parser_->content_length(); length && *length > body_limit_) {
        return reject(errors::http_body_too_large,
                      body_limit_ == 0
                          ? fmt::format("{} requests take no body (Content-Length: {})", method_name(), *length)
                          : fmt::format("request body: Content-Length {} is over the limit of {} bytes (--max-body)",
                                        *length, body_limit_));
    }
    parser_->body_limit(body_limit_); // chunked bodies are checked as they arrive
    if (form) {
        stream_.expires_after(std::min<std::chrono::milliseconds>(limits_.read_timeout, pages::form_read_timeout));
        phase_ = phase::form_body;
        waiting_since_.store(now_ticks(), std::memory_order_release);
    } else {
        stream_.expires_after(limits_.read_timeout);
    }
    if (beast::iequals(req[http::field::expect], "100-continue")) {
        // curl sends "Expect: 100-continue" for large bodies and waits 1 s
        // for this interim response before sending anyway.
        static constexpr std::string_view interim = "HTTP/1.1 100 Continue\r\n\r\n";
        return net::async_write(stream_, net::buffer(interim.data(), interim.size()),
                                beast::bind_front_handler(&session::on_continue_sent, shared_from_this()));
    }
    read_body();
}

void session::read_body()
{
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&session::on_read, shared_from_this()));
}

void session::on_continue_sent(beast::error_code ec, std::size_t)
{
    if (ec) return do_close();
    read_body();
}

void session::on_read(beast::error_code ec, std::size_t)
{
    const bool form = phase_ == phase::form_body;
    if (form) {
        // No longer evictable; if the listener claimed it meanwhile, its
        // eviction finds the phase moved on and keeps it.
        waiting_since_.store(0, std::memory_order_release);
        phase_ = phase::reading;
    }
    if (ec == http::error::body_limit) {
        return reject(errors::http_body_too_large,
                      body_limit_ == 0 ? fmt::format("{} requests take no body", method_name())
                      : form           ? fmt::format("a dashboard form takes at most {} bytes", body_limit_)
                             : fmt::format("request body over the limit of {} bytes (--max-body)", body_limit_));
    }
    // A deadline that passes closes the socket (beast::tcp_stream), so a
    // slow body ends the connection without an answer.
    if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset) {
        return do_close();
    }
    if (ec) return reject(errors::http_bad_request, fmt::format("malformed request: {}", ec.message()));
    handle();
}

void session::handle()
{
    phase_ = phase::handling;
    req_ = parser_->release();
    const auto start = clock_type::now();
    // A compare whose report the service's committer stores is answered
    // from that thread, through this session's strand. Until then the
    // session stays busy (phase handling): not evictable, and a shutdown
    // waits for the answer.
    auto res = route(
        req_, ctx_, token_checked_ ? &*token_checked_ : nullptr,
        [self = shared_from_this(), start](response&& later) {
            net::post(self->stream_.get_executor(),
                      [self, start, later = std::move(later)]() mutable { self->answer(std::move(later), start); });
        },
        remote_);
    if (res) answer(std::move(*res), start);
}

void session::answer(response&& res, clock_type::time_point start)
{
    const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
    // A HEAD was routed as GET (on_read_header).
    const std::string_view method = head_ ? std::string_view("HEAD") : sv(req_.method_string());
    respond(std::move(res), method, sv(req_.target()), route_label(req_), seconds, false);
    req_ = {}; // its body too: the session may now wait long for the next request
}

// Answers a request the transport refused (too large, malformed, badly
// framed, too slow) and closes: the rest of the stream cannot be trusted to
// frame a request.
void session::reject(error_id id, std::string_view message, unsigned status)
{
    response res = error_response(id, message, 11, false);
    if (status != 0) res.result(status);
    respond(std::move(res), method_name(), target_name(), "unmatched", 0.0, true);
}

void session::respond(response&& res, std::string_view method, std::string_view target, std::string_view label,
                      double seconds, bool close)
{
    phase_ = phase::handling;
    ctx_.stats.observe(label, res.result_int(), seconds);
    if (head_) {
        // The headers of the GET answer, Content-Length included, and no body.
        const auto length = res.body().size();
        res.body().clear();
        res.content_length(length);
    }
    log(method, target, res.result_int(), res.body().size(), seconds);
    if (close) {
        res.keep_alive(false);
        drain_ = true;
    }
    send(std::move(res));
}

void session::send(response&& res)
{
    if (registry_.stopping()) res.keep_alive(false);
    res_ = std::move(res);
    phase_ = phase::writing;
    stream_.expires_after(limits_.write_timeout);
    const bool keep_alive = res_.keep_alive();
    http::async_write(stream_, res_, beast::bind_front_handler(&session::on_write, shared_from_this(), keep_alive));
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
    if (ec) return; // EOF, timeout or reset: the session ends, the socket closes
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

std::string session::method_name() const
{
    if (!parser_ || !parser_->is_header_done()) return "-";
    if (head_) return "HEAD";
    return std::string(sv(parser_->get().method_string()));
}

std::string session::target_name() const
{
    if (!parser_ || !parser_->is_header_done()) return "-";
    return std::string(sv(parser_->get().target()));
}

void session::log(std::string_view method, std::string_view target, unsigned status, std::size_t bytes,
                  double seconds) const noexcept
{
    if (!limits_.access_log) return;
    try {
        // Targets are user input: bounded, and JSON-escaped by nlohmann.
        const nlohmann::json line = {
            {"ts", utc_timestamp()},
            {"remote", remote_},
            {"method", method},
            {"target", target.substr(0, 256)},
            {"status", status},
            {"bytes", bytes},
            {"ms", static_cast<double>(static_cast<long long>(seconds * 1e6)) / 1e3},
        };
        write_log_line(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } catch (...) {
        // Out of memory while formatting: the line is lost, the request is not.
    }
}

} // namespace perfgate::server
