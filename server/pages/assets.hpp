// The dashboard's static files, embedded in the binary at build time
// (pages/embed_assets.cmake): dygraphs from Debian's libjs-dygraphs and our
// own dashboard.js / dashboard.css (server/assets/). No CDN: the pages work
// on a network without internet.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace perfgate::server::pages {

struct embedded_asset {
    std::string_view name; // "dygraph.min.js", served as /assets/{name}
    std::string_view body;
    std::string_view sha256; // hex, the ETag
};

const std::vector<embedded_asset>& embedded_assets();

// By name; nullptr when there is none.
const embedded_asset* find_asset(std::string_view name);
// "text/javascript; charset=utf-8", "text/css; charset=utf-8".
std::string_view asset_content_type(std::string_view name);
// What the assets add to the binary, in bytes.
std::size_t embedded_asset_bytes();

} // namespace perfgate::server::pages
