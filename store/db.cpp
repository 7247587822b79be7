#include "store/db.hpp"

#include "model/error.hpp"

#include <fmt/format.h>

namespace perfgate::store::detail {

connection::~connection() = default;

statement connection::prepare(std::string_view sql)
{
    auto it = cache_.find(std::string(sql));
    if (it == cache_.end()) it = cache_.emplace(std::string(sql), cached{compile(sql), false}).first;
    // Two live leases on one prepared statement would clobber each other's bindings.
    PERFGATE_CHECK(!it->second.in_use);
    it->second.in_use = true;
    return statement(*it->second.stmt, it->second.in_use);
}

statement::~statement()
{
    stmt_.reset();
    stmt_.clear_bindings();
    in_use_ = false;
}

void statement::mark_bound(int index)
{
    if (bound_.empty()) bound_.resize(static_cast<std::size_t>(stmt_.parameter_count()));
    bound_[static_cast<std::size_t>(index - 1)] = true;
}

void statement::check_all_bound() const
{
    const int count = stmt_.parameter_count();
    for (int i = 1; i <= count; ++i) {
        if (static_cast<std::size_t>(i) <= bound_.size() && bound_[static_cast<std::size_t>(i - 1)]) continue;
        // The engine would run it with NULL there. The usual cause is a
        // misspelt name in bind(), which binds nothing (see db.hpp): name the
        // parameter and the SQL, so the typo is found from the message.
        const std::string what = fmt::format("every parameter is bound before the statement runs: {} is not, in \"{}\"",
                                             stmt_.parameter_name(i), stmt_.sql());
        check_failed(what.c_str(), __FILE__, __LINE__);
    }
}

statement& statement::bind(const char* name, std::int64_t v)
{
    if (const int i = stmt_.parameter_index(name)) {
        stmt_.bind_int64(i, v);
        mark_bound(i);
    }
    return *this;
}

statement& statement::bind(const char* name, double v)
{
    if (const int i = stmt_.parameter_index(name)) {
        stmt_.bind_real(i, v);
        mark_bound(i);
    }
    return *this;
}

statement& statement::bind(const char* name, std::string_view v)
{
    if (const int i = stmt_.parameter_index(name)) {
        stmt_.bind_text(i, v);
        mark_bound(i);
    }
    return *this;
}

statement& statement::bind(const char* name, std::optional<double> v) { return v ? bind(name, *v) : bind_null(name); }

statement& statement::bind(const char* name, std::optional<std::int64_t> v)
{
    return v ? bind(name, *v) : bind_null(name);
}

statement& statement::bind(const char* name, const std::optional<std::string>& v)
{
    return v ? bind(name, std::string_view(*v)) : bind_null(name);
}

statement& statement::bind_null(const char* name)
{
    if (const int i = stmt_.parameter_index(name)) {
        stmt_.bind_null(i);
        mark_bound(i);
    }
    return *this;
}

bool statement::step()
{
    // Not active: before the first row of a run (after prepare or a reset).
    if (!stmt_.active()) check_all_bound();
    return stmt_.step();
}

void statement::run()
{
    while (step()) {
    }
    // Ready to be bound and run again (bindings are kept).
    stmt_.reset();
}

std::optional<double> statement::opt_real(int col) const
{
    if (is_null(col)) return std::nullopt;
    return real(col);
}

std::optional<std::int64_t> statement::opt_int64(int col) const
{
    if (is_null(col)) return std::nullopt;
    return int64(col);
}

transaction::transaction(connection& conn, kind k) : conn_(conn)
{
    if (k == kind::read && conn_.scoped_) {
        inner_ = true;
        return;
    }
    conn_.begin(k);
}

transaction::~transaction()
{
    if (!done_ && !inner_) conn_.rollback();
}

void transaction::commit()
{
    if (!inner_) conn_.commit();
    done_ = true;
}

scoped_read::scoped_read(connection& c) : conn(c)
{
    conn.begin(connection::tx_kind::read);
    conn.scoped_ = true;
}

scoped_read::~scoped_read()
{
    conn.scoped_ = false;
    // COMMIT, not ROLLBACK: the engines run it from their statement caches
    // (SQLite's rollback() parses its SQL each time). A read transaction has
    // nothing to commit; should ending it fail, rollback() ends it anyway.
    try {
        conn.commit();
    } catch (...) {
        conn.rollback();
    }
}

} // namespace perfgate::store::detail
