#include "service/service.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "gate/compare.hpp"
#include "capture/names.hpp"
#include "capture/perf_csv.hpp"
#include "capture/samples.hpp"
#include "model/digest.hpp"
#include "model/error.hpp"
#include "model/testbed.hpp"
#include "report/render.hpp"
#include "service/lru_cache.hpp"

namespace perfgate::service {

namespace {

// The stored / served form of a report. Invalid UTF-8 (a warning may quote a
// benchmark's own stderr) is replaced, never a reason to lose the report.
std::string report_text(const nlohmann::json& report_json)
{
    return report_json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

model::run_record record_from(const model::ingest_request& req, const capture::perf_capture& cap)
{
    model::run_record run;
    run.project = req.project;
    run.benchmark = req.benchmark;
    run.role = req.role;
    run.git_sha = req.git_sha;
    run.branch = req.branch;
    run.pr = req.pr;
    run.testbed = req.testbed;
    run.backend = req.backend;
    run.environment_json = req.environment_json;
    run.summary_only = cap.summary_only;
    for (std::size_t e = 0; e < cap.events.size(); ++e) {
        model::counter_samples cs;
        cs.counter = cap.events[e].name;
        cs.unit = cap.events[e].unit;
        for (std::size_t r = 0; r < cap.runs.size(); ++r) {
            const capture::reading& rd = cap.runs[r][e];
            cs.samples.push_back({static_cast<int>(r), rd.value, rd.pcnt_running, rd.variance_pct});
        }
        run.counters.push_back(std::move(cs));
    }
    return run;
}

// Version of the request key's canonical form. Bump it whenever a change
// makes the same inputs produce a different report (statistics, report
// fields), so that comparisons stored by an older perfgate are recomputed
// instead of being returned to the new one.
// v2: reports carry history context (open_alerts, band, outside_band).
// v3: reports carry per-counter `sequential` (policy.sequential) and the noise
// diagnosis (noise).
constexpr std::string_view request_key_version = "perfgate.compare-key/v3";

} // namespace

// The repeated-compare path without SQLite and without parsing the stored
// JSON: recent reports by request key, in memory. Safe because a stored
// comparison never changes (no API updates or deletes one) and its id is
// fixed. A miss falls back to store::find_comparison, so several processes
// on one database still agree.
//
// Bounded in bytes, not entries: a report is ~750 bytes of JSON per counter,
// so one report ranges from 1 KB to ~3 MB (max_compare_counters), and 128
// entries of the largest kind once held 137 MB. An entry is charged its JSON
// text plus an estimate of the in-memory report (bytes_of()).
struct service::comparison_cache {
    struct entry {
        std::int64_t id;
        gate::report result;
        std::shared_ptr<const std::string> json;
    };
    lru_cache<entry> lru{comparison_cache_bytes, comparison_cache_max_entry_bytes};

    std::optional<comparison> find(const std::string& project, const std::string& key)
    {
        const auto hit = lru.find(cache_key({project, key}));
        if (!hit) return std::nullopt;
        return comparison{hit->id, hit->result, hit->json};
    }
    void add(const std::string& project, const std::string& key, const comparison& c)
    {
        const std::size_t cost = bytes_of(c);
        if (cost > comparison_cache_max_entry_bytes) return;   // before copying the report
        lru.add(cache_key({project, key}), std::make_shared<const entry>(entry{c.id, c.result, c.json}), cost);
    }

    // What an entry holds: the JSON text, and the report's vectors and
    // strings (their allocations, not exact heap overhead).
    static std::size_t bytes_of(const comparison& c)
    {
        const gate::report& r = c.result;
        std::size_t n = sizeof(entry) + (c.json ? c.json->size() : 0);
        for (const auto& w : r.warnings) n += sizeof(std::string) + w.capacity();
        for (const auto& b : r.benchmarks) {
            n += sizeof(gate::benchmark_report) + b.name.capacity();
            for (const auto& cr : b.counters) {
                n += sizeof(gate::counter_report) + cr.name.capacity() + cr.unit.capacity() + cr.reason.capacity();
                if (cr.open_alerts) {
                    n += cr.open_alerts->capacity() * sizeof(gate::open_alert);
                    for (const auto& a : *cr.open_alerts) n += a.git_sha.capacity();
                }
            }
        }
        // Policy overrides: a map node each, with its name.
        constexpr std::size_t node = 64;
        for (const auto& [name, o] : r.rules.counters) n += node + sizeof(o) + name.capacity();
        for (const auto& [name, b] : r.rules.benchmarks) {
            n += node + sizeof(b) + name.capacity();
            for (const auto& [cname, o] : b.counters) n += node + sizeof(o) + cname.capacity();
        }
        return n;
    }
};

// A run as a compare uses it: the stored record (for the limits and the
// history's series) and its samples with the derived counters.
struct service::loaded_run {
    model::run_record run;
    capture::benchmark_samples samples;

