// A project and its settings (store::store::projects(); store/projects.cpp
// creates projects, store/alerts.cpp reads and writes the settings).
#pragma once

#include "store/prune.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

// A project's change-point settings as stored (projects::change_point_settings_of):
// nullopt where unset. method is "perfgate" or "otava".
struct change_point_settings {
    std::optional<std::string> method;
    std::optional<std::int64_t> window;
    std::optional<double> max_p;
    std::optional<double> min_magnitude;
};

class projects {
public:
    explicit projects(detail::store_impl& s) noexcept : impl_(&s) {}
    projects(const projects&) = delete;
    projects& operator=(const projects&) = delete;

    // The project's id, its row created when missing.
    std::int64_t ensure(std::string_view project);
    [[nodiscard]] bool exists(std::string_view project) const;

    // Project settings (store/migrations/004_alerts.sql). The baseline
    // branch is the branch whose baseline runs are watched for change points:
    // "main" unless set. "store.not_found" for an unknown project;
    // set_baseline_branch: "store.constraint" for an empty branch.
    [[nodiscard]] std::string baseline_branch(std::string_view project) const;
    void set_baseline_branch(std::string_view project, std::string_view branch);
    // The URL a project's commits are browsed at ({url}/commit/{sha}), as
    // set; nullopt when unset (006_project_settings.sql). The store keeps it
    // verbatim (service::service validates it); "" clears it.
    // "store.not_found" for an unknown project; set_repository_url:
    // "store.constraint" over 512 bytes.
    [[nodiscard]] std::optional<std::string> repository_url(std::string_view project) const;
    void set_repository_url(std::string_view project, std::string_view url);
    // How the history watch detects change points in a project's series
    // (010_change_point_settings.sql): each field as set, nullopt where
    // unset (the server's default applies). set_change_point_settings
    // changes the fields that have a value and leaves the others; the store
    // keeps them as given (service::service validates them).
    // "store.not_found" for an unknown project; set_change_point_settings:
    // "store.constraint" for a value out of its range (method not perfgate
    // or otava, window < 2, max_p outside (0, 1), min_magnitude < 0).
    [[nodiscard]] change_point_settings change_point_settings_of(std::string_view project) const;
    void set_change_point_settings(std::string_view project, const change_point_settings& settings);
    // A project's retention (022_retention.sql; store/prune.cpp): the ages
    // perfgate serve prunes it by once a day. set_retention stores both
    // fields as given (older_than nullopt: no retention, thin_after then
    // too). "store.not_found" for an unknown project; "store.constraint"
    // for ages outside prune_rules' bounds or thin_after below older_than.
    [[nodiscard]] retention_settings retention_of(std::string_view project) const;
    void set_retention(std::string_view project, const retention_settings& retention);
    // The projects with a retention whose last daily prune started before
    // now - interval_s (or never), each claimed for this caller by moving
    // its retention_pruned_at to now in one UPDATE: of several servers on
    // one database, one gets a given project's prune. In name order.
    std::vector<std::string> claim_due_retention(std::int64_t now, std::int64_t interval_s);

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
