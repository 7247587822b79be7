// The exit codes of the CLI contract (docs/cli.md, "Exit codes"). Users' CI
// scripts depend on these; every command goes through exit_code_for, so the
// same failure is the same code whichever command met it.
#pragma once

#include <string_view>

namespace perfgate {

enum exit_code : int {
    exit_pass = 0,         // pass (improvements and warnings included)
    exit_regression = 1,   // a gated counter regressed
    exit_usage = 2,        // usage or input error (incl. a token the server refuses)
    exit_inconclusive = 3, // inconclusive, with --fail-on-inconclusive
    exit_measurement = 4,  // measurement/environment failure, server unreachable or failing
};

// The exit code for a perfgate::error id, from the error catalogue
// (model/error_catalogue.hpp, docs/errors.md):
//   2: the user's to fix: "usage.*", "input.*", "policy.*", "ingest.*",
//      "compare.*", "accept.*", "query.*", "alert.*", and, met on the way to a server,
//      "http.bad_url" (a malformed --server URL), "server.auth" (401/403: a
//      missing, wrong or foreign token) and "server.rejected" (any other
//      4xx: the server refused what we sent);
//   4: the environment's: everything else ("http.unreachable", "server.failed"
//      for 5xx, "server.bad_response", "measure.*", "env.*", "store.*",
//      "profile.*", "github.*", "io.stdout", ...), and any id the catalogue
//      does not have.
int exit_code_for(std::string_view error_id);

} // namespace perfgate
