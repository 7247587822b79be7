// Subcommands whose implementation has not landed yet report so clearly.
// runner/CMakeLists.txt defines PERFGATE_PENDING_<name> only while
// runner/cmd_<name>.cpp does not exist.
#include "runner/commands.hpp"

#include "stats/error.hpp"

namespace perfgate::runner {
namespace {
[[noreturn, maybe_unused]] void pending(const char* name)
{
    throw error("usage.not_available", std::string("perfgate ") + name + " is not available in this build yet");
}
} // namespace

#ifdef PERFGATE_PENDING_run
int cmd_run(const argv_t&) { pending("run"); }
#endif
#ifdef PERFGATE_PENDING_check_env
int cmd_check_env(const argv_t&) { pending("check-env"); }
#endif
#ifdef PERFGATE_PENDING_serve
int cmd_serve(const argv_t&) { pending("serve"); }
#endif
#ifdef PERFGATE_PENDING_token
int cmd_token(const argv_t&) { pending("token"); }
#endif
#ifdef PERFGATE_PENDING_history
int cmd_history(const argv_t&) { pending("history"); }
#endif
#ifdef PERFGATE_PENDING_upload
int cmd_upload(const argv_t&) { pending("upload"); }
#endif
#ifdef PERFGATE_PENDING_github
int cmd_github(const argv_t&) { pending("github"); }
#endif

} // namespace perfgate::runner
