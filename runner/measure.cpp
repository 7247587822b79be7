#include "runner/measure.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "capture/perf_csv.hpp"
#include "runner/perf_event.hpp"
#include "runner/process.hpp"
#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::runner {

namespace {

using std::chrono::nanoseconds;
using std::chrono::steady_clock;

// Lines of a failing benchmark's stderr quoted in the error message.
constexpr std::size_t stderr_lines_in_message = 10;

// Software events are counted by the kernel, not the PMU: they never
// multiplex and exist on every machine (perf list, "Software event").
const std::set<std::string, std::less<>> software_events = {
    "task-clock", "cpu-clock", "page-faults", "faults", "minor-faults", "major-faults", "context-switches",
    "cs", "cpu-migrations", "migrations", "alignment-faults", "emulation-faults", "duration_time",
    "user_time", "system_time"};

std::string base_name(std::string_view event)
{
    // "task-clock:u" -> "task-clock"
    return std::string(event.substr(0, event.find(':')));
}

std::string join(const std::vector<std::string>& items, std::string_view sep)
{
    std::string out;
    for (auto& s : items) {
        if (!out.empty()) out += sep;
        out += s;
    }
    return out;
}

// A file the run itself wrote; empty when it is missing (a workload that
// never started leaves no status file: the caller reports that).
std::string read_output(const std::filesystem::path& p) { return model::read_file_if_readable(p).value_or(""); }

std::string seconds(nanoseconds d) { return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count()); }

// Where an execution sits, for messages: "benchmark 'x', candidate side, round 3/10".
struct where {
    std::string_view benchmark;
    side which;
    int round, rounds;
    bool warmup;

    [[nodiscard]] std::string text() const
    {
        return fmt::format("benchmark '{}', {} side, {} {}/{}", benchmark, to_string(which),
                           warmup ? "warmup round" : "round", round, rounds);
    }
};

std::string stderr_excerpt(const std::vector<std::string>& tail)
{
    if (tail.empty()) return "\n  (it wrote nothing to stderr)";
    std::string out = "\n  last lines of its stderr:";
    std::size_t from = tail.size() > stderr_lines_in_message ? tail.size() - stderr_lines_in_message : 0;
    for (std::size_t i = from; i < tail.size(); ++i) out += "\n    | " + tail[i];
    return out;
}

bool contains(const std::vector<std::string>& lines, std::string_view needle)
{
    return std::any_of(lines.begin(), lines.end(), [&](auto& l) { return l.find(needle) != std::string::npos; });
}

std::filesystem::path self_directory()
{
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : exe.parent_path();
}

// The user's locale variables, to hand back to the benchmark through
// perfgate-exec's -s/-u after perf ran with LC_ALL=C.
std::vector<std::string> locale_restore_args(const std::vector<std::pair<std::string, std::string>>& bench_env)
{
    std::vector<std::string> args;
    for (const char* name : {"LC_ALL", "LC_NUMERIC"}) {
        std::optional<std::string> value;
        if (const char* v = std::getenv(name)) value = v;
        for (auto& [k, v] : bench_env) {
            if (k == name) value = v;
        }
        if (value) {
            args.insert(args.end(), {"-s", fmt::format("{}={}", name, *value)});
        } else {
            args.insert(args.end(), {"-u", name});
        }
    }
    return args;
}

// One execution's counters.
struct counter_value {
    std::string name, unit;
    std::optional<double> value;
    double pcnt_running = 100.0;
};

struct execution {
    std::vector<counter_value> counters;
    process_result proc;
};

void add_rusage_counters(execution& ex)
{
    ex.counters.push_back({"wall-time", "ns", static_cast<double>(ex.proc.wall.count()), 100.0});
    ex.counters.push_back({"user-time", "ns", static_cast<double>(ex.proc.user.count()), 100.0});
    ex.counters.push_back({"sys-time", "ns", static_cast<double>(ex.proc.sys.count()), 100.0});
    ex.counters.push_back({"max-rss", "KiB", static_cast<double>(ex.proc.max_rss_kib), 100.0});
}

// The runner proper: one object per measure() call.
class engine {
public:
    engine(const measure_options& opt, std::ostream& progress) : opt_(opt), progress_(progress)
    {
        if (counts_events()) {
            if (opt_.which == backend::perf) resolve_perf();
            events_ = opt_.events.empty()
                          ? std::vector<std::string>(std::begin(default_perf_events), std::end(default_perf_events))
                          : opt_.events;
            groups_ = {events_};
            // An unknown name is a usage error before anything runs.
            if (opt_.which == backend::native) {
                for (auto& e : events_) native_events_.try_emplace(e, resolve_event(e));
            }
        } else if (opt_.which == backend::callgrind) {
            if (!executable(opt_.valgrind)) {
                throw error("measure.valgrind_unavailable",
                            fmt::format("--backend callgrind needs valgrind, and '{}' is not in PATH: install it "
                                        "(apt-get install valgrind) or use --backend perf|rusage",
                                        opt_.valgrind));
            }
        }
    }

