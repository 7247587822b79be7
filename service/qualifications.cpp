// Stored qualifications (perfgate qualify --server/--db): checked here,
// stored by store::qualifications.
#include "service/service_impl.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "model/error.hpp"
#include "service/text.hpp"
#include "store/qualifications.hpp"

namespace perfgate::service {

namespace {

void check_qualification_text(std::string_view field, std::string_view value, bool may_be_empty)
{
    if (value.empty() && !may_be_empty) {
        throw error(errors::ingest_bad_field, fmt::format("field '{}': must not be empty", field));
    }
    if (value.size() > model::max_qualification_text_bytes) {
        throw error(errors::ingest_bad_field, fmt::format("field '{}': {} bytes, over the limit of {}", field,
                                                          value.size(), model::max_qualification_text_bytes));
    }
    check_stored_text(errors::ingest_bad_field, field, value);
}

void check_percent(std::string_view field, std::optional<double> v, bool positive)
{
    if (!v) return;
    if (!std::isfinite(*v) || *v < 0 || (positive && *v == 0)) {
        throw error(errors::ingest_bad_field, fmt::format("field '{}': expected a finite {} number of percent, got {}",
                                                          field, positive ? "positive" : "non-negative", *v));
    }
}

void check_qualification(const model::qualification& q)
{
    check_qualification_text("testbed_fingerprint", q.testbed_fingerprint, false);
    check_qualification_text("testbed", q.testbed, true);
    check_qualification_text("benchmark", q.benchmark, false);
    check_qualification_text("backend", q.backend, false);
    if (q.qualified_at <= 0) {
        throw error(errors::ingest_bad_field,
                    fmt::format("field 'date': expected a time after 1970, got {} unix seconds", q.qualified_at));
    }
    if (q.counters.empty() || q.counters.size() > model::max_qualified_counters) {
        throw error(errors::ingest_bad_field, fmt::format("field 'counters': expected 1 to {} counters, got {}",
                                                          model::max_qualified_counters, q.counters.size()));
    }
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < q.counters.size(); ++i) {
        const auto& c = q.counters[i];
        const auto field = [&](std::string_view name) { return fmt::format("counters[{}].{}", i, name); };
        check_qualification_text(field("counter"), c.counter, false);
        if (!seen.insert(c.counter).second) {
            throw error(errors::ingest_bad_field,
                        fmt::format("field '{}': counter '{}' is named twice", field("counter"), c.counter));
        }
        check_percent(field("threshold_pct"), c.threshold_pct, true);
        check_percent(field("detects_80_pct"), c.detects_80_pct, false);
        check_percent(field("detects_95_pct"), c.detects_95_pct, false);
    }
}

} // namespace

model::qualification detail::service_impl::store_qualification(const std::string& project, model::qualification q,
                                                               const std::optional<model::token_ref>& by)
{
    require_project(project);
    check_qualification(q);
    return db_.qualifications().add(project, std::move(q), by);
}

std::vector<model::qualification> detail::service_impl::qualifications(const std::string& project,
                                                                       std::string_view testbed,
                                                                       std::string_view benchmark) const
{
    require_project(project);
    return db_.qualifications().newest(project, testbed, benchmark);
}

model::qualification qualifications::add(const std::string& project, model::qualification q,
                                         const std::optional<model::token_ref>& by)
{
    return impl_->store_qualification(project, std::move(q), by);
}

std::vector<model::qualification> qualifications::newest(const std::string& project, std::string_view testbed,
                                                         std::string_view benchmark) const
{
    return impl_->qualifications(project, testbed, benchmark);
}

} // namespace perfgate::service
