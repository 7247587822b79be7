// Publishing a report to GitLab from a CI job (docs/gitlab.md), in three parts:
//   model/gitlab_ci.hpp  the environment: CI_* (shared with runner/git_info.cpp)
//   gitlab/api.hpp       the REST API v4 client: PRIVATE-TOKEN, retries, pages
//   gitlab/publish.hpp   sticky merge request note, commit status, job log
//   gitlab/accept.hpp    "/perfgate accept <reason>" notes
// Tests point CI_API_V4_URL at a local fake (tests/fake_gitlab.hpp).
#pragma once

#include "gitlab/accept.hpp"
#include "gitlab/api.hpp"
#include "gitlab/publish.hpp"
