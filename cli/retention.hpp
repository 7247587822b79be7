// Retention on the command line: the ages of `perfgate db prune` and
// `perfgate project --retention` (cli/cmd_db_prune.cpp; what a prune keeps:
// store/prune.hpp, docs/history.md "Retention").
#pragma once

#include "cli/cli.hpp"
#include "store/prune.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace perfgate::cli {

// An age: a whole number followed by h (hours), d (days) or w (weeks), no
// sign, space or fraction ("12h", "90d", "2w"), between 1 day and 36,500
// days (store::prune_rules' bounds); its seconds. Anything else is
// "usage.bad_value" naming the option and the text.
std::int64_t parse_age(std::string_view option, const std::string& text);
// An age in seconds as parse_age reads it back: "90d", "2w", "36h".
std::string age_text(std::int64_t seconds);

// `perfgate db prune`, its options parsed by cmd_db.
int db_prune(const parsed_args& parsed);

} // namespace perfgate::cli
