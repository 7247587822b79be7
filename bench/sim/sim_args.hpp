// Command-line arguments of the Monte-Carlo simulations (sim_gate,
// sim_change_points): `[trials] [seed]`, both positive integers.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace perfgate::bench {

inline bool parse_count(std::string_view text, std::uint64_t& out)
{
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out > 0;
}

// Reads argv[1] into trials and argv[2] into seed when given (the defaults
// stay otherwise); false for more arguments or one that is not a positive
// integer.
inline bool parse_trials_seed(int argc, char** argv, std::uint64_t& trials, std::uint64_t& seed)
{
    return argc <= 3 && (argc <= 1 || parse_count(argv[1], trials)) && (argc <= 2 || parse_count(argv[2], seed));
}

} // namespace perfgate::bench
