// The header-stage gate: decides, from a request's header alone and before
// any of its body is read (or "100 Continue" is sent), whether the router
// would refuse it for its route, method or token. A client without a valid
// token therefore cannot make the server hold a body in memory: it gets its
// 401/403/404/405 at once and the connection closes.
//
// The router (router.hpp) stays the authority: it checks the same things
// again on the complete request, except a token this gate has authorized
// for the same request (one store read per request, not two). This gate
// only answers earlier, with the same error ids.
#pragma once

#include <optional>

#include "server/router.hpp"
#include "service/service.hpp"

namespace perfgate::server {

// The refusal for a request whose header has been read (header.body() is
// empty), or nullopt when its body may be read:
//   - no route, or a wrong method -> the router's own 404/405 (route() answers
//     those before it looks at a token or the store);
//   - a route that needs a token (check_token(), routes.hpp: the router's
//     own rule) without a valid one for that project, or without the
//     route's scope -> 401/403;
//   - an artifact upload whose Content-Length is over its row's
//     max_artifact_bytes (the flame graph's: service::max_flame_graph_bytes)
//     -> 413 "artifact.too_large".
// Routes without a token (open ones, public reads) and dashboard pages pass
// (a form over pages::max_form_bytes is 413). Never
// throws: a failing store becomes the 500 the router would answer.
// checked, when given, is set to the header's token's grant when it was
// authorized for the route here (its scope included, check_token in
// routes.hpp), else reset: route() need not look it up again for the same
// request (router.hpp).
std::optional<response> refuse_before_body(const request& header, context& ctx,
                                           std::optional<service::token_grant>* checked = nullptr);

} // namespace perfgate::server
