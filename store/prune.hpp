// Retention: what store::maintenance::prune removes and keeps, and what it
// reports (store/prune.cpp; docs/history.md "Retention").
//
// A prune removes the runs that feed no series (run_record::mainline false:
// pull requests' runs, push jobs' baselines, local candidates) created
// before now - older_than, with their samples, summaries, change points,
// comparisons (a comparison goes with either of its runs) and the
// comparisons' artifacts (flame graphs, attributions). With thin_after it
// also thins the runs that feed a series created before now - thin_after to
// one per UTC day per series (project, benchmark, testbed, branch): the
// day's last. Kept whatever their age:
// - runs an alert names (open or triaged), runs a stored change point
//   starts at, and (thinning) the series point just before each change point;
// - the runs of an accepted comparison, every run at its accepted head
//   commit, and the runs measured in one session with those;
// - runs that a comparison made after the cutoff refers to;
// - the newest keep_tail points of every series (never thinned: the history
//   watch re-detects over them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace perfgate::store {

// Ages are whole seconds; the CLI parses "90d", "12h", "2w".
struct prune_rules {
    // Bounds of older_than and thin_after (the projects table checks the
    // same): at least a day, so that a pull request job still comparing
    // never loses its runs; at most 100 years (36,500 days).
    static constexpr std::int64_t min_age_s = 86400;
    static constexpr std::int64_t max_age_s = 36500LL * 86400;
    // The history watch re-detects change points over a series' newest 150
    // points (service/watch.cpp, watch_tail): those are never thinned, so a
    // prune changes no change point the watch will find again.
    static constexpr std::int64_t default_keep_tail = 150;

    std::int64_t older_than_s = 90 * 86400;
    std::optional<std::int64_t> thin_after_s; // >= older_than_s
    std::int64_t keep_tail = default_keep_tail;
    // The time ages count back from (unix seconds); 0: the clock.
    std::int64_t now = 0;
};

// Rows of one kind that a prune removes (or would), and their bytes: the
// stored values' payload (text and blobs in bytes, uncompressed; 8 per
// number), the same measure on both engines. The file shrinks by about
// that plus the rows' index entries once the space is given back.
struct prune_tally {
    std::int64_t rows = 0;
    std::int64_t bytes = 0;
};

struct prune_counts {
    prune_tally runs;         // all removed runs, thinned ones included
    std::int64_t thinned = 0; // of which runs that fed a series
    prune_tally samples;
    prune_tally summaries;
    prune_tally change_points;
    prune_tally comparisons;
    prune_tally flame_graphs;
    prune_tally attributions;
    prune_tally ingest_keys;
    [[nodiscard]] std::int64_t bytes() const noexcept
    {
        return runs.bytes + samples.bytes + summaries.bytes + change_points.bytes + comparisons.bytes +
               flame_graphs.bytes + attributions.bytes + ingest_keys.bytes;
    }
};

struct prune_report {
    std::vector<std::string> projects; // the projects pruned, in name order
    prune_counts removed;              // dry run: what would be removed
    bool dry_run = false;
};

// What giving the space back did (maintenance::reclaim_space).
struct reclaim_report {
    std::int64_t size_before = 0; // maintenance::size_bytes, before and after
    std::int64_t size_after = 0;
    // SQLite: pages on the free list before, and whether the file frees them
    // itself (auto_vacuum INCREMENTAL) or keeps them for reuse until a VACUUM.
    std::int64_t free_pages_before = 0;
    bool incremental = false;
    bool vacuumed = false; // a full VACUUM ran (reclaim_space(true))
};

// A project's retention as stored (022_retention.sql): nullopt older_than
// means none (the server prunes nothing of it).
struct retention_settings {
    std::optional<std::int64_t> older_than_s;
    std::optional<std::int64_t> thin_after_s;
};

} // namespace perfgate::store
