// --backend native: counters perfgate opens itself with perf_event_open
// (runner/perf_event.hpp) on this thread right before starting the
// benchmark, which inherits them. No perf and no perfgate-exec in between,
// so the exit status, rusage and wall time are the benchmark's own, as
// under rusage (runner/backend.hpp).
#include <fmt/format.h>

#include <functional>
#include <map>

#include "model/error.hpp"
#include "runner/backend.hpp"
#include "runner/perf_event.hpp"

namespace perfgate::runner::detail {

namespace {

class native_backend final : public backend_base {
public:
    native_backend(const measure_options& opt, const std::filesystem::path& scratch,
                   const std::vector<std::string>& events)
        : backend_base(opt, scratch)
    {
        std::vector<native_event> resolved;
        resolved.reserve(events.size());
        for (auto& e : events) resolved.push_back(native_events_.try_emplace(e, resolve_event(e)).first->second);
        // Opening and closing the counters around each execution would
        // otherwise switch the kernel's perf hooks on and off every time.
        keep_perf_hooks_on(resolved);
    }

    execution execute(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>& events,
                      const where& at) override
    {
        std::vector<native_event> group;
        group.reserve(events.size());
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
            if (e.id() != errors::measure_perf_unavailable) throw;
            throw error(e.id(), fmt::format("{}: {}", at.text(), e.what()));
        }
        return ex;
    }

private:
    std::map<std::string, native_event, std::less<>> native_events_; // -e name -> what to open
};

} // namespace

std::unique_ptr<backend_base> make_native_backend(const measure_options& opt, const std::filesystem::path& scratch,
                                                  const std::vector<std::string>& events)
{
    return std::make_unique<native_backend>(opt, scratch, events);
}

} // namespace perfgate::runner::detail
