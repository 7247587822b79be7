// Parser for `perf stat -x SEP` and `perf stat --json` output.
//
// The input is untrusted (an HTTP body, a file a CI job wrote) and is fuzzed
// (tests/fuzz/fuzz_perf_csv.cpp), so every step is bounded: lines are views
// into the input, a line is split into at most max_fields fields, and the
// output grows at most linearly with the input.
//
// How a line is read (docs/perf-input.md): perf's CSV fields are
//   [timestamp,][aggregation cols,]value,unit,event[,cgroup][,variance%],
//   run_time_ns,pcnt_running,metric_value,metric_unit
// The leading columns depend on -I / -A / --per-core / --per-socket, so instead
// of trusting a column count we look for the one position where the fields
// *look* like value,unit,event,...,run_time,pcnt_running (unit and event are
// not numbers, run_time and pcnt_running are). A timestamp or a CPU id can
// never sit in the unit position because the value right after it is a number
// or `<not supported>`, which is what keeps this unambiguous for perf's output.
#include "capture/perf_csv.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/file.hpp"
#include "model/utf8.hpp"

namespace perfgate::capture {

std::optional<std::size_t> perf_capture::find(std::string_view event) const
{
    for (std::size_t i = 0; i < events.size(); ++i)
        if (events[i].name == event) return i;
    return std::nullopt;
}

namespace {

// A perf stat line has at most ~13 fields (3 leading columns, 10 of its own)
// and is well under 1 KiB even with long PMU event names. Anything far beyond
// that is not perf output; these limits bound the work spent on it.
constexpr std::size_t max_line_length = 64 * 1024;
constexpr std::size_t max_fields = 64;
// Leading columns before the value: timestamp (-I), CPU/core/socket id and
// the aggregated CPU count (--per-core: `S0-D0-C0,1,`), plus one spare.
constexpr std::size_t max_prefix_fields = 4;
// A PMU event with terms (`cpu/event=0x3c,umask=0x00/`) may contain the
// separator; at most this many fields are joined back into one name.
constexpr std::size_t max_event_parts = 8;
// Warnings about skipped lines: list the first few, then count the rest, so a
// capture flooded with the benchmark's own stderr stays readable.
constexpr std::size_t max_listed_skips = 20;
// How much of an offending line is quoted in a message.
constexpr std::size_t max_quote = 120;

constexpr std::string_view started_on = "# started on";
constexpr std::string_view not_supported = "<not supported>";
constexpr std::string_view not_counted = "<not counted>";

// Separators tried, in order, on the first line that could be a counter
// line. `,` first because it is what everyone passes to -x; space last
// because perf pads timestamps and metric units with spaces.
constexpr std::string_view separator_candidates = ",;\t|:!#$&*+=?@^~ ";

[[noreturn]] void fail(std::string_view source, std::size_t line, std::string_view what)
{
    throw error(errors::ingest_bad_csv, fmt::format("{}:{}: {}", source, line, what));
}

// Quote untrusted text for a message: bounded length, control and non-ASCII
// bytes escaped so that a message is always printable and valid UTF-8.
std::string quote(std::string_view text)
{
    std::string out = "'";
    for (std::size_t i = 0; i < text.size() && i < max_quote; ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
        else out += fmt::format("\\x{:02x}", c);
    }
    if (text.size() > max_quote) out += "...";
    out += "'";
    return out;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool is_absent_marker(std::string_view s) { return s == not_supported || s == not_counted; }

// A finite decimal number as perf prints it ("%.2f", "%.0f", "1e+20").
// With a separator other than ',' a decimal comma ("0,50" from a locale with
// LC_NUMERIC set) is read too; with ',' it cannot occur inside a field.
std::optional<double> parse_number(std::string_view s, char sep)
{
    s = trim(s);
    if (s.empty() || s.size() > 64) return std::nullopt;
    char buf[64];
    std::copy(s.begin(), s.end(), buf);
    if (sep != ',') {
        const auto commas = std::count(buf, buf + s.size(), ',');
        const bool has_dot = std::find(buf, buf + s.size(), '.') != buf + s.size();
        if (commas == 1 && !has_dot) std::replace(buf, buf + s.size(), ',', '.');
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(buf, buf + s.size(), v);
    if (ec != std::errc() || end != buf + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

// `8.23%` -> 8.23 (perf -r N: relative standard error of the mean, in %).
std::optional<double> parse_variance(std::string_view s, char sep)
{
    s = trim(s);
    if (s.size() < 2 || s.back() != '%') return std::nullopt;
    auto v = parse_number(s.substr(0, s.size() - 1), sep);
    if (!v || *v < 0) return std::nullopt;
    return v;
}

// One counter reading as it appears on one line.
struct counter_line {
    std::size_t line = 0;
    std::optional<double> timestamp; // -I: seconds since start
    bool summary = false;            // -I --summary: the whole-run line
    std::string agg_key;             // CPU0 / S0-D0-C0,1 / cgroup: summed over
    std::string event;
    std::string unit;
    std::optional<double> value;
    double pcnt_running = 100.0;
    std::optional<double> variance_pct;
};

// A unit is printed as it is (text reports, terminals): printable text only,
// never an escape sequence (ESC, OSC, BEL, C1) or invalid UTF-8 (issue 31,
// finding 9; docs/perf-input.md).
void check_unit(std::string_view source, std::size_t line, const counter_line& c)
{
    if (const auto fault = model::find_text_fault(c.unit)) {
        fail(source, line, fmt::format("the unit of event '{}': {}", c.event.substr(0, 64), model::describe(*fault)));
    }
}


// ---------------------------------------------------------------- CSV lines

// Splits on sep; false when the line has more fields than perf ever prints.
bool split(std::string_view line, char sep, std::vector<std::string_view>& out)
{
    out.clear();
    std::size_t start = 0;
    for (;;) {
        if (out.size() == max_fields) return false;
        const auto pos = line.find(sep, start);
        if (pos == std::string_view::npos) {
            out.push_back(line.substr(start));
            return true;
        }
        out.push_back(line.substr(start, pos - start));
        start = pos + 1;
    }
}

// `,,,,,0.04,stalled cycles per insn`: a second metric of the counter above.
bool is_metric_continuation(const std::vector<std::string_view>& f, char sep)
{
    const std::size_t n = f.size();
    if (n < 5) return false;
    for (std::size_t i = n - 5; i < n - 2; ++i)
        if (!trim(f[i]).empty()) return false;
    // Everything before must be empty too, or a leading column (-I / -A).
    if (n - 5 > max_prefix_fields) return false;
    return trim(f[n - 2]).empty() || parse_number(f[n - 2], sep).has_value();
}

bool is_name_like(std::string_view s, char sep)
{
    s = trim(s);
    return !s.empty() && s.front() != '<' && !parse_number(s, sep);
}

struct csv_match {
    std::size_t value_index = 0;
    std::string event;
    std::string unit;
    std::optional<std::string> cgroup;
    std::optional<double> variance_pct;
    double pcnt_running = 100.0;
};

// Do fields[i...] read as value,unit,event[,cgroup][,variance%],run_time,pcnt?
// The value itself is not checked here (see parse_csv_line).
std::optional<csv_match> match_at(const std::vector<std::string_view>& f, std::size_t i, bool with_cgroup, char sep)
{
    if (i + 4 >= f.size()) return std::nullopt;
    const std::string_view unit = trim(f[i + 1]);
    if ((!unit.empty() && unit.front() == '<') || parse_number(unit, sep)) return std::nullopt;
    if (!is_name_like(f[i + 2], sep)) return std::nullopt;

    csv_match m;
    m.value_index = i;
    m.unit = std::string(unit);
    m.event = std::string(trim(f[i + 2]));
    std::size_t j = i + 3;
    // `cpu/event=0x3c,umask=0x00/` was split on ','; a PMU term list is
    // closed by a second '/', so join fields until the slashes pair up.
    auto slashes = std::count(m.event.begin(), m.event.end(), '/');
    for (std::size_t parts = 1; slashes % 2 == 1 && parts < max_event_parts && j < f.size(); ++parts, ++j) {
        m.event += sep;
        m.event += f[j];
        slashes += std::count(f[j].begin(), f[j].end(), '/');
    }
    if (slashes % 2 == 1) return std::nullopt;
    m.event = std::string(trim(m.event));

    if (with_cgroup) {
        if (j >= f.size() || !is_name_like(f[j], sep) || parse_variance(f[j], sep)) return std::nullopt;
        m.cgroup = std::string(trim(f[j]));
        ++j;
    }
    if (j < f.size()) {
        if (auto v = parse_variance(f[j], sep)) {
            m.variance_pct = v;
            ++j;
        }
    }
    if (j + 1 >= f.size()) return std::nullopt;
    if (!parse_number(f[j], sep)) return std::nullopt; // run_time_ns
    auto pcnt = parse_number(f[j + 1], sep);
    if (!pcnt) return std::nullopt;
    m.pcnt_running = *pcnt;
    return m;
}

enum class csv_kind { counter, continuation, bad_value, not_perf };

struct csv_result {
    csv_kind kind = csv_kind::not_perf;
    counter_line counter;
    std::string bad_value; // csv_kind::bad_value: the offending text
};

// Reads one CSV line with a known separator.
csv_result parse_csv_line(std::string_view line, char sep, std::vector<std::string_view>& fields)
{
    csv_result r;
    if (!split(line, sep, fields)) return r;
    if (is_metric_continuation(fields, sep)) {
        r.kind = csv_kind::continuation;
        return r;
    }
    // Prefer the reading without a cgroup column and with the fewest leading
    // columns; a cgroup (-G) is only assumed when nothing else fits.
    std::optional<csv_match> bad;
    for (bool with_cgroup : {false, true}) {
        for (std::size_t i = 0; i <= max_prefix_fields && i < fields.size(); ++i) {
            auto m = match_at(fields, i, with_cgroup, sep);
            if (!m) continue;
            const std::string_view value = trim(fields[i]);
            std::optional<double> number;
            if (!is_absent_marker(value)) {
                number = parse_number(value, sep);
                if (!number) {
                    if (!bad) bad = std::move(m);
                    continue;
                }
            }
            counter_line& c = r.counter;
            c.event = std::move(m->event);
            c.unit = std::move(m->unit);
            c.value = number;
            c.pcnt_running = m->pcnt_running;
            c.variance_pct = m->variance_pct;
            // Leading columns: a timestamp (or `summary`) first under -I, the
            // rest identifies the CPU / core / socket and is summed over.
            std::size_t k = 0;
            if (i > 0) {
                const std::string_view first = trim(fields[0]);
                if (first == "summary") {
                    c.summary = true;
                    k = 1;
                } else if (auto ts = parse_number(first, sep)) {
                    c.timestamp = ts;
                    k = 1;
                }
            }
            for (; k < i; ++k) {
                c.agg_key += trim(fields[k]);
                c.agg_key += '\x1f';
            }
            if (m->cgroup) c.agg_key += *m->cgroup;
            r.kind = csv_kind::counter;
            return r;
        }
        // A perf-shaped line whose value is garbage is an error; do not
        // reinterpret it with a cgroup column to make it fit.
        if (bad) break;
    }
    if (bad) {
        r.kind = csv_kind::bad_value;
        r.counter.event = std::move(bad->event);
        r.bad_value = std::string(trim(fields[bad->value_index]));
    }
    return r;
}

// --------------------------------------------------------------- JSON lines

enum class json_kind { counter, continuation };

// One `perf stat --json` object, e.g.
// {"counter-value" : "0.529790", "unit" : "msec", "event" : "task-clock",
//  "variance" : 10.62, "event-runtime" : 529790, "pcnt-running" : 100.00, ...}
json_kind parse_json_line(std::string_view text, std::string_view source, std::size_t line_no, counter_line& out)
{
    using nlohmann::json;
    // perf's objects are flat. Anything nested is discarded while parsing (so
    // a hostile `[[[[...` costs no memory) and then reported as a wrong shape.
    bool nested = false;
    json::parser_callback_t flat_only = [&nested](int depth, json::parse_event_t event, json&) {
        if (depth > 1 ||
            (depth == 1 && (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start))) {
            nested = true;
            return false;
        }
        return true;
    };
    const json j = json::parse(text.begin(), text.end(), flat_only, /*allow_exceptions=*/false);
    if (j.is_discarded()) fail(source, line_no, "not valid JSON: " + quote(text));
    if (!j.is_object() || nested)
        fail(source, line_no, "unknown JSON shape (perf stat --json writes one flat object per line): " + quote(text));

    auto unknown_shape = [&](std::string_view why) {
        fail(source, line_no, fmt::format("unknown JSON shape: {}: {}", why, quote(text)));
    };
    const auto event = j.find("event");
    if (event == j.end()) {
        // {"metric-value" : "0.04", "metric-unit" : "stalled cycles per insn"}
        if (j.contains("metric-value") || j.contains("metric-unit")) return json_kind::continuation;
        unknown_shape("no \"event\" field");
    }
    if (!event->is_string() || event->get_ref<const std::string&>().empty())
        unknown_shape("\"event\" is not a non-empty string");
    out.event = event->get<std::string>();

    const auto value = j.find("counter-value");
    if (value == j.end()) unknown_shape("no \"counter-value\" field");
    if (value->is_number()) {
        out.value = value->get<double>();
        if (!std::isfinite(*out.value)) unknown_shape("\"counter-value\" is not finite");
    } else if (value->is_string()) {
        const auto& s = value->get_ref<const std::string&>();
        if (!is_absent_marker(s)) {
            out.value = parse_number(s, ',');
            if (!out.value)
                fail(source, line_no, fmt::format("value {} of event {} is not a number", quote(s), quote(out.event)));
        }
    } else {
        unknown_shape("\"counter-value\" is neither a string nor a number");
    }

    if (auto unit = j.find("unit"); unit != j.end()) {
        if (!unit->is_string()) unknown_shape("\"unit\" is not a string");
        out.unit = unit->get<std::string>();
        check_unit(source, line_no, out);
    }
    auto number_field = [&](const char* key) -> std::optional<double> {
        const auto it = j.find(key);
        if (it == j.end()) return std::nullopt;
        if (!it->is_number()) unknown_shape(fmt::format("\"{}\" is not a number", key));
        const double v = it->get<double>();
        if (!std::isfinite(v)) unknown_shape(fmt::format("\"{}\" is not finite", key));
        return v;
    };
    if (auto p = number_field("pcnt-running")) out.pcnt_running = *p;
    out.variance_pct = number_field("variance");
    (void)number_field("event-runtime"); // validated only
    out.timestamp = number_field("interval");
    // Aggregation columns of -A / --per-core / --per-socket / --per-thread
    // and -G: one reading per CPU (or core ...), summed per event.
    for (const char* key : {"cpu", "core", "die", "socket", "node", "thread", "cgroup"}) {
        const auto it = j.find(key);
        if (it == j.end()) continue;
        out.agg_key += key;
        out.agg_key += '=';
        out.agg_key += it->is_string() ? it->get<std::string>() : it->dump();
        out.agg_key += '\x1f';
    }
    return json_kind::counter;
}

// ------------------------------------------------------------ run assembly

// Several lines of one event in one run (per-CPU, per-core, intervals)
// add up to one reading.
struct reading_sum {
    std::optional<double> value;
    double pcnt_running = 100.0;
    std::size_t parts = 0;
    std::optional<double> variance_pct; // as printed, when parts == 1
    double stderr_abs = 0;              // sqrt(sum of squared absolute SEs)
    std::size_t first_line = 0;

    void add(const counter_line& c)
    {
        if (parts++ == 0) {
            first_line = c.line;
            pcnt_running = c.pcnt_running;
            variance_pct = c.variance_pct;
        } else {
            pcnt_running = std::min(pcnt_running, c.pcnt_running);
        }
        if (c.value) value = value.value_or(0.0) + *c.value;
        // perf's variance% is the relative standard error of the mean. The SE
        // of a sum of independent parts is the root of the summed squared SEs
        // (Bienaymé); hypot avoids overflowing the intermediate squares.
        if (c.variance_pct && c.value) stderr_abs = std::hypot(stderr_abs, *c.value * *c.variance_pct / 100.0);
    }

    reading to_reading(std::string_view source, std::string_view event) const
    {
        reading r;
        r.value = value;
        r.pcnt_running = pcnt_running;
        if (value && !std::isfinite(*value))
            fail(source, first_line, fmt::format("event {}: the sum of its values overflows", quote(event)));
        if (parts == 1 || !variance_pct) {
            r.variance_pct = variance_pct;
        } else if (value && *value != 0) {
            r.variance_pct = stderr_abs / std::abs(*value) * 100.0;
            if (!std::isfinite(*r.variance_pct))
                fail(source, first_line, fmt::format("event {}: the variance% of its sum overflows", quote(event)));
        } else {
            // A zero mean has no relative error; perf prints 0.00% for it
            // (rel_stddev_stats in tools/perf/util/stat.c).
            r.variance_pct = 0.0;
        }
        return r;
    }
};

struct finished_run {
    std::size_t first_line = 0;
    // (event index, reading), ascending by index, only the events this run
    // has: memory stays linear in the input however many events came before.
    std::vector<std::pair<std::size_t, reading>> readings;
};

class run_assembler {
public:
    explicit run_assembler(std::string_view source) : source_(source) {}

    // A `# started on` header: the next lines are a new perf invocation.
    void begin_block(std::size_t line_no)
    {
        check_block_not_empty();
        close_run();
        block_line_ = line_no;
        block_counters_ = 0;
        block_said_.reset();
    }

    // A line that is not perf's: remembered to explain an empty result.
    void note_foreign(std::size_t line_no, std::string_view text)
    {
        if (!block_said_) block_said_ = std::pair{line_no, std::string(text)};
        if (!first_said_) first_said_ = std::pair{line_no, std::string(text)};
    }

    void add(counter_line c)
    {
        ++block_counters_;
        ++counters_;
        check_summary_consistency(c);
        open_run& run = current_; // refers to the open run even after close_run()
        if (c.timestamp || c.summary) {
            // Interval lines after plain lines, a timestamp that goes back, or
            // an interval line after the summary: another perf invocation.
            if (run.has_data() &&
                (!run.interval || (c.timestamp && (*c.timestamp < run.last_timestamp || run.has_summary))))
                close_run();
            run.interval = true;
            if (c.timestamp) run.last_timestamp = *c.timestamp;
            run.has_summary = run.has_summary || c.summary;
            record(c.summary ? run.summaries : run.sums, c);
            return;
        }
        if (run.interval) {
            // perf 6.1 prints the --summary lines of -I without a timestamp.
            run.has_summary = true;
            record(run.summaries, c);
            return;
        }
        // Plain capture: the same event on the same CPU again means the next
        // run of an appended capture (2>> file) has begun.
        std::string key = c.agg_key + '\x1e' + c.event;
        if (run.seen.count(key)) close_run();
        run.seen.insert(std::move(key));
        record(run.sums, c);
    }

    // last_line: number of lines read; blank: whether they were all blank.
    perf_capture finish(std::size_t last_line, bool blank)
    {
        if (counters_ == 0) {
            if (first_said_)
                fail(source_, first_said_->first,
                     "no perf stat counter lines; perf said: " + quote(first_said_->second));
            fail(source_, std::max<std::size_t>(last_line, 1),
                 blank ? "empty input: no perf stat output"
                       : "no perf stat counter lines (only comments or metric-only lines)");
        }
        check_block_not_empty();
        close_run();

        perf_capture out;
        out.summary_only = summary_only_.value_or(false);
        out.warnings = std::move(warnings_);
        for (std::size_t r = 0; r < runs_.size(); ++r) {
            const finished_run& run = runs_[r];
            std::vector<reading> row;
            row.reserve(events_.size());
            for (std::size_t e = 0; e < events_.size(); ++e) {
                // readings is ascending and unique by index: event e is at
                // position e unless an earlier one is missing (then we fail).
                if (e < run.readings.size() && run.readings[e].first == e) {
                    row.push_back(run.readings[e].second);
                    continue;
                }
                const event_origin& o = origins_[e];
                if (o.run > r)
                    fail(source_, o.line,
                         fmt::format("counters do not line up across runs: event {} first appears in run {} "
                                     "but is missing from run {} (line {})",
                                     quote(events_[e].name), o.run + 1, r + 1, run.first_line));
                fail(source_, run.first_line,
                     fmt::format("counters do not line up across runs: event {} (run {}, line {}) is missing "
                                 "from run {}, which starts here",
                                 quote(events_[e].name), o.run + 1, o.line, r + 1));
            }
            out.runs.push_back(std::move(row));
        }
        out.events = std::move(events_);
        return out;
    }

    void warn(std::string message) { warnings_.push_back(std::move(message)); }

private:
    struct open_run {
        std::size_t first_line = 0;
        bool interval = false;
        bool has_summary = false;
        double last_timestamp = -std::numeric_limits<double>::infinity();
        std::vector<std::optional<reading_sum>> sums;      // by event index
        std::vector<std::optional<reading_sum>> summaries; // -I --summary
        std::unordered_set<std::string> seen;              // cpu + event, plain mode

        [[nodiscard]] bool has_data() const { return first_line != 0; }
    };

    struct event_origin {
        std::size_t run = 0; // index of the run it first appeared in
        std::size_t line = 0;
    };

    // Adds a line to the open run, after any run boundary has been decided.
    void record(std::vector<std::optional<reading_sum>>& sums, const counter_line& c)
    {
        if (current_.first_line == 0) current_.first_line = c.line;
        const std::size_t e = event_index(c);
        if (sums.size() <= e) sums.resize(e + 1);
        if (!sums[e]) sums[e].emplace();
        sums[e]->add(c);
    }

    std::size_t event_index(const counter_line& c)
    {
        if (events_.size() == max_counters_per_run && !index_.count(c.event)) {
            throw error(errors::ingest_too_many_counters,
                        fmt::format("{}:{}: event {} is counter {} of this capture; at most {} counters per run",
                                    source_, c.line, quote(c.event), max_counters_per_run + 1, max_counters_per_run));
        }
        auto [it, inserted] = index_.try_emplace(c.event, events_.size());
        if (inserted) {
            events_.push_back({c.event, c.unit}); // unit of the first reading
            origins_.push_back({runs_.size(), c.line});
        }
        return it->second;
    }

    // -r N aggregates carry variance% on every line; single runs never do.
    // Mixing them would compare means with single values.
    void check_summary_consistency(const counter_line& c)
    {
        const bool aggregate = c.variance_pct.has_value();
        if (!summary_only_) {
            summary_only_ = aggregate;
            summary_line_ = c.line;
            return;
        }
        if (*summary_only_ != aggregate)
            fail(source_, c.line,
                 fmt::format("event {} {} variance%, but line {} {}: -r N aggregates and single runs cannot be "
                             "mixed in one capture",
                             quote(c.event), aggregate ? "has a" : "has no", summary_line_,
                             aggregate ? "has none" : "is a -r aggregate with one"));
    }

    void check_block_not_empty() const
    {
        if (block_line_ == 0 || block_counters_ > 0) return;
        std::string what = "this `# started on` block (one perf run) has no counter lines";
        if (block_said_)
            what += fmt::format("; perf said at line {}: {}", block_said_->first, quote(block_said_->second));
        fail(source_, block_line_, what);
    }

    void close_run()
    {
        open_run run = std::exchange(current_, open_run{});
        if (!run.has_data()) return;
        if (runs_.size() == max_repetitions) {
            throw error(errors::ingest_too_many_repetitions,
                        fmt::format("{}:{}: this line begins run {} of this capture; at most {} repetitions per run",
                                    source_, run.first_line, max_repetitions + 1, max_repetitions));
        }
        finished_run done;
        done.first_line = run.first_line;
        const std::size_t slots = std::max(run.sums.size(), run.summaries.size());
        std::size_t from_intervals = 0;
        for (std::size_t e = 0; e < slots; ++e) {
            const reading_sum* s = nullptr;
            if (run.has_summary && e < run.summaries.size() && run.summaries[e]) {
                s = &*run.summaries[e];
            } else if (e < run.sums.size() && run.sums[e]) {
                s = &*run.sums[e];
                if (run.has_summary) ++from_intervals;
            }
            if (!s) continue;
            done.readings.emplace_back(e, s->to_reading(source_, events_[e].name));
        }
        if (from_intervals > 0)
            warnings_.push_back(
                fmt::format("{}:{}: interval run has no summary line for {} event(s); their intervals were summed",
                            source_, run.first_line, from_intervals));
        runs_.push_back(std::move(done));
    }

    std::string_view source_;
    std::vector<perf_event_info> events_;
    std::vector<event_origin> origins_;
    std::unordered_map<std::string, std::size_t> index_;
    std::vector<finished_run> runs_;
    open_run current_;
    std::vector<std::string> warnings_;
    std::optional<bool> summary_only_;
    std::size_t summary_line_ = 0;
    std::size_t counters_ = 0;
    std::size_t block_line_ = 0; // line of the current `# started on`, 0 if none
    std::size_t block_counters_ = 0;
    std::optional<std::pair<std::size_t, std::string>> block_said_;
    std::optional<std::pair<std::size_t, std::string>> first_said_;
};

// Reads a capture one line at a time: comment lines (a `# started on` opens
// a block), JSON lines, CSV lines once the first counter line has settled
// the separator, and foreign lines (skipped with a warning). What the lines
// hold goes to a run_assembler.
class perf_stat_reader {
public:
    explicit perf_stat_reader(std::string_view source) : source_(source), runs_(source) {}

    // One line without its '\n' (a '\r' before it is dropped here).
    void read_line(std::string_view line)
    {
        ++line_no_;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1); // CRLF

        const std::string_view content = trim(line);
        if (content.empty()) return;
        blank_ = false;
        if (content.front() == '#') {
            if (content.substr(0, started_on.size()) == started_on) runs_.begin_block(line_no_);
            return; // perf's other comment lines (column headers)
        }
        if (line.size() > max_line_length) {
            skip_line(line);
            return;
        }
        if (content.front() == '{') {
            read_json_line(content);
            return;
        }
        if (!sep_ && !settle_separator(line)) return;
        read_csv_line(line);
    }

    perf_capture finish()
    {
        if (skipped_ > max_listed_skips)
            runs_.warn(fmt::format("{}: skipped {} more non-perf lines", source_, skipped_ - max_listed_skips));
        // A final line without '\n' is still a line; an empty input has none.
        return runs_.finish(line_no_, blank_);
    }

private:
    void skip_line(std::string_view line)
    {
        runs_.note_foreign(line_no_, trim(line));
        if (++skipped_ <= max_listed_skips)
            runs_.warn(fmt::format("{}:{}: skipped non-perf line {}", source_, line_no_, quote(trim(line))));
    }

    void read_json_line(std::string_view content)
    {
        counter_line c;
        c.line = line_no_;
        if (parse_json_line(content, source_, line_no_, c) == json_kind::counter) runs_.add(std::move(c));
    }

    // Before the separator is known: it becomes whatever makes this line read
    // as perf's. Only a counter line decides: a metric continuation line is
    // mostly separators and would fit too many candidates. False when the
    // line did not decide (it is then dealt with: a metric-only line before
    // any counter line is still perf's, anything else is skipped).
    bool settle_separator(std::string_view line)
    {
        for (char cand : separator_candidates) {
            if (line.find(cand) == std::string_view::npos) continue;
            const csv_kind kind = parse_csv_line(line, cand, fields_).kind;
            if (kind == csv_kind::counter || kind == csv_kind::bad_value) {
                sep_ = cand;
                return true;
            }
        }
        const bool continuation = std::any_of(separator_candidates.begin(), separator_candidates.end(), [&](char cand) {
            return line.find(cand) != std::string_view::npos &&
                   parse_csv_line(line, cand, fields_).kind == csv_kind::continuation;
        });
        if (!continuation) skip_line(line);
        return false;
    }

    void read_csv_line(std::string_view line)
    {
        csv_result r = parse_csv_line(line, *sep_, fields_);
        switch (r.kind) {
        case csv_kind::counter:
            check_unit(source_, line_no_, r.counter);
            r.counter.line = line_no_;
            runs_.add(std::move(r.counter));
            break;
        case csv_kind::continuation: break;
        case csv_kind::bad_value:
            fail(source_, line_no_,
                 fmt::format("value {} of event {} is not a number", quote(r.bad_value), quote(r.counter.event)));
        case csv_kind::not_perf: skip_line(line); break;
        }
    }

    std::string_view source_;
    run_assembler runs_;
    std::optional<char> sep_;
    std::vector<std::string_view> fields_; // reused by parse_csv_line
    std::size_t skipped_ = 0;
    std::size_t line_no_ = 0;
    bool blank_ = true;
};

} // namespace

perf_capture parse_perf_stat(std::string_view text, std::string_view source)
{
    // A UTF-8 byte order mark, as some editors add, is not part of line 1.
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);

    perf_stat_reader reader(source);
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        reader.read_line(text.substr(pos, nl - pos));
        pos = nl + 1;
    }
    return reader.finish();
}

perf_capture read_perf_stat(const std::filesystem::path& path)
{
    return parse_perf_stat(model::read_text_file(path, "ingest.unreadable"), path.string());
}

} // namespace perfgate::capture