    // Its vectors' and strings' allocations (not exact heap overhead).
    [[nodiscard]] std::size_t bytes() const
    {
        std::size_t n = sizeof(loaded_run) + run.project.capacity() + run.benchmark.capacity() +
                        run.role.capacity() + run.git_sha.capacity() + run.branch.capacity() +
                        run.testbed.name.capacity() + run.testbed.cpu.capacity() + run.testbed.kernel.capacity() +
                        run.testbed.fingerprint.capacity() + run.backend.capacity() +
                        run.environment_json.capacity() + samples.name.capacity();
        for (const auto& c : run.counters) {
            n += sizeof(c) + c.counter.capacity() + c.unit.capacity() + c.samples.capacity() * sizeof(model::sample);
        }
        for (const auto& c : samples.counters) {
            n += sizeof(c) + c.name.capacity() + c.unit.capacity() +
                 (c.values.capacity() + c.variance_pct.capacity()) * sizeof(double) +
                 (c.derived ? sizeof(gate::series_derived) : 0);
        }
        return n;
    }
};

// Safe without invalidation: runs are immutable and never deleted (no API
// updates or removes one), so a cached run is what the store holds.
struct service::run_cache {
    lru_cache<loaded_run> lru{run_cache_bytes, run_cache_max_entry_bytes};
};

struct service::history_cache {
    lru_cache<std::vector<std::vector<model::history_point>>> lru{history_cache_bytes, history_cache_max_entry_bytes};
};

service::service(store::store& db)
    : db_(db),
      recent_(std::make_shared<comparison_cache>()),
      runs_(std::make_shared<run_cache>()),
      histories_(std::make_shared<history_cache>())
{
}

std::shared_ptr<const service::loaded_run> service::load_for_compare(const std::string& project,
                                                                     std::int64_t id) const
{
    const std::string key = cache_key({project, std::to_string(id)});
    if (auto hit = runs_->lru.find(key)) return hit;
    auto run = db_.load_run(project, id);
    if (!run) return nullptr;
    auto loaded = std::make_shared<loaded_run>();
    loaded->samples = capture::samples_from_run(*run);
    // Summaries and noise shapes once per run, not once per compare: a
    // baseline on main meets every pull request's candidate.
    gate::derive_series(loaded->samples);
    loaded->run = std::move(*run);
    runs_->lru.add(key, loaded, loaded->bytes());
    return loaded;
}

std::optional<model::run_record> service::run(const std::string& project, std::int64_t id) const
{
    require_project(project);
    return db_.load_run(project, id);
}

std::string comparison_request_key(const std::string& project,
                                   const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                   const gate::policy& rules)
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
    canonical.push_back(gate::to_json(rules).dump());
    return model::sha256_hex(canonical.dump());
}

namespace {

// The same rules for every stored run, from the CLI's local mode or the
// server, checked once here (gate/names.hpp).
void validate_identity(const model::run_record& run)
{
    capture::validate_name("project", run.project);
    capture::validate_name("benchmark", run.benchmark);
    if (!run.branch.empty()) capture::validate_name("branch", run.branch);
    if (!run.git_sha.empty()) capture::validate_name("git_sha", run.git_sha);
    capture::validate_role(run.role);
    capture::validate_backend(run.backend);
    if (!run.testbed.name.empty()) capture::validate_name("testbed.name", run.testbed.name);
    if (!run.testbed.fingerprint.empty()) capture::validate_name("testbed.fingerprint", run.testbed.fingerprint);
    capture::validate_text("testbed.cpu", run.testbed.cpu);
    capture::validate_text("testbed.kernel", run.testbed.kernel);
}

// The limits of one run (perf_csv.hpp), for runs from a capture and from
// the runner alike. Repetition numbers index a dense table when the run is
// compared (samples_from_run), so they are bounded too, not just counted.
void check_run_limits(const model::run_record& run)
{
    if (run.counters.size() > capture::max_counters_per_run) {
        throw error("ingest.too_many_counters", fmt::format("the run has {} counters; at most {} counters per run",
                                                            run.counters.size(), capture::max_counters_per_run));
    }
    for (const auto& c : run.counters) {
        if (c.samples.size() > capture::max_repetitions) {
            throw error("ingest.too_many_repetitions",
                        fmt::format("counter '{}' has {} samples; at most {} repetitions per run", c.counter,
                                    c.samples.size(), capture::max_repetitions));
        }
        for (const auto& s : c.samples) {
            if (s.repetition < 0 || static_cast<std::size_t>(s.repetition) >= capture::max_repetitions) {
                throw error("ingest.too_many_repetitions",
                            fmt::format("counter '{}': repetition {} is outside [0, {}): at most {} repetitions per run",
                                        c.counter, s.repetition, capture::max_repetitions, capture::max_repetitions));
            }
        }
    }
}

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
            throw error("compare.too_large",
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
            throw error("compare.too_large",
                        fmt::format("this gate compares more than {} counters ({} in the first {} of its {} pairs); "
                                    "at most {} counters per compare: compare fewer pairs per request",
                                    max_compare_counters, counters_, paired_, pairs_, max_compare_counters));
        }
    }

private:
    std::size_t pairs_, runs_ = 0, paired_ = 0, samples_ = 0, counters_ = 0;
};