    // benchmarks_left: this one and those after it, for the budget's share.
    benchmark_measurement run(const benchmark_spec& spec, std::size_t benchmarks_left)
    {
        benchmark_measurement out;
        out.name = spec.name;
        const auto& seq = opt_.sequential;
        const int reps = seq ? seq->max_repetitions : spec.repetitions.value_or(opt_.repetitions);
        const int warmup = spec.warmup.value_or(opt_.warmup);
        auto schedule = make_schedule(reps, warmup, opt_.order, opt_.seed);

        sides_[0] = {};
        sides_[1] = {};
        profiles_[0].clear();
        profiles_[1].clear();
        ++benchmarks_run_;
        multiplexed_.clear();
        const auto started = steady_clock::now();
        std::size_t measured_total = 0, measured_done = 0;
        for (auto& s : schedule) measured_total += s.warmup ? 0 : 1;
        std::map<int, int> sides_done_in_round;

        // --split-events decides its groups from a probe execution; without
        // warmups that probe is an extra, discarded one.
        if (counts_events() && opt_.split_events && !probed_ && warmup == 0) {
            execute_slot(spec, {side::baseline, 1, true}, {spec.name, side::baseline, 1, 1, true});
        }

        // The estimate extrapolates from measured executions only (warmups
        // may be slower: cold caches, first page faults).
        std::optional<steady_clock::time_point> measuring_since;
        auto remaining = [&] {
            auto per_execution = (steady_clock::now() - *measuring_since) / measured_done;
            return seconds(per_execution * (measured_total - measured_done));
        };
        // The budget's share of this benchmark, and the looks' rounds.
        std::optional<std::chrono::duration<double>> share;
        if (seq && seq->budget) share = (*seq->budget - (started - run_started_)) / static_cast<double>(benchmarks_left);
        auto is_look = [&](int round) {
            return round == seq->max_repetitions ||
                   (round >= seq->min_repetitions && (round - seq->min_repetitions) % seq->block == 0);
        };
        int rounds_done = 0;
        for (const auto& s : schedule) {
            const where at{spec.name, s.which, s.round, s.warmup ? warmup : reps, s.warmup};
            if (!s.warmup && !measuring_since) measuring_since = steady_clock::now();
            if (opt_.progress == progress_style::tty) {
                auto elapsed = steady_clock::now() - started;
                std::string eta = measured_done > 0 ? "~" + remaining() + " left" : "";
                progress_ << fmt::format("\r\033[K{}: {} {}/{} {:<9} {} elapsed {}", spec.name,
                                         s.warmup ? "warmup" : "round", s.round, at.rounds, to_string(s.which),
                                         seconds(elapsed), eta)
                          << std::flush;
            }
            execute_slot(spec, s, at);
            if (s.warmup) continue;
            ++measured_done;
            if (++sides_done_in_round[s.round] < 2) continue;
            rounds_done = s.round;
            if (opt_.progress == progress_style::plain) {
                auto elapsed = steady_clock::now() - started;
                progress_ << fmt::format("perfgate: {}: round {}/{} done, elapsed {}{}\n", spec.name, s.round, reps,
                                         seconds(elapsed), seq ? "" : ", ~" + remaining() + " left")
                          << std::flush;
            }
            if (seq && is_look(s.round) && look(spec, s.round, started, *measuring_since, share)) break;
        }
        if (opt_.progress == progress_style::tty) {
            progress_ << fmt::format("\r\033[K{}: {} rounds in {}\n", spec.name, rounds_done,
                                     seconds(steady_clock::now() - started))
                      << std::flush;
        }

        if (!multiplexed_.empty()) {
            std::vector<std::string> names;
            for (auto& [n, pct] : multiplexed_) names.push_back(fmt::format("{} ({:.1f}%)", n, pct));
            warnings_.push_back(fmt::format(
                "benchmark '{}': events {} were multiplexed (counted only part of the time; perf scaled the "
                "values, so they are estimates): more events than the PMU counts at once{}",
                spec.name, join(names, ", "),
                opt_.split_events ? "" : "; use --split-events to measure them in groups, or fewer -e events"));
        }

        out.baseline = finish_side(spec, side::baseline);
        out.candidate = finish_side(spec, side::candidate);
        return out;
    }

private:
    // After round `round`, a look of sequential sampling: true to stop.
    bool look(const benchmark_spec& spec, int round, steady_clock::time_point started,
              steady_clock::time_point measuring_since, std::optional<std::chrono::duration<double>> share)
    {
        const auto& seq = *opt_.sequential;
        bool last = round >= seq.max_repetitions;
        if (!last && share) {
            const auto now = steady_clock::now();
            const auto per_round = std::chrono::duration<double>(now - measuring_since) / round;
            const int next = std::min(seq.block, seq.max_repetitions - round);
            last = std::chrono::duration<double>(now - started) + per_round * next > *share;
        }
        benchmark_measurement so_far;
        so_far.name = spec.name;
        so_far.baseline = finish_side(spec, side::baseline);
        so_far.candidate = finish_side(spec, side::candidate);
        const bool decided = seq.decided && seq.decided(so_far, last);
        if (opt_.progress != progress_style::none) {
            progress_ << fmt::format("{}perfgate: {}: look after {} rounds: {}\n",
                                     opt_.progress == progress_style::tty ? "\r\033[K" : "", spec.name, round,
                                     decided ? "decided"
                                     : last  ? (round >= seq.max_repetitions ? "max repetitions reached"
                                                                             : "time budget spent")
                                             : "not decided, measuring more")
                      << std::flush;
        }
        return decided || last;
    }

