// The schema migrations (store/migrations/, embedded at configure time:
// store/migrations.hpp), applied when a store opens its database: SQLite's
// version is PRAGMA user_version, PostgreSQL's the table perfgate_migrations.
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/migrations.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace perfgate::store {

using detail::connection;
using detail::transaction;

namespace {

// The advisory lock that migrations run under, so replicas starting together
// apply each migration once: "perfgate" in ASCII.
constexpr std::int64_t migration_lock_key = 0x7065726667617465;

} // namespace

namespace detail {

int user_version(connection& c)
{
    auto st = c.prepare("PRAGMA user_version");
    st.step();
    return static_cast<int>(st.int64(0));
}

// Applies the embedded migrations newer than PRAGMA user_version, each in its
// own transaction that also bumps user_version, so a failure leaves the
// database at the last complete version.
void migrate_sqlite(connection& c)
{
    const auto all = detail::migrations();
    const int latest = all.back().version;
    auto check_not_newer = [&](int current) {
        if (current > latest) {
            throw error(errors::store_migrate, fmt::format("{}: database schema version {} is newer than this perfgate "
                                                           "knows (version {}, {}); upgrade perfgate",
                                                           c.path(), current, latest, all.back().file));
        }
    };
    check_not_newer(user_version(c));
    for (const auto& m : all) {
        if (m.version <= user_version(c)) continue;
        transaction tx(c);
        // Re-read under the write lock: another process may have migrated.
        const int current = user_version(c);
        check_not_newer(current);
        if (m.version <= current) continue;
        try {
            c.exec(m.sql);
            // An integer from our own table, not user text.
            c.exec(fmt::format("PRAGMA user_version = {}", m.version));
            tx.commit();
        } catch (const error& e) {
            throw error(errors::store_migrate, fmt::format("{}: migration {} (to version {}) failed: {}", c.path(),
                                                           m.file, m.version, e.what()));
        }
    }
}

// PostgreSQL's migrations (store/migrations/pg/), each in its own
// transaction with its row in perfgate_migrations (DDL is transactional
// there), all under a session advisory lock: replicas that start together
// take turns, and each finds the versions the first one applied.
void migrate_pg(connection& c)
{
    const auto all = detail::pg_migrations();
    const int latest = all.back().version;
    try {
        c.exec(fmt::format("SELECT pg_advisory_lock({})", migration_lock_key));
    } catch (const error& e) {
        throw error(errors::store_migrate, fmt::format("cannot take the migration lock: {}", e.what()));
    }
    struct unlock_at_exit {
        connection& c;
        ~unlock_at_exit()
        {
            try {
                c.exec(fmt::format("SELECT pg_advisory_unlock({})", migration_lock_key));
            } catch (...) {
                // The session ends with the connection, and the lock with it.
            }
        }
    } unlock{c};
    int current = 0;
    try {
        c.exec("CREATE TABLE IF NOT EXISTS perfgate_migrations ("
               "version integer PRIMARY KEY, file text NOT NULL, applied_at bigint NOT NULL)");
        auto st = c.prepare("SELECT coalesce(max(version), 0) FROM perfgate_migrations");
        st.step();
        current = static_cast<int>(st.int64(0));
    } catch (const error& e) {
        throw error(errors::store_migrate, fmt::format("cannot read the schema version: {}", e.what()));
    }
    if (current > latest) {
        throw error(errors::store_migrate, fmt::format("{}: database schema version {} is newer than this perfgate "
                                                       "knows (version {}, pg/{}); upgrade perfgate",
                                                       c.path(), current, latest, all.back().file));
    }
    for (const auto& m : all) {
        if (m.version <= current) continue;
        try {
            transaction tx(c);
            c.exec(m.sql);
            c.prepare("INSERT INTO perfgate_migrations (version, file, applied_at) VALUES (:version, :file, :now)")
                .bind(":version", std::int64_t{m.version})
                .bind(":file", m.file)
                .bind(":now", unix_now())
                .run();
            tx.commit();
        } catch (const error& e) {
            throw error(errors::store_migrate, fmt::format("{}: migration pg/{} (to version {}) failed: {}", c.path(),
                                                           m.file, m.version, e.what()));
        }
    }
}

} // namespace detail

int maintenance::schema_version() const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare((*c).pick({"PRAGMA user_version",
                                      "SELECT coalesce(max(version), 0) FROM perfgate_migrations"}));
    st.step();
    return static_cast<int>(st.int64(0));
}

} // namespace perfgate::store
