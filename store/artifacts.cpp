// A comparison's artifacts: flame graph SVGs (store/migrations/007_artifacts.sql)
// and attribution JSON (012_attribution_artifacts.sql).
#include "store/store.hpp"
#include "store/store_impl.hpp"

#include "model/error.hpp"

#include <fmt/format.h>

namespace perfgate::store {

using detail::connection;
using detail::unix_now;

namespace {

constexpr std::string_view flame_graph_kind = "flame_graph";
constexpr std::string_view attribution_kind = "attribution";

// Stores (or replaces) one artifact of the project's comparison, within the
// caller's write transaction.
void put_artifact_on(connection& c, std::string_view store_name, std::string_view project, std::int64_t comparison_id,
                     std::string_view benchmark, std::string_view kind, std::string_view content)
{
    auto st = c.prepare("SELECT 1 FROM comparisons c JOIN projects p ON p.id = c.project_id "
                        "WHERE c.id = :id AND p.name = :project");
    st.bind(":id", comparison_id).bind(":project", project);
    if (!st.step()) {
        throw error(errors::store_not_found, fmt::format("{}: comparison {} not found in project {}", store_name,
                                                         comparison_id, detail::shown_name(project)));
    }
    st.reset();
    // What the comparison holds besides the artifact being replaced.
    auto held = c.prepare(c.pick({"SELECT COUNT(*), COALESCE(SUM(length(CAST(content AS BLOB))), 0) "
                                  "FROM comparison_artifacts WHERE comparison_id = :id "
                                  "AND NOT (kind = :kind AND benchmark = :benchmark)",
                                  "SELECT COUNT(*), COALESCE(SUM(octet_length(content)), 0) "
                                  "FROM comparison_artifacts WHERE comparison_id = :id "
                                  "AND NOT (kind = :kind AND benchmark = :benchmark)"}));
    held.bind(":id", comparison_id).bind(":kind", kind).bind(":benchmark", benchmark);
    held.step();
    const auto count = static_cast<std::size_t>(held.int64(0));
    const auto bytes = static_cast<std::size_t>(held.int64(1));
    held.reset();
    if (count >= artifacts::max_artifacts_per_comparison) {
        throw error(errors::artifact_too_many,
                    fmt::format("comparison {} already holds {} artifacts, the most this server keeps per comparison",
                                comparison_id, count));
    }
    if (bytes + content.size() > artifacts::max_artifact_bytes_per_comparison) {
        throw error(errors::artifact_too_many,
                    fmt::format("comparison {} holds {} bytes of artifacts; {} more would pass this server's limit "
                                "of {} bytes ({} MiB) per comparison",
                                comparison_id, bytes, content.size(), artifacts::max_artifact_bytes_per_comparison,
                                artifacts::max_artifact_bytes_per_comparison >> 20));
    }
    c.prepare("INSERT INTO comparison_artifacts (comparison_id, benchmark, kind, content, created_at) "
              "VALUES (:id, :benchmark, :kind, :content, :now) "
              "ON CONFLICT (comparison_id, kind, benchmark) DO UPDATE SET "
              "content = excluded.content, created_at = excluded.created_at")
        .bind(":id", comparison_id)
        .bind(":benchmark", benchmark)
        .bind(":kind", kind)
        .bind(":content", content)
        .bind(":now", unix_now())
        .run();
}

void check_artifact_size(std::string_view store_name, std::string_view what, std::size_t bytes)
{
    if (bytes == 0 || bytes > artifacts::max_artifact_bytes) {
        throw error(errors::store_constraint, fmt::format("{}: {} of {} bytes (1 to {} allowed)", store_name, what,
                                                          bytes, artifacts::max_artifact_bytes));
    }
}

} // namespace

void artifacts::put_flame_graph(std::string_view project, std::int64_t comparison_id, std::string_view benchmark,
                                std::string_view svg)
{
    check_artifact_size(impl_->name_, "a flame graph", svg.size());
    impl_->write([&](connection& c) {
        put_artifact_on(c, impl_->name_, project, comparison_id, benchmark, flame_graph_kind, svg);
    });
}

void artifacts::put_attribution(std::string_view project, std::int64_t comparison_id, std::string_view benchmark,
                                std::string_view attribution_json)
{
    check_artifact_size(impl_->name_, "an attribution", attribution_json.size());
    impl_->write([&](connection& c) {
        put_artifact_on(c, impl_->name_, project, comparison_id, benchmark, attribution_kind, attribution_json);
    });
}

std::optional<std::string> artifacts::load_flame_graph(std::string_view project, std::int64_t comparison_id,
                                                       std::string_view benchmark) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT a.content FROM comparison_artifacts a JOIN comparisons c ON c.id = a.comparison_id "
                           "JOIN projects p ON p.id = c.project_id "
                           "WHERE a.comparison_id = :id AND a.kind = :kind AND a.benchmark = :benchmark "
                           "AND p.name = :project");
    st.bind(":id", comparison_id)
        .bind(":kind", flame_graph_kind)
        .bind(":benchmark", benchmark)
        .bind(":project", project);
    if (!st.step()) return std::nullopt;
    return st.text(0);
}

std::vector<std::string> artifacts::flame_graph_benchmarks(std::string_view project, std::int64_t comparison_id) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare(
        "SELECT a.benchmark FROM comparison_artifacts a JOIN comparisons c ON c.id = a.comparison_id "
        "JOIN projects p ON p.id = c.project_id "
        "WHERE a.comparison_id = :id AND a.kind = :kind AND p.name = :project ORDER BY a.benchmark");
    st.bind(":id", comparison_id).bind(":kind", flame_graph_kind).bind(":project", project);
    std::vector<std::string> out;
    while (st.step()) out.push_back(st.text(0));
    return out;
}

std::vector<std::pair<std::string, std::string>> artifacts::load_attributions(std::string_view project,
                                                                              std::int64_t comparison_id) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare(
        "SELECT a.benchmark, a.content FROM comparison_artifacts a JOIN comparisons c ON c.id = a.comparison_id "
        "JOIN projects p ON p.id = c.project_id "
        "WHERE a.comparison_id = :id AND a.kind = :kind AND p.name = :project ORDER BY a.benchmark");
    st.bind(":id", comparison_id).bind(":kind", attribution_kind).bind(":project", project);
    std::vector<std::pair<std::string, std::string>> out;
    while (st.step()) out.emplace_back(st.text(0), st.text(1));
    return out;
}

} // namespace perfgate::store