    // The backends that count perf events (-e), probe them and drop the
    // unsupported defaults.
    [[nodiscard]] bool counts_events() const { return opt_.which == backend::perf || opt_.which == backend::native; }

    static std::string path_env()
    {
        const char* p = std::getenv("PATH");
        return p ? p : "/usr/local/bin:/usr/bin:/bin";
    }

    static bool executable(const std::string& name)
    {
        auto p = find_executable(name, path_env());
        return p && ::access(p->c_str(), X_OK) == 0;
    }

    void resolve_perf()
    {
        if (!executable(opt_.perf)) {
            throw error("measure.perf_unavailable",
                        fmt::format("perf ('{}') is not installed or not in PATH. Install it (Debian: apt-get install "
                                    "linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r)), or measure "
                                    "without it: --backend callgrind (deterministic instruction counts) or "
                                    "--backend rusage (wall/user/sys time and max RSS only)",
                                    opt_.perf));
        }
        std::vector<std::filesystem::path> candidates;
        if (!opt_.exec_helper.empty()) {
            candidates.push_back(opt_.exec_helper);
        } else {
            if (auto dir = self_directory(); !dir.empty()) candidates.push_back(dir / "perfgate-exec");
            if (auto p = find_executable("perfgate-exec", path_env())) candidates.emplace_back(*p);
        }
        for (auto& c : candidates) {
            if (::access(c.c_str(), X_OK) == 0) {
                helper_ = c;
                return;
            }
        }
        throw error("measure.helper_missing",
                    fmt::format("perfgate-exec (the workload wrapper that reports the benchmark's exit status to "
                                "perfgate) was not found{}; install it next to the perfgate executable or in PATH",
                                opt_.exec_helper.empty() ? "" : " at " + opt_.exec_helper.string()));
    }

    spawn_options base_spawn(const benchmark_spec& spec) const
    {
        spawn_options so;
        so.cwd = spec.cwd;
        so.env = spec.env;
        so.cpus = opt_.cpus;
        so.disable_aslr = !opt_.keep_aslr;
        return so;
    }

    // run_process, with a failure to start (bad cwd, exec error) named by
    // benchmark, side and round.
    process_result start(const spawn_options& so, const where& at) const
    {
        try {
            return run_process(so, opt_.timeout);
        } catch (const error& e) {
            if (e.id() != "process.exec_failed") throw;
            throw error("measure.failed", fmt::format("{}: {}", at.text(), e.what()));
        }
    }

    [[noreturn]] void fail(const where& at, const command& cmd, const process_result& proc, const exit_status& st) const
    {
        if (st.timed_out) {
            throw error("measure.timeout",
                        fmt::format("{}: '{}' did not finish within --timeout {:g} s and was killed{}", at.text(),
                                    cmd.text, proc.timeout ? proc.timeout->count() / 1000.0 : 0.0,
                                    stderr_excerpt(proc.stderr_tail)));
        }
        throw error("measure.failed",
                    fmt::format("{}: '{}' {}{}", at.text(), cmd.text, st.describe(), stderr_excerpt(proc.stderr_tail)));
    }

