#include "service/text.hpp"

#include <fmt/format.h>

#include "model/utf8.hpp"

namespace perfgate::service {

void check_stored_text(error_id id, std::string_view field, std::string_view value, text_kind kind)
{
    const bool multiline = kind == text_kind::multiline;
    if (const auto fault = model::find_text_fault(value, multiline)) {
        throw error(id, fmt::format("field '{}': {}{}", field, model::describe(*fault),
                                    multiline && !fault->invalid_utf8 ? " (newlines and tabs are)" : ""));
    }
}

std::string_view utf8_prefix(std::string_view value, std::size_t max_bytes)
{
    return model::utf8_prefix(value, max_bytes);
}

} // namespace perfgate::service
