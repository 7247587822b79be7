#include "gate/json_file.hpp"

#include <string>

namespace perfgate::gate {

std::size_t json_error_line(std::string_view text, const nlohmann::json::exception& e)
{
    std::size_t offset = std::string_view::npos;
    if (const auto* pe = dynamic_cast<const nlohmann::json::parse_error*>(&e)) {
        offset = pe->byte == 0 ? 0 : pe->byte - 1;
    } else {
        // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
        const std::string_view what = e.what();
        const auto open = what.find('\'');
        const auto close = open == std::string_view::npos ? open : what.find('\'', open + 1);
        if (close != std::string_view::npos && close > open + 1)
            offset = text.find(what.substr(open + 1, close - open - 1));
    }
    if (offset == std::string_view::npos) return 1;
    std::size_t line = 1;
    for (std::size_t i = 0; i < text.size() && i < offset; ++i) line += text[i] == '\n';
    return line;
}

} // namespace perfgate::gate
