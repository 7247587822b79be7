#include "report/quantity.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "capture/counters.hpp"

namespace perfgate::report {

namespace {

struct prefix {
    double scale;
    std::string_view symbol;
};

// clang-format off
constexpr std::array<prefix, 7> si_prefixes{{
    {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}};
constexpr std::array<prefix, 4> time_prefixes{{{1, "s"}, {1e-3, "ms"}, {1e-6, "µs"}, {1e-9, "ns"}}};
constexpr std::array<prefix, 5> byte_prefixes{{
    {1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}, {1, "B"}}};
// clang-format on

// `digits` significant digits, without an exponent, trailing zeros after
// the point dropped.
std::string significant(double v, int digits)
{
    if (v == 0) return "0";
    const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(v))));
    const int decimals = std::clamp(digits - 1 - magnitude, 0, 12);
    std::string s = fmt::format("{:.{}f}", v, decimals);
    if (s.find('.') != std::string::npos) {
        while (s.back() == '0') s.pop_back();
        if (s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
}

// v in the largest prefix it reaches (the smallest prefix when it reaches
// none), written with its symbol.
template <std::size_t N>
std::string with_prefix(double v, const std::array<prefix, N>& prefixes, int digits)
{
    const auto written = [&](std::size_t i) {
        const std::string n = significant(v / prefixes[i].scale, digits);
        return prefixes[i].symbol.empty() ? n : n + " " + std::string(prefixes[i].symbol);
    };
    std::size_t i = 0;
    while (i + 1 < N && std::abs(v) < prefixes[i].scale) ++i;
    // Rounding may carry into the prefix above (999.96 k is "1000 k" at 4
    // digits): then the prefix above writes it ("1 M").
    if (i > 0 &&
        std::abs(std::stod(significant(v / prefixes[i].scale, digits))) * prefixes[i].scale >= prefixes[i - 1].scale) {
        return written(i - 1);
    }
    return written(i);
}

} // namespace

std::optional<double> seconds_per(std::string_view unit)
{
    if (unit == "ns" || unit == "nsec") return 1e-9;
    if (unit == "us" || unit == "usec" || unit == "µs") return 1e-6;
    if (unit == "ms" || unit == "msec") return 1e-3;
    if (unit == "s" || unit == "sec" || unit == "seconds") return 1.0;
    return std::nullopt;
}

std::optional<double> bytes_per(std::string_view unit)
{
    if (unit == "B" || unit == "bytes") return 1.0;
    if (unit == "KiB" || unit == "KB" || unit == "kB") return 1024.0;
    if (unit == "MiB" || unit == "MB") return 1048576.0;
    if (unit == "GiB" || unit == "GB") return 1073741824.0;
    return std::nullopt;
}

std::string quantity(std::optional<double> v, std::string_view unit, int digits)
{
    if (!v || !std::isfinite(*v)) return "–";
    if (const auto s = seconds_per(unit)) return with_prefix(*v * *s, time_prefixes, digits);
    if (const auto b = bytes_per(unit)) return with_prefix(*v * *b, byte_prefixes, digits);
    if (unit == "%") return significant(*v, digits) + "%";
    std::string out = std::abs(*v) < 1000 ? significant(*v, digits) : with_prefix(*v, si_prefixes, digits);
    if (!unit.empty()) out += " " + std::string(unit);
    return out;
}

std::string counter_quantity(std::optional<double> v, std::string_view counter, int digits)
{
    return quantity(v, capture::lookup_counter(counter).unit, digits);
}

} // namespace perfgate::report
