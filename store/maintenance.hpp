// Checks, sizes and backups of the database (store::store::maintenance();
// store/maintenance.cpp; schema_version: store/migrate.cpp; check_health and
// background_checkpoints: store/store.cpp).
#pragma once

#include <cstdint>
#include <filesystem>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

class maintenance {
public:
    explicit maintenance(detail::store_impl& s) noexcept : impl_(&s) {}
    maintenance(const maintenance&) = delete;
    maintenance& operator=(const maintenance&) = delete;

    // Start-up checks for a server, so that a broken file is refused at once
    // instead of answering 500 to every request later.
    // check_integrity: PRAGMA quick_check (O(database size): every page is
    // read once); error "store.corrupt" naming the file and SQLite's first
    // complaint. PostgreSQL checks its own pages (data checksums): nothing
    // to do. check_writable: takes and releases the write lock (BEGIN
    // IMMEDIATE) and writes nothing; error "store.read_only" naming the file
    // (a read-only file or directory, a full disk on the WAL). PostgreSQL:
    // "store.read_only" for a standby or a read-only default transaction.
    void check_integrity() const;
    void check_writable();

    [[nodiscard]] std::int64_t runs_count() const;
    // SQLite: page_count * page_size; PostgreSQL: pg_database_size.
    [[nodiscard]] std::int64_t size_bytes() const;
    // For /healthz: throws what keeps the store from serving. "store.lost"
    // when the SQLite file was deleted or replaced under this process (every
    // write is refused with it too: it would be acknowledged and lost), else
    // whatever a trivial read through the pool throws (a damaged file,
    // PostgreSQL down or refusing the login).
    void check_health() const;
    // The schema version the database is at (the number of the last
    // migration applied; after opening, the newest this build knows).
    [[nodiscard]] int schema_version() const;
    // SQLite: a consistent copy of the database, taken while it serves
    // (the online backup API: one read snapshot, writers not blocked),
    // written to file.tmp, checked (PRAGMA quick_check) and renamed to
    // file. Errors: "store.backup" naming the file (exists already, cannot
    // be written, the copy fails its check); "store.unsupported" on
    // PostgreSQL, whose backups are pg_dump's (the message says how).
    void backup_to(const std::filesystem::path& file) const;
    // WAL checkpoints completed by the background thread
    // (store_options::background_checkpoints); 0 without one.
    [[nodiscard]] std::uint64_t background_checkpoints() const noexcept;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
