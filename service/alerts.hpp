// The alerts the history watch opens: listing, reading and triage (service::service::alerts();
// bodies in service/watch.cpp), and the culprit perfgate bisect stores on one
// (service/culprits.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class alerts {
public:
    explicit alerts(detail::service_impl& s) noexcept : impl_(&s) {}
    alerts(const alerts&) = delete;
    alerts& operator=(const alerts&) = delete;

    // Alerts, newest first. "ingest.bad_field" for malformed names, "query.bad_value"
    // for a limit outside [1, max_alert_limit].
    [[nodiscard]] std::vector<model::alert> list(const model::alert_query& q) const;
    // "alert.not_found" when the project has no such alert.
    [[nodiscard]] model::alert get(const std::string& project, std::int64_t id) const;
    // Sets status and (optionally) note. "alert.not_found"; "alert.bad_note"
    // for a note over max_alert_note_bytes or not UTF-8-clean text.
    model::alert update(const std::string& project, std::int64_t id, const model::alert_update& u);
    // Stores what `perfgate bisect --alert` found on the alert, replacing an
    // earlier result (docs/bisect.md "Stored on the alert"); by: the server
    // token that sends it. Answers the alert with it. When the status is
    // found, an "alert.culprit_found" delivery goes to each webhook.
    // "alert.not_found"; "ingest.bad_field" naming the field for a sha that
    // is not 40 or 64 lowercase hex digits, a text over its limit or not one
    // clean line (model/alert.hpp: max_culprit_*), more than
    // max_culprit_commits culprits or max_culprit_effects effects, a found
    // result without a culprit or a no_change one with one. Nothing is
    // stored on an error.
    model::alert put_culprit(const std::string& project, std::int64_t id, const model::alert_culprit& culprit,
                             const std::optional<model::token_ref>& by = std::nullopt);

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
