// The store's listings for the dashboard: recent comparisons, and runs found
// by id or by git sha (store/listing_sql.hpp, 006_project_settings.sql).
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/listing_sql.hpp"
#include "store/store_impl.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace perfgate::store {

using detail::statement;
using detail::transaction;

namespace {

// The run_ref of a row whose columns are runs_by_sha_sql's.
run_ref run_ref_of(const statement& st)
{
    run_ref r;
    r.id = st.int64(0);
    r.git_sha = st.text(1);
    r.branch = st.text(2);
    r.role = st.text(3);
    r.benchmark = st.text(4);
    r.testbed = st.text(5);
    r.testbed_name = st.text(6);
    r.created_at = st.int64(7);
    return r;
}

// The smallest string greater than every string that starts with prefix
// (BINARY collation compares bytes as unsigned): the prefix with its last
// byte below 0xff raised by one and the rest cut. nullopt when every byte is
// 0xff: no upper bound.
std::optional<std::string> prefix_upper_bound(std::string_view prefix)
{
    std::string upper(prefix);
    while (!upper.empty() && static_cast<unsigned char>(upper.back()) == 0xff) upper.pop_back();
    if (upper.empty()) return std::nullopt;
    upper.back() = static_cast<char>(static_cast<unsigned char>(upper.back()) + 1);
    return upper;
}

} // namespace

std::vector<model::comparison_summary> comparisons::recent(std::string_view project, std::size_t limit) const
{
    std::vector<model::comparison_summary> out;
    if (limit == 0) return out;
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);
    const auto project_id = detail::project_id(impl_->ids_, c, project, true);
    if (!project_id) return out;
    auto st = c.prepare(c.pick(detail::recent_comparisons_sql));
    st.bind(":project_id", *project_id).bind(":limit", detail::to_int64(limit));
    while (st.step()) {
        model::comparison_summary s;
        s.id = st.int64(0);
        s.created_at = st.int64(1);
        if (!st.is_null(2)) s.verdict = st.text(2);
        if (auto n = st.opt_int64(3)) s.benchmarks = static_cast<std::size_t>(*n); // CHECK (>= 0)
        s.baseline = {st.int64(4), st.text(5), st.text(6)};
        s.candidate = {st.int64(7), st.text(8), st.text(9)};
        out.push_back(std::move(s));
    }
    tx.commit();
    return out;
}

std::optional<run_ref> runs::find(std::string_view project, std::int64_t run_id) const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT r.id, r.git_sha, r.branch, r.role, b.name, t.fingerprint, t.name, r.created_at "
                           "FROM runs r JOIN projects p ON p.id = r.project_id "
                           "JOIN benchmarks b ON b.id = r.benchmark_id JOIN testbeds t ON t.id = r.testbed_id "
                           "WHERE r.id = :run_id AND p.name = :project");
    st.bind(":run_id", run_id).bind(":project", project);
    if (!st.step()) return std::nullopt;
    return run_ref_of(st);
}

std::vector<run_ref> runs::by_sha(std::string_view project, std::string_view sha_prefix) const
{
    std::vector<run_ref> out;
    // No upper bound: the prefix is all 0xff bytes, and every stored sha is
    // an ASCII name (capture::validate_name), so none starts with it.
    const auto sha_to = prefix_upper_bound(sha_prefix);
    if (sha_prefix.empty() || !sha_to) return out;
    impl::read_lease lease(*impl_);
    auto& c = *lease;
    transaction tx(c, transaction::kind::read);
    const auto project_id = detail::project_id(impl_->ids_, c, project, true);
    if (!project_id) return out;
    auto st = c.prepare(c.pick(detail::runs_by_sha_sql));
    st.bind(":project_id", *project_id).bind(":sha_from", sha_prefix).bind(":sha_to", *sha_to);
    while (st.step()) out.push_back(run_ref_of(st));
    tx.commit();
    std::sort(out.begin(), out.end(), [](const run_ref& a, const run_ref& b) { return a.id > b.id; });
    return out;
}

} // namespace perfgate::store
