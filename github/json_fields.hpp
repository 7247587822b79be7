// Reading fields of GitHub's JSON (event payloads, API answers) leniently:
// a missing or mistyped field reads as empty. Internal to github/.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfgate::github::detail {

inline std::string string_at(const nlohmann::json& o, const char* key)
{
    return o.is_object() && o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

inline std::optional<std::int64_t> int_at(const nlohmann::json& o, const char* key)
{
    if (!o.is_object() || !o.contains(key) || !o[key].is_number_integer()) return std::nullopt;
    return o[key].get<std::int64_t>();
}

inline const nlohmann::json& object_at(const nlohmann::json& o, const char* key)
{
    static const nlohmann::json none = nlohmann::json::object();
    return o.is_object() && o.contains(key) && o[key].is_object() ? o[key] : none;
}

inline bool iequals(std::string_view a, std::string_view b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

} // namespace perfgate::github::detail
