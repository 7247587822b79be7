// perfgate qualify's figures per testbed and benchmark (021_qualifications.sql).
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

namespace perfgate::store {

using detail::connection;
using detail::lookup_id;
using detail::shown_name;
using detail::unix_now;

qualification qualifications::add(std::string_view project, qualification q, const std::optional<model::token_ref>& by)
{
    return impl_->write([&](connection& c) -> qualification {
        const auto project_id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
        if (!project_id) {
            throw error(errors::store_not_found,
                        fmt::format("{}: project {} not found", impl_->name_, shown_name(project)));
        }
        qualification out = q;
        out.stored_at = unix_now();
        out.written_by = by;
        {
            auto st = c.prepare(
                "INSERT INTO qualifications (project_id, testbed_fingerprint, testbed, benchmark, backend, "
                "qualified_at, stored_at, token_id, token_name) VALUES (:project_id, :fingerprint, :testbed, "
                ":benchmark, :backend, :qualified_at, :stored_at, :token_id, :token_name) RETURNING id");
            st.bind(":project_id", *project_id)
                .bind(":fingerprint", out.testbed_fingerprint)
                .bind(":testbed", out.testbed)
                .bind(":benchmark", out.benchmark)
                .bind(":backend", out.backend)
                .bind(":qualified_at", out.qualified_at)
                .bind(":stored_at", out.stored_at)
                .bind(":token_id", by ? std::optional(by->id) : std::nullopt)
                .bind(":token_name", by ? std::optional(by->name) : std::nullopt);
            st.step();
            out.id = st.int64(0);
            st.run();
        }
        auto st = c.prepare("INSERT INTO qualification_counters (qualification_id, counter, threshold_pct, "
                            "detects_80_pct, detects_95_pct, reaches_threshold, deterministic) VALUES (:id, "
                            ":counter, :threshold, :d80, :d95, :reaches, :deterministic)");
        for (const auto& k : out.counters) {
            st.bind(":id", out.id)
                .bind(":counter", k.counter)
                .bind(":threshold", k.threshold_pct)
                .bind(":d80", k.detects_80_pct)
                .bind(":d95", k.detects_95_pct)
                .bind(":reaches", std::int64_t{k.reaches_threshold ? 1 : 0})
                .bind(":deterministic", std::int64_t{k.deterministic ? 1 : 0});
            st.run();
        }
        return out;
    });
}

std::vector<qualification> qualifications::newest(std::string_view project, std::string_view testbed,
                                                  std::string_view benchmark) const
{
    impl::read_lease c(*impl_);
    // The columns first: PostgreSQL types each parameter where it first
    // meets it, here as text.
    auto st = (*c).prepare(fmt::format(
        "SELECT q.id, q.testbed_fingerprint, q.testbed, q.benchmark, q.backend, q.qualified_at, q.stored_at, "
        "q.token_id, q.token_name FROM qualifications q WHERE q.id IN (SELECT max(n.id) FROM qualifications n "
        "JOIN projects p ON p.id = n.project_id WHERE p.name = :project AND (n.testbed_fingerprint = :testbed OR "
        ":testbed = '') AND (n.benchmark = :benchmark OR :benchmark = '') GROUP BY "
        "n.testbed_fingerprint, n.benchmark) ORDER BY q.id DESC LIMIT {}",
        max_listed_qualifications));
    // std::string: an empty default string_view has no data, which SQLite binds as NULL.
    st.bind(":project", project).bind(":testbed", std::string(testbed)).bind(":benchmark", std::string(benchmark));
    std::vector<qualification> out;
    while (st.step()) {
        qualification q;
        q.id = st.int64(0);
        q.testbed_fingerprint = st.text(1);
        q.testbed = st.text(2);
        q.benchmark = st.text(3);
        q.backend = st.text(4);
        q.qualified_at = st.int64(5);
        q.stored_at = st.int64(6);
        if (!st.is_null(7)) q.written_by = model::token_ref{st.int64(7), st.is_null(8) ? std::string() : st.text(8)};
        out.push_back(std::move(q));
    }
    auto counters = (*c).prepare("SELECT counter, threshold_pct, detects_80_pct, detects_95_pct, "
                                 "reaches_threshold, deterministic FROM qualification_counters WHERE "
                                 "qualification_id = :id ORDER BY counter");
    for (auto& q : out) {
        counters.bind(":id", q.id);
        while (counters.step()) {
            q.counters.push_back({counters.text(0), counters.real(1), counters.opt_real(2), counters.opt_real(3),
                                  counters.int64(4) != 0, counters.int64(5) != 0});
        }
        counters.reset();
    }
    return out;
}

} // namespace perfgate::store
