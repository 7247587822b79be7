// perfgate: the command-line entry point. Dispatches to the subcommands and
// maps errors to the exit codes of the CLI contract (docs/cli.md "Exit codes").
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/version.hpp"
#include "model/error.hpp"

namespace {

// Runs one subcommand; throws what it throws.
int dispatch(std::string_view command, const perfgate::cli::argv_t& args)
{
    using namespace perfgate::cli;
    if (const auto* c = find_command(command)) return c->run(args);
    print_error(fmt::format("perfgate: unknown command '{}'\n\n{}", command, perfgate::cli::top_usage()));
    return perfgate::exit_usage;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace perfgate;
    using namespace perfgate::cli;
    if (argc < 2) {
        std::fputs(top_usage().c_str(), stderr);
        return exit_usage;
    }
    const std::string_view command = argv[1];
    const argv_t args(argv + 2, argv + argc);
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(top_usage().c_str(), stdout);
        return exit_pass;
    }
    if (command == "--version") {
        std::puts(version_line().c_str());
        return exit_pass;
    }
    int code = exit_pass;
    try {
        code = dispatch(command, args);
        // Whatever the command printed (a report, a token) must have reached stdout.
        finish_stdout();
    } catch (const perfgate::error& e) {
        print_error(fmt::format("perfgate {}: error [{}]: {}\n", command, e.id(), e.what()));
        // A lost report outranks the verdict: io.stdout is exit 4 (the catalogue).
        code = exit_code_for(e.id());
    } catch (const std::exception& e) {
        print_error(fmt::format("perfgate {}: internal error: {}\n", command, e.what()));
        code = exit_measurement;
    }
    return code;
}
