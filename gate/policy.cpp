#include "gate/policy.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/json_file.hpp"
#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::gate {

namespace {

using nlohmann::json;

// Parse limits: a policy also arrives in the body of a compare request.
// The z-score of a counter reads its last `history` baseline runs, one store
// query per counter of the gate; the default is 30 (docs/report.md), and 1000 nightly
// runs span three years. The bound keeps one compare's history reads under
// 1000 rows per counter (it was 100000).
constexpr std::size_t max_history = 1000;
// Entries of one override map (counters, benchmarks, a benchmark's
// counters): a real policy names a few dozen; each becomes part of every
// report (and stored comparison) made with the policy.
constexpr std::size_t max_overrides = 1000;

void check_override_count(const json& obj, std::string_view source, const std::string& path)
{
    if (obj.is_object() && obj.size() > max_overrides) {
        throw error(errors::policy_too_large,
                    fmt::format("{}: {}: {} entries; at most {} per map", source, path, obj.size(), max_overrides));
    }
}

[[noreturn]] void bad_value(std::string_view source, std::string_view path, std::string_view expected)
{
    throw error(errors::policy_bad_value, fmt::format("{}: {}: expected {}", source, path, expected));
}

double get_number(const json& v, std::string_view source, const std::string& path, double lo, double hi)
{
    if (!v.is_number()) bad_value(source, path, fmt::format("a number in [{}, {}]", lo, hi));
    double d = v.get<double>();
    if (!(d >= lo && d <= hi)) bad_value(source, path, fmt::format("a number in [{}, {}], got {}", lo, hi, d));
    return d;
}

std::size_t get_count(const json& v, std::string_view source, const std::string& path, std::size_t lo, std::size_t hi)
{
    if (!v.is_number_unsigned()) bad_value(source, path, fmt::format("an integer in [{}, {}]", lo, hi));
    auto n = v.get<std::size_t>();
    if (n < lo || n > hi) bad_value(source, path, fmt::format("an integer in [{}, {}], got {}", lo, hi, n));
    return n;
}

bool get_bool(const json& v, std::string_view source, const std::string& path)
{
    if (!v.is_boolean()) bad_value(source, path, "true or false");
    return v.get<bool>();
}

const json& as_object(const json& v, std::string_view source, const std::string& path)
{
    if (!v.is_object()) bad_value(source, path, "an object");
    return v;
}

[[noreturn]] void unknown_key(std::string_view source, const std::string& path, std::string_view allowed)
{
    throw error(errors::policy_unknown_key, fmt::format("{}: unknown key '{}' (allowed: {})", source, path, allowed));
}

// Shared by counter-level settings at the top level and per benchmark.
counter_override parse_counter(const json& obj, std::string_view source, const std::string& path)
{
    counter_override c;
    for (const auto& [key, v] : as_object(obj, source, path).items()) {
        const std::string p = path + "." + key;
        if (key == "gate") c.gate = get_bool(v, source, p);
        else if (key == "threshold_pct") c.threshold_pct = get_number(v, source, p, 0, 1e6);
        else if (key == "max_cov") c.max_cov = get_number(v, source, p, 0, 1e6);
        else if (key == "min_samples") c.min_samples = get_count(v, source, p, 1, 1000000);
        else if (key == "better") {
            auto b = v.is_string() ? capture::parse_better(v.get<std::string>()) : std::nullopt;
            if (!b) bad_value(source, p, "\"lower\" or \"higher\"");
            c.direction = b;
        } else unknown_key(source, p, "gate, threshold_pct, max_cov, min_samples, better");
    }
    return c;
}

std::map<std::string, counter_override, std::less<>> parse_counters(const json& obj, std::string_view source,
                                                                    const std::string& path)
{
    std::map<std::string, counter_override, std::less<>> out;
    check_override_count(obj, source, path);
    for (const auto& [name, v] : as_object(obj, source, path).items()) {
        out.emplace(name, parse_counter(v, source, path + "." + name));
    }
    return out;
}

sequential_rule parse_sequential(const json& obj, std::string_view source, const std::string& path)
{
    sequential_rule r;
    for (const auto& [key, v] : as_object(obj, source, path).items()) {
        const std::string p = path + "." + key;
        if (key == "min_repetitions") r.min_repetitions = get_count(v, source, p, 2, max_sequential_repetitions);
        else if (key == "block") r.block = get_count(v, source, p, 1, max_sequential_repetitions);
        else if (key == "max_repetitions") r.max_repetitions = get_count(v, source, p, 2, max_sequential_repetitions);
        else if (key == "spending") {
            auto s = v.is_string() ? parse_spending(v.get<std::string>()) : std::nullopt;
            if (!s) bad_value(source, p, "\"hsd\", \"obrien-fleming\" or \"pocock\"");
            r.spending = *s;
        } else unknown_key(source, p, "min_repetitions, block, max_repetitions, spending");
    }
    if (r.max_repetitions < r.min_repetitions) {
        bad_value(source, path + ".max_repetitions",
                  fmt::format("at least min_repetitions ({}), got {}", r.min_repetitions, r.max_repetitions));
    }
    // The plan's looks: at most stats::sequential_max_looks of them.
    const std::size_t looks = 1 + (r.max_repetitions - r.min_repetitions + r.block - 1) / r.block;
    if (looks > stats::sequential_max_looks) {
        bad_value(source, path + ".block",
                  fmt::format("a block that makes at most {} looks from {} to {} repetitions, got {} ({} looks)",
                              stats::sequential_max_looks, r.min_repetitions, r.max_repetitions, r.block, looks));
    }
    return r;
}

} // namespace