    // Runs one execution under perf. The workload's true outcome comes from
    // perfgate-exec's status file, not from perf's exit status (see
    // exec_helper.cpp); an empty status file means perf itself failed.
    execution run_perf(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>& events,
                       const where& at)
    {
        const std::string tag = std::to_string(++executions_);
        const auto out_file = dir_.path() / ("perf-" + tag + ".csv");
        const auto status_file = dir_.path() / ("status-" + tag);

        spawn_options so = base_spawn(spec);
        so.argv = {opt_.perf, "stat", "-x", ",", "-o", out_file.string(), "-e", join(events, ","), "--",
                   helper_.string(), status_file.string()};
        auto restore = locale_restore_args(spec.env);
        so.argv.insert(so.argv.end(), restore.begin(), restore.end());
        so.argv.push_back("--");
        so.argv.insert(so.argv.end(), cmd.argv.begin(), cmd.argv.end());
        so.env.emplace_back("LC_ALL", "C");

        execution ex;
        ex.proc = start(so, at);
        if (ex.proc.status.timed_out) fail(at, cmd, ex.proc, ex.proc.status);

        std::istringstream status_text(read_output(status_file));
        std::string kind;
        int value = 0;
        if (status_text >> kind >> value) {
            if (kind == "exec") {
                throw error("measure.failed", fmt::format("{}: cannot execute '{}': {}{}", at.text(), cmd.text,
                                                          std::system_category().message(value),
                                                          stderr_excerpt(ex.proc.stderr_tail)));
            }
            exit_status st;
            st.exited = kind == "exit";
            (st.exited ? st.code : st.signal) = value;
            if (!st.success()) fail(at, cmd, ex.proc, st);
            // The workload's own user/sys time and peak RSS, from
            // perfgate-exec's wait4: not perf's (see exec_helper.cpp).
            // wall-time stays ours, perf's start-up included, on both sides.
            long long user_ns = 0, sys_ns = 0;
            long rss_kib = 0;
            if (status_text >> user_ns >> sys_ns >> rss_kib) {
                ex.proc.user = std::chrono::nanoseconds(user_ns);
                ex.proc.sys = std::chrono::nanoseconds(sys_ns);
                ex.proc.max_rss_kib = rss_kib;
            }
        } else {
            perf_failed(at, events, ex.proc);
        }
        if (!ex.proc.status.success()) perf_failed(at, events, ex.proc);

        capture::perf_capture cap;
        try {
            cap = capture::parse_perf_stat(read_output(out_file), out_file.filename().string());
        } catch (const error& e) {
            throw error("measure.perf_unavailable",
                        fmt::format("{}: perf stat's output could not be read: {}", at.text(), e.what()));
        }
        std::filesystem::remove(out_file);
        std::filesystem::remove(status_file);
        if (cap.runs.size() != 1) {
            throw error("measure.perf_unavailable",
                        fmt::format("{}: expected one run in perf stat's output, found {}", at.text(), cap.runs.size()));
        }
        for (std::size_t e = 0; e < cap.events.size(); ++e) {
            const auto& r = cap.runs[0][e];
            ex.counters.push_back({cap.events[e].name, cap.events[e].unit, r.value, r.pcnt_running});
        }
        return ex;
    }

    [[noreturn]] void perf_failed(const where& at, const std::vector<std::string>& events, const process_result& proc) const
    {
        const auto& tail = proc.stderr_tail;
        if (contains(tail, "perf_event_paranoid") || contains(tail, "Access to performance monitoring")) {
            throw error("measure.perf_unavailable", fmt::format("{}: perf refused to count (kernel.perf_event_paranoid). {}{}",
                                                                at.text(), perf_paranoid_fix, stderr_excerpt(tail)));
        }
        if (contains(tail, "event syntax error") || contains(tail, "Cannot find PMU") ||
            (proc.status.exited && proc.status.code == 129)) {
            throw error("usage.bad_event", fmt::format("perf stat rejected the event list '{}'{}", join(events, ","),
                                                       stderr_excerpt(tail)));
        }
        throw error("measure.perf_unavailable",
                    fmt::format("{}: perf stat failed ({}) before the benchmark ran{}", at.text(),
                                proc.status.describe(), stderr_excerpt(tail)));
    }

