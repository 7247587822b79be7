// --backend callgrind: each execution under valgrind --tool=callgrind.
// Valgrind runs the workload in its own process, so its exit status is the
// workload's (a fatal signal is re-raised; SIGKILL kills both). Children are
// traced and their costs summed: a benchmark run through a shell script is
// counted whole (runner/backend.hpp).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "model/error.hpp"
#include "runner/backend.hpp"

namespace perfgate::runner::detail {

namespace {

class callgrind_backend final : public backend_base {
public:
    callgrind_backend(const measure_options& opt, const std::filesystem::path& scratch,
                      std::vector<std::string>& warnings)
        : backend_base(opt, scratch), warnings_(warnings)
    {
        if (!executable(opt_.valgrind)) {
            throw error(errors::measure_valgrind_unavailable,
                        fmt::format("--backend callgrind needs valgrind, and '{}' is not in PATH: install it "
                                    "(apt-get install valgrind) or use --backend perf|rusage",
                                    opt_.valgrind));
        }
    }

    execution execute(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>&,
                      const where& at) override
    {
        const auto out_dir = scratch_ / ("cg-" + next_tag());
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
            throw error(errors::measure_failed, fmt::format("{}: callgrind wrote no instruction count for '{}'{}",
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

    void begin_benchmark() override
    {
        ++benchmarks_run_;
        profiles_[0].clear();
        profiles_[1].clear();
    }

    [[nodiscard]] std::vector<std::filesystem::path> profiles(side which) const override
    {
        return profiles_[which == side::baseline ? 0 : 1];
    }

private:
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

    std::vector<std::string>& warnings_;
    std::size_t benchmarks_run_ = 0;
    std::array<std::vector<std::filesystem::path>, 2> profiles_; // per side
};

} // namespace

std::unique_ptr<backend_base> make_callgrind_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                     std::vector<std::string>& warnings)
{
    return std::make_unique<callgrind_backend>(opt, scratch, warnings);
}

} // namespace perfgate::runner::detail
