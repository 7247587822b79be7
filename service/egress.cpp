// Where alert webhooks may connect (egress.hpp).
#include "service/egress.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>

#include <fmt/format.h>

#include "model/error.hpp"
#include "service/notifier.hpp"
#include "service/text.hpp"

namespace perfgate::service {

namespace {

ip_address v4_of(std::uint32_t value)
{
    ip_address a;
    a.v4 = true;
    a.bytes[0] = static_cast<std::uint8_t>(value >> 24);
    a.bytes[1] = static_cast<std::uint8_t>(value >> 16);
    a.bytes[2] = static_cast<std::uint8_t>(value >> 8);
    a.bytes[3] = static_cast<std::uint8_t>(value);
    return a;
}

ip_address v4_at(const ip_address& v6, std::size_t offset)
{
    ip_address a;
    a.v4 = true;
    std::copy_n(v6.bytes.begin() + static_cast<long>(offset), 4, a.bytes.begin());
    return a;
}

// One part of an inet_aton(3) spelling: decimal, 0-prefixed octal, 0x hex.
std::optional<std::uint64_t> aton_part(std::string_view s)
{
    if (s.empty()) return std::nullopt;
    int base = 10;
    if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
        if (s.empty()) return std::uint64_t{0}; // "0x" is 0 to inet_aton
    } else if (s.size() > 1 && s[0] == '0') {
        base = 8;
        s.remove_prefix(1);
    }
    if (s.size() > 16) return std::nullopt;
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<ip_address> parse_v4_any_spelling(std::string_view host)
{
    std::vector<std::uint64_t> parts;
    std::size_t start = 0;
    for (;;) {
        const auto dot = host.find('.', start);
        const auto part = aton_part(host.substr(start, dot == std::string_view::npos ? dot : dot - start));
        if (!part) return std::nullopt;
        parts.push_back(*part);
        if (dot == std::string_view::npos) break;
        start = dot + 1;
        if (parts.size() == 4) return std::nullopt;
    }
    // The last part fills the bytes the others leave (inet_aton: a.b.c.d, a.b.c with c 16 bits, a.b with b 24,
    // a alone 32).
    std::uint32_t value = 0;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] > 0xff) return std::nullopt;
        value |= static_cast<std::uint32_t>(parts[i]) << (24 - 8 * i);
    }
    const int last_bits = 32 - 8 * static_cast<int>(parts.size() - 1);
    if (parts.back() >= (std::uint64_t{1} << last_bits)) return std::nullopt;
    value |= static_cast<std::uint32_t>(parts.back());
    return v4_of(value);
}

bool in(const ip_address& a, std::initializer_list<std::uint8_t> prefix_bytes, int prefix)
{
    ip_range r;
    r.base.v4 = a.v4;
    std::copy(prefix_bytes.begin(), prefix_bytes.end(), r.base.bytes.begin());
    r.prefix = prefix;
    return r.contains(a);
}

std::optional<std::string> v4_refused(const ip_address& a)
{
    if (in(a, {0}, 8)) return "unspecified";
    if (in(a, {127}, 8)) return "loopback";
    if (in(a, {169, 254}, 16)) return "link-local";
    if (in(a, {10}, 8) || in(a, {172, 16}, 12) || in(a, {192, 168}, 16)) return "private";
    if (in(a, {100, 64}, 10)) return "shared (CGNAT)";
    if (in(a, {224}, 4)) return "multicast";
    if (in(a, {255, 255, 255, 255}, 32)) return "broadcast";
    if (in(a, {240}, 4) || in(a, {192, 0, 0}, 24) || in(a, {198, 18}, 15)) return "reserved";
    return std::nullopt;
}

