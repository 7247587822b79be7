// The HTTP API's OpenAPI 3.1 document, made from the route table
// (routes.hpp) and the wire types' schemas (api/schemas.hpp): committed as
// docs/openapi.json (the ctest openapi_doc_up_to_date fails when it is
// stale; `cmake --build B --target openapi_doc` rewrites it) and served at
// GET /api/v1/openapi.json.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace perfgate::server {

// The document.
nlohmann::json openapi_document();
// Its text as committed and served: two-space indents, keys sorted, a
// final newline. Built once; thread-safe.
const std::string& openapi_text();

} // namespace perfgate::server
