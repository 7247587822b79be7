#include "gate/report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gate/json_writer.hpp"
#include "gate/noise.hpp"
#include "model/error.hpp"

namespace perfgate::gate {

using nlohmann::json;

std::size_t report::count(status s) const
{
    std::size_t n = 0;
    for (const auto& b : benchmarks) {
        for (const auto& c : b.counters) n += c.gated && c.state == s;
    }
    return n;
}

std::string_view to_string(status s)
{
    switch (s) {
    case status::unsupported: return "unsupported";
    case status::insufficient: return "insufficient";
    case status::regression: return "regression";
    case status::improvement: return "improvement";
    case status::inconclusive: return "inconclusive";
    case status::unchanged: return "unchanged";
    }
    return "unsupported";
}

std::string_view to_string(verdict v)
{
    switch (v) {
    case verdict::pass: return "pass";
    case verdict::fail: return "fail";
    case verdict::inconclusive: return "inconclusive";
    }
    return "inconclusive";
}

std::string_view to_string(method m)
{
    switch (m) {
    case method::exact: return "exact";
    case method::asymptotic: return "asymptotic";
    case method::deterministic: return "deterministic";
    case method::welch: return "welch";
    }
    return "exact";
}

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
    return {{"n", s.n},           {"mean", num(s.mean)}, {"median", num(s.median)}, {"stddev", num(s.stddev)},
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
        if (!parsed) throw error("input.bad_report", fmt::format("report JSON: unknown alert status '{}'", state));
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
    throw error("input.bad_report", fmt::format("report JSON: unknown {} '{}'", field, s));
}

constexpr status all_status[] = {status::unsupported,  status::insufficient, status::regression,
                                 status::improvement,  status::inconclusive, status::unchanged};
constexpr verdict all_verdicts[] = {verdict::pass, verdict::fail, verdict::inconclusive};
constexpr method all_methods[] = {method::exact, method::asymptotic, method::deterministic, method::welch};

json sequential_json(const std::optional<sequential_report>& s)
{
    if (!s) return nullptr;
    json ci = nullptr;
    if (s->ci_pct && std::isfinite(s->ci_pct->first) && std::isfinite(s->ci_pct->second)) {
        ci = json::array({s->ci_pct->first, s->ci_pct->second});
    }
    return {{"look", s->look},         {"looks", s->looks},           {"n", s->n},
            {"alpha", s->alpha},       {"level", s->level},           {"p_one_sided", s->p_one_sided},
            {"ci_pct", ci},            {"ended_early", s->ended_early}};
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
    if (auto ci = it->find("ci_pct"); ci != it->end() && ci->is_array() && ci->size() == 2) {
        s.ci_pct = std::pair{(*ci)[0].get<double>(), (*ci)[1].get<double>()};
    }
    s.ended_early = it->value("ended_early", false);
    return s;
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
            throw error("input.bad_report", "report JSON: attribution row 'interval' is not [lo, hi]");
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
        if (!j.is_object()) throw error("input.bad_report", "report JSON: 'attribution' is not an object");
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
            if (auto fg = it->find("flame_graph"); fg != it->end() && !fg->is_null()) p.flame_graph = fg->get<std::string>();
            a.perf = std::move(p);
        }
        if (auto it = j.find("errors"); it != j.end() && !it->is_null()) {
            for (const auto& e : it->get_ref<const json::array_t&>()) {
                a.errors.push_back({e.at("source").get<std::string>(), e.at("id").get<std::string>(),
                                    e.at("message").get<std::string>()});
            }
        }
        return a;
    } catch (const json::exception& e) {
        throw error("input.bad_report", fmt::format("report JSON: attribution: {}", e.what()));
    }
}

