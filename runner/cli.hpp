// Command-line parsing shared by perfgate's subcommands, and the exit codes
// of the CLI contract (design.md §4).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::runner {

// Exit codes (design.md §4). Users' CI scripts depend on these.
enum exit_code : int {
    exit_pass = 0,           // pass (improvements and warnings included)
    exit_regression = 1,     // a gated counter regressed
    exit_usage = 2,          // usage or input error
    exit_inconclusive = 3,   // inconclusive, with --fail-on-inconclusive
    exit_measurement = 4,    // measurement/environment failure, server unreachable
};

// Maps a perfgate::error id to the exit code: "usage.*", "ingest.*",
// "policy.*", "input.*", "compare.*" -> 2; everything else -> 4.
int exit_code_for(std::string_view error_id);

struct option_spec {
    std::string name;         // long name without dashes: "baseline"
    char short_name = 0;      // 'r' for -r, 0 for none
    bool takes_value = false;
    bool repeatable = false;
    std::string value_name;   // "FILE", shown in help
    std::string help;
};

// Parsed command line: --name VALUE, --name=VALUE, -r VALUE, -r5, flags, and
// everything after "--" as rest(). Unknown options, a missing value, or a
// non-repeatable option given twice throw perfgate::error("usage.*") naming
// the option.
class parsed_args {
public:
    [[nodiscard]] bool has(std::string_view name) const;
    [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
    [[nodiscard]] std::vector<std::string> all(std::string_view name) const;
    // Value as a number; error "usage.bad_value" naming the option otherwise.
    [[nodiscard]] std::optional<long long> get_int(std::string_view name, long long min, long long max) const;
    [[nodiscard]] std::optional<double> get_double(std::string_view name) const;
    [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }

    std::map<std::string, std::vector<std::string>, std::less<>> values_;
    std::vector<std::string> positional_;
};

parsed_args parse_args(std::string_view command, const std::vector<std::string>& argv,
                       const std::vector<option_spec>& specs);

// "Usage: perfgate <command> ..." followed by one line per option.
std::string usage_text(std::string_view command, std::string_view synopsis,
                       std::string_view description, const std::vector<option_spec>& specs);

} // namespace perfgate::runner
