// z-scores of a new value against a history of values.
#pragma once

#include <optional>
#include <span>

namespace perfgate::stats {

// (x - mean(h)) / stddev(h). nullopt when h.size() < 2 or stddev == 0.
std::optional<double> z_score(double x, std::span<const double> history);

// (x - median(h)) / (1.4826 * MAD(h)). nullopt when h is empty or MAD == 0.
std::optional<double> robust_z_score(double x, std::span<const double> history);

} // namespace perfgate::stats
