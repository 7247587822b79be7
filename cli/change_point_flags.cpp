#include "cli/change_point_flags.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/error.hpp"
#include "service/service.hpp"

namespace perfgate::cli {

std::vector<option_spec> change_point_option_specs(const std::string& whose)
{
    return {
        {"change-point-method", 0, true, false, "perfgate|otava",
         "detection method for " + whose + " (default perfgate)"},
        {"change-point-window", 0, true, false, "N", "sliding window in points, >= 2 (default 50)"},
        {"change-point-max-p", 0, true, false, "P", "keep change points with p < P, 0 < P < 1 (default 0.001)"},
        {"change-point-min-magnitude", 0, true, false, "X",
         "keep changes whose relative size is above X, >= 0 (default 0)"},
    };
}

store::change_point_settings change_point_flags(const parsed_args& args)
{
    store::change_point_settings s;
    s.method = args.get_choice("change-point-method", {"perfgate", "otava"});
    if (auto w = args.get_int("change-point-window", 2, service::max_change_point_window)) s.window = *w;
    if (auto p = args.get_double("change-point-max-p")) {
        if (!(*p > 0 && *p < 1)) {
            throw error(errors::usage_bad_value, fmt::format("--change-point-max-p: expected 0 < P < 1, got {}", *p));
        }
        s.max_p = *p;
    }
    if (auto m = args.get_double("change-point-min-magnitude")) {
        if (!(*m >= 0) || !std::isfinite(*m)) {
            throw error(errors::usage_bad_value,
                        fmt::format("--change-point-min-magnitude: expected a finite number >= 0, got {}", *m));
        }
        s.min_magnitude = *m;
    }
    return s;
}

} // namespace perfgate::cli
