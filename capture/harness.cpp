// Input formats: names, detection by content, dispatch, and the builder the
// harness parsers share (capture/suite_builder.hpp).
#include "capture/harness.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "capture/names.hpp"
#include "capture/suite_builder.hpp"
#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::capture {

namespace {

struct format_name {
    input_format format;
    std::string_view name;
};
constexpr format_name format_names[] = {
    {input_format::perf, "perf"},     {input_format::gbench, "gbench"},       {input_format::hyperfine, "hyperfine"},
    {input_format::catch2, "catch2"}, {input_format::nanobench, "nanobench"}, {input_format::samples, "samples"},
};

std::string_view skip_space(std::string_view text)
{
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    while (!text.empty() &&
           (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' || text.front() == '\r'))
        text.remove_prefix(1);
    return text;
}

// The first array element of doc[key] that is an object, or null.
const nlohmann::json* first_object_in(const nlohmann::json& doc, std::string_view key)
{
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_array()) return nullptr;
    for (const auto& e : *it)
        if (e.is_object()) return &e;
    return nullptr;
}

} // namespace

std::string_view to_string(input_format f)
{
    for (const auto& n : format_names)
        if (n.format == f) return n.name;
    return "perf";
}

std::optional<input_format> parse_input_format(std::string_view s)
{
    for (const auto& n : format_names)
        if (n.name == s) return n.format;
    return std::nullopt;
}

std::string_view input_format_names() { return "perf, gbench, hyperfine, catch2, nanobench, samples"; }

input_format detect_input_format(std::string_view text)
{
    const std::string_view head = skip_space(text);
    if (head.starts_with("<")) {
        // Catch2's XML reporter: <Catch name=...> (v2) or <Catch2TestRun ...> (v3).
        const std::string_view window = head.substr(0, 4096);
        if (window.find("<Catch") != std::string_view::npos) return input_format::catch2;
        return input_format::perf;
    }
    // perf stat --json writes one object per line; a harness writes one document.
    if (!head.starts_with("{")) return input_format::perf;
    const nlohmann::json doc = nlohmann::json::parse(head, nullptr, false);
    if (!doc.is_object()) {
        // Not one JSON document: perf stat --json (an object per line), or a
        // harness's output cut short (a crash mid-write), which its own
        // parser should name. Judged by the keys near the start.
        const std::string_view window = head.substr(0, 64 * 1024);
        auto has = [&](std::string_view key) { return window.find(key) != std::string_view::npos; };
        if (has("\"counter-value\"")) return input_format::perf;
        if (has("\"perfgate_samples\"")) return input_format::samples;
        if (has("\"benchmarks\"")) return input_format::gbench;
        if (has("\"results\"") && has("\"command\"")) return input_format::hyperfine;
        if (has("\"results\"") && (has("\"epochs\"") || has("\"measurements\""))) return input_format::nanobench;
        return input_format::perf;
    }
    if (doc.contains("perfgate_samples")) return input_format::samples;
    if (doc.contains("benchmarks") && doc.contains("context")) return input_format::gbench;
    if (const nlohmann::json* r = first_object_in(doc, "results")) {
        if (r->contains("command") && r->contains("times")) return input_format::hyperfine;
        if (r->contains("measurements") || r->contains("epochs")) return input_format::nanobench;
    }
    if (doc.contains("benchmarks")) return input_format::gbench; // compare.py's older inputs have no context
    return input_format::perf;
}

parsed_input parse_input(std::string_view text, std::string_view source, std::optional<input_format> forced,
                         std::string_view single_name)
{
    parsed_input out;
    out.format = forced ? *forced : detect_input_format(text);
    switch (out.format) {
    case input_format::perf: {
        const perf_capture cap = parse_perf_stat(text, source);
        out.set.benchmarks.push_back(from_capture(cap, std::string(single_name)));
        out.set.warnings = cap.warnings;
        // perf stat -o's "# started on" lines; the last execution's
        // duration_time (ns), when measured, is what it measured after its start.
        out.times = perf_started_on(text);
        if (out.times && !cap.runs.empty()) {
            if (auto e = cap.find("duration_time"); e && cap.events[*e].unit == "ns") {
                if (auto v = cap.runs.back()[*e].value; v && *v > 0) out.times->measured_s = *v * 1e-9;
            }
        }
        break;
    }
    case input_format::gbench: out.set = parse_gbench_json(text, source, &out.times); break;
    case input_format::hyperfine: out.set = parse_hyperfine_json(text, source); break;
    case input_format::catch2: out.set = parse_catch2_xml(text, source); break;
    case input_format::nanobench: out.set = parse_nanobench_json(text, source); break;
    case input_format::samples: out.set = parse_samples_json(text, source); break;
    }
    return out;
}

parsed_input read_input(const std::filesystem::path& path, std::optional<input_format> forced,
                        std::string_view single_name)
{
    return parse_input(model::read_text_file(path, "ingest.unreadable"), path.string(), forced, single_name);
}

std::vector<model::counter_samples> run_counters_of(const benchmark_samples& b)
{
    std::vector<model::counter_samples> out;
    for (const auto& c : b.counters) {
        if (c.computed) continue;
        model::counter_samples cs;
        cs.counter = c.name;
        cs.unit = c.unit;
        // Values are the repetitions that had one, in order; absent ones
        // are not stored (they carry no number).
        for (std::size_t i = 0; i < c.values.size(); ++i) {
            model::sample s;
            s.repetition = static_cast<int>(i);
            s.value = c.values[i];
            if (i < c.variance_pct.size()) s.variance_pct = c.variance_pct[i];
            cs.samples.push_back(s);
        }
        out.push_back(std::move(cs));
    }
    return out;
}

// ---------------------------------------------------------------------------
// suite_builder and the JSON helpers

namespace detail {

void bad_input(std::string_view source, std::string_view where, std::string_view what)
{
    if (where.empty()) throw error(errors::ingest_bad_input, fmt::format("{}: {}", source, what));
    throw error(errors::ingest_bad_input, fmt::format("{}: {}: {}", source, where, what));
}

nlohmann::json parse_json(std::string_view text, std::string_view source)
{
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        bad_input(source, fmt::format("byte {}", e.byte), "not valid JSON");
    } catch (const nlohmann::json::exception&) {
        // out_of_range 406: a number beyond a double (1e999).
        bad_input(source, "", "not valid JSON: a number out of range");
    }
}

std::optional<double> number_at(const nlohmann::json& obj, std::string_view key, std::string_view source,
                                const std::string& path, bool required)
{
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        if (required) bad_input(source, fmt::format("{}.{}", path, key), "missing; expected a number");
        return std::nullopt;
    }
    if (!it->is_number()) bad_input(source, fmt::format("{}.{}", path, key), "expected a number");
    const double v = it->get<double>();
    if (!std::isfinite(v)) bad_input(source, fmt::format("{}.{}", path, key), "not a finite number");
    return v;
}

