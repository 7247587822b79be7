// The history store: SQLite (the default, embedded) or PostgreSQL (several
// servers on one database), chosen by the --db value, with migrations for
// both. One store class and one set of queries serve both engines
// (store/db.hpp); the SQL differs only where the dialects do.
//
// All SQL is prepared statements with bound parameters; no SQL is built from
// user strings. Ingesting a run is one transaction that rolls back unless it
// commits. Per-run counter summaries are computed at ingest so that history
// queries never scan raw samples.
//
// Thread safety: one store object may be shared by many threads (the server's
// workers). SQLite: writes are serialised on one writer connection (a
// mutex); reads use a pool of up to 8 read-only connections and run
// concurrently with each other and with the writer (WAL snapshots). ":memory:"
// is a single connection (a private database per connection), so there reads
// and writes share the writer's mutex. Other processes on the same file are
// handled by WAL and a 5 s busy timeout. PostgreSQL: a pool of
// store_options::connections connections for reads and writes; other
// processes (replicas) are ordinary concurrent clients of the server, and
// every write that two of them could race on (a project, a testbed, a
// comparison key, an idempotency key, an alert) is made idempotent by a
// unique key or a lock in the database, not in this process.
//
// Schema: store/migrations/NNN_*.sql (SQLite; PRAGMA user_version is the
// number of the last one applied) and store/migrations/pg/NNN_*.sql
// (PostgreSQL; table perfgate_migrations), embedded at build time and
// applied in order on open. On PostgreSQL they run under an advisory lock,
// so replicas that start together apply each one once.
//
// Errors: perfgate::error with ids "store.open", "store.migrate",
// "store.constraint", "store.not_found", "store.io", "store.conflict" (a
// PostgreSQL transaction aborted as a deadlock victim more often than
// retried), "store.key_conflict" (an idempotency key reused for another
// request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/acceptance.hpp"
#include "model/alert.hpp"
#include "model/comparison.hpp"
#include "model/run.hpp"
#include "model/token_scope.hpp"

namespace perfgate::store {

namespace detail {
class connection;
}

// The store speaks the shared domain types (model/run.hpp).
using model::benchmark_info;
using model::counter_samples;
using model::counter_summary;
using model::history_point;
using model::history_query;
using model::reusable_run;
using model::reusable_run_query;
using model::run_record;
using model::sample;
using model::testbed_info;

// Whether a --db value names a PostgreSQL database (a postgresql:// or
// postgres:// URI, as libpq reads it) rather than a SQLite file.
bool is_postgres(std::string_view db) noexcept;
// The --db value as messages and logs show it: a URI without its password.
std::string shown_location(std::string_view db);

// A project's change-point settings as stored (store::change_point_settings_of):
// nullopt where unset. method is "perfgate" or "otava".
struct change_point_settings {
    std::optional<std::string> method;
    std::optional<std::int64_t> window;
    std::optional<double> max_p;
    std::optional<double> min_magnitude;
};

struct store_options {
    // PostgreSQL: connections in the pool (0: detail::default_pg_connections).
    // `perfgate serve` passes its worker count plus one (the history watch).
    // SQLite ignores it (one writer, up to 8 readers).
    std::size_t connections = 0;
    // SQLite files: checkpoint the WAL on a thread of the store's own
    // (detail::wal_checkpointer), not inside the commit of whichever write
    // crossed SQLite's threshold, which held the write lock meanwhile.
    // `perfgate serve` sets it; PostgreSQL and ":memory:" ignore it.
    bool background_checkpoints = false;
};

class store {
public:
    // Opens the database and applies pending migrations. db is a SQLite file
    // (created if missing; ":memory:" for tests) or a PostgreSQL URI
    // ("postgresql://user@host:5432/perfgate", libpq's syntax; the database
    // must exist, its tables are created).
    // Errors: "store.open" (cannot open, not a database, server unreachable,
    // login refused), "store.corrupt" (SQLite: a damaged page read while
    // opening), "store.migrate" (a migration failed, or the database's
    // schema is newer than this build knows).
    explicit store(const std::string& db, store_options options = {});
    ~store();
    store(const store&) = delete;
    store& operator=(const store&) = delete;

