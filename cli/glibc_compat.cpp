// The portable build only (PERFGATE_PORTABLE, ci/release.sh): symbols that
// the static archives take from a glibc newer than the release supports.
//
// Debian 12's static libstdc++ (GCC 12) draws std::random_device's bits from
// arc4random, which glibc has since 2.36; the release's executables run on
// glibc 2.35 (Ubuntu 22.04). Defined in the executable, arc4random binds here
// at link time instead of to glibc: the same bits, from getrandom(2)
// (glibc 2.25, Linux 3.17). ci/release.sh fails if another symbol needs a
// glibc newer than 2.35.
#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" std::uint32_t arc4random() noexcept
{
    std::uint32_t value = 0;
    auto* bytes = reinterpret_cast<unsigned char*>(&value);
    std::size_t got = 0;
    while (got < sizeof value) {
        const ssize_t n = ::getrandom(bytes + got, sizeof value - got, 0);
        if (n > 0) {
            got += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EINTR) {
            std::abort(); // as glibc's arc4random: it has no way to fail
        }
    }
    return value;
}
