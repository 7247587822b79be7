// Maintenance: the database's integrity and writability checks, SQLite
// backups, and the figures the server reports (runs, size).
#include "store/store.hpp"

#include "model/error.hpp"
#include "store/sqlite.hpp"
#include "store/store_impl.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <mutex>
#include <system_error>

namespace perfgate::store {

using detail::sqlite_connection;

void maintenance::check_integrity() const
{
    // PostgreSQL checks its pages as it reads them (and with data checksums,
    // initdb -k); what is left to check here is that it answers.
    const char* sql = impl_->sqlite() ? "PRAGMA quick_check(1)" : "SELECT 'ok'";
    std::string verdict;
    try {
        impl::read_lease c(*impl_);
        auto st = (*c).prepare(sql);
        verdict = st.step() ? st.text(0) : std::string("no answer");
    } catch (const error& e) {
        throw error(errors::store_corrupt,
                    fmt::format("{}: the database fails its integrity check: {}", impl_->name_, e.what()));
    }
    if (verdict != "ok") {
        throw error(errors::store_corrupt,
                    fmt::format("{}: the database fails its integrity check (PRAGMA quick_check): {}", impl_->name_,
                                verdict));
    }
}

void maintenance::check_writable()
{
    if (!impl_->sqlite()) {
        // A hot standby, or a role or database whose transactions default to
        // read-only: every write would fail.
        impl::lease c(*impl_, true);
        auto st = (*c).prepare("SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only')");
        const bool answered = st.step();
        PERFGATE_CHECK(answered);
        const std::string standby = st.text(0), read_only = st.text(1);
        if (standby == "t") {
            throw error(errors::store_read_only,
                        fmt::format("{}: the database cannot be written: the server is a standby "
                                    "(in recovery); point --db at the primary",
                                    impl_->name_));
        }
        if (read_only == "on") {
            throw error(errors::store_read_only, fmt::format("{}: the database cannot be written: "
                                                             "default_transaction_read_only is on",
                                                             impl_->name_));
        }
        return;
    }
    std::lock_guard lock(impl_->writer_mu_);
    auto& writer = static_cast<sqlite_connection&>(*impl_->writer_);
    // A read-only file in a writable directory is opened read-only without
    // an error, and an empty transaction succeeds on it: ask SQLite.
    if (sqlite3_db_readonly(writer.get(), "main") == 1) {
        throw error(errors::store_read_only,
                    fmt::format("{}: the database cannot be written: the file is read-only", impl_->name_));
    }
    try {
        // A write transaction that writes nothing: it needs the file and its
        // WAL to be writable, and leaves the database as it was.
        writer.exec("BEGIN IMMEDIATE");
        writer.exec("ROLLBACK");
    } catch (const error& e) {
        throw error(errors::store_read_only,
                    fmt::format("{}: the database cannot be written: {}", impl_->name_, e.what()));
    }
}

void maintenance::backup_to(const std::filesystem::path& file) const
{
    if (!impl_->sqlite()) {
        throw error(errors::store_unsupported,
                    fmt::format("{}: a PostgreSQL database is backed up with pg_dump, e.g. pg_dump --format=custom "
                                "--file {} '{}' (restore: pg_restore --dbname URI {})",
                                impl_->name_, file.string(), impl_->name_, file.string()));
    }
    if (impl_->memory_) {
        throw error(errors::store_backup, fmt::format("{}: an in-memory database has no backup", impl_->name_));
    }
    std::error_code ec;
    if (std::filesystem::exists(file, ec)) {
        throw error(errors::store_backup,
                    fmt::format("{}: the backup file exists already; perfgate never overwrites one", file.string()));
    }
    const std::filesystem::path tmp = file.string() + ".tmp";
    std::filesystem::remove(tmp, ec);
    try {
        {
            sqlite_connection dest(tmp.string(), sqlite_connection::mode::read_write_create);
            impl::read_lease source(*impl_);
            auto& from = static_cast<sqlite_connection&>(*source);
            sqlite3_backup* b = sqlite3_backup_init(dest.get(), "main", from.get(), "main");
            if (!b) dest.fail(sqlite3_errcode(dest.get()), "starting the backup", "store.backup");
            // All pages in one step: one read snapshot of the source (WAL:
            // writers go on meanwhile), so the copy is consistent.
            const int rc = sqlite3_backup_step(b, -1);
            sqlite3_backup_finish(b);
            if (rc != SQLITE_DONE) dest.fail(rc, "copying the database", "store.backup");
            auto check = dest.prepare("PRAGMA quick_check(1)");
            const std::string verdict = check.step() ? check.text(0) : std::string("no answer");
            if (verdict != "ok") {
                throw error(errors::store_backup,
                            fmt::format("{}: the copy fails its integrity check: {}", tmp.string(), verdict));
            }
        }
        std::filesystem::rename(tmp, file);
    } catch (const std::filesystem::filesystem_error& e) {
        std::filesystem::remove(tmp, ec);
        throw error(errors::store_backup, fmt::format("{}: {}", file.string(), e.what()));
    } catch (const error& e) {
        std::filesystem::remove(tmp, ec);
        throw error(errors::store_backup,
                    fmt::format("backup of {} to {} failed: {}", impl_->name_, file.string(), e.what()));
    }
}

std::int64_t maintenance::runs_count() const
{
    // Sum of the per-benchmark counters kept by insert_run: O(benchmarks), not O(runs).
    impl::read_lease c(*impl_);
    auto st = (*c).prepare("SELECT coalesce(sum(runs), 0) FROM benchmarks");
    st.step();
    return st.int64(0);
}

std::int64_t maintenance::size_bytes() const
{
    impl::read_lease c(*impl_);
    auto st = (*c).prepare((*c).pick({"SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
                                      "SELECT pg_database_size(current_database())"}));
    st.step();
    return st.int64(0);
}

} // namespace perfgate::store
