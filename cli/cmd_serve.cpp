// `perfgate serve`: the HTTP gate server (server/) over a SQLite or PostgreSQL store.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/address.hpp>
#include <fmt/format.h>

#include "cli/change_point_flags.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "client/http.hpp"
#include "model/error.hpp"
#include "server/log.hpp"
#include "server/server.hpp"
#include "service/service.hpp"
#include "store/maintenance.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

command_spec make_serve_command()
{
    command_spec spec{
        "serve",
        "[--db PATH|URI] [--listen HOST:PORT] [--threads N] [--public-read] [--trusted-proxy ADDR,...]\n"
        "       [--max-body BYTES] [--webhook-allow-private CIDR]...\n"
        "       [--max-header BYTES] [--max-connections N] [--idle-timeout-ms MS] [--read-timeout-ms MS]\n"
        "       [--write-timeout-ms MS] [--change-point-method M] [--change-point-window N]\n"
        "       [--change-point-max-p P] [--change-point-min-magnitude X]",
        "Serves the gate over HTTP (API v1: runs, compare, comparisons, history,\n"
        "benchmarks, /healthz, /metrics). Writes need a Bearer token of the project\n"
        "(perfgate token create); reads too unless --public-read. Checks at start\n"
        "that the database can be written and passes PRAGMA quick_check (reads the\n"
        "whole file once); exits 4 naming the file if not. Prints\n"
        "'perfgate: listening on http://HOST:PORT' on stdout once ready, one JSON access\n"
        "log line per request on stderr (a log that cannot be written is dropped and\n"
        "counted, never fatal). SIGINT/SIGTERM: finish in-flight requests, close the\n"
        "database, exit 0.",
        {
            {"db", 0, true, false, "PATH|URI",
             "SQLite database file, created with its schema if missing (default ./perfgate.db), or a PostgreSQL "
             "URI (postgresql://USER@HOST:PORT/DB; tables are created): several servers may share one"},
            {"listen", 0, true, false, "HOST:PORT",
             "address to listen on (default 127.0.0.1:8080; port 0 = any free port)"},
            {"threads", 0, true, false, "N", "worker threads (default: the number of CPUs)"},
            {"public-read", 0, false, false, "", "serve GET routes without a token"},
            {"trusted-proxy", 0, true, false, "ADDR,...",
             "proxies (IP addresses) whose X-Forwarded-For names the client for the dashboard's sign-in throttle "
             "and anonymous reads; a proxy on this host too (127.0.0.1) (default: none)"},
            {"max-body", 0, true, false, "BYTES", "largest request body accepted (default 8388608); larger -> 413"},
            {"max-header", 0, true, false, "BYTES", "largest request header accepted (default 65536); larger -> 431"},
            {"max-connections", 0, true, false, "N",
             "connections served at once (default 512, fewer if ulimit -n is below 576); at the cap the longest-idle "
             "connection is closed, or a new one gets 503 if none is idle"},
            {"idle-timeout-ms", 0, true, false, "MS",
             "keep-alive wait plus the time to send a request header (default 30000)"},
            {"read-timeout-ms", 0, true, false, "MS", "time to send a request body (default 30000)"},
            {"write-timeout-ms", 0, true, false, "MS", "time to take a response (default 30000)"},
            {"public-url", 0, true, false, "URL",
             "the dashboard's public base URL (https://perf.example.com): alert webhooks and a comparison's "
             "?format=markdown link to it"},
            {"webhook-allow-private", 0, true, true, "CIDR",
             "let alert webhooks connect to this address range, refused by default like every loopback, "
             "link-local, private, unique-local, multicast and reserved address (repeatable; e.g. 10.20.0.0/16 for "
             "an on-premise receiver)"},
            {"bench-routes", 0, false, false, "", "", {}, {}, true},
            {"webhook-backoff-ms", 0, true, false, "MS", "", {}, {}, true},
            {"no-access-log", 0, false, false, "", "", {}, {}, true},
            // Tests: how often the retention thread looks for projects due.
            {"retention-check-ms", 0, true, false, "MS", "", {}, {}, true},
        },
    };
    for (auto& o : change_point_option_specs("projects without their own (perfgate project)"))
        spec.options.push_back(std::move(o));
    return spec;
}

const command_spec serve_command = make_serve_command();

// "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:0".
std::pair<std::string, std::uint16_t> parse_listen(const std::string& s)
{
    auto bad = [&]() -> error {
        return error(errors::usage_bad_value,
                     fmt::format("--listen: expected HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:0), got '{}'", s));
    };
    auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) throw bad();
    std::string host = s.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const std::string port_text = s.substr(colon + 1);
    if (port_text.empty() || port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos) {
        throw bad();
    }
    const unsigned long port = std::stoul(port_text);
    if (port > 65535) throw bad();
    return {host, static_cast<std::uint16_t>(port)};
}

