#include "connect_proxy.hpp"

#include <array>
#include <istream>
#include <mutex>
#include <sstream>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

namespace perfgate::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

struct connect_proxy::state {
    asio::io_context ioc;
    tcp::acceptor acceptor{ioc};
    unsigned short port = 0;

    mutable std::mutex mutex;
    std::vector<std::string> connects;
    std::size_t connections = 0;
};

namespace {

// A CONNECT request head is one line and a few headers; more is not a client of ours.
constexpr std::size_t max_head = 8192;
// Bytes copied per read in each direction of a tunnel.
constexpr std::size_t pipe_chunk = 16384;

// One client connection: the CONNECT exchange, then the tunnel.
class tunnel : public std::enable_shared_from_this<tunnel> {
public:
    // The state owns the io_context that runs this tunnel, so it outlives it.
    tunnel(tcp::socket client, connect_proxy::state* st)
        : client_(std::move(client)), upstream_(client_.get_executor()), resolver_(client_.get_executor()), state_(st)
    {}

    void start()
    {
        asio::async_read_until(client_, head_, "\r\n\r\n",
                               [self = shared_from_this()](error_code ec, std::size_t n) { self->on_head(ec, n); });
    }

private:
    void on_head(error_code ec, std::size_t head_size)
    {
        if (ec) return; // closed, or a head over max_head
        std::string head(asio::buffers_begin(head_.data()), asio::buffers_begin(head_.data()) + head_size);
        head_.consume(head_size); // what stays is already tunnel data
        std::istringstream line(head.substr(0, head.find("\r\n")));
        std::string method, target, version;
        line >> method >> target >> version;
        if (method != "CONNECT") {
            return refuse("405 Method Not Allowed\r\nAllow: CONNECT");
        }
        {
            std::lock_guard lock(state_->mutex);
            state_->connects.push_back(target);
        }
        // host:port, the host in brackets for IPv6 (RFC 9110 §9.3.6: authority-form).
        auto colon = target.rfind(':');
        if (colon == std::string::npos) return refuse("400 Bad Request");
        std::string host = target.substr(0, colon);
        if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
        resolver_.async_resolve(host, target.substr(colon + 1),
                                [self = shared_from_this()](error_code ec, tcp::resolver::results_type r) {
                                    if (ec) return self->refuse("502 Bad Gateway");
                                    self->connect(r);
                                });
    }

    void connect(const tcp::resolver::results_type& endpoints)
    {
        asio::async_connect(upstream_, endpoints, [self = shared_from_this()](error_code ec, const tcp::endpoint&) {
            if (ec) return self->refuse("502 Bad Gateway");
            asio::async_write(self->client_, asio::buffer(established), [self](error_code ec, std::size_t) {
                if (ec) return;
                self->forward_early_bytes();
            });
        });
    }

    // Bytes the client sent after its head, before our 200 (clients wait,
    // but nothing forbids it), go first.
    void forward_early_bytes()
    {
        if (head_.size() == 0) return open();
        asio::async_write(upstream_, head_.data(), [self = shared_from_this()](error_code ec, std::size_t n) {
            if (ec) return;
            self->head_.consume(n);
            self->open();
        });
    }

    void open()
    {
        pump(client_, upstream_, to_upstream_);
        pump(upstream_, client_, to_client_);
    }

    // Copies from -> to until `from` ends, then passes the half-close on, so
    // each side sees the other's end of stream as without a proxy.
    void pump(tcp::socket& from, tcp::socket& to, std::array<char, pipe_chunk>& buf)
    {
        from.async_read_some(asio::buffer(buf), [self = shared_from_this(), &from, &to, &buf](error_code ec,
                                                                                              std::size_t n) {
            if (ec) {
                error_code ignored;
                to.shutdown(tcp::socket::shutdown_send, ignored);
                return;
            }
            asio::async_write(to, asio::buffer(buf.data(), n), [self, &from, &to, &buf](error_code ec, std::size_t) {
                if (ec) return self->close();
                self->pump(from, to, buf);
            });
        });
    }

    void refuse(const std::string& status)
    {
        auto reply = std::make_shared<std::string>("HTTP/1.1 " + status +
                                                   "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        asio::async_write(client_, asio::buffer(*reply),
                          [self = shared_from_this(), reply](error_code, std::size_t) { self->close(); });
    }

    void close()
    {
        error_code ignored;
        client_.close(ignored);
        upstream_.close(ignored);
    }

    static constexpr std::string_view established = "HTTP/1.1 200 Connection Established\r\n\r\n";

    tcp::socket client_, upstream_;
    tcp::resolver resolver_;
    asio::streambuf head_{max_head};
    std::array<char, pipe_chunk> to_upstream_{}, to_client_{};
    connect_proxy::state* state_;
};

// Handlers hold a plain pointer: a shared_ptr would make a cycle through the
// io_context that the state owns.
void accept(connect_proxy::state* st)
{
    st->acceptor.async_accept([st](error_code ec, tcp::socket socket) {
        if (ec) return; // acceptor closed: the proxy is stopping
        {
            std::lock_guard lock(st->mutex);
            ++st->connections;
        }
        std::make_shared<tunnel>(std::move(socket), st)->start();
        accept(st);
    });
}

} // namespace

connect_proxy::connect_proxy() : state_(std::make_shared<state>())
{
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    state_->acceptor.open(ep.protocol());
    state_->acceptor.set_option(asio::socket_base::reuse_address(true));
    state_->acceptor.bind(ep);
    state_->acceptor.listen();
    state_->port = state_->acceptor.local_endpoint().port();
    accept(state_.get());
    thread_ = std::thread([st = state_.get()] { st->ioc.run(); });
}

connect_proxy::~connect_proxy()
{
    state_->ioc.stop();
    if (thread_.joinable()) thread_.join();
}

std::string connect_proxy::url() const { return "http://127.0.0.1:" + std::to_string(state_->port); }

std::vector<std::string> connect_proxy::connects() const
{
    std::lock_guard lock(state_->mutex);
    return state_->connects;
}

std::size_t connect_proxy::connections() const
{
    std::lock_guard lock(state_->mutex);
    return state_->connections;
}

} // namespace perfgate::test
