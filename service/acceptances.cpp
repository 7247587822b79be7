// A reviewer's acceptance of a comparison's regression (perfgate accept,
// docs/github.md "Accepting a regression"): checked here, stored by
// store::acceptances::accept.
#include "service/service_impl.hpp"

#include <fmt/format.h>

#include "model/error.hpp"
#include "store/acceptances.hpp"

namespace perfgate::service {

model::acceptance detail::service_impl::accept_comparison(const std::string& project, std::string_view head_sha,
                                                          std::string_view login, std::string_view reason,
                                                          const std::optional<model::token_ref>& by)
{
    require_project(project);
    if (!model::is_full_commit_sha(head_sha)) {
        throw error(errors::ingest_bad_field, fmt::format("head_sha: expected 40 or 64 lowercase hex digits, got {} "
                                                          "bytes",
                                                          head_sha.size()));
    }
    if (!model::is_github_login(login) && !model::is_gitlab_username(login)) {
        throw error(errors::ingest_bad_field,
                    "login: expected a GitHub login (1 to 39 letters, digits and '-', optionally followed by [bot]) "
                    "or a GitLab username (1 to 255 letters, digits, '_', '-' and '.')");
    }
    if (!model::is_clean_acceptance_reason(reason)) {
        throw error(errors::ingest_bad_field,
                    fmt::format("reason: expected one line of at most {} bytes of UTF-8 text without control "
                                "characters, runs of spaces or blanks at its ends, got {} bytes",
                                model::max_acceptance_reason_bytes, reason.size()));
    }
    auto stored = db_.acceptances().accept(project, head_sha, login, reason, by);
    if (!stored) {
        throw error(errors::accept_no_comparison,
                    fmt::format("project '{}' has no comparison whose candidate is commit {}: gate that commit "
                                "(perfgate run --server) before accepting it",
                                project, head_sha));
    }
    return std::move(*stored);
}

std::optional<model::acceptance> detail::service_impl::acceptance(const std::string& project,
                                                                  std::int64_t comparison_id) const
{
    require_project(project);
    return db_.acceptances().load(project, comparison_id);
}

} // namespace perfgate::service
