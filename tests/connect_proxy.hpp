// A minimal HTTP CONNECT proxy for tests (RFC 9110 §9.3.6), like the one a
// self-hosted runner reaches GitHub through: it listens on 127.0.0.1 with an
// ephemeral port, reads `CONNECT host:port HTTP/1.1`, records the target,
// connects to it, answers 200 and then copies bytes both ways until either
// side closes. Point HTTPS_PROXY at url(). Anything but CONNECT is answered
// 405 (the proxy is for https:// URLs only). One thread runs it all
// (Boost.Asio).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace perfgate::test {

class connect_proxy {
public:
    connect_proxy();
    ~connect_proxy();
    connect_proxy(const connect_proxy&) = delete;
    connect_proxy& operator=(const connect_proxy&) = delete;

    [[nodiscard]] std::string url() const; // "http://127.0.0.1:PORT"
    // The "host:port" of every CONNECT received, in order: one per tunnel.
    [[nodiscard]] std::vector<std::string> connects() const;
    // Client connections accepted (CONNECT or not).
    [[nodiscard]] std::size_t connections() const;

    struct state; // shared with the tunnels (connect_proxy.cpp)
private:
    std::shared_ptr<state> state_;
    std::thread thread_;
};

} // namespace perfgate::test
