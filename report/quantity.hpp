// How perfgate writes a counter's value for people: with its unit and an SI
// prefix, never in scientific notation (docs/dashboard.md#numbers). The
// dashboard (server/pages), the CLI's history and alerts, and the alert
// webhooks' bodies use it; the browser side (server/assets/dashboard.js,
// fmtValue) follows the same rule for chart axes and tooltips;
// tests/test_pages.cpp pins both to the same table of cases.
//
//   unit                         written as                     example
//   "" (a count)                 SI prefix k M G T P E          31050000 -> "31.05 M"
//   ns us usec µs ms msec s sec   the time in ns µs ms s          12.3 msec -> "12.3 ms"
//   B KiB MiB GiB TiB (bytes)    binary prefix B KiB MiB GiB TiB 1258291 KiB -> "1.2 GiB"
//   %                            a percentage                   12.345 -> "12.35%"
//   anything else                a count's prefix, then the unit 1.234 insn/cycle -> "1.234 insn/cycle"
//
// `digits` significant digits (4 by default), trailing zeros after the
// point dropped; "–" for no value or one that is not finite. Values below
// the smallest prefix keep their digits after the point ("0.0123").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfgate::report {

inline constexpr int quantity_digits = 4;
// Where two values a small step apart are read side by side (the CLI's
// history and alerts tables, the alert webhooks' "before -> after"): six
// significant digits, as many as the "%.6g" these replaced, so a +0.1% step
// of an exact instruction count still shows ("206.549 M -> 206.756 M").
inline constexpr int quantity_digits_exact = 6;

std::string quantity(std::optional<double> v, std::string_view unit, int digits = quantity_digits);
// The seconds in one `unit` (ns nsec us usec µs ms msec s sec seconds);
// nullopt for a unit that is not a time.
std::optional<double> seconds_per(std::string_view unit);
// The bytes in one `unit` (B bytes KiB KB kB MiB MB GiB GB); nullopt for a
// unit that is not a size.
std::optional<double> bytes_per(std::string_view unit);
// quantity() in the unit the counter catalogue gives a counter by name
// (capture::lookup_counter: task-clock in ms, heap-bytes in B; a counter
// it does not know as a count): for stored series, which keep no unit.
std::string counter_quantity(std::optional<double> v, std::string_view counter, int digits = quantity_digits);

} // namespace perfgate::report
