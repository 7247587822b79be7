// The perfgate HTTP server: N worker threads over one io_context, a listener,
// and SIGINT/SIGTERM handling that stops accepting, closes idle connections,
// lets in-flight requests finish (up to shutdown_grace) and then returns from
// run(), so the caller can close the database cleanly.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/session.hpp"

namespace perfgate::service {
class service;
}

namespace perfgate::server {

// Descriptors kept for everything but client connections: the database (a
// writer and up to 8 readers, each with the file and its WAL, ~20), stdio,
// epoll, timers, the listening socket, with room to spare.
inline constexpr std::size_t descriptor_reserve = 64;
// The default connection cap where RLIMIT_NOFILE allows it: 512 idle
// keep-alive clients cost ~512 descriptors and a few MB; a CI fleet rarely
// holds more than a few dozen connections.
inline constexpr std::size_t default_connection_cap = 512;
// The smallest cap we choose by ourselves, however low RLIMIT_NOFILE is.
inline constexpr std::size_t min_connection_cap = 8;

// The cap when --max-connections is not given: min(default_connection_cap,
// RLIMIT_NOFILE soft limit - descriptor_reserve), at least min_connection_cap.
std::size_t default_max_connections() noexcept;

// glibc's malloc returns freed memory to the kernel as soon as 128 KiB sit
// free at the top of an arena, and serves blocks from 128 KiB up with
// mmap/munmap. Under load that is a page-table change, and with more than
// one thread a TLB shootdown, for every request (SQLite's per-transaction
// buffers, a report's text): 10-15% of a fresh compare's CPU on a 2-core VM
// (bench/e2e/bench_engines.sh). perfgate serve keeps up to malloc_trim_bytes
// free per arena and mmaps only blocks of malloc_mmap_bytes and more. Not
// applied off glibc, nor when GLIBC_TUNABLES sets a glibc.malloc tunable
// (the operator's choice). Returns whether the settings were applied.
inline constexpr int malloc_trim_bytes = 64 << 20;
inline constexpr int malloc_mmap_bytes = 4 << 20;
bool retain_freed_memory();

struct server_options {
    std::string host = "127.0.0.1"; // loopback by default (docs/http-api.md)
    std::uint16_t port = 8080;      // 0: an ephemeral port, see port()
    unsigned threads = 2;
    bool public_read = false;
    bool bench_routes = false;
    // Peers (IP addresses, as address::to_string spells them) whose
    // X-Forwarded-For names the client, besides loopback (--trusted-proxy).
    std::vector<std::string> trusted_proxies;
    // The dashboard's public base URL without a trailing '/' (--public-url,
    // "https://perf.example.com"); "" when not set. Links in markdown that
    // leaves the server (a comparison's ?format=markdown) are built on it,
    // never on the request's Host header, which the client chooses.
    std::string public_url;
    bool handle_signals = true; // install the SIGINT/SIGTERM handler
    // Connections served at once (--max-connections); 0: default_max_connections().
    // A larger value than RLIMIT_NOFILE leaves room for raises the soft limit
    // up to the hard one, and warns when that is not enough.
    std::size_t max_connections = 0;
    session_limits limits;
    // Longest wait for in-flight requests after a shutdown signal.
    std::chrono::milliseconds shutdown_grace{10000};
};

class server {
public:
    // Binds the listening socket. Errors: "server.listen", "usage.bad_value"
    // (a host that is not an IP address).
    server(const server_options& opt, service::service& service);
    ~server();
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    [[nodiscard]] std::uint16_t port() const;
    [[nodiscard]] std::string url() const; // "http://127.0.0.1:PORT"
    [[nodiscard]] metrics& stats();
    [[nodiscard]] std::size_t max_connections() const;

    // Serves until a signal or stop(); returns once every worker has stopped.
    void run();
    // Graceful stop, as on SIGTERM. Thread-safe.
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace perfgate::server
