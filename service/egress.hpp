// Where alert webhooks may connect (issue 43 finding 1; docs/history.md
// "Where webhooks may connect").
//
// A webhook URL is set by whoever holds a project's token, so the server's
// own network (loopback, the cloud metadata service at 169.254.169.254,
// RFC 1918 ranges, ...) is off limits unless the operator allows a range
// (perfgate serve --webhook-allow-private CIDR). Every numeric spelling of
// an IPv4 host is read as the address it names, the way inet_aton(3) and
// libcurl read it (2130706433, 0177.0.0.1, 0x7f.1, 127.1); `localhost` and
// `*.localhost` are loopback (RFC 6761 §6.3) without asking DNS; a trailing
// dot is dropped; an IPv6 address that embeds an IPv4 one (v4-mapped,
// v4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) is judged by both.
//
// resolve() is called at every delivery (DNS may change): it resolves the
// host once, refuses the name if any of its addresses is refused, and gives
// the address that was checked, which the transport connects to (no second
// resolution; the HTTP client's CURLOPT_CONNECT_TO).
//
// Pure and thread-safe apart from resolve()'s getaddrinfo(3).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::service {

struct ip_address {
    bool v4 = false;
    std::array<std::uint8_t, 16> bytes{}; // IPv4: the first four
    [[nodiscard]] std::string to_string() const;
    bool operator==(const ip_address&) const = default;
};

// An IP literal as a URL host may spell it: IPv4 in any inet_aton(3) form
// (a, a.b, a.b.c, a.b.c.d; each part decimal, 0-octal or 0x-hex), or IPv6
// (without brackets; a zone id "%..." is not an address). nullopt if not.
std::optional<ip_address> parse_ip_literal(std::string_view host);

struct ip_range {
    ip_address base; // host bits zero
    int prefix = 0;
    [[nodiscard]] bool contains(const ip_address& a) const;
    [[nodiscard]] std::string to_string() const;
};
// "10.0.0.0/8", "fd00::/8", "192.168.1.7" (a /32). "usage.bad_value" naming
// `label` for anything else (host bits set: "10.0.0.1/8" names 10.0.0.0/8).
ip_range parse_ip_range(std::string_view label, std::string_view text);

// Why an address may not be connected to ("loopback", "link-local",
// "private", "shared (CGNAT)", "unique-local", "multicast", "unspecified",
// "broadcast", "reserved", and for an embedded IPv4 address "v4-mapped
// loopback" and the like); nullopt when it may. An address inside one of
// `allowed` may, whatever it is.
std::optional<std::string> refused_because(const ip_address& a, const std::vector<ip_range>& allowed);

// scheme://host[:port] of a URL: what logs show of a webhook URL (its path
// and query can be a credential, as a Slack webhook's is).
std::string redacted_url(std::string_view url);

class egress_policy {
public:
    explicit egress_policy(std::vector<ip_range> allowed = {}) : allowed_(std::move(allowed)) {}

    // At creation (a URL normalize_webhook_url accepted): a host that is an
    // IP literal, localhost or *.localhost and is refused, user:password@,
    // or a '%' in the host -> "ingest.bad_field" naming `label`. A DNS name
    // is not resolved here (resolve() judges it at each delivery).
    void check_url(std::string_view label, std::string_view url) const;

    struct target {
        std::string address; // numeric, as getaddrinfo gave it: what to connect to
        std::uint16_t port = 0;
        bool v6 = false;
    };
    struct verdict {
        std::optional<target> to; // empty: refused or unresolved, `failure` says which
        std::string failure;      // webhook_failure_refused or webhook_failure_resolve
        std::string detail;       // for the operator's log: which address and why
    };
    // At delivery: resolves the URL's host once and checks every address.
    [[nodiscard]] verdict resolve(std::string_view url) const;

    [[nodiscard]] const std::vector<ip_range>& allowed() const { return allowed_; }

private:
    std::vector<ip_range> allowed_;
};

} // namespace perfgate::service
