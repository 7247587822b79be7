#include "runner/profile_run.hpp"

#include "runner/attribution.hpp"

#include <csignal>

#include <algorithm>
#include <fstream>
#include <ostream>
#include <system_error>

#include <fmt/format.h>

#include "model/error.hpp"
#include "model/file.hpp"
#include "profile/flamegraph.hpp"
#include "profile/perf_diff.hpp"
#include "profile/perf_script.hpp"
#include "runner/perf_event.hpp"
#include "runner/process.hpp"

namespace perfgate::runner {

namespace {

using profile::folded_stacks;

// Lines of perf's stderr quoted in a message.
constexpr std::size_t profile_stderr_lines = 6;

std::string profile_stderr(const std::vector<std::string>& tail)
{
    if (tail.empty()) return "";
    std::string out = "; its stderr ended with:";
    const std::size_t from = tail.size() > profile_stderr_lines ? tail.size() - profile_stderr_lines : 0;
    for (std::size_t i = from; i < tail.size(); ++i) out += "\n    | " + tail[i];
    return out;
}

bool stderr_mentions(const std::vector<std::string>& tail, std::string_view needle)
{
    return std::any_of(tail.begin(), tail.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
}

// kernel.perf_event_paranoid, for messages.
std::string paranoid_setting()
{
    auto v = model::read_file_if_readable("/proc/sys/kernel/perf_event_paranoid");
    return v ? v->substr(0, v->find('\n')) : "unknown";
}

std::string size_text(std::uint64_t bytes)
{
    const auto b = static_cast<double>(bytes);
    return bytes >= (1u << 20) ? fmt::format("{:g} MB", b / (1024.0 * 1024.0)) : fmt::format("{:g} KB", b / 1024.0);
}

std::uint64_t file_size_or_zero(const std::filesystem::path& p)
{
    std::error_code ec;
    const auto n = std::filesystem::file_size(p, ec);
    return ec ? 0 : n;
}

// perf's command name for a process: the executable's base name, cut to the
// kernel's TASK_COMM_LEN - 1 = 15 characters.
std::string comm_of(const command& cmd)
{
    if (cmd.argv.empty()) return {};
    return std::filesystem::path(cmd.argv[0]).filename().string().substr(0, 15);
}

// Renames the root frame (the process name) `from` to `to`: the baseline and
// the candidate are often differently named builds of one program, whose
// stacks must meet in the flame graph.
folded_stacks rename_process(const folded_stacks& f, const std::string& from, const std::string& to)
{
    if (from.empty() || to.empty() || from == to) return f;
    folded_stacks out = f;
    out.stacks.clear();
    for (const auto& [stack, n] : f.stacks) {
        const auto semi = stack.find(';');
        const bool renamed = stack.substr(0, semi) == from;
        out.stacks[renamed ? to + (semi == std::string::npos ? "" : stack.substr(semi)) : stack] += n;
    }
    return out;
}

folded_stacks merge_profiles(const std::vector<folded_stacks>& executions)
{
    folded_stacks out;
    for (const auto& f : executions) {
        for (const auto& [stack, n] : f.stacks) out.stacks[stack] += n;
        for (const auto& [dso, n] : f.unsymbolized_leaves) out.unsymbolized_leaves[dso] += n;
        out.samples += f.samples;
        out.total += f.total;
    }
    return out;
}

void write_artifact(const std::filesystem::path& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw error(errors::profile_artifacts, fmt::format("cannot write {}", path.string()));
}

// Where a profiled execution sits, for messages.
struct profile_where {
    std::string_view benchmark;
    side which;
    int execution, executions;

    [[nodiscard]] std::string text() const
    {
        return fmt::format("benchmark '{}', {} side, profiled execution {}/{}", benchmark, to_string(which), execution,
                           executions);
    }
};

class profiler {
public:
    profiler(const benchmark_spec& spec, const measure_options& measured, const profile_options& o, std::string event)
        : spec_(spec), measured_(measured), opt_(o), event_(std::move(event))
    {}

    // The two sides' folded profiles, one per execution, sides alternating.
    void record_all()
    {
        for (int i = 1; i <= opt_.executions; ++i) {
            for (side s : {side::baseline, side::candidate}) {
                const profile_where at{spec_.name, s, i, opt_.executions};
                auto& sink = s == side::baseline ? before_ : after_;
                sink.push_back(profile_one(s == side::baseline ? spec_.baseline : spec_.candidate, at));
            }
        }
    }

    [[nodiscard]] const std::vector<folded_stacks>& before() const { return before_; }
    [[nodiscard]] const std::vector<folded_stacks>& after() const { return after_; }

private:
    folded_stacks profile_one(const command& cmd, const profile_where& at)
    {
        const auto tag = fmt::format("{}-{}", to_string(at.which), at.execution);
        const auto data = dir_.path() / (tag + ".data");
        const auto script = dir_.path() / (tag + ".script");
        record(cmd, data, at);
        run_script(data, script, at);
        std::filesystem::remove(data);
        try {
            auto folded = profile::read_perf_script(script, {}, tag + ".script");
            std::filesystem::remove(script);
            return folded;
        } catch (const error& e) {
            throw error(e.id(), fmt::format("{}: perf script's output could not be read: {}", at.text(), e.what()));
        }
    }

    spawn_options spawn_for(std::vector<std::string> argv) const
    {
        spawn_options so;
        so.argv = std::move(argv);
        so.cwd = spec_.cwd;
        so.env = spec_.env;
        so.drop_secrets = true;
        so.pass_env = measured_.pass_env;
        so.cpus = measured_.cpus;
        so.disable_aslr = !measured_.keep_aslr;
        return so;
    }

    process_result run_perf(const spawn_options& so, const profile_where& at) const
    {
        try {
            return run_process(so, measured_.timeout);
        } catch (const error& e) {
            if (e.id() != errors::process_exec_failed) throw;
            throw error(errors::profile_perf_unavailable,
                        fmt::format("{}: {}. perf is needed for --profile: install it (Debian: apt-get install "
                                    "linux-perf; Ubuntu: linux-tools-$(uname -r))",
                                    at.text(), e.what()));
        }
    }

    void record(const command& cmd, const std::filesystem::path& data, const profile_where& at)
    {
        // -N: no copy of every binary into ~/.debug (perf script reads them
        // at once, where they are). --no-bpf-event: no BPF side-band thread,
        // whose 1 s poll timeout perf 6.1 waits out at every exit (0.36 s
        // instead of 1.15 s for a 0.16 s benchmark); benchmarks are not BPF
        // programs. Not -q: it would also silence "perf size limit reached".
        std::vector<std::string> argv = {
            opt_.perf, "record", "-g", "-N",          "--no-bpf-event",
            "-e",      event_,   "-o", data.string(), fmt::format("--max-size={}K", opt_.max_script_bytes / 1024),
            "--"};
        argv.insert(argv.end(), cmd.argv.begin(), cmd.argv.end());
        spawn_options so = spawn_for(std::move(argv));
        so.env = for_side(spec_, at.which).env; // and this side's --baseline-env/--candidate-env
        const auto proc = run_perf(so, at);
        const auto& tail = proc.stderr_tail;
        if (proc.status.timed_out) {
            throw error(errors::profile_timeout,
                        fmt::format("{}: '{}' did not finish within --timeout under perf record", at.text(), cmd.text));
        }
        if (stderr_mentions(tail, "perf_event_paranoid") || stderr_mentions(tail, "Access to performance monitoring")) {
            throw error(errors::profile_perf_refused,
                        fmt::format("{}: perf record was refused by the kernel (kernel.perf_event_paranoid = {}): no "
                                    "profile. {}",
                                    at.text(), paranoid_setting(), perf_paranoid_fix));
        }
        if (!proc.status.success()) {
            // perf record exits with the workload's status, or with its own
            // when it could not record: the stderr tells which.
            throw error(errors::profile_record_failed,
                        fmt::format("{}: perf record -g -e {} -- '{}' {}{}", at.text(), event_, cmd.text,
                                    proc.status.describe(), profile_stderr(tail)));
        }
        // --max-size stops the recording there ("perf size limit reached";
        // the file ends just below the limit): the rest of the execution is
        // missing from the profile. Its perf script text would be larger still.
        if (stderr_mentions(tail, "size limit reached") || file_size_or_zero(data) >= opt_.max_script_bytes) {
            too_large(at, "perf record's data");
        }
    }

    void run_script(const std::filesystem::path& data, const std::filesystem::path& script, const profile_where& at)
    {
        spawn_options so = spawn_for({opt_.perf, "script", "-i", data.string()});
        so.cpus.clear(); // perf script is not the benchmark: no pinning, no ASLR change needed
        so.disable_aslr = false;
        so.stdout_file = script;
        so.max_file_bytes = opt_.max_script_bytes;
        const auto proc = run_perf(so, at);
        if (!proc.status.exited && proc.status.signal == SIGXFSZ) too_large(at, "perf script's output");
        if (!proc.status.success()) {
            throw error(errors::profile_script_failed,
                        fmt::format("{}: perf script {}{}", at.text(), proc.status.describe(),
                                    profile_stderr(proc.stderr_tail)));
        }
        if (file_size_or_zero(script) > opt_.max_script_bytes) too_large(at, "perf script's output");
    }

    [[noreturn]] void too_large(const profile_where& at, std::string_view what) const
    {
        throw error(
            errors::profile_too_large,
            fmt::format("{}: {} exceeds the limit of {} (--profile-max-mb): no profile. Profile fewer or shorter "
                        "executions (--profile-executions, a smaller workload) or raise the limit",
                        at.text(), what, size_text(opt_.max_script_bytes)));
    }

    const benchmark_spec& spec_;
    const measure_options& measured_;
    const profile_options& opt_;
    std::string event_;
    temp_dir dir_{"perfgate-profile"};
    std::vector<folded_stacks> before_, after_;
};

// The objects whose samples have no symbols, when they are more than
// stripped_share_limit of the side's samples: "NN% in /path (stripped?)".
std::optional<std::string> stripped_objects(const folded_stacks& side)
{
    std::uint64_t unnamed = 0;
    std::vector<std::pair<std::uint64_t, std::string>> objects;
    for (const auto& [dso, n] : side.unsymbolized_leaves) {
        if (dso.starts_with('[')) continue; // [kernel.kallsyms], [vdso]: not the benchmark's binaries
        unnamed += n;
        objects.emplace_back(n, dso);
    }
    if (side.samples == 0 || static_cast<double>(unnamed) <= stripped_share_limit * static_cast<double>(side.samples)) {
        return std::nullopt;
    }
    std::sort(objects.rbegin(), objects.rend());
    std::string names;
    for (std::size_t i = 0; i < objects.size() && i < 3; ++i) {
        names += fmt::format("{}{} ({:.0f}%)", i ? ", " : "", objects[i].second,
                             100.0 * static_cast<double>(objects[i].first) / static_cast<double>(side.samples));
    }
    return names;
}

std::optional<gate::attribution_error> stripped_error(const folded_stacks& before, const folded_stacks& after)
{
    auto b = stripped_objects(before);
    auto a = stripped_objects(after);
    if (!b && !a) return std::nullopt;
    std::string where = a ? "candidate: " + *a : "";
    if (b) where += (where.empty() ? "" : "; ") + ("baseline: " + *b);
    return gate::attribution_error{
        "perf", "profile.stripped",
        fmt::format("samples without function names, shown as [unknown] ({}): the binary is stripped or has no "
                    "symbol table, so the top functions and the flame graph cannot name its code. Fix: build "
                    "without stripping (no -s or strip; -g also gives source lines), or install its debug symbols "
                    "(the -dbgsym/-dbg package); frame pointers (-fno-omit-frame-pointer) give full stacks",
                    where)};
}

gate::perf_attribution attribution_of(const profile::self_sample_diff& d, const std::string& event, int executions)
{
    gate::perf_attribution p;
    p.event = event;
    p.executions = static_cast<std::size_t>(executions);
    p.samples_before = static_cast<double>(d.samples_before);
    p.samples_after = static_cast<double>(d.samples_after);
    for (const auto& c : d.top) {
        gate::function_change row;
        row.name = c.name;
        row.before = static_cast<double>(c.before);
        row.after = static_cast<double>(c.after);
        row.delta = row.after - row.before;
        row.share = c.share_of_change;
        row.interval = std::pair{c.lo_pp, c.hi_pp};
        row.significant = c.significant;
        p.top.push_back(std::move(row));
    }
    return p;
}

// The flame graph and the folded stacks into ARTIFACTS/<benchmark>/; returns
// the SVG's path relative to ARTIFACTS.
std::string write_flame_graph(const benchmark_spec& spec, const profile_options& o, const folded_stacks& before,
                              const folded_stacks& after, const std::string& event)
{
    profile::flame_graph_options fo;
    fo.title = fmt::format("perfgate: {} (candidate vs baseline)", spec.name);
    fo.subtitle = fmt::format("{}: candidate {} samples, baseline {}, {} profiled execution(s) per side", event,
                              after.samples, before.samples, o.executions);
    const auto svg = profile::differential_flame_graph(before, after, fo);
    // The directory --artifacts uses for this benchmark (names are encoded: runner/attribution.hpp).
    const auto dir = artifact_dir(o.artifacts, spec.name);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw error(errors::profile_artifacts, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    write_artifact(dir / "flame.svg", svg);
    write_artifact(dir / "baseline.folded", profile::format_folded(before));
    write_artifact(dir / "candidate.folded", profile::format_folded(after));
    return (dir.lexically_relative(o.artifacts) / "flame.svg").generic_string();
}

} // namespace

std::string profile_event(const std::string& perf)
{
    spawn_options so;
    so.argv = {perf, "stat", "-x", ",", "-e", "cycles", "--", "true"};
    so.env.emplace_back("LC_ALL", "C");
    try {
        // perf stat -x writes its CSV to stderr: "123456,,cycles,..." when
        // counted, "<not supported>,,cycles,..." without a PMU.
        const auto proc = run_process(so, std::chrono::seconds(30));
        for (const auto& line : proc.stderr_tail) {
            if (!line.empty() && line[0] >= '0' && line[0] <= '9' && line.find(",cycles") != std::string::npos)
                return "cycles";
        }
    } catch (const error&) {
        // No perf at all: the recording says so with the fix.
    }
    return "cpu-clock";
}

gate::attribution profile_benchmark(const benchmark_spec& spec, const measure_options& measured,
                                    const profile_options& options)
{
    gate::attribution out;
    try {
        const std::string event = options.event.value_or(profile_event(options.perf));
        profiler p(spec, measured, options, event);
        p.record_all();
        // The flame graph matches stacks by the process name at their root.
        const auto after = merge_profiles(p.after());
        const auto before = rename_process(merge_profiles(p.before()), comm_of(spec.baseline), comm_of(spec.candidate));
        const auto diff = profile::diff_self_samples(p.before(), p.after(), options.top);
        out.perf = attribution_of(diff, event, options.executions);
        if (auto stripped = stripped_error(before, after)) out.errors.push_back(*stripped);
        out.perf->flame_graph = write_flame_graph(spec, options, before, after, event);
    } catch (const error& e) {
        out.errors.push_back({"perf", e.id(), e.what()});
    } catch (const std::exception& e) {
        // Profiling must not take the verdict down with it (std::bad_alloc on
        // a huge profile, a filesystem error).
        out.errors.push_back({"perf", "profile.failed", fmt::format("benchmark '{}': {}", spec.name, e.what())});
    }
    return out;
}

std::vector<std::string> attribution_warnings(const std::string& benchmark, const gate::attribution& a)
{
    std::vector<std::string> out;
    for (const auto& e : a.errors)
        out.push_back(fmt::format("profiling '{}' ({}): {}", benchmark, e.source, e.message));
    return out;
}

std::vector<std::string> attach_profiles(gate::report& r, const std::vector<benchmark_spec>& benchmarks,
                                         const measure_options& measured, const profile_options& options,
                                         std::ostream& progress, bool quiet)
{
    std::vector<std::string> warnings;
    profile_options o = options;
    if (!o.event) o.event = profile_event(o.perf); // once for all benchmarks
    for (auto& b : r.benchmarks) {
        auto spec = std::find_if(benchmarks.begin(), benchmarks.end(), [&](const auto& s) { return s.name == b.name; });
        if (spec == benchmarks.end()) continue;
        if (!quiet) {
            progress << fmt::format("perfgate: {}: profiling {} execution(s) per side (perf record -g -e {})\n", b.name,
                                    o.executions, *o.event)
                     << std::flush;
        }
        auto a = profile_benchmark(*spec, measured, o);
        auto lines = attribution_warnings(b.name, a);
        warnings.insert(warnings.end(), lines.begin(), lines.end());
        if (!b.attribution_info) b.attribution_info.emplace();
        b.attribution_info->perf = std::move(a.perf);
        b.attribution_info->errors.insert(b.attribution_info->errors.end(), a.errors.begin(), a.errors.end());
    }
    return warnings;
}

} // namespace perfgate::runner