std::string_view to_string(stats::spending s)
{
    switch (s) {
    case stats::spending::obrien_fleming: return "obrien-fleming";
    case stats::spending::pocock: return "pocock";
    case stats::spending::hwang_shih_decani: return "hsd";
    }
    return "hsd";
}

std::optional<stats::spending> parse_spending(std::string_view s)
{
    if (s == "hsd") return stats::spending::hwang_shih_decani;
    if (s == "obrien-fleming") return stats::spending::obrien_fleming;
    if (s == "pocock") return stats::spending::pocock;
    return std::nullopt;
}

std::string_view to_string(stats::correction c)
{
    switch (c) {
    case stats::correction::holm: return "holm";
    case stats::correction::bh: return "bh";
    case stats::correction::none: return "none";
    }
    return "holm";
}

counter_rule policy::resolve(std::string_view benchmark, std::string_view counter, std::string_view perf_unit,
                             std::optional<capture::better> declared_direction, std::optional<bool> declared_gate) const
{
    const capture::counter_traits traits = capture::lookup_counter(counter, perf_unit);
    counter_rule r{declared_gate.value_or(traits.gated), threshold_pct, max_cov,
                   declared_direction.value_or(traits.direction), min_samples};
    auto apply = [&r](const counter_override& o) {
        if (o.gate) r.gated = *o.gate;
        if (o.threshold_pct) r.threshold_pct = *o.threshold_pct;
        if (o.max_cov) r.max_cov = *o.max_cov;
        if (o.direction) r.direction = *o.direction;
        if (o.min_samples) r.min_samples = *o.min_samples;
    };
    if (auto it = counters.find(counter); it != counters.end()) apply(it->second);
    if (auto b = benchmarks.find(benchmark); b != benchmarks.end()) {
        const benchmark_override& bo = b->second;
        if (bo.threshold_pct) r.threshold_pct = *bo.threshold_pct;
        if (bo.max_cov) r.max_cov = *bo.max_cov;
        if (bo.min_samples) r.min_samples = *bo.min_samples;
        if (auto it = bo.counters.find(counter); it != bo.counters.end()) apply(it->second);
    }
    return r;
}

