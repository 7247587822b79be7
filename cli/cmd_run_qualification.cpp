#include "cli/cmd_run_qualification.hpp"

#include <exception>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "model/error.hpp"
#include "model/qualification.hpp"
#include "report/qualification.hpp"
#include "service/qualifications.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

std::string add_qualification(target& where, const std::string& fingerprint, gate::report& r)
{
    if (fingerprint.empty()) return {};
    try {
        std::vector<model::qualification> stored;
        if (where.server) {
            stored = where.server->qualifications(fingerprint);
        } else {
            if (!store::is_postgres(where.db.string()) && !std::filesystem::exists(where.db)) return {};
            store::store db(where.db);
            service::service svc(db);
            stored = svc.qualifications().newest(where.project, fingerprint);
        }
        report::attach_qualifications(r, fingerprint, stored);
        return {};
    } catch (const std::exception& e) {
        // Advice only: the report stays as the gate made it.
        r.qualification.reset();
        r.advice.clear();
        return fmt::format("the testbed's qualification was not read, so the report has no qualification line: {}",
                           e.what());
    }
}

} // namespace perfgate::cli
