// --backend perf: each execution under `perf stat -x,`, the workload
// wrapped in perfgate-exec, which reports its true exit status, rusage and
// peak RSS (see exec_helper.cpp; runner/backend.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "capture/perf_csv.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/backend.hpp"
#include "runner/perf_event.hpp"

namespace perfgate::runner::detail {

namespace {

// A file the run itself wrote; empty when it is missing (a workload that
// never started leaves no status file: the caller reports that).
std::string read_output(const std::filesystem::path& p) { return model::read_file_if_readable(p).value_or(""); }

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

class perf_backend final : public backend_base {
public:
    perf_backend(const measure_options& opt, const std::filesystem::path& scratch) : backend_base(opt, scratch)
    {
        resolve_perf();
    }

    // The workload's true outcome comes from perfgate-exec's status file,
    // not from perf's exit status (see exec_helper.cpp); an empty status
    // file means perf itself failed.
    execution execute(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>& events,
                      const where& at) override
    {
        const std::string tag = next_tag();
        const auto out_file = scratch_ / ("perf-" + tag + ".csv");
        const auto status_file = scratch_ / ("status-" + tag);

        execution ex;
        ex.proc = start(perf_spawn(spec, cmd, events, out_file, status_file), at);
        if (ex.proc.status.timed_out) fail(at, cmd, ex.proc, ex.proc.status);
        read_status(read_output(status_file), at, cmd, events, ex);
        if (!ex.proc.status.success()) perf_failed(at, events, ex.proc);

        capture::perf_capture cap;
        try {
            cap = capture::parse_perf_stat(read_output(out_file), out_file.filename().string());
        } catch (const error& e) {
            throw error(errors::measure_perf_unavailable,
                        fmt::format("{}: perf stat's output could not be read: {}", at.text(), e.what()));
        }
        std::filesystem::remove(out_file);
        std::filesystem::remove(status_file);
        if (cap.runs.size() != 1) {
            throw error(errors::measure_perf_unavailable,
                        fmt::format("{}: expected one run in perf stat's output, found {}", at.text(),
                                    cap.runs.size()));
        }
        for (std::size_t e = 0; e < cap.events.size(); ++e) {
            const auto& r = cap.runs[0][e];
            ex.counters.push_back({cap.events[e].name, cap.events[e].unit, r.value, r.pcnt_running});
        }
        return ex;
    }

private:
    void resolve_perf()
    {
        if (!executable(opt_.perf)) {
            throw error(errors::measure_perf_unavailable,
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
        throw error(errors::measure_helper_missing,
                    fmt::format("perfgate-exec (the workload wrapper that reports the benchmark's exit status to "
                                "perfgate) was not found{}; install it next to the perfgate executable or in PATH",
                                opt_.exec_helper.empty() ? "" : " at " + opt_.exec_helper.string()));
    }

    // perf stat -x, -o OUT -e EVENTS -- perfgate-exec STATUS [locale] -- CMD
    spawn_options perf_spawn(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>& events,
                             const std::filesystem::path& out_file, const std::filesystem::path& status_file) const
    {
        spawn_options so = base_spawn(spec);
        // clang-format off
        so.argv = {opt_.perf, "stat", "-x", ",", "-o", out_file.string(), "-e", join(events, ","), "--",
                   helper_.string(), status_file.string()};
        // clang-format on
        auto restore = locale_restore_args(spec.env);
        so.argv.insert(so.argv.end(), restore.begin(), restore.end());
        so.argv.push_back("--");
        so.argv.insert(so.argv.end(), cmd.argv.begin(), cmd.argv.end());
        so.env.emplace_back("LC_ALL", "C");
        return so;
    }

    // perfgate-exec's status file: "exec ERRNO", or "exit CODE" / "signal
    // N" followed by the workload's user ns, sys ns and max RSS KiB.
    void read_status(const std::string& text, const where& at, const command& cmd,
                     const std::vector<std::string>& events, execution& ex) const
    {
        std::istringstream status_text(text);
        std::string kind;
        int value = 0;
        if (!(status_text >> kind >> value)) perf_failed(at, events, ex.proc);
        if (kind == "exec") {
            throw error(errors::measure_failed,
                        fmt::format("{}: cannot execute '{}': {}{}", at.text(), cmd.text,
                                    std::system_category().message(value), stderr_excerpt(ex.proc.stderr_tail)));
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
    }

    [[noreturn]] void perf_failed(const where& at, const std::vector<std::string>& events,
                                  const process_result& proc) const
    {
        const auto& tail = proc.stderr_tail;
        if (contains(tail, "perf_event_paranoid") || contains(tail, "Access to performance monitoring")) {
            throw error(errors::measure_perf_unavailable,
                        fmt::format("{}: perf refused to count (kernel.perf_event_paranoid). {}{}", at.text(),
                                    perf_paranoid_fix, stderr_excerpt(tail)));
        }
        if (contains(tail, "event syntax error") || contains(tail, "Cannot find PMU") ||
            (proc.status.exited && proc.status.code == 129)) {
            throw error(errors::usage_bad_event, fmt::format("perf stat rejected the event list '{}'{}",
                                                             join(events, ","), stderr_excerpt(tail)));
        }
        throw error(errors::measure_perf_unavailable,
                    fmt::format("{}: perf stat failed ({}) before the benchmark ran{}", at.text(),
                                proc.status.describe(), stderr_excerpt(tail)));
    }

    std::filesystem::path helper_; // perfgate-exec
};

} // namespace

std::unique_ptr<backend_base> make_perf_backend(const measure_options& opt, const std::filesystem::path& scratch)
{
    return std::make_unique<perf_backend>(opt, scratch);
}

} // namespace perfgate::runner::detail