// The recent band of a series (report.hpp, history_band): the points from
// the last one where a stored change point starts, or all of them, when
// there are at least policy.history_min (and two). Points before a change
// belong to another level: a band across it would hold both.
std::optional<gate::history_band> band_of(const std::vector<model::history_point>& points,
                                    const std::vector<model::change_point_record>& changes, const gate::policy& rules)
{
    std::set<std::int64_t> starts;
    for (const auto& cp : changes) starts.insert(cp.run_id);
    std::size_t first = 0;
    std::optional<std::int64_t> since;
    for (std::size_t i = points.size(); i-- > 0;) {
        if (starts.contains(points[i].run_id)) {
            first = i;
            since = points[i].run_id;
            break;
        }
    }
    const std::size_t n = points.size() - first;
    if (n < std::max<std::size_t>(rules.history_min, 2)) return std::nullopt;
    const auto [lo, hi] = std::minmax_element(points.begin() + static_cast<std::ptrdiff_t>(first), points.end(),
                                              [](const auto& x, const auto& y) { return x.median < y.median; });
    return gate::history_band{lo->median, hi->median, n, since};
}

// The baseline-branch history of one compare: per benchmark, the series it
// is gated against (the baseline run's branch, the candidate's testbed, runs
// older than the candidate). The z-score reads a series's last
// policy.history medians; the band of the same points is kept then (a few
// numbers per counter, not the points: a gate of 4096 counters reads up to
// 1000 each). A benchmark's counters are read together, with the change
// points of all of them (store::histories: one statement on PostgreSQL), the
// first time one of them is asked for; each counter's medians are kept until
// the z-score takes them.
class baseline_history {
public:
    struct series {
        std::string benchmark, branch, testbed;
        std::int64_t before = 0;               // the candidate run
        std::vector<std::string> counters;     // the report's: of either run, and derived
    };

    using points_by_counter = std::vector<std::vector<model::history_point>>;
    // Series points are immutable (see read()): kept across compares here.
    using cache = lru_cache<points_by_counter>;

    baseline_history(const store::store& db, const std::string& project, const gate::policy& rules, cache& points)
        : db_(db), project_(project), rules_(rules), cache_(points)
    {
    }

    void add(series s) { series_.push_back(std::move(s)); }

    [[nodiscard]] const series* find(std::string_view benchmark) const
    {
        auto it = std::find_if(series_.begin(), series_.end(),
                               [&](const series& s) { return s.benchmark == benchmark; });
        return it == series_.end() ? nullptr : &*it;
    }

    // The last policy.history baseline-run medians of (benchmark, counter),
    // oldest first; empty for a benchmark not compared. With no branch on
    // the baseline run, any branch's (as the z-score always read them).
    std::vector<double> medians(std::string_view benchmark, std::string_view counter)
    {
        fetch(benchmark);
        auto key = std::pair{std::string(benchmark), std::string(counter)};
        if (auto it = medians_.find(key); it != medians_.end()) {
            std::vector<double> out = std::move(it->second);
            medians_.erase(it);
            return out;
        }
        // A counter neither run has (or asked for twice): read on its own.
        const series* s = find(benchmark);
        if (!s) return {};
        current_ = s;
        const auto points = read({std::string(counter)});
        std::vector<double> out;
        for (const auto& p : points->front()) out.push_back(p.median);
        return out;
    }

