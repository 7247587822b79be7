// to_json_text (report/render.hpp): the report JSON written straight from
// the values, with its members in nlohmann::json's key order.
#include "report/render.hpp"

#include <cmath>

#include "gate/noise.hpp"
#include "report/json_writer.hpp"
#include "report/qualification.hpp"

namespace perfgate::report {

using nlohmann::json;
using namespace gate;

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
        .member("equivalence_level", s->equivalence_level)
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
    w.key("source");
    if (n->source.empty()) {
        w.null();
    } else {
        w.string(n->source);
    }
    w.member("threshold_needed_pct", n->threshold_needed_pct).member("too_noisy", n->too_noisy).end_object();
}

void write_between_runs(json_writer& w, const between_runs_report& b)
{
    w.begin_object().key("ci_pct");
    write_pair(w, b.ci_pct);
    w.member("df", b.df)
        .member("history_runs", b.history_runs)
        .member("p_value", b.p_value)
        .member("sd", b.sd)
        .member("se", b.se)
        .member("t", b.t)
        .end_object();
}

void write_counter(json_writer& w, const counter_report& c)
{
    w.begin_object().member("anomaly", c.anomaly).key("band");
    write_band(w, c.band);
    w.key("baseline");
    write_side(w, c.baseline);
    w.member("better", to_string(c.direction));
    if (c.between_runs) {
        w.key("between_runs");
        write_between_runs(w, *c.between_runs);
    }
    w.key("candidate");
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

std::string to_json_text(const gate::report& r, std::size_t* id_at, std::string_view policy_json)
{
    std::string out;
    out.reserve(1024 + 2048 * r.benchmarks.size() * (r.benchmarks.empty() ? 0 : r.benchmarks[0].counters.size()));
    json_writer w(out);
    w.begin_object();
    // The suite's members (issue 30) are small: written by the tree.
    if (!r.added.empty()) w.key("added").raw(dumped(json(r.added)));
    if (!r.advice.empty()) w.key("advice").raw(dumped(advice_json(r.advice)));
    if (r.baseline) w.key("baseline_ref").raw(dumped(baseline_json(*r.baseline)));
    if (!r.reused.empty()) w.key("baseline_reused").raw(dumped(reused_json(r.reused)));
    w.key("benchmarks").begin_array();
    for (const auto& b : r.benchmarks) {
        w.begin_object();
        if (b.attribution_info) w.key("attribution").raw(dumped(to_json(*b.attribution_info)));
        if (b.baseline_run) w.member("baseline_run", *b.baseline_run);
        if (b.candidate_run) w.member("candidate_run", *b.candidate_run);
        if (!b.count_vs_time.empty()) w.key("count_vs_time").raw(dumped(to_json(b.count_vs_time)));
        w.key("counters").begin_array();
        for (const auto& c : b.counters) write_counter(w, c);
        w.end_array();
        if (b.interleaved) w.member("interleaved", *b.interleaved);
        w.member("name", b.name).member("verdict", to_string(b.result)).end_object();
    }
    w.end_array();
    if (id_at) *id_at = out.size();
    if (r.comparison_id) w.member("comparison_id", *r.comparison_id);
    if (const auto decide = decide_report(r)) w.key("decide").raw(dumped(decide_to_json(*decide)));
    if (!r.failed.empty()) {
        w.key("failed").begin_array();
        for (const auto& f : r.failed) {
            w.begin_object().member("message", f.message).member("name", f.name).member("side", f.side).end_object();
        }
        w.end_array();
    }
    if (r.measured) w.key("measured").raw(dumped(measured_json(*r.measured)));
    if (auto overall = overall_geomeans(r); !overall.empty()) w.key("overall").raw(dumped(overall_json(overall)));
    if (policy_json.empty()) {
        w.key("policy").raw(dumped(to_json(r.rules)));
    } else {
        w.key("policy").raw(policy_json);
    }
    if (r.qualification) w.key("qualification").raw(dumped(qualification_json(*r.qualification, r.benchmarks.size())));
    if (!r.removed.empty()) w.key("removed").raw(dumped(json(r.removed)));
    w.member("schema", "perfgate.report/v1");
    if (is_suite(r)) w.key("summary").raw(dumped(summary_json(count_benchmarks(r))));
    w.member("verdict", to_string(r.result)).key("warnings").begin_array();
    for (const auto& warning : r.warnings) w.string(warning);
    w.end_array().end_object();
    return out;
}

} // namespace perfgate::report
