// Line-by-line reading of a profile's text, shared by the callgrind and
// perf script readers.
#pragma once

#include <string_view>

namespace perfgate::profile::detail {

// Removes the first line from text and returns it, without its '\n' (the
// last line may lack one).
inline std::string_view take_line(std::string_view& text)
{
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    return line;
}

} // namespace perfgate::profile::detail
