#include "model/testbed.hpp"

#include <fmt/format.h>

#include "model/digest.hpp"

namespace perfgate::model {

std::string testbed_fingerprint(const testbed_info& t)
{
    return sha256_hex(fmt::format("{}|{}|{}|{}", t.cpu, t.cores, t.kernel, t.name)).substr(0, fingerprint_hex_digits);
}

std::string fingerprint_of(const testbed_info& t)
{
    return t.fingerprint.empty() ? testbed_fingerprint(t) : t.fingerprint;
}

} // namespace perfgate::model
