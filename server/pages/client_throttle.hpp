// Work per client address: a token bucket each (issue 31).
//   - Failed sign-ins (finding 3; docs/dashboard.md#sessions): one address
//     cannot fail faster than a person mistypes. A correct token is never
//     refused for its address's failures (issue 43 finding 15: a user behind
//     an address shared with a guessing client signs in all the same).
//   - Anonymous reads under --public-read (finding 5;
//     docs/http-api.md#anonymous-reads): a page render (a page cache miss)
//     or a history read without a token or session takes one, so one address
//     cannot keep the server rendering.
// Without a token left the answer is 429 with Retry-After.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace perfgate::server::pages {

// A burst of this many sign-ins from one address, then one every
// signin_interval (10 a minute): a person mistyping a token a few times is
// never held up; a script guessing tokens or filling the session store is.
inline constexpr double signin_burst = 10;
inline constexpr std::chrono::seconds signin_interval{6};
// Anonymous reads: a burst of 20, then two a second.
inline constexpr double anonymous_read_burst = 20;
inline constexpr std::chrono::milliseconds anonymous_read_interval{500};
// Addresses remembered at once. An address whose bucket has filled again is
// the same as one never seen and is forgotten first; beyond that the one
// seen longest ago goes.
inline constexpr std::size_t max_throttled_clients = 10000;

class client_throttle {
public:
    // burst and interval: signin_burst and signin_interval, other values in tests.
    explicit client_throttle(double burst = signin_burst,
                             std::chrono::steady_clock::duration interval = signin_interval)
        : burst_(burst), interval_(interval)
    {}

    // Takes one from client's bucket: nullopt when there was one, else
    // how long until there is (at least 1 s, for Retry-After). Thread-safe.
    [[nodiscard]] std::optional<std::chrono::seconds> take(const std::string& client);

private:
    struct bucket {
        double tokens = 0;
        std::chrono::steady_clock::time_point updated;
    };
    void make_room(std::chrono::steady_clock::time_point now); // with mutex_ held

    double burst_;
    std::chrono::steady_clock::duration interval_;
    std::mutex mutex_;
    std::unordered_map<std::string, bucket> buckets_;
};

// The address a request came from, as the throttle counts it: the peer's
// address (peer is "address:port", as the session logs it), or, when the
// peer is one of `trusted` (perfgate serve --trusted-proxy; ci/deploy's nginx
// on the same host is 127.0.0.1), the last address of X-Forwarded-For, which
// that proxy appended. A loopback peer is not trusted unless named. An IPv6 address counts by its
// /64 prefix (one host's share of addresses). "" when unknown (a request
// routed without a socket).
std::string client_address(std::string_view peer,
                           const boost::beast::http::request<boost::beast::http::string_body>& req,
                           const std::vector<std::string>& trusted = {});

} // namespace perfgate::server::pages
