// The identity of the machine a run was measured on.
//
// Runs are only comparable with history from the same testbed, so each run
// carries a testbed_info whose fingerprint is a stable hash of what makes
// the numbers differ: CPU model, core count, kernel release and name.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "model/run.hpp"

namespace perfgate::runner {

// Describes this machine: CPU model from /proc/cpuinfo ("model name", or
// "Hardware"/"Processor" on ARM; "unknown" if absent), cores = online CPUs
// (sysfs cpu/online, else std::thread::hardware_concurrency), kernel =
// uname -r, name = the given name or else the hostname. The fingerprint is
// model::testbed_fingerprint() of those. Never throws for missing files.
model::testbed_info detect_testbed(std::optional<std::string> name = {});

// Same, reading cpuinfo and sysfs below the given roots (tests).
model::testbed_info detect_testbed(std::optional<std::string> name, const std::filesystem::path& sys_root,
                                   const std::filesystem::path& proc_root);

} // namespace perfgate::runner
