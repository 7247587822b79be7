// A project and its settings: whether it exists, its baseline branch, repository URL and
// change-point settings (service::service::projects(); bodies in service/service.cpp and
// service/watch.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class projects {
public:
    explicit projects(detail::service_impl& s) noexcept : impl_(&s) {}
    projects(const projects&) = delete;
    projects& operator=(const projects&) = delete;

    // "project.not_found" unless the project exists (and "ingest.bad_field"
    // for a malformed name).
    void require(const std::string& project) const;
    [[nodiscard]] bool exists(const std::string& project) const;
    void ensure(const std::string& project);
    [[nodiscard]] std::string baseline_branch(const std::string& project) const;
    // "project.not_found", "ingest.bad_field" for a malformed branch name.
    void set_baseline_branch(const std::string& project, const std::string& branch);
    // The project's repository URL, nullopt when unset. set_repository_url
    // stores normalize_repository_url("field 'repository_url'", url) ("" clears
    // it). "project.not_found", "ingest.bad_field".
    [[nodiscard]] std::optional<std::string> repository_url(const std::string& project) const;
    void set_repository_url(const std::string& project, std::string_view url);
    // How the history watch detects change points in a project's series:
    // its settings (set_change_point_settings) over the server's defaults
    // (set_change_point_defaults; stats::change_point_options' defaults
    // unless set). set_change_point_settings changes the fields that have
    // a value; "project.not_found", "stats.bad_option" for an unknown method
    // or a value change_points() refuses (the message names the field).
    // set_change_point_defaults: "stats.bad_option"; call it before
    // watch_in_background, whose worker keeps the defaults it was started with.
    [[nodiscard]] stats::change_point_options change_point_options(const std::string& project) const;
    [[nodiscard]] store::change_point_settings change_point_settings(const std::string& project) const;
    void set_change_point_settings(const std::string& project, const store::change_point_settings& settings);
    // The project's retention (store/prune.hpp; perfgate serve prunes by it
    // daily: background::prune_daily). set_retention stores both fields as
    // given. "project.not_found"; "store.constraint" for ages outside
    // store::prune_rules' bounds or a thinning age below the other.
    [[nodiscard]] store::retention_settings retention(const std::string& project) const;
    void set_retention(const std::string& project, const store::retention_settings& settings);

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