    // Projects and tokens. Tokens are "pg_" + 32 random bytes (OpenSSL
    // RAND_bytes) in hex, stored as the hex SHA-256 of the whole token; the
    // plain token is returned once. create_token creates the project if needed.
    std::int64_t ensure_project(std::string_view project);
    [[nodiscard]] bool project_exists(std::string_view project) const;
    // expires_at: unix seconds after which the token opens nothing (nullopt: never).
    // scopes: what the token may do (model/token_scope.hpp); legacy() stores
    // no scope list, as tokens created before scopes existed (every power).
    // Token ids are never reused, also after a revocation (019_token_scopes.sql).
    std::string create_token(std::string_view project, std::string_view name,
                             std::optional<std::int64_t> expires_at = std::nullopt,
                             model::scope_set scopes = model::scope_set::legacy());
    // The project a token belongs to (constant-time hash comparison), or
    // nullopt: unknown, revoked or expired.
    [[nodiscard]] std::optional<std::string> token_project(std::string_view token) const;
    // The same with the token's id. Records the use (last_used_at), at most
    // once an hour per token; a failure to record it is not an error.
    struct token_owner {
        std::int64_t id = 0;
        std::string project;
        std::string name;
        model::scope_set scopes;
    };
    [[nodiscard]] std::optional<token_owner> token_lookup(std::string_view token) const;
    // Token `id` of project exists and has not expired (a dashboard session
    // re-checks its token with this on every request).
    [[nodiscard]] bool token_live(std::int64_t id, std::string_view project) const;
    // A project's tokens, oldest first: never the secret (only its hash is stored).
    struct token_info {
        std::int64_t id = 0;
        std::string name;
        std::int64_t created_at = 0;
        std::optional<std::int64_t> last_used_at;
        std::optional<std::int64_t> expires_at;
        model::scope_set scopes; // legacy(): created before scopes, every power
    };
    [[nodiscard]] std::vector<token_info> tokens(std::string_view project) const;
    // The id of a token of project, expired or not, or nullopt.
    [[nodiscard]] std::optional<std::int64_t> token_id(std::string_view project, std::string_view token) const;
    // Deletes token `id` of project; false if the project has no such token.
    bool revoke_token(std::string_view project, std::int64_t id);

    // A project's alert webhooks (store/webhooks.cpp, 015_webhooks.sql). The
    // store keeps url, format and secret as given (service::service checks
    // them); the secret is returned only by webhook_targets, for signing.
    // The delivery log is the outcome of each webhook's newest delivery.
    struct webhook_info {
        std::int64_t id = 0;
        std::string url;
        std::string format; // "json" or "slack"
        bool has_secret = false;
        std::int64_t created_at = 0;
        std::optional<std::string> last_outcome; // "delivered", "failed", "dropped"; nullopt: none yet
        std::optional<std::int64_t> last_attempts;
        std::optional<std::int64_t> last_at;
        std::optional<std::string> last_error;
    };
    struct webhook_target {
        std::int64_t id = 0;
        std::string url;
        std::string format;
        std::optional<std::string> secret;
    };
    // Adds a webhook; its id. "store.not_found" for an unknown project,
    // "store.constraint" for a format other than json/slack or a URL that is
    // empty or over 2048 bytes.
    std::int64_t add_webhook(std::string_view project, std::string_view url, std::string_view format,
                             const std::optional<std::string>& secret);
    // Oldest first; an unknown project has none.
    [[nodiscard]] std::vector<webhook_info> webhooks(std::string_view project) const;
    [[nodiscard]] std::vector<webhook_target> webhook_targets(std::string_view project) const;
    // Deletes webhook `id` of project; false if the project has no such webhook.
    bool remove_webhook(std::string_view project, std::int64_t id);
    // Records the outcome of a delivery to webhook `id` (a removed webhook: nothing).
    void record_webhook_delivery(std::int64_t id, std::string_view outcome, std::int64_t attempts,
                                 std::string_view error_text);

