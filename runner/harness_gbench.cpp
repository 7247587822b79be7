// perfgate run --harness gbench: baseline and candidate are google/benchmark
// binaries (docs/cli.md "Harnesses"). Each round runs both binaries once, in
// the run's order (ABBA by default), pinned and without ASLR as any
// benchmark; each execution writes its JSON with --benchmark_out, and every
// benchmark it ran becomes a sample of that benchmark. The result is one
// benchmark_measurement per google/benchmark benchmark, so the gate, the
// store and the history see a suite as the benchmarks it holds.
//
// Backends. google/benchmark measures its own times per iteration; the
// process-wide counters of perf stat or rusage would mix all benchmarks, so
// under perf, native and rusage the samples are google/benchmark's own
// (real_time, cpu_time, user counters). Under callgrind, times mean nothing
// (valgrind runs the code ~50x slower) and google/benchmark picks its
// iteration counts from time: the binary runs with --benchmark_min_time=0
// (one iteration per benchmark, whatever the clock says) and callgrind dumps
// its counts right after State::StartKeepRunning() and right before
// State::FinishKeepRunning(), so each benchmark's measured loop is a dump of
// its own: instructions per iteration, deterministic, without process
// start-up or google/benchmark's bookkeeping. Those dumps are also the
// benchmark's profile for the attribution.
#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <memory>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/harness.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/backend.hpp"

namespace perfgate::runner::detail {

namespace {

constexpr std::string_view loop_start = "benchmark::State::StartKeepRunning()";
constexpr std::string_view loop_end = "benchmark::State::FinishKeepRunning()";

// The measured loops of one execution under callgrind, in the order they ran.
struct loop_dump {
    std::map<std::string, double, std::less<>> totals;
    std::filesystem::path file;
};

// A benchmark row of the binary's JSON, in the order it ran.
struct row {
    std::string name;
    int threads = 1;
    double iterations = 1;
};

// One execution's output.
struct suite_output {
    capture::sample_set set;
    std::vector<row> rows;        // every non-aggregate row, errors included
    std::vector<loop_dump> loops; // callgrind only
    std::filesystem::path cg_dir; // callgrind's files of this execution, removed by the caller
};

// A command with google/benchmark's flags appended: to the argv, or to the
// script of a command run through the shell.
command with_flags(const command& cmd, const std::vector<std::string>& flags)
{
    command out = cmd;
    const bool shell = out.argv.size() == 3 && out.argv[0] == "/bin/sh" && out.argv[1] == "-c";
    for (const auto& f : flags) {
        if (!shell) {
            out.argv.push_back(f);
            continue;
        }
        std::string quoted = "'";
        for (char ch : f) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        out.argv[2] += " " + quoted + "'";
    }
    return out;
}

std::vector<row> rows_of(const std::string& text, const std::string& source)
{
    std::vector<row> out;
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array()) return out;
    for (const auto& r : doc["benchmarks"]) {
        if (!r.is_object() || !r.contains("name") || !r["name"].is_string()) continue;
        if (r.value("run_type", std::string("iteration")) == "aggregate") continue;
        row x;
        x.name = capture::gbench_name(r["name"].get<std::string>());
        if (auto t = r.find("threads"); t != r.end() && t->is_number_integer()) x.threads = t->get<int>();
        if (auto i = r.find("iterations"); i != r.end() && i->is_number()) x.iterations = i->get<double>();
        if (x.threads < 1 || x.threads > 4096 || !(x.iterations >= 1)) {
            throw error(errors::measure_failed, fmt::format("{}: benchmark '{}' reports {} threads and {} iterations",
                                                            source, x.name, x.threads, x.iterations));
        }
        out.push_back(std::move(x));
    }
    return out;
}

class gbench_runner final : public backend_base {
public:
    gbench_runner(const measure_options& opt, const std::filesystem::path& scratch) : backend_base(opt, scratch)
    {
        if (opt_.which == backend::callgrind && !executable(opt_.valgrind)) {
            throw error(errors::measure_valgrind_unavailable,
                        fmt::format("--backend callgrind needs valgrind, and '{}' is not in PATH: install it "
                                    "(apt-get install valgrind) or use --backend perf|rusage",
                                    opt_.valgrind));
        }
    }

