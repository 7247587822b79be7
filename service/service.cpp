#include "service/service_impl.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/harness.hpp"
#include "capture/names.hpp"
#include "capture/perf_csv.hpp"
#include "capture/samples.hpp"
#include "model/digest.hpp"
#include "model/error.hpp"
#include "model/testbed.hpp"
#include "service/caches.hpp"
#include "service/text.hpp"
#include "store/alerts.hpp"
#include "store/comparisons.hpp"
#include "store/history.hpp"
#include "store/maintenance.hpp"
#include "store/projects.hpp"
#include "store/runs.hpp"
#include "store/tokens.hpp"

namespace perfgate::service {

namespace {

model::run_record record_from(const model::ingest_request& req, const capture::perf_capture& cap)
{
    model::run_record run;
    run.identity() = req.identity();
    run.mainline = mainline_of(req);
    run.written_by = req.written_by;
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

} // namespace

detail::service_impl::service_impl(store::store& db)
    : db_(db), recent_(std::make_shared<comparison_cache>()), runs_(std::make_shared<run_cache>()),
      histories_(std::make_shared<history_cache>())
{}

std::optional<model::run_record> detail::service_impl::run(const std::string& project, std::int64_t id) const
{
    require_project(project);
    return db_.runs().load(project, id);
}

std::optional<model::reusable_run> detail::service_impl::find_reusable_run(const model::reusable_run_query& q) const
{
    require_project(q.project);
    return db_.runs().find_reusable(q);
}

namespace {

// The same rules for every stored run, from the CLI's local mode or the
// server, checked once here (capture/names.hpp).
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
    if (!run.session.empty()) capture::validate_name("session", run.session);
    capture::validate_text("testbed.cpu", run.testbed.cpu);
    capture::validate_text("testbed.kernel", run.testbed.kernel);
    capture::validate_text("toolchain", run.toolchain);
    check_stored_text(errors::ingest_bad_field, "testbed.cpu", run.testbed.cpu);
    check_stored_text(errors::ingest_bad_field, "testbed.kernel", run.testbed.kernel);
    // A pull request's job measures a branch it did not push to: its runs
    // never feed the branch's series (docs/history.md "Which runs feed the
    // series"), whoever asks.
    if (run.mainline && run.pr) {
        throw error(errors::ingest_bad_field,
                    fmt::format("field 'mainline': a run of pull request {} cannot feed the series of branch '{}'; "
                                "only runs measured by a push to the branch can",
                                *run.pr, run.branch));
    }
}

// The limits of one run (perf_csv.hpp), for runs from a capture and from
// the runner alike. Repetition numbers index a dense table when the run is
// compared (samples_from_run), so they are bounded too, not just counted.
void check_run_limits(const model::run_record& run)
{
    if (run.counters.size() > capture::max_counters_per_run) {
        throw error(errors::ingest_too_many_counters,
                    fmt::format("the run has {} counters; at most {} counters per run", run.counters.size(),
                                capture::max_counters_per_run));
    }
    for (const auto& c : run.counters) {
        if (c.samples.size() > capture::max_repetitions) {
            throw error(errors::ingest_too_many_repetitions,
                        fmt::format("counter '{}' has {} samples; at most {} repetitions per run", c.counter,
                                    c.samples.size(), capture::max_repetitions));
        }
        for (const auto& s : c.samples) {
            if (s.repetition < 0 || static_cast<std::size_t>(s.repetition) >= capture::max_repetitions) {
                throw error(
                    errors::ingest_too_many_repetitions,
                    fmt::format("counter '{}': repetition {} is outside [0, {}): at most {} repetitions per run",
                                c.counter, s.repetition, capture::max_repetitions, capture::max_repetitions));
            }
        }
    }
}

} // namespace

std::string ingest_request_digest(const model::ingest_request& req)
{
    // clang-format off
    // A JSON array: an unambiguous encoding of every field (strings quoted).
    nlohmann::json canonical = {
        "perfgate.ingest-request/v1", req.project, req.benchmark, req.role, req.git_sha, req.branch,
        req.pr ? nlohmann::json(*req.pr) : nlohmann::json(), req.testbed.name, req.testbed.cpu, req.testbed.cores,
        req.testbed.kernel, req.testbed.fingerprint, req.backend, req.environment_json, req.perf_csv};
    // clang-format on
    // Added after v1 was in use: a request without a session keeps the digest
    // it always had, so a retry across an upgrade still matches.
    if (!req.session.empty()) canonical.push_back(req.session);
    if (!req.input_format.empty()) canonical.push_back("input_format=" + req.input_format);
    if (!req.toolchain.empty()) canonical.push_back("toolchain=" + req.toolchain);
    if (req.mainline) canonical.push_back(*req.mainline ? "mainline=true" : "mainline=false");
    return model::sha256_hex(canonical.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

bool mainline_of(const model::ingest_request& req)
{
    // A token without the baseline scope (a pull request's upload token)
    // never writes the main line, whatever the upload says: its runs feed no
    // series and are never reused as a baseline (docs/http-api.md "Token
    // scopes").
    if (req.writer_scopes && !req.writer_scopes->grants(model::scope::baseline)) return false;
    // Without the field: what fed the series before it existed, less pull
    // requests' baselines (store/migrations/018_mainline_runs.sql).
    return req.mainline.value_or(req.role == "baseline" && !req.pr);
}

model::ingest_result detail::service_impl::ingest(const model::ingest_request& req,
                                                  const std::optional<std::string>& idempotency_key)
{
    if (idempotency_key) {
        const auto& key = *idempotency_key;
        const bool printable = std::all_of(key.begin(), key.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; });
        if (key.empty() || key.size() > max_idempotency_key_bytes || !printable) {
            throw error(errors::ingest_bad_idempotency_key,
                        fmt::format("Idempotency-Key: expected 1 to {} printable ASCII characters without spaces "
                                    "(e.g. a UUID), got {} bytes",
                                    max_idempotency_key_bytes, key.size()));
        }
    }
    // Identity first, so a bad field is named before the capture is parsed.
    validate_identity(record_from(req, {}));
    if (req.perf_csv.empty())
        throw error(errors::ingest_bad_field, "field 'perf_csv': empty; expected perf stat -x, output");
    std::optional<capture::input_format> forced;
    if (!req.input_format.empty()) {
        forced = capture::parse_input_format(req.input_format);
        if (!forced) {
            throw error(errors::ingest_bad_field,
                        fmt::format("field 'input_format': '{}' is not one of {}", req.input_format.substr(0, 64),
                                    capture::input_format_names()));
        }
    }
    const std::string digest = idempotency_key ? ingest_request_digest(req) : std::string();
    std::vector<std::string> scope_warnings;
    if (req.mainline.value_or(false) && !mainline_of(req)) {
        scope_warnings.push_back(fmt::format("field 'mainline': this token's scopes ({}) cannot feed the main line; "
                                             "stored with mainline false (it takes the baseline scope)",
                                             req.writer_scopes ? req.writer_scopes->to_string() : std::string()));
    }
    const capture::input_format format = forced ? *forced : capture::detect_input_format(req.perf_csv);
    if (format == capture::input_format::perf) {
        const capture::perf_capture cap = capture::parse_perf_stat(req.perf_csv, req.source);
        model::run_record run = record_from(req, cap);
        model::ingest_result res = store_checked(std::move(run), idempotency_key, digest);
        res.warnings.insert(res.warnings.begin(), cap.warnings.begin(), cap.warnings.end());
        res.warnings.insert(res.warnings.begin(), scope_warnings.begin(), scope_warnings.end());
        return res;
    }
    // A harness's output: a run per benchmark it names.
    const capture::parsed_input in = capture::parse_input(req.perf_csv, req.source, format);
    std::vector<std::string> warnings = std::move(scope_warnings);
    warnings.insert(warnings.end(), in.set.warnings.begin(), in.set.warnings.end());
    if (req.benchmark != "default") {
        warnings.push_back(fmt::format("field 'benchmark' ('{}') is not used: the {} output names its benchmarks",
                                       req.benchmark, capture::to_string(format)));
    }
    std::vector<model::run_record> runs;
    for (const auto& b : in.set.benchmarks) {
        if (!b.error.empty()) {
            warnings.push_back(fmt::format("benchmark '{}' failed: {}: not stored", b.name, b.error));
            continue;
        }
        model::run_record run = record_from(req, {});
        run.benchmark = b.name;
        run.summary_only = b.summary_only;
        run.counters = capture::run_counters_of(b);
        runs.push_back(std::move(run));
    }
    if (runs.empty()) {
        throw error(errors::ingest_bad_input,
                    fmt::format("{}: no benchmark with results to store (every benchmark failed)", req.source));
    }
    model::ingest_result res = store_all_checked(std::move(runs), idempotency_key, digest);
    res.warnings.insert(res.warnings.begin(), warnings.begin(), warnings.end());
    return res;
}

model::ingest_result detail::service_impl::ingest_run(model::run_record run)
{
    return store_checked(std::move(run), {}, {});
}

model::ingest_result detail::service_impl::store_checked(model::run_record run, const std::optional<std::string>& key,
                                                         const std::string& digest)
{
    std::vector<model::run_record> runs;
    runs.push_back(std::move(run));
    model::ingest_result res = store_all_checked(std::move(runs), key, digest);
    res.run_ids.clear();
    res.benchmarks.clear();
    return res;
}

model::ingest_result detail::service_impl::store_all_checked(std::vector<model::run_record> runs,
                                                             const std::optional<std::string>& key,
                                                             const std::string& digest)
{
    model::ingest_result res;
    for (auto& run : runs) {
        validate_identity(run);
        // One testbed identity whichever client sent the run (model/testbed.hpp).
        run.testbed.fingerprint = model::fingerprint_of(run.testbed);
        if (run.counters.empty()) {
            throw error(errors::ingest_bad_csv, runs.size() == 1
                                                    ? std::string("the run has no counters")
                                                    : fmt::format("benchmark '{}' has no counters", run.benchmark));
        }
        check_run_limits(run);
        std::set<std::string> seen;
        std::size_t samples = 0;
        for (const auto& c : run.counters) {
            capture::validate_name("counter", c.counter);
            // Units are printed as they are (text reports, ?format=text):
            // printable text only, no escape sequences (issue 31, finding 9).
            check_stored_text(errors::ingest_bad_field, fmt::format("unit of counter '{}'", c.counter), c.unit);
            if (!seen.insert(c.counter).second) {
                throw error(errors::ingest_bad_field, fmt::format("counter '{}' appears twice in one run", c.counter));
            }
            for (const auto& s : c.samples) samples += s.value.has_value();
        }
        if (samples == 0) {
            res.warnings.push_back(runs.size() == 1
                                       ? std::string("no counter has a value (all <not supported> / <not counted>)")
                                       : fmt::format("benchmark '{}': no counter has a value", run.benchmark));
        }
        res.samples += samples;
        res.counters += run.counters.size();
    }
    if (key) {
        try {
            const auto stored = db_.runs().insert_all(runs, *key, digest);
            res.run_ids = stored.run_ids;
            res.replayed = stored.replayed;
        } catch (const error& e) {
            if (e.id() != errors::store_key_conflict) throw;
            throw error(errors::ingest_idempotency_conflict,
                        fmt::format("Idempotency-Key '{}' was already used for a different upload to project '{}': "
                                    "send a new key for a new run (the same key only to retry the same request)",
                                    *key, runs.front().project));
        }
    } else {
        res.run_ids = db_.runs().insert_all(runs);
    }
    res.run_id = res.run_ids.front();
    for (const auto& run : runs) res.benchmarks.push_back(run.benchmark);
    // The first upload under this key queued its watch already.
    if (res.replayed) return res;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        model::run_record& run = runs[i];
        run.id = res.run_ids[i];
        if (!watched_role(run)) continue;
        if (watcher_) {
            watcher_->push(watch_job_of(run));
            continue;
        }
        // The run is stored: a failure to watch its series must not turn
        // into an error the client would retry (and store the run twice).
        try {
            const auto opened = watch_series(db_, watch_job_of(run), change_point_defaults_);
            notify_opened(notifier_.get(), db_, run.project, opened);
            res.alerts.insert(res.alerts.end(), opened.begin(), opened.end());
        } catch (const std::exception& e) {
            res.warnings.push_back(fmt::format("change-point detection after storing run {} failed: {}", run.id,
                                               e.what()));
        }
    }
    return res;
}

void detail::service_impl::commit_in_background(std::size_t max_batch)
{
    committer_ = std::make_shared<commit_queue>(db_, max_batch);
}

void detail::service_impl::drain_commits() const
{
    if (committer_) committer_->drain();
}

commit_queue::counts detail::service_impl::commit_stats() const
{
    return committer_ ? committer_->stats() : commit_queue::counts{};
}

std::vector<model::history_point> detail::service_impl::history(const model::history_query& q) const
{
    capture::validate_name("project", q.project);
    capture::validate_name("benchmark", q.benchmark);
    capture::validate_name("counter", q.counter);
    if (q.branch) capture::validate_name("branch", *q.branch);
    if (q.testbed) capture::validate_name("testbed", *q.testbed);
    auto points = db_.history().points(q);
    if (points.empty()) return points;
    // Mark the runs where a stored change point starts.
    model::series_key key{q.benchmark, q.counter, q.testbed.value_or(""), q.branch.value_or("")};
    std::set<std::int64_t> starts;
    for (const auto& cp : db_.alerts().change_points(q.project, key)) starts.insert(cp.run_id);
    for (auto& p : points) p.change_point = starts.contains(p.run_id);
    return points;
}

token_grant detail::service_impl::authorize(std::string_view token, const std::string& project) const
{
    auto owner = db_.tokens().lookup(token);
    if (!owner) throw error(errors::auth_bad_token, "Authorization header: unknown, revoked or expired token");
    if (owner->project != project) {
        throw error(errors::auth_forbidden, fmt::format("this token does not grant access to project '{}'", project));
    }
    return {owner->id, std::move(owner->name), owner->scopes};
}

void require_scope(const token_grant& grant, model::scope needed, std::string_view what)
{
    if (grant.scopes.grants(needed)) return;
    throw error(errors::auth_missing_scope,
                fmt::format("{} needs a token with scope '{}'; token {} ('{}') has scopes {}", what,
                            model::to_string(needed), grant.id, grant.name, grant.scopes.to_string()));
}

bool detail::service_impl::token_live(std::int64_t id, const std::string& project) const
{
    return db_.tokens().live(id, project);
}

void detail::service_impl::check_health() const { db_.maintenance().check_health(); }

bool detail::service_impl::project_exists(const std::string& project) const { return db_.projects().exists(project); }

void detail::service_impl::require_project(const std::string& project) const
{
    capture::validate_name("project", project);
    if (!db_.projects().exists(project)) {
        throw error(errors::project_not_found,
                    fmt::format("no project '{}' (projects are created by `perfgate token create`)", project));
    }
}

void detail::service_impl::ensure_project(const std::string& project)
{
    capture::validate_name("project", project);
    db_.projects().ensure(project);
}

std::string detail::service_impl::create_token(const std::string& project, std::string_view name,
                                               std::optional<std::int64_t> expires_at, model::scope_set scopes)
{
    capture::validate_name("project", project);
    return db_.tokens().create(project, name, expires_at, scopes);
}

std::vector<store::token_info> detail::service_impl::tokens(const std::string& project) const
{
    require_project(project);
    return db_.tokens().list(project);
}

std::int64_t detail::service_impl::revoke_token(const std::string& project, std::string_view id_or_token)
{
    require_project(project);
    std::optional<std::int64_t> id;
    if (id_or_token.starts_with("pg_")) {
        id = db_.tokens().id_of(project, id_or_token);
    } else {
        std::int64_t n = 0;
        const auto* end = id_or_token.data() + id_or_token.size();
        const auto [ptr, ec] = std::from_chars(id_or_token.data(), end, n);
        if (ec == std::errc{} && ptr == end && n > 0) id = n;
    }
    if (!id || !db_.tokens().revoke(project, *id)) {
        // Never echo what looks like a secret back.
        const std::string shown = id_or_token.starts_with("pg_") ? "the given token"
                                                                 : fmt::format("'{}'", id_or_token.substr(0, 32));
        throw error(errors::token_not_found,
                    fmt::format("project '{}' has no token {} (perfgate token list --project {} shows its tokens)",
                                project, shown, project));
    }
    return *id;
}

std::vector<model::comparison_summary> detail::service_impl::recent_comparisons(const std::string& project,
                                                                                std::size_t limit) const
{
    require_project(project);
    if (limit < 1 || limit > max_comparison_limit) {
        throw error(errors::query_bad_value, fmt::format("limit {}: expected 1 to {}", limit, max_comparison_limit));
    }
    return db_.comparisons().recent(project, limit);
}

std::string normalize_repository_url(std::string_view label, std::string_view given)
{
    if (given.empty()) return {};
    // Pages put the URL into href attributes and append "/commit/{sha}": a
    // byte that ends an attribute or a tag, or a query or fragment that the
    // appended path would land in, makes a broken or hostile link.
    const std::string checked = checked_url(label, given); // HTTPS:// is https://
    const std::string_view url = checked;
    const std::string shown = shown_url(url);
    if (const auto i = url.find_first_of("?#"); i != std::string_view::npos) {
        throw error(errors::ingest_bad_field,
                    fmt::format("{}: '{}' at offset {}: the URL cannot have a query or a fragment (pages append "
                                "/commit/SHA to it)",
                                label, url[i], i));
    }
    const std::size_t scheme = url.starts_with("https://") ? 8 : 7;
    std::string_view stored = url;
    while (stored.size() > scheme && stored.ends_with('/')) stored.remove_suffix(1);
    const std::string_view host = stored.substr(scheme);
    if (host.empty() || host.front() == '/') {
        throw error(errors::ingest_bad_field, fmt::format("{}: {} has no host", label, shown));
    }
    if (stored.size() > max_repository_url_bytes) {
        throw error(errors::ingest_bad_field, fmt::format("{}: {} bytes, longer than the limit of {}", label,
                                                          stored.size(), max_repository_url_bytes));
    }
    return std::string(stored);
}

std::optional<std::string> detail::service_impl::repository_url(const std::string& project) const
{
    require_project(project);
    return db_.projects().repository_url(project);
}

void detail::service_impl::set_repository_url(const std::string& project, std::string_view url)
{
    require_project(project);
    db_.projects().set_repository_url(project, normalize_repository_url("field 'repository_url'", url));
}

std::int64_t detail::service_impl::store_size_bytes() const { return db_.maintenance().size_bytes(); }

std::vector<model::benchmark_info> detail::service_impl::benchmarks(const std::string& project) const
{
    return db_.history().benchmarks(project);
}

} // namespace perfgate::service
