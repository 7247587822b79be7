#include "server/pages/client_throttle.hpp"

#include <algorithm>
#include <cmath>

#include <boost/asio/ip/address.hpp>

#include "server/request_text.hpp"

namespace perfgate::server::pages {

std::optional<std::chrono::seconds> client_throttle::take(const std::string& client)
{
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    auto it = buckets_.find(client);
    if (it == buckets_.end()) {
        make_room(now);
        it = buckets_.emplace(client, bucket{burst_, now}).first;
    }
    bucket& b = it->second;
    const double refilled = std::chrono::duration<double>(now - b.updated) / interval_;
    b.tokens = std::min(burst_, b.tokens + refilled);
    b.updated = now;
    if (b.tokens >= 1) {
        b.tokens -= 1;
        return std::nullopt;
    }
    const double wait = (1 - b.tokens) * std::chrono::duration<double>(interval_).count();
    return std::chrono::seconds(std::max<long long>(1, static_cast<long long>(std::ceil(wait))));
}

void client_throttle::make_room(std::chrono::steady_clock::time_point now)
{
    if (buckets_.size() < max_throttled_clients) return;
    // Full buckets first: forgetting them changes nothing.
    std::erase_if(buckets_, [&](const auto& kv) {
        return kv.second.tokens + std::chrono::duration<double>(now - kv.second.updated) / interval_ >= burst_;
    });
    if (buckets_.size() < max_throttled_clients) return;
    const auto oldest = std::min_element(buckets_.begin(), buckets_.end(), [](const auto& a, const auto& b) {
        return a.second.updated < b.second.updated;
    });
    buckets_.erase(oldest);
}

namespace {

// "1.2.3.4:5678" or "::1:5678" (the session's remote, unbracketed) -> the address.
std::string_view without_port(std::string_view peer)
{
    const auto colon = peer.rfind(':');
    return colon == std::string_view::npos ? peer : peer.substr(0, colon);
}

std::optional<boost::asio::ip::address> parse_address(std::string_view text)
{
    boost::system::error_code ec;
    auto a = boost::asio::ip::make_address(std::string(text), ec);
    if (ec) return std::nullopt;
    if (a.is_v6() && a.to_v6().is_v4_mapped())
        return boost::asio::ip::address(boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()));
    return a;
}

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

std::string key_of(const boost::asio::ip::address& a)
{
    if (a.is_v4()) return a.to_string();
    auto bytes = a.to_v6().to_bytes();
    std::fill(bytes.begin() + 8, bytes.end(), 0);
    return boost::asio::ip::make_address_v6(bytes).to_string() + "/64";
}

} // namespace

std::string client_address(std::string_view peer,
                           const boost::beast::http::request<boost::beast::http::string_body>& req,
                           const std::vector<std::string>& trusted)
{
    const auto address = parse_address(without_port(peer));
    if (!address) return {};
    // Only a proxy the operator named (--trusted-proxy) is believed: a
    // loopback peer may be a forwarder that passes the client's own header
    // on (issue 43 finding 15).
    if (std::find(trusted.begin(), trusted.end(), address->to_string()) != trusted.end()) {
        // The last X-Forwarded-For entry is the one the proxy in front added;
        // the ones before it are whatever the client sent.
        std::string_view forwarded;
        const auto [first, end] = req.equal_range("X-Forwarded-For");
        for (auto field = first; field != end; ++field) forwarded = detail::sv(field->value());
        const auto comma = forwarded.rfind(',');
        const auto last = trimmed(comma == std::string_view::npos ? forwarded : forwarded.substr(comma + 1));
        if (const auto behind = parse_address(last)) return key_of(*behind);
    }
    return key_of(*address);
}

} // namespace perfgate::server::pages