json to_json(const report& r)
{
    json benchmarks = json::array();
    for (const auto& b : r.benchmarks) {
        json counters = json::array();
        for (const auto& c : b.counters) {
            json ci = nullptr;
            if (c.shift_ci && std::isfinite(c.shift_ci->first) && std::isfinite(c.shift_ci->second)) {
                ci = json::array({c.shift_ci->first, c.shift_ci->second});
            }
            counters.push_back({{"name", c.name},
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
                                {"noise", noise_to_json(c.noise)}});
        }
        json jb = {{"name", b.name}, {"verdict", to_string(b.result)}, {"counters", counters}};
        if (b.baseline_run) jb["baseline_run"] = *b.baseline_run;
        if (b.candidate_run) jb["candidate_run"] = *b.candidate_run;
        if (b.attribution_info) jb["attribution"] = to_json(*b.attribution_info);
        benchmarks.push_back(std::move(jb));
    }
    json out = {{"schema", "perfgate.report/v1"},
                {"verdict", to_string(r.result)},
                {"policy", to_json(r.rules)},
                {"warnings", r.warnings},
                {"benchmarks", benchmarks}};
    if (r.comparison_id) out["comparison_id"] = *r.comparison_id;
    return out;
}

namespace {

std::string dumped(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void write_side(json_writer& w, const side_summary& s)
{
    w.begin_object()
        .member("cov", s.cov)
        .member("max", s.max)
        .member("mean", s.mean)
        .member("median", s.median)
        .member("min", s.min)
        .member("n", s.n)
        .member("stddev", s.stddev)
        .end_object();
}

void write_pair(json_writer& w, const std::optional<std::pair<double, double>>& p)
{
    if (p && std::isfinite(p->first) && std::isfinite(p->second)) {
        w.begin_array().number(p->first).number(p->second).end_array();
    } else {
        w.null();
    }
}

void write_open_alerts(json_writer& w, const std::optional<std::vector<open_alert>>& alerts)
{
    if (!alerts) {
        w.null();
        return;
    }
    w.begin_array();
    for (const auto& a : *alerts) {
        w.begin_object()
            .member("delta_pct", a.delta_pct)
            .member("git_sha", a.git_sha)
            .member("id", a.id)
            .member("run_id", a.run_id)
            .member("status", model::to_string(a.state))
            .end_object();
    }
    w.end_array();
}

void write_band(json_writer& w, const std::optional<history_band>& b)
{
    if (!b || !std::isfinite(b->lo) || !std::isfinite(b->hi)) {
        w.null();
        return;
    }
    w.begin_object().member("hi", b->hi).member("lo", b->lo).member("n", b->n).key("since_run");
    if (b->since_run) {
        w.integer(*b->since_run);
    } else {
        w.null();
    }
    w.end_object();
}

void write_sequential(json_writer& w, const std::optional<sequential_report>& s)
{
    if (!s) {
        w.null();
        return;
    }
    w.begin_object().member("alpha", s->alpha).key("ci_pct");
    write_pair(w, s->ci_pct);
    w.member("ended_early", s->ended_early)
        .member("level", s->level)
        .member("look", s->look)
        .member("looks", s->looks)
        .member("n", s->n)
        .member("p_one_sided", s->p_one_sided)
        .end_object();
}

void write_optional_bool(json_writer& w, const std::optional<bool>& b)
{
    if (b) {
        w.boolean(*b);
    } else {
        w.null();
    }
}

void write_side_noise(json_writer& w, const side_noise& s)
{
    w.begin_object().key("bimodal");
    write_optional_bool(w, s.bimodal);
    w.member("dip", s.dip).member("dip_critical", s.dip_critical).key("drift");
    write_optional_bool(w, s.drift);
    w.member("kendall_p", s.kendall_p).member("kendall_tau", s.kendall_tau).end_object();
}

void write_noise(json_writer& w, const std::optional<noise_diagnosis>& n)
{
    if (!n) {
        w.null();
        return;
    }
    w.begin_object().key("advice");
    if (n->advice.empty()) {
        w.null();
    } else {
        w.string(n->advice);
    }
    w.key("baseline");
    write_side_noise(w, n->baseline);
    w.key("bimodal");
    write_optional_bool(w, n->bimodal);
    w.key("candidate");
    write_side_noise(w, n->candidate);
    w.key("drift");
    write_optional_bool(w, n->drift);
    w.key("repetitions_needed");
    if (n->repetitions_needed) {
        w.integer(*n->repetitions_needed);
    } else {
        w.null();
    }
    w.member("too_noisy", n->too_noisy).end_object();
}

void write_counter(json_writer& w, const counter_report& c)
{
    w.begin_object().member("anomaly", c.anomaly).key("band");
    write_band(w, c.band);
    w.key("baseline");
    write_side(w, c.baseline);
    w.member("better", to_string(c.direction)).key("candidate");
    write_side(w, c.candidate);
    w.member("delta_pct", c.delta_pct).member("gated", c.gated).member("mde_pct", c.mde_pct).key("method");
    if (c.test) {
        w.string(to_string(*c.test));
    } else {
        w.null();
    }
    w.member("name", c.name).key("noise");
    write_noise(w, c.noise);
    w.key("open_alerts");
    write_open_alerts(w, c.open_alerts);
    w.key("outside_band");
    write_optional_bool(w, c.outside_band);
    w.member("p_adjusted", c.p_adjusted)
        .member("p_value", c.p_value)
        .member("reason", c.reason)
        .member("running_pct_min", c.running_pct_min)
        .key("sequential");
    write_sequential(w, c.sequential);
    w.member("shift", c.shift).key("shift_ci");
    write_pair(w, c.shift_ci);
    w.member("shift_pct", c.shift_pct)
        .member("status", to_string(c.state))
        .member("threshold_pct", c.threshold_pct)
        .member("u", c.u)
        .member("unit", c.unit)
        .member("z_score", c.z_score)
        .end_object();
}

} // namespace

std::string to_json_text(const report& r, std::size_t* id_at)
{
    std::string out;
    out.reserve(1024 + 2048 * r.benchmarks.size() * (r.benchmarks.empty() ? 0 : r.benchmarks[0].counters.size()));
    json_writer w(out);
    w.begin_object().key("benchmarks").begin_array();
    for (const auto& b : r.benchmarks) {
        w.begin_object();
        if (b.attribution_info) w.key("attribution").raw(dumped(to_json(*b.attribution_info)));
        if (b.baseline_run) w.member("baseline_run", *b.baseline_run);
        if (b.candidate_run) w.member("candidate_run", *b.candidate_run);
        w.key("counters").begin_array();
        for (const auto& c : b.counters) write_counter(w, c);
        w.end_array().member("name", b.name).member("verdict", to_string(b.result)).end_object();
    }
    w.end_array();
    if (id_at) *id_at = out.size();
    if (r.comparison_id) w.member("comparison_id", *r.comparison_id);
    w.key("policy").raw(dumped(to_json(r.rules))).member("schema", "perfgate.report/v1");
    w.member("verdict", to_string(r.result)).key("warnings").begin_array();
    for (const auto& warning : r.warnings) w.string(warning);
    w.end_array().end_object();
    return out;
}

report report_from_json(const json& j)
{
    try {
        if (j.value("schema", std::string()) != "perfgate.report/v1") {
            throw error("input.bad_report", "report JSON: schema is not \"perfgate.report/v1\"");
        }
        report r;
        r.result = parse_enum(j.at("verdict").get<std::string>(), all_verdicts, "verdict");
        if (j.contains("policy")) r.rules = parse_policy(j.at("policy"), "report JSON policy");
        r.warnings = j.value("warnings", std::vector<std::string>{});
        if (j.contains("comparison_id") && !j["comparison_id"].is_null()) r.comparison_id = j["comparison_id"].get<std::int64_t>();
        for (const auto& jb : j.at("benchmarks")) {
            benchmark_report b;
            b.name = jb.at("name").get<std::string>();
            b.result = parse_enum(jb.at("verdict").get<std::string>(), all_verdicts, "verdict");
            if (jb.contains("baseline_run") && !jb["baseline_run"].is_null()) b.baseline_run = jb["baseline_run"].get<std::int64_t>();
            if (jb.contains("candidate_run") && !jb["candidate_run"].is_null()) b.candidate_run = jb["candidate_run"].get<std::int64_t>();
            // Added within v1 (issue 12): absent when nothing was profiled.
            if (auto it = jb.find("attribution"); it != jb.end() && !it->is_null()) {
                b.attribution_info = attribution_from_json(*it);
            }
            for (const auto& jc : jb.at("counters")) {
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
                b.counters.push_back(std::move(c));
            }
            r.benchmarks.push_back(std::move(b));
        }
        return r;
    } catch (const json::exception& e) {
        throw error("input.bad_report", fmt::format("report JSON: {}", e.what()));
    }
}

namespace {

// Human formatting of a measured value: integers stay integers, small
// values keep 3-4 significant digits.
std::string value_str(const std::optional<double>& v, std::string_view unit = {})
{
    if (!v || !std::isfinite(*v)) return "—";
    const double a = std::abs(*v);
    std::string s = a >= 1000 || (a == std::floor(a)) ? fmt::format("{:.0f}", *v)
                    : a >= 1                          ? fmt::format("{:.2f}", *v)
                                                      : fmt::format("{:.4g}", *v);
    if (!unit.empty()) s += fmt::format(" {}", unit);
    return s;
}

std::string pct_str(const std::optional<double>& v)
{
    if (!v || !std::isfinite(*v)) return "—";
    return fmt::format("{:+.2f}%", *v);
}

std::string p_str(const std::optional<double>& p)
{
    if (!p || !std::isfinite(*p)) return "—";
    if (*p < 1e-4) return fmt::format("{:.1e}", *p);
    return fmt::format("{:.4f}", *p);
}

// The shift's confidence interval in percent of the baseline median, like
// the shift itself (absolute values are in the JSON report).
std::string ci_str(const counter_report& c)
{
    if (!c.shift_ci) return "—";
    if (c.test && *c.test == method::deterministic) return "exact";
    const double base = c.baseline.median.value_or(0.0);
    if (base == 0) return fmt::format("[{}, {}]", value_str(c.shift_ci->first), value_str(c.shift_ci->second));
    return fmt::format("[{:+.2f}%, {:+.2f}%]", c.shift_ci->first / std::abs(base) * 100,
                       c.shift_ci->second / std::abs(base) * 100);
}

std::string_view mark(status s)
{
    switch (s) {
    case status::regression: return "🔴";
    case status::improvement: return "🟢";
    case status::unchanged: return "⚪";
    case status::inconclusive: return "🟡";
    case status::insufficient: return "🟡";
    case status::unsupported: return "➖";
    }
    return "";
}

std::string_view verdict_mark(verdict v)
{
    switch (v) {
    case verdict::pass: return "✅";
    case verdict::fail: return "❌";
    case verdict::inconclusive: return "⚠️";
    }
    return "";
}

std::string summary_counts(const report& r)
{
    return fmt::format("{} regression{}, {} improvement{}, {} unchanged, {} inconclusive",
                       r.count(status::regression), r.count(status::regression) == 1 ? "" : "s",
                       r.count(status::improvement), r.count(status::improvement) == 1 ? "" : "s",
                       r.count(status::unchanged),
                       r.count(status::inconclusive) + r.count(status::insufficient));
}

// User-supplied text (benchmark and counter names, units, warnings) as
// literal GitHub-flavoured markdown: it must not become a link, an image,
// emphasis, code, a heading, a table cell boundary or raw HTML in a PR
// comment. CommonMark §2.4: a backslash makes any ASCII punctuation literal,
// which covers the inline syntax and GFM's `\|` inside table cells. `<`, `>`
// and `&` become entities instead: a backslash does not escape inside an
// HTML block, and an entity keeps a user string from ever spelling `<img`,
// `<details>` or the `-->` that ends our hidden marker. Line breaks and other
// control characters become spaces: one string stays one line or cell.
// Plain names (task-clock, BM_Sort/1024, cpu_core/cycles/) keep their `-`,
// `/`, `.` and `:`.
std::string md_text(std::string_view s)
{
    constexpr std::string_view backslashed = "\\`*_[]()#|!~";
    std::string out;
    out.reserve(s.size());
    for (char ch : s) {
        const auto u = static_cast<unsigned char>(ch);
        if (u < 0x20 || u == 0x7f) out += ' ';
        else if (ch == '<') out += "&lt;";
        else if (ch == '>') out += "&gt;";
        else if (ch == '&') out += "&amp;";
        else {
            if (backslashed.find(ch) != std::string_view::npos) out += '\\';
            out += ch;
        }
    }
    return out;
}

// A URL as a markdown link destination: percent-encode what would end the
// destination or the link early (spaces, parentheses, brackets, angle
// brackets, quotes, backslashes, control bytes), RFC 3986 §2.1.
std::string md_url(std::string_view url)
{
    constexpr std::string_view unsafe = "()[]<>\"'`\\|";
    std::string out;
    for (char ch : url) {
        const auto u = static_cast<unsigned char>(ch);
        if (u <= 0x20 || u == 0x7f || unsafe.find(ch) != std::string_view::npos) out += fmt::format("%{:02X}", u);
        else out += ch;
    }
    return out;
}

// History context as one line each, in plain text (markdown escapes it):
// an open alert on the counter's series, and a candidate outside the recent
// band. "alert 12", not "#12": GitHub links "#12" to the repository's issue
// or pull request 12.
std::string alert_line(const open_alert& a)
{
    const std::string since = a.git_sha.empty() ? fmt::format("run {}", a.run_id)
                                                : fmt::format("{} (run {})", a.git_sha.substr(0, 7), a.run_id);
    return fmt::format("open alert {} on this series{}: {} since {}", a.id,
                       a.state == model::alert_status::acknowledged ? " (acknowledged)" : "", pct_str(a.delta_pct),
                       since);
}

std::string band_line(const counter_report& c)
{
    const history_band& b = *c.band;
    return fmt::format("candidate {} outside the baseline's recent band [{}, {}] ({} runs{})",
                       value_str(c.candidate.median, c.unit), value_str(b.lo), value_str(b.hi), b.n,
                       b.since_run ? fmt::format(" since the change at run {}", *b.since_run) : "");
}

std::vector<std::string> history_lines(const counter_report& c)
{
    std::vector<std::string> out;
    if (c.open_alerts) {
        for (const auto& a : *c.open_alerts) out.push_back(alert_line(a));
    }
    if (c.band && c.outside_band.value_or(false)) out.push_back(band_line(c));
    return out;
}

// History lines in a PR comment's visible part, at most: a gate of many
// counters on a testbed whose baseline drifted would otherwise push the
// summary off the page (and toward GitHub's size limit). The JSON report
// has them all.
constexpr std::size_t max_markdown_history_lines = 20;

// Function names in an attribution table, at most: a demangled template
// name can run to kilobytes; the JSON report has it whole.
constexpr std::size_t max_shown_function_chars = 160;

std::string short_name(std::string_view name)
{
    if (name.size() <= max_shown_function_chars) return std::string(name);
    return std::string(name.substr(0, max_shown_function_chars - 3)) + "...";
}

std::string signed_count(double v) { return fmt::format("{:+.0f}", v); }

// A share that rounds to 0.0% but is not 0 says so ("+<0.1%"): the row
// changed, just by little.
std::string share_str(double share)
{
    if (share != 0 && std::abs(share) < 0.0005) return share > 0 ? "+<0.1%" : "-<0.1%";
    return fmt::format("{:+.1f}%", share * 100);
}

// perf rows carry an interval; the ones whose interval includes 0 are noise
// and not shown (their count is).
bool shown_perf_row(const function_change& c) { return c.significant.value_or(true); }

std::size_t hidden_perf_rows(const perf_attribution& p)
{
    return static_cast<std::size_t>(std::count_if(p.top.begin(), p.top.end(),
                                                  [](const function_change& c) { return !shown_perf_row(c); }));
}

std::string interval_str(const function_change& c)
{
    if (!c.interval) return "—";
    return fmt::format("[{:+.2f}, {:+.2f}] pp", c.interval->first, c.interval->second);
}

std::string callgrind_heading(const callgrind_attribution& cg)
{
    return fmt::format("callgrind, exclusive {} per function: total {} → {}", cg.event, value_str(cg.total_before),
                       value_str(cg.total_after));
}

std::string perf_heading(const perf_attribution& p)
{
    return fmt::format("perf record, {} self samples per function ({} execution{} per side): total {} → {}", p.event,
                       p.executions, p.executions == 1 ? "" : "s", value_str(p.samples_before),
                       value_str(p.samples_after));
}

// The attribution of one benchmark under its counters in the text report.
std::string text_attribution(const attribution& a)
{
    std::string out;
    if (const auto& cg = a.callgrind) {
        out += fmt::format("  where: {}\n", callgrind_heading(*cg));
        if (cg->top.empty()) out += "    no function's cost changed\n";
        for (const auto& c : cg->top) {
            out += fmt::format("    {:>14} {:>8}  {} → {}  {}{}\n", signed_count(c.delta), share_str(c.share),
                               value_str(c.before), value_str(c.after), short_name(c.name),
                               c.file.empty() ? "" : fmt::format("  ({})", c.file));
        }
    }
    if (const auto& p = a.perf) {
        out += fmt::format("  where: {}\n", perf_heading(*p));
        std::size_t shown = 0;
        for (const auto& c : p->top) {
            if (!shown_perf_row(c)) continue;
            ++shown;
            out += fmt::format("    {:>14} {:>8}  {} → {}  self share {}  {}\n", signed_count(c.delta),
                               share_str(c.share), value_str(c.before), value_str(c.after), interval_str(c),
                               short_name(c.name));
        }
        if (shown == 0) out += "    no symbol changed beyond the noise\n";
        if (auto hidden = hidden_perf_rows(*p)) out += fmt::format("    ({} more within the noise, not shown)\n", hidden);
        if (p->flame_graph) out += fmt::format("    differential flame graph: {}\n", *p->flame_graph);
    }
    for (const auto& e : a.errors) out += fmt::format("  where: {} attribution failed: {}\n", e.source, e.message);
    return out;
}

// One benchmark's "Where did it come from" tables in markdown.
std::string markdown_attribution(const std::string& benchmark, const attribution& a)
{
    std::string out;
    if (const auto& cg = a.callgrind) {
        out += fmt::format("**{}** — {}\n\n", md_text(benchmark), md_text(callgrind_heading(*cg)));
        if (cg->top.empty()) {
            out += "_No function's cost changed._\n\n";
        } else {
            out += "| function | before | after | Δ | share of the change |\n|---|--:|--:|--:|--:|\n";
            for (const auto& c : cg->top) {
                out += fmt::format("| {} | {} | {} | {} | {} |\n", md_text(short_name(c.name)), value_str(c.before),
                                   value_str(c.after), signed_count(c.delta), share_str(c.share));
            }
            out += "\n";
        }
    }
    if (const auto& p = a.perf) {
        out += fmt::format("**{}** — {}\n\n", md_text(benchmark), md_text(perf_heading(*p)));
        std::string rows;
        for (const auto& c : p->top) {
            if (!shown_perf_row(c)) continue;
            rows += fmt::format("| {} | {} | {} | {} | {} | {} |\n", md_text(short_name(c.name)), value_str(c.before),
                                value_str(c.after), signed_count(c.delta), interval_str(c),
                                c.significant ? (*c.significant ? "yes" : "no") : "—");
        }
        if (rows.empty()) {
            out += "_No symbol changed beyond the noise._\n\n";
        } else {
            out += "| symbol | before | after | Δ | self share Δ [interval] | significant |\n"
                   "|---|--:|--:|--:|--:|:-:|\n" +
                   rows + "\n";
        }
        if (auto hidden = hidden_perf_rows(*p)) {
            out += fmt::format("_{} more symbol{} changed within the noise: not shown._\n\n", hidden,
                               hidden == 1 ? "" : "s");
        }
        if (p->flame_graph) out += fmt::format("Differential flame graph: {}\n\n", md_text(*p->flame_graph));
    }
    for (const auto& e : a.errors) {
        out += fmt::format("- ⚠️ {}: {} attribution failed: {}\n", md_text(benchmark), md_text(e.source),
                           md_text(e.message));
    }
    if (!a.errors.empty()) out += "\n";
    return out;
}

// The collapsed "Where did it come from" section: every benchmark with an
// attribution, as many as fit in `budget` characters.
std::string markdown_attributions(const report& r, const markdown_options& opt, std::size_t budget)
{
    const std::string open = "\n<details><summary>Where did it come from</summary>\n\n";
    const std::string close = "</details>\n";
    std::string link;
    if (!opt.artifacts_url.empty()) {
        link = fmt::format("Raw profiles and flame graphs: {}[workflow artifacts]({}).\n\n",
                           opt.artifact_name.empty() ? "" : fmt::format("`{}` in the ", md_text(opt.artifact_name)),
                           md_url(opt.artifacts_url));
    }
    std::string inner;
    std::size_t listed = 0, left_out = 0;
    for (const auto& b : r.benchmarks) {
        if (!b.attribution_info) continue;
        ++listed;
        auto block = markdown_attribution(b.name, *b.attribution_info);
        if (left_out == 0 && open.size() + inner.size() + block.size() + link.size() + close.size() + 80 <= budget) {
            inner += block;
        } else {
            ++left_out;
        }
    }
    if (listed == 0 || left_out == listed) return {};
    if (left_out > 0) {
        inner += fmt::format("_… {} more benchmark{}: see the JSON report._\n\n", left_out, left_out == 1 ? "" : "s");
    }
    return open + inner + link + close;
}

} // namespace

std::string render_markdown(const report& r, const markdown_options& opt)
{
    std::string head;
    if (!opt.marker.empty()) head += opt.marker + "\n";
    head += fmt::format("### {} {}: **{}** — {}\n\n", verdict_mark(r.result), md_text(opt.title), to_string(r.result),
                        summary_counts(r));

    std::string table = "| | benchmark | counter | baseline | candidate | Δ median | shift [CI] | p (adj.) |\n"
                        "|:-:|---|---|--:|--:|--:|--:|--:|\n";
    std::size_t gated_rows = 0;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            // Unsupported counters cannot gate: they are listed in the details
            // and the warnings, not in the table of what was gated.
            if (!c.gated || c.state == status::unsupported) continue;
            ++gated_rows;
            table += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", mark(c.state), md_text(b.name),
                                 md_text(c.name), md_text(value_str(c.baseline.median, c.unit)),
                                 md_text(value_str(c.candidate.median, c.unit)), pct_str(c.delta_pct),
                                 c.shift_pct ? fmt::format("{} {}", pct_str(c.shift_pct), ci_str(c)) : "—",
                                 p_str(c.p_adjusted));
        }
    }
    if (gated_rows == 0) table = "_No gated counter had data._\n";

    std::string history;
    std::size_t history_rows = 0;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            for (const auto& line : history_lines(c)) {
                if (++history_rows <= max_markdown_history_lines) {
                    history += fmt::format("- ⚠️ {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line));
                }
            }
        }
    }
    if (history_rows > max_markdown_history_lines) {
        history += fmt::format("- … {} more: see the JSON report\n", history_rows - max_markdown_history_lines);
    }
    if (!history.empty()) table += "\n" + history;

    std::string links;
    if (!opt.run_url.empty()) links += fmt::format("[CI run]({})", md_url(opt.run_url));
    if (!opt.comparison_url.empty()) {
        links += fmt::format("{}[stored comparison]({})", links.empty() ? "" : " · ", md_url(opt.comparison_url));
    }
    if (!links.empty()) links = "\n" + links + "\n";

    // Details: every counter, then warnings. Built line by line so that the
    // whole body stays under opt.max_chars (GitHub refuses comments over
    // 65,536 characters), dropping lines from the end and saying so.
    std::vector<std::string> details;
    details.push_back(
        "| status | benchmark | counter | gated | method | n (b/c) | CoV b/c | median b → c | Δ | p | p adj. | MDE | z |\n"
        "|---|---|---|:-:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            details.push_back(fmt::format(
                "| {} {} | {} | {} | {} | {} | {}/{} | {}/{} | {} → {} | {} | {} | {} | {} | {}{} |\n", mark(c.state),
                to_string(c.state), md_text(b.name), md_text(c.name), c.gated ? "yes" : "no",
                c.test ? to_string(*c.test) : "—", c.baseline.n, c.candidate.n,
                c.baseline.cov ? fmt::format("{:.2f}%", *c.baseline.cov * 100) : "—",
                c.candidate.cov ? fmt::format("{:.2f}%", *c.candidate.cov * 100) : "—",
                value_str(c.baseline.median), md_text(value_str(c.candidate.median, c.unit)), pct_str(c.delta_pct),
                p_str(c.p_value), p_str(c.p_adjusted),
                c.mde_pct && std::isfinite(*c.mde_pct) ? fmt::format("{:.2f}%", *c.mde_pct) : "—",
                c.z_score ? fmt::format("{:+.2f}", *c.z_score) : "—", c.anomaly ? " ⚠️" : ""));
        }
    }
    std::vector<std::string> noise;
    for (const auto& b : r.benchmarks) {
        for (const auto& c : b.counters) {
            if (auto line = noise_summary(c); !line.empty()) {
                noise.push_back(fmt::format("- {} / {}: {}\n", md_text(b.name), md_text(c.name), md_text(line)));
            }
        }
    }
    if (!noise.empty()) {
        details.push_back("\n**Noise**\n\n");
        details.insert(details.end(), noise.begin(), noise.end());
    }
    std::vector<std::string> tail;
    if (!r.warnings.empty()) {
        tail.push_back("\n**Warnings**\n\n");
        for (const auto& w : r.warnings) tail.push_back(fmt::format("- {}\n", md_text(w)));
    }
    tail.push_back(fmt::format("\nPolicy: alpha {}, {} correction, threshold {}%, min {} samples, max CoV {}%.\n",
                               r.rules.alpha, to_string(r.rules.correction), r.rules.threshold_pct,
                               r.rules.min_samples, r.rules.max_cov * 100));

    const std::string open = "\n<details><summary>All counters, warnings and policy</summary>\n\n";
    const std::string close = "\n</details>\n";
    std::string body = head + table + links;
    // Attribution gets at most half of what the comment has left; the
    // counters' details get the rest.
    body += markdown_attributions(r, opt, opt.max_chars > body.size() ? (opt.max_chars - body.size()) / 2 : 0);
    std::string inner;
    std::size_t dropped = 0;
    const std::string truncated_note_fmt = "\n_… {} more lines truncated to fit GitHub's comment limit; the JSON "
                                           "report has everything._\n";
    const std::size_t reserve = open.size() + close.size() + truncated_note_fmt.size() + 32;
    std::vector<std::string> all = details;
    all.insert(all.end(), tail.begin(), tail.end());
    for (const auto& line : all) {
        if (dropped == 0 && body.size() + inner.size() + line.size() + reserve <= opt.max_chars) inner += line;
        else ++dropped;
    }
    if (dropped > 0) inner += fmt::format(fmt::runtime(truncated_note_fmt), dropped);
    std::string out = body + open + inner + close;
    if (out.size() > opt.max_chars) {
        // The summary table alone is over the limit: keep the head and marker.
        out = head + fmt::format("_The report is too large for a comment ({} characters); the JSON report has "
                                 "everything._\n",
                                 out.size());
    }
    return out;
}

