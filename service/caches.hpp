// The service's in-memory caches (internal to service/): recent reports by
// request key, runs loaded for compares, and baseline history points. Each
// is bounded in bytes (service.hpp: *_cache_bytes) and safe without
// invalidation for the reason its comment gives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/samples.hpp"
#include "service/lru_cache.hpp"
#include "service/service_impl.hpp"
#include "store/comparisons.hpp"

namespace perfgate::service {

// The repeated-compare path without SQLite and without parsing the stored
// JSON: recent reports by request key, in memory. Safe because a stored
// comparison never changes (no API updates or deletes one) and its id is
// fixed. A miss falls back to store::comparisons::find, so several processes
// on one database still agree.
//
// Bounded in bytes, not entries: a report is ~750 bytes of JSON per counter,
// so one report ranges from 1 KB to ~3 MB (max_compare_counters), and 128
// entries of the largest kind once held 137 MB. An entry is charged its JSON
// text plus an estimate of the in-memory report (bytes_of()).
struct detail::service_impl::comparison_cache {
    lru_cache<comparison> lru{comparison_cache_bytes, comparison_cache_max_entry_bytes};

    std::optional<comparison> find(const std::string& project, const std::string& key)
    {
        const auto hit = lru.find(cache_key({project, key}));
        if (!hit) return std::nullopt;
        return *hit;
    }
    // A copy of c, kept (a report found in the store).
    void add(const std::string& project, const std::string& key, const comparison& c)
    {
        const std::size_t cost = bytes_of(c);
        if (cost > comparison_cache_max_entry_bytes) return; // before copying the report
        lru.add(cache_key({project, key}), std::make_shared<const comparison>(c), cost);
    }
    // c itself, kept and shared with the caller: a fresh report is not
    // copied (a copy of a report of 13 counters was 1% of a fresh compare's
    // CPU, issue 47).
    std::shared_ptr<const comparison> keep(const std::string& project, const std::string& key, comparison c)
    {
        const std::size_t cost = bytes_of(c);
        auto kept = std::make_shared<const comparison>(std::move(c));
        if (cost <= comparison_cache_max_entry_bytes) lru.add(cache_key({project, key}), kept, cost);
        return kept;
    }

    // What an entry holds: the JSON text, and the report's vectors and
    // strings (their allocations, not exact heap overhead).
    static std::size_t bytes_of(const comparison& c);
};

// A run as a compare uses it: the stored record (for the limits and the
// history's series) and its samples with the derived counters.
struct detail::service_impl::loaded_run {
    model::run_record run;
    capture::benchmark_samples samples;

    // Its vectors' and strings' allocations (not exact heap overhead).
    [[nodiscard]] std::size_t bytes() const;
};

// Safe without invalidation: runs are immutable and never deleted (no API
// updates or removes one), so a cached run is what the store holds.
struct detail::service_impl::run_cache {
    lru_cache<loaded_run> lru{run_cache_bytes, run_cache_max_entry_bytes};
};

// Safe without invalidation: the history points of a compare's series are
// those older than its stored candidate, which never change.
struct detail::service_impl::history_cache {
    lru_cache<std::vector<std::vector<model::history_point>>> lru{history_cache_bytes, history_cache_max_entry_bytes};
};

// A fresh report, computed and serialised, waiting to be stored (compare,
// compare_later).
struct detail::service_impl::pending_comparison {
    comparison out;        // without its id
    std::size_t id_at = 0; // where the id goes in the stored text (row.report_json)
    store::comparison_row row;
};

} // namespace perfgate::service
