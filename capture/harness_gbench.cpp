// google/benchmark's JSON output (capture/harness.hpp, docs/inputs.md).
//
// A row of "benchmarks" is a repetition of the benchmark it names when its
// run_type is "iteration" (or absent, as in outputs older than run_type);
// aggregate rows (run_type "aggregate", or, without run_type, an
// aggregate_name or a _mean/_median/_stddev/_cv name) are never samples.
// Times are per iteration in time_unit; they are normalised to ns so that
// outputs written in different units compare. Every other number of a row
// is a user counter, kept under its name; google/benchmark's perf counters
// (--benchmark_perf_counters, written as libpfm names: CYCLES,
// INSTRUCTIONS, ...) are kept under perf's names, so they gate and chart
// like counters perf stat measured.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "capture/counters.hpp"
#include "capture/harness.hpp"
#include "capture/names.hpp"
#include "capture/suite_builder.hpp"
#include "model/error.hpp"

namespace perfgate::capture {

namespace {

// The members of a row that are not counters.
constexpr std::array<std::string_view, 20> row_keys{
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "error_occurred",
    "error_message",
    "label",
    "big_o",
    "rms",
    "complexity",
};

bool is_row_key(std::string_view k)
{
    for (auto r : row_keys)
        if (r == k) return true;
    return false;
}

std::optional<double> ns_per(std::string_view unit)
{
    if (unit == "ns") return 1.0;
    if (unit == "us") return 1e3;
    if (unit == "ms") return 1e6;
    if (unit == "s") return 1e9;
    return std::nullopt;
}

// libpfm's names for perf's generic hardware events, as google/benchmark
// writes them (--benchmark_perf_counters=CYCLES,INSTRUCTIONS).
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> pfm_names{{
    {"CYCLES", "cycles"},
    {"CPU-CYCLES", "cycles"},
    {"INSTRUCTIONS", "instructions"},
    {"REF-CYCLES", "ref-cycles"},
    {"BRANCHES", "branches"},
    {"BRANCH-INSTRUCTIONS", "branches"},
    {"BRANCH-MISSES", "branch-misses"},
    {"CACHE-REFERENCES", "cache-references"},
    {"CACHE-MISSES", "cache-misses"},
    {"PERF_COUNT_HW_CPU_CYCLES", "cycles"},
    {"PERF_COUNT_HW_INSTRUCTIONS", "instructions"},
    {"PERF_COUNT_HW_BRANCH_MISSES", "branch-misses"},
}};

std::string counter_name(std::string_view key)
{
    std::string upper(key);
    for (auto& ch : upper) ch = ch == '_' ? '-' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (const auto& [pfm, perf] : pfm_names) {
        if (key == pfm || (upper == pfm && key.find_first_of("abcdefghijklmnopqrstuvwxyz") == std::string_view::npos))
            return std::string(perf);
    }
    return std::string(key);
}

std::string_view unit_of(std::string_view counter)
{
    if (counter == "bytes_per_second") return "B/s";
    if (counter == "items_per_second") return "/s";
    return {};
}

// google/benchmark writes a double that is not finite as a bare token JSON
// has no word for (json_reporter.cc: NaN, -NaN, Infinity, -Infinity; a user
// counter 0/0 is NaN). Where a value may stand (after `:`, or after `[` or
// `,` in an array) and outside strings, such a token is quoted so the
// document parses; anywhere else it stays and is a parse error. `added`
// holds where (offsets in the quoted text), so a parse error still names
// the byte of the file as written.
struct quoted_tokens {
    std::string text;
    std::vector<std::size_t> added;
};

constexpr std::array<std::string_view, 4> nonfinite_tokens{"-Infinity", "Infinity", "-NaN", "NaN"};

quoted_tokens quote_nonfinite(std::string_view in)
{
    quoted_tokens out;
    out.text.reserve(in.size());
    bool in_string = false;
    std::vector<char> open; // the enclosing '{' and '['
    char last = 0;          // the last byte outside strings that is not white space
    for (std::size_t i = 0; i < in.size(); ++i) {
        const char ch = in[i];
        if (in_string) {
            out.text += ch;
            if (ch == '\\' && i + 1 < in.size()) out.text += in[++i];
            else if (ch == '"') in_string = false;
            continue;
        }
        const bool value_here = last == ':' || ((last == '[' || last == ',') && !open.empty() && open.back() == '[');
        const auto token = !value_here ? nonfinite_tokens.end()
                                       : std::find_if(nonfinite_tokens.begin(), nonfinite_tokens.end(),
                                                      [&](std::string_view t) { return in.substr(i).starts_with(t); });
        if (token == nonfinite_tokens.end()) {
            in_string = ch == '"';
            if (ch == '{' || ch == '[') open.push_back(ch);
            else if ((ch == '}' || ch == ']') && !open.empty()) open.pop_back();
            if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') last = ch;
            out.text += ch;
            continue;
        }
        last = '"';
        out.added.push_back(out.text.size());
        out.text += fmt::format("\"{}\"", *token);
        i += token->size() - 1;
    }
    return out;
}

nlohmann::json parse_gbench_text(std::string_view text, std::string_view source)
{
    const quoted_tokens q = quote_nonfinite(text);
    try {
        return nlohmann::json::parse(q.text);
    } catch (const nlohmann::json::parse_error& e) {
        // nlohmann's byte is 1-based, in the quoted text: 2 bytes per quoted token before it.
        std::size_t before = 0;
        while (before < q.added.size() && q.added[before] < e.byte) ++before;
        detail::bad_input(source, fmt::format("byte {}", e.byte - 2 * before), "not valid JSON");
    } catch (const nlohmann::json::exception&) {
        detail::bad_input(source, "", "not valid JSON: a number out of range");
    }
}

// NaN, Infinity, ... when `value` was one of google/benchmark's bare tokens.
std::optional<std::string_view> nonfinite_token(const nlohmann::json& value)
{
    if (!value.is_string()) return std::nullopt;
    for (auto token : nonfinite_tokens)
        if (value.get_ref<const std::string&>() == token) return token;
    return std::nullopt;
}

// A time member (real_time, cpu_time): NaN or Infinity there is no sample.
double time_at(const nlohmann::json& row, std::string_view key, std::string_view source, const std::string& path)
{
    if (auto it = row.find(key); it != row.end()) {
        if (auto token = nonfinite_token(*it)) {
            detail::bad_input(source, fmt::format("{}.{}", path, key), fmt::format("{}: not a finite number", *token));
        }
    }
    return *detail::number_at(row, key, source, path, true);
}

std::string shown(std::string_view s) { return std::string(s.substr(0, 300)); }

// Where a row's values go: the benchmark's index in the suite, its name,
// and the row's path for messages.
struct row_place {
    std::string_view source;
    const std::string& path;
    const std::string& name;
    std::size_t bench;
};
// counter -> the member of the row it was read from.
using member_map = std::map<std::string, std::string, std::less<>>;
// counter -> repetitions where it was NaN or +-Infinity.
using nonfinite_map = std::map<std::string, std::size_t, std::less<>>;

// Every number of a row that is not one of google/benchmark's own members
// is a user counter (perf's name for a libpfm one). Two members that become
// one counter are refused naming both; NaN or Infinity is no value.
void read_user_counters(const nlohmann::json& row, const row_place& at, detail::suite_builder& suite,
                        member_map& member_of, nonfinite_map& nonfinite)
{
    member_of.emplace("real_time", "real_time");
    member_of.emplace("cpu_time", "cpu_time");
    for (const auto& [key, value] : row.items()) {
        if (is_row_key(key)) continue;
        const auto token = nonfinite_token(value);
        if (!value.is_number() && !token) continue;
        // A user counter's name as any name (docs/inputs.md#names).
        const std::string counter = to_valid_name(counter_name(key));
        if (auto [it, added] = member_of.emplace(counter, key); !added && it->second != key) {
            detail::bad_input(at.source, at.path + "." + shown(key),
                              fmt::format("members '{}' and '{}' of benchmark '{}' both become counter '{}' "
                                          "(docs/inputs.md: google/benchmark): give the user counter another name",
                                          shown(it->second), shown(key), shown(at.name), shown(counter)));
        }
        if (token) {
            // No value in this repetition, as perf's <not counted>.
            ++nonfinite[counter];
            suite.set(at.bench, counter, unit_of(key), std::nullopt, at.path);
            continue;
        }
        const double v = value.get<double>();
        if (!std::isfinite(v)) detail::bad_input(at.source, at.path + "." + key, "not a finite number");
        suite.set(at.bench, counter, unit_of(key), v, at.path);
    }
}

bool aggregate_row(const nlohmann::json& row, std::string_view name)
{
    if (auto t = row.find("run_type"); t != row.end() && t->is_string()) return *t == "aggregate";
    if (row.contains("aggregate_name")) return true;
    for (std::string_view suffix : {"_mean", "_median", "_stddev", "_cv"})
        if (name.ends_with(suffix)) return true;
    return false;
}

// Benchmarks with aggregate rows only (run name -> rows) are not compared: a
// warning each; an input with nothing else is refused, saying how to rerun.
void warn_aggregates_only(sample_set& out, const std::map<std::string, std::size_t, std::less<>>& aggregates,
                          std::string_view source)
{
    std::size_t without_samples = 0;
    for (const auto& [name, n] : aggregates) {
        if (out.find(name)) continue;
        ++without_samples;
        out.warnings.push_back(fmt::format("{}: benchmark '{}' has {} aggregate rows and no repetitions: not compared",
                                           source, name, n));
    }
    if (out.benchmarks.empty()) {
        if (without_samples > 0) {
            detail::bad_input(source, "benchmarks",
                              "only aggregates (_mean, _median, _stddev, _cv): perfgate needs every repetition; "
                              "run with --benchmark_repetitions=N and without --benchmark_report_aggregates_only");
        }
        detail::bad_input(source, "benchmarks", "no benchmark results");
    }
}

} // namespace

// BENCHMARK_TEMPLATE names hold ", " ("BM_Fill<int, 8>"); stored names
// have no spaces (capture/names.hpp). One rule for files, uploads and
// perfgate run, so a benchmark has one name everywhere (docs/inputs.md).
std::string gbench_name(std::string_view name)
{
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == ' ' && i > 0 && name[i - 1] == ',') continue;
        out += name[i];
    }
    // Then the rule of every harness (docs/inputs.md#names).
    return to_valid_name(out);
}

