// `perfgate check-env`: report how quiet and measurable this machine is.
#include <iostream>

#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/check_env.hpp"
#include "runner/cli.hpp"
#include "runner/commands.hpp"
#include "stats/error.hpp"

namespace perfgate::runner {

namespace {

const std::vector<option_spec>& check_env_options()
{
    static const std::vector<option_spec> specs = {
        {"cpus", 0, true, false, "LIST", "CPUs the benchmark will be pinned to, e.g. 2-3 (checks those CPUs)"},
        {"strict", 0, false, false, "", "exit 4 if any check warns"},
        {"format", 0, true, false, "text|json", "output format (default text)"},
        {"sys-root", 0, true, false, "DIR", "read sysfs below DIR instead of /sys (testing; env PERFGATE_SYSFS_ROOT)"},
        {"proc-root", 0, true, false, "DIR", "read procfs below DIR instead of /proc (testing; env PERFGATE_PROCFS_ROOT)"},
        {"perf", 0, true, false, "PATH", "perf binary to probe (default: perf from PATH)"},
        {"help", 'h', false, false, "", "show this help"},
    };
    return specs;
}

constexpr std::string_view description =
    "Checks the CPU frequency governor, turbo, SMT, isolated CPUs, affinity, load,\n"
    "ASLR, perf permissions and supported events, and virtualization. Each check is\n"
    "ok, warn (with a hint) or unknown (the information is not available here).\n"
    "Exit status: 0, or 4 with --strict when any check warns.";

} // namespace

int cmd_check_env(const argv_t& args)
{
    const auto& specs = check_env_options();
    auto parsed = parse_args("check-env", args, specs);
    if (parsed.has("help")) {
        std::cout << usage_text("check-env", "[--cpus LIST] [--strict] [--format text|json]", description, specs);
        return exit_pass;
    }
    if (!parsed.positional().empty()) {
        throw error("usage.unexpected_argument",
                    fmt::format("perfgate check-env: unexpected argument '{}'", parsed.positional().front()));
    }
    const std::string format = parsed.get("format").value_or("text");
    if (format != "text" && format != "json") {
        throw error("usage.bad_value", fmt::format("--format: expected text or json, got '{}'", format));
    }

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

} // namespace perfgate::runner
