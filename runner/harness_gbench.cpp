// perfgate run --harness gbench: baseline and candidate are google/benchmark
// binaries (docs/cli.md "Harnesses"). Each round runs both binaries once, in
// the run's order (ABBA by default), pinned and without ASLR as any
// benchmark; each execution writes its JSON with --benchmark_out.
//
// A sample is one process. google/benchmark's rows within one process are
// not independent draws of what the gate compares: the spread between
// processes (code and data placement, the CPU's state, the machine's load
// at that moment) is most of a benchmark's spread on a noisy machine
// (bench/e2e/gbench_spread.sh measures it), and rows of one process share it.
// Counted as samples of their own they would make the test believe in
// more evidence than there is. So the median of a process's rows (one,
// or the command's own --benchmark_repetitions) is its sample of each
// counter. Since processes, not rows, carry the information, a process
// runs each benchmark once for process_min_time (unless the command gives
// its own min-time or repetitions): more, shorter processes.
//
// Sequential sampling (--budget): the suite is looked at as a whole after
// each block of rounds; a benchmark whose gated counters are all decided
// stops, and the next rounds run only the undecided ones
// (--benchmark_filter with their exact names). The stop rule spends the
// alpha of each benchmark as for a single command, with the family of the
// whole gate (cli/run_options.cpp stop_rule).
//
// Backends. google/benchmark measures its own times per iteration; the
// process-wide counters of perf stat or rusage would mix all benchmarks, so
// under perf, native and rusage the samples are google/benchmark's own
// (real_time, cpu_time, user counters): the three mean "times reported by
// google/benchmark", and none of them needs perf. Under callgrind, times
// mean nothing (valgrind runs the code ~50x slower) and google/benchmark
// picks its iteration counts from time: the binary runs with
// --benchmark_min_time=0 (one iteration per benchmark, whatever the clock
// says) and callgrind dumps its counts right after
// State::StartKeepRunning() and right before State::FinishKeepRunning(),
// so each benchmark's measured loop is a dump of its own: instructions per
// iteration, deterministic, without process start-up or google/benchmark's
// bookkeeping. Children are traced, as backend_callgrind does, so that a
// binary started through env or /bin/sh (`srcdir=DIR ./bench`) is the one
// measured. Those dumps are also the benchmark's profile for the
// attribution.
#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/harness.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/backend.hpp"

namespace perfgate::runner::detail {

namespace {

// How long one process runs each benchmark when its command does not say
// (docs/cli.md#harnesses). bench/e2e/gbench_spread.sh on a loaded 2-core VM:
// the spread of a process's cpu_time is ~2-3% whether it runs a benchmark
// once for google/benchmark's default 0.5 s, once for 0.17 s, or 3 or 5
// times (median; randomly interleaved or not; pinned or not) in the same
// time, because it is mostly between processes; once for 0.17 s costs a
// third of the others' time per sample.
constexpr std::string_view process_min_time = "0.17";

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
    std::string given_name; // as google/benchmark names it, for --benchmark_filter
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
        x.given_name = r["name"].get<std::string>();
        x.name = capture::gbench_name(x.given_name);
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

