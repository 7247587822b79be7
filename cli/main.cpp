// perfgate: the command-line entry point. Dispatches to the subcommands and
// maps errors to the exit codes of the CLI contract (design.md §4).
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

constexpr std::string_view top_usage =
    "Usage: perfgate <command> [options]\n"
    "\n"
    "A performance-regression gate: measures a baseline and a candidate build with\n"
    "perf stat, compares them with rank statistics and answers pass / fail / inconclusive.\n"
    "\n"
    "Commands:\n"
    "  compare     compare two perf stat -x, outputs (offline gate)\n"
    "  run         measure baseline and candidate commands, store and gate them\n"
    "  check-env   check how quiet and measurable this machine is\n"
    "  serve       run the HTTP gate server\n"
    "  token       create API tokens (token create --db PATH --project P)\n"
    "  history     trend of a counter over stored runs\n"
    "  upload      upload existing perf stat outputs to a server or database\n"
    "  github      post a report to a GitHub pull request (comment, status, summary)\n"
    "  alerts      list and triage alerts: change points on the baseline branch\n"
    "  change-points  find change points in a series of numbers (offline)\n"
    "  project     show or set a project's settings (the watched baseline branch)\n"
    "  db          migrate a database's schema, back up a SQLite database\n"
    "\n"
    "Exit codes: 0 pass, 1 regression, 2 usage or input error, 3 inconclusive\n"
    "(with --fail-on-inconclusive), 4 measurement or environment failure.\n"
    "Run 'perfgate <command> --help' for a command's options.\n";

// Runs one subcommand; throws what it throws.
int dispatch(std::string_view command, const perfgate::cli::argv_t& args)
{
    using namespace perfgate::cli;
    if (command == "compare") return cmd_compare(args);
    if (command == "run") return cmd_run(args);
    if (command == "check-env") return cmd_check_env(args);
    if (command == "serve") return cmd_serve(args);
    if (command == "token") return cmd_token(args);
    if (command == "history") return cmd_history(args);
    if (command == "upload") return cmd_upload(args);
    if (command == "github") return cmd_github(args);
    if (command == "alerts") return cmd_alerts(args);
    if (command == "change-points") return cmd_change_points(args);
    if (command == "project") return cmd_project(args);
    if (command == "db") return cmd_db(args);
    print_error(fmt::format("perfgate: unknown command '{}'\n\n{}", command, top_usage));
    return perfgate::exit_usage;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace perfgate;
    using namespace perfgate::cli;
    if (argc < 2) {
        std::fputs(top_usage.data(), stderr);
        return exit_usage;
    }
    const std::string_view command = argv[1];
    const argv_t args(argv + 2, argv + argc);
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(top_usage.data(), stdout);
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
        // A lost report outranks the verdict: exit 4, not the verdict's code.
        code = e.id() == "io.stdout" ? exit_measurement : exit_code_for(e.id());
    } catch (const std::exception& e) {
        print_error(fmt::format("perfgate {}: internal error: {}\n", command, e.what()));
        code = exit_measurement;
    }
    return code;
}