sample_set parse_gbench_json(std::string_view text, std::string_view source, std::optional<run_times>* times)
{
    const nlohmann::json doc = parse_gbench_text(text, source);
    if (!doc.is_object()) detail::bad_input(source, "", "expected google/benchmark's JSON object");
    auto rows = doc.find("benchmarks");
    if (rows == doc.end() || !rows->is_array()) {
        detail::bad_input(source, "benchmarks", "missing; expected google/benchmark's --benchmark_format=json output");
    }
    detail::suite_builder suite(source);
    // valid name -> the name as google/benchmark wrote it: two written names
    // that become one are refused, as in every harness (docs/inputs.md#names).
    std::map<std::string, std::string, std::less<>> written;
    // benchmark -> its counters' members, and where they were NaN or Infinity.
    std::map<std::string, member_map, std::less<>> members;
    std::map<std::string, nonfinite_map, std::less<>> nonfinite;
    std::map<std::string, std::size_t, std::less<>> aggregates; // run name -> rows, of benchmarks without samples
    double measured_s = 0; // iterations x real_time over the repetition rows (run_times::measured_s)
    for (std::size_t i = 0; i < rows->size(); ++i) {
        const nlohmann::json& row = (*rows)[i];
        const std::string path = fmt::format("benchmarks[{}]", i);
        if (!row.is_object()) detail::bad_input(source, path, "expected an object");
        const std::string raw_name = *detail::string_at(row, "name", source, path, true);
        const std::string name = gbench_name(raw_name);
        if (aggregate_row(row, name)) {
            const auto run_name = detail::string_at(row, "run_name", source, path, false);
            ++aggregates[run_name ? gbench_name(*run_name) : name];
            continue;
        }
        if (auto [it, added] = written.emplace(name, raw_name); !added && it->second != raw_name) {
            detail::bad_input(source, path + ".name",
                              fmt::format("benchmarks '{}' and '{}' both become benchmark '{}' (docs/inputs.md: "
                                          "google/benchmark): give them distinct names",
                                          shown(it->second), shown(raw_name), shown(name)));
        }
        if (auto e = row.find("error_occurred"); e != row.end() && e->is_boolean() && e->get<bool>()) {
            const auto message = detail::string_at(row, "error_message", source, path, false);
            suite.fail(name, message.value_or("(no message)"));
            continue;
        }
        const std::string unit_text = detail::string_at(row, "time_unit", source, path, false).value_or("ns");
        const auto scale = ns_per(unit_text);
        if (!scale) {
            detail::bad_input(source, path + ".time_unit",
                              fmt::format("'{}' is not a time unit google/benchmark writes (ns, us, ms, s)",
                                          unit_text.substr(0, 32)));
        }
        const std::size_t b = suite.new_repetition(name, path);
        const double real_ns = time_at(row, "real_time", source, path) * *scale;
        suite.set(b, "real_time", "ns", real_ns, path + ".real_time");
        suite.set(b, "cpu_time", "ns", time_at(row, "cpu_time", source, path) * *scale, path + ".cpu_time");
        if (auto it = detail::number_at(row, "iterations", source, path, false); it && *it > 0) {
            if (const double s = *it * real_ns * 1e-9; std::isfinite(s)) measured_s += s;
        }
        read_user_counters(row, {source, path, name, b}, suite, members[name], nonfinite[name]);
    }
    for (const auto& [bench, counters] : nonfinite) {
        for (const auto& [counter, n] : counters) {
            suite.warn(fmt::format("{}: benchmark '{}': counter '{}' is NaN or Infinity in {} of its repetitions: "
                                   "no value there (not a sample)",
                                   source, shown(bench), shown(counter), n));
        }
    }
    sample_set out = suite.finish();
    // When the process started (context.date), if the file says; a date in
    // another form is no date, not an error: the samples are what counts.
    if (auto ctx = doc.find("context"); times && ctx != doc.end() && ctx->is_object()) {
        if (auto date = ctx->find("date"); date != ctx->end() && date->is_string()) {
            *times = parse_iso_date(date->get_ref<const std::string&>());
            if (*times) (*times)->measured_s = measured_s;
        }
    }
    warn_aggregates_only(out, aggregates, source);
    return out;
}

} // namespace perfgate::capture