    // Runs one execution with counters perfgate opens itself
    // (perf_event.hpp) on this thread right before starting the benchmark,
    // which inherits them. No perf and no perfgate-exec in between, so the
    // exit status, rusage and wall time are the benchmark's own, as under
    // rusage.
    execution run_native(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>& events,
                         const where& at)
    {
        std::vector<native_event> group;
        for (auto& name : events) group.push_back(native_events_.at(name));
        spawn_options so = base_spawn(spec);
        so.argv = cmd.argv;

        execution ex;
        try {
            const native_counters counters(group);
            // Keep what opening learnt (a user-only fallback renamed NAME:u).
            for (std::size_t i = 0; i < events.size(); ++i) native_events_.at(events[i]) = group[i];
            ex.proc = start(so, at);
            if (!ex.proc.status.success()) fail(at, cmd, ex.proc, ex.proc.status);
            for (auto& r : counters.read(ex.proc)) ex.counters.push_back({r.name, r.unit, r.value, r.pcnt_running});
        } catch (const error& e) {
            if (e.id() != "measure.perf_unavailable") throw;
            throw error(e.id(), fmt::format("{}: {}", at.text(), e.what()));
        }
        return ex;
    }

    execution run_rusage(const benchmark_spec& spec, const command& cmd, const where& at)
    {
        spawn_options so = base_spawn(spec);
        so.argv = cmd.argv;
        execution ex;
        ex.proc = start(so, at);
        if (!ex.proc.status.success()) fail(at, cmd, ex.proc, ex.proc.status);
        add_rusage_counters(ex);
        return ex;
    }

    // Valgrind runs the workload in its own process, so its exit status is
    // the workload's (a fatal signal is re-raised; SIGKILL kills both).
    // Children are traced and their costs summed: a benchmark run through a
    // shell script is counted whole.
    execution run_callgrind(const benchmark_spec& spec, const command& cmd, const where& at)
    {
        const std::string tag = std::to_string(++executions_);
        const auto out_dir = dir_.path() / ("cg-" + tag);
        std::filesystem::create_directory(out_dir);
        spawn_options so = base_spawn(spec);
        so.argv = {opt_.valgrind, "--tool=callgrind", "-q", "--trace-children=yes",
                   "--callgrind-out-file=" + (out_dir / "callgrind.%p").string()};
        if (opt_.cache_sim) so.argv.push_back("--cache-sim=yes");
        so.argv.insert(so.argv.end(), cmd.argv.begin(), cmd.argv.end());

        execution ex;
        ex.proc = start(so, at);
        if (!ex.proc.status.success()) fail(at, cmd, ex.proc, ex.proc.status);

        std::map<std::string, double, std::less<>> totals;
        for (auto& f : std::filesystem::directory_iterator(out_dir)) {
            for (auto& [event, v] : read_callgrind_totals(f.path())) totals[event] += v;
        }
        if (!opt_.keep_profiles.empty() && !at.warmup) keep_profiles(out_dir, at.which);
        std::filesystem::remove_all(out_dir);
        if (!totals.contains("Ir")) {
            throw error("measure.failed", fmt::format("{}: callgrind wrote no instruction count for '{}'{}",
                                                      at.text(), cmd.text, stderr_excerpt(ex.proc.stderr_tail)));
        }
        // Ir = instructions executed (valgrind manual, cg_annotate "I refs").
        ex.counters.push_back({"instructions", "", totals["Ir"], 100.0});
        if (opt_.cache_sim) {
            // Last-level misses (instruction reads + data reads + data
            // writes): the simulated counterpart of perf's cache-misses,
            // which counts LLC misses.
            ex.counters.push_back({"cache-misses", "", totals["ILmr"] + totals["DLmr"] + totals["DLmw"], 100.0});
            ex.counters.push_back({"estimated-cycles", "", estimated_cycles(totals), 100.0});
        }
        return ex;
    }

    // Moves an execution's callgrind files to keep_profiles/<n>-<side>/,
    // replacing those of the side's previous execution: the last measured
    // one is kept (callgrind counts are deterministic, so any one would do).
    // Failing to keep them (a full disk) costs the attribution, never the
    // measurement: a warning, and no profiles for that side.
    void keep_profiles(const std::filesystem::path& out_dir, side which)
    {
        auto& kept = profiles_[which == side::baseline ? 0 : 1];
        kept.clear();
        try {
            move_profiles(out_dir, which, kept);
        } catch (const std::exception& e) {
            kept.clear();
            warnings_.push_back(fmt::format("could not keep callgrind's output for the attribution: {}", e.what()));
        }
    }

    void move_profiles(const std::filesystem::path& out_dir, side which, std::vector<std::filesystem::path>& kept) const
    {
        const auto dir = opt_.keep_profiles / fmt::format("{}-{}", benchmarks_run_, to_string(which));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        std::vector<std::pair<long long, std::filesystem::path>> files;
        for (auto& f : std::filesystem::directory_iterator(out_dir)) {
            // callgrind.<pid>: order by pid, so that the benchmark's own
            // process (started first) comes first.
            const auto name = f.path().filename().string();
            const auto dot = name.rfind('.');
            files.emplace_back(std::atoll(name.c_str() + (dot == std::string::npos ? 0 : dot + 1)), f.path());
        }
        std::sort(files.begin(), files.end());
        for (auto& [pid, from] : files) {
            auto to = dir / from.filename();
            std::error_code ec;
            std::filesystem::rename(from, to, ec);
            if (ec) std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
            kept.push_back(std::move(to));
        }
    }

