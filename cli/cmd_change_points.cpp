// `perfgate change-points FILE`: change-point detection on a series offline,
// the same detection the server runs on stored history (stats/change_points.hpp).
#include <charconv>
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "model/text.hpp"
#include "stats/change_points.hpp"

namespace perfgate::cli {

namespace {

command_spec change_points_command()
{
    return {
        "change-points",
        "FILE [--column NAME] [--window N] [--max-p P] [--min-magnitude M] [--compat otava] [--format text|json]",
        "Finds the points where a series shifts (E-divisive means with the Hunter\n"
        "modifications, as Apache Otava). FILE holds one number per line (blank lines and\n"
        "lines starting with # are skipped) or is CSV with a header row. Each change point\n"
        "is the 0-based index of the first value of the new segment, with its p-value,\n"
        "the means and medians before and after, and the Hodges-Lehmann shift with its\n"
        "95% interval. --compat otava gives Otava's answers (Student's t-test between\n"
        "segments); the default test is rank-based, for heavy-tailed and bimodal noise.\n"
        "Exit 0 whether or not change points are found; 2 on bad input.",
        {
            {"column", 0, true, false, "NAME", "CSV column to read (default 'value')"},
            {"window", 0, true, false, "N", "sliding window in points, >= 2 (default 50)"},
            {"max-p", 0, true, false, "P", "keep change points with p < P, 0 < P < 1 (default 0.001)"},
            {"min-magnitude", 0, true, false, "M",
             "keep change points with |mean after / mean before - 1| > M (default 0)"},
            {"compat", 0, true, false, "otava", "reproduce Apache Otava's compute_change_points"},
            {"format", 0, true, false, "text|json", "output format (default text)"},
        },
    };
}

// A whole field as a finite number, or nullopt.
std::optional<double> parse_number(std::string_view s)
{
    s = model::trim(s);
    if (s.starts_with('+')) s.remove_prefix(1);
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc{} || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

// The fields of one CSV line (RFC 4180 quoting, no line breaks inside quotes).
std::vector<std::string> csv_fields(std::string_view line)
{
    std::vector<std::string> out(1);
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                out.back() += '"';
                ++i;
            } else if (c == '"') quoted = false;
            else out.back() += c;
        } else if (c == '"') quoted = true;
        else if (c == ',') out.emplace_back();
        else out.back() += c;
    }
    for (auto& f : out) f = std::string(model::trim(f));
    return out;
}

// Shows a bounded, printable part of a user's text in a message.
std::string shown(std::string_view s)
{
    constexpr std::size_t max_shown = 40;
    std::string out;
    for (const unsigned char c : s.substr(0, max_shown)) out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
    if (s.size() > max_shown) out += "...";
    return out;
}

// The series in FILE: a list of numbers, or one column of a CSV file whose
// first line (after blank and # lines) is not a number. Errors name the file
// and line: "input.bad_number", "input.no_column", "input.no_data".
std::vector<double> read_series(const std::string& path, const std::string& column, bool column_given)
{
    const std::string text = model::read_text_file(path);
    std::vector<double> values;
    std::optional<std::size_t> col; // CSV: index of the column
    bool first = true;              // the first line that is not blank or #
    std::size_t line_no = 0, pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string_view line(text.data() + pos, nl - pos);
        pos = nl + 1;
        ++line_no;
        if (line.ends_with('\r')) line.remove_suffix(1);
        const std::string_view t = model::trim(line);
        if (t.empty() || t.starts_with('#')) continue;
        if (first) {
            first = false;
            // A first line that is a number starts a plain list; anything
            // else (or --column) is a CSV header.
            if (column_given || !parse_number(t)) {
                const auto header = csv_fields(t);
                for (std::size_t i = 0; i < header.size() && !col; ++i) {
                    if (header[i] == column) col = i;
                }
                if (!col && header.size() == 1 && !column_given) {
                    throw error(errors::input_bad_number,
                                fmt::format("{}:{}: '{}' is not a number (a CSV file needs a header with a "
                                            "'{}' column)",
                                            path, line_no, shown(t), column));
                }
                if (!col) {
                    throw error(errors::input_no_column,
                                fmt::format("{}:{}: the CSV header has no column '{}' (columns: {})", path, line_no,
                                            shown(column), shown(t)));
                }
                continue;
            }
        }
        std::optional<double> v;
        std::string_view field = t;
        std::vector<std::string> fields;
        if (col) {
            fields = csv_fields(t);
            if (*col >= fields.size()) {
                throw error(errors::input_bad_number, fmt::format("{}:{}: {} fields, no value in column '{}'", path,
                                                                  line_no, fields.size(), shown(column)));
            }
            field = fields[*col];
        }
        v = parse_number(field);
        if (!v) {
            throw error(errors::input_bad_number,
                        fmt::format("{}:{}: '{}' is not a finite number", path, line_no, shown(field)));
        }
        values.push_back(*v);
    }
    if (values.empty()) throw error(errors::input_no_data, fmt::format("{}: no numbers in the file", path));
    return values;
}

