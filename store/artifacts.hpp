// A comparison's artifacts (store::store::artifacts(); store/artifacts.cpp,
// store/migrations/007_artifacts.sql and 012_attribution_artifacts.sql): the
// flame graph SVG of a benchmark and its attribution, each replaced when
// stored again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

class artifacts {
public:
    explicit artifacts(detail::store_impl& s) noexcept : impl_(&s) {}
    artifacts(const artifacts&) = delete;
    artifacts& operator=(const artifacts&) = delete;

    // put: "store.not_found" when the project has no such comparison;
    // "store.constraint" for an empty or longer than max_artifact_bytes
    // content, a benchmark name outside 1..256 bytes; "artifact.too_many"
    // when a new artifact would take the comparison beyond
    // max_artifacts_per_comparison artifacts or
    // max_artifact_bytes_per_comparison bytes (both kinds together; a
    // replacement counts its new size only). The check and the write are one
    // transaction, so concurrent uploads cannot pass the limit together.
    static constexpr std::size_t max_artifact_bytes = 4u << 20;
    static constexpr std::size_t max_artifacts_per_comparison = 1000;
    static constexpr std::size_t max_artifact_bytes_per_comparison = 64u << 20;
    void put_flame_graph(std::string_view project, std::int64_t comparison_id, std::string_view benchmark,
                         std::string_view svg);
    [[nodiscard]] std::optional<std::string> load_flame_graph(std::string_view project, std::int64_t comparison_id,
                                                              std::string_view benchmark) const;
    // The benchmarks of the comparison that have one, by name.
    [[nodiscard]] std::vector<std::string> flame_graph_benchmarks(std::string_view project,
                                                                  std::int64_t comparison_id) const;
    // A benchmark's attribution (the report's "attribution" object as JSON
    // text, 012_attribution_artifacts.sql), replaced when stored again;
    // errors as put_flame_graph. load_attributions: (benchmark, JSON) of
    // every benchmark of the comparison that has one, by benchmark name.
    void put_attribution(std::string_view project, std::int64_t comparison_id, std::string_view benchmark,
                         std::string_view attribution_json);
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> load_attributions(std::string_view project,
                                                                                     std::int64_t comparison_id) const;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
