// Publishing a report to GitHub from an Actions job (docs/github.md), in
// four parts:
//   model/github_actions.hpp  the environment: GITHUB_* and the event file
//                             (shared with runner/git_info.cpp)
//   github/event.hpp          what the event payload says: PR and commit
//   github/api.hpp            the REST client: requests, retries, rate limits
//   github/publish.hpp        sticky comment, status, summary, outputs,
//                             annotations
// Uses only the standard Actions environment; tests point GITHUB_API_URL at
// a local fake (tests/fake_github.hpp).
#pragma once

#include "github/accept.hpp"
#include "github/api.hpp"
#include "github/event.hpp"
#include "github/publish.hpp"
