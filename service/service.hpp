// The gate service: the one facade that both the CLI's local mode and the
// HTTP server call, so a verdict is the same on a laptop and on a server.
//
// service::service keeps construction and hands out a facet per resource,
// grouped as the HTTP route table groups routes (server/routes.hpp):
// svc.tokens().create(...), svc.runs().ingest(...), svc.comparisons().compare(...).
// Each facet's header documents its calls; all facets share one
// implementation (service/service_impl.hpp: the store, the caches, the
// committer, the watch and the notifier). A new call goes to the facet of its
// resource (CONTRIBUTING.md); ctest facade_size keeps this class narrow.
#pragma once

#include <cstdint>
#include <memory>

#include "service/acceptances.hpp"
#include "service/alerts.hpp"
#include "service/artifacts.hpp"
#include "service/background.hpp"
#include "service/common.hpp"
#include "service/comparisons.hpp"
#include "service/history.hpp"
#include "service/maintenance.hpp"
#include "service/projects.hpp"
#include "service/qualifications.hpp"
#include "service/runs.hpp"
#include "service/tokens.hpp"
#include "service/webhooks.hpp"

namespace perfgate::service {

class service {
public:
    explicit service(store::store& db);
    // A copy shares the store, the caches, the committer and the watch
    // worker started before it; notify_with and set_change_point_defaults
    // on one copy leave the other as it was.
    service(const service& other);
    service& operator=(const service&) = delete;
    ~service();

    // The service by resource. A const service gives const facets: their
    // reads only.
    perfgate::service::projects& projects() noexcept { return projects_; }
    [[nodiscard]] const perfgate::service::projects& projects() const noexcept { return projects_; }
    perfgate::service::tokens& tokens() noexcept { return tokens_; }
    [[nodiscard]] const perfgate::service::tokens& tokens() const noexcept { return tokens_; }
    perfgate::service::webhooks& webhooks() noexcept { return webhooks_; }
    [[nodiscard]] const perfgate::service::webhooks& webhooks() const noexcept { return webhooks_; }
    perfgate::service::acceptances& acceptances() noexcept { return acceptances_; }
    [[nodiscard]] const perfgate::service::acceptances& acceptances() const noexcept { return acceptances_; }
    perfgate::service::qualifications& qualifications() noexcept { return qualifications_; }
    [[nodiscard]] const perfgate::service::qualifications& qualifications() const noexcept { return qualifications_; }
    perfgate::service::runs& runs() noexcept { return runs_; }
    [[nodiscard]] const perfgate::service::runs& runs() const noexcept { return runs_; }
    perfgate::service::comparisons& comparisons() noexcept { return comparisons_; }
    [[nodiscard]] const perfgate::service::comparisons& comparisons() const noexcept { return comparisons_; }
    perfgate::service::history& history() noexcept { return history_; }
    [[nodiscard]] const perfgate::service::history& history() const noexcept { return history_; }
    perfgate::service::alerts& alerts() noexcept { return alerts_; }
    [[nodiscard]] const perfgate::service::alerts& alerts() const noexcept { return alerts_; }
    perfgate::service::artifacts& artifacts() noexcept { return artifacts_; }
    [[nodiscard]] const perfgate::service::artifacts& artifacts() const noexcept { return artifacts_; }
    perfgate::service::maintenance& maintenance() noexcept { return maintenance_; }
    [[nodiscard]] const perfgate::service::maintenance& maintenance() const noexcept { return maintenance_; }
    perfgate::service::background& background() noexcept { return background_; }
    [[nodiscard]] const perfgate::service::background& background() const noexcept { return background_; }

    // The store's generation (store::generation): what the dashboard's page
    // cache keys on.
    [[nodiscard]] std::uint64_t generation() const noexcept;

private:
    // Declared first: the facets below are constructed on it.
    std::unique_ptr<detail::service_impl> impl_;
    perfgate::service::projects projects_{*impl_};
    perfgate::service::tokens tokens_{*impl_};
    perfgate::service::webhooks webhooks_{*impl_};
    perfgate::service::acceptances acceptances_{*impl_};
    perfgate::service::qualifications qualifications_{*impl_};
    perfgate::service::runs runs_{*impl_};
    perfgate::service::comparisons comparisons_{*impl_};
    perfgate::service::history history_{*impl_};
    perfgate::service::alerts alerts_{*impl_};
    perfgate::service::artifacts artifacts_{*impl_};
    perfgate::service::maintenance maintenance_{*impl_};
    perfgate::service::background background_{*impl_};
};

} // namespace perfgate::service
