// The benchmark list of `perfgate run --config FILE`, and how a command
// string becomes an argv.
//
// Config file (JSON): either a list of benchmarks or an object
//   {"backend": "memcheck",                     optional: as --backend (the command line wins)
//    "suppressions": ["third_party.supp"],      optional, memcheck only: as --suppressions (both are used);
//                                               relative to the config file's directory
//    "benchmarks": [...]}                       required in the object form
// Each benchmark:
//   [ { "name": "parse",                        required, unique, capture::validate_name's rules
//       "baseline": "./old/parse in.json",      string or array of strings
//       "candidate": ["./new/parse", "in.json"],
//       "cwd": "bench",                         optional; relative to the config file's directory
//       "env": {"OMP_NUM_THREADS": "1"},        optional, both sides
//       "baseline_env": {"srcdir": "old"},      optional, the baseline only (after "env": its value wins)
//       "candidate_env": {"srcdir": "new"},     optional, the candidate only
//       "repetitions": 20,                      optional, >= 1
//       "warmup": 2,                            optional, >= 0
//       "harness": "gbench",                    optional: baseline and candidate are google/benchmark binaries
//       "filter": "BM_Sort" } ]                 optional, with harness: --benchmark_filter
// Unknown keys, wrong types and missing fields are errors "input.bad_config"
// naming the file and the key (e.g. "bench.json: benchmarks[1].basline: unknown key"),
// and so is a name the store would refuse (capture/names.hpp): all of it is
// checked before anything is measured.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runner/measure.hpp"

namespace perfgate::runner {

// A command as the user wrote it on the command line or in a config string.
// Split on whitespace, honouring '...' and "..." quoting and backslash
// escapes, when that is all it uses; run as /bin/sh -c TEXT when it contains
// an unquoted shell metacharacter (| & ; < > ( ) $ ` * ? [ ] { } ~ # ! or a
// newline), a variable assignment before the command, or $ ` \ inside double
// quotes. An empty command, an unterminated quote or a control byte other
// than tab and newline (a NUL would cut an argv string short) is
// "input.bad_command"; the message shows control bytes as \xNN.
command parse_command(std::string_view text);

// A command given as a JSON array: exec'd directly, no shell. An empty
// argv[0] or any control byte is "input.bad_command".
command command_from_argv(std::vector<std::string> argv);

// A config file's contents.
struct run_config {
    std::vector<benchmark_spec> benchmarks;
    std::optional<backend> which;                    // "backend"
    std::vector<std::filesystem::path> suppressions; // "suppressions", absolute, each a regular file
};

run_config parse_config(const nlohmann::json& doc, std::string_view source, const std::filesystem::path& base_dir);

// Reads and parses a config file; unreadable or invalid JSON is
// "input.bad_config" naming the file (and nlohmann's byte position).
run_config load_config(const std::filesystem::path& path);

} // namespace perfgate::runner
