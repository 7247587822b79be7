#include "model/exit_code.hpp"

#include "model/error_catalogue.hpp"

namespace perfgate {

int exit_code_for(std::string_view id)
{
    const error_entry* e = find_error(id);
    return e ? e->exit : unknown_error_exit;
}

} // namespace perfgate