    // The recent band of (benchmark, counter); none for a baseline run
    // without a branch (a change point is always one branch's).
    std::optional<gate::history_band> band(std::string_view benchmark, std::string_view counter)
    {
        fetch(benchmark);
        auto key = std::pair{std::string(benchmark), std::string(counter)};
        if (auto it = bands_.find(key); it != bands_.end()) return it->second;
        const series* s = find(benchmark);
        if (!s || s->branch.empty()) return std::nullopt;
        current_ = s;
        const auto points = read({std::string(counter)});
        return band_from(points->front(), std::string(counter), nullptr);
    }

private:
    // Every counter of the benchmark's series, once.
    void fetch(std::string_view benchmark)
    {
        const series* s = find(benchmark);
        if (!s || !fetched_.insert(s->benchmark).second) return;
        current_ = s;
        const auto read_all = read(s->counters);
        const points_by_counter& all = *read_all;
        // The change points of all its counters in one query, when some
        // counter has enough points for a band.
        std::optional<std::vector<model::change_point_record>> changes;
        const std::size_t enough = std::max<std::size_t>(rules_.history_min, 2);
        if (!s->branch.empty() &&
            std::any_of(all.begin(), all.end(), [&](const auto& points) { return points.size() >= enough; })) {
            changes = db_.change_points(project_, {s->benchmark, "", s->testbed, s->branch});
        }
        for (std::size_t i = 0; i < s->counters.size(); ++i) {
            const auto key = std::pair{s->benchmark, s->counters[i]};
            bands_[key] = s->branch.empty() ? std::nullopt : band_from(all[i], s->counters[i], changes ? &*changes : nullptr);
            std::vector<double> m;
            m.reserve(all[i].size());
            for (const auto& p : all[i]) m.push_back(p.median);
            medians_[key] = std::move(m);
        }
    }

    // The series's points of counters (current_'s benchmark): the last
    // policy.history runs older than the candidate. They never change once
    // the candidate is stored (runs are immutable, never deleted, and a run
    // stored later has a larger id), so they are cached by the whole query.
    std::shared_ptr<const points_by_counter> read(const std::vector<std::string>& counters)
    {
        std::string key = cache_key({project_, current_->benchmark, current_->branch, current_->testbed,
                                     std::to_string(current_->before), std::to_string(rules_.history)});
        for (const auto& c : counters) key += cache_key({c});
        if (auto hit = cache_.find(key)) return hit;
        model::history_query q;
        q.project = project_;
        q.benchmark = current_->benchmark;
        if (!current_->branch.empty()) q.branch = current_->branch;
        if (!current_->testbed.empty()) q.testbed = current_->testbed;
        q.role = "baseline";
        q.before_run = current_->before;
        q.limit = rules_.history;
        auto points = std::make_shared<const points_by_counter>(
            db_.histories(q, counters, store::store::history_detail::medians));
        std::size_t bytes = sizeof(points_by_counter) + key.size();
        for (const auto& series : *points) {
            bytes += sizeof(series) + series.capacity() * sizeof(model::history_point);
            for (const auto& p : series) bytes += p.git_sha.capacity() + p.branch.capacity();
        }
        cache_.add(key, points, bytes);
        return points;
    }

    // The band of one counter's points; changes: the benchmark's change
    // points (all counters), or null to read this counter's.
    std::optional<gate::history_band> band_from(const std::vector<model::history_point>& points, const std::string& counter,
                                          const std::vector<model::change_point_record>* changes)
    {
        if (points.size() < std::max<std::size_t>(rules_.history_min, 2)) return std::nullopt;
        std::vector<model::change_point_record> mine;
        if (changes) {
            for (const auto& cp : *changes) {
                if (cp.series.counter == counter) mine.push_back(cp);
            }
        } else {
            mine = db_.change_points(project_, {current_->benchmark, counter, current_->testbed, current_->branch});
        }
        return band_of(points, mine, rules_);
    }

    const store::store& db_;
    const std::string& project_;
    const gate::policy& rules_;
    cache& cache_;
    std::vector<series> series_;
    const series* current_ = nullptr;
    std::set<std::string> fetched_;
    std::map<std::pair<std::string, std::string>, std::vector<double>> medians_;
    std::map<std::pair<std::string, std::string>, std::optional<gate::history_band>> bands_;
};

