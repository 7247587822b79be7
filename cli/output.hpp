// Printing a report the way every subcommand does: the chosen format on
// stdout (colour only on a TTY and without NO_COLOR), optionally also to a
// file, and the verdict's exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gate/report.hpp"
#include "report/render.hpp"

namespace perfgate::cli {

enum class report_format { text, json, markdown, junit };

// "text" | "json" | "markdown"; anything else is "usage.bad_value".
report_format parse_format(std::string_view s);

// The report rendered in a format (text without colour).
std::string render(const gate::report& r, report_format format, const report::markdown_options& md = {});

// Prints to stdout and, with output_path, writes the same rendering (without
// colour) to that file. Unwritable file -> "input.unwritable".
void emit_report(const gate::report& r, report_format format, const std::optional<std::string>& output_path,
                 const report::markdown_options& md);

// A report JSON file (perfgate run/compare --format json) read back;
// anything else is "input.bad_report" naming the file.
gate::report load_report(const std::string& path);

// 0 pass, 1 fail, 3 inconclusive with fail_on_inconclusive (docs/cli.md "Exit codes").
int verdict_exit_code(gate::verdict v, bool fail_on_inconclusive);

// Unix seconds as "2026-11-22T02:11:05Z".
std::string iso_time(std::int64_t unix_seconds);

// Writes a message to stderr and never throws: a full disk or a closed
// stderr must not turn an answer into an abort (fmt::print would throw).
void print_error(std::string_view text) noexcept;

// Flushes stdout; "io.stdout" (exit 4) when anything written to it was lost,
// e.g. a report written to a full disk: a verdict nobody can read is not a pass.
void finish_stdout();

} // namespace perfgate::cli
