// How the dashboard writes a counter's value: with its unit and an SI
// prefix, never in scientific notation (docs/dashboard.md#numbers). The
// browser side (server/assets/dashboard.js, fmtValue) follows the same rule
// for chart axes and tooltips; tests/test_pages.cpp pins both to the same
// table of cases.
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

namespace perfgate::server::pages {

inline constexpr int quantity_digits = 4;

std::string quantity(std::optional<double> v, std::string_view unit, int digits = quantity_digits);

} // namespace perfgate::server::pages
