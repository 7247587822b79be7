// Reading GitLab's JSON answers leniently (a missing or mistyped field reads
// as empty) and checking ids before they enter an API path. Internal to
// gitlab/: shared by publish.cpp and accept.cpp.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace perfgate::gitlab::detail {

// A positive decimal number without sign or leading zero, as GitLab's ids are.
inline bool is_id(std::string_view s)
{
    return !s.empty() && s.size() <= 18 && s.front() != '0' &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

inline std::string string_at(const nlohmann::json& j, const char* key)
{
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline std::optional<std::int64_t> int_at(const nlohmann::json& j, const char* key)
{
    if (!j.is_object()) return std::nullopt;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<std::int64_t>();
}

} // namespace perfgate::gitlab::detail
