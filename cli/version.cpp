#include "cli/version.hpp"

#include "cli/version_info.hpp" // generated in the build directory

namespace perfgate::cli {

std::string_view version() { return PERFGATE_VERSION; }

std::string_view git_describe() { return PERFGATE_GIT_DESCRIBE; }

std::string version_line() { return "perfgate " + std::string(version()) + " (" + std::string(git_describe()) + ")"; }

} // namespace perfgate::cli