    // A reviewer's acceptance of a comparison's regression (store/
    // acceptances.cpp, 017_acceptances.sql): who (a GitHub login), why, when
    // (unix seconds) and for which commit (the pull request head).
    using acceptance = model::acceptance;
    // Records login's acceptance of the project's newest comparison whose
    // candidate run (its first pair's) is of commit head_sha, replacing an
    // earlier acceptance of that comparison; the stored row. nullopt when no
    // comparison of the project has that candidate commit: nothing stored.
    // The store keeps the texts as given (service::service checks them).
    // "store.not_found" for an unknown project; "store.constraint" for an
    // empty login or a sha outside 7 to 64 characters.
    // by: the server token that asks (stored with it; nullopt: none).
    std::optional<acceptance> accept_comparison(std::string_view project, std::string_view head_sha,
                                                std::string_view login, std::string_view reason,
                                                const std::optional<model::token_ref>& by = std::nullopt);
    // The acceptance of comparison `comparison_id` of the project, if any.
    [[nodiscard]] std::optional<acceptance> load_acceptance(std::string_view project, std::int64_t comparison_id) const;

    // Stores a run with its samples and per-counter summaries in one
    // transaction; creates project/benchmark/testbed/counter rows as needed.
    // A testbed is identified by its fingerprint; an empty one is computed
    // (SHA-256 of cpu, cores, kernel, name). created_at 0 means now.
    // Errors (nothing is stored): "store.constraint" for a role other than
    // baseline/candidate, empty project/benchmark/counter names, a counter
    // listed twice, a repeated repetition, non-finite values; "store.io".
    std::int64_t insert_run(const run_record& run);
    // Idempotent ingest (008_ingest_keys.sql): key is the client's
    // Idempotency-Key (1 to 255 bytes), request_sha256 the hex SHA-256 of
    // the request it came with. The first call with a key stores the run and
    // records the key; a later call with the same key and digest stores
    // nothing and returns the first run's id with replayed = true, also when
    // the two race (threads, or servers on one PostgreSQL: the second waits
    // for the first's commit). Errors: as insert_run; "store.key_conflict"
    // when the project recorded the key with another digest;
    // "store.constraint" for a key outside 1..255 bytes.
    struct keyed_run {
        std::int64_t run_id = 0;
        bool replayed = false;
    };
    keyed_run insert_run(const run_record& run, std::string_view key, std::string_view request_sha256);
    // Several runs (one upload of a harness's output: a run per benchmark)
    // in one transaction: all are stored, in order, or none. Errors: as
    // insert_run's. With a key, as the keyed insert_run: a repeat answers
    // every run id of the first upload (013_ingest_key_runs.sql).
    struct keyed_runs {
        std::vector<std::int64_t> run_ids;
        bool replayed = false;
    };
    std::vector<std::int64_t> insert_runs(const std::vector<run_record>& runs);
    keyed_runs insert_runs(const std::vector<run_record>& runs, std::string_view key, std::string_view request_sha256);
    // Whole run with samples. nullopt if no such run in that project.
    [[nodiscard]] std::optional<run_record> load_run(std::string_view project, std::int64_t run_id) const;
    // The newest non-summary run that matches q exactly (commit, branch,
    // benchmark, testbed fingerprint, backend, toolchain; any role) among
    // the runs that feed the branch's series (run_record::mainline), with
    // its counter names: the baseline a deterministic backend reuses
    // (016_run_toolchains.sql). nullopt when there is none or q.toolchain
    // is empty (unknown toolchains are never reused). One indexed read.
    [[nodiscard]] std::optional<reusable_run> find_reusable_run(const reusable_run_query& q) const;

