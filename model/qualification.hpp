// A stored qualification (perfgate qualify --server/--db, docs/cli.md
// "perfgate qualify", docs/http-api.md "Qualifications"): what a gate on one
// testbed (its fingerprint) sees of one benchmark, per gated counter.
// Shared by the store, the server's wire format, the dashboard and the
// report's header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/token_scope.hpp"

namespace perfgate::model {

// Limits of one qualification, checked by the service (400
// ingest.bad_field naming the field) and by the tables' CHECKs.
inline constexpr std::size_t max_qualified_counters = 64;        // counters per qualification
inline constexpr std::size_t max_qualification_text_bytes = 512; // fingerprint, testbed, benchmark, backend, counter

struct qualified_counter {
    std::string counter;
    double threshold_pct = 0; // the gate's threshold on this counter
    // The smallest injected slowdown (% of the counter's median) caught in
    // at least 80% (95%) of the qualification's gates; nullopt: none tried
    // was.
    std::optional<double> detects_80_pct, detects_95_pct;
    bool reaches_threshold = false; // gate::counter_qualification::reaches_threshold
    bool deterministic = false;     // callgrind: one execution per side is exact
};

struct qualification {
    std::int64_t id = 0; // the store's; 0 before it is stored
    std::string testbed_fingerprint, testbed, benchmark, backend;
    std::int64_t qualified_at = 0; // unix seconds: when qualify finished (its report's date)
    std::int64_t stored_at = 0;    // unix seconds
    std::vector<qualified_counter> counters;
    std::optional<token_ref> written_by; // the server token that stored it; nullopt: the CLI on a database
};

// "this testbed detects >= 5% of cycles (qualified 2026-11-28)": the
// dashboard's and the report header's line for one counter (the 80% figure,
// "cannot see ..." when no slowdown tried was caught).
std::string detects_line(const qualification& q, const qualified_counter& c);

} // namespace perfgate::model
