// Test support: the real `perfgate serve` on 127.0.0.1 with an ephemeral
// port, and a minimal HTTP client over real sockets (Boost.Beast, sync).
#pragma once

#include "support/process.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace perfgate::test {

// `perfgate token create` on a database: the token (fails the test unless
// perfgate exits 0).
std::string create_token(const std::filesystem::path& db, const std::string& project);

// `perfgate serve --db DB --listen 127.0.0.1:0 --threads 2 EXTRA...`, its
// stderr appended to `log`; the constructor returns once the server printed
// the port it listens on, and fails the test if it does not within 15 s.
class server_process {
public:
    server_process(const std::filesystem::path& db, const std::filesystem::path& log,
                   std::vector<std::string> extra = {}, const child_options& opt = {});
    [[nodiscard]] unsigned short port() const { return port_; }
    child& proc() { return *proc_; }
    [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

private:
    std::unique_ptr<child> proc_;
    unsigned short port_ = 0;
};

namespace http = boost::beast::http;

struct reply {
    unsigned status = 0;
    std::string body;
    std::string content_type;
    http::response<http::string_body> raw;
    [[nodiscard]] nlohmann::json error() const { return nlohmann::json::parse(body).at("error"); }
    [[nodiscard]] nlohmann::json parsed() const { return nlohmann::json::parse(body); }
};

void set_receive_timeout(boost::asio::ip::tcp::socket& s, std::chrono::milliseconds t);

// One request on a fresh connection.
reply send(unsigned short port, http::verb method, const std::string& target, const std::string& body = {},
           const std::string& content_type = "application/json", const std::string& token = {});

// Writes raw bytes, then reads until the server closes or the timeout.
std::string raw_exchange(unsigned short port, const std::string& bytes,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

// The answer is an error of the API's shape: this status, this id, a message.
void check_error(const reply& r, unsigned status, const std::string& id);

} // namespace perfgate::test
