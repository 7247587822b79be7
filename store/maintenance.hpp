// Checks, sizes, backups and retention of the database
// (store::store::maintenance(); store/maintenance.cpp; schema_version:
// store/migrate.cpp; check_health and background_checkpoints:
// store/store.cpp; prune and reclaim_space: store/prune.cpp).
#pragma once

#include "store/prune.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

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

    // Retention (store/prune.hpp says what goes and what stays): prunes one
    // project (nullopt: every project) by rules. The runs to remove are
    // chosen in one read, then removed in write transactions of at most
    // prune_batch_runs runs each (a server's writes go on between them),
    // each checking again that none of its runs became one to keep (an
    // acceptance or a comparison made meanwhile). dry_run: chooses and
    // counts, changes nothing. Errors: "store.not_found" for an unknown
    // project; "store.constraint" for ages outside prune_rules' bounds or a
    // thin_after below older_than; "store.io".
    static constexpr std::size_t prune_batch_runs = 200;
    prune_report prune(const std::optional<std::string_view>& project, const prune_rules& rules, bool dry_run);
    // Gives the space of removed rows back. SQLite with auto_vacuum
    // INCREMENTAL (every file this perfgate creates): frees the free list's
    // pages in write transactions of at most 4 MiB each, then checkpoints
    // the WAL (passive: waiting for no reader), so the file shrinks; without it the pages stay on the free list,
    // reused by new rows, unless full_vacuum: VACUUM rewrites the file
    // (switching it to INCREMENTAL; it needs free disk space of the file's
    // size and holds the write lock meanwhile). PostgreSQL: a plain VACUUM
    // of the tables prune writes, so their free space is reused at once
    // (pg_repack or VACUUM FULL return it to the file system: not done
    // here, they lock or rewrite tables); full_vacuum is refused there
    // ("store.unsupported"). ":memory:" has nothing to give back.
    reclaim_report reclaim_space(bool full_vacuum = false);

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