// --trusted-proxy: comma-separated IP addresses, each as the server will
// compare it with a connection's peer (pages::client_address).
std::vector<std::string> parse_trusted_proxies(const std::string& list)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        const auto comma = std::min(list.find(',', start), list.size());
        const std::string item = list.substr(start, comma - start);
        boost::system::error_code ec;
        const auto address = boost::asio::ip::make_address(item, ec);
        if (ec) {
            throw error(errors::usage_bad_value,
                        fmt::format("--trusted-proxy: '{}' is not an IP address (expected ADDR[,ADDR...], e.g. "
                                    "10.0.0.5,fd00::5)",
                                    item.substr(0, 64)));
        }
        out.push_back(address.to_string());
        start = comma + 1;
    }
    return out;
}

// store::maintenance::check_writable takes the write lock, which SQLite grants on a file
// it silently opened read-only (WAL mode, writable directory): the first
// INSERT would fail. The file's own write permission, for our effective
// user, is checked here (a read-only mount is EROFS).
void require_writable_file(const std::string& path)
{
    if (path.empty() || path == ":memory:") return;
    if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
        const int e = errno;
        throw error(errors::store_read_only,
                    fmt::format("{}: the database file cannot be written ({}); perfgate serve stores runs in it", path,
                                std::strerror(e)));
    }
}

// A server started with stdin, stdout or stderr closed would hand those
// numbers to its first sockets, and the log would then be written into a
// client's connection. Point any closed one at /dev/null.
void occupy_standard_descriptors() noexcept
{
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1) continue;
        const int null = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (null >= 0 && null != fd) {
            ::dup2(null, fd);
            ::close(null);
        }
    }
}

// A transport outcome as the notifier records it: a coarse class for the
// delivery log (service::webhook_failure_*), and for the operator's log
// libcurl's words with the URL cut to scheme and host.
service::webhook_answer webhook_answer_of(client::http_outcome out, const std::string& url)
{
    if (out.response) return {out.response->status, {}, {}};
    std::string detail = std::move(out.message);
    for (auto at = detail.find(url); at != std::string::npos; at = detail.find(url, at + 1))
        detail.replace(at, url.size(), service::redacted_url(url));
    switch (out.failure) {
    case client::http_failure::resolve: return {0, std::string(service::webhook_failure_resolve), detail};
    case client::http_failure::timeout: return {0, std::string(service::webhook_failure_timeout), detail};
    case client::http_failure::tls: return {0, std::string(service::webhook_failure_tls), detail};
    default: return {0, std::string(service::webhook_failure_connect), detail};
    }
}

// The daily prune's log line (service/retention_job.hpp).
void log_retention(const service::retention_outcome& out)
{
    if (!out.error.empty()) {
        server::write_log_line(fmt::format("perfgate serve: retention of project '{}' failed: {}", out.project,
                                           out.error));
        return;
    }
    const auto& n = out.removed;
    server::write_log_line(fmt::format(
        "perfgate serve: retention of project '{}': removed {} runs ({} thinned series points), {} comparisons, {} "
        "flame graphs, {} attributions, {} idempotency keys, {} bytes; database {} -> {} bytes",
        out.project, n.runs.rows, n.thinned, n.comparisons.rows, n.flame_graphs.rows, n.attributions.rows,
        n.ingest_keys.rows, n.bytes(), out.space.size_before, out.space.size_after));
}

} // namespace

const command_spec& serve_spec() { return serve_command; }

