// A project's alert webhooks and their delivery log (015_webhooks.sql).
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

namespace perfgate::store {

using detail::connection;
using detail::lookup_id;
using detail::shown_name;
using detail::unix_now;

std::int64_t webhooks::add(std::string_view project, std::string_view url, std::string_view format,
                           const std::optional<std::string>& secret)
{
    return impl_->write([&](connection& c) {
        const auto project_id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
        if (!project_id) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        auto st = c.prepare("INSERT INTO webhooks (project_id, url, format, secret, created_at) "
                            "VALUES (:project_id, :url, :format, :secret, :now) RETURNING id");
        st.bind(":project_id", *project_id)
            .bind(":url", url)
            .bind(":format", format)
            .bind(":secret", secret)
            .bind(":now", unix_now());
        st.step();
        const auto id = st.int64(0);
        st.run(); // finish the statement (RETURNING yields one row)
        return id;
    });
}

std::vector<webhook_info> webhooks::list(std::string_view project) const
{
    impl::read_lease c(*impl_);
    // secret IS NOT NULL is a boolean on PostgreSQL, an integer on SQLite: CASE gives both an integer.
    auto st = (*c).prepare("SELECT w.id, w.url, w.format, CASE WHEN w.secret IS NULL THEN 0 ELSE 1 END, "
                           "w.created_at, w.last_outcome, w.last_attempts, w.last_at, w.last_error FROM webhooks w "
                           "JOIN projects p ON p.id = w.project_id WHERE p.name = :project ORDER BY w.id");
    st.bind(":project", project);
    std::vector<webhook_info> out;
    while (st.step()) {
        webhook_info w;
        w.id = st.int64(0);
        w.url = st.text(1);
        w.format = st.text(2);
        w.has_secret = st.int64(3) != 0;
        w.created_at = st.int64(4);
        if (!st.is_null(5)) w.last_outcome = st.text(5);
        w.last_attempts = st.opt_int64(6);
        w.last_at = st.opt_int64(7);
        if (!st.is_null(8)) w.last_error = st.text(8);
        out.push_back(std::move(w));
    }
    return out;
}

std::vector<webhook_target> webhooks::targets(std::string_view project) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT w.id, w.url, w.format, w.secret FROM webhooks w "
                           "JOIN projects p ON p.id = w.project_id WHERE p.name = :project ORDER BY w.id");
    st.bind(":project", project);
    std::vector<webhook_target> out;
    while (st.step()) {
        webhook_target t{st.int64(0), st.text(1), st.text(2), std::nullopt};
        if (!st.is_null(3)) t.secret = st.text(3);
        out.push_back(std::move(t));
    }
    return out;
}

bool webhooks::remove(std::string_view project, std::int64_t id)
{
    return impl_->write([&](connection& c) {
        {
            auto st = c.prepare("SELECT w.id FROM webhooks w JOIN projects p ON p.id = w.project_id "
                                "WHERE w.id = :id AND p.name = :project");
            st.bind(":id", id).bind(":project", project);
            if (!st.step()) return false;
        }
        c.prepare("DELETE FROM webhooks WHERE id = :id").bind(":id", id).run();
        return true;
    });
}

void webhooks::record_delivery(std::int64_t id, std::string_view outcome, std::int64_t attempts,
                               std::string_view error_text)
{
    impl_->write([&](connection& c) {
        auto st = c.prepare("UPDATE webhooks SET last_outcome = :outcome, last_attempts = :attempts, "
                            "last_at = :now, last_error = :error WHERE id = :id");
        st.bind(":outcome", outcome).bind(":attempts", attempts).bind(":now", unix_now()).bind(":id", id);
        if (error_text.empty()) st.bind_null(":error");
        else st.bind(":error", error_text);
        st.run();
    });
}

} // namespace perfgate::store
