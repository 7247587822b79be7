// Phase 10a of `perfgate run` (cli/cmd_run.cpp): what the stored
// qualifications of the run's testbed say of the report's benchmarks
// (perfgate qualify --server/--db; docs/report.md "qualification" and
// "advice"), read from the run's server or store after the verdict and put
// in the report for its renderers (the PR comment's header line, advice).
#pragma once

#include <string>

#include "cli/target.hpp"
#include "gate/report.hpp"

namespace perfgate::cli {

// Reads the newest qualifications of testbed `fingerprint` from where
// (GET .../qualifications?testbed=FP, or the local store) and attaches
// them to r (report::attach_qualifications). Fails soft, as advice must:
// none stored, or a server without the route (404), leaves r as it was and
// returns ""; any other failure (a malformed answer, a server error, an
// unreadable store) leaves r as it was and returns one warning line to
// print. Never throws perfgate::error, never changes r's verdicts.
std::string add_qualification(target& where, const std::string& fingerprint, gate::report& r);

} // namespace perfgate::cli
