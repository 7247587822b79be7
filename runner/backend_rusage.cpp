// --backend rusage: the wall clock around the execution and wait4's rusage,
// nothing else (runner/backend.hpp).
#include "runner/backend.hpp"

namespace perfgate::runner::detail {

namespace {

class rusage_backend final : public backend_base {
public:
    using backend_base::backend_base;

    execution execute(const benchmark_spec& spec, const command& cmd, const std::vector<std::string>&,
                      const where& at) override
    {
        spawn_options so = base_spawn(spec);
        so.argv = cmd.argv;
        execution ex;
        ex.proc = start(so, at);
        if (!ex.proc.status.success()) fail(at, cmd, ex.proc, ex.proc.status);
        add_rusage_counters(ex);
        return ex;
    }
};

} // namespace

std::unique_ptr<backend_base> make_rusage_backend(const measure_options& opt, const std::filesystem::path& scratch)
{
    return std::make_unique<rusage_backend>(opt, scratch);
}

} // namespace perfgate::runner::detail