    void execute_slot(const benchmark_spec& spec, const slot& s, const where& at)
    {
        const command& cmd = s.which == side::baseline ? spec.baseline : spec.candidate;
        std::vector<execution> parts;
        switch (opt_.which) {
        case backend::rusage: parts.push_back(run_rusage(spec, cmd, at)); break;
        case backend::callgrind: parts.push_back(run_callgrind(spec, cmd, at)); break;
        case backend::perf:
        case backend::native:
            for (auto& group : groups_) {
                parts.push_back(opt_.which == backend::perf ? run_perf(spec, cmd, group, at)
                                                            : run_native(spec, cmd, group, at));
            }
            // wall/user/sys/rss of the first group's execution (the one with
            // the software events and duration_time).
            add_rusage_counters(parts.front());
            if (!probed_) probe(parts);
            break;
        }
        if (s.warmup) return;
        auto& counters = sides_[s.which == side::baseline ? 0 : 1];
        for (auto& part : parts) {
            for (auto& c : part.counters) {
                if (c.pcnt_running < 100.0 && c.value) {
                    auto [it, fresh] = multiplexed_.try_emplace(c.name, c.pcnt_running);
                    if (!fresh) it->second = std::min(it->second, c.pcnt_running);
                }
                auto it = std::find_if(counters.begin(), counters.end(), [&](auto& cs) { return cs.counter == c.name; });
                if (it == counters.end()) {
                    counters.push_back({c.name, c.unit, {}});
                    it = std::prev(counters.end());
                }
                it->samples.push_back({s.round - 1, c.value, c.pcnt_running, std::nullopt});
            }
        }
    }

    // The first perf execution tells which events this machine supports and
    // whether they multiplex. Default events that are <not supported> are
    // dropped from then on (said once); explicitly requested ones are kept
    // (the report shows them as unsupported) but said too.
    void probe(const std::vector<execution>& parts)
    {
        probed_ = true;
        std::vector<std::string> unsupported;
        double min_pct = 100.0;
        for (auto& part : parts) {
            for (auto& c : part.counters) {
                if (c.name == "wall-time" || c.name == "user-time" || c.name == "sys-time" || c.name == "max-rss") continue;
                if (!c.value) unsupported.push_back(c.name);
                else min_pct = std::min(min_pct, c.pcnt_running);
            }
        }
        if (!unsupported.empty()) {
            bool hardware = std::any_of(unsupported.begin(), unsupported.end(),
                                        [](auto& n) { return !software_events.contains(base_name(n)); });
            warnings_.push_back(fmt::format(
                "perf cannot count {} on this machine{}{}. {}", join(unsupported, ", "),
                hardware ? " (no hardware performance counters: typical of VMs and hosted CI runners)" : "",
                opt_.events.empty() ? "; measuring the supported default events only" : "",
                hardware ? "For deterministic instruction counts without a PMU use --backend callgrind." : ""));
            if (opt_.events.empty()) {
                std::erase_if(events_, [&](auto& e) {
                    return std::find(unsupported.begin(), unsupported.end(), e) != unsupported.end();
                });
                if (events_.empty()) {
                    throw error("measure.perf_unavailable",
                                "perf counts none of the default events here; use --backend rusage or callgrind");
                }
                groups_ = {events_};
                // Forget counters recorded before the decision (a measured
                // first execution); finish_side keeps only active events.
                dropped_ = std::set<std::string, std::less<>>(unsupported.begin(), unsupported.end());
            }
        }
        if (opt_.split_events && min_pct < 100.0) {
            groups_ = split_event_groups(events_, min_pct);
        }
    }

    // A copy: sequential sampling takes one at every look.
    side_samples finish_side(const benchmark_spec& spec, side which) const
    {
        side_samples out;
        out.run.benchmark = spec.name;
        out.run.role = std::string(to_string(which));
        out.run.backend = std::string(to_string(opt_.which));
        for (const auto& c : sides_[which == side::baseline ? 0 : 1]) {
            if (!dropped_.contains(c.counter)) out.run.counters.push_back(c);
        }
        out.warnings = warnings_;
        out.profiles = profiles_[which == side::baseline ? 0 : 1];
        return out;
    }