int cmd_serve(const argv_t& argv)
{
    const auto args = parse_args(serve_command, argv);
    if (!args) return exit_pass;
    const parsed_args& parsed = *args;
    no_positional(parsed);

    server::server_options opt;
    std::tie(opt.host, opt.port) = parse_listen(parsed.get("listen").value_or("127.0.0.1:8080"));
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    opt.threads = static_cast<unsigned>(parsed.get_int("threads", 1, 256).value_or(cpus));
    opt.public_read = parsed.has("public-read");
    if (auto v = parsed.get("trusted-proxy")) opt.trusted_proxies = parse_trusted_proxies(*v);
    opt.bench_routes = parsed.has("bench-routes");
    if (auto v = parsed.get_int("max-body", 1, 1LL << 32)) opt.limits.body_limit = static_cast<std::uint64_t>(*v);
    if (auto v = parsed.get_int("idle-timeout-ms", 1, 3600000)) opt.limits.idle_timeout = std::chrono::milliseconds(*v);
    if (auto v = parsed.get_int("read-timeout-ms", 1, 3600000)) opt.limits.read_timeout = std::chrono::milliseconds(*v);
    if (auto v = parsed.get_int("write-timeout-ms", 1, 3600000))
        opt.limits.write_timeout = std::chrono::milliseconds(*v);
    if (auto v = parsed.get_int("max-header", 1024, 1 << 20)) opt.limits.header_limit = static_cast<std::uint32_t>(*v);
    if (auto v = parsed.get_int("max-connections", 1, 1000000)) opt.max_connections = static_cast<std::size_t>(*v);
    opt.limits.access_log = !parsed.has("no-access-log");
    // The watch's detection for projects without settings of their own.
    const auto change_point_defaults = service::merged_change_point_options(change_point_flags(parsed), {});

    occupy_standard_descriptors();
    server::retain_freed_memory();
    // A log line to a pipe nobody reads must not kill the server (SIGPIPE);
    // write(2) then fails with EPIPE and the line is dropped (server/log.hpp).
    std::signal(SIGPIPE, SIG_IGN);

    const std::string db_path = parsed.get("db").value_or("perfgate.db");
    // PostgreSQL: a connection per worker, one for the history watch and one
    // for the comparisons' committer.
    store::store db(db_path, {.connections = opt.threads + 2, .background_checkpoints = true});
    // Refuse a file that would fail every request later: read-only (file,
    // directory or mount) -> "store.read_only", a damaged page ->
    // "store.corrupt"; both name the file and exit 4 (model/exit_code.hpp).
    if (!store::is_postgres(db_path)) require_writable_file(db_path);
    db.maintenance().check_writable();
    db.maintenance().check_integrity();
    service::service service(db);
    service.background().set_change_point_defaults(change_point_defaults);
    // Alert webhooks are posted by the notifier's thread through libcurl
    // (client/http.hpp: TLS, proxies, timeouts), never by a request thread.
    service::notifier_options notify;
    if (auto url = parsed.get("public-url")) {
        notify.public_url = service::normalize_repository_url("--public-url", *url);
        opt.public_url = notify.public_url;
    }
    if (auto v = parsed.get_int("webhook-backoff-ms", 1, 60000)) notify.first_backoff = std::chrono::milliseconds(*v);
    // Where webhooks may connect: checked when one is added over the API
    // (a literal host) and before every delivery (service/egress.hpp).
    std::vector<service::ip_range> allowed;
    for (const auto& cidr : parsed.all("webhook-allow-private"))
        allowed.push_back(service::parse_ip_range("--webhook-allow-private", cidr));
    notify.policy = service::egress_policy(allowed);
    service.background().notify_with(std::make_shared<service::notifier>(
        db,
        [](const service::webhook_post& p) {
            client::http_request req;
            req.method = "POST";
            req.url = p.url;
            req.headers = p.headers;
            req.body = p.body;
            req.timeout = p.timeout;
            req.connect_address = p.connect_address;
            req.connect_port = p.connect_port;
            req.follow_redirects = false; // a 3xx is a failed delivery
            return webhook_answer_of(client::http_try(req), p.url);
        },
        notify, [](const std::string& line) { server::write_log_line(line); }));
    // Uploads answer once the run is stored; the history watch runs on its
    // own thread and says here what it found (service/watch_queue.hpp).
    service.background().watch_in_background([](const service::watch_outcome& out) {
        if (!out.error.empty()) {
            server::write_log_line(fmt::format("perfgate serve: change-point detection for project '{}' benchmark "
                                               "'{}' (run {}) failed: {}",
                                               out.job.project, out.job.benchmark, out.job.run_id, out.error));
        }
        for (const auto id : out.alerts) {
            server::write_log_line(fmt::format("perfgate serve: alert {} opened for project '{}' benchmark '{}' by "
                                               "detection after run {}",
                                               id, out.job.project, out.job.benchmark, out.job.run_id));
        }
    });
    // Projects with a retention (perfgate project --retention) are pruned
    // once a day on a thread of their own (service/retention_job.hpp).
    const auto retention_check = std::chrono::milliseconds(
        parsed.get_int("retention-check-ms", 1, 86400000).value_or(service::retention_check_every.count()));
    service.background().prune_daily(log_retention, retention_check);
    // Fresh comparisons are stored by one committer thread, many to a
    // transaction; the request threads go on computing meanwhile
    // (service/commit_queue.hpp).
    service.background().commit_in_background();
    {
        server::server srv(opt, service);
        // Tests and scripts read the bound port (with --listen HOST:0) from this line.
        std::cout << "perfgate: listening on " << srv.url() << std::endl;
        std::fputs(fmt::format("perfgate serve: database {} ({}), {} thread(s), at most {} connections{}\n",
                               db.location(), db.engine(), opt.threads, srv.max_connections(),
                               opt.public_read ? ", public reads" : "")
                       .c_str(),
                   stderr);
        srv.run();
    }
    // Every worker has joined; the committer and the watch finish their
    // queues when service goes out of scope, then db closes (WAL checkpoint) when it goes out of scope.
    std::fputs("perfgate serve: stopped\n", stderr);
    return exit_pass;
}

} // namespace perfgate::cli
