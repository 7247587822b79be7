// The one definition of a testbed's identity.
//
// Runs are only comparable with history from the same testbed, so every run
// carries a fingerprint: a stable hash of what makes the numbers differ (CPU
// model, core count, kernel release, name). `perfgate run` computes it when it
// detects the machine; the service computes the same one for an upload that
// sends the testbed's fields without a fingerprint, so the same machine is
// one testbed whichever client stored the run.
#pragma once

#include <string>

#include "model/run.hpp"

namespace perfgate::model {

// Hex digits kept of the SHA-256: 64 bits make an accidental collision among
// one organisation's testbeds vanishingly unlikely and stay short enough to
// type in ?testbed=.
inline constexpr std::size_t fingerprint_hex_digits = 16;

// The first 16 hex digits of SHA-256("cpu|cores|kernel|name"). Ignores
// t.fingerprint. Error "crypto.failed" if OpenSSL fails.
std::string testbed_fingerprint(const testbed_info& t);

// t.fingerprint when set, else testbed_fingerprint(t).
std::string fingerprint_of(const testbed_info& t);

} // namespace perfgate::model
