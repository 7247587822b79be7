// The report JSON tree (report/render.hpp): to_json and its parse back,
// report_from_json, and the "attribution" object alone.
#include "report/render.hpp"

#include <cmath>

#include <fmt/format.h>

#include "gate/noise.hpp"
#include "model/error.hpp"
#include "report/format.hpp"
#include "report/qualification.hpp"

namespace perfgate::report {

using nlohmann::json;
using namespace gate;

namespace {

// JSON has no infinity or NaN: a statistic that is not finite is null
// ("statistics that do not apply are null, never invented").
json num(const std::optional<double>& v)
{
    if (!v || !std::isfinite(*v)) return nullptr;
    return *v;
}

json side_json(const side_summary& s)
{
    return {{"n", s.n},          {"mean", num(s.mean)}, {"median", num(s.median)}, {"stddev", num(s.stddev)},
            {"cov", num(s.cov)}, {"min", num(s.min)},   {"max", num(s.max)}};
}

std::optional<double> opt_num(const json& j, const char* key)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<double>();
}

side_summary side_from_json(const json& j)
{
    side_summary s;
    s.n = j.value("n", std::size_t{0});
    s.mean = opt_num(j, "mean");
    s.median = opt_num(j, "median");
    s.stddev = opt_num(j, "stddev");
    s.cov = opt_num(j, "cov");
    s.min = opt_num(j, "min");
    s.max = opt_num(j, "max");
    return s;
}

// History context (report.hpp): null when the report was made without it.
json open_alerts_json(const std::optional<std::vector<open_alert>>& alerts)
{
    if (!alerts) return nullptr;
    json out = json::array();
    for (const auto& a : *alerts) {
        out.push_back({{"id", a.id},
                       {"status", model::to_string(a.state)},
                       {"delta_pct", num(a.delta_pct)},
                       {"run_id", a.run_id},
                       {"git_sha", a.git_sha}});
    }
    return out;
}

json band_json(const std::optional<history_band>& b)
{
    if (!b || !std::isfinite(b->lo) || !std::isfinite(b->hi)) return nullptr;
    return {{"lo", b->lo},
            {"hi", b->hi},
            {"n", b->n},
            {"since_run", b->since_run ? json(*b->since_run) : json(nullptr)}};
}

std::optional<std::vector<open_alert>> open_alerts_from_json(const json& jc)
{
    auto it = jc.find("open_alerts");
    if (it == jc.end() || it->is_null()) return std::nullopt;
    std::vector<open_alert> out;
    for (const auto& ja : it->get_ref<const json::array_t&>()) {
        open_alert a;
        a.id = ja.at("id").get<std::int64_t>();
        const auto state = ja.at("status").get<std::string>();
        const auto parsed = model::parse_alert_status(state);
        if (!parsed)
            throw error(errors::input_bad_report, fmt::format("report JSON: unknown alert status '{}'", state));
        a.state = *parsed;
        a.delta_pct = opt_num(ja, "delta_pct");
        a.run_id = ja.value("run_id", std::int64_t{0});
        a.git_sha = ja.value("git_sha", std::string());
        out.push_back(std::move(a));
    }
    return out;
}

std::optional<history_band> band_from_json(const json& jc)
{
    auto it = jc.find("band");
    if (it == jc.end() || it->is_null()) return std::nullopt;
    history_band b;
    b.lo = it->at("lo").get<double>();
    b.hi = it->at("hi").get<double>();
    b.n = it->value("n", std::size_t{0});
    if (auto since = it->find("since_run"); since != it->end() && !since->is_null()) {
        b.since_run = since->get<std::int64_t>();
    }
    return b;
}

template <typename E, std::size_t N>
E parse_enum(const std::string& s, const E (&all)[N], const char* field)
{
    for (E e : all) {
        if (to_string(e) == s) return e;
    }
    throw error(errors::input_bad_report, fmt::format("report JSON: unknown {} '{}'", field, s));
}

constexpr status all_status[] = {status::unsupported, status::insufficient, status::regression,
                                 status::improvement, status::inconclusive, status::unchanged};
constexpr verdict all_verdicts[] = {verdict::pass, verdict::fail, verdict::inconclusive};
constexpr method all_methods[] = {method::exact, method::asymptotic, method::deterministic, method::welch};

json sequential_json(const std::optional<sequential_report>& s)
{
    if (!s) return nullptr;
    json ci = nullptr;
    if (s->ci_pct && std::isfinite(s->ci_pct->first) && std::isfinite(s->ci_pct->second)) {
        ci = json::array({s->ci_pct->first, s->ci_pct->second});
    }
    return {{"look", s->look},
            {"looks", s->looks},
            {"n", s->n},
            {"alpha", s->alpha},
            {"level", s->level},
            {"equivalence_level", s->equivalence_level},
            {"p_one_sided", s->p_one_sided},
            {"ci_pct", ci},
            {"ended_early", s->ended_early}};
}

std::optional<sequential_report> sequential_from_json(const json& jc)
{
    auto it = jc.find("sequential");
    if (it == jc.end() || it->is_null()) return std::nullopt;
    sequential_report s;
    s.look = it->at("look").get<std::size_t>();
    s.looks = it->at("looks").get<std::size_t>();
    s.n = it->at("n").get<std::size_t>();
    s.alpha = it->at("alpha").get<double>();
    s.level = it->at("level").get<double>();
    s.p_one_sided = it->at("p_one_sided").get<double>();
    s.equivalence_level = it->value("equivalence_level", 0.0); // added: absent in older reports
    if (auto ci = it->find("ci_pct"); ci != it->end() && ci->is_array() && ci->size() == 2) {
        s.ci_pct = std::pair{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
    }
    s.ended_early = it->value("ended_early", false);
    return s;
}

// Present only in benchmarks not measured interleaved (report.hpp).
json between_runs_json(const between_runs_report& b)
{
    json ci = nullptr;
    if (b.ci_pct && std::isfinite(b.ci_pct->first) && std::isfinite(b.ci_pct->second)) {
        ci = json::array({b.ci_pct->first, b.ci_pct->second});
    }
    return {{"history_runs", b.history_runs}, {"sd", num(b.sd)}, {"se", num(b.se)}, {"df", num(b.df)}, {"t", num(b.t)},
            {"p_value", num(b.p_value)},      {"ci_pct", ci}};
}

std::optional<between_runs_report> between_runs_from_json(const json& jc)
{
    auto it = jc.find("between_runs");
    if (it == jc.end() || it->is_null()) return std::nullopt;
    between_runs_report b;
    b.history_runs = it->value("history_runs", std::size_t{0});
    b.sd = opt_num(*it, "sd");
    b.se = opt_num(*it, "se");
    b.df = opt_num(*it, "df");
    b.t = opt_num(*it, "t");
    b.p_value = opt_num(*it, "p_value");
    if (auto ci = it->find("ci_pct"); ci != it->end() && ci->is_array() && ci->size() == 2) {
        b.ci_pct = std::pair{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
    }
    return b;
}

// Attribution (report.hpp): optional members are absent, not null, when
// empty (the contract of the "attribution" object).
json change_json(const function_change& c)
{
    json j = {{"name", c.name},   {"file", c.file},   {"before", c.before},
              {"after", c.after}, {"delta", c.delta}, {"share", c.share}};
    if (c.interval) j["interval"] = json::array({c.interval->first, c.interval->second});
    if (c.significant) j["significant"] = *c.significant;
    return j;
}

function_change change_from_json(const json& j)
{
    function_change c;
    c.name = j.at("name").get<std::string>();
    c.file = j.value("file", std::string());
    c.before = j.at("before").get<double>();
    c.after = j.at("after").get<double>();
    c.delta = j.at("delta").get<double>();
    c.share = j.value("share", 0.0);
    if (auto it = j.find("interval"); it != j.end() && !it->is_null()) {
        if (!it->is_array() || it->size() != 2) {
            throw error(errors::input_bad_report, "report JSON: attribution row 'interval' is not [lo, hi]");
        }
        c.interval = std::pair{(*it)[0].get<double>(), (*it)[1].get<double>()};
    }
    if (auto it = j.find("significant"); it != j.end() && !it->is_null()) c.significant = it->get<bool>();
    return c;
}

json changes_json(const std::vector<function_change>& rows)
{
    json out = json::array();
    for (const auto& c : rows) out.push_back(change_json(c));
    return out;
}

std::vector<function_change> changes_from_json(const json& j)
{
    std::vector<function_change> out;
    for (const auto& row : j.at("top").get_ref<const json::array_t&>()) out.push_back(change_from_json(row));
    return out;
}

} // namespace

json to_json(const attribution& a)
{
    json out = json::object();
    if (const auto& cg = a.callgrind) {
        out["callgrind"] = {{"event", cg->event},
                            {"total_before", cg->total_before},
                            {"total_after", cg->total_after},
                            {"top", changes_json(cg->top)}};
    }
    if (const auto& p = a.perf) {
        json jp = {{"event", p->event},
                   {"executions", p->executions},
                   {"samples_before", p->samples_before},
                   {"samples_after", p->samples_after},
                   {"top", changes_json(p->top)}};
        if (p->flame_graph) jp["flame_graph"] = *p->flame_graph;
        out["perf"] = std::move(jp);
    }
    if (const auto& m = a.memory) {
        json top = json::array();
        for (const auto& c : m->top) {
            top.push_back({{"counter", c.counter},
                           {"function", c.function},
                           {"stack", c.stack},
                           {"kind", c.kind},
                           {"what", c.what},
                           {"before", c.before},
                           {"after", c.after},
                           {"delta", c.after - c.before}});
        }
        out["memory"] = {{"top", std::move(top)},
                         {"suppressed_before", m->suppressed_before},
                         {"suppressed_after", m->suppressed_after}};
    }
    if (!a.errors.empty()) {
        json errors = json::array();
        for (const auto& e : a.errors) errors.push_back({{"source", e.source}, {"id", e.id}, {"message", e.message}});
        out["errors"] = std::move(errors);
    }
    return out;
}

attribution attribution_from_json(const json& j)
{
    try {
        if (!j.is_object()) throw error(errors::input_bad_report, "report JSON: 'attribution' is not an object");
        attribution a;
        if (auto it = j.find("callgrind"); it != j.end() && !it->is_null()) {
            callgrind_attribution cg;
            cg.event = it->value("event", std::string("Ir"));
            cg.total_before = it->at("total_before").get<double>();
            cg.total_after = it->at("total_after").get<double>();
            cg.top = changes_from_json(*it);
            a.callgrind = std::move(cg);
        }
        if (auto it = j.find("perf"); it != j.end() && !it->is_null()) {
            perf_attribution p;
            p.event = it->at("event").get<std::string>();
            p.executions = it->value("executions", std::size_t{0});
            p.samples_before = it->at("samples_before").get<double>();
            p.samples_after = it->at("samples_after").get<double>();
            p.top = changes_from_json(*it);
            if (auto fg = it->find("flame_graph"); fg != it->end() && !fg->is_null())
                p.flame_graph = fg->get<std::string>();
            a.perf = std::move(p);
        }
        if (auto it = j.find("memory"); it != j.end() && !it->is_null()) {
            memory_attribution m;
            for (const auto& row : it->at("top").get_ref<const json::array_t&>()) {
                m.top.push_back({row.at("counter").get<std::string>(), row.at("function").get<std::string>(),
                                 row.at("stack").get<std::vector<std::string>>(), row.value("kind", std::string()),
                                 row.value("what", std::string()), row.at("before").get<double>(),
                                 row.at("after").get<double>()});
            }
            m.suppressed_before = it->value("suppressed_before", 0LL);
            m.suppressed_after = it->value("suppressed_after", 0LL);
            a.memory = std::move(m);
        }
        if (auto it = j.find("errors"); it != j.end() && !it->is_null()) {
            for (const auto& e : it->get_ref<const json::array_t&>()) {
                a.errors.push_back({e.at("source").get<std::string>(), e.at("id").get<std::string>(),
                                    e.at("message").get<std::string>()});
            }
        }
        return a;
    } catch (const json::exception& e) {
        throw error(errors::input_bad_report, fmt::format("report JSON: attribution: {}", e.what()));
    }
}

namespace {

// One counter of a benchmark's "counters"; json exceptions are turned into
// "input.bad_report" by report_from_json.
counter_report counter_from_json(const json& jc)
{
    counter_report c;
    c.name = jc.at("name").get<std::string>();
    c.unit = jc.value("unit", std::string());
    c.direction = capture::parse_better(jc.value("better", std::string("lower"))).value_or(capture::better::lower);
    c.gated = jc.value("gated", false);
    c.state = parse_enum(jc.at("status").get<std::string>(), all_status, "status");
    if (jc.contains("method") && !jc["method"].is_null()) {
        c.test = parse_enum(jc["method"].get<std::string>(), all_methods, "method");
    }
    c.baseline = side_from_json(jc.at("baseline"));
    c.candidate = side_from_json(jc.at("candidate"));
    c.delta_pct = opt_num(jc, "delta_pct");
    c.shift = opt_num(jc, "shift");
    c.shift_pct = opt_num(jc, "shift_pct");
    if (jc.contains("shift_ci") && jc["shift_ci"].is_array() && jc["shift_ci"].size() == 2) {
        c.shift_ci = std::pair{jc["shift_ci"][0].get<double>(), jc["shift_ci"][1].get<double>()};
    }
    c.u = opt_num(jc, "u");
    c.p_value = opt_num(jc, "p_value");
    c.p_adjusted = opt_num(jc, "p_adjusted");
    c.mde_pct = opt_num(jc, "mde_pct");
    c.threshold_pct = jc.value("threshold_pct", default_threshold_pct);
    c.running_pct_min = opt_num(jc, "running_pct_min");
    c.z_score = opt_num(jc, "z_score");
    c.anomaly = jc.value("anomaly", false);
    // Added within v1: reports stored before them have none.
    c.open_alerts = open_alerts_from_json(jc);
    c.band = band_from_json(jc);
    if (jc.contains("outside_band") && !jc["outside_band"].is_null()) {
        c.outside_band = jc["outside_band"].get<bool>();
    }
    c.sequential = sequential_from_json(jc);
    c.reason = jc.value("reason", std::string());
    c.noise = noise_from_json(jc);
    c.between_runs = between_runs_from_json(jc);
    return c;
}

// One counter of a benchmark's "counters".
json counter_json(const counter_report& c)
{
    json ci = nullptr;
    if (c.shift_ci && std::isfinite(c.shift_ci->first) && std::isfinite(c.shift_ci->second)) {
        ci = json::array({c.shift_ci->first, c.shift_ci->second});
    }
    json out = {{"name", c.name},
                {"unit", c.unit},
                {"better", to_string(c.direction)},
                {"gated", c.gated},
                {"status", to_string(c.state)},
                {"method", c.test ? json(to_string(*c.test)) : json(nullptr)},
                {"baseline", side_json(c.baseline)},
                {"candidate", side_json(c.candidate)},
                {"delta_pct", num(c.delta_pct)},
                {"shift", num(c.shift)},
                {"shift_pct", num(c.shift_pct)},
                {"shift_ci", ci},
                {"u", num(c.u)},
                {"p_value", num(c.p_value)},
                {"p_adjusted", num(c.p_adjusted)},
                {"mde_pct", num(c.mde_pct)},
                {"threshold_pct", c.threshold_pct},
                {"running_pct_min", num(c.running_pct_min)},
                {"z_score", num(c.z_score)},
                {"anomaly", c.anomaly},
                {"open_alerts", open_alerts_json(c.open_alerts)},
                {"band", band_json(c.band)},
                {"outside_band", c.outside_band ? json(*c.outside_band) : json(nullptr)},
                {"sequential", sequential_json(c.sequential)},
                {"reason", c.reason},
                {"noise", noise_to_json(c.noise)}};
    if (c.between_runs) out["between_runs"] = between_runs_json(*c.between_runs);
    return out;
}

} // namespace

json to_json(const std::vector<count_time_disagreement>& d)
{
    json out = json::array();
    for (const auto& x : d) {
        out.push_back({{"count", x.count_counter},
                       {"count_status", to_string(x.count_state)},
                       {"count_delta_pct", x.count_delta_pct},
                       {"time", x.time_counter},
                       {"time_status", to_string(x.time_state)},
                       {"time_delta_pct", x.time_delta_pct}});
    }
    return out;
}

json to_json(const gate::report& r)
{
    json benchmarks = json::array();
    for (const auto& b : r.benchmarks) {
        json counters = json::array();
        for (const auto& c : b.counters) counters.push_back(counter_json(c));
        json jb = {{"name", b.name}, {"verdict", to_string(b.result)}, {"counters", counters}};
        if (b.baseline_run) jb["baseline_run"] = *b.baseline_run;
        if (b.candidate_run) jb["candidate_run"] = *b.candidate_run;
        if (b.attribution_info) jb["attribution"] = to_json(*b.attribution_info);
        if (!b.count_vs_time.empty()) jb["count_vs_time"] = to_json(b.count_vs_time);
        if (b.interleaved) jb["interleaved"] = *b.interleaved;
        benchmarks.push_back(std::move(jb));
    }
    json out = {{"schema", "perfgate.report/v1"},
                {"verdict", to_string(r.result)},
                {"policy", to_json(r.rules)},
                {"warnings", r.warnings},
                {"benchmarks", benchmarks}};
    if (r.comparison_id) out["comparison_id"] = *r.comparison_id;
    // Added within v1 (issue 30): absent when empty, so that reports of one
    // benchmark read as before.
    if (!r.added.empty()) out["added"] = r.added;
    if (!r.removed.empty()) out["removed"] = r.removed;
    if (!r.failed.empty()) {
        json failed = json::array();
        for (const auto& f : r.failed) failed.push_back({{"name", f.name}, {"side", f.side}, {"message", f.message}});
        out["failed"] = std::move(failed);
    }
    if (r.baseline) out["baseline_ref"] = baseline_json(*r.baseline);
    if (r.measured) out["measured"] = measured_json(*r.measured);
    if (!r.reused.empty()) out["baseline_reused"] = reused_json(r.reused);
    if (is_suite(r)) out["summary"] = summary_json(count_benchmarks(r));
    if (auto overall = overall_geomeans(r); !overall.empty()) out["overall"] = overall_json(overall);
    // Added within v1 (issue 41): derived from the counters, absent when
    // every gated counter is decided.
    if (const auto decide = decide_report(r)) out["decide"] = decide_to_json(*decide);
    // Added within v1 (issue 46): absent when no stored qualification of
    // the testbed covers a gated counter, and when there is no advice.
    if (r.qualification) out["qualification"] = qualification_json(*r.qualification, r.benchmarks.size());
    if (!r.advice.empty()) out["advice"] = advice_json(r.advice);
    return out;
}

json baseline_json(const gate::baseline_choice& b)
{
    return {{"rule", b.rule},
            {"baseline_sha", b.baseline_sha},
            {"base_tip_sha", b.base_tip_sha.empty() ? json(nullptr) : json(b.base_tip_sha)},
            {"head_sha", b.head_sha}};
}

json measured_json(const gate::measurement& m)
{
    const auto text = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    return {{"backend", text(m.backend)},
            {"testbed", text(m.testbed)},
            {"baseline_sha", text(m.baseline_sha)},
            {"candidate_sha", text(m.candidate_sha)}};
}

json reused_json(const std::vector<gate::reused_baseline>& reused)
{
    json out = json::array();
    for (const auto& u : reused) {
        out.push_back({{"benchmark", u.benchmark},
                       {"run_id", u.run_id},
                       {"commit", u.commit},
                       {"date", detail::iso_date_time(u.created_at)},
                       {"created_at", u.created_at}});
    }
    return out;
}

json summary_json(const suite_counts& n)
{
    return {{"compared", n.compared},         {"regressions", n.regressions},
            {"improvements", n.improvements}, {"unchanged", n.unchanged},
            {"inconclusive", n.inconclusive}, {"added", n.added},
            {"removed", n.removed},           {"failed", n.failed}};
}

json overall_json(const std::vector<overall_geomean>& rows)
{
    json out = json::array();
    for (const auto& o : rows) {
        out.push_back({{"counter", o.counter},
                       {"better", to_string(o.direction)},
                       {"geomean_ratio", num(o.ratio)},
                       {"benchmarks", o.benchmarks}});
    }
    return out;
}

namespace {

// The report's "failed" (absent: none).
std::vector<failed_benchmark> failed_from_json(const json& j)
{
    std::vector<failed_benchmark> out;
    if (auto it = j.find("failed"); it != j.end() && !it->is_null()) {
        for (const auto& jf : *it) {
            out.push_back({jf.at("name").get<std::string>(), jf.at("side").get<std::string>(),
                           jf.value("message", std::string())});
        }
    }
    return out;
}

} // namespace

gate::report report_from_json(const json& j)
{
    try {
        if (j.value("schema", std::string()) != "perfgate.report/v1") {
            throw error(errors::input_bad_report, "report JSON: schema is not \"perfgate.report/v1\"");
        }
        gate::report r;
        r.result = parse_enum(j.at("verdict").get<std::string>(), all_verdicts, "verdict");
        if (j.contains("policy")) r.rules = parse_policy(j.at("policy"), "report JSON policy");
        r.warnings = j.value("warnings", std::vector<std::string>{});
        if (j.contains("comparison_id") && !j["comparison_id"].is_null())
            r.comparison_id = j["comparison_id"].get<std::int64_t>();
        // Added within v1 (issue 30); "summary" and "overall" are derived
        // from the benchmarks, not read.
        r.added = j.value("added", std::vector<std::string>{});
        r.removed = j.value("removed", std::vector<std::string>{});
        r.failed = failed_from_json(j);
        // Added within v1 (issue 33): absent when no baseline rule applied.
        if (auto it = j.find("baseline_ref"); it != j.end() && !it->is_null()) {
            gate::baseline_choice b;
            b.rule = it->at("rule").get<std::string>();
            b.baseline_sha = it->at("baseline_sha").get<std::string>();
            if (auto tip = it->find("base_tip_sha"); tip != it->end() && !tip->is_null())
                b.base_tip_sha = tip->get<std::string>();
            b.head_sha = it->at("head_sha").get<std::string>();
            r.baseline = std::move(b);
        }
        // Added within v1 (issue 33): absent when files were compared.
        if (auto it = j.find("measured"); it != j.end() && !it->is_null()) {
            const auto text = [&](const char* key) {
                const auto m = it->find(key);
                return m == it->end() || m->is_null() ? std::string() : m->get<std::string>();
            };
            r.measured = gate::measurement{text("backend"), text("testbed"), text("baseline_sha"),
                                           text("candidate_sha")};
        }
        // Added within v1 (issue 33): absent when every baseline was measured.
        if (auto it = j.find("baseline_reused"); it != j.end() && !it->is_null()) {
            for (const auto& ju : *it) {
                r.reused.push_back({ju.at("benchmark").get<std::string>(), ju.at("run_id").get<std::int64_t>(),
                                    ju.at("commit").get<std::string>(), ju.at("created_at").get<std::int64_t>()});
            }
        }
        read_qualification(j, r); // added within v1 (issue 46)
        for (const auto& jb : j.at("benchmarks")) {
            benchmark_report b;
            b.name = jb.at("name").get<std::string>();
            b.result = parse_enum(jb.at("verdict").get<std::string>(), all_verdicts, "verdict");
            if (jb.contains("baseline_run") && !jb["baseline_run"].is_null())
                b.baseline_run = jb["baseline_run"].get<std::int64_t>();
            if (jb.contains("candidate_run") && !jb["candidate_run"].is_null())
                b.candidate_run = jb["candidate_run"].get<std::int64_t>();
            // Added within v1 (issue 29): absent when not known.
            if (auto it = jb.find("interleaved"); it != jb.end() && !it->is_null()) b.interleaved = it->get<bool>();
            // Added within v1 (issue 12): absent when nothing was profiled.
            if (auto it = jb.find("attribution"); it != jb.end() && !it->is_null()) {
                b.attribution_info = attribution_from_json(*it);
            }
            // Added within v1 (issue 29): absent when no count and time disagree.
            if (auto it = jb.find("count_vs_time"); it != jb.end() && !it->is_null()) {
                for (const auto& jd : *it) {
                    b.count_vs_time.push_back(
                        {jd.at("count").get<std::string>(), jd.at("time").get<std::string>(),
                         parse_enum(jd.at("count_status").get<std::string>(), all_status, "count_status"),
                         parse_enum(jd.at("time_status").get<std::string>(), all_status, "time_status"),
                         jd.at("count_delta_pct").get<double>(), jd.at("time_delta_pct").get<double>()});
                }
            }
            for (const auto& jc : jb.at("counters")) b.counters.push_back(counter_from_json(jc));
            r.benchmarks.push_back(std::move(b));
        }
        return r;
    } catch (const json::exception& e) {
        throw error(errors::input_bad_report, fmt::format("report JSON: {}", e.what()));
    }
}

} // namespace perfgate::report