std::string render_text(const report& r, bool colour)
{
    auto paint = [colour](std::string_view s, status st) -> std::string {
        if (!colour) return std::string(s);
        const char* code = st == status::regression     ? "\x1b[31m"
                           : st == status::improvement  ? "\x1b[32m"
                           : st == status::inconclusive || st == status::insufficient ? "\x1b[33m"
                           : st == status::unsupported  ? "\x1b[2m"
                                                        : "";
        return *code ? fmt::format("{}{}\x1b[0m", code, s) : std::string(s);
    };
    std::string out = fmt::format("perfgate: {} — {}\n\n", to_string(r.result), summary_counts(r));
    out += fmt::format("{:<13} {:<24} {:>16} {:>16} {:>9} {:>28} {:>9}\n", "status", "counter", "baseline",
                       "candidate", "Δ median", "shift [CI]", "p adj.");
    for (const auto& b : r.benchmarks) {
        if (r.benchmarks.size() > 1 || b.name != "default") out += fmt::format("{} ({})\n", b.name, to_string(b.result));
        for (const auto& c : b.counters) {
            std::string name = c.name + (c.gated ? "" : " ·");
            std::string st = std::string(to_string(c.state));
            out += fmt::format("{} {:<24} {:>16} {:>16} {:>9} {:>28} {:>9}\n", paint(fmt::format("{:<13}", st), c.state),
                               name, value_str(c.baseline.median, c.unit), value_str(c.candidate.median, c.unit),
                               pct_str(c.delta_pct),
                               c.shift_ci ? fmt::format("{} {}", pct_str(c.shift_pct), ci_str(c)) : "—",
                               p_str(c.p_adjusted ? c.p_adjusted : c.p_value));
            if (c.state != status::unchanged && !c.reason.empty()) out += fmt::format("{:<14}{}\n", "", c.reason);
            for (const auto& line : history_lines(c)) out += fmt::format("{:<14}! {}\n", "", line);
            if (auto line = noise_summary(c); !line.empty()) out += fmt::format("{:<14}noise: {}\n", "", line);
        }
        if (b.attribution_info) out += text_attribution(*b.attribution_info);
    }
    out += "(· = reported, not gated)\n";
    if (!r.warnings.empty()) {
        out += "\nwarnings:\n";
        for (const auto& w : r.warnings) out += fmt::format("  - {}\n", w);
    }
    return out;
}

} // namespace perfgate::gate