std::optional<std::string> v6_refused(const ip_address& a)
{
    if (a == ip_address{}) return "unspecified";
    ip_address loopback;
    loopback.bytes[15] = 1;
    if (a == loopback) return "loopback";
    if (in(a, {0xfe, 0x80}, 10)) return "link-local";
    if (in(a, {0xfe, 0xc0}, 10)) return "site-local";
    if (in(a, {0xfc}, 7)) return "unique-local";
    if (in(a, {0xff}, 8)) return "multicast";
    if (in(a, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48)) return "reserved (local-use NAT64)";
    return std::nullopt;
}

// The IPv4 address an IPv6 one stands for, and its kind: the form the
// kernel or a translator turns it into.
std::optional<std::pair<ip_address, std::string_view>> embedded_v4(const ip_address& a)
{
    if (in(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96)) return std::pair{v4_at(a, 12), "v4-mapped"};
    if (in(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 96)) return std::pair{v4_at(a, 12), "v4-compatible"};
    if (in(a, {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}, 96)) return std::pair{v4_at(a, 12), "NAT64"};
    if (in(a, {0x20, 0x02}, 16)) return std::pair{v4_at(a, 2), "6to4"};
    return std::nullopt;
}

// "HOST[:PORT]" of a URL (brackets kept), the scheme's default port.
struct authority {
    std::string_view scheme; // "http" or "https"
    std::string_view text;
};

authority authority_of(std::string_view url)
{
    authority out;
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return out;
    out.scheme = url.substr(0, scheme_end);
    const auto rest = url.substr(scheme_end + 3);
    out.text = rest.substr(0, rest.find_first_of("/?#"));
    return out;
}

struct host_port {
    std::string host; // lower case, no brackets, no trailing dot
    bool bracketed = false;
    std::uint16_t port = 0;
};

std::optional<host_port> split(std::string_view url, std::string* why)
{
    const authority auth = authority_of(url);
    std::string_view text = auth.text;
    if (text.find('@') != std::string_view::npos) {
        *why = "user:password@ is not allowed in a webhook URL";
        return std::nullopt;
    }
    host_port out;
    out.port = auth.scheme == "https" ? 443 : 80;
    std::string_view host = text;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) {
            *why = "an unterminated '[' in the host";
            return std::nullopt;
        }
        host = text.substr(1, close - 1);
        out.bracketed = true;
        const auto after = text.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                *why = "unexpected characters after ']'";
                return std::nullopt;
            }
            port = after.substr(1);
        }
    } else if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (!port.empty()) {
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            *why = fmt::format("bad port '{}'", port.substr(0, 16));
            return std::nullopt;
        }
        out.port = static_cast<std::uint16_t>(value);
    }
    if (host.find('%') != std::string_view::npos) {
        *why = "a '%' in the host (percent-encoded hosts and IPv6 zone ids are not allowed)";
        return std::nullopt;
    }
    out.host.reserve(host.size());
    for (const char c : host) out.host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!out.bracketed && out.host.ends_with('.')) out.host.pop_back();
    if (out.host.empty()) {
        *why = "no host";
        return std::nullopt;
    }
    return out;
}

bool is_localhost_name(std::string_view host) { return host == "localhost" || host.ends_with(".localhost"); }

// The addresses a host stands for without DNS: an IP literal, or the
// loopback pair of localhost names. nullopt for a name DNS must answer.
std::optional<std::vector<ip_address>> literal_addresses(const host_port& h)
{
    if (h.bracketed) {
        const auto a = parse_ip_literal(h.host);
        if (!a || a->v4) return std::vector<ip_address>{}; // "[1.2.3.4]" is no IPv6 literal: nothing to connect to
        return std::vector{*a};
    }
    if (h.host.find(':') == std::string::npos) {
        if (const auto a = parse_v4_any_spelling(h.host)) return std::vector{*a};
    }
    if (is_localhost_name(h.host)) {
        ip_address v6_loopback;
        v6_loopback.bytes[15] = 1;
        return std::vector{v4_of(0x7f000001), v6_loopback};
    }
    return std::nullopt;
}

