#include "model/gitlab_ci.hpp"

namespace perfgate::model {

gitlab_env gitlab_env::read(const env_lookup& env)
{
    auto get = [&](const char* name) { return env(name).value_or(""); };
    gitlab_env e;
    e.ci = get("GITLAB_CI") == "true";
    e.server_url = get("CI_SERVER_URL");
    e.api_url = get("CI_API_V4_URL");
    e.project_id = get("CI_PROJECT_ID");
    e.project_url = get("CI_PROJECT_URL");
    e.mr_iid = get("CI_MERGE_REQUEST_IID");
    e.mr_diff_base_sha = get("CI_MERGE_REQUEST_DIFF_BASE_SHA");
    e.mr_source_sha = get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA");
    e.mr_source_branch = get("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME");
    e.mr_target_branch = get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME");
    e.commit_sha = get("CI_COMMIT_SHA");
    e.commit_before_sha = get("CI_COMMIT_BEFORE_SHA");
    e.commit_branch = get("CI_COMMIT_BRANCH");
    e.commit_ref_name = get("CI_COMMIT_REF_NAME");
    e.pipeline_source = get("CI_PIPELINE_SOURCE");
    e.pipeline_url = get("CI_PIPELINE_URL");
    e.job_url = get("CI_JOB_URL");
    e.job_name = get("CI_JOB_NAME");
    e.tls_ca_file = get("CI_SERVER_TLS_CA_FILE");
    e.token = get("PERFGATE_GITLAB_TOKEN");
    while (e.api_url.ends_with('/')) e.api_url.pop_back();
    while (e.server_url.ends_with('/')) e.server_url.pop_back();
    return e;
}

gitlab_env gitlab_env::from_environment() { return read(process_env()); }

std::string gitlab_env::api_base() const
{
    if (!api_url.empty()) return api_url;
    if (!server_url.empty()) return server_url + "/api/v4";
    return {};
}

} // namespace perfgate::model
