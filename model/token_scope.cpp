#include "model/token_scope.hpp"

#include <array>
#include <utility>

namespace perfgate::model {

namespace {

constexpr std::array<std::pair<scope, std::string_view>, 4> scope_names{{
    {scope::read, "read"},
    {scope::upload, "upload"},
    {scope::baseline, "baseline"},
    {scope::admin, "admin"},
}};

} // namespace

std::string_view to_string(scope s)
{
    for (const auto& [value, name] : scope_names) {
        if (value == s) return name;
    }
    return "?";
}

std::optional<scope_set> scope_set::parse(std::string_view list)
{
    if (list.empty()) return std::nullopt;
    scope_set out;
    while (true) {
        const auto comma = list.find(',');
        const std::string_view word = list.substr(0, comma);
        bool known = false;
        for (const auto& [value, name] : scope_names) {
            if (word != name) continue;
            if (out.has(value)) return std::nullopt;
            out.add(value);
            known = true;
        }
        if (!known) return std::nullopt;
        if (comma == std::string_view::npos) return out;
        list.remove_prefix(comma + 1);
    }
}

scope_set scope_set::from_stored(const std::optional<std::string>& stored)
{
    if (!stored) return legacy();
    // The store's CHECK admits only what parse() wrote; anything else opens
    // nothing rather than everything.
    return parse(*stored).value_or(scope_set{});
}

bool scope_set::grants(scope s) const
{
    if (legacy_) return true;
    if (has(s)) return true;
    return s == scope::upload && has(scope::baseline);
}

std::string scope_set::to_string() const
{
    if (legacy_) return "legacy";
    std::string out;
    for (const auto& [value, name] : scope_names) {
        if (!has(value)) continue;
        if (!out.empty()) out += ',';
        out += name;
    }
    return out;
}

} // namespace perfgate::model