// Each counter's history context (report.hpp): the open alerts on its
// series and the recent band. Only for a baseline run with a branch: the
// series of a change point or an alert is always one branch's.
void add_history_context(gate::report& r, const store::store& db, const std::string& project, baseline_history& hist)
{
    for (auto& b : r.benchmarks) {
        const baseline_history::series* s = hist.find(b.name);
        if (!s || s->branch.empty()) continue;
        // The series group's open alerts, oldest first; at most as many as
        // GET .../alerts lists of each of the two states (a series has a
        // handful; this bounds a compare against a project nobody triages).
        const std::vector<model::alert> open = db.open_alerts(project, s->benchmark, s->testbed, s->branch,
                                                              2 * max_alert_limit);
        for (auto& c : b.counters) {
            std::vector<gate::open_alert> mine;
            for (const auto& a : open) {
                if (a.change.series.counter != c.name) continue;
                mine.push_back({a.id, a.status, a.change.delta_pct, a.change.run_id, a.change.git_sha});
            }
            c.open_alerts = std::move(mine);
            c.band = hist.band(b.name, c.name);
            if (c.band && c.candidate.median) {
                c.outside_band = *c.candidate.median < c.band->lo || *c.candidate.median > c.band->hi;
            }
        }
    }
}

} // namespace

