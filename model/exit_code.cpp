#include "model/exit_code.hpp"

namespace perfgate {

int exit_code_for(std::string_view id)
{
    for (std::string_view prefix : {"usage.", "ingest.", "policy.", "input.", "compare.", "alert.", "query."}) {
        if (id.starts_with(prefix)) return exit_usage;
    }
    // The user's mistakes, met on the way to a server: a malformed URL, a
    // token it refuses, a request it rejects. An unreachable or failing
    // server is an environment failure (4), like perf being unusable.
    for (std::string_view exact : {"http.bad_url", "server.auth", "server.rejected"}) {
        if (id == exact) return exit_usage;
    }
    return exit_measurement;
}

} // namespace perfgate
