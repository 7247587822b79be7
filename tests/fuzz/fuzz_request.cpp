// libFuzzer target for HTTP request bodies and query strings: the router
// (server/router.hpp) over a real gate service on an in-memory SQLite store,
// with a valid token, so that bodies reach the parsers and the service. The
// first byte picks the route; the rest is the body (or the query string).
// Every input must get an answer; a 500 (a bug: the store is in memory and
// cannot fail), a crash, a sanitizer report or an escaping exception aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

#include "server/metrics.hpp"
#include "server/router.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace {

namespace http = boost::beast::http;

struct fixture {
    perfgate::store::store db{":memory:"};
    perfgate::service::service service{db};
    perfgate::server::metrics stats;
    perfgate::server::context ctx{service, stats};
    std::string token = service.tokens().create("demo", "fuzz");
};

fixture& world()
{
    static fixture f;
    return f;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) return 0;
    auto& f = world();
    const unsigned which = data[0] % 6;
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);

    perfgate::server::request req;
    req.version(11);
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + f.token);
    switch (which) {
    case 0: // a run as JSON
        req.method(http::verb::post);
        req.target("/api/v1/projects/demo/runs");
        req.set(http::field::content_type, "application/json");
        req.body() = rest;
        break;
    case 1: { // a run as text/csv, fields in the query string (up to the first newline)
        const auto nl = rest.find('\n');
        req.method(http::verb::post);
        req.target("/api/v1/projects/demo/runs?" + rest.substr(0, nl));
        req.set(http::field::content_type, "text/csv");
        req.body() = nl == std::string::npos ? std::string() : rest.substr(nl + 1);
        break;
    }
    case 2: // a compare request
        req.method(http::verb::post);
        req.target("/api/v1/projects/demo/compare");
        req.set(http::field::content_type, "application/json");
        req.body() = rest;
        break;
    case 3: // history filters
        req.method(http::verb::get);
        req.target("/api/v1/projects/demo/history?" + rest);
        break;
    case 4: // any target
        req.method(http::verb::get);
        req.target(rest.empty() ? std::string("/") : rest);
        break;
    default: // a stored comparison by id, in some format
        req.method(http::verb::get);
        req.target("/api/v1/projects/demo/comparisons/" + rest);
        break;
    }
    req.prepare_payload();
    const auto res = perfgate::server::route(req, f.ctx);
    if (res.result_int() >= 500) std::abort();
    return 0;
}