std::string refusal_text(const ip_address& a, const std::string& why, const std::string& host)
{
    return fmt::format("host {} is {} ({}); webhooks may not connect there (perfgate serve "
                       "--webhook-allow-private CIDR allows a range)",
                       host.substr(0, 80),
                       why.starts_with("unspecified") ? "the unspecified address" : "a " + why + " address",
                       a.to_string());
}

} // namespace

std::string ip_address::to_string() const
{
    std::array<char, INET6_ADDRSTRLEN> text{};
    if (::inet_ntop(v4 ? AF_INET : AF_INET6, bytes.data(), text.data(), text.size()) == nullptr) return "?";
    return text.data();
}

std::optional<ip_address> parse_ip_literal(std::string_view host)
{
    if (host.find(':') != std::string_view::npos) {
        if (host.find('%') != std::string_view::npos || host.size() >= INET6_ADDRSTRLEN) return std::nullopt;
        ip_address a;
        if (::inet_pton(AF_INET6, std::string(host).c_str(), a.bytes.data()) != 1) return std::nullopt;
        return a;
    }
    return parse_v4_any_spelling(host);
}

bool ip_range::contains(const ip_address& a) const
{
    if (a.v4 != base.v4) return false;
    int bits = prefix;
    for (std::size_t i = 0; bits > 0; ++i, bits -= 8) {
        const auto mask = static_cast<std::uint8_t>(bits >= 8 ? 0xff : (0xff << (8 - bits)));
        if ((a.bytes[i] & mask) != (base.bytes[i] & mask)) return false;
    }
    return true;
}

std::string ip_range::to_string() const { return fmt::format("{}/{}", base.to_string(), prefix); }

ip_range parse_ip_range(std::string_view label, std::string_view text)
{
    auto bad = [&](std::string_view why) {
        return error(errors::usage_bad_value,
                     fmt::format("{}: '{}' {} (expected an address range such as 10.0.0.0/8, 192.168.1.7 or "
                                 "fd00::/8)",
                                 label, text.substr(0, 64), why));
    };
    const auto slash = text.find('/');
    const std::string_view address_text = text.substr(0, slash);
    // Strict dotted quads here: an operator's range is not a URL host.
    ip_address a;
    if (address_text.find(':') != std::string_view::npos) {
        const auto parsed = parse_ip_literal(address_text);
        if (!parsed) throw bad("is not an IP address");
        a = *parsed;
    } else {
        in_addr v4{};
        if (::inet_pton(AF_INET, std::string(address_text).c_str(), &v4) != 1) throw bad("is not an IP address");
        a.v4 = true;
        std::copy_n(reinterpret_cast<const std::uint8_t*>(&v4.s_addr), 4, a.bytes.begin());
    }
    const int max_prefix = a.v4 ? 32 : 128;
    int prefix = max_prefix;
    if (slash != std::string_view::npos) {
        const auto p = text.substr(slash + 1);
        const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
        if (p.empty() || ec != std::errc{} || end != p.data() + p.size() || prefix < 0 || prefix > max_prefix) {
            throw bad(fmt::format("has a bad prefix length (0 to {})", max_prefix));
        }
    }
    ip_range r{a, prefix};
    ip_range zeroed{a, prefix};
    int bits = prefix;
    for (std::size_t i = 0; i < (a.v4 ? 4u : 16u); ++i, bits -= 8) {
        if (bits >= 8) continue;
        zeroed.base.bytes[i] &= static_cast<std::uint8_t>(bits <= 0 ? 0 : (0xff << (8 - bits)));
    }
    if (!(zeroed.base == r.base)) throw bad(fmt::format("has host bits set (the range is {})", zeroed.to_string()));
    return r;
}

