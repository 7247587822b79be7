// A minimal GitHub REST client with GitHub's retry and rate-limit rules.
// Tests point GITHUB_API_URL at a local fake (tests/fake_github.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfgate::github {

// Retry rules for the API. Transport failures and 5xx back off exponentially
// from `backoff`. Rate limits (a 429, or a 403 whose message says "rate
// limit" or with x-ratelimit-remaining: 0) wait as GitHub says: retry-after
// (seconds or an HTTP date), else until x-ratelimit-reset when the primary
// limit is spent, else (a secondary limit) at least one minute, doubling on
// each further secondary limit. All waits of one call together stay within
// max_wait: a wait that does not fit gives up ("github.rate_limited").
struct retry_policy {
    int max_attempts = 4;
    std::chrono::milliseconds backoff{1000};
    // One minute, then two, for a secondary limit (GitHub's advice, above)
    // fits; a CI job does not wait longer than three minutes for a comment.
    std::chrono::milliseconds max_wait{180000};
    std::chrono::milliseconds timeout{30000}; // per request
    // How to wait; tests record instead of sleeping. Default: sleep_for.
    std::function<void(std::chrono::milliseconds)> sleep;
    // The wall clock, for x-ratelimit-reset and an HTTP-date retry-after.
    // Default: system_clock::now.
    std::function<std::chrono::system_clock::time_point()> now;
};

// Whether a failed request may be sent again by github_api::call.
enum class replay {
    allowed,   // idempotent, or harmless twice (GET, PATCH, a commit status)
    forbidden, // may have taken effect although the answer was lost (creating a
               // comment): a transport failure or 5xx is thrown at once, for the
               // caller to check what landed. Rate limits are still waited out:
               // GitHub refused those requests.
};

// A minimal GitHub REST client (API version 2022-11-28).
// Errors (perfgate::error): "github.unreachable" (transport, after retries),
// "github.server_error" (5xx, after retries), "github.forbidden" (403
// "Resource not accessible by integration", with a hint about the missing
// permission `permission`), "github.rate_limited" (a wait beyond max_wait or
// retries exhausted), "github.http" (any other non-2xx, with GitHub's
// message), "github.bad_response" (not JSON).
class github_api {
public:
    github_api(std::string api_url, std::string token, retry_policy retry = {});

    // path_or_url: "/repos/o/r/..." relative to the API URL, or an absolute
    // URL (a Link header's). next_url receives rel="next" from Link, if any.
    nlohmann::json call(std::string_view method, const std::string& path_or_url, const nlohmann::json* body = nullptr,
                        std::string* next_url = nullptr, std::string_view permission = {},
                        replay mode = replay::allowed);

    // The policy in use, with sleep and now filled in.
    [[nodiscard]] const retry_policy& policy() const { return retry_; }

private:
    std::string api_url_, token_;
    retry_policy retry_;
};

} // namespace perfgate::github