    // Comparisons: the report JSON, stored verbatim. "store.not_found" when
    // the project or either run (in that project) does not exist. The
    // report's top-level "verdict" and the length of its "benchmarks" array
    // are copied into columns for listings (SQLite's JSON functions; NULL
    // when the text does not have them; 006_project_settings.sql).
    std::int64_t insert_comparison(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                                   std::string_view report_json);
    [[nodiscard]] std::optional<std::string> load_comparison(std::string_view project, std::int64_t id) const;

    // A comparison's artifacts (store/migrations/007_artifacts.sql and
    // 012_attribution_artifacts.sql, store/artifacts.cpp): the flame graph
    // SVG of a benchmark, replaced
    // when stored again. put: "store.not_found" when the project has no such
    // comparison; "store.constraint" for an empty or longer than
    // max_artifact_bytes content, a benchmark name outside 1..256 bytes;
    // "artifact.too_many" when a new artifact would take the comparison
    // beyond max_artifacts_per_comparison artifacts or
    // max_artifact_bytes_per_comparison bytes (both kinds together; a
    // replacement counts its new size only). The check and the write are one
    // transaction, so concurrent uploads cannot pass the limit together.
    static constexpr std::size_t max_artifact_bytes = 4u << 20;
    static constexpr std::size_t max_artifacts_per_comparison = 1000;
    static constexpr std::size_t max_artifact_bytes_per_comparison = 64u << 20;
    void put_flame_graph(std::string_view project, std::int64_t comparison_id, std::string_view benchmark,
                         std::string_view svg);
    [[nodiscard]] std::optional<std::string> load_flame_graph(std::string_view project, std::int64_t comparison_id,
                                                              std::string_view benchmark) const;
    // The benchmarks of the comparison that have one, by name.
    [[nodiscard]] std::vector<std::string> flame_graph_benchmarks(std::string_view project,
                                                                  std::int64_t comparison_id) const;
    // A benchmark's attribution (the report's "attribution" object as JSON
    // text, 012_attribution_artifacts.sql), replaced when stored again;
    // errors as put_flame_graph. load_attributions: (benchmark, JSON) of
    // every benchmark of the comparison that has one, by benchmark name.
    void put_attribution(std::string_view project, std::int64_t comparison_id, std::string_view benchmark,
                         std::string_view attribution_json);
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> load_attributions(std::string_view project,
                                                                                     std::int64_t comparison_id) const;

    // Idempotent comparisons (store/migrations/003_comparison_key.sql).
    // request_key identifies the inputs of a comparison (service::service uses
    // the hex SHA-256 of project, run pairs and policy). Inserting a key that
    // the project already has stores nothing and returns the existing row's
    // id, so two identical compares racing each other (threads or processes)
    // end with one row. Errors: as above, and "store.constraint" when the key
    // is not 64 lowercase hex digits.
    //
    // facts: the report's verdict and number of benchmarks as the caller
    // knows them (service::service serialised the report from them), stored
    // as given instead of being read back out of the JSON (18 KB for 10
    // counters: parsing it was a fifth of PostgreSQL's work per compare).
    // A verdict other than pass / fail / inconclusive is "store.constraint".
    struct report_facts {
        std::string_view verdict;
        std::int64_t benchmark_count = 0;
    };
    std::int64_t insert_comparison(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                                   std::string_view report_json, std::string_view request_key,
                                   const std::optional<report_facts>& facts = {});
    // One comparison of insert_comparisons: insert_comparison's arguments,
    // with the facts given.
    struct comparison_row {
        std::string project;
        std::int64_t baseline_run = 0;
        std::int64_t candidate_run = 0;
        std::string report_json;
        std::string request_key;
        std::string verdict;
        std::int64_t benchmark_count = 0;
    };
    // Several comparisons in one write transaction: group commit, for perfgate
    // serve's committer (service/commit_queue.hpp). Returns their ids in
    // order, each what insert_comparison would return for its row (a key the
    // store or an earlier row of the batch holds gives that row's id). Rows
    // are inserted in (project, key) order, so replicas whose batches share
    // keys do not deadlock. All or nothing: an error of any row
    // (insert_comparison's) rolls the batch back and is thrown; nothing is
    // stored.
    std::vector<std::int64_t> insert_comparisons(std::span<const comparison_row> rows);
    // (comparison id, report JSON) stored under request_key, or nullopt.
    [[nodiscard]] std::optional<std::pair<std::int64_t, std::string>> find_comparison(
        std::string_view project, std::string_view request_key) const;

