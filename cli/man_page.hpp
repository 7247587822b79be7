// The man page perfgate(1), generated from the command tables
// (cli/commands.hpp) so that it lists exactly what --help lists: the build
// writes it with cli/gen_man_page.cpp and `cmake --install` installs it.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "cli/commands.hpp"

namespace perfgate::cli {

// The page in roff (man(7) macros): NAME, SYNOPSIS, DESCRIPTION, COMMANDS
// (each command's synopsis, description and options under their headings),
// EXIT STATUS, ENVIRONMENT (the options' env fields and the variables read
// in GitHub Actions), SEE ALSO. `version` goes in the page's footer.
std::string man_page(std::span<const command_entry> commands, std::string_view version);

// Text for roff: backslashes and hyphens escaped, a line that would start
// with a control character ('.' or '\'') guarded.
std::string roff_escape(std::string_view text);

} // namespace perfgate::cli
