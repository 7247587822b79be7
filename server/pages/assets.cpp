#include "server/pages/assets.hpp"

#include <algorithm>

namespace perfgate::server::pages {

const embedded_asset* find_asset(std::string_view name)
{
    const auto& all = embedded_assets();
    const auto it = std::find_if(all.begin(), all.end(), [&](const embedded_asset& a) { return a.name == name; });
    return it == all.end() ? nullptr : &*it;
}

std::string_view asset_content_type(std::string_view name)
{
    if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
    if (name.ends_with(".css")) return "text/css; charset=utf-8";
    return "application/octet-stream";
}

std::size_t embedded_asset_bytes()
{
    std::size_t total = 0;
    for (const auto& a : embedded_assets()) total += a.body.size();
    return total;
}

} // namespace perfgate::server::pages
