#include "report/qualification.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "report/format.hpp"

namespace perfgate::report {

using nlohmann::json;

namespace {

bool sane_figure(const std::optional<double>& v) { return !v || (std::isfinite(*v) && *v >= 0); }

bool sane_counter(const model::qualified_counter& c)
{
    return std::isfinite(c.threshold_pct) && c.threshold_pct > 0 && sane_figure(c.detects_80_pct) &&
           sane_figure(c.detects_95_pct);
}

// The newest qualification of (fingerprint, benchmark) in stored; nullptr when none.
const model::qualification* newest_of(const std::vector<model::qualification>& stored, const std::string& fingerprint,
                                      const std::string& benchmark)
{
    const model::qualification* best = nullptr;
    for (const auto& q : stored) {
        if (q.testbed_fingerprint != fingerprint || q.benchmark != benchmark) continue;
        if (!best || std::pair(q.qualified_at, q.stored_at) > std::pair(best->qualified_at, best->stored_at)) best = &q;
    }
    return best;
}

// q with only the counters b gates (and sane figures), and the advice on them.
model::qualification gated_part(const model::qualification& q, const gate::benchmark_report& b,
                                std::vector<model::qualification_advice>& advice)
{
    model::qualification kept = q;
    kept.counters.clear();
    for (const auto& c : b.counters) {
        if (!c.gated) continue;
        const auto found = std::find_if(q.counters.begin(), q.counters.end(),
                                        [&](const model::qualified_counter& qc) { return qc.counter == c.name; });
        if (found == q.counters.end() || !sane_counter(*found)) continue;
        kept.counters.push_back(*found);
        if (auto a = model::advice_for(q, *found, c.threshold_pct)) advice.push_back(std::move(*a));
    }
    return kept;
}

json figure(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> opt_figure(const json& j, const char* key)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<double>();
}

} // namespace

void attach_qualifications(gate::report& r, const std::string& fingerprint,
                           const std::vector<model::qualification>& stored)
{
    r.qualification.reset();
    r.advice.clear();
    model::testbed_qualifications found{fingerprint, {}};
    for (const auto& b : r.benchmarks) {
        const model::qualification* q = newest_of(stored, fingerprint, b.name);
        if (!q) continue;
        model::qualification kept = gated_part(*q, b, r.advice);
        if (!kept.counters.empty()) found.benchmarks.push_back(std::move(kept));
    }
    if (!found.benchmarks.empty()) r.qualification = std::move(found);
}

json qualification_json(const model::testbed_qualifications& q, std::size_t compared)
{
    json benchmarks = json::array();
    for (const auto& b : q.benchmarks) {
        json counters = json::array();
        for (const auto& c : b.counters) {
            counters.push_back({{"counter", c.counter},
                                {"threshold_pct", c.threshold_pct},
                                {"detects_80_pct", figure(c.detects_80_pct)},
                                {"detects_95_pct", figure(c.detects_95_pct)},
                                {"reaches_threshold", c.reaches_threshold},
                                {"deterministic", c.deterministic}});
        }
        benchmarks.push_back({{"benchmark", b.benchmark},
                              {"testbed", b.testbed},
                              {"backend", b.backend},
                              {"qualified_at", b.qualified_at},
                              {"date", detail::iso_date_time(b.qualified_at)},
                              {"counters", std::move(counters)}});
    }
    return {{"testbed_fingerprint", q.testbed_fingerprint},
            {"line", model::qualification_line(q, compared)},
            {"benchmarks", std::move(benchmarks)}};
}

json advice_json(const std::vector<model::qualification_advice>& advice)
{
    json out = json::array();
    for (const auto& a : advice) {
        out.push_back({{"benchmark", a.benchmark},
                       {"counter", a.counter},
                       {"threshold_pct", a.threshold_pct},
                       {"detectable_pct", figure(a.detectable_pct)},
                       {"qualified_at", a.qualified_at},
                       {"message", a.message}});
    }
    return out;
}

namespace {

model::testbed_qualifications qualification_from_json(const json& j)
{
    model::testbed_qualifications q;
    q.testbed_fingerprint = j.at("testbed_fingerprint").get<std::string>();
    for (const json& jb : j.at("benchmarks")) {
        model::qualification b;
        b.testbed_fingerprint = q.testbed_fingerprint;
        b.benchmark = jb.at("benchmark").get<std::string>();
        b.testbed = jb.value("testbed", std::string());
        b.backend = jb.value("backend", std::string());
        b.qualified_at = jb.at("qualified_at").get<std::int64_t>();
        for (const json& jc : jb.at("counters")) {
            b.counters.push_back({jc.at("counter").get<std::string>(), jc.at("threshold_pct").get<double>(),
                                  opt_figure(jc, "detects_80_pct"), opt_figure(jc, "detects_95_pct"),
                                  jc.value("reaches_threshold", false), jc.value("deterministic", false)});
        }
        q.benchmarks.push_back(std::move(b));
    }
    return q;
}

std::vector<model::qualification_advice> advice_from_json(const json& j)
{
    std::vector<model::qualification_advice> out;
    for (const json& ja : j) {
        out.push_back({ja.at("benchmark").get<std::string>(), ja.at("counter").get<std::string>(),
                       ja.at("threshold_pct").get<double>(), opt_figure(ja, "detectable_pct"),
                       ja.at("qualified_at").get<std::int64_t>(), ja.at("message").get<std::string>()});
    }
    return out;
}

} // namespace

void read_qualification(const json& report, gate::report& r)
{
    if (auto it = report.find("qualification"); it != report.end() && !it->is_null())
        r.qualification = qualification_from_json(*it);
    if (auto it = report.find("advice"); it != report.end() && !it->is_null()) r.advice = advice_from_json(*it);
}

} // namespace perfgate::report
