// Accepting a regression (service::service::acceptances(); bodies in service/acceptances.cpp;
// docs/github.md "Accepting a regression").
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class acceptances {
public:
    explicit acceptances(detail::service_impl& s) noexcept : impl_(&s) {}
    acceptances(const acceptances&) = delete;
    acceptances& operator=(const acceptances&) = delete;

    // Acceptances (service/acceptances.cpp, docs/github.md "Accepting a
    // regression"). accept records login's acceptance of the
    // project's newest comparison whose candidate is commit head_sha,
    // replacing an earlier one of it; the stored acceptance. Errors (nothing
    // stored): "ingest.bad_field" naming head_sha (not 40 or 64 lowercase hex
    // digits), login (not a GitHub login, model::is_github_login) or reason
    // (not as model::clean_acceptance_reason leaves it: over
    // model::max_acceptance_reason_bytes, control characters, invalid UTF-8);
    // "accept.no_comparison" when no comparison has that candidate commit;
    // "project.not_found".
    // by: the server token that asks, stored with the acceptance (nullopt: the CLI on a database).
    model::acceptance accept(const std::string& project, std::string_view head_sha, std::string_view login,
                             std::string_view reason, const std::optional<model::token_ref>& by = std::nullopt);
    // The acceptance of a comparison, if any.
    [[nodiscard]] std::optional<model::acceptance> of(const std::string& project, std::int64_t comparison_id) const;

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