    const measure_options& opt_;
    std::ostream& progress_;
    steady_clock::time_point run_started_ = steady_clock::now();
    temp_dir dir_{"perfgate-run"};
    std::filesystem::path helper_;
    std::vector<std::string> events_;
    std::vector<std::vector<std::string>> groups_;
    std::map<std::string, native_event, std::less<>> native_events_;   // backend::native: -e name -> what to open
    std::set<std::string, std::less<>> dropped_;
    bool probed_ = false;
    std::size_t executions_ = 0;
    std::array<std::vector<model::counter_samples>, 2> sides_;
    std::array<std::vector<std::filesystem::path>, 2> profiles_;   // keep_profiles: per side
    std::size_t benchmarks_run_ = 0;
    std::map<std::string, double> multiplexed_;   // event -> lowest pcnt_running
    std::vector<std::string> warnings_;
};

} // namespace

std::string_view to_string(backend b)
{
    switch (b) {
    case backend::perf: return "perf";
    case backend::native: return "native";
    case backend::callgrind: return "callgrind";
    case backend::rusage: return "rusage";
    }
    return "perf";
}

std::string_view to_string(run_order o)
{
    switch (o) {
    case run_order::alternate: return "alternate";
    case run_order::random: return "random";
    case run_order::blocked: return "blocked";
    }
    return "alternate";
}

std::string_view to_string(side s) { return s == side::baseline ? "baseline" : "candidate"; }

std::optional<backend> parse_backend(std::string_view s)
{
    for (auto b : {backend::perf, backend::native, backend::callgrind, backend::rusage}) {
        if (to_string(b) == s) return b;
    }
    return std::nullopt;
}

std::optional<run_order> parse_run_order(std::string_view s)
{
    for (auto o : {run_order::alternate, run_order::random, run_order::blocked}) {
        if (to_string(o) == s) return o;
    }
    return std::nullopt;
}

std::vector<slot> make_schedule(int repetitions, int warmup, run_order order, std::uint64_t seed)
{
    PERFGATE_CHECK(repetitions >= 1 && warmup >= 0);
    std::vector<slot> out;
    for (int w = 1; w <= warmup; ++w) {
        out.push_back({side::baseline, w, true});
        out.push_back({side::candidate, w, true});
    }
    switch (order) {
    case run_order::blocked:
        for (int r = 1; r <= repetitions; ++r) out.push_back({side::baseline, r, false});
        for (int r = 1; r <= repetitions; ++r) out.push_back({side::candidate, r, false});
        break;
    case run_order::alternate:
        // ABBA: rounds 1, 3, 5... run baseline first, rounds 2, 4, ... candidate first.
        for (int r = 1; r <= repetitions; ++r) {
            bool baseline_first = r % 2 == 1;
            out.push_back({baseline_first ? side::baseline : side::candidate, r, false});
            out.push_back({baseline_first ? side::candidate : side::baseline, r, false});
        }
        break;
    case run_order::random: {
        // mt19937_64's output sequence is fixed by the standard, unlike the
        // distributions, so the top bit is used directly: same seed, same
        // order, on every standard library.
        std::mt19937_64 gen(seed);
        for (int r = 1; r <= repetitions; ++r) {
            bool baseline_first = (gen() >> 63) != 0;
            out.push_back({baseline_first ? side::baseline : side::candidate, r, false});
            out.push_back({baseline_first ? side::candidate : side::baseline, r, false});
        }
        break;
    }
    }
    return out;
}

std::vector<benchmark_measurement> measure(const std::vector<benchmark_spec>& benchmarks, const measure_options& opt,
                                           std::ostream& progress)
{
    if (opt.repetitions < 1) throw error("usage.bad_value", "repetitions must be at least 1");
    if (const auto& seq = opt.sequential) {
        if (seq->min_repetitions < 2 || seq->block < 1 || seq->max_repetitions < seq->min_repetitions) {
            throw error("usage.bad_value",
                        fmt::format("sequential sampling needs 2 <= min repetitions <= max repetitions and a block "
                                    ">= 1, got {}, {} and {}",
                                    seq->min_repetitions, seq->max_repetitions, seq->block));
        }
    }
    engine eng(opt, progress);
    std::vector<benchmark_measurement> out;
    for (std::size_t i = 0; i < benchmarks.size(); ++i) out.push_back(eng.run(benchmarks[i], benchmarks.size() - i));
    return out;
}

