// A project's history: series points, benchmarks and stored change points
// (service::service::history(); bodies in service/service.cpp and service/watch.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class history {
public:
    explicit history(detail::service_impl& s) noexcept : impl_(&s) {}
    history(const history&) = delete;
    history& operator=(const history&) = delete;

    // Validates the query's names ("ingest.bad_field"); unknown names give
    // no points.
    [[nodiscard]] std::vector<model::history_point> points(const model::history_query& q) const;
    [[nodiscard]] std::vector<model::benchmark_info> benchmarks(const std::string& project) const;
    // Stored change points of one series; testbed (name or fingerprint) and
    // branch optional (branch defaults to the project's baseline branch).
    [[nodiscard]] std::vector<model::change_point_record> change_points(
        const std::string& project, const std::string& benchmark, const std::string& counter,
        const std::optional<std::string>& testbed, const std::optional<std::string>& branch) const;

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