nlohmann::json to_json(const std::vector<stats::change_point>& points)
{
    auto list = nlohmann::json::array();
    for (const auto& p : points) {
        list.push_back({{"index", p.index},
                        {"p_value", p.p_value},
                        {"mean_before", p.mean_before},
                        {"mean_after", p.mean_after},
                        {"median_before", p.median_before},
                        {"median_after", p.median_after},
                        {"delta_pct", p.delta_pct ? nlohmann::json(*p.delta_pct) : nlohmann::json(nullptr)},
                        {"shift", p.shift.estimate},
                        {"shift_ci", {p.shift.lower, p.shift.upper}}});
    }
    return {{"change_points", std::move(list)}};
}

std::string render_text(const std::vector<stats::change_point>& points, std::size_t n)
{
    if (points.empty()) return fmt::format("no change points in {} values\n", n);
    std::string out = fmt::format("{} change point{} in {} values\n", points.size(), points.size() == 1 ? "" : "s", n);
    out += fmt::format("{:>7}  {:>10}  {:>12}  {:>12}  {:>8}  {:>12}  {}\n", "index", "p", "mean before", "mean after",
                       "delta", "shift", "95% CI");
    for (const auto& p : points) {
        out += fmt::format("{:>7}  {:>10.3g}  {:>12.6g}  {:>12.6g}  {:>8}  {:>12.6g}  [{:.6g}, {:.6g}]\n", p.index,
                           p.p_value, p.mean_before, p.mean_after,
                           p.delta_pct ? fmt::format("{:+.2f}%", *p.delta_pct) : std::string("-"), p.shift.estimate,
                           p.shift.lower, p.shift.upper);
    }
    return out;
}

} // namespace

const command_spec& change_points_spec()
{
    static const command_spec spec = change_points_command();
    return spec;
}

int cmd_change_points(const argv_t& argv)
{
    const command_spec& spec = change_points_spec();
    const auto args = parse_args(spec, argv);
    if (!args) return exit_pass;
    if (args->positional().size() != 1) {
        throw error(errors::usage_bad_arguments, "perfgate change-points: expected one FILE");
    }
    const std::string format = args->get_choice("format", {"text", "json"}).value_or("text");
    stats::change_point_options opt;
    if (auto w = args->get_int("window", 2, 1'000'000)) opt.window = static_cast<std::size_t>(*w);
    if (auto p = args->get_double("max-p")) {
        if (!(*p > 0 && *p < 1))
            throw error(errors::usage_bad_value, fmt::format("--max-p: expected 0 < P < 1, got {}", *p));
        opt.max_p = *p;
    }
    if (auto m = args->get_double("min-magnitude")) {
        if (!(*m >= 0) || !std::isfinite(*m)) {
            throw error(errors::usage_bad_value, fmt::format("--min-magnitude: expected a number >= 0, got {}", *m));
        }
        opt.min_magnitude = *m;
    }
    if (args->get_choice("compat", {"otava"})) opt.method = stats::change_point_method::otava;

    const auto column = args->get("column");
    const auto values = read_series(args->positional().front(), column.value_or("value"), column.has_value());
    const auto points = stats::change_points(values, opt);
    if (format == "json") std::cout << to_json(points).dump(2) << '\n';
    else std::cout << render_text(points, values.size());
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::cli
