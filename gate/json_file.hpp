// Where in a JSON file nlohmann::json::parse gave up, for messages that name
// the file and line (policy files, run configs). Besides malformed JSON
// (parse_error, with a byte offset) parse throws out_of_range for a number
// beyond double range ("1e400"): an input error like any other (issue 31,
// finding 11), found by the number's text.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfgate::gate {

// The 1-based line of text where e happened (1 when it cannot be told).
std::size_t json_error_line(std::string_view text, const nlohmann::json::exception& e);

} // namespace perfgate::gate
