// `perf script` output -> folded stacks ("comm;main;f;g 12"), the input of
// flame graphs (Brendan Gregg's FlameGraph: stackcollapse-perf.pl).
//
// Reads perf script's default output of `perf record -g`: per sample a header
// line ("comm pid[/tid] [cpu] time: [period] event:"), then one frame per
// line, leaf first ("\t<addr> <symbol>+0x<offset> (<dso>)"), then a blank
// line. Like stackcollapse-perf.pl: the process name is the root frame,
// "+0x..." offsets are dropped, frames without a symbol stay "[unknown]".
// A ';' inside a symbol (the separator of the folded format) becomes ':'.
// Lines starting with '#' (perf script --header) are skipped.
//
// Errors: perfgate::error "profile.bad_perf_script" with "SOURCE:LINE: what"
// for a frame line outside a sample, an unparsable header, or a limit.
// Cost: one pass, O(bytes); memory O(distinct stacks) (plus the text, for
// fold_perf_script).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace perfgate::profile {

struct perf_script_options {
    // Count each sample's period (e.g. ns of cpu-clock) instead of 1.
    bool weight_by_period = false;
    // Limits: far above real profiles (perf's default max stack is 127
    // frames, kernel.perf_event_max_stack); they stop corrupt input.
    std::size_t max_line_bytes = 64u * 1024;
    std::size_t max_frames = 1024;      // frames of one sample
    std::size_t max_stacks = 4'000'000; // distinct folded stacks
};

struct folded_stacks {
    // "comm;root;...;leaf" -> samples (or summed periods); sorted.
    std::map<std::string, std::uint64_t, std::less<>> stacks;
    std::uint64_t samples = 0; // samples read (not weighted)
    std::uint64_t total = 0;   // sum of the counts in `stacks`
    // Samples (not weighted) whose leaf frame has no symbol although its
    // object is known ("[unknown] (/usr/bin/app)"), per object: the sign of
    // a stripped binary, whose functions perf cannot name.
    std::map<std::string, std::uint64_t, std::less<>> unsymbolized_leaves;
};

folded_stacks fold_perf_script(std::string_view text, std::string_view source, const perf_script_options& options = {});

// fold_perf_script of a file, read in chunks: memory O(distinct stacks), not
// O(file size) (a 1M-sample perf script is gigabytes). Messages name the
// file as `name` (default: the path). Errors also "profile.unreadable"
// ("NAME: cannot read: WHY").
folded_stacks read_perf_script(const std::filesystem::path& path, const perf_script_options& options = {},
                               std::string_view name = {});

// One "stack count" line per stack, in the map's (sorted) order: the format
// flamegraph.pl reads.
std::string format_folded(const folded_stacks& folded);

} // namespace perfgate::profile
