// JSON Schemas (draft 2020-12, the dialect of OpenAPI 3.1) of the HTTP API's
// wire formats, next to their encoders and decoders (api/wire.hpp). The
// route table (server/routes.hpp) names them; server/openapi.cpp puts them
// in the OpenAPI document (docs/openapi.json) as components/schemas, and
// the ctest openapi_answers validates every answer the server tests receive
// against them, so a schema that drifts from wire.cpp fails a test.
//
// A schema says what every answer has; the report's own fields are
// docs/report.md's contract and its schema names only the top level.
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace perfgate::api {

// {name: schema}: "error", "ingest_request", "ingest_result", "report", ...
// Parsed once; thread-safe to read.
const nlohmann::json& schemas();

} // namespace perfgate::api
