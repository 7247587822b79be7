// Flame graphs and attribution stored with a comparison (service::service::artifacts(); bodies in
// service/artifacts.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

// Flame graphs stored with a comparison (perfgate run --profile with
// --server; service/artifacts.cpp). The SVG must be UTF-8 text that
// starts as an SVG document ("<svg" or "<?xml", after whitespace), at
// most max_flame_graph_bytes; storing one again replaces it. Errors:
// "artifact.too_large" above the limit, "artifact.bad_svg",
// "ingest.bad_field" for a malformed benchmark name,
// "artifact.bad_benchmark" for a benchmark the comparison does not have,
// "artifact.too_many" beyond the store's per-comparison limits
// (store::artifacts::max_artifacts_per_comparison, max_artifact_bytes_per_comparison),
// "comparison.not_found" (also for another project's comparison).
inline constexpr std::size_t max_flame_graph_bytes = store::artifacts::max_artifact_bytes;
// Attribution stored with a comparison (perfgate run after its
// comparison: callgrind's, --profile's; service/artifacts.cpp), so that
// comparisons::load's report and the dashboard say where a change came
// from. The body is the benchmark's report "attribution" object
// (docs/report.md#attribution) as JSON, at most max_attribution_bytes,
// each table ("top") at most max_attribution_functions rows; it is
// stored re-serialised, replacing one stored before. Errors:
// "artifact.too_large" above the byte limit, "artifact.bad_attribution"
// for what is not such an object (naming the member) or more rows;
// "artifact.bad_benchmark" for a benchmark the comparison does not have;
// "artifact.too_many" as for flame graphs; "ingest.bad_field" for a
// malformed benchmark name; "comparison.not_found".
inline constexpr std::size_t max_attribution_bytes = std::size_t{1} << 20;
inline constexpr std::size_t max_attribution_functions = 100;

class artifacts {
public:
    explicit artifacts(detail::service_impl& s) noexcept : impl_(&s) {}
    artifacts(const artifacts&) = delete;
    artifacts& operator=(const artifacts&) = delete;

    void store_flame_graph(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                           std::string_view svg);
    [[nodiscard]] std::optional<std::string> flame_graph(const std::string& project, std::int64_t comparison_id,
                                                         const std::string& benchmark) const;
    // The comparison's benchmarks that have a flame graph, by name.
    [[nodiscard]] std::vector<std::string> flame_graph_benchmarks(const std::string& project,
                                                                  std::int64_t comparison_id) const;
    void store_attribution(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                           std::string_view attribution_json);

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
