// The culprit perfgate bisect stores on an alert (service::alerts::put_culprit;
// docs/bisect.md "Stored on the alert"): its checks, the store, and the
// "alert.culprit_found" delivery.
#include "service/service_impl.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/acceptance.hpp"
#include "model/error.hpp"
#include "service/text.hpp"
#include "store/alerts.hpp"

namespace perfgate::service {

namespace {

// Names and words the result carries (backend, counter, unit, an effect's
// status): a counter name is at most 256 bytes (capture/names.hpp).
constexpr std::size_t max_culprit_name_bytes = 256;

[[noreturn]] void bad(const std::string& message) { throw error(errors::ingest_bad_field, message); }

void check_sha(const std::string& field, const std::string& sha)
{
    if (!model::is_full_commit_sha(sha)) {
        bad(fmt::format("field '{}': '{}' is not a commit id (40 or 64 lowercase hex digits)", field,
                        utf8_prefix(sha, 80)));
    }
}

// One clean line (or, multiline, lines) of 1 (0 when may_be_empty) to max bytes.
void check_text(const std::string& field, const std::string& value, std::size_t max, bool may_be_empty = false,
                text_kind kind = text_kind::line)
{
    if (value.empty() && !may_be_empty) bad(fmt::format("field '{}': must not be empty", field));
    if (value.size() > max) bad(fmt::format("field '{}': {} bytes; at most {}", field, value.size(), max));
    check_stored_text(errors::ingest_bad_field, field, value, kind);
}

void check_number(const std::string& field, const std::optional<double>& v)
{
    if (v && !std::isfinite(*v)) bad(fmt::format("field '{}': not a finite number", field));
}

void check_effects(const std::string& at, const std::vector<model::culprit_effect>& effects)
{
    if (effects.size() > model::max_culprit_effects) {
        bad(fmt::format("field '{}effects': {} effects; at most {}", at, effects.size(), model::max_culprit_effects));
    }
    for (std::size_t j = 0; j < effects.size(); ++j) {
        const auto& e = effects[j];
        const std::string here = fmt::format("{}effects[{}].", at, j);
        check_text(here + "counter", e.counter, max_culprit_name_bytes);
        check_text(here + "unit", e.unit, max_culprit_name_bytes, true);
        check_text(here + "status", e.status, max_culprit_name_bytes);
        check_number(here + "before", e.before);
        check_number(here + "after", e.after);
        check_number(here + "delta_pct", e.delta_pct);
        check_number(here + "ci_pct[0]", e.ci_lower_pct);
        check_number(here + "ci_pct[1]", e.ci_upper_pct);
    }
}

// The request's checks (alerts.hpp): everything a field can be wrong in,
// before the store is touched.
void check_culprit(const model::alert_culprit& k)
{
    check_text("backend", k.backend, max_culprit_name_bytes);
    check_text("counter", k.counter, max_culprit_name_bytes);
    check_sha("good", k.good_sha);
    check_sha("bad", k.bad_sha);
    for (const auto& [name, n] : {std::pair{"commits", k.commits}, {"steps", k.steps}, {"builds", k.builds}}) {
        if (n < 0) bad(fmt::format("field '{}': {} is negative", name, n));
    }
    check_text("detail", k.detail, model::max_culprit_detail_bytes, true, text_kind::multiline);
    if (k.culprits.size() > model::max_culprit_commits) {
        bad(fmt::format("field 'culprits': {} culprits; at most {}", k.culprits.size(), model::max_culprit_commits));
    }
    if (k.status == model::culprit_status::found && k.culprits.empty()) {
        bad("field 'culprits': status 'found' names at least one culprit");
    }
    if (k.status == model::culprit_status::no_change && !k.culprits.empty()) {
        bad("field 'culprits': status 'no_change' has no culprit");
    }
    for (std::size_t i = 0; i < k.culprits.size(); ++i) {
        const auto& m = k.culprits[i];
        const std::string at = fmt::format("culprits[{}].", i);
        check_sha(at + "sha", m.sha);
        check_text(at + "subject", m.subject, model::max_culprit_text_bytes, true);
        check_text(at + "author", m.author, model::max_culprit_text_bytes, true);
        if (!std::isfinite(m.share) || m.share < 0) {
            bad(fmt::format("field '{}share': expected a finite number at least 0", at));
        }
        check_effects(at, m.effects);
    }
}

} // namespace

model::alert detail::service_impl::put_culprit(const std::string& project, std::int64_t id,
                                               const model::alert_culprit& culprit,
                                               const std::optional<model::token_ref>& by)
{
    require_project(project);
    check_culprit(culprit);
    auto a = db_.alerts().put_culprit(project, id, culprit, by);
    if (!a) throw error(errors::alert_not_found, fmt::format("project '{}' has no alert {}", project, id));
    if (notifier_ && culprit.status == model::culprit_status::found) notifier_->notify(event_alert_culprit_found, *a);
    return *a;
}

} // namespace perfgate::service
