// The facets' calls (service/tokens.hpp, ...): each forwards to the shared
// implementation, detail::service_impl, whose bodies live by resource in
// the files each facet header names.
#include <cstdint>
#include <memory>
#include <utility>

#include "service/service.hpp"
#include "service/service_impl.hpp"

namespace perfgate::service {

service::service(store::store& db) : impl_(std::make_unique<detail::service_impl>(db)) {}

service::service(const service& other) : impl_(std::make_unique<detail::service_impl>(*other.impl_)) {}

service::~service() = default;

std::uint64_t service::generation() const noexcept { return impl_->generation(); }

void projects::require(const std::string& project) const { impl_->require_project(project); }

bool projects::exists(const std::string& project) const { return impl_->project_exists(project); }

void projects::ensure(const std::string& project) { impl_->ensure_project(project); }

std::string projects::baseline_branch(const std::string& project) const { return impl_->baseline_branch(project); }

void projects::set_baseline_branch(const std::string& project, const std::string& branch)
{
    impl_->set_baseline_branch(project, branch);
}

std::optional<std::string> projects::repository_url(const std::string& project) const
{
    return impl_->repository_url(project);
}

void projects::set_repository_url(const std::string& project, std::string_view url)
{
    impl_->set_repository_url(project, url);
}

stats::change_point_options projects::change_point_options(const std::string& project) const
{
    return impl_->change_point_options(project);
}

store::change_point_settings projects::change_point_settings(const std::string& project) const
{
    return impl_->change_point_settings(project);
}

void projects::set_change_point_settings(const std::string& project, const store::change_point_settings& settings)
{
    impl_->set_change_point_settings(project, settings);
}

token_grant tokens::authorize(std::string_view token, const std::string& project) const
{
    return impl_->authorize(token, project);
}

bool tokens::live(std::int64_t id, const std::string& project) const { return impl_->token_live(id, project); }

std::string tokens::create(const std::string& project, std::string_view name, std::optional<std::int64_t> expires_at,
                           model::scope_set scopes)
{
    return impl_->create_token(project, name, expires_at, scopes);
}

std::vector<store::token_info> tokens::list(const std::string& project) const { return impl_->tokens(project); }

std::int64_t tokens::revoke(const std::string& project, std::string_view id_or_token)
{
    return impl_->revoke_token(project, id_or_token);
}

std::int64_t webhooks::add(const std::string& project, std::string_view url, std::string_view format,
                           std::string_view secret, std::string_view url_label)
{
    return impl_->add_webhook(project, url, format, secret, url_label);
}

std::vector<store::webhook_info> webhooks::list(const std::string& project) const { return impl_->webhooks(project); }

bool webhooks::remove(const std::string& project, std::int64_t id) { return impl_->remove_webhook(project, id); }

model::acceptance acceptances::accept(const std::string& project, std::string_view head_sha, std::string_view login,
                                      std::string_view reason, const std::optional<model::token_ref>& by)
{
    return impl_->accept_comparison(project, head_sha, login, reason, by);
}

std::optional<model::acceptance> acceptances::of(const std::string& project, std::int64_t comparison_id) const
{
    return impl_->acceptance(project, comparison_id);
}

model::ingest_result runs::ingest(const model::ingest_request& req, const std::optional<std::string>& idempotency_key)
{
    return impl_->ingest(req, idempotency_key);
}

model::ingest_result runs::ingest_run(model::run_record run) { return impl_->ingest_run(std::move(run)); }

std::optional<model::run_record> runs::load(const std::string& project, std::int64_t id) const
{
    return impl_->run(project, id);
}

std::optional<model::reusable_run> runs::find_reusable(const model::reusable_run_query& q) const
{
    return impl_->find_reusable_run(q);
}

comparison comparisons::compare(const std::string& project,
                                const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                const gate::policy& rules, const std::optional<model::baseline_choice>& baseline)
{
    return impl_->compare(project, pairs, rules, baseline);
}

std::optional<comparison> comparisons::compare_later(const std::string& project,
                                                     const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                                                     const gate::policy& rules, compare_done done,
                                                     const std::optional<model::baseline_choice>& baseline)
{
    return impl_->compare_later(project, pairs, rules, std::move(done), baseline);
}

std::optional<gate::report> comparisons::load(const std::string& project, std::int64_t id) const
{
    return impl_->load_comparison(project, id);
}

std::vector<model::comparison_summary> comparisons::recent(const std::string& project, std::size_t limit) const
{
    return impl_->recent_comparisons(project, limit);
}

std::vector<std::pair<std::int64_t, std::int64_t>> comparisons::pairs_for(const std::string& project,
                                                                          std::string_view base_ref,
                                                                          std::string_view head_ref) const
{
    return impl_->pairs_for(project, base_ref, head_ref);
}

std::vector<model::history_point> history::points(const model::history_query& q) const { return impl_->history(q); }

std::vector<model::benchmark_info> history::benchmarks(const std::string& project) const
{
    return impl_->benchmarks(project);
}

std::vector<model::change_point_record> history::change_points(const std::string& project, const std::string& benchmark,
                                                               const std::string& counter,
                                                               const std::optional<std::string>& testbed,
                                                               const std::optional<std::string>& branch) const
{
    return impl_->change_points(project, benchmark, counter, testbed, branch);
}

std::vector<model::alert> alerts::list(const model::alert_query& q) const { return impl_->alerts(q); }

model::alert alerts::get(const std::string& project, std::int64_t id) const { return impl_->alert(project, id); }

model::alert alerts::update(const std::string& project, std::int64_t id, const model::alert_update& u)
{
    return impl_->update_alert(project, id, u);
}

model::alert alerts::put_culprit(const std::string& project, std::int64_t id, const model::alert_culprit& culprit,
                                 const std::optional<model::token_ref>& by)
{
    return impl_->put_culprit(project, id, culprit, by);
}

void artifacts::store_flame_graph(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                                  std::string_view svg)
{
    impl_->store_flame_graph(project, comparison_id, benchmark, svg);
}

std::optional<std::string> artifacts::flame_graph(const std::string& project, std::int64_t comparison_id,
                                                  const std::string& benchmark) const
{
    return impl_->flame_graph(project, comparison_id, benchmark);
}

std::vector<std::string> artifacts::flame_graph_benchmarks(const std::string& project, std::int64_t comparison_id) const
{
    return impl_->flame_graph_benchmarks(project, comparison_id);
}

void artifacts::store_attribution(const std::string& project, std::int64_t comparison_id, const std::string& benchmark,
                                  std::string_view attribution_json)
{
    impl_->store_attribution(project, comparison_id, benchmark, attribution_json);
}

void maintenance::check_health() const { impl_->check_health(); }

std::int64_t maintenance::store_size_bytes() const { return impl_->store_size_bytes(); }

std::size_t maintenance::cached_comparison_bytes() const { return impl_->cached_comparison_bytes(); }

std::size_t maintenance::cached_comparisons() const { return impl_->cached_comparisons(); }

std::size_t maintenance::cached_run_bytes() const { return impl_->cached_run_bytes(); }

std::size_t maintenance::cached_runs() const { return impl_->cached_runs(); }

std::size_t maintenance::cached_histories() const { return impl_->cached_histories(); }

void background::commit_in_background(std::size_t max_batch) { impl_->commit_in_background(max_batch); }

void background::drain_commits() const { impl_->drain_commits(); }

commit_queue::counts background::commit_stats() const { return impl_->commit_stats(); }

void background::watch_in_background(watch_queue::reporter report) { impl_->watch_in_background(std::move(report)); }

void background::drain_watch() const { impl_->drain_watch(); }

watch_queue::counts background::watch_stats() const { return impl_->watch_stats(); }

void background::notify_with(std::shared_ptr<notifier> n) { impl_->notify_with(std::move(n)); }

std::optional<notifier::counts> background::notify_stats() const { return impl_->notify_stats(); }

void background::set_change_point_defaults(const stats::change_point_options& defaults)
{
    impl_->set_change_point_defaults(defaults);
}

const stats::change_point_options& background::change_point_defaults() const noexcept
{
    return impl_->change_point_defaults();
}

} // namespace perfgate::service
