// Formatting shared by the text and markdown renderers (report/text.cpp,
// report/markdown.cpp): numbers, marks, history lines and attribution rows.
// Internal to perfgate::report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gate/report.hpp"

namespace perfgate::report::detail {

// A measured value: integers stay integers, small values keep 3-4
// significant digits; "—" when absent or not finite. unit appended if set.
std::string value_str(const std::optional<double>& v, std::string_view unit = {});
// A value as a reviewer reads it (the markdown report): a time scaled to
// ns, us, ms or s and a size to B, KiB, MiB or GiB (3-4 significant
// digits), a count of 1,000 or more rounded with thousands separators
// (30,048,892), any other unit appended; "—" when absent or not finite.
std::string display_value(const std::optional<double>& v, std::string_view unit = {});
// v rounded to an integer with thousands separators: "30,048,892"; with
// sign, "+1,800" / "-12" / "0".
std::string grouped(double v, bool sign = false);
std::string pct_str(const std::optional<double>& v); // "+1.23%"
std::string p_str(const std::optional<double>& p);   // a p-value
// The shift's confidence interval in percent of the baseline median.
std::string ci_str(const gate::counter_report& c);
std::string_view mark(gate::status s);          // the status' emoji
std::string_view verdict_mark(gate::verdict v); // the verdict's emoji
// "1 regression, 0 improvements, 3 unchanged, 0 inconclusive"
std::string summary_counts(const gate::report& r);
// A suite's benchmarks by verdict (gate::count_benchmarks): "500 benchmarks
// compared: 3 regressions, 2 improvements, 490 unchanged, 5 inconclusive;
// 1 added, 1 removed, 1 failed" (the second part only when not all zero).
std::string suite_line(const gate::report& r);
// An overall geometric mean's ratio as a signed percentage: "+1.23%".
std::string ratio_pct(double ratio);
// A failed benchmark in plain text: "BM_X (candidate): message".
std::string failed_line(const gate::failed_benchmark& f);
// The benchmarks measured apart (benchmark_report::interleaved false) in one
// plain-text sentence saying how they were judged; empty when none was.
std::string not_interleaved_note(const gate::report& r);
// "baseline reused from run 12 (commit 1a2b3c4, 2026-11-20)" ("runs 12,
// 14" for several benchmarks; the newest run's date); empty when every
// baseline was measured.
std::string reused_line(const gate::report& r);
// Unix seconds as "2026-11-20T10:00:00Z" (UTC).
std::string iso_date_time(std::int64_t unix_seconds);
// Open alerts and a candidate outside the recent band, one line each.
// One line for a count and a time counter that moved apart
// (gate::count_time_disagreement), plain text.
std::string disagreement_line(const gate::count_time_disagreement& d);

std::vector<std::string> history_lines(const gate::counter_report& c);

// Attribution rows (gate::attribution).
std::string short_name(std::string_view name); // a function name cut to fit a table
std::string signed_count(double v);
std::string share_str(double share);
bool shown_perf_row(const gate::function_change& c);
std::size_t hidden_perf_rows(const gate::perf_attribution& p);
std::string interval_str(const gate::function_change& c);
std::string callgrind_heading(const gate::callgrind_attribution& cg);
std::string perf_heading(const gate::perf_attribution& p);

} // namespace perfgate::report::detail