    execution execute(const benchmark_spec&, const command&, const std::vector<std::string>&, const where&) override
    {
        PERFGATE_CHECK(false); // a suite runs through run_suite
        return {};
    }

    suite_output run_suite(const benchmark_spec& spec, const command& cmd, const where& at)
    {
        const std::string tag = next_tag();
        const auto json_path = scratch_ / ("gbench-" + tag + ".json");
        const auto cg_dir = scratch_ / ("gbench-cg-" + tag);
        std::vector<std::string> flags = {"--benchmark_out=" + json_path.string(), "--benchmark_out_format=json"};
        if (spec.filter) flags.push_back("--benchmark_filter=" + *spec.filter);
        const bool callgrind = opt_.which == backend::callgrind;
        if (callgrind) flags.push_back("--benchmark_min_time=0");
        const command run = with_flags(cmd, flags);

        spawn_options so = base_spawn(spec);
        so.argv = run.argv;
        if (callgrind) {
            std::filesystem::create_directory(cg_dir);
            so.argv = {opt_.valgrind,
                       "--tool=callgrind",
                       "-q",
                       "--callgrind-out-file=" + (cg_dir / "cg").string(),
                       "--dump-after=" + std::string(loop_start),
                       "--dump-before=" + std::string(loop_end)};
            if (opt_.cache_sim) so.argv.push_back("--cache-sim=yes");
            so.argv.insert(so.argv.end(), run.argv.begin(), run.argv.end());
        }
        const process_result proc = start(so, at);
        if (!proc.status.success()) fail(at, cmd, proc, proc.status);
        if (!std::filesystem::exists(json_path)) {
            throw error(errors::measure_failed,
                        fmt::format("{}: '{}' wrote no JSON to --benchmark_out: is it a google/benchmark binary "
                                    "(BENCHMARK_MAIN, or benchmark::Initialize with the command line)?{}",
                                    at.text(), cmd.text, stderr_excerpt(proc.stderr_tail)));
        }
        const std::string source = fmt::format("{} ({})", at.text(), json_path.filename().string());
        const std::string text = model::read_text_file(json_path, "measure.failed");
        std::filesystem::remove(json_path);
        if (text.empty()) {
            // google/benchmark exits 0 and writes nothing when no benchmark
            // matches the filter.
            throw error(errors::measure_failed,
                        fmt::format("{}: '{}' ran no benchmark{}{}", at.text(), cmd.text,
                                    spec.filter ? fmt::format(" (does --filter '{}' match any?)", *spec.filter) : "",
                                    stderr_excerpt(proc.stderr_tail)));
        }
        suite_output out;
        try {
            out.set = capture::parse_gbench_json(text, source);
        } catch (const error& e) {
            throw error(errors::measure_failed, e.what());
        }
        out.rows = rows_of(text, source);
        if (callgrind) {
            out.cg_dir = cg_dir;
            out.loops = read_loops(cg_dir, at);
        }
        return out;
    }

private:
    // callgrind's dumps in the order it wrote them (cg.1, cg.2, ...): the
    // ones triggered before FinishKeepRunning are the measured loops.
    static std::vector<loop_dump> read_loops(const std::filesystem::path& dir, const where& at)
    {
        std::vector<std::pair<long long, std::filesystem::path>> files;
        for (const auto& f : std::filesystem::directory_iterator(dir)) {
            const std::string name = f.path().filename().string();
            const auto dot = name.rfind('.');
            long long n = 0;
            if (dot == std::string::npos) continue; // the final dump at exit: after the last loop
            const char* first = name.data() + dot + 1;
            if (std::from_chars(first, name.data() + name.size(), n).ec != std::errc()) continue;
            files.emplace_back(n, f.path());
        }
        std::sort(files.begin(), files.end());
        std::vector<loop_dump> loops;
        const std::string trigger = "desc: Trigger: --dump-before=" + std::string(loop_end);
        for (const auto& [n, path] : files) {
            const std::string text = model::read_text_file(path, "measure.failed");
            if (text.find(trigger) == std::string::npos) continue;
            loop_dump d;
            for (const auto& [event, v] : parse_callgrind_totals(text, path.string())) d.totals[event] += v;
            d.file = path;
            loops.push_back(std::move(d));
        }
        if (files.empty()) {
            throw error(errors::measure_failed,
                        fmt::format("{}: callgrind wrote no dump at {}: the binary does not seem to use "
                                    "google/benchmark's State loop",
                                    at.text(), loop_start));
        }
        return loops;
    }
};

// The samples of one side of one benchmark, gathered over the rounds.
struct side_state {
    std::vector<model::counter_samples> counters;
    int next_repetition = 0; // rows recorded so far: a binary's own --benchmark_repetitions=K gives K a round
    std::string error;
    std::vector<std::filesystem::path> profiles;
    bool seen = false;
};

void add_sample(side_state& s, const std::string& counter, const std::string& unit, double value, int repetition)
{
    auto it = std::find_if(s.counters.begin(), s.counters.end(),
                           [&](const model::counter_samples& c) { return c.counter == counter; });
    if (it == s.counters.end()) {
        s.counters.push_back({counter, unit, {}});
        it = std::prev(s.counters.end());
    }
    it->samples.push_back({repetition, value, 100.0, std::nullopt});
}

} // namespace

