// A reviewer's acceptance of a comparison's regression (017_acceptances.sql).
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

namespace perfgate::store {

using detail::connection;
using detail::lookup_id;
using detail::shown_name;
using detail::unix_now;

std::optional<acceptance> acceptances::accept(std::string_view project, std::string_view head_sha,
                                              std::string_view login, std::string_view reason,
                                              const std::optional<model::token_ref>& by)
{
    return impl_->write([&](connection& c) -> std::optional<acceptance> {
        const auto project_id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
        if (!project_id) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        // The newest comparison whose candidate is a run of the commit:
        // runs_project_sha finds the runs, comparisons_candidate their
        // comparisons.
        std::optional<std::int64_t> comparison;
        {
            auto st = c.prepare("SELECT max(c.id) FROM comparisons c WHERE c.project_id = :project_id AND "
                                "c.candidate_run IN (SELECT r.id FROM runs r WHERE r.project_id = :project_id AND "
                                "r.git_sha = :sha)");
            st.bind(":project_id", *project_id).bind(":sha", head_sha);
            if (st.step() && !st.is_null(0)) comparison = st.int64(0);
            st.run();
        }
        if (!comparison) return std::nullopt;
        acceptance a{*comparison, std::string(head_sha), std::string(login), std::string(reason), unix_now(), by};
        auto st = c.prepare("INSERT INTO acceptances (comparison_id, head_sha, login, reason, accepted_at, token_id, "
                            "token_name) VALUES (:comparison, :sha, :login, :reason, :now, :token_id, :token_name) "
                            "ON CONFLICT (comparison_id) DO UPDATE SET head_sha = excluded.head_sha, "
                            "login = excluded.login, reason = excluded.reason, accepted_at = excluded.accepted_at, "
                            "token_id = excluded.token_id, token_name = excluded.token_name");
        st.bind(":comparison", a.comparison_id)
            .bind(":sha", a.head_sha)
            .bind(":login", a.login)
            .bind(":reason", a.reason)
            .bind(":now", a.accepted_at)
            .bind(":token_id", by ? std::optional(by->id) : std::nullopt)
            .bind(":token_name", by ? std::optional(by->name) : std::nullopt);
        st.run();
        return a;
    });
}

std::optional<acceptance> acceptances::load(std::string_view project, std::int64_t comparison_id) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT a.comparison_id, a.head_sha, a.login, a.reason, a.accepted_at, a.token_id, "
                           "a.token_name FROM acceptances a "
                           "JOIN comparisons c ON c.id = a.comparison_id JOIN projects p ON p.id = c.project_id "
                           "WHERE a.comparison_id = :id AND p.name = :project");
    st.bind(":id", comparison_id).bind(":project", project);
    if (!st.step()) return std::nullopt;
    acceptance a{st.int64(0), st.text(1), st.text(2), st.text(3), st.int64(4), std::nullopt};
    if (!st.is_null(5)) a.written_by = model::token_ref{st.int64(5), st.is_null(6) ? std::string() : st.text(6)};
    return a;
}

} // namespace perfgate::store
