#include "model/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace perfgate {

void check_failed(const char* expr, const char* file, int line) noexcept
{
    std::fprintf(stderr, "perfgate: internal check failed: %s (%s:%d)\n", expr, file, line);
    std::abort();
}

} // namespace perfgate
