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

// What a gate's report carries of the stored qualifications (JSON
// "qualification", docs/report.md): the newest qualification of the run's
// testbed for each benchmark of the report that has one, in the report's
// order, each with only the counters that report gates. Never part of the
// verdict.
struct testbed_qualifications {
    std::string testbed_fingerprint;
    std::vector<qualification> benchmarks; // not empty when the report has one
};

// The report header's line (docs/github.md "The testbed's qualification"),
// for a report of `compared` benchmarks; "" when q names no counter.
// One benchmark: "this testbed detects >= 10% of task-clock (qualified
// 2026-11-28)", several counters joined by ", ". A suite (compared >= 2):
// "3 of 40 benchmarks qualified: this testbed detects >= 12% of task-clock
// (worst: BM_Foo) (qualified 2026-11-20 to 2026-11-28)": per counter the
// largest 80% figure over the qualified benchmarks, the benchmark it is
// from, and "caught no slowdown of C in 80% of gates (BM_Bar)" when one
// benchmark's qualification caught none.
std::string qualification_line(const testbed_qualifications& q, std::size_t compared);

// Advice in the report (JSON "advice", docs/report.md): a counter that the
// gate gates at threshold_pct while its stored qualification says this
// testbed catches only larger slowdowns in 80% of gates (or none tried).
struct qualification_advice {
    std::string benchmark, counter;
    double threshold_pct = 0;             // the report's threshold on the counter
    std::optional<double> detectable_pct; // the qualification's 80% figure; nullopt: none tried was caught
    std::int64_t qualified_at = 0;        // unix seconds
    std::string message;                  // one sentence, naming counter, benchmark, figure, date and threshold
};
// The advice for counter c of q gated at threshold_pct; nullopt when the
// qualification says the gate reaches it (deterministic, or a detects_80_pct
// at or below threshold_pct). A qualification made at another threshold
// than threshold_pct says so in the message: its figures are a gate's at
// c.threshold_pct.
std::optional<qualification_advice> advice_for(const qualification& q, const qualified_counter& c,
                                               double threshold_pct);

} // namespace perfgate::model
