// The comparison report (design.md §4 "Report JSON") and its renderers.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/counters.hpp"
#include "gate/policy.hpp"

namespace perfgate::gate {

enum class status { unsupported, insufficient, regression, improvement, inconclusive, unchanged };
enum class verdict { pass, fail, inconclusive };
enum class method { exact, asymptotic, deterministic, welch };

struct side_summary {
    std::size_t n = 0;
    std::optional<double> mean, median, stddev, cov, min, max;
};

struct counter_report {
    std::string name, unit;
    better direction = better::lower;
    bool gated = false;
    status state = status::unsupported;
    std::optional<method> test;
    side_summary baseline, candidate;
    std::optional<double> delta_pct, shift, shift_pct;
    std::optional<std::pair<double, double>> shift_ci;
    std::optional<double> u, p_value, p_adjusted, mde_pct;
    double threshold_pct = default_threshold_pct;
    std::optional<double> running_pct_min;
    std::optional<double> z_score;
    bool anomaly = false;
    std::string reason;   // one line: why this status (for text/markdown details)
};

struct benchmark_report {
    std::string name;
    verdict result = verdict::pass;
    std::vector<counter_report> counters;
};

struct report {
    verdict result = verdict::pass;
    policy rules;
    std::vector<std::string> warnings;
    std::vector<benchmark_report> benchmarks;
    std::optional<std::int64_t> comparison_id;   // set by the service when stored

    // Counts over gated counters, for summaries.
    [[nodiscard]] std::size_t count(status s) const;
};

std::string_view to_string(status s);
std::string_view to_string(verdict v);
std::string_view to_string(method m);

// The contract: schema "perfgate.report/v1"; statistics that do not apply are null.
nlohmann::json to_json(const report& r);
report report_from_json(const nlohmann::json& j);

struct markdown_options {
    std::string title = "perfgate";
    std::string marker;            // hidden sticky-comment marker, emitted first if set
    std::string run_url;           // link to the CI run
    std::string comparison_url;    // link to the stored comparison
    std::size_t max_chars = 65536; // GitHub's comment body limit; details truncated to fit
};
// GitHub-flavoured markdown for a PR comment / job summary.
std::string render_markdown(const report& r, const markdown_options& opt = {});

// Terminal table; ANSI colour only when colour is true (the caller checks isatty).
std::string render_text(const report& r, bool colour);

} // namespace perfgate::gate
