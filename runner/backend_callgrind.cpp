// --backend callgrind: each execution under valgrind --tool=callgrind.
// Valgrind runs the workload in its own process, so its exit status is the
// workload's (a fatal signal is re-raised; SIGKILL kills both). Children are
// traced and their costs summed: a benchmark run through a shell script is
// counted whole (runner/backend.hpp).
#include <functional>
#include <map>

#include <fmt/format.h>

#include "model/error.hpp"
#include "runner/backend.hpp"

namespace perfgate::runner::detail {

namespace {

class callgrind_backend final : public profile_keeping_backend {
public:
    callgrind_backend(const measure_options& opt, const std::filesystem::path& scratch,
                      std::vector<std::string>& warnings)
        : profile_keeping_backend(opt, scratch, warnings)
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
        if (!opt_.keep_profiles.empty() && !at.warmup) keep_profiles(out_dir, at.which, "callgrind");
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
};

} // namespace

std::unique_ptr<backend_base> make_callgrind_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                     std::vector<std::string>& warnings)
{
    return std::make_unique<callgrind_backend>(opt, scratch, warnings);
}

} // namespace perfgate::runner::detail
