#include "service/service_impl.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "capture/samples.hpp"
#include "gate/compare.hpp"
#include "model/digest.hpp"
#include "model/error.hpp"
#include "report/render.hpp"
#include "service/baseline_history.hpp"
#include "service/caches.hpp"
#include "store/artifacts.hpp"
#include "store/comparisons.hpp"

// The compare engine: a report for (project, pairs of runs, policy), found
// again by its request key or computed from the runs and their baseline
// history, then stored (compare) or queued for the commit queue
// (compare_later).

namespace perfgate::service {

namespace detail {

// What a compare reads from its runs: the samples of each side, in the
// order of the pairs, and the pair of run ids of each benchmark.
struct compare_inputs {
    capture::sample_set base, cand;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>, std::less<>> runs_of;
    // How each benchmark's pair was measured (gate::pairing).
    std::map<std::string, gate::pairing, std::less<>> pairing_of;
    // What the runs were measured with and at (gate::measurement).
    std::optional<gate::measurement> measured;
};

} // namespace detail

using detail::add_history_context;
using detail::baseline_history;
using detail::compare_inputs;

namespace {

// The stored / served form of a report. Invalid UTF-8 (a warning may quote a
// benchmark's own stderr) is replaced, never a reason to lose the report.
std::string report_text(const nlohmann::json& report_json)
{
    return report_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Version of the request key's canonical form. Bump it whenever a change
// makes the same inputs produce a different report (statistics, report
// fields), so that comparisons stored by an older perfgate are recomputed
// instead of being returned to the new one.
// v2: reports carry history context (open_alerts, band, outside_band).
// v3: reports carry per-counter `sequential` (policy.sequential) and the noise
// diagnosis (noise).
// v4: runs not measured interleaved are judged by the between-run test, and
// benchmarks say whether they were (interleaved, between_runs).
// v5: reports say what the runs were measured with and at (measured).
// v6: deterministic counts of runs measured apart follow the deterministic
// rule, not the between-run test (a reused baseline).
constexpr std::string_view request_key_version = "perfgate.compare-key/v6";

// What one compare has loaded, against max_compare_counters and
// max_compare_samples, checked run by run: a request over a limit stops
// after reading at most one pair of runs too many.
class compare_budget {
public:
    explicit compare_budget(std::size_t pairs) : pairs_(pairs) {}

    void loaded(const model::run_record& run)
    {
        ++runs_;
        for (const auto& c : run.counters) samples_ += c.samples.size();
        if (samples_ > max_compare_samples) {
            throw error(errors::compare_too_large,
                        fmt::format("the runs of this gate hold more than {} samples ({} in the first {} of its {} "
                                    "runs); at most {} samples per compare: compare fewer pairs per request",
                                    max_compare_samples, samples_, runs_, 2 * pairs_, max_compare_samples));
        }
    }

    // The report has a row per counter of either run of a pair.
    void paired(const model::run_record& b, const model::run_record& c)
    {
        ++paired_;
        std::set<std::string_view> names;
        for (const auto& x : b.counters) names.insert(x.counter);
        for (const auto& x : c.counters) names.insert(x.counter);
        counters_ += names.size();
        if (counters_ > max_compare_counters) {
            throw error(errors::compare_too_large,
                        fmt::format("this gate compares more than {} counters ({} in the first {} of its {} pairs); "
                                    "at most {} counters per compare: compare fewer pairs per request",
                                    max_compare_counters, counters_, paired_, pairs_, max_compare_counters));
        }
    }

private:
    std::size_t pairs_, runs_ = 0, paired_ = 0, samples_ = 0, counters_ = 0;
};

// The report's rows of a pair: the counters of either run and the derived
// ones, each once, in order of appearance.
std::vector<std::string> report_counters(const capture::benchmark_samples& b, const capture::benchmark_samples& c)
{
    std::vector<std::string> counters;
    for (const auto* side : {&b, &c}) {
        for (const auto& cs : side->counters) {
            if (std::find(counters.begin(), counters.end(), cs.name) == counters.end()) counters.push_back(cs.name);
        }
    }
    return counters;
}

// How two stored runs were measured: interleaved when one perfgate run
// measured both (the same session); otherwise apart, and judgeable against
// the candidate testbed's history only when both ran on that testbed.
gate::pairing pairing_of(const model::run_record& b, const model::run_record& c)
{
    gate::pairing how;
    how.interleaved = !b.session.empty() && b.session == c.session;
    if (!how.interleaved && b.testbed.fingerprint != c.testbed.fingerprint) {
        how.unjudgeable = fmt::format("the runs were measured on different testbeds ('{}' and '{}'), whose "
                                      "difference no history of one of them measures",
                                      b.testbed.name, c.testbed.name);
    }
    return how;
}

// The first pair's backend, testbed and commits, each kept while every
// later pair agrees with it and cleared (JSON null) when one does not.
void add_measurement(std::optional<gate::measurement>& m, const model::run_record& b, const model::run_record& c)
{
    const gate::measurement pair{b.backend == c.backend ? b.backend : std::string(),
                                 b.testbed.name == c.testbed.name ? c.testbed.name : std::string(), b.git_sha,
                                 c.git_sha};
    if (!m) {
        m = pair;
        return;
    }
    for (auto member : {&gate::measurement::backend, &gate::measurement::testbed, &gate::measurement::baseline_sha,
                        &gate::measurement::candidate_sha}) {
        if ((*m).*member != pair.*member) ((*m).*member).clear();
    }
}

// The report of the loaded runs, each benchmark with its pair of run ids.
comparison compute_report(const compare_inputs& in, const gate::policy& rules, baseline_history& hist)
{
    gate::history_fn history = [&](std::string_view benchmark, std::string_view counter) {
        return hist.medians(benchmark, counter);
    };
    comparison out;
    gate::pairing_fn pairing = [&](std::string_view benchmark) -> std::optional<gate::pairing> {
        const auto it = in.pairing_of.find(benchmark);
        if (it == in.pairing_of.end()) return std::nullopt;
        return it->second;
    };
    out.result = gate::compare(in.base, in.cand, rules, history, pairing);
    out.result.measured = in.measured;
    for (auto& b : out.result.benchmarks) {
        if (const auto it = in.runs_of.find(b.name); it != in.runs_of.end()) {
            b.baseline_run = it->second.first;
            b.candidate_run = it->second.second;
        }
    }
    return out;
}

} // namespace

namespace {

// comparison_request_key of the policy's JSON text (gate::to_json(rules).dump()).
std::string request_key_of(const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                           const std::string& policy_json)
{
    // A JSON array is an unambiguous encoding (strings are quoted and
    // escaped), so no two different requests share a canonical string. The
    // pairs keep their order: it is the order of the report's benchmarks.
    nlohmann::json canonical = nlohmann::json::array();
    canonical.push_back(request_key_version);
    canonical.push_back(project);
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& [b, c] : pairs) runs.push_back({b, c});
    canonical.push_back(std::move(runs));
    canonical.push_back(policy_json);
    return model::sha256_hex(canonical.dump());
}

} // namespace

std::string comparison_request_key(const std::string& project,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                   const gate::policy& rules)
{
    return request_key_of(project, pairs, gate::to_json(rules).dump());
}

std::optional<comparison> detail::service_impl::stored_comparison(const std::string& project,
                                                                  const std::string& key) const
{
    auto stored = db_.comparisons().find(project, key);
    if (!stored) return std::nullopt;
    comparison hit;
    hit.id = stored->first;
    nlohmann::json doc = nlohmann::json::parse(stored->second);
    hit.result = report::report_from_json(doc);
    hit.result.comparison_id = hit.id;
    doc["comparison_id"] = hit.id;
    hit.json = std::make_shared<const std::string>(report_text(doc));
    recent_->add(project, key, hit);
    return hit;
}

compare_inputs detail::service_impl::load_pairs(const std::string& project,
                                                const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                                baseline_history& hist) const
{
    compare_inputs in;
    std::set<std::string> names;
    compare_budget budget(pairs.size());
    for (const auto& [b_id, c_id] : pairs) {
        const auto b_loaded = load_for_compare(project, b_id);
        if (!b_loaded) {
            throw error(errors::compare_not_found,
                        fmt::format("baseline run {} not found in project '{}'", b_id, project));
        }
        const model::run_record* b = &b_loaded->run;
        budget.loaded(*b);
        const auto c_loaded = load_for_compare(project, c_id);
        if (!c_loaded) {
            throw error(errors::compare_not_found,
                        fmt::format("candidate run {} not found in project '{}'", c_id, project));
        }
        const model::run_record* c = &c_loaded->run;
        budget.loaded(*c);
        budget.paired(*b, *c);
        if (b->benchmark != c->benchmark) {
            throw error(errors::compare_mismatch, fmt::format("run {} is benchmark '{}' but run {} is '{}'", b_id,
                                                              b->benchmark, c_id, c->benchmark));
        }
        if (!names.insert(b->benchmark).second) {
            throw error(errors::compare_mismatch, fmt::format("benchmark '{}' appears in two pairs", b->benchmark));
        }
        in.runs_of[b->benchmark] = {b_id, c_id};
        in.pairing_of[b->benchmark] = pairing_of(*b, *c);
        add_measurement(in.measured, *b, *c);
        in.base.benchmarks.push_back(b_loaded->samples);
        in.cand.benchmarks.push_back(c_loaded->samples);
        // History: the baseline branch on the candidate's testbed, runs older
        // than the candidate (docs/statistics.md), for the report's rows.
        hist.add({b->benchmark, b->branch, c->testbed.fingerprint, c_id,
                  report_counters(in.base.benchmarks.back(), in.cand.benchmarks.back())});
    }
    return in;
}

std::variant<comparison, detail::service_impl::pending_comparison> detail::service_impl::prepare_compare(
    const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
    const gate::policy& rules, const std::optional<model::baseline_choice>& baseline) const
{
    if (pairs.empty()) throw error(errors::compare_bad_request, "no (baseline_run, candidate_run) pair given");
    // Idempotence: a comparison is a pure function of (project, pairs,
    // policy). Runs are immutable and the z-score history is runs older
    // than the candidate, which never changes once the candidate is stored.
    // So a stored report for the same key is the answer, with its id.
    // The history context (open alerts, the band since the last change
    // point) is the exception: it is what the store held when the report was
    // first computed, and a repeat returns it as it was then.
    // The policy's text, made once for the key and the report (each made
    // its own: 2% of a fresh compare's CPU, issue 47). dump() throws where
    // the report's replace would not (invalid UTF-8, which a parsed policy
    // never holds), so where it returns the two texts are the same bytes.
    const std::string policy_json = gate::to_json(rules).dump();
    const std::string key = request_key_of(project, pairs, policy_json);
    if (auto hit = recent_->find(project, key)) return *hit;
    // The reads below (the stored report, runs, histories, change points,
    // open alerts) share one snapshot: one read transaction, not one each.
    std::optional<store::store::read_scope> reads(std::in_place, db_);
    if (auto hit = stored_comparison(project, key)) return *hit;

    baseline_history hist(db_, project, rules, histories_->lru);
    const compare_inputs in = load_pairs(project, pairs, hist);
    comparison out = compute_report(in, rules, hist);
    out.result.baseline = baseline;
    // As the store holds it now, kept with the report (the idempotence note above).
    add_history_context(out.result, db_, project, hist);
    reads.reset(); // before the write
    pending_comparison p;
    // Written once: stored without the id (not known yet), served with it.
    p.row.report_json = report::to_json_text(out.result, &p.id_at, policy_json);
    p.row.project = project;
    p.row.baseline_run = pairs.front().first;
    p.row.candidate_run = pairs.front().second;
    p.row.request_key = key;
    p.row.verdict = gate::to_string(out.result.result);
    p.row.benchmark_count = static_cast<std::int64_t>(out.result.benchmarks.size());
    p.out = std::move(out);
    return p;
}

// The stored comparison as served: its id in the report and in the text
// (taken from the row), kept in the comparison cache.
std::shared_ptr<const comparison> detail::service_impl::finish_comparison(comparison_cache& recent, comparison out,
                                                                          std::size_t id_at, store::comparison_row& row,
                                                                          std::int64_t id)
{
    out.id = id;
    out.result.comparison_id = id;
    std::string text = std::move(row.report_json);
    text.insert(id_at, fmt::format(",\"comparison_id\":{}", id));
    out.json = std::make_shared<const std::string>(std::move(text));
    return recent.keep(row.project, row.request_key, std::move(out));
}

comparison detail::service_impl::compare(const std::string& project,
                                         const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                         const gate::policy& rules,
                                         const std::optional<model::baseline_choice>& baseline)
{
    auto prepared = prepare_compare(project, pairs, rules, baseline);
    if (auto* ready = std::get_if<comparison>(&prepared)) return std::move(*ready);
    auto& p = std::get<pending_comparison>(prepared);
    // Two identical requests that both missed the stored report: the store
    // keeps the first row and returns its id to the second.
    const std::int64_t id = db_.comparisons().insert(p.row.project, p.row.baseline_run, p.row.candidate_run,
                                                     p.row.report_json, p.row.request_key,
                                                     store::report_facts{p.row.verdict, p.row.benchmark_count});
    return *finish_comparison(*recent_, std::move(p.out), p.id_at, p.row, id);
}

std::optional<comparison> detail::service_impl::compare_later(
    const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
    const gate::policy& rules, compare_done done, const std::optional<model::baseline_choice>& baseline)
{
    if (!committer_) return compare(project, pairs, rules, baseline);
    auto prepared = prepare_compare(project, pairs, rules, baseline);
    if (auto* ready = std::get_if<comparison>(&prepared)) return std::move(*ready);
    auto& p = std::get<pending_comparison>(prepared);
    auto row = std::move(p.row);
    committer_->push(std::move(row), [recent = recent_, out = std::move(p.out), id_at = p.id_at,
                                      done = std::move(done)](const std::exception_ptr& error, std::int64_t id,
                                                              store::comparison_row& stored) mutable {
        if (error) return done(error, nullptr);
        std::shared_ptr<const comparison> c;
        try {
            c = finish_comparison(*recent, std::move(out), id_at, stored, id);
        } catch (...) {
            return done(std::current_exception(), nullptr);
        }
        done(nullptr, c.get());
    });
    return std::nullopt;
}

std::optional<gate::report> detail::service_impl::load_comparison(const std::string& project, std::int64_t id) const
{
    auto text = db_.comparisons().load(project, id);
    if (!text) return std::nullopt;
    gate::report r = report::report_from_json(nlohmann::json::parse(*text));
    r.comparison_id = id;
    // Attribution arrives after the comparison (store_attribution): the
    // stored report never has it, its artifact rows do.
    for (const auto& stored : db_.artifacts().load_attributions(project, id)) {
        auto it = std::find_if(r.benchmarks.begin(), r.benchmarks.end(),
                               [&](const gate::benchmark_report& b) { return b.name == stored.first; });
        if (it != r.benchmarks.end())
            it->attribution_info = report::attribution_from_json(nlohmann::json::parse(stored.second));
    }
    return r;
}

} // namespace perfgate::service
