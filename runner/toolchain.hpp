// The toolchain key of a benchmark's program (docs/history.md "Toolchain
// key"): what a deterministic backend's count depends on besides the
// source, so that a stored run of a commit is reused as a later baseline
// (perfgate run --baseline-source server) only when the compiler and its
// flags are the same.
//
// Derived from the executable when it is an ELF file:
//   - its `.comment` section: the compiler identification strings every
//     object file contributes ("GCC: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
//     "Ubuntu clang version 14.0.0-1ubuntu1.1");
//   - when built with -g, the DWARF producer strings in `.debug_str`
//     ("GNU C++20 11.4.0 -mtune=generic -march=x86-64 -g -O2": gcc records
//     the flags, -grecord-gcc-switches being its default; clang records
//     them only with -grecord-command-line). Recognised by their shape: a
//     string starting "GNU <language> <digit>" or holding "clang version ".
// The key is readable and exact: the first identification string (cut to
// toolchain_label_bytes) then " #" and the first 16 hex digits of the
// SHA-256 of every string found, sorted and without repeats. A change of
// compiler version or of a recorded flag changes it.
//
// No key (nullopt): the command runs through /bin/sh (shell syntax), the
// executable cannot be found or read, is not ELF (a script), or has
// neither section (stripped with -R .comment and without -g). A run
// without a key is never reused; `perfgate run --toolchain TEXT` names one.
//
// Limits: only the benchmark's executable is read, not the shared
// libraries it loads (a changed libstdc++ with the same compiler keeps the
// key; name it with --toolchain when it matters); compressed debug sections
// (SHF_COMPRESSED) are not read. Reads at most max_toolchain_scan_bytes of
// each section.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::runner {

struct benchmark_spec;

inline constexpr std::size_t toolchain_label_bytes = 160;
// Largest section read: a -g build of a large program has tens of MB of
// .debug_str; its producer strings are a few hundred bytes among them.
inline constexpr std::size_t max_toolchain_scan_bytes = std::size_t{64} << 20;
// What --toolchain and the store accept (016_run_toolchains.sql).
inline constexpr std::size_t max_toolchain_bytes = 256;

// The identification strings of an ELF file (`.comment`, then the DWARF
// producers), without repeats, in file order; empty when it is not ELF or
// has none. Errors: none (an unreadable file has none).
std::vector<std::string> toolchain_strings(const std::filesystem::path& elf);

// The key of the strings (see above); nullopt when there are none.
std::optional<std::string> toolchain_key_of(const std::vector<std::string>& strings);

// The key of the program a command executes: argv[0] found as execvp finds
// it (relative to cwd when it has a '/'), nullopt for a /bin/sh -c command
// and the other cases above.
std::optional<std::string> toolchain_key(const std::vector<std::string>& argv,
                                         const std::optional<std::filesystem::path>& cwd);

} // namespace perfgate::runner
