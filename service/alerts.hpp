// The alerts the history watch opens: listing, reading and triage (service::service::alerts();
// bodies in service/watch.cpp).
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

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
