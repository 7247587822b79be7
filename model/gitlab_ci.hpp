// The one reader of the GitLab CI environment: the predefined CI_* variables
// of a job (docs.gitlab.com/ci/variables/predefined_variables). Both
// runner/git_info.cpp (which commits a run measured) and gitlab/ (publishing
// a report) read them through here; docs/gitlab.md.
#pragma once

#include <string>

#include "model/github_actions.hpp"

namespace perfgate::model {

// The variables of a GitLab CI job that perfgate reads. Empty when unset.
struct gitlab_env {
    bool ci = false;               // GITLAB_CI is "true": running inside GitLab CI
    std::string server_url;        // CI_SERVER_URL ("https://gitlab.example.com")
    std::string api_url;           // CI_API_V4_URL, without trailing slashes
    std::string project_id;        // CI_PROJECT_ID (numeric)
    std::string project_url;       // CI_PROJECT_URL
    std::string mr_iid;            // CI_MERGE_REQUEST_IID (merge request pipelines only)
    std::string mr_diff_base_sha;  // CI_MERGE_REQUEST_DIFF_BASE_SHA: the MR's merge base
    std::string mr_source_sha;     // CI_MERGE_REQUEST_SOURCE_BRANCH_SHA (merged results pipelines: the head)
    std::string mr_source_branch;  // CI_MERGE_REQUEST_SOURCE_BRANCH_NAME
    std::string mr_target_branch;  // CI_MERGE_REQUEST_TARGET_BRANCH_NAME
    std::string commit_sha;        // CI_COMMIT_SHA
    std::string commit_before_sha; // CI_COMMIT_BEFORE_SHA (all zeros: none)
    std::string commit_branch;     // CI_COMMIT_BRANCH (branch pipelines only)
    std::string commit_ref_name;   // CI_COMMIT_REF_NAME
    std::string pipeline_source;   // CI_PIPELINE_SOURCE (push, merge_request_event, ...)
    std::string pipeline_url;      // CI_PIPELINE_URL
    std::string job_url;           // CI_JOB_URL
    std::string job_name;          // CI_JOB_NAME
    std::string tls_ca_file;       // CI_SERVER_TLS_CA_FILE: the runner's CA file for the server
    std::string token;             // PERFGATE_GITLAB_TOKEN: a project access token, masked

    static gitlab_env read(const env_lookup& env);
    // read(process_env()).
    static gitlab_env from_environment();
    // The API's base: CI_API_V4_URL, else CI_SERVER_URL + "/api/v4", else "".
    [[nodiscard]] std::string api_base() const;
    // The link a status or note points at: the job, else the pipeline.
    [[nodiscard]] std::string run_url() const { return job_url.empty() ? pipeline_url : job_url; }
};

} // namespace perfgate::model