    // One execution of a side's binary (spec: that side's, for_side), with
    // --benchmark_filter=filter when given.
    suite_output run_suite(const benchmark_spec& spec, const command& cmd, const where& at,
                           const std::optional<std::string>& filter)
    {
        const std::string tag = next_tag();
        const auto json_path = scratch_ / ("gbench-" + tag + ".json");
        const auto cg_dir = scratch_ / ("gbench-cg-" + tag);
        std::vector<std::string> flags = {"--benchmark_out=" + json_path.string(), "--benchmark_out_format=json"};
        if (filter) flags.push_back("--benchmark_filter=" + *filter);
        const bool callgrind = opt_.which == backend::callgrind;
        if (callgrind) {
            flags.push_back("--benchmark_min_time=0");
        } else if (cmd.text.find("--benchmark_repetitions") == std::string::npos &&
                   cmd.text.find("--benchmark_min_time") == std::string::npos) {
            flags.push_back(fmt::format("--benchmark_min_time={}", process_min_time));
        }
        const command run = with_flags(cmd, flags);

        spawn_options so = base_spawn(spec);
        so.argv = run.argv;
        if (callgrind) {
            std::filesystem::create_directory(cg_dir);
            // Children traced: `env srcdir=DIR ./bench` and /bin/sh -c
            // commands run the benchmark in a process of their own (files
            // cg.<pid>.<dump>).
            so.argv = {opt_.valgrind,
                       "--tool=callgrind",
                       "-q",
                       "--trace-children=yes",
                       "--callgrind-out-file=" + (cg_dir / "cg.%p").string(),
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
                                    filter ? fmt::format(" (does --filter '{}' match any?)", *filter) : "",
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
    // callgrind's dumps in the order it wrote them (cg.<pid>.1, cg.<pid>.2,
    // ...; cg.<pid> is a process's final dump at exit, after its last
    // loop): the ones triggered before FinishKeepRunning are the measured
    // loops. Only the process that runs google/benchmark writes any; an env
    // or a shell before it writes its final dump only.
    static std::vector<loop_dump> read_loops(const std::filesystem::path& dir, const where& at)
    {
        std::vector<std::pair<std::pair<long long, long long>, std::filesystem::path>> files; // (pid, dump)
        std::set<long long> processes;
        for (const auto& f : std::filesystem::directory_iterator(dir)) {
            const std::string name = f.path().filename().string(); // cg.<pid>[.<n>]
            long long pid = 0, n = 0;
            const char* p = name.data() + 3;
            const char* end = name.data() + name.size();
            if (!name.starts_with("cg.")) continue;
            const auto parsed = std::from_chars(p, end, pid);
            if (parsed.ec != std::errc()) continue;
            processes.insert(pid);
            if (parsed.ptr == end || *parsed.ptr != '.') continue; // the final dump
            if (std::from_chars(parsed.ptr + 1, end, n).ec != std::errc()) continue;
            files.push_back({{pid, n}, f.path()});
        }
        std::sort(files.begin(), files.end());
        std::vector<loop_dump> loops;
        std::set<long long> with_loops;
        const std::string trigger = "desc: Trigger: --dump-before=" + std::string(loop_end);
        for (const auto& [key, path] : files) {
            const std::string text = model::read_text_file(path, "measure.failed");
            if (text.find(trigger) == std::string::npos) continue;
            loop_dump d;
            for (const auto& [event, v] : parse_callgrind_totals(text, path.string())) d.totals[event] += v;
            d.file = path;
            loops.push_back(std::move(d));
            with_loops.insert(key.first);
        }
        if (files.empty()) {
            throw error(errors::measure_failed,
                        fmt::format("{}: callgrind wrote no dump at {} in any of the {} process(es) it followed: the "
                                    "binary does not seem to use google/benchmark's State loop{}",
                                    at.text(), loop_start, processes.size(),
                                    processes.size() > 1 ? " (the command started other programs: is one of them "
                                                           "the google/benchmark binary?)"
                                                         : ""));
        }
        if (with_loops.size() > 1) {
            throw error(errors::measure_failed,
                        fmt::format("{}: {} processes ran google/benchmark loops under callgrind: give the command "
                                    "as the one benchmark binary (env and /bin/sh before it are fine)",
                                    at.text(), with_loops.size()));
        }
        return loops;
    }
};

// The samples of one side of one benchmark, gathered over the rounds.
struct side_state {
    std::vector<model::counter_samples> counters;
    int next_repetition = 0; // processes recorded so far
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

// The median of one process's rows of a counter (values not empty).
double median_of(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// POSIX extended regular expressions (google/benchmark's --benchmark_filter)
// matching exactly these names.
std::string exact_names_filter(const std::vector<std::string>& names)
{
    std::string out = "^(";
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) out += '|';
        for (char ch : names[i]) {
            if (std::string_view("\\^$.|?*+()[]{}").find(ch) != std::string_view::npos) out += '\\';
            out += ch;
        }
    }
    return out + ")$";
}

// A suite's benchmarks as measured so far, per side.
class suite_samples {
public:
    suite_samples(const measure_options& opt, std::string_view suite) : opt_(opt), suite_(suite) {}

    // Adds one measured execution of a side.
    void add(suite_output& out, side which, const where& at)
    {
        const std::size_t k = which == side::baseline ? 0 : 1;
        for (const auto& w : out.set.warnings) {
            if (std::find(warnings_.begin(), warnings_.end(), w) == warnings_.end()) warnings_.push_back(w);
        }
        for (const auto& r : out.rows) given_names_.try_emplace(r.name, r.given_name);
        if (opt_.which != backend::callgrind) {
            // One sample per process: the median of its rows.
            for (const auto& b : out.set.benchmarks) {
                side_state& st = state_of(b.name, k);
                if (!b.error.empty()) {
                    st.error = b.error;
                    continue;
                }
                for (const auto& c : b.counters) {
                    if (c.computed || c.values.empty()) continue;
                    add_sample(st, c.name, c.unit, median_of(c.values), st.next_repetition);
                }
                ++st.next_repetition;
            }
            return;
        }
        add_loops(out, k, at);
    }

    // The benchmarks in the order first seen.
    [[nodiscard]] const std::vector<std::string>& names() const { return order_; }
    [[nodiscard]] const std::string& given_name(const std::string& name) const { return given_names_.at(name); }

    // Both sides have samples and neither failed: the gate will compare it.
    [[nodiscard]] bool comparable(const std::string& name) const
    {
        const auto& sides = by_name_.at(name);
        return std::all_of(sides.begin(), sides.end(),
                           [](const side_state& s) { return s.error.empty() && !s.counters.empty(); });
    }

    [[nodiscard]] benchmark_measurement measurement(const std::string& name) const
    {
        const auto& sides = by_name_.at(name);
        benchmark_measurement m;
        m.name = name;
        for (std::size_t k = 0; k < 2; ++k) {
            side_samples& out = k == 0 ? m.baseline : m.candidate;
            out.run.benchmark = name;
            out.run.role = std::string(to_string(k == 0 ? side::baseline : side::candidate));
            out.run.backend = std::string(to_string(opt_.which));
            out.run.counters = sides[k].counters;
            out.error = sides[k].error;
            out.profiles = sides[k].profiles;
            out.warnings = warnings_;
        }
        return m;
    }

    [[nodiscard]] std::vector<benchmark_measurement> all() const
    {
        std::vector<benchmark_measurement> out;
        for (const auto& name : order_) out.push_back(measurement(name));
        return out;
    }

private:
    side_state& state_of(const std::string& name, std::size_t k)
    {
        auto it = by_name_.find(name);
        if (it == by_name_.end()) {
            order_.push_back(name);
            it = by_name_.emplace(name, std::array<side_state, 2>{}).first;
        }
        it->second[k].seen = true;
        return it->second[k];
    }

    // callgrind: each row's measured loops are the next `threads` dumps.
    void add_loops(suite_output& out, std::size_t k, const where& at)
    {
        std::size_t needed = 0;
        for (const auto& r : out.rows) needed += static_cast<std::size_t>(r.threads);
        if (needed != out.loops.size()) {
            throw error(errors::measure_failed,
                        fmt::format("{}: callgrind saw {} measured loops for {} benchmark runs (threads counted): "
                                    "cannot tell which count is whose; a benchmark that runs its State loop more "
                                    "than once, or a --benchmark_repetitions/--benchmark_min_time of its own, "
                                    "does this",
                                    at.text(), out.loops.size(), needed));
        }
        std::size_t next = 0;
        ++kept_;
        for (const auto& r : out.rows) {
            side_state& st = state_of(r.name, k);
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
            if (opt_.cache_sim) {
                add_sample(st, "cache-misses", "", (totals["ILmr"] + totals["DLmr"] + totals["DLmw"]) / r.iterations,
                           rep);
                add_sample(st, "estimated-cycles", "", estimated_cycles(totals) / r.iterations, rep);
            }
            if (!opt_.keep_profiles.empty()) {
                // The last measured round's loops are the benchmark's profile.
                const auto dir = opt_.keep_profiles /
                                 fmt::format("gbench-{}-{}", kept_, k == 0 ? "baseline" : "candidate");
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
    }

    const measure_options& opt_;
    std::string suite_;
    std::vector<std::string> order_; // benchmarks, first seen first
    std::map<std::string, std::array<side_state, 2>, std::less<>> by_name_;
    std::map<std::string, std::string, std::less<>> given_names_;
    std::vector<std::string> warnings_;
    std::size_t kept_ = 0;
};

using std::chrono::steady_clock;

// Sequential sampling over a suite: after each look, the benchmarks still
// undecided; the rounds after it run only those.
class suite_looks {
public:
    suite_looks(const benchmark_spec& spec, const measure_options& opt, std::ostream& progress,
                std::optional<std::chrono::duration<double>> share)
        : spec_(spec), seq_(*opt.sequential), opt_(opt), progress_(progress), share_(share)
    {}

    [[nodiscard]] const std::optional<std::string>& filter() const { return filter_; }

    // After both sides of `round`: true to stop measuring.
    bool after_round(int round, const suite_samples& samples)
    {
        const auto now = steady_clock::now();
        if (!is_look(round)) return false;
        bool last = round >= seq_.max_repetitions;
        if (!last && share_) {
            // The pace of the block just measured: the rounds after a look
            // run only the benchmarks still undecided.
            const auto per_round = std::chrono::duration<double>(now - block_started_) /
                                   std::max(1, round - block_start_round_);
            const int next = std::min(seq_.block, seq_.max_repetitions - round);
            last = std::chrono::duration<double>(now - started_) + per_round * next > *share_;
        }
        block_started_ = now;
        block_start_round_ = round;
        std::vector<std::string> looked;
        if (!undecided_) {
            undecided_.emplace();
            for (const auto& name : samples.names()) undecided_->push_back(name);
        }
        std::vector<benchmark_measurement> so_far;
        for (const auto& name : *undecided_) {
            if (!samples.comparable(name)) continue; // failed or on one side: nothing to decide
            looked.push_back(name);
            so_far.push_back(samples.measurement(name));
        }
        std::vector<bool> decided(so_far.size(), false);
        if (seq_.decided && !so_far.empty()) decided = seq_.decided(spec_.name, so_far, last);
        PERFGATE_CHECK(decided.size() == so_far.size());
        undecided_->clear();
        for (std::size_t i = 0; i < looked.size(); ++i)
            if (!decided[i]) undecided_->push_back(looked[i]);
        const std::size_t decided_now = looked.size() - undecided_->size();
        if (opt_.progress != progress_style::none) {
            // The plan's last look decides every counter (it spends the
            // error that is left): it is said as the end, not as decisions.
            const std::string what =
                round >= seq_.max_repetitions
                    ? fmt::format("max repetitions reached, {} benchmarks measured so far", looked.size())
                : last ? fmt::format("time budget spent, {} benchmarks measured so far", looked.size())
                       : fmt::format("{} decided, {} of {} benchmarks left{}", decided_now, undecided_->size(),
                                     samples.names().size(), undecided_->empty() ? "" : ", measuring them more");
            progress_ << fmt::format("perfgate: {}: look after {} rounds: {}\n", spec_.name, round, what) << std::flush;
        }
        if (last || undecided_->empty()) return true;
        std::vector<std::string> given;
        for (const auto& name : *undecided_) given.push_back(samples.given_name(name));
        filter_ = exact_names_filter(given);
        return false;
    }

    // The first measured execution starts: the first block's pace counts from here.
    void begin(steady_clock::time_point at) { block_started_ = at; }

private:
    [[nodiscard]] bool is_look(int round) const
    {
        return round == seq_.max_repetitions ||
               (round >= seq_.min_repetitions && (round - seq_.min_repetitions) % seq_.block == 0);
    }

    const benchmark_spec& spec_;
    const sampling& seq_;
    const measure_options& opt_;
    std::ostream& progress_;
    std::optional<std::chrono::duration<double>> share_;
    std::optional<std::string> filter_ = spec_.filter;
    std::optional<std::vector<std::string>> undecided_; // nullopt before the first look: all of them
    // The share counts from here, warmups included, as for a command.
    steady_clock::time_point started_ = steady_clock::now(), block_started_ = started_;
    int block_start_round_ = 0;
};

} // namespace

std::vector<benchmark_measurement> measure_gbench(const benchmark_spec& spec, const measure_options& opt,
                                                  std::ostream& progress,
                                                  std::optional<std::chrono::duration<double>> share)
{
    if (opt.sequential && opt.which == backend::callgrind) {
        throw error(errors::usage_conflict, "--harness gbench --backend callgrind counts deterministically: one "
                                            "round decides; sequential sampling (--budget) is for google/benchmark's "
                                            "times");
    }
    if (opt.which == backend::memcheck) {
        throw error(errors::usage_conflict,
                    "--harness gbench with --backend memcheck is not available: memcheck counts a whole process, "
                    "run the benchmark binaries as commands (--baseline/--candidate) instead");
    }
    temp_dir scratch("perfgate-gbench");
    gbench_runner runner(opt, scratch.path());
    const int reps = opt.sequential ? opt.sequential->max_repetitions : spec.repetitions.value_or(opt.repetitions);
    const int warmup = spec.warmup.value_or(opt.warmup);
    const auto schedule = make_schedule(reps, warmup, opt.order, opt.seed);
    const std::array<benchmark_spec, 2> sides = {for_side(spec, side::baseline), for_side(spec, side::candidate)};

    suite_samples samples(opt, spec.name);
    std::optional<suite_looks> looks;
    if (opt.sequential) looks.emplace(spec, opt, progress, share);
    std::map<int, int> sides_done_in_round;
    bool measuring = false;
    for (const auto& s : schedule) {
        const where at{spec.name, s.which, s.round, s.warmup ? warmup : reps, s.warmup};
        const benchmark_spec& side_spec = sides[s.which == side::baseline ? 0 : 1];
        const command& cmd = s.which == side::baseline ? spec.baseline : spec.candidate;
        if (!s.warmup && !measuring && looks) looks->begin(steady_clock::now());
        measuring = measuring || !s.warmup;
        suite_output out = runner.run_suite(side_spec, cmd, at, looks ? looks->filter() : spec.filter);
        if (s.warmup) {
            if (!out.cg_dir.empty()) std::filesystem::remove_all(out.cg_dir);
            continue;
        }
        samples.add(out, s.which, at);
        if (!out.cg_dir.empty()) std::filesystem::remove_all(out.cg_dir);
        if (opt.progress != progress_style::none) {
            progress << fmt::format("perfgate: {}: {} round {}/{} done ({} benchmarks)\n", spec.name,
                                    to_string(s.which), s.round, reps, out.rows.size())
                     << std::flush;
        }
        if (!looks || ++sides_done_in_round[s.round] < 2) continue;
        if (looks->after_round(s.round, samples)) break;
    }
    return samples.all();
}

} // namespace perfgate::runner::detail