policy parse_policy(const nlohmann::json& doc, std::string_view source)
{
    policy p;
    for (const auto& [key, v] : as_object(doc, source, "$").items()) {
        const std::string path = key;
        if (key == "alpha") p.alpha = get_number(v, source, path, 1e-12, 0.5);
        else if (key == "correction") {
            const std::string s = v.is_string() ? v.get<std::string>() : std::string();
            if (s == "holm") p.correction = stats::correction::holm;
            else if (s == "bh") p.correction = stats::correction::bh;
            else if (s == "none") p.correction = stats::correction::none;
            else bad_value(source, path, "\"holm\", \"bh\" or \"none\"");
        } else if (key == "threshold_pct") p.threshold_pct = get_number(v, source, path, 0, 1e6);
        else if (key == "min_samples") p.min_samples = get_count(v, source, path, 1, 1000000);
        else if (key == "warn_samples") p.warn_samples = get_count(v, source, path, 1, 1000000);
        else if (key == "max_cov") p.max_cov = get_number(v, source, path, 0, 1e6);
        else if (key == "z_threshold") p.z_threshold = get_number(v, source, path, 0, 1e6);
        else if (key == "history") p.history = get_count(v, source, path, 2, max_history);
        else if (key == "history_min") p.history_min = get_count(v, source, path, 2, max_history);
        else if (key == "robust_z") p.robust_z = get_bool(v, source, path);
        else if (key == "fail_on_anomaly") p.fail_on_anomaly = get_bool(v, source, path);
        else if (key == "counters") p.counters = parse_counters(v, source, path);
        else if (key == "sequential") p.sequential = parse_sequential(v, source, path);
        else if (key == "benchmarks") {
            check_override_count(v, source, path);
            for (const auto& [bname, bv] : as_object(v, source, path).items()) {
                benchmark_override bo;
                const std::string bpath = path + "." + bname;
                for (const auto& [bkey, bval] : as_object(bv, source, bpath).items()) {
                    const std::string kpath = bpath + "." + bkey;
                    if (bkey == "threshold_pct") bo.threshold_pct = get_number(bval, source, kpath, 0, 1e6);
                    else if (bkey == "max_cov") bo.max_cov = get_number(bval, source, kpath, 0, 1e6);
                    else if (bkey == "min_samples") bo.min_samples = get_count(bval, source, kpath, 1, 1000000);
                    else if (bkey == "counters") bo.counters = parse_counters(bval, source, kpath);
                    else unknown_key(source, kpath, "threshold_pct, max_cov, min_samples, counters");
                }
                p.benchmarks.emplace(bname, std::move(bo));
            }
        } else {
            unknown_key(source, path,
                        "alpha, correction, threshold_pct, min_samples, warn_samples, max_cov, z_threshold, "
                        "history, history_min, robust_z, fail_on_anomaly, counters, benchmarks, sequential");
        }
    }
    return p;
}

policy load_policy(const std::filesystem::path& path)
{
    std::stringstream ss(model::read_text_file(path));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(ss.str());
    } catch (const nlohmann::json::parse_error& e) {
        throw error(errors::policy_bad_json,
                    fmt::format("{}:{}: not valid JSON: {}", path.string(), json_error_line(ss.str(), e), e.what()));
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond double range (1e400): an input error, not a bug.
        throw error(errors::policy_bad_json,
                    fmt::format("{}:{}: {}", path.string(), json_error_line(ss.str(), e), e.what()));
    }
    return parse_policy(doc, path.string());
}

nlohmann::json to_json(const policy& p)
{
    json j = {{"alpha", p.alpha},
              {"correction", to_string(p.correction)},
              {"threshold_pct", p.threshold_pct},
              {"min_samples", p.min_samples},
              {"warn_samples", p.warn_samples},
              {"max_cov", p.max_cov},
              {"z_threshold", p.z_threshold},
              {"history", p.history},
              {"history_min", p.history_min},
              {"robust_z", p.robust_z},
              {"fail_on_anomaly", p.fail_on_anomaly}};
    auto counter_json = [](const counter_override& c) {
        json o = json::object();
        if (c.gate) o["gate"] = *c.gate;
        if (c.threshold_pct) o["threshold_pct"] = *c.threshold_pct;
        if (c.max_cov) o["max_cov"] = *c.max_cov;
        if (c.min_samples) o["min_samples"] = *c.min_samples;
        if (c.direction) o["better"] = to_string(*c.direction);
        return o;
    };
    if (!p.counters.empty()) {
        json cs = json::object();
        for (const auto& [n, c] : p.counters) cs[n] = counter_json(c);
        j["counters"] = cs;
    }
    if (!p.benchmarks.empty()) {
        json bs = json::object();
        for (const auto& [n, b] : p.benchmarks) {
            json o = json::object();
            if (b.threshold_pct) o["threshold_pct"] = *b.threshold_pct;
            if (b.max_cov) o["max_cov"] = *b.max_cov;
            if (b.min_samples) o["min_samples"] = *b.min_samples;
            if (!b.counters.empty()) {
                json cs = json::object();
                for (const auto& [cn, c] : b.counters) cs[cn] = counter_json(c);
                o["counters"] = cs;
            }
            bs[n] = o;
        }
        j["benchmarks"] = bs;
    }
    if (p.sequential) {
        j["sequential"] = {{"min_repetitions", p.sequential->min_repetitions},
                           {"block", p.sequential->block},
                           {"max_repetitions", p.sequential->max_repetitions},
                           {"spending", to_string(p.sequential->spending)}};
    }
    return j;
}

} // namespace perfgate::gate
