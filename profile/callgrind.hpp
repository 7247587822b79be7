// Callgrind output -> per-function exclusive (self) and inclusive costs.
//
// Reads the Callgrind Format, version 1 (valgrind manual, "Callgrind Format
// Specification"), as callgrind writes it and callgrind_annotate reads it:
// header lines (version:, creator:, cmd:, positions:, events:, summary:,
// totals:; other "key: value" lines are ignored), name compression
// ("(id) name" defines, "(id)" refers; files, functions and objects are three
// id spaces), ob=/fl=/fi=/fe=/fn=, calls with cob=/cfi=/cfl=/cfn=/calls=,
// subposition compression ("+N", "-N", "*") and jump lines (ignored).
//
// Semantics, the same as callgrind_annotate's:
// - A function is identified by (object, file, name). Its file is the file
//   current when its fn= line is read (fl=, or a fi=/fe= before it: callgrind
//   only writes fl= when the file changes). fi=/fe= inside a function change
//   the file of the following cost lines (inlined code) but not the function:
//   their cost stays the function's self cost.
// - The cost line after a calls= line is the inclusive cost of that call: it
//   is added to the caller's inclusive cost, never to its self cost.
// - inclusive = self + the cost of calls to *other* functions. A direct
//   recursive call (callee == caller) is skipped: its cost is already in the
//   caller's self and outgoing calls. Mutual recursion (f -> g -> f) is
//   counted once per level, as callgrind_annotate does (KCachegrind detects
//   cycles; we do not).
// - Names written mangled (callgrind --demangle=no) are demangled with
//   abi::__cxa_demangle; names that do not demangle are kept as written.
//
// Errors: perfgate::error "profile.bad_callgrind" with "SOURCE:LINE: what"
// for corrupt input (an unknown line, a bad number, an undefined name id, a
// cost line before fn=, more costs than events, a limit exceeded, no events:
// line); "profile.unreadable" when the file cannot be read;
// "profile.too_large" when read_callgrind's file exceeds max_file_bytes.
//
// Cost: one pass, O(bytes); memory O(functions + distinct names). Not
// thread-safe per call only in the trivial sense: no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::profile {

// Limits on what one callgrind file may contain. The defaults are far above
// what callgrind writes for real programs (a large C++ binary has ~100k
// functions; a demangled template name a few KB) and stop a corrupt or
// hostile file before it eats the memory.
struct callgrind_limits {
    std::size_t max_file_bytes = 1024u * 1024 * 1024; // read_callgrind only
    std::size_t max_line_bytes = 1024u * 1024;        // one line, newline excluded
    std::size_t max_functions = 2'000'000;            // distinct (object, file, name)
    std::size_t max_names = 4'000'000;                // distinct compressed names, all id spaces
    std::size_t max_events = 64;                      // callgrind with every simulation writes ~15
};

struct function_cost {
    std::string name; // demangled
    std::string file; // "???" when callgrind had no debug info
    // The file holding most of its self cost of the first event: where its
    // code is written, when `file` is a header inlined at its first
    // instruction (callgrind's fl= of a function is that instruction's).
    std::string main_file;
    std::string object;                   // the ob= path; empty when the file has none
    std::vector<std::uint64_t> self;      // one per event, exclusive cost
    std::vector<std::uint64_t> inclusive; // one per event, self + calls to other functions
    std::uint64_t calls = 0;              // how often it was called (sum of calls= into it)
};

struct callgrind_profile {
    std::string creator;             // "callgrind-3.19.0"; empty when absent
    std::string command;             // cmd:
    std::vector<std::string> events; // events:, in file order ("Ir", ...)
    // summary: (or totals: when there is no summary:), else the sum of all
    // self costs.
    std::vector<std::uint64_t> totals;
    // Sorted by (name, file, object); names may repeat across objects/files.
    std::vector<function_cost> functions;

    // Index of the event in `events`, or nullopt.
    [[nodiscard]] std::optional<std::size_t> event_index(std::string_view event) const;
    // The first function with this name (see the order above), or nullptr.
    [[nodiscard]] const function_cost* find(std::string_view name) const;
};

// Parses callgrind output held in `text`; `source` names it in errors.
callgrind_profile parse_callgrind(std::string_view text, std::string_view source, const callgrind_limits& limits = {});

// Reads and parses a callgrind output file (at most limits.max_file_bytes).
callgrind_profile read_callgrind(const std::filesystem::path& path, const callgrind_limits& limits = {});

// The demangled form of a C++ symbol ("_ZN3foo3barEv" -> "foo::bar()"); any
// other string (already demangled, C names, "0x00001090") unchanged.
std::string demangle(std::string_view name);

} // namespace perfgate::profile
