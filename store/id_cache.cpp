// The ids of names that every compare and history query looks up again
// (detail::id_cache, store/store_impl.hpp says when an id may be kept), and
// the lookups that go through it.
#include "store/store_impl.hpp"

#include <mutex>

namespace perfgate::store::detail {

std::string id_cache::key(kind k, std::string_view name, std::string_view scope)
{
    std::string out(1, static_cast<char>(k));
    out += scope;
    out += '\0';
    out += name;
    return out;
}

std::optional<std::int64_t> id_cache::find(kind k, std::string_view name, std::string_view scope) const
{
    const std::string wanted = key(k, name, scope);
    std::lock_guard lock(mu_);
    if (auto it = ids_.find(wanted); it != ids_.end()) return it->second;
    return std::nullopt;
}

void id_cache::put(kind k, std::string_view name, std::int64_t id, std::string_view scope)
{
    std::string entry = key(k, name, scope);
    std::lock_guard lock(mu_);
    if (ids_.size() >= max_entries) ids_.clear();
    ids_.emplace(std::move(entry), id);
}

std::optional<std::pair<std::string, std::string>> id_cache::testbed(std::int64_t id) const
{
    std::lock_guard lock(mu_);
    if (auto it = testbeds_.find(id); it != testbeds_.end()) return it->second;
    return std::nullopt;
}

void id_cache::put_testbed(std::int64_t id, std::string fingerprint, std::string name)
{
    std::lock_guard lock(mu_);
    if (testbeds_.size() >= max_entries) testbeds_.clear();
    testbeds_.emplace(id, std::pair{std::move(fingerprint), std::move(name)});
}

// SELECT id ... WHERE name-ish = :name, or nullopt.
std::optional<std::int64_t> lookup_id(connection& c, std::string_view sql,
                                      std::initializer_list<std::pair<const char*, std::string_view>> binds)
{
    auto st = c.prepare(sql);
    for (const auto& [name, value] : binds) st.bind(name, value);
    if (!st.step()) return std::nullopt;
    return st.int64(0);
}

std::optional<std::int64_t> project_id(id_cache& ids, connection& c, std::string_view project, bool fill)
{
    if (auto id = ids.find(id_cache::kind::project, project)) return id;
    auto id = lookup_id(c, "SELECT id FROM projects WHERE name = :name", {{":name", project}});
    if (id && fill) ids.put(id_cache::kind::project, project, *id);
    return id;
}

std::optional<std::int64_t> counter_id(id_cache& ids, connection& c, std::string_view counter, bool fill)
{
    if (auto id = ids.find(id_cache::kind::counter, counter)) return id;
    auto id = lookup_id(c, "SELECT id FROM counters WHERE name = :name", {{":name", counter}});
    if (id && fill) ids.put(id_cache::kind::counter, counter, *id);
    return id;
}

std::optional<std::int64_t> benchmark_id(id_cache& ids, connection& c, std::string_view project,
                                         std::string_view benchmark, bool fill)
{
    if (auto id = ids.find(id_cache::kind::benchmark, benchmark, project)) return id;
    auto st = c.prepare("SELECT b.id FROM benchmarks b JOIN projects p ON p.id = b.project_id "
                        "WHERE p.name = :project AND b.name = :benchmark");
    st.bind(":project", project).bind(":benchmark", benchmark);
    if (!st.step()) return std::nullopt;
    const auto id = st.int64(0);
    if (fill) ids.put(id_cache::kind::benchmark, benchmark, id, project);
    return id;
}

} // namespace perfgate::store::detail
