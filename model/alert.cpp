#include "model/alert.hpp"

#include <array>
#include <utility>

namespace perfgate::model {

namespace {
constexpr std::array<std::pair<alert_status, std::string_view>, 5> status_names{{
    {alert_status::untriaged, "untriaged"},
    {alert_status::acknowledged, "acknowledged"},
    {alert_status::invalid, "invalid"},
    {alert_status::wontfix, "wontfix"},
    {alert_status::fixed, "fixed"},
}};
} // namespace

std::string_view to_string(alert_status s)
{
    for (const auto& [status, name] : status_names) {
        if (status == s) return name;
    }
    return "untriaged";
}

std::optional<alert_status> parse_alert_status(std::string_view s)
{
    for (const auto& [status, name] : status_names) {
        if (name == s) return status;
    }
    return std::nullopt;
}

std::string_view alert_status_names() { return "untriaged | acknowledged | invalid | wontfix | fixed"; }

std::string_view to_string(culprit_status s)
{
    switch (s) {
    case culprit_status::found: return "found";
    case culprit_status::undecided: return "undecided";
    case culprit_status::no_change: return "no_change";
    }
    return "undecided";
}

std::optional<culprit_status> parse_culprit_status(std::string_view s)
{
    for (const auto c : {culprit_status::found, culprit_status::undecided, culprit_status::no_change}) {
        if (to_string(c) == s) return c;
    }
    return std::nullopt;
}

std::string_view culprit_status_names() { return "found | undecided | no_change"; }

} // namespace perfgate::model
