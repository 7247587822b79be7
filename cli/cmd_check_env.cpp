// `perfgate check-env`: report how quiet and measurable this machine is.
#include <iostream>

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "runner/check_env.hpp"

namespace perfgate::cli {

using namespace perfgate::runner;

namespace {

const command_spec check_env_command{
    "check-env",
    "[--cpus LIST] [--strict] [--format text|json]",
    "Checks the CPU frequency governor, turbo, SMT, isolated CPUs, affinity, load,\n"
    "ASLR, perf permissions and supported events, and virtualization. Each check is\n"
    "ok, warn (with a hint) or unknown (the information is not available here).\n"
    "Exit status: 0, or 4 with --strict when any check warns.",
    {
        {"cpus", 0, true, false, "LIST", "CPUs the benchmark will be pinned to, e.g. 2-3 (checks those CPUs)"},
        {"strict", 0, false, false, "", "exit 4 if any check warns"},
        {"format", 0, true, false, "text|json", "output format (default text)"},
        {"sys-root", 0, true, false, "DIR", "read sysfs below DIR instead of /sys (testing; env PERFGATE_SYSFS_ROOT)"},
        {"proc-root", 0, true, false, "DIR",
         "read procfs below DIR instead of /proc (testing; env PERFGATE_PROCFS_ROOT)"},
        {"perf", 0, true, false, "PATH", "perf binary to probe (default: perf from PATH)"},
    },
};

} // namespace

const command_spec& check_env_spec() { return check_env_command; }

int cmd_check_env(const argv_t& argv)
{
    const auto args = parse_args(check_env_command, argv);
    if (!args) return exit_pass;
    const parsed_args& parsed = *args;
    no_positional(parsed);
    const std::string format = parsed.get_choice("format", {"text", "json"}).value_or("text");

    env_options options = default_env_options();
    if (auto cpus = parsed.get("cpus")) options.cpus = parse_cpu_list(*cpus);
    if (auto root = parsed.get("sys-root")) options.sys_root = *root;
    if (auto root = parsed.get("proc-root")) options.proc_root = *root;
    if (auto perf = parsed.get("perf")) options.perf_binary = *perf;

    const auto checks = check_environment(options);
    if (format == "json") {
        std::cout << to_json(checks).dump(2) << '\n';
    } else {
        // Colour only for a person at a terminal; NO_COLOR (no-color.org) opts out.
        const bool colour = ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
        std::cout << render_text(checks, colour);
    }
    std::cout.flush();
    return parsed.has("strict") && any_warning(checks) ? exit_measurement : exit_pass;
}

} // namespace perfgate::cli
