#include "server/server.hpp"

#include <sys/resource.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <fmt/format.h>

#include "model/error.hpp"
#include "server/listener.hpp"
#include "server/log.hpp"
#include "server/metrics.hpp"
#include "service/service.hpp"

namespace perfgate::server {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// How often shutdown checks whether the in-flight requests have finished.
constexpr std::chrono::milliseconds shutdown_poll{20};

std::size_t default_max_connections() noexcept
{
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return default_connection_cap;
    const auto room = lim.rlim_cur > descriptor_reserve ? lim.rlim_cur - descriptor_reserve : 0;
    return std::max<std::size_t>(min_connection_cap, std::min<std::size_t>(default_connection_cap, room));
}

bool retain_freed_memory()
{
#if defined(__GLIBC__)
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) return false;
    return ::mallopt(M_TRIM_THRESHOLD, malloc_trim_bytes) == 1 && ::mallopt(M_MMAP_THRESHOLD, malloc_mmap_bytes) == 1;
#else
    return false;
#endif
}

namespace {

// An explicit --max-connections that RLIMIT_NOFILE has no room for: raise
// the soft limit as far as needed (up to the hard limit), else warn. The
// server still runs: out of descriptors, accept backs off and evicts idle
// connections (listener.hpp), but a request may find no descriptor for a
// database connection and get a 500.
void make_room_for(std::size_t connections)
{
    const rlim_t needed = static_cast<rlim_t>(connections + descriptor_reserve + eviction_slack);
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= needed) return;
    if (lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= needed) {
        rlimit raised = lim;
        raised.rlim_cur = needed;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return;
    }
    write_log_line(fmt::format("perfgate serve: warning: --max-connections {} needs about {} file descriptors, but "
                               "RLIMIT_NOFILE is {} (hard {}); raise it (ulimit -n) or lower --max-connections",
                               connections, needed, lim.rlim_cur,
                               lim.rlim_max == RLIM_INFINITY ? std::string("unlimited")
                                                             : std::to_string(lim.rlim_max)));
}

} // namespace

struct server::impl {
    impl(const server_options& o, service::service& service)
        : opt(o), ctx{service, stats, o.public_read, o.bench_routes}, ioc(static_cast<int>(o.threads)), signals(ioc),
          grace_timer(ioc)
    {
        ctx.trusted_proxies = o.trusted_proxies;
        ctx.public_url = o.public_url;
        beast::error_code ec;
        auto address = net::ip::make_address(opt.host, ec);
        if (ec) {
            throw error(errors::usage_bad_value,
                        fmt::format("--listen: '{}' is not an IP address (use 127.0.0.1, 0.0.0.0 or ::1)", opt.host));
        }
        if (opt.max_connections == 0) {
            opt.max_connections = default_max_connections();
        } else {
            make_room_for(opt.max_connections);
        }
        acceptor = std::make_shared<listener>(ioc, tcp::endpoint(address, opt.port), opt.limits, opt.max_connections,
                                              ctx, registry);
    }

    void begin_shutdown()
    {
        if (stopping.exchange(true)) return;
        acceptor->stop();
        registry.shutdown_all();
        beast::error_code ec;
        signals.cancel(ec);
        deadline = std::chrono::steady_clock::now() + opt.shutdown_grace;
        poll_shutdown();
    }

    // Returns (letting io_context::run finish) once no session is left, or
    // stops the io_context when the grace period is over.
    void poll_shutdown()
    {
        if (registry.size() == 0) return;
        if (std::chrono::steady_clock::now() >= deadline) {
            write_log_line(fmt::format("perfgate serve: {} connection(s) still busy after {} ms; stopping",
                                       registry.size(), opt.shutdown_grace.count()));
            ioc.stop();
            return;
        }
        grace_timer.expires_after(shutdown_poll);
        grace_timer.async_wait([this](beast::error_code ec) {
            if (!ec) poll_shutdown();
        });
    }

    // Declared before ioc: handlers still queued when the io_context is
    // destroyed hold sessions, whose destructors use the registry and metrics.
    server_options opt;
    metrics stats;
    session_registry registry;
    context ctx;
    net::io_context ioc;
    net::signal_set signals;
    net::steady_timer grace_timer;
    std::shared_ptr<listener> acceptor;
    std::atomic<bool> stopping{false};
    std::chrono::steady_clock::time_point deadline;
};

server::server(const server_options& opt, service::service& service) : impl_(std::make_unique<impl>(opt, service)) {}

server::~server() = default;

std::uint16_t server::port() const { return impl_->acceptor->local_endpoint().port(); }

std::string server::url() const
{
    auto ep = impl_->acceptor->local_endpoint();
    if (ep.address().is_v6()) return fmt::format("http://[{}]:{}", ep.address().to_string(), ep.port());
    return fmt::format("http://{}:{}", ep.address().to_string(), ep.port());
}

metrics& server::stats() { return impl_->stats; }

std::size_t server::max_connections() const { return impl_->opt.max_connections; }

void server::run()
{
    impl& s = *impl_;
    if (s.opt.handle_signals) {
        s.signals.add(SIGINT);
        s.signals.add(SIGTERM);
        s.signals.async_wait([&s](beast::error_code ec, int) {
            if (!ec) s.begin_shutdown();
        });
    }
    s.acceptor->run();

    std::vector<std::thread> workers;
    const unsigned n = std::max(1u, s.opt.threads);
    workers.reserve(n - 1);
    for (unsigned i = 1; i < n; ++i) workers.emplace_back([&s] { s.ioc.run(); });
    s.ioc.run();
    for (auto& t : workers) t.join();
    // A compare still with the service's committer (its session outlived the
    // shutdown grace) answers through this io_context: let the committer
    // finish before the io_context goes. Its answers are then queued here,
    // never run, and released with the io_context.
    s.ctx.service.background().drain_commits();
}

void server::stop()
{
    net::post(impl_->ioc, [s = impl_.get()] { s->begin_shutdown(); });
}

} // namespace perfgate::server
