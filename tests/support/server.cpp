#include "support/server.hpp"

#include "support/answers.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace perfgate::test {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

std::string create_token(const std::filesystem::path& db, const std::string& project)
{
    auto r = run_perfgate({"token", "create", "--db", db.string(), "--project", project}, {}, {}, 60s);
    INFO("stderr: " << r.err);
    REQUIRE(r.code == 0);
    std::string token = r.out;
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    REQUIRE(token.size() > 16);
    return token;
}

server_process::server_process(const std::filesystem::path& db, const std::filesystem::path& log,
                               std::vector<std::string> extra, const child_options& opt)
{
    std::vector<std::string> args = {perfgate_exe, "serve",       "--db",      db.string(),
                                     "--listen",   "127.0.0.1:0", "--threads", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    proc_ = std::make_unique<child>(args, log, opt);
    const std::string out = proc_->read_until("\n", 15s);
    const std::string prefix = "perfgate: listening on http://127.0.0.1:";
    const auto at = out.find(prefix);
    REQUIRE_MESSAGE(at != std::string::npos, "server did not start: " << out);
    port_ = static_cast<unsigned short>(std::stoi(out.substr(at + prefix.size())));
    REQUIRE(port_ > 0);
}

void set_receive_timeout(tcp::socket& s, std::chrono::milliseconds t)
{
    timeval tv{static_cast<time_t>(t.count() / 1000), static_cast<suseconds_t>((t.count() % 1000) * 1000)};
    ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

reply send(unsigned short port, http::verb method, const std::string& target, const std::string& body,
           const std::string& content_type, const std::string& token)
{
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    set_receive_timeout(socket, 10s);
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    if ((method == http::verb::post || method == http::verb::patch || method == http::verb::put) &&
        !content_type.empty()) {
        req.set(http::field::content_type, content_type);
    }
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    beast::flat_buffer buffer;
    reply r;
    http::read(socket, buffer, r.raw);
    r.status = r.raw.result_int();
    r.body = r.raw.body();
    r.content_type = std::string(r.raw[http::field::content_type]);
    record_answer(std::string(http::to_string(method)), target, r.status, r.content_type, r.body);
    return r;
}

std::string raw_exchange(unsigned short port, const std::string& bytes, std::chrono::milliseconds timeout)
{
    net::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    set_receive_timeout(socket, timeout);
    beast::error_code ec;
    net::write(socket, net::buffer(bytes), ec);
    std::string got;
    char buf[4096];
    for (;;) {
        const auto n = socket.read_some(net::buffer(buf), ec);
        if (ec) break;
        got.append(buf, n);
    }
    return got;
}

void check_error(const reply& r, unsigned status, const std::string& id)
{
    INFO("body: " << r.body);
    CHECK(r.status == status);
    CHECK(r.content_type == "application/json");
    CHECK(r.error().at("id") == id);
    CHECK_FALSE(r.error().at("message").get<std::string>().empty());
}

} // namespace perfgate::test
