// The identity of the machine a run was measured on.
//
// Runs are only comparable with history from the same testbed, so each run
// carries a testbed_info whose fingerprint is a stable hash of what makes
// the numbers differ: CPU model, core count, kernel release and name.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "schema/store.hpp"

namespace perfgate::runner {

// Describes this machine: CPU model from /proc/cpuinfo ("model name", or
// "Hardware"/"Processor" on ARM; "unknown" if absent), cores = online CPUs
// (sysfs cpu/online, else std::thread::hardware_concurrency), kernel =
// uname -r, name = the given name or else the hostname. The fingerprint is
// testbed_fingerprint() of those. Never throws for missing files.
store::testbed_info detect_testbed(std::optional<std::string> name = {});

// Same, reading cpuinfo and sysfs below the given roots (tests).
store::testbed_info detect_testbed(std::optional<std::string> name, const std::filesystem::path& sys_root,
                                   const std::filesystem::path& proc_root);

// First 16 hex digits (64 bits) of SHA-256("cpu|cores|kernel|name"): stable
// across runs and hosts, short enough to type in ?testbed=. Error
// "env.crypto" if OpenSSL fails.
std::string testbed_fingerprint(const store::testbed_info& testbed);

} // namespace perfgate::runner