    // Per-run summaries, oldest first, the most recent q.limit of them (by
    // created_at, then run id). Counters with no value in a run (n = 0) are
    // not points. O(log n + k) through a covering index of the summaries
    // table: (benchmark, counter, created_at), (benchmark, counter, branch,
    // created_at) or (benchmark, counter, testbed, branch, created_at),
    // whichever the filters bind (store/migrations/002_history_indexes.sql,
    // 005_history_minmax.sql). Each point names its testbed (fingerprint and
    // name: one lookup per distinct testbed in the result).
    // Filters outside the chosen index's prefix (testbed without branch,
    // role, before_run) are checked while scanning it. Unknown names: empty.
    [[nodiscard]] std::vector<history_point> history(const history_query& q) const;
    // What each history point carries: everything, or only run_id and
    // median (the other members left empty), which is all a compare's
    // z-score and band read; that skips the text columns and the testbed
    // lookups, a third of a fresh compare's reads (bench/bench_engines.sh).
    enum class history_detail { full, medians };
    // history(q) for each of counters (q.counter is ignored), in that order:
    // what a compare or the history watch reads for the counters of one
    // benchmark. PostgreSQL answers all of them in one statement (a LATERAL
    // range of the same index per counter); SQLite runs one per counter.
    [[nodiscard]] std::vector<std::vector<history_point>> histories(const history_query& q,
                                                                    const std::vector<std::string>& counters,
                                                                    history_detail detail = history_detail::full) const;

    // The project's most recent comparisons, newest first (by id), at most
    // `limit`, each with its first pair's runs (model/comparison.hpp).
    // O(log n + limit): a backward range of the covering index
    // comparisons_recent (006_project_settings.sql) and two run lookups by
    // id per row; no report is read. Unknown project: empty.
    [[nodiscard]] std::vector<model::comparison_summary> recent_comparisons(std::string_view project,
                                                                            std::size_t limit) const;

    // A stored run without its samples: what naming and pairing runs needs.
    struct run_ref {
        std::int64_t id = 0;
        std::string git_sha, branch, role, benchmark;
        std::string testbed, testbed_name; // fingerprint, name
        std::int64_t created_at = 0;
    };
    // One run of the project, without samples; nullopt if there is none.
    [[nodiscard]] std::optional<run_ref> find_run(std::string_view project, std::int64_t run_id) const;
    // The newest run of each (git sha, benchmark, testbed) among the
    // project's runs whose git_sha starts with sha_prefix (bytes compared as
    // stored: git writes lowercase hex), newest first. O(log n + k) for the k
    // runs with such a sha: a range of the covering index runs_project_sha
    // (006_project_settings.sql). An empty prefix matches nothing.
    [[nodiscard]] std::vector<run_ref> runs_by_sha(std::string_view project, std::string_view sha_prefix) const;

    // By name; counters by name. Unknown project: empty.
    [[nodiscard]] std::vector<benchmark_info> benchmarks(std::string_view project) const;

