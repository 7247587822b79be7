// The --change-point-* options of `perfgate project` (a project's settings)
// and `perfgate serve` (the default for projects without settings): how
// the history watch detects change points (docs/history.md#detection-settings).
#pragma once

#include <vector>

#include "cli/cli.hpp"
#include "stats/change_points.hpp"
#include "store/projects.hpp"

namespace perfgate::cli {

// --change-point-method, --change-point-window, --change-point-max-p and
// --change-point-min-magnitude, for a command's option table.
std::vector<option_spec> change_point_option_specs(const std::string& whose);

// The options given, nullopt where not. "usage.bad_value" naming the
// option for an unknown method, a window outside [2, 1000000], a max-p
// outside (0, 1) or a min-magnitude that is negative or not finite.
store::change_point_settings change_point_flags(const parsed_args& args);

} // namespace perfgate::cli
