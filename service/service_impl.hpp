// The gate service's shared state and the bodies of its calls: what every
// facet of service::service (service/tokens.hpp, ...) forwards to. Private
// to service/: callers use service::service and its facets, where each
// call is documented.
#pragma once

#include "service/service.hpp"

namespace perfgate::service {

namespace detail {
class baseline_history; // service/baseline_history.hpp
struct compare_inputs;  // service/compare_engine.cpp

class service_impl {
public:
    explicit service_impl(store::store& db);

    model::ingest_result ingest(const model::ingest_request& req,
                                const std::optional<std::string>& idempotency_key = std::nullopt);
    model::ingest_result ingest_run(model::run_record run);
    comparison compare(const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                       const gate::policy& rules, const std::optional<model::baseline_choice>& baseline = std::nullopt);
    std::optional<comparison> compare_later(const std::string& project,
                                            const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                            const gate::policy& rules, compare_done done,
                                            const std::optional<model::baseline_choice>& baseline = std::nullopt);
    void commit_in_background(std::size_t max_batch = 64);
    void drain_commits() const;
    [[nodiscard]] commit_queue::counts commit_stats() const;
    token_grant authorize(std::string_view token, const std::string& project) const;
    [[nodiscard]] bool token_live(std::int64_t id, const std::string& project) const;
    void require_project(const std::string& project) const;
    void check_health() const;
    [[nodiscard]] bool project_exists(const std::string& project) const;
    void ensure_project(const std::string& project);
    std::string create_token(const std::string& project, std::string_view name,
                             std::optional<std::int64_t> expires_at = std::nullopt,
                             model::scope_set scopes = model::scope_set::legacy());
    [[nodiscard]] std::vector<store::token_info> tokens(const std::string& project) const;
    std::int64_t revoke_token(const std::string& project, std::string_view id_or_token);
    [[nodiscard]] std::optional<gate::report> load_comparison(const std::string& project, std::int64_t id) const;
    void store_flame_graph(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                           std::string_view svg);
    [[nodiscard]] std::optional<std::string> flame_graph(const std::string& project, std::int64_t comparison_id,
                                                         const std::string& benchmark) const;
    [[nodiscard]] std::vector<std::string> flame_graph_benchmarks(const std::string& project,
                                                                  std::int64_t comparison_id) const;
    void store_attribution(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                           std::string_view attribution_json);
    model::acceptance accept_comparison(const std::string& project, std::string_view head_sha, std::string_view login,
                                        std::string_view reason,
                                        const std::optional<model::token_ref>& by = std::nullopt);
    [[nodiscard]] std::optional<model::acceptance> acceptance(const std::string& project,
                                                              std::int64_t comparison_id) const;
    // service/qualifications.cpp.
    model::qualification store_qualification(const std::string& project, model::qualification q,
                                             const std::optional<model::token_ref>& by);
    [[nodiscard]] std::vector<model::qualification> qualifications(const std::string& project, std::string_view testbed,
                                                                   std::string_view benchmark) const;
    [[nodiscard]] std::vector<model::comparison_summary> recent_comparisons(
        const std::string& project, std::size_t limit = default_comparison_limit) const;
    [[nodiscard]] std::vector<std::pair<std::int64_t, std::int64_t>> pairs_for(const std::string& project,
                                                                               std::string_view base_ref,
                                                                               std::string_view head_ref) const;
    [[nodiscard]] std::optional<model::run_record> run(const std::string& project, std::int64_t id) const;
    [[nodiscard]] std::optional<model::reusable_run> find_reusable_run(const model::reusable_run_query& q) const;
    [[nodiscard]] std::vector<model::history_point> history(const model::history_query& q) const;
    [[nodiscard]] std::vector<model::benchmark_info> benchmarks(const std::string& project) const;
    void watch_in_background(watch_queue::reporter report);
    void notify_with(std::shared_ptr<notifier> n) { notifier_ = std::move(n); }
    [[nodiscard]] std::optional<notifier::counts> notify_stats() const
    {
        return notifier_ ? std::optional(notifier_->stats()) : std::nullopt;
    }
    void drain_watch() const;
    [[nodiscard]] watch_queue::counts watch_stats() const;
    [[nodiscard]] std::string baseline_branch(const std::string& project) const;
    void set_baseline_branch(const std::string& project, const std::string& branch);
    [[nodiscard]] std::optional<std::string> repository_url(const std::string& project) const;
    void set_repository_url(const std::string& project, std::string_view url);
    std::int64_t add_webhook(const std::string& project, std::string_view url, std::string_view format,
                             std::string_view secret, std::string_view url_label = "field 'url'");
    [[nodiscard]] std::vector<store::webhook_info> webhooks(const std::string& project) const;
    bool remove_webhook(const std::string& project, std::int64_t id);
    [[nodiscard]] stats::change_point_options change_point_options(const std::string& project) const;
    [[nodiscard]] store::change_point_settings change_point_settings(const std::string& project) const;
    void set_change_point_settings(const std::string& project, const store::change_point_settings& settings);
    void set_change_point_defaults(const stats::change_point_options& defaults);
    [[nodiscard]] const stats::change_point_options& change_point_defaults() const noexcept
    {
        return change_point_defaults_;
    }
    [[nodiscard]] std::vector<model::alert> alerts(const model::alert_query& q) const;
    [[nodiscard]] model::alert alert(const std::string& project, std::int64_t id) const;
    model::alert update_alert(const std::string& project, std::int64_t id, const model::alert_update& u);
    model::alert put_culprit(const std::string& project, std::int64_t id, const model::alert_culprit& culprit,
                             const std::optional<model::token_ref>& by);
    [[nodiscard]] std::vector<model::change_point_record> change_points(
        const std::string& project, const std::string& benchmark, const std::string& counter,
        const std::optional<std::string>& testbed, const std::optional<std::string>& branch) const;
    [[nodiscard]] std::int64_t store_size_bytes() const;
    [[nodiscard]] std::size_t cached_comparison_bytes() const;
    [[nodiscard]] std::size_t cached_comparisons() const;
    [[nodiscard]] std::size_t cached_run_bytes() const;
    [[nodiscard]] std::size_t cached_runs() const;
    [[nodiscard]] std::size_t cached_histories() const;
    [[nodiscard]] std::uint64_t generation() const noexcept { return db_.generation(); }
    // Retention (service/retention_job.cpp).
    void prune_daily(retention_job::reporter report, std::chrono::milliseconds check_every);
    [[nodiscard]] std::uint64_t retention_checks() const;
    [[nodiscard]] store::retention_settings retention(const std::string& project) const;
    void set_retention(const std::string& project, const store::retention_settings& settings);


private:
    // "comparison.not_found" unless project has comparison_id;
    // "artifact.bad_benchmark" unless its report has benchmark.
    void require_benchmark(const std::string& project, std::int64_t comparison_id, const std::string& benchmark) const;

