// The perfgate HTTP server: N worker threads over one io_context, a listener,
// and SIGINT/SIGTERM handling that stops accepting, closes idle connections,
// lets in-flight requests finish (up to shutdown_grace) and then returns from
// run(), so the caller can close the database cleanly.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "server/session.hpp"

namespace perfgate::gate { class service; }

namespace perfgate::server {

struct server_options {
    std::string host = "127.0.0.1";   // loopback by default (design.md §4)
    std::uint16_t port = 8080;        // 0: an ephemeral port, see port()
    unsigned threads = 2;
    bool public_read = false;
    bool bench_routes = false;
    bool handle_signals = true;       // install the SIGINT/SIGTERM handler
    session_limits limits;
    // Longest wait for in-flight requests after a shutdown signal.
    std::chrono::milliseconds shutdown_grace{10000};
};

class server {
public:
    // Binds the listening socket. Errors: "server.listen", "usage.bad_value"
    // (a host that is not an IP address).
    server(const server_options& opt, gate::service& service);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    [[nodiscard]] std::uint16_t port() const;
    [[nodiscard]] std::string url() const;   // "http://127.0.0.1:PORT"
    [[nodiscard]] metrics& stats();

    // Serves until a signal or stop(); returns once every worker has stopped.
    void run();
    // Graceful stop, as on SIGTERM. Thread-safe.
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace perfgate::server