std::vector<benchmark_measurement> measure_gbench(const benchmark_spec& spec, const measure_options& opt,
                                                  std::ostream& progress)
{
    if (opt.sequential) {
        throw error(errors::usage_conflict,
                    "--harness gbench measures a fixed number of rounds: sequential sampling (--budget, "
                    "--max-repetitions) is not available with it");
    }
    if (opt.which == backend::memcheck) {
        throw error(errors::usage_conflict,
                    "--harness gbench with --backend memcheck is not available: memcheck counts a whole process, "
                    "run the benchmark binaries as commands (--baseline/--candidate) instead");
    }
    temp_dir scratch("perfgate-gbench");
    gbench_runner runner(opt, scratch.path());
    const int reps = spec.repetitions.value_or(opt.repetitions);
    const int warmup = spec.warmup.value_or(opt.warmup);
    const auto schedule = make_schedule(reps, warmup, opt.order, opt.seed);
    const bool callgrind = opt.which == backend::callgrind;

    std::vector<std::string> order; // benchmarks, first seen first
    std::map<std::string, std::array<side_state, 2>, std::less<>> by_name;
    std::vector<std::string> warnings;
    std::size_t kept = 0;
    for (const auto& s : schedule) {
        const where at{spec.name, s.which, s.round, s.warmup ? warmup : reps, s.warmup};
        const command& cmd = s.which == side::baseline ? spec.baseline : spec.candidate;
        suite_output out = runner.run_suite(spec, cmd, at);
        if (s.warmup) {
            if (!out.cg_dir.empty()) std::filesystem::remove_all(out.cg_dir);
            continue;
        }
        if (opt.progress != progress_style::none) {
            progress << fmt::format("perfgate: {}: {} round {}/{} done ({} benchmarks)\n", spec.name,
                                    to_string(s.which), s.round, reps, out.rows.size())
                     << std::flush;
        }
        const std::size_t k = s.which == side::baseline ? 0 : 1;
        for (const auto& w : out.set.warnings) {
            if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
        }
        auto state_of = [&](const std::string& name) -> side_state& {
            auto it = by_name.find(name);
            if (it == by_name.end()) {
                order.push_back(name);
                it = by_name.emplace(name, std::array<side_state, 2>{}).first;
            }
            it->second[k].seen = true;
            return it->second[k];
        };
        if (!callgrind) {
            for (const auto& b : out.set.benchmarks) {
                side_state& st = state_of(b.name);
                if (!b.error.empty()) {
                    st.error = b.error;
                    continue;
                }
                // Each iteration row is a repetition of its own; real_time is
                // in every row, so its count is the rows'.
                std::size_t rows = 0;
                for (const auto& c : b.counters) {
                    if (c.computed) continue;
                    for (std::size_t i = 0; i < c.values.size(); ++i)
                        add_sample(st, c.name, c.unit, c.values[i], st.next_repetition + static_cast<int>(i));
                    rows = std::max(rows, c.values.size());
                }
                st.next_repetition += static_cast<int>(rows);
            }
            continue;
        }
        // callgrind: each row's measured loops are the next `threads` dumps.
        std::size_t needed = 0;
        for (const auto& r : out.rows) needed += static_cast<std::size_t>(r.threads);
        if (needed != out.loops.size()) {
            throw error(errors::measure_failed,
                        fmt::format("{}: callgrind saw {} measured loops for {} benchmark runs (threads counted): "
                                    "cannot tell which count is whose; a benchmark that runs its State loop more "
                                    "than once, or a --benchmark_repetitions/--benchmark_min_time of its own, "
                                    "does this",
                                    where{spec.name, s.which, s.round, reps, false}.text(), out.loops.size(), needed));
        }
        std::size_t next = 0;
        ++kept;
        for (const auto& r : out.rows) {
            side_state& st = state_of(r.name);
            std::map<std::string, double, std::less<>> totals;
            std::vector<std::filesystem::path> files;
            for (int t = 0; t < r.threads; ++t, ++next) {
                for (const auto& [event, v] : out.loops[next].totals) totals[event] += v;
                files.push_back(out.loops[next].file);
            }
            const capture::benchmark_samples* b = out.set.find(r.name);
            if (b && !b->error.empty()) {
                st.error = b->error;
                continue;
            }
            // Ir: instructions executed; per iteration, as google/benchmark
            // reports its times (iterations summed over threads).
            const int rep = st.next_repetition++;
            add_sample(st, "instructions", "", totals["Ir"] / r.iterations, rep);
            if (opt.cache_sim) {
                add_sample(st, "cache-misses", "", (totals["ILmr"] + totals["DLmr"] + totals["DLmw"]) / r.iterations,
                           rep);
                add_sample(st, "estimated-cycles", "", estimated_cycles(totals) / r.iterations, rep);
            }
            if (!opt.keep_profiles.empty()) {
                // The last measured round's loops are the benchmark's profile.
                const auto dir = opt.keep_profiles / fmt::format("gbench-{}-{}", kept, to_string(s.which));
                std::filesystem::create_directories(dir);
                st.profiles.clear();
                for (const auto& f : files) {
                    const auto to = dir / fmt::format("{}.{}", f.filename().string(), st.profiles.size());
                    std::error_code ec;
                    std::filesystem::rename(f, to, ec);
                    if (ec) std::filesystem::copy_file(f, to, std::filesystem::copy_options::overwrite_existing);
                    st.profiles.push_back(to);
                }
            }
        }
        std::filesystem::remove_all(out.cg_dir);
    }

    std::vector<benchmark_measurement> result;
    for (const auto& name : order) {
        auto& sides = by_name[name];
        benchmark_measurement m;
        m.name = name;
        for (std::size_t k = 0; k < 2; ++k) {
            side_samples& out = k == 0 ? m.baseline : m.candidate;
            out.run.benchmark = name;
            out.run.role = std::string(to_string(k == 0 ? side::baseline : side::candidate));
            out.run.backend = std::string(to_string(opt.which));
            out.run.counters = std::move(sides[k].counters);
            out.error = sides[k].error;
            out.profiles = std::move(sides[k].profiles);
            out.warnings = warnings;
        }
        result.push_back(std::move(m));
    }
    return result;
}

} // namespace perfgate::runner::detail
