// Where a regression came from, from the callgrind profiles `perfgate run
// --backend callgrind` kept (measure_options::keep_profiles): per regressed
// benchmark, the functions whose exclusive Ir changed most between the
// baseline and the candidate (issue 12), and the --artifacts files.
//
// Which benchmarks: those whose verdict is fail (a gated counter
// regressed). Parsing is one pass over files valgrind took far longer to
// write, so doing it for every benchmark would be cheap too; but a report
// says "where" only where there is a "what".
//
// Attribution never changes the verdict or the exit code: every failure
// (a corrupt or over-limit profile, a stripped binary, an unwritable
// artifacts directory) becomes a gate::attribution_error and a warning line.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gate/report.hpp"
#include "profile/callgrind.hpp"
#include "profile/diff.hpp"
#include "runner/measure.hpp"

namespace perfgate::runner {

// A side whose exclusive Ir lies mostly in functions callgrind could name
// only by their address ("0x0000000000401136") is a program without
// symbols: the diff of addresses of two builds names nothing.
inline constexpr double max_unnamed_share = 0.5;

struct attribution_options {
    std::size_t top = profile::default_top_functions; // --top N
    profile::callgrind_limits limits;
};

// One side's profiles (one file per process) read and summed.
struct side_profile {
    profile::cost_by_name costs; // exclusive Ir per function name, all files summed
    // The file of each name: the one of its costliest entry ("" when
    // callgrind had no debug info: "???").
    std::map<std::string, std::string, std::less<>> files;
    std::uint64_t total = 0;   // sum of costs
    std::uint64_t unnamed = 0; // the part in functions named only by an address
    std::string unnamed_example;
};

// Reads and sums the profiles of one side. Errors: the parser's
// ("profile.bad_callgrind", "profile.too_large", "profile.unreadable",
// "profile.unknown_event" for a file without Ir), and "attribution.no_profile"
// when `files` is empty.
side_profile read_side(const std::vector<std::filesystem::path>& files, const profile::callgrind_limits& limits);

// True for the names callgrind gives code without a symbol: "0x" and hex digits.
bool unnamed_function(std::string_view name);

// The callgrind attribution of one benchmark. Never throws for bad
// profiles: the result then has no callgrind part and an error (source
// "callgrind"). "attribution.stripped" when either side is mostly unnamed
// (max_unnamed_share).
gate::attribution callgrind_attribution(const std::vector<std::filesystem::path>& baseline,
                                        const std::vector<std::filesystem::path>& candidate,
                                        const attribution_options& opt = {});

// Fills attribution_info of every benchmark of `r` whose verdict is fail
// from the measurement of the same name (measured under callgrind with
// keep_profiles). Returns one warning line per attribution error.
std::vector<std::string> attribute_regressions(gate::report& r, const std::vector<benchmark_measurement>& measured,
                                               const attribution_options& opt = {});

// The directory of a benchmark's artifacts: DIR/<benchmark>, with the
// name's '/' (allowed in names: "BM_Sort/1024") and '%' percent-encoded, and
// a leading '.' too, so that every name is one directory inside DIR and no
// name ("..", "a/../..") leaves it.
std::filesystem::path artifact_dir(const std::filesystem::path& root, std::string_view benchmark);

// --artifacts DIR: for every benchmark with an attribution, writes
// DIR/<benchmark>/baseline.callgrind and candidate.callgrind (the first
// process's profile; children's as <side>.callgrind.<pid>, which
// callgrind_annotate and KCachegrind read alongside) and attribution.json
// (the report's attribution object with "benchmark"); under --backend
// memcheck, valgrind's raw files <side>.memcheck.<pid>.xml and
// <side>.dhat.<pid>.json instead of the callgrind files. Returns one warning
// line per failure; never throws.
std::vector<std::string> write_artifacts(const gate::report& r, const std::vector<benchmark_measurement>& measured,
                                         const std::filesystem::path& root);

} // namespace perfgate::runner