std::optional<std::string> string_at(const nlohmann::json& obj, std::string_view key, std::string_view source,
                                     const std::string& path, bool required)
{
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        if (required) bad_input(source, fmt::format("{}.{}", path, key), "missing; expected a string");
        return std::nullopt;
    }
    if (!it->is_string()) bad_input(source, fmt::format("{}.{}", path, key), "expected a string");
    return it->get<std::string>();
}

std::string unique_name(std::map<std::string, std::string, std::less<>>& seen, std::string_view raw,
                        std::string_view source, std::string_view where, std::string_view what)
{
    if (raw.empty()) bad_input(source, where, fmt::format("empty {}", what));
    std::string name = to_valid_name(raw);
    auto it = seen.find(name);
    if (it != seen.end()) {
        auto shown = [](std::string_view s) { return std::string(s.substr(0, 80)); };
        if (it->second == raw) {
            bad_input(source, where,
                      fmt::format("{} '{}' appears twice: benchmarks must have distinct names", what, shown(raw)));
        }
        bad_input(source, where,
                  fmt::format("{} '{}' and '{}' both become benchmark '{}' (docs/inputs.md: names): give them "
                              "distinct names",
                              what, shown(it->second), shown(raw), shown(name)));
    }
    seen.emplace(name, std::string(raw));
    return name;
}

