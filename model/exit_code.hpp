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

// The exit code for a perfgate::error id: the one its row in the error
// catalogue gives (model/error_catalogue.hpp), which is the only list of
// which id ends in which code; docs/errors.md shows it id by id. In short:
//   2 (exit_usage): the user's to fix: the command line, an input file, a
//      request the server refused (a missing, wrong or foreign token, a bad
//      field), a --server URL that does not parse;
//   4 (exit_measurement): the environment's: the machine, a measurement, the
//      store, GitHub, a server that cannot be reached or answers 5xx.
// An id the catalogue does not have is treated as a bug: 4.
// This comment says what the codes mean, not which ids have them: a new
// id's code is its catalogue row's, nothing here changes.
int exit_code_for(std::string_view error_id);

} // namespace perfgate
