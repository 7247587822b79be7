// The report's qualification facts (docs/report.md "qualification" and
// "advice"): what the stored qualifications of the run's testbed (perfgate
// qualify --server/--db, model/qualification.hpp) say of the report's
// benchmarks and gated counters. The gate fetches them after its verdict
// (cli/cmd_run.cpp); the renderers show the header's line and the advice.
// Never part of the verdict.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/report.hpp"
#include "model/qualification.hpp"

namespace perfgate::report {

// Sets r.qualification and r.advice from `stored` (qualifications of any
// testbed and benchmark, e.g. GET .../qualifications): the newest of testbed
// `fingerprint` for each benchmark of r (by qualified_at, then stored_at),
// keeping only the counters r gates in that benchmark; a qualification left
// with none is dropped. Advice (model::advice_for) for each such counter at
// its threshold in r. A counter whose figures are not finite numbers >= 0
// (threshold_pct > 0) is ignored: a malformed answer costs the line, never
// the gate. r's verdicts are not touched. Replaces what r had.
void attach_qualifications(gate::report& r, const std::string& fingerprint,
                           const std::vector<model::qualification>& stored);

// The JSON of r.qualification (with its derived "line", written and never
// read) and of r.advice, and their parse back from a report's JSON into r
// (report_from_json; absent or null members: none). A malformed member
// throws nlohmann::json's exception, which report_from_json reports.
nlohmann::json qualification_json(const model::testbed_qualifications& q, std::size_t compared);
nlohmann::json advice_json(const std::vector<model::qualification_advice>& advice);
void read_qualification(const nlohmann::json& report, gate::report& r);

} // namespace perfgate::report