std::size_t suite_builder::new_repetition(std::string_view name, std::string_view where)
{
    if (name.empty()) bad_input(source_, where, "empty benchmark name");
    auto it = index_.find(name);
    std::size_t i = 0;
    if (it == index_.end()) {
        if (benches_.size() >= max_benchmarks_per_input) {
            bad_input(source_, where, fmt::format("more than {} benchmarks in one input", max_benchmarks_per_input));
        }
        i = benches_.size();
        benches_.push_back({});
        benches_.back().name = std::string(name);
        index_.emplace(std::string(name), i);
    } else i = it->second;
    pending& b = benches_[i];
    if (b.cap.runs.size() >= max_repetitions) {
        throw error(errors::ingest_too_many_repetitions,
                    fmt::format("{}: {}: benchmark '{}' has more than {} repetitions", source_, where, name,
                                max_repetitions));
    }
    b.cap.runs.emplace_back(b.cap.events.size(), reading{std::nullopt, 100.0, std::nullopt});
    return i;
}

namespace {

std::size_t event_of(perf_capture& cap, std::string_view counter, std::string_view unit, std::string_view source,
                     std::string_view where)
{
    if (auto e = cap.find(counter)) return *e;
    if (cap.events.size() >= max_counters_per_run) {
        throw error(errors::ingest_too_many_counters,
                    fmt::format("{}: {}: more than {} counters in one benchmark", source, where, max_counters_per_run));
    }
    cap.events.push_back({std::string(counter), std::string(unit)});
    for (auto& run : cap.runs) run.push_back(reading{std::nullopt, 100.0, std::nullopt});
    return cap.events.size() - 1;
}

} // namespace

void suite_builder::set(std::size_t bench, std::string_view counter, std::string_view unit, std::optional<double> value,
                        std::string_view where)
{
    pending& b = benches_.at(bench);
    if (value) check_finite(b.name, counter, unit, *value, where);
    const std::size_t e = event_of(b.cap, counter, unit, source_, where);
    b.cap.runs.back()[e].value = value;
}

void suite_builder::set_summary(std::size_t bench, std::string_view counter, std::string_view unit, double mean,
                                double rse_pct, std::size_t samples, std::string_view where)
{
    pending& b = benches_.at(bench);
    check_finite(b.name, counter, unit, mean, where);
    check_finite(b.name, counter, "%", rse_pct, where);
    const std::size_t e = event_of(b.cap, counter, unit, source_, where);
    b.cap.summary_only = true;
    b.cap.runs.back()[e] = reading{mean, 100.0, rse_pct};
    b.summary_repeats = samples;
}

// A finite number read from the input can leave a double's range when it is
// converted (1e300 s is beyond 1.8e308 ns): refused here, where every
// harness's values arrive, before statistics or the store see it.
void suite_builder::check_finite(std::string_view bench, std::string_view counter, std::string_view unit, double value,
                                 std::string_view where) const
{
    if (std::isfinite(value)) return;
    bad_input(source_, where,
              fmt::format("benchmark '{}', counter '{}': the value is out of range in {} (beyond a double: "
                          "{:g}); expected a finite number",
                          bench, counter, unit.empty() ? std::string_view("its unit") : unit, value));
}

void suite_builder::declare(std::size_t bench, std::string_view counter, std::optional<better> direction,
                            std::optional<bool> gated)
{
    benches_.at(bench).declarations[std::string(counter)] = {direction, gated};
}

void suite_builder::fail(std::string_view name, std::string message)
{
    auto it = std::find_if(failed_.begin(), failed_.end(), [&](const auto& f) { return f.first == name; });
    if (it == failed_.end()) failed_.emplace_back(std::string(name), std::move(message));
    else it->second = std::move(message);
}

sample_set suite_builder::finish()
{
    sample_set out;
    out.warnings = std::move(warnings_);
    for (auto& p : benches_) {
        benchmark_samples b = from_capture(p.cap, p.name);
        b.summary_repeats = p.summary_repeats;
        for (auto& c : b.counters) {
            auto d = p.declarations.find(c.name);
            if (d == p.declarations.end()) continue;
            c.direction = d->second.direction;
            c.gated = d->second.gated;
        }
        out.benchmarks.push_back(std::move(b));
    }
    for (auto& f : failed_) {
        const std::string& name = f.first;
        auto it = std::find_if(out.benchmarks.begin(), out.benchmarks.end(),
                               [&name](const benchmark_samples& b) { return b.name == name; });
        if (it == out.benchmarks.end()) {
            out.benchmarks.emplace_back();
            it = std::prev(out.benchmarks.end());
            it->name = name;
        }
        it->error = std::move(f.second);
    }
    return out;
}

} // namespace detail

} // namespace perfgate::capture