std::string ingest_request_digest(const model::ingest_request& req)
{
    // A JSON array: an unambiguous encoding of every field (strings quoted).
    const nlohmann::json canonical = {
        "perfgate.ingest-request/v1", req.project, req.benchmark, req.role, req.git_sha, req.branch,
        req.pr ? nlohmann::json(*req.pr) : nlohmann::json(), req.testbed.name, req.testbed.cpu, req.testbed.cores,
        req.testbed.kernel, req.testbed.fingerprint, req.backend, req.environment_json, req.perf_csv};
    return model::sha256_hex(canonical.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

model::ingest_result service::ingest(const model::ingest_request& req, const std::optional<std::string>& idempotency_key)
{
    if (idempotency_key) {
        const auto& key = *idempotency_key;
        const bool printable = std::all_of(key.begin(), key.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; });
        if (key.empty() || key.size() > max_idempotency_key_bytes || !printable) {
            throw error("ingest.bad_idempotency_key",
                        fmt::format("Idempotency-Key: expected 1 to {} printable ASCII characters without spaces "
                                    "(e.g. a UUID), got {} bytes",
                                    max_idempotency_key_bytes, key.size()));
        }
    }
    // Identity first, so a bad field is named before the capture is parsed.
    validate_identity(record_from(req, {}));
    if (req.perf_csv.empty()) throw error("ingest.bad_field", "field 'perf_csv': empty; expected perf stat -x, output");
    const capture::perf_capture cap = capture::parse_perf_stat(req.perf_csv, req.source);
    model::run_record run = record_from(req, cap);
    model::ingest_result res =
        store_checked(std::move(run), idempotency_key, idempotency_key ? ingest_request_digest(req) : std::string());
    res.warnings.insert(res.warnings.begin(), cap.warnings.begin(), cap.warnings.end());
    return res;
}

model::ingest_result service::ingest_run(model::run_record run) { return store_checked(std::move(run), {}, {}); }

model::ingest_result service::store_checked(model::run_record run, const std::optional<std::string>& key,
                                            const std::string& digest)
{
    validate_identity(run);
    // One testbed identity whichever client sent the run (model/testbed.hpp).
    run.testbed.fingerprint = model::fingerprint_of(run.testbed);
    if (run.counters.empty()) throw error("ingest.bad_csv", "the run has no counters");
    check_run_limits(run);
    std::set<std::string> seen;
    model::ingest_result res;
    for (const auto& c : run.counters) {
        capture::validate_name("counter", c.counter);
        if (!seen.insert(c.counter).second) {
            throw error("ingest.bad_field", fmt::format("counter '{}' appears twice in one run", c.counter));
        }
        for (const auto& s : c.samples) res.samples += s.value.has_value();
    }
    if (res.samples == 0) {
        res.warnings.push_back("no counter has a value (all <not supported> / <not counted>)");
    }
    res.counters = run.counters.size();
    if (key) {
        try {
            const auto stored = db_.insert_run(run, *key, digest);
            res.run_id = stored.run_id;
            res.replayed = stored.replayed;
        } catch (const error& e) {
            if (e.id() != "store.key_conflict") throw;
            throw error("ingest.idempotency_conflict",
                        fmt::format("Idempotency-Key '{}' was already used for a different upload to project '{}': "
                                    "send a new key for a new run (the same key only to retry the same request)",
                                    *key, run.project));
        }
        // The first upload under this key queued its watch already.
        if (res.replayed) return res;
    } else {
        res.run_id = db_.insert_run(run);
    }
    run.id = res.run_id;
    if (!watched_role(run)) return res;
    if (watcher_) {
        watcher_->push(watch_job_of(run));
        return res;
    }
    // The run is stored: a failure to watch its series must not turn into an
    // error the client would retry (and store the run twice).
    try {
        res.alerts = watch_series(db_, watch_job_of(run));
    } catch (const std::exception& e) {
        res.warnings.push_back(fmt::format("change-point detection after storing run {} failed: {}", res.run_id,
                                           e.what()));
    }
    return res;
}

// A fresh report, computed and serialised, waiting to be stored (compare,
// compare_later).
struct service::pending_comparison {
    comparison out;            // without its id
    std::size_t id_at = 0;     // where the id goes in the stored text (row.report_json)
    store::store::comparison_row row;
};

std::variant<comparison, service::pending_comparison> service::prepare_compare(
    const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
    const gate::policy& rules) const
{
    if (pairs.empty()) throw error("compare.bad_request", "no (baseline_run, candidate_run) pair given");
    // Idempotence: a comparison is a pure function of (project, pairs,
    // policy). Runs are immutable and the z-score history is runs older
    // than the candidate, which never changes once the candidate is stored.
    // So a stored report for the same key is the answer, with its id.
    // The history context (open alerts, the band since the last change
    // point) is the exception: it is what the store held when the report was
    // first computed, and a repeat returns it as it was then.
    const std::string key = comparison_request_key(project, pairs, rules);
    if (auto hit = recent_->find(project, key)) return *hit;
    // The reads below (the stored report, runs, histories, change points,
    // open alerts) share one snapshot: one read transaction, not one each.
    std::optional<store::store::read_scope> reads(std::in_place, db_);
    if (auto stored = db_.find_comparison(project, key)) {
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

    capture::sample_set base, cand;
    baseline_history hist(db_, project, rules, histories_->lru);
    std::set<std::string> names;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>, std::less<>> runs_of;   // benchmark -> its pair
    compare_budget budget(pairs.size());
    for (const auto& [b_id, c_id] : pairs) {
        const auto b_loaded = load_for_compare(project, b_id);
        if (!b_loaded) {
            throw error("compare.not_found", fmt::format("baseline run {} not found in project '{}'", b_id, project));
        }
        const model::run_record* b = &b_loaded->run;
        budget.loaded(*b);
        const auto c_loaded = load_for_compare(project, c_id);
        if (!c_loaded) {
            throw error("compare.not_found", fmt::format("candidate run {} not found in project '{}'", c_id, project));
        }
        const model::run_record* c = &c_loaded->run;
        budget.loaded(*c);
        budget.paired(*b, *c);
        if (b->benchmark != c->benchmark) {
            throw error("compare.mismatch", fmt::format("run {} is benchmark '{}' but run {} is '{}'", b_id,
                                                        b->benchmark, c_id, c->benchmark));
        }
        if (!names.insert(b->benchmark).second) {
            throw error("compare.mismatch", fmt::format("benchmark '{}' appears in two pairs", b->benchmark));
        }
        runs_of[b->benchmark] = {b_id, c_id};
        base.benchmarks.push_back(b_loaded->samples);
        cand.benchmarks.push_back(c_loaded->samples);
        // History: the baseline branch on the candidate's testbed, runs older
        // than the candidate (docs/statistics.md), for the counters of either run
        // and the derived ones (the report's rows).
        std::vector<std::string> counters;
        for (const auto* side : {&base.benchmarks.back(), &cand.benchmarks.back()}) {
            for (const auto& cs : side->counters) {
                if (std::find(counters.begin(), counters.end(), cs.name) == counters.end()) counters.push_back(cs.name);
            }
        }
        hist.add({b->benchmark, b->branch, c->testbed.fingerprint, c_id, std::move(counters)});
    }

    gate::history_fn history = [&](std::string_view benchmark, std::string_view counter) {
        return hist.medians(benchmark, counter);
    };

    comparison out;
    out.result = gate::compare(base, cand, rules, history);
    for (auto& b : out.result.benchmarks) {
        if (const auto it = runs_of.find(b.name); it != runs_of.end()) {
            b.baseline_run = it->second.first;
            b.candidate_run = it->second.second;
        }
    }
    // As the store holds it now, kept with the report (the idempotence note above).
    add_history_context(out.result, db_, project, hist);
    reads.reset();   // before the write
    pending_comparison p;
    // Written once: stored without the id (not known yet), served with it.
    p.row.report_json = report::to_json_text(out.result, &p.id_at);
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
// (taken from the row).
comparison service::finish_comparison(comparison_cache& recent, comparison out, std::size_t id_at,
                                      store::store::comparison_row& row, std::int64_t id)
{
    out.id = id;
    out.result.comparison_id = id;
    std::string text = std::move(row.report_json);
    text.insert(id_at, fmt::format(",\"comparison_id\":{}", id));
    out.json = std::make_shared<const std::string>(std::move(text));
    recent.add(row.project, row.request_key, out);
    return out;
}

comparison service::compare(const std::string& project,
                            const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs, const gate::policy& rules)
{
    auto prepared = prepare_compare(project, pairs, rules);
    if (auto* ready = std::get_if<comparison>(&prepared)) return std::move(*ready);
    auto& p = std::get<pending_comparison>(prepared);
    // Two identical requests that both missed the stored report: the store
    // keeps the first row and returns its id to the second.
    const std::int64_t id = db_.insert_comparison(p.row.project, p.row.baseline_run, p.row.candidate_run,
                                                  p.row.report_json, p.row.request_key,
                                                  store::store::report_facts{p.row.verdict, p.row.benchmark_count});
    return finish_comparison(*recent_, std::move(p.out), p.id_at, p.row, id);
}

std::optional<comparison> service::compare_later(const std::string& project,
                                                 const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                                 const gate::policy& rules, compare_done done)
{
    if (!committer_) return compare(project, pairs, rules);
    auto prepared = prepare_compare(project, pairs, rules);
    if (auto* ready = std::get_if<comparison>(&prepared)) return std::move(*ready);
    auto& p = std::get<pending_comparison>(prepared);
    auto row = std::move(p.row);
    committer_->push(std::move(row),
                     [recent = recent_, out = std::move(p.out), id_at = p.id_at, done = std::move(done)](
                         std::exception_ptr error, std::int64_t id, store::store::comparison_row& stored) mutable {
                         if (error) return done(error, nullptr);
                         std::optional<comparison> c;
                         try {
                             c = finish_comparison(*recent, std::move(out), id_at, stored, id);
                         } catch (...) {
                             return done(std::current_exception(), nullptr);
                         }
                         done(nullptr, &*c);
                     });
    return std::nullopt;
}

void service::commit_in_background(std::size_t max_batch)
{
    committer_ = std::make_shared<commit_queue>(db_, max_batch);
}

void service::drain_commits() const
{
    if (committer_) committer_->drain();
}

commit_queue::counts service::commit_stats() const
{
    return committer_ ? committer_->stats() : commit_queue::counts{};
}

std::optional<gate::report> service::load_comparison(const std::string& project, std::int64_t id) const
{
    auto text = db_.load_comparison(project, id);
    if (!text) return std::nullopt;
    gate::report r = report::report_from_json(nlohmann::json::parse(*text));
    r.comparison_id = id;
    return r;
}

std::vector<model::history_point> service::history(const model::history_query& q) const
{
    capture::validate_name("project", q.project);
    capture::validate_name("benchmark", q.benchmark);
    capture::validate_name("counter", q.counter);
    if (q.branch) capture::validate_name("branch", *q.branch);
    if (q.testbed) capture::validate_name("testbed", *q.testbed);
    auto points = db_.history(q);
    if (points.empty()) return points;
    // Mark the runs where a stored change point starts.
    model::series_key key{q.benchmark, q.counter, q.testbed.value_or(""), q.branch.value_or("")};
    std::set<std::int64_t> starts;
    for (const auto& cp : db_.change_points(q.project, key)) starts.insert(cp.run_id);
    for (auto& p : points) p.change_point = starts.contains(p.run_id);
    return points;
}

void service::authorize(std::string_view token, const std::string& project) const
{
    auto owner = db_.token_project(token);
    if (!owner) throw error("auth.bad_token", "Authorization header: unknown or revoked token");
    if (*owner != project) {
        throw error("auth.forbidden", fmt::format("this token does not grant access to project '{}'", project));
    }
}

bool service::project_exists(const std::string& project) const { return db_.project_exists(project); }

void service::require_project(const std::string& project) const
{
    capture::validate_name("project", project);
    if (!db_.project_exists(project)) {
        throw error("project.not_found",
                    fmt::format("no project '{}' (projects are created by `perfgate token create`)", project));
    }
}

void service::ensure_project(const std::string& project)
{
    capture::validate_name("project", project);
    db_.ensure_project(project);
}

std::string service::create_token(const std::string& project, std::string_view name)
{
    capture::validate_name("project", project);
    return db_.create_token(project, name);
}

std::vector<model::comparison_summary> service::recent_comparisons(const std::string& project,
                                                                  std::size_t limit) const
{
    require_project(project);
    if (limit < 1 || limit > max_comparison_limit) {
        throw error("query.bad_value", fmt::format("limit {}: expected 1 to {}", limit, max_comparison_limit));
    }
    return db_.recent_comparisons(project, limit);
}

std::string normalize_repository_url(std::string_view label, std::string_view url)
{
    if (url.empty()) return {};
    // The user's text, bounded: a message quotes at most this much of it.
    constexpr std::size_t max_shown = 80;
    const std::string shown = url.size() > max_shown ? fmt::format("'{}...'", url.substr(0, max_shown))
                                                     : fmt::format("'{}'", url);
    if (!url.starts_with("https://") && !url.starts_with("http://")) {
        throw error("ingest.bad_field", fmt::format("{}: {} must start with https:// or http://", label, shown));
    }
    // Pages put the URL into href attributes and append "/commit/{sha}": a
    // byte that ends an attribute or a tag, or a query or fragment that the
    // appended path would land in, makes a broken or hostile link.
    constexpr std::string_view markup = "\"'<>`\\";
    for (std::size_t i = 0; i < url.size(); ++i) {
        const auto c = static_cast<unsigned char>(url[i]);
        if (c <= 0x20 || c >= 0x7f) {
            throw error("ingest.bad_field",
                        fmt::format("{}: byte 0x{:02x} at offset {} is not allowed in a URL (no whitespace, control "
                                    "or non-ASCII bytes: percent-encode them)",
                                    label, c, i));
        }
        if (markup.find(static_cast<char>(c)) != std::string_view::npos) {
            throw error("ingest.bad_field", fmt::format("{}: '{}' at offset {} is not allowed in a URL (no quotes, "
                                                        "<, >, ` or \\)",
                                                        label, static_cast<char>(c), i));
        }
        if (c == '?' || c == '#') {
            throw error("ingest.bad_field",
                        fmt::format("{}: '{}' at offset {}: the URL cannot have a query or a fragment (pages append "
                                    "/commit/SHA to it)",
                                    label, static_cast<char>(c), i));
        }
    }
    const std::size_t scheme = url.starts_with("https://") ? 8 : 7;
    std::string_view stored = url;
    while (stored.size() > scheme && stored.ends_with('/')) stored.remove_suffix(1);
    const std::string_view host = stored.substr(scheme);
    if (host.empty() || host.front() == '/') {
        throw error("ingest.bad_field", fmt::format("{}: {} has no host", label, shown));
    }
    if (stored.size() > max_repository_url_bytes) {
        throw error("ingest.bad_field", fmt::format("{}: {} bytes, longer than the limit of {}", label, stored.size(),
                                                    max_repository_url_bytes));
    }
    return std::string(stored);
}

std::optional<std::string> service::repository_url(const std::string& project) const
{
    require_project(project);
    return db_.repository_url(project);
}

void service::set_repository_url(const std::string& project, std::string_view url)
{
    require_project(project);
    db_.set_repository_url(project, normalize_repository_url("field 'repository_url'", url));
}

std::int64_t service::store_size_bytes() const { return db_.size_bytes(); }

std::size_t service::cached_comparison_bytes() const { return recent_->lru.size_bytes(); }

std::size_t service::cached_comparisons() const { return recent_->lru.size(); }

std::size_t service::cached_run_bytes() const { return runs_->lru.size_bytes(); }

std::size_t service::cached_runs() const { return runs_->lru.size(); }

std::size_t service::cached_histories() const { return histories_->lru.size(); }

std::vector<model::benchmark_info> service::benchmarks(const std::string& project) const
{
    return db_.benchmarks(project);
}

} // namespace perfgate::service
