// Stored qualifications (service::service::qualifications(); bodies in
// service/qualifications.cpp; docs/http-api.md "Qualifications", docs/cli.md
// "perfgate qualify"): what perfgate qualify found a gate on a testbed sees
// of a benchmark.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/qualification.hpp"
#include "model/token_scope.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class qualifications {
public:
    explicit qualifications(detail::service_impl& s) noexcept : impl_(&s) {}
    qualifications(const qualifications&) = delete;
    qualifications& operator=(const qualifications&) = delete;

    // Checks q and stores it for its testbed and benchmark; the stored row
    // (id, stored_at and written_by set). Errors (nothing stored):
    // "ingest.bad_field" naming the field: testbed_fingerprint, benchmark,
    // backend or a counter name empty, any text over
    // model::max_qualification_text_bytes or not one clean line;
    // qualified_at not positive; counters empty, over
    // model::max_qualified_counters or a name twice; a threshold_pct not a
    // finite positive number or a detects_*_pct not finite and >= 0.
    // "project.not_found".
    // by: the server token that asks (nullopt: the CLI on a database).
    model::qualification add(const std::string& project, model::qualification q,
                             const std::optional<model::token_ref>& by = std::nullopt);
    // store::qualifications::newest: the newest of each (testbed,
    // benchmark), filtered by a non-empty testbed fingerprint or benchmark.
    // "project.not_found".
    [[nodiscard]] std::vector<model::qualification> newest(const std::string& project, std::string_view testbed = {},
                                                           std::string_view benchmark = {}) const;

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
