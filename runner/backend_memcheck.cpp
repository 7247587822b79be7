// --backend memcheck (issue 32): each execution runs twice under valgrind,
// children traced, both counts deterministic:
//   valgrind --tool=memcheck --xml=yes --leak-check=full   errors and leaks
//   valgrind --tool=dhat                                   the heap
// Why DHAT for the heap: one run gives the totals (blocks and bytes
// allocated), the peak ("At t-gmax": bytes live at the moment the heap was
// largest, exact at every allocation and free, where massif samples
// snapshots) and the per-site data of all three, in JSON. Memcheck's XML has
// no heap summary (only its text output does).
// Counters: heap-allocs, heap-bytes, heap-peak-bytes (DHAT), leaked-bytes
// (definitely + indirectly lost) and memcheck-errors (memcheck), and
// memcheck-suppressed (not gated: errors the --suppressions files hid).
// Valgrind runs the workload in its own process, so its exit status is the
// workload's: a crash fails the execution with valgrind's message in the
// stderr excerpt.

#include <fmt/format.h>

#include "model/error.hpp"
#include "profile/valgrind_memory.hpp"
#include "runner/backend.hpp"

namespace perfgate::runner::detail {

namespace {

class memcheck_backend final : public profile_keeping_backend {
public:
    memcheck_backend(const measure_options& opt, const std::filesystem::path& scratch,
                     std::vector<std::string>& warnings)
        : profile_keeping_backend(opt, scratch, warnings)
    {
        if (!executable(opt_.valgrind)) {
            throw error(errors::measure_valgrind_unavailable,
                        fmt::format("--backend memcheck needs valgrind, and '{}' is not in PATH: install it "
                                    "(apt-get install valgrind, dnf install valgrind, brew install valgrind) or use "
                                    "--backend perf|rusage",
                                    opt_.valgrind));
        }
    }

    execution execute(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>&,
                      const where& at) override
    {
        const auto out_dir = scratch_ / ("mc-" + next_tag());
        std::filesystem::create_directory(out_dir);
        execution ex;
        // %p: one file per process of the traced tree.
        spawn_options mc = base_spawn(spec);
        mc.argv = {opt_.valgrind,       "--tool=memcheck",      "--xml=yes",
                   "--leak-check=full", "--trace-children=yes", "--xml-file=" + (out_dir / "memcheck.%p.xml").string()};
        for (const auto& s : opt_.suppressions) mc.argv.push_back("--suppressions=" + s.string());
        mc.argv.insert(mc.argv.end(), cmd.argv.begin(), cmd.argv.end());
        ex.proc = start(mc, at);
        if (!ex.proc.status.success()) {
            // In XML mode valgrind says what went wrong in the XML, not on
            // stderr: its errors go into the message.
            add_valgrind_errors(out_dir, ex.proc.stderr_tail);
            fail(at, cmd, ex.proc, ex.proc.status);
        }

        spawn_options dh = base_spawn(spec);
        dh.argv = {opt_.valgrind, "--tool=dhat", "-q", "--trace-children=yes",
                   "--dhat-out-file=" + (out_dir / "dhat.%p.json").string()};
        dh.argv.insert(dh.argv.end(), cmd.argv.begin(), cmd.argv.end());
        const auto dhat_proc = start(dh, at);
        if (!dhat_proc.status.success()) fail(at, cmd, dhat_proc, dhat_proc.status);

        profile::memcheck_result mc_total;
        profile::dhat_result dh_total;
        bool any_memcheck = false, any_dhat = false;
        for (auto& f : std::filesystem::directory_iterator(out_dir)) {
            const auto name = f.path().filename().string();
            if (name.starts_with("memcheck.")) {
                profile::merge(mc_total, profile::read_memcheck_xml(f.path()));
                any_memcheck = true;
            } else if (name.starts_with("dhat.")) {
                profile::merge(dh_total, profile::read_dhat_json(f.path()));
                any_dhat = true;
            }
        }
        if (!any_memcheck || !any_dhat) {
            throw error(errors::measure_failed,
                        fmt::format("{}: valgrind wrote no {} output for '{}'{}", at.text(),
                                    any_memcheck ? "DHAT" : "memcheck XML", cmd.text,
                                    stderr_excerpt(any_memcheck ? dhat_proc.stderr_tail : ex.proc.stderr_tail)));
        }
        if (!opt_.keep_profiles.empty() && !at.warmup) keep_profiles(out_dir, at.which, "valgrind");
        std::filesystem::remove_all(out_dir);
        auto count = [](long long v) { return static_cast<double>(v); };
        ex.counters.push_back({"heap-allocs", "", count(dh_total.blocks), 100.0});
        ex.counters.push_back({"heap-bytes", "B", count(dh_total.bytes), 100.0});
        ex.counters.push_back({"heap-peak-bytes", "B", count(dh_total.peak_bytes), 100.0});
        ex.counters.push_back({"leaked-bytes", "B", count(mc_total.leaked_bytes), 100.0});
        ex.counters.push_back({"memcheck-errors", "", count(mc_total.error_count), 100.0});
        ex.counters.push_back({"memcheck-suppressed", "", count(mc_total.suppressed), 100.0});
        return ex;
    }

private:
    // The errors of a failed execution's memcheck XML, as lines for the
    // stderr excerpt: "valgrind: Invalid read of size 4 (InvalidRead) at
    // main (prog.c:80)". Best effort: an unreadable file adds nothing.
    static void add_valgrind_errors(const std::filesystem::path& out_dir, std::vector<std::string>& tail)
    {
        std::error_code ec;
        for (auto& f : std::filesystem::directory_iterator(out_dir, ec)) {
            if (!f.path().filename().string().starts_with("memcheck.")) continue;
            try {
                for (const auto& e : profile::read_memcheck_xml(f.path()).errors) {
                    tail.push_back(fmt::format("valgrind: {} ({}) at {}", e.what, e.kind,
                                               e.stack.empty() ? std::string("?") : e.stack.front().text));
                }
            } catch (const std::exception&) {
                // The excerpt keeps valgrind's stderr alone.
            }
        }
    }
};

} // namespace

std::unique_ptr<backend_base> make_memcheck_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                    std::vector<std::string>& warnings)
{
    return std::make_unique<memcheck_backend>(opt, scratch, warnings);
}

} // namespace perfgate::runner::detail
