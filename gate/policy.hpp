// Gate policy: defaults from docs/statistics.md, overridable per counter and per
// benchmark by a JSON policy file. Unknown keys are an error ("policy.unknown_key"),
// as are wrong types ("policy.bad_value"), and the message names the key path.
//
// Policy file:
// { "alpha": 0.05, "correction": "holm" | "bh" | "none", "threshold_pct": 2.0,
//   "min_samples": 5, "warn_samples": 9, "max_cov": 0.10,
//   "z_threshold": 3.0, "history": 30, "history_min": 5, "robust_z": false,
//   "fail_on_anomaly": false,
//   "counters":   { "task-clock": { "gate": true, "threshold_pct": 5, "max_cov": 0.2,
//                                   "better": "lower", "min_samples": 5 } },
//   "benchmarks": { "parse": { "threshold_pct": 3, "max_cov": 0.2, "min_samples": 5,
//                              "counters": { "page-faults": { "gate": true } } } },
//   "sequential": { "min_repetitions": 5, "block": 5, "max_repetitions": 60,
//                   "spending": "hsd" | "obrien-fleming" | "pocock" } }
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "capture/counters.hpp"
#include "stats/multiplicity.hpp"
#include "stats/sequential.hpp"

namespace perfgate::gate {

// Defaults (docs/statistics.md). min_samples 5 and warn below 9 as google/benchmark's
// compare.py (UTEST_MIN_REPETITIONS = 2 is its hard floor, 9 its optimum).
inline constexpr double default_alpha = 0.05;
inline constexpr double default_threshold_pct = 2.0;
inline constexpr std::size_t default_min_samples = 5;
inline constexpr std::size_t default_warn_samples = 9;
inline constexpr double default_max_cov = 0.10;
inline constexpr double default_z_threshold = 3.0;
inline constexpr std::size_t default_history = 30;
inline constexpr std::size_t default_history_min = 5;

struct counter_override {
    std::optional<bool> gate;
    std::optional<double> threshold_pct;
    std::optional<double> max_cov;
    std::optional<capture::better> direction;
    std::optional<std::size_t> min_samples;
};

struct benchmark_override {
    std::optional<double> threshold_pct;
    std::optional<double> max_cov;
    std::optional<std::size_t> min_samples;
    std::map<std::string, counter_override, std::less<>> counters;
};

// The rule for one benchmark/counter after applying overrides.
struct counter_rule {
    bool gated = false;
    double threshold_pct = default_threshold_pct;
    double max_cov = default_max_cov;
    capture::better direction = capture::better::lower;
    std::size_t min_samples = default_min_samples;
};

// Sequential sampling (perfgate run --budget / --max-repetitions; rule in
// stats/sequential.hpp and stats/SEQUENTIAL.md). When a policy has it, each
// gated counter with per-run samples is judged by the group-sequential test
// at looks after min_repetitions, min_repetitions + block, ...,
// max_repetitions per side, at alpha / m per counter for the m gated
// counters of the gate (Bonferroni), instead of one test at the end: a
// counter's first decision is final, and the looks a run did not reach were
// not taken. The samples say where the run stopped (see compare.hpp).
struct sequential_rule {
    std::size_t min_repetitions = 5;
    std::size_t block = 5;
    std::size_t max_repetitions = 60;
    // Hwang-Shih-DeCani at gamma -4 by default: with O'Brien-Fleming
    // spending a rank test cannot decide anything before 15 per side
    // (stats/SEQUENTIAL.md, the simulation's table).
    stats::spending spending = stats::spending::hwang_shih_decani;

    friend bool operator==(const sequential_rule&, const sequential_rule&) = default;
};

inline constexpr std::size_t max_sequential_repetitions = 100000;

struct policy {
    double alpha = default_alpha;
    stats::correction correction = stats::correction::holm;
    double threshold_pct = default_threshold_pct;
    std::size_t min_samples = default_min_samples;
    std::size_t warn_samples = default_warn_samples;
    double max_cov = default_max_cov;
    double z_threshold = default_z_threshold;
    std::size_t history = default_history;
    std::size_t history_min = default_history_min;
    bool robust_z = false;
    bool fail_on_anomaly = false;
    std::map<std::string, counter_override, std::less<>> counters;
    std::map<std::string, benchmark_override, std::less<>> benchmarks;
    std::optional<sequential_rule> sequential;

    // Benchmark override beats counter override beats what the input
    // declares (capture::counter_series::direction, ::gated) beats
    // registry/defaults.
    [[nodiscard]] counter_rule resolve(std::string_view benchmark, std::string_view counter,
                                       std::string_view perf_unit = {},
                                       std::optional<capture::better> declared_direction = {},
                                       std::optional<bool> declared_gate = {}) const;
};

// Parse a policy document; source names it in error messages.
policy parse_policy(const nlohmann::json& doc, std::string_view source);
policy load_policy(const std::filesystem::path& path);
nlohmann::json to_json(const policy& p);

std::string_view to_string(stats::correction c);
std::string_view to_string(stats::spending s);
std::optional<stats::spending> parse_spending(std::string_view s);

} // namespace perfgate::gate
