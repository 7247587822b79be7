// Flame graphs and attributions stored with a comparison (service.hpp; the
// table: store/migrations/007_artifacts.sql, 012_attribution_artifacts.sql).
#include "service/service_impl.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "capture/names.hpp"
#include "model/error.hpp"
#include "report/render.hpp"
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"

namespace perfgate::service {

namespace {

// Every byte sequence valid UTF-8 (the store keeps SVGs as text).
bool valid_utf8(std::string_view s)
{
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        if (len == 0 || i + len > s.size()) return false;
        for (std::size_t k = 1; k < len; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return false;
        }
        i += len;
    }
    return true;
}

// What the dashboard can show: an SVG document. Its content is not trusted
// beyond that: the server serves it with a sandboxing Content-Security-Policy
// (no script runs), in a sandboxed frame of the comparison page.
void check_svg(std::string_view svg)
{
    if (svg.size() > max_flame_graph_bytes) {
        throw error(errors::artifact_too_large,
                    fmt::format("a flame graph of {} bytes is larger than this server's limit of {} bytes ({} MiB)",
                                svg.size(), max_flame_graph_bytes, max_flame_graph_bytes >> 20));
    }
    if (!valid_utf8(svg)) throw error(errors::artifact_bad_svg, "the flame graph is not UTF-8 text");
    const auto start = svg.find_first_not_of(" \t\r\n");
    const auto head = start == std::string_view::npos ? std::string_view{} : svg.substr(start);
    if (!head.starts_with("<svg") && !head.starts_with("<?xml")) {
        throw error(errors::artifact_bad_svg,
                    "the flame graph is not an SVG document (it does not start with <svg or <?xml)");
    }
    if (svg.find("<svg") == std::string_view::npos)
        throw error(errors::artifact_bad_svg, "the flame graph has no <svg element");
}

// An uploaded attribution read back as the report's object, within the
// limits; what is wrong is named.
gate::attribution checked_attribution(std::string_view text)
{
    if (text.size() > max_attribution_bytes) {
        throw error(errors::artifact_too_large,
                    fmt::format("an attribution of {} bytes is larger than this server's limit of {} bytes ({} KiB)",
                                text.size(), max_attribution_bytes, max_attribution_bytes >> 10));
    }
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        throw error(errors::artifact_bad_attribution, fmt::format("the attribution is not JSON: {}", e.what()));
    }
    gate::attribution a;
    try {
        a = report::attribution_from_json(j);
    } catch (const error& e) {
        throw error(errors::artifact_bad_attribution, e.what());
    }
    const auto check_rows = [](std::string_view source, std::size_t rows) {
        if (rows > max_attribution_functions) {
            throw error(errors::artifact_bad_attribution,
                        fmt::format("the attribution's {}.top has {} rows; this server keeps at most {}", source, rows,
                                    max_attribution_functions));
        }
    };
    if (a.callgrind) check_rows("callgrind", a.callgrind->top.size());
    if (a.perf) check_rows("perf", a.perf->top.size());
    if (a.memory) check_rows("memory", a.memory->top.size());
    if (a.errors.size() > max_attribution_functions) {
        throw error(errors::artifact_bad_attribution,
                    fmt::format("the attribution has {} errors; this server keeps at most {}", a.errors.size(),
                                max_attribution_functions));
    }
    if (!a.callgrind && !a.perf && !a.memory && a.errors.empty()) {
        throw error(errors::artifact_bad_attribution,
                    "the attribution is empty: it needs a 'callgrind', 'perf' or 'memory' member, or 'errors'");
    }
    return a;
}

} // namespace

void detail::service_impl::require_benchmark(const std::string& project, std::int64_t comparison_id,
                                             const std::string& benchmark) const
{
    const auto stored = db_.comparisons().load(project, comparison_id);
    if (!stored) {
        throw error(errors::comparison_not_found,
                    fmt::format("no comparison {} in project '{}'", comparison_id, project));
    }
    const auto r = report::report_from_json(nlohmann::json::parse(*stored));
    const bool has = std::any_of(r.benchmarks.begin(), r.benchmarks.end(),
                                 [&](const gate::benchmark_report& b) { return b.name == benchmark; });
    if (!has) {
        throw error(errors::artifact_bad_benchmark,
                    fmt::format("comparison {} has no benchmark '{}'", comparison_id, benchmark));
    }
}

void detail::service_impl::store_attribution(const std::string& project, std::int64_t comparison_id,
                                             const std::string& benchmark, std::string_view attribution_json)
{
    capture::validate_name("benchmark", benchmark);
    const gate::attribution a = checked_attribution(attribution_json);
    require_benchmark(project, comparison_id, benchmark);
    try {
        db_.artifacts().put_attribution(project, comparison_id, benchmark,
                                        report::to_json(a).dump(-1, ' ', false,
                                                                nlohmann::json::error_handler_t::replace));
    } catch (const error& e) {
        if (e.id() != errors::store_not_found) throw;
        throw error(errors::comparison_not_found,
                    fmt::format("no comparison {} in project '{}'", comparison_id, project));
    }
}

void detail::service_impl::store_flame_graph(const std::string& project, std::int64_t comparison_id,
                                             const std::string& benchmark, std::string_view svg)
{
    capture::validate_name("benchmark", benchmark);
    check_svg(svg);
    require_benchmark(project, comparison_id, benchmark);
    try {
        db_.artifacts().put_flame_graph(project, comparison_id, benchmark, svg);
    } catch (const error& e) {
        if (e.id() != errors::store_not_found) throw;
        throw error(errors::comparison_not_found,
                    fmt::format("no comparison {} in project '{}'", comparison_id, project));
    }
}

std::optional<std::string> detail::service_impl::flame_graph(const std::string& project, std::int64_t comparison_id,
                                                             const std::string& benchmark) const
{
    capture::validate_name("benchmark", benchmark);
    return db_.artifacts().load_flame_graph(project, comparison_id, benchmark);
}

std::vector<std::string> detail::service_impl::flame_graph_benchmarks(const std::string& project,
                                                                      std::int64_t comparison_id) const
{
    return db_.artifacts().flame_graph_benchmarks(project, comparison_id);
}

} // namespace perfgate::service