std::optional<std::string> refused_because(const ip_address& a, const std::vector<ip_range>& allowed)
{
    auto allowed_by_operator = [&](const ip_address& x) {
        return std::any_of(allowed.begin(), allowed.end(), [&](const ip_range& r) { return r.contains(x); });
    };
    if (allowed_by_operator(a)) return std::nullopt;
    if (a.v4) return v4_refused(a);
    if (const auto embedded = embedded_v4(a)) {
        if (allowed_by_operator(embedded->first)) return std::nullopt;
        if (auto why = v4_refused(embedded->first)) return fmt::format("{} {}", embedded->second, *why);
        // ::a.b.c.d and ::ffff:a.b.c.d reach the IPv4 address itself: judged as it is.
        if (embedded->second == "v4-mapped" || embedded->second == "v4-compatible") return std::nullopt;
    }
    return v6_refused(a);
}

std::string redacted_url(std::string_view url)
{
    const authority auth = authority_of(url);
    if (auth.scheme.empty()) return "(a URL)";
    std::string_view host = auth.text;
    if (const auto at = host.rfind('@'); at != std::string_view::npos) host = host.substr(at + 1);
    return fmt::format("{}://{}", auth.scheme, host);
}

void egress_policy::check_url(std::string_view label, std::string_view url) const
{
    std::string why;
    const auto h = split(url, &why);
    if (!h) throw error(errors::ingest_bad_field, fmt::format("{}: {}: {}", label, shown_url(url), why));
    const auto addresses = literal_addresses(*h);
    if (!addresses) return;
    if (addresses->empty()) {
        throw error(errors::ingest_bad_field,
                    fmt::format("{}: {}: '[{}]' is not an IPv6 address", label, shown_url(url), h->host.substr(0, 64)));
    }
    for (const auto& a : *addresses) {
        if (const auto refused = refused_because(a, allowed_)) {
            throw error(errors::ingest_bad_field, fmt::format("{}: {}", label, refusal_text(a, *refused, h->host)));
        }
    }
}

egress_policy::verdict egress_policy::resolve(std::string_view url) const
{
    verdict out;
    std::string why;
    const auto h = split(url, &why);
    if (!h) {
        out.failure = std::string(webhook_failure_refused);
        out.detail = why;
        return out;
    }
    std::vector<ip_address> addresses;
    if (auto literal = literal_addresses(*h)) {
        addresses = std::move(*literal);
    } else {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* found = nullptr;
        const int rc = ::getaddrinfo(h->host.c_str(), nullptr, &hints, &found);
        const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(found, &::freeaddrinfo);
        if (rc != 0) {
            out.failure = std::string(webhook_failure_resolve);
            out.detail = fmt::format("resolving {}: {}", h->host.substr(0, 80), ::gai_strerror(rc));
            return out;
        }
        for (const addrinfo* ai = found; ai; ai = ai->ai_next) {
            ip_address a;
            if (ai->ai_family == AF_INET) {
                a.v4 = true;
                const auto* sin = reinterpret_cast<const sockaddr_in*>(ai->ai_addr);
                std::copy_n(reinterpret_cast<const std::uint8_t*>(&sin->sin_addr.s_addr), 4, a.bytes.begin());
            } else if (ai->ai_family == AF_INET6) {
                const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(ai->ai_addr);
                std::copy_n(sin6->sin6_addr.s6_addr, 16, a.bytes.begin());
            } else {
                continue;
            }
            if (std::find(addresses.begin(), addresses.end(), a) == addresses.end()) addresses.push_back(a);
        }
    }
    if (addresses.empty()) {
        out.failure = std::string(webhook_failure_resolve);
        out.detail = fmt::format("{} has no address", h->host.substr(0, 80));
        return out;
    }
    // A name with one refused address is refused: a rebinding name may
    // answer a public and a private address in one reply.
    for (const auto& a : addresses) {
        if (const auto refused = refused_because(a, allowed_)) {
            out.failure = std::string(webhook_failure_refused);
            out.detail = refusal_text(a, *refused, h->host);
            return out;
        }
    }
    out.to = target{addresses.front().to_string(), h->port, !addresses.front().v4};
    return out;
}

} // namespace perfgate::service