    // ingest_run's checks and store; the run is stored under key (with the
    // request's digest) when one is given.
    model::ingest_result store_checked(model::run_record run, const std::optional<std::string>& key,
                                       const std::string& digest);
    // The same for the runs of one upload, in one transaction.
    model::ingest_result store_all_checked(std::vector<model::run_record> runs, const std::optional<std::string>& key,
                                           const std::string& digest);

    // Reports this service stored or found by request key, most recently
    // used first (see caches.hpp). Shared by copies of the service.
    struct comparison_cache;
    // Runs a compare loaded, with their samples, by (project, id).
    struct run_cache;
    // History points of compares' series, by query.
    struct history_cache;
    struct loaded_run;
    struct pending_comparison;
    // The compare engine (compare_engine.cpp). compare() up to the write: a
    // stored or cached report, or a fresh one to store.
    std::variant<comparison, pending_comparison> prepare_compare(
        const std::string& project, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
        const gate::policy& rules, const std::optional<model::baseline_choice>& baseline) const;
    // The report stored under key, now also in the comparison cache.
    std::optional<comparison> stored_comparison(const std::string& project, const std::string& key) const;
    // The runs of pairs, loaded and checked against the compare limits; each
    // pair's baseline series added to hist.
    detail::compare_inputs load_pairs(const std::string& project,
                                      const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                      detail::baseline_history& hist) const;
    static std::shared_ptr<const comparison> finish_comparison(comparison_cache& recent, comparison out,
                                                               std::size_t id_at, store::comparison_row& row,
                                                               std::int64_t id);
    std::shared_ptr<const loaded_run> load_for_compare(const std::string& project, std::int64_t id) const;

    store::store& db_;
    std::shared_ptr<comparison_cache> recent_;
    std::shared_ptr<run_cache> runs_;
    std::shared_ptr<history_cache> histories_;
    std::shared_ptr<watch_queue> watcher_;
    std::shared_ptr<notifier> notifier_;
    std::shared_ptr<commit_queue> committer_;
    std::shared_ptr<retention_job> retention_;
    stats::change_point_options change_point_defaults_;
};

} // namespace detail
} // namespace perfgate::service
