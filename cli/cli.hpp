// Command-line parsing shared by perfgate's subcommands: each command is one
// declarative table (command_spec) from which parsing, --help, environment
// fallbacks and mutually exclusive options all follow, defined once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/exit_code.hpp"

namespace perfgate::cli {

using argv_t = std::vector<std::string>;

struct option_spec {
    std::string name;    // long name without dashes: "baseline"
    char short_name = 0; // 'r' for -r, 0 for none
    bool takes_value = false;
    bool repeatable = false;
    std::string value_name; // "FILE", shown in help
    std::string help;
    std::string env = {};                   // environment variable read when the option is not given ("PERFGATE_TOKEN")
    std::vector<std::string> excludes = {}; // options that cannot be given together with this one
    bool hidden = false;                    // for tests and bench/: parsed, not shown in --help
    std::string group = {};                 // heading in --help and the man page ("Measurement"); "" for "Options"
};

// Gives each of `options` the heading `group`, for a command whose --help
// lists its options under headings (perfgate run).
std::vector<option_spec> option_group(const std::string& group, std::vector<option_spec> options);

struct command_spec {
    std::string name;                 // "run"
    std::string synopsis;             // after "Usage: perfgate run "
    std::string description;          // a paragraph; exit codes where they differ from the common ones
    std::vector<option_spec> options; // -h/--help is added by parse_command
};

// Parsed command line: --name VALUE, --name=VALUE, -r VALUE, -r5, flags, and
// everything after "--" as positional().
class parsed_args {
public:
    [[nodiscard]] bool has(std::string_view name) const;
    [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
    [[nodiscard]] std::vector<std::string> all(std::string_view name) const;
    // Value as a number; error "usage.bad_value" naming the option otherwise.
    [[nodiscard]] std::optional<long long> get_int(std::string_view name, long long min, long long max) const;
    [[nodiscard]] std::optional<double> get_double(std::string_view name) const;
    // A value that must be one of `choices`; "usage.bad_value" listing them.
    [[nodiscard]] std::optional<std::string> get_choice(std::string_view name,
                                                        const std::vector<std::string_view>& choices) const;
    // The value of a required option; "usage.missing_option" naming it.
    [[nodiscard]] std::string required(std::string_view name) const;
    [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }
    [[nodiscard]] const std::string& command() const { return command_; }

    std::string command_;
    std::map<std::string, std::vector<std::string>, std::less<>> values_;
    std::vector<std::string> positional_;
};

// Parses argv against spec. Options not given fall back to their `env`
// variable (when set and non-empty). Errors (perfgate::error, naming the
// option): "usage.unknown_option", "usage.missing_value",
// "usage.unexpected_value", "usage.repeated_option", "usage.conflict" (two
// options that exclude each other). With -h/--help, prints usage_text to
// stdout and returns nullopt: the command then exits 0.
std::optional<parsed_args> parse_args(const command_spec& spec, const argv_t& argv);

// "Usage: perfgate <command> ...", the description, then one line per option
// under its group's heading, groups in the order they first appear
// (options without a group under "Options:", with -h/--help).
std::string usage_text(const command_spec& spec);

// The option groups of `spec` in the order --help lists them: each heading
// once ("" for options without one) with its non-hidden options. -h/--help
// is the last option of the group without a heading, a last group of its own
// when every option has a heading. The man page lists the same.
struct option_group_view {
    std::string heading; // "" -> "Options"
    std::vector<const option_spec*> options;
};
std::vector<option_group_view> visible_option_groups(const command_spec& spec);

// The help line of an option with its [env VAR] and [not with --x] notes.
std::string option_help(const option_spec& s);

// "usage.unexpected_argument" unless there are no positional arguments.
void no_positional(const parsed_args& args);

} // namespace perfgate::cli
