// perfgate's version: project(VERSION) in the top-level CMakeLists.txt is the
// only place it is written; the build adds the commit it was configured from.
#pragma once

#include <string>
#include <string_view>

namespace perfgate::cli {

// "0.1.0"
[[nodiscard]] std::string_view version();

// `git describe --always --dirty --tags` of the source tree when CMake was
// configured ("v0.1.0-3-g1234abc", "1234abc-dirty"), or "unknown" when the
// sources are not a git checkout.
[[nodiscard]] std::string_view git_describe();

// What `perfgate --version` prints: "perfgate 0.1.0 (1234abc)".
[[nodiscard]] std::string version_line();

} // namespace perfgate::cli
