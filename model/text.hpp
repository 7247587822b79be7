// Small text helpers shared by the parsers of perf output, sysfs and
// /proc files.
#pragma once

#include <string_view>

namespace perfgate::model {

// s without leading and trailing blanks (space, tab, CR, LF).
constexpr std::string_view trim(std::string_view s)
{
    constexpr std::string_view blanks = " \t\r\n";
    const auto first = s.find_first_not_of(blanks);
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(blanks) - first + 1);
}

} // namespace perfgate::model
