#include "server/openapi.hpp"

#include <string>
#include <string_view>

#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

#include "api/schemas.hpp"
#include "server/routes.hpp"

namespace perfgate::server {

namespace {

using nlohmann::json;

std::string ref(std::string_view schema) { return "#/components/schemas/" + std::string(schema); }

std::string lower(std::string_view s)
{
    std::string out(s);
    for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
}

// Who may call it: open routes need nothing; a read takes a token with
// scope read or, with --public-read, nothing; upload and admin routes need a
// token with that scope (OpenAPI 3.1 lets a non-OAuth scheme list role
// names: the scope, docs/http-api.md "Token scopes").
json security(access who)
{
    switch (who) {
    case access::open: return json::array();
    case access::read: return json::array({json{{"bearer", json::array({"read"})}}, json::object()});
    case access::upload: return json::array({json{{"bearer", json::array({"upload"})}}});
    case access::baseline: return json::array({json{{"bearer", json::array({"baseline"})}}});
    case access::admin: return json::array({json{{"bearer", json::array({"admin"})}}});
    }
    return json::array();
}

// x-perfgate-access: the route table's access rule, which is also the
// token scope the route needs (none for open).
std::string_view access_name(access who)
{
    switch (who) {
    case access::open: return "open";
    case access::read: return "read";
    case access::upload: return "upload";
    case access::baseline: return "baseline";
    case access::admin: return "admin";
    }
    return "admin";
}

json parameters(const api_route& r)
{
    json out = json::array();
    for (const std::string_view seg : {std::string_view("{project}"), std::string_view("{id}")}) {
        if (r.path.find(seg) == std::string_view::npos) continue;
        const bool project = seg == "{project}";
        out.push_back({{"name", project ? "project" : "id"},
                       {"in", "path"},
                       {"required", true},
                       {"description",
                        project ? "the project (percent-encoded)" : "the resource's id, a positive integer"},
                       {"schema", {{"type", "string"}}}});
    }
    for (const auto& q : r.query) {
        out.push_back({{"name", q.name},
                       {"in", "query"},
                       {"required", q.required},
                       {"description", q.about},
                       {"schema", {{"type", "string"}}}});
    }
    return out;
}

json content_schema(std::string_view media_type, std::string_view schema)
{
    if (!schema.empty()) return {{"schema", {{"$ref", ref(schema)}}}};
    if (media_type == "application/json") return {{"schema", json::object()}};
    return {{"schema", {{"type", "string"}}}};
}

json operation(const api_route& r)
{
    json op = {{"operationId", r.operation_id},
               {"summary", r.summary},
               {"security", security(r.who)},
               {"x-perfgate-access", access_name(r.who)},
               {"parameters", parameters(r)}};
    if (!r.request_types.empty()) {
        json content = json::object();
        for (const auto type : r.request_types) {
            content[std::string(type)] = content_schema(type, type == "application/json" ? r.request_schema : "");
        }
        op["requestBody"] = {{"required", true}, {"content", std::move(content)}};
    }
    json responses = json::object();
    for (const auto& a : r.answers) {
        json& one = responses[std::to_string(a.status)];
        if (one.is_null()) one = {{"description", r.summary}, {"content", json::object()}};
        one["content"][std::string(a.content_type)] = content_schema(a.content_type, a.schema);
    }
    const json error_content = {{"application/json", content_schema("application/json", "error")}};
    responses["4XX"] = {{"description", "The request is wrong: the error's id says why (docs/errors.md)"},
                        {"content", error_content}};
    responses["5XX"] = {{"description", "The server cannot answer: the error's id says why (docs/errors.md)"},
                        {"content", error_content}};
    op["responses"] = std::move(responses);
    return op;
}

} // namespace

json openapi_document()
{
    json paths = json::object();
    for (const auto& r : routes()) {
        if (r.hidden) continue;
        const std::string method = lower(std::string_view(boost::beast::http::to_string(r.method).data(),
                                                          boost::beast::http::to_string(r.method).size()));
        paths[std::string(r.path)][method] = operation(r);
    }
    return {
        {"openapi", "3.1.0"},
        {"info",
         {{"title", "perfgate server"},
          {"version", "v1"},
          {"description", "The HTTP API of perfgate serve: runs, comparisons, history, alerts, webhooks. "
                          "Written from the server's route table (server/routes.hpp) and wire types "
                          "(api/schemas.cpp); the prose is docs/http-api.md."},
          {"license", {{"name", "Apache-2.0"}, {"identifier", "Apache-2.0"}}}}},
        {"components",
         {{"schemas", api::schemas()},
          {"securitySchemes",
           {{"bearer",
             {{"type", "http"},
              {"scheme", "bearer"},
              {"description",
               "A project token (perfgate token create --scope ...); each operation lists the scope it needs (read, upload, baseline or admin: docs/http-api.md, Token scopes)"}}}}}}},
        {"paths", std::move(paths)}};
}

const std::string& openapi_text()
{
    static const std::string text = openapi_document().dump(2) + "\n";
    return text;
}

} // namespace perfgate::server
