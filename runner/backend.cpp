// What the measurement backends share (runner/backend.hpp).
#include "runner/backend.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::runner::detail {

namespace {

// Lines of a failing benchmark's stderr quoted in the error message.
constexpr std::size_t stderr_lines_in_message = 10;

const std::set<std::string, std::less<>> software_events = {
    "task-clock",       "cpu-clock", "page-faults",    "faults",     "minor-faults",     "major-faults",
    "context-switches", "cs",        "cpu-migrations", "migrations", "alignment-faults", "emulation-faults",
    "duration_time",    "user_time", "system_time"};

} // namespace

std::string where::text() const
{
    return fmt::format("benchmark '{}', {} side, {} {}/{}", benchmark, to_string(which),
                       warmup ? "warmup round" : "round", round, rounds);
}

bool is_software_event(std::string_view event)
{
    // "task-clock:u" -> "task-clock"
    return software_events.contains(event.substr(0, event.find(':')));
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

std::string stderr_excerpt(const std::vector<std::string>& tail)
{
    if (tail.empty()) return "\n  (it wrote nothing to stderr)";
    std::string out = "\n  last lines of its stderr:";
    std::size_t from = tail.size() > stderr_lines_in_message ? tail.size() - stderr_lines_in_message : 0;
    for (std::size_t i = from; i < tail.size(); ++i) out += "\n    | " + tail[i];
    return out;
}

std::string path_env()
{
    const char* p = std::getenv("PATH");
    return p ? p : "/usr/local/bin:/usr/bin:/bin";
}

bool executable(const std::string& name)
{
    auto p = find_executable(name, path_env());
    return p && ::access(p->c_str(), X_OK) == 0;
}

void add_rusage_counters(execution& ex)
{
    ex.counters.push_back({"wall-time", "ns", static_cast<double>(ex.proc.wall.count()), 100.0});
    ex.counters.push_back({"user-time", "ns", static_cast<double>(ex.proc.user.count()), 100.0});
    ex.counters.push_back({"sys-time", "ns", static_cast<double>(ex.proc.sys.count()), 100.0});
    ex.counters.push_back({"max-rss", "KiB", static_cast<double>(ex.proc.max_rss_kib), 100.0});
}

spawn_options backend_base::base_spawn(const benchmark_spec& spec) const
{
    spawn_options so;
    so.cwd = spec.cwd;
    so.env = spec.env;
    so.drop_secrets = true;
    so.pass_env = opt_.pass_env;
    so.cpus = opt_.cpus;
    so.disable_aslr = !opt_.keep_aslr;
    return so;
}

process_result backend_base::start(const spawn_options& so, const where& at) const
{
    try {
        return run_process(so, opt_.timeout);
    } catch (const error& e) {
        if (e.id() != errors::process_exec_failed) throw;
        throw error(errors::measure_failed, fmt::format("{}: {}", at.text(), e.what()));
    }
}

void backend_base::fail(const where& at, const command& cmd, const process_result& proc, const exit_status& st) const
{
    if (st.timed_out) {
        throw error(errors::measure_timeout,
                    fmt::format("{}: '{}' did not finish within --timeout {:g} s and was killed{}", at.text(), cmd.text,
                                proc.timeout ? static_cast<double>(proc.timeout->count()) / 1000.0 : 0.0,
                                stderr_excerpt(proc.stderr_tail)));
    }
    throw error(errors::measure_failed,
                fmt::format("{}: '{}' {}{}", at.text(), cmd.text, st.describe(), stderr_excerpt(proc.stderr_tail)));
}

void profile_keeping_backend::begin_benchmark()
{
    ++benchmarks_run_;
    profiles_[0].clear();
    profiles_[1].clear();
}

std::vector<std::filesystem::path> profile_keeping_backend::profiles(side which) const
{
    return profiles_[which == side::baseline ? 0 : 1];
}

void profile_keeping_backend::keep_profiles(const std::filesystem::path& out_dir, side which, std::string_view tool)
{
    auto& kept = profiles_[which == side::baseline ? 0 : 1];
    kept.clear();
    try {
        const auto dir = opt_.keep_profiles / fmt::format("{}-{}", benchmarks_run_, to_string(which));
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir);
        std::vector<std::pair<long long, std::filesystem::path>> files;
        for (auto& f : std::filesystem::directory_iterator(out_dir)) {
            const auto name = f.path().filename().string();
            const auto dot = name.find('.');
            files.emplace_back(dot == std::string::npos ? 0 : std::atoll(name.c_str() + dot + 1), f.path());
        }
        std::sort(files.begin(), files.end());
        for (auto& [pid, from] : files) {
            auto to = dir / from.filename();
            std::error_code ec;
            std::filesystem::rename(from, to, ec);
            if (ec) std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
            kept.push_back(std::move(to));
        }
    } catch (const std::exception& e) {
        kept.clear();
        warnings_.push_back(fmt::format("could not keep {}'s output for the attribution: {}", tool, e.what()));
    }
}

} // namespace perfgate::runner::detail