std::string to_perf_csv(const model::run_record& run)
{
    int reps = 0;
    for (auto& c : run.counters) {
        for (auto& s : c.samples) reps = std::max(reps, s.repetition + 1);
    }
    std::string out;
    for (int r = 0; r < reps; ++r) {
        out += fmt::format("# started on perfgate run {} repetition {}\n\n", run.benchmark, r + 1);
        for (auto& c : run.counters) {
            auto it = std::find_if(c.samples.begin(), c.samples.end(), [&](auto& s) { return s.repetition == r; });
            if (it == c.samples.end() || !it->value) {
                out += fmt::format("<not supported>,{},{},0,100.00,,\n", c.unit, c.counter);
            } else {
                // run_time is not known per counter here; perf prints the
                // event's enabled time, a positive number: 1 keeps it valid.
                out += fmt::format("{},{},{},1,{:.2f},,\n", *it->value, c.unit, c.counter, it->pcnt_running);
            }
        }
    }
    return out;
}

model::ingest_request ingest_request_of(const model::run_record& run)
{
    model::ingest_request in;
    in.project = run.project;
    in.benchmark = run.benchmark;
    in.role = run.role;
    in.git_sha = run.git_sha;
    in.branch = run.branch;
    in.pr = run.pr;
    in.testbed = run.testbed;
    in.backend = run.backend;
    in.environment_json = run.environment_json;
    in.perf_csv = to_perf_csv(run);
    return in;
}

std::vector<std::vector<std::string>> split_event_groups(const std::vector<std::string>& events, double min_running_pct)
{
    std::vector<std::string> software, hardware;
    for (auto& e : events) (software_events.contains(base_name(e)) ? software : hardware).push_back(e);
    std::size_t groups = 1;
    if (min_running_pct > 0 && min_running_pct < 100.0) {
        groups = static_cast<std::size_t>(std::ceil(100.0 / min_running_pct));
    }
    groups = std::clamp<std::size_t>(groups, 1, std::max<std::size_t>(hardware.size(), 1));
    std::vector<std::vector<std::string>> out(groups);
    out[0] = software;
    for (std::size_t i = 0; i < hardware.size(); ++i) out[i % groups].push_back(hardware[i]);
    std::erase_if(out, [](auto& g) { return g.empty(); });
    return out;
}

double estimated_cycles(const std::map<std::string, double, std::less<>>& totals)
{
    auto get = [&](std::string_view event) {
        auto it = totals.find(event);
        return it == totals.end() ? 0.0 : it->second;
    };
    const double l1_misses = get("I1mr") + get("D1mr") + get("D1mw");
    const double ll_misses = get("ILmr") + get("DLmr") + get("DLmw");
    return get("Ir") + l1_miss_cycles * l1_misses + ll_miss_cycles * ll_misses;
}

namespace {

// The header and trailer lines parse_callgrind_totals reads, fed one line
// at a time: callgrind files of big programs run to hundreds of MB, and
// only these few lines matter here.
class callgrind_totals_reader {
public:
    void line(std::string_view l)
    {
        if (l.starts_with("events:")) {
            std::istringstream s{std::string(l.substr(7))};
            std::string e;
            events_.clear();
            while (s >> e) events_.push_back(e);
        } else if (l.starts_with("summary:")) {
            summary_ = numbers(l.substr(8));
        } else if (l.starts_with("totals:")) {
            totals_ = numbers(l.substr(7));
        }
    }

    [[nodiscard]] std::vector<std::pair<std::string, double>> result(std::string_view source) const
    {
        // Callgrind's format spec: "summary:" is the total cost, "totals:" the
        // sum of the cost lines; prefer summary, as callgrind_annotate does.
        const auto& values = !summary_.empty() ? summary_ : totals_;
        if (events_.empty() || values.empty()) {
            throw error("measure.failed",
                        fmt::format("{}: not a callgrind output file (no events:/summary: line)", source));
        }
        std::vector<std::pair<std::string, double>> out;
        for (std::size_t i = 0; i < events_.size() && i < values.size(); ++i) out.emplace_back(events_[i], values[i]);
        return out;
    }

private:
    static std::vector<double> numbers(std::string_view rest)
    {
        std::vector<double> v;
        std::istringstream s{std::string(rest)};
        double x;
        while (s >> x) v.push_back(x);
        return v;
    }

    std::vector<std::string> events_;
    std::vector<double> summary_, totals_;
};

} // namespace

std::vector<std::pair<std::string, double>> parse_callgrind_totals(std::string_view text, std::string_view source)
{
    callgrind_totals_reader reader;
    while (!text.empty()) {
        const auto eol = text.find('\n');
        reader.line(text.substr(0, eol));
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    }
    return reader.result(source);
}

std::vector<std::pair<std::string, double>> read_callgrind_totals(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    callgrind_totals_reader reader;
    for (std::string line; std::getline(in, line);) reader.line(line);
    return reader.result(path.string());
}

} // namespace perfgate::runner
