// The error ids of perfgate, one constant each: errors::ingest_bad_csv is
// "ingest.bad_csv". Their HTTP statuses, exit codes and meanings are in
// model/error_catalogue.hpp (docs/errors.md); tests/test_errors.cpp checks
// that the two list the same ids and that each constant is named after its
// id ('.' -> '_').
//
// This header is small on purpose: model/error.hpp includes it, so every
// throw site can write error(errors::ingest_bad_csv, "...").
#pragma once

#include <string_view>

namespace perfgate {

// An error id: "<area>.<what>" (or "internal").
class error_id {
public:
    constexpr explicit error_id(std::string_view id) noexcept : id_(id) {}
    [[nodiscard]] constexpr std::string_view view() const noexcept { return id_; }
    friend constexpr bool operator==(error_id a, std::string_view b) noexcept { return a.id_ == b; }
    friend constexpr bool operator==(error_id a, error_id b) noexcept { return a.id_ == b.id_; }

private:
    std::string_view id_;
};

namespace errors {
inline constexpr error_id usage_bad_arguments{"usage.bad_arguments"};
inline constexpr error_id usage_bad_cpus{"usage.bad_cpus"};
inline constexpr error_id usage_bad_event{"usage.bad_event"};
inline constexpr error_id usage_bad_subcommand{"usage.bad_subcommand"};
inline constexpr error_id usage_bad_value{"usage.bad_value"};
inline constexpr error_id usage_conflict{"usage.conflict"};
inline constexpr error_id usage_file_exists{"usage.file_exists"};
inline constexpr error_id usage_missing_argument{"usage.missing_argument"};
inline constexpr error_id usage_missing_option{"usage.missing_option"};
inline constexpr error_id usage_missing_value{"usage.missing_value"};
inline constexpr error_id usage_repeated_option{"usage.repeated_option"};
inline constexpr error_id usage_unexpected_argument{"usage.unexpected_argument"};
inline constexpr error_id usage_unexpected_value{"usage.unexpected_value"};
inline constexpr error_id usage_unknown_option{"usage.unknown_option"};
inline constexpr error_id usage_unsupported{"usage.unsupported"};

inline constexpr error_id input_bad_command{"input.bad_command"};
inline constexpr error_id input_bad_config{"input.bad_config"};
inline constexpr error_id input_bad_event{"input.bad_event"};
inline constexpr error_id input_bad_export{"input.bad_export"};
inline constexpr error_id input_bad_number{"input.bad_number"};
inline constexpr error_id input_bad_report{"input.bad_report"};
inline constexpr error_id input_bisect_endpoint{"input.bisect_endpoint"};
inline constexpr error_id input_bisect_range{"input.bisect_range"};
inline constexpr error_id input_bisect_state{"input.bisect_state"};
inline constexpr error_id input_dirty_tree{"input.dirty_tree"};
inline constexpr error_id input_github_env{"input.github_env"};
inline constexpr error_id input_github_event{"input.github_event"};
inline constexpr error_id input_github_sha{"input.github_sha"};
inline constexpr error_id input_gitlab_env{"input.gitlab_env"};
inline constexpr error_id input_git{"input.git"};
inline constexpr error_id input_shallow_clone{"input.shallow_clone"};
inline constexpr error_id input_head_sha_mismatch{"input.head_sha_mismatch"};
inline constexpr error_id input_no_column{"input.no_column"};
inline constexpr error_id input_no_data{"input.no_data"};
inline constexpr error_id input_unknown_project{"input.unknown_project"};
inline constexpr error_id input_unreadable{"input.unreadable"};
inline constexpr error_id input_unwritable{"input.unwritable"};

inline constexpr error_id policy_bad_json{"policy.bad_json"};
inline constexpr error_id policy_bad_value{"policy.bad_value"};
inline constexpr error_id policy_too_large{"policy.too_large"};
inline constexpr error_id policy_unknown_key{"policy.unknown_key"};

inline constexpr error_id ingest_bad_csv{"ingest.bad_csv"};
inline constexpr error_id ingest_bad_field{"ingest.bad_field"};
inline constexpr error_id ingest_bad_input{"ingest.bad_input"};
inline constexpr error_id ingest_bad_idempotency_key{"ingest.bad_idempotency_key"};
inline constexpr error_id ingest_idempotency_conflict{"ingest.idempotency_conflict"};
inline constexpr error_id ingest_too_many_counters{"ingest.too_many_counters"};
inline constexpr error_id ingest_too_many_repetitions{"ingest.too_many_repetitions"};
inline constexpr error_id ingest_unreadable{"ingest.unreadable"};

inline constexpr error_id compare_ambiguous_ref{"compare.ambiguous_ref"};
inline constexpr error_id compare_bad_ref{"compare.bad_ref"};
inline constexpr error_id compare_bad_request{"compare.bad_request"};
inline constexpr error_id compare_mismatch{"compare.mismatch"};
inline constexpr error_id compare_not_found{"compare.not_found"};
inline constexpr error_id compare_too_large{"compare.too_large"};
inline constexpr error_id compare_too_many_pairs{"compare.too_many_pairs"};

inline constexpr error_id query_bad_value{"query.bad_value"};
inline constexpr error_id alert_bad_note{"alert.bad_note"};
inline constexpr error_id alert_bad_status{"alert.bad_status"};
inline constexpr error_id alert_not_found{"alert.not_found"};
inline constexpr error_id comparison_not_found{"comparison.not_found"};
inline constexpr error_id accept_denied{"accept.denied"};
inline constexpr error_id accept_no_comparison{"accept.no_comparison"};
inline constexpr error_id project_not_found{"project.not_found"};
inline constexpr error_id artifact_bad_attribution{"artifact.bad_attribution"};
inline constexpr error_id artifact_bad_benchmark{"artifact.bad_benchmark"};
inline constexpr error_id artifact_bad_svg{"artifact.bad_svg"};
inline constexpr error_id artifact_not_found{"artifact.not_found"};
inline constexpr error_id artifact_too_large{"artifact.too_large"};
inline constexpr error_id artifact_too_many{"artifact.too_many"};

inline constexpr error_id auth_bad_token{"auth.bad_token"};
inline constexpr error_id auth_forbidden{"auth.forbidden"};
inline constexpr error_id auth_missing_token{"auth.missing_token"};
inline constexpr error_id auth_missing_scope{"auth.missing_scope"};
inline constexpr error_id token_not_found{"token.not_found"};

inline constexpr error_id http_too_many_requests{"http.too_many_requests"};
inline constexpr error_id http_bad_json{"http.bad_json"};
inline constexpr error_id http_bad_param{"http.bad_param"};
inline constexpr error_id http_bad_request{"http.bad_request"};
inline constexpr error_id http_body_too_large{"http.body_too_large"};
inline constexpr error_id http_header_too_large{"http.header_too_large"};
inline constexpr error_id http_method_not_allowed{"http.method_not_allowed"};
inline constexpr error_id http_missing_param{"http.missing_param"};
inline constexpr error_id http_not_found{"http.not_found"};
inline constexpr error_id http_not_implemented{"http.not_implemented"};
inline constexpr error_id http_over_capacity{"http.over_capacity"};
inline constexpr error_id http_too_deep{"http.too_deep"};
inline constexpr error_id http_unsupported_media_type{"http.unsupported_media_type"};
inline constexpr error_id http_bad_header{"http.bad_header"};
inline constexpr error_id http_bad_method{"http.bad_method"};
inline constexpr error_id http_bad_response{"http.bad_response"};
inline constexpr error_id http_bad_url{"http.bad_url"};
inline constexpr error_id http_unreachable{"http.unreachable"};

inline constexpr error_id server_auth{"server.auth"};
inline constexpr error_id server_bad_response{"server.bad_response"};
inline constexpr error_id server_failed{"server.failed"};
inline constexpr error_id server_listen{"server.listen"};
inline constexpr error_id server_rejected{"server.rejected"};

inline constexpr error_id store_backup{"store.backup"};
inline constexpr error_id store_conflict{"store.conflict"};
inline constexpr error_id store_constraint{"store.constraint"};
inline constexpr error_id store_copy_mismatch{"store.copy_mismatch"};
inline constexpr error_id store_copy_target_not_empty{"store.copy_target_not_empty"};
inline constexpr error_id store_copy_unknown_table{"store.copy_unknown_table"};
inline constexpr error_id store_import_conflict{"store.import_conflict"};
inline constexpr error_id store_corrupt{"store.corrupt"};
inline constexpr error_id store_io{"store.io"};
inline constexpr error_id store_full{"store.full"};
inline constexpr error_id store_key_conflict{"store.key_conflict"};
inline constexpr error_id store_lost{"store.lost"};
inline constexpr error_id store_libpq_missing{"store.libpq_missing"};
inline constexpr error_id store_migrate{"store.migrate"};
inline constexpr error_id store_not_found{"store.not_found"};
inline constexpr error_id store_open{"store.open"};
inline constexpr error_id store_read_only{"store.read_only"};
inline constexpr error_id store_unsupported{"store.unsupported"};

inline constexpr error_id measure_failed{"measure.failed"};
inline constexpr error_id measure_helper_missing{"measure.helper_missing"};
inline constexpr error_id measure_perf_unavailable{"measure.perf_unavailable"};
inline constexpr error_id measure_timeout{"measure.timeout"};
inline constexpr error_id measure_valgrind_unavailable{"measure.valgrind_unavailable"};
inline constexpr error_id env_perf_timeout{"env.perf_timeout"};
inline constexpr error_id env_perf_unavailable{"env.perf_unavailable"};
inline constexpr error_id process_exec_failed{"process.exec_failed"};
inline constexpr error_id process_io{"process.io"};
inline constexpr error_id process_spawn_failed{"process.spawn_failed"};

inline constexpr error_id profile_artifacts{"profile.artifacts"};
inline constexpr error_id profile_bad_callgrind{"profile.bad_callgrind"};
inline constexpr error_id profile_bad_dhat{"profile.bad_dhat"};
inline constexpr error_id profile_bad_memcheck{"profile.bad_memcheck"};
inline constexpr error_id profile_bad_perf_script{"profile.bad_perf_script"};
inline constexpr error_id profile_failed{"profile.failed"};
inline constexpr error_id profile_no_samples{"profile.no_samples"};
inline constexpr error_id profile_perf_refused{"profile.perf_refused"};
inline constexpr error_id profile_perf_unavailable{"profile.perf_unavailable"};
inline constexpr error_id profile_record_failed{"profile.record_failed"};
inline constexpr error_id profile_script_failed{"profile.script_failed"};
inline constexpr error_id profile_stripped{"profile.stripped"};
inline constexpr error_id profile_timeout{"profile.timeout"};
inline constexpr error_id profile_too_large{"profile.too_large"};
inline constexpr error_id profile_unknown_event{"profile.unknown_event"};
inline constexpr error_id profile_unreadable{"profile.unreadable"};
inline constexpr error_id attribution_failed{"attribution.failed"};
inline constexpr error_id attribution_no_profile{"attribution.no_profile"};
inline constexpr error_id attribution_stripped{"attribution.stripped"};

inline constexpr error_id github_bad_response{"github.bad_response"};
inline constexpr error_id github_forbidden{"github.forbidden"};
inline constexpr error_id github_http{"github.http"};
inline constexpr error_id github_rate_limited{"github.rate_limited"};
inline constexpr error_id github_server_error{"github.server_error"};
inline constexpr error_id github_unreachable{"github.unreachable"};
inline constexpr error_id gitlab_bad_response{"gitlab.bad_response"};
inline constexpr error_id gitlab_http{"gitlab.http"};
inline constexpr error_id gitlab_rate_limited{"gitlab.rate_limited"};
inline constexpr error_id gitlab_server_error{"gitlab.server_error"};
inline constexpr error_id gitlab_unreachable{"gitlab.unreachable"};

inline constexpr error_id io_stdout{"io.stdout"};
inline constexpr error_id io_write{"io.write"};
inline constexpr error_id crypto_failed{"crypto.failed"};

inline constexpr error_id stats_bad_input{"stats.bad_input"};
inline constexpr error_id stats_bad_look{"stats.bad_look"};
inline constexpr error_id stats_bad_option{"stats.bad_option"};
inline constexpr error_id stats_bad_p_value{"stats.bad_p_value"};
inline constexpr error_id stats_bad_plan{"stats.bad_plan"};
inline constexpr error_id stats_bad_probability{"stats.bad_probability"};
inline constexpr error_id stats_bad_threshold{"stats.bad_threshold"};
inline constexpr error_id stats_exact_too_large{"stats.exact_too_large"};

inline constexpr error_id internal{"internal"};
} // namespace errors

} // namespace perfgate