    // Project settings (store/migrations/004_alerts.sql). The baseline
    // branch is the branch whose baseline runs are watched for change points:
    // "main" unless set. "store.not_found" for an unknown project;
    // set_baseline_branch: "store.constraint" for an empty branch.
    [[nodiscard]] std::string baseline_branch(std::string_view project) const;
    // Moves with every write this store object committed (any write
    // method), never backwards: equal generations, equal data as far as
    // this process wrote it. SQLite: other processes' writes are not seen.
    // PostgreSQL: it also moves when any process commits a write to the
    // database (LISTEN/NOTIFY, a few milliseconds after the commit).
    [[nodiscard]] std::uint64_t generation() const noexcept;
    void set_baseline_branch(std::string_view project, std::string_view branch);
    // The URL a project's commits are browsed at ({url}/commit/{sha}), as
    // set; nullopt when unset (006_project_settings.sql). The store keeps it
    // verbatim (service::service validates it); "" clears it.
    // "store.not_found" for an unknown project; set_repository_url:
    // "store.constraint" over 512 bytes.
    [[nodiscard]] std::optional<std::string> repository_url(std::string_view project) const;
    void set_repository_url(std::string_view project, std::string_view url);
    // How the history watch detects change points in a project's series
    // (010_change_point_settings.sql): each field as set, nullopt where
    // unset (the server's default applies). set_change_point_settings
    // changes the fields that have a value and leaves the others; the store
    // keeps them as given (service::service validates them).
    // "store.not_found" for an unknown project; set_change_point_settings:
    // "store.constraint" for a value out of its range (method not perfgate
    // or otava, window < 2, max_p outside (0, 1), min_magnitude < 0).
    [[nodiscard]] change_point_settings change_point_settings_of(std::string_view project) const;
    void set_change_point_settings(std::string_view project, const change_point_settings& settings);

    // Change points and alerts (store/alerts.cpp). A detection covers the
    // tail of one series: its run ids in series order and the change points
    // found there (each record's run_id one of the tail's), with whether the
    // change is in the counter's worse direction.
    struct detected_change {
        model::change_point_record record;
        bool worse = false;
    };
    struct series_detection {
        model::series_key series;
        std::vector<std::int64_t> tail;
        std::vector<detected_change> found;
    };
    // In one transaction, for each detection: the change points stored for
    // the tail's runs are replaced by `found`; each worse change updates the
    // series's alert whose run lies within alert_match_distance points of it
    // in the tail (the same alert: data that arrives later moves a change
    // point by a point or two) or opens a new untriaged one. Alerts whose run
    // is no longer a change point are kept as they are (people triage them).
    // Returns the ids of the alerts opened. Errors: "store.not_found" for an
    // unknown project, benchmark, counter or testbed; "store.constraint"
    // for a change point whose run is not in its tail.
    std::vector<std::int64_t> apply_detection(std::string_view project,
                                              const std::vector<series_detection>& detections);
    static constexpr std::size_t alert_match_distance = 2;

    // Alerts of a project, newest first, filtered by q. Unknown names: empty.
    [[nodiscard]] std::vector<model::alert> alerts(const model::alert_query& q) const;
    // The open (untriaged or acknowledged) alerts of a benchmark's series on
    // one testbed (by fingerprint) and branch, every counter: the newest
    // `limit`, oldest first. One range of the alerts_open index
    // (009_open_alerts.sql): what a compare's report shows as history context.
    [[nodiscard]] std::vector<model::alert> open_alerts(std::string_view project, std::string_view benchmark,
                                                        std::string_view testbed_fingerprint, std::string_view branch,
                                                        std::size_t limit) const;
    [[nodiscard]] std::optional<model::alert> load_alert(std::string_view project, std::int64_t id) const;
    // Sets status (and note, when given), changed_by and changed_at = now.
    // nullopt (nothing changed) when the project has no such alert.
    std::optional<model::alert> update_alert(std::string_view project, std::int64_t id, const model::alert_update& u);
    // Stored change points of (benchmark, counter) in series order; an empty
    // testbed (name or fingerprint), branch or counter in `series` matches
    // any (an empty counter: every counter of the benchmark, in one query).
    [[nodiscard]] std::vector<model::change_point_record> change_points(std::string_view project,
                                                                        const model::series_key& series) const;

    // Start-up checks for a server, so that a broken file is refused at once
    // instead of answering 500 to every request later.
    // check_integrity: PRAGMA quick_check (O(database size): every page is
    // read once); error "store.corrupt" naming the file and SQLite's first
    // complaint. PostgreSQL checks its own pages (data checksums): nothing
    // to do. check_writable: takes and releases the write lock (BEGIN
    // IMMEDIATE) and writes nothing; error "store.read_only" naming the file
    // (a read-only file or directory, a full disk on the WAL). PostgreSQL:
    // "store.read_only" for a standby or a read-only default transaction.
    void check_integrity() const;
    void check_writable();

    [[nodiscard]] std::int64_t runs_count() const;
    // SQLite: page_count * page_size; PostgreSQL: pg_database_size.
    [[nodiscard]] std::int64_t size_bytes() const;
    // "sqlite" or "postgresql".
    [[nodiscard]] std::string_view engine() const noexcept;
    // For /healthz: throws what keeps the store from serving. "store.lost"
    // when the SQLite file was deleted or replaced under this process (every
    // write is refused with it too: it would be acknowledged and lost), else
    // whatever a trivial read through the pool throws (a damaged file,
    // PostgreSQL down or refusing the login).
    void check_health() const;
    // The schema version the database is at (the number of the last
    // migration applied; after opening, the newest this build knows).
    [[nodiscard]] int schema_version() const;
    // SQLite: a consistent copy of the database, taken while it serves
    // (the online backup API: one read snapshot, writers not blocked),
    // written to file.tmp, checked (PRAGMA quick_check) and renamed to
    // file. Errors: "store.backup" naming the file (exists already, cannot
    // be written, the copy fails its check); "store.unsupported" on
    // PostgreSQL, whose backups are pg_dump's (the message says how).
    void backup_to(const std::filesystem::path& file) const;
    // The database as messages name it (shown_location of db).
    [[nodiscard]] const std::string& location() const noexcept;
    // WAL checkpoints completed by the background thread
    // (store_options::background_checkpoints); 0 without one.
    [[nodiscard]] std::uint64_t background_checkpoints() const noexcept;

    // One snapshot for a request's reads. While a read_scope of this store
    // lives, every read of the store on the constructing thread runs on one
    // connection inside one read transaction: SQLite takes its WAL snapshot
    // and read lock once, not once per statement (each new snapshot also
    // throws away the connection's page cache when anyone has committed
    // since); PostgreSQL keeps one pooled connection (its reads stay
    // statement-level). The reads see the store as of the scope's first
    // read. A write to the store from that thread meanwhile is an error
    // ("internal"): on PostgreSQL it would wait for a second pooled
    // connection while holding one. A scope inside another on the same
    // thread, and a scope of a ":memory:" store (one connection for all),
    // change nothing. Keep scopes short: an open SQLite snapshot holds back
    // checkpoints past it.
    class read_scope {
    public:
        explicit read_scope(const store& db);
        read_scope(const read_scope&) = delete;
        read_scope& operator=(const read_scope&) = delete;
        ~read_scope();

    private:
        struct state;
        std::unique_ptr<state> state_;
    };

private:
    std::int64_t insert_comparison_row(std::string_view project, std::int64_t baseline_run, std::int64_t candidate_run,
                                       std::string_view report_json, const std::optional<std::string>& request_key,
                                       const std::optional<report_facts>& facts);
    // The row's statements on c, in the caller's write transaction.
    std::int64_t insert_comparison_on(detail::connection& c, std::string_view project, std::int64_t baseline_run,
                                      std::int64_t candidate_run, std::string_view report_json,
                                      const std::optional<std::string>& request_key,
                                      const std::optional<report_facts>& facts);

    struct impl;
    std::unique_ptr<impl> impl_;
};

} // namespace perfgate::store
