#include "server/router.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <map>
#include <random>
#include <utility>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "api/wire.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"
#include "model/error_catalogue.hpp"
#include "report/render.hpp"
#include "server/metrics.hpp"
#include "server/openapi.hpp"
#include "server/pages/html.hpp"
#include "server/pages/pages.hpp"
#include "server/request_text.hpp"
#include "server/routes.hpp"
#include "service/service.hpp"
#include "service/text.hpp"
#include "store/webhooks.hpp"

namespace perfgate::server {

namespace http = boost::beast::http;
using api::dump;
using detail::path_segments;
using detail::percent_decode;
using detail::query_params;
using detail::sv;
using nlohmann::json;

namespace {

std::pair<std::string_view, std::string_view> split_target(std::string_view target)
{
    auto q = target.find('?');
    if (q == std::string_view::npos) return {target, {}};
    return {target.substr(0, q), target.substr(q + 1)};
}

// ---------------------------------------------------------------------------
// Query strings

std::optional<std::int64_t> parse_int(std::string_view s)
{
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// "since": unix seconds, or an ISO 8601 UTC date / date-time (api/wire.hpp).
std::int64_t parse_since(std::string_view s)
{
    if (auto t = api::parse_timestamp(s)) return *t;
    throw error(errors::http_bad_param,
                fmt::format("query parameter 'since': expected unix seconds or an ISO 8601 UTC date "
                            "(2026-11-22 or 2026-11-22T02:11:05Z), got '{}'",
                            s.substr(0, 64)));
}

// ---------------------------------------------------------------------------
// Responses

response make_response(http::status status, std::string body, std::string_view content_type, const request& req)
{
    response res{status, req.version()};
    res.set(http::field::server, "perfgate");
    res.set(http::field::content_type, boost::beast::string_view(content_type.data(), content_type.size()));
    res.keep_alive(req.keep_alive());
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

response json_response(http::status status, const json& body, const request& req)
{
    return make_response(status, dump(body), "application/json", req);
}

// Media type without parameters, lower-cased: "Text/CSV; charset=utf-8" -> "text/csv".
std::string media_type(std::string_view content_type)
{
    auto semi = content_type.find(';');
    std::string_view t = content_type.substr(0, semi);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    std::string out(t);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// The route's declared query parameters (routes()), and no others.
void only_declared(const route_match& m, const query_params& q)
{
    std::vector<std::string_view> names;
    names.reserve(m.row->query.size());
    for (const auto& p : m.row->query) names.push_back(p.name);
    q.only(names);
}

model::ingest_request ingest_from_csv(const request& req, const query_params& q, const route_match& m)
{
    only_declared(m, q);
    model::ingest_request in;
    in.project = m.project;
    in.source = "request body (text/csv)";
    if (auto v = q.get("benchmark")) in.benchmark = *v;
    in.role = q.required("role");
    in.git_sha = q.required("git_sha");
    in.branch = q.required("branch");
    if (auto v = q.get("backend")) in.backend = *v;
    if (auto v = q.get("session")) in.session = *v;
    if (auto v = q.get("input_format")) in.input_format = *v;
    if (auto v = q.get("toolchain")) in.toolchain = *v;
    if (auto v = q.get("mainline")) {
        if (*v != "true" && *v != "false")
            throw error(errors::ingest_bad_field, "query parameter 'mainline' must be true or false");
        in.mainline = *v == "true";
    }
    if (auto v = q.get("pr")) {
        auto pr = parse_int(*v);
        if (!pr || *pr <= 0) throw error(errors::ingest_bad_field, "query parameter 'pr' must be a positive integer");
        in.pr = *pr;
    }
    if (auto v = q.get("testbed")) in.testbed.name = *v;
    if (auto v = q.get("testbed_cpu")) in.testbed.cpu = *v;
    if (auto v = q.get("testbed_kernel")) in.testbed.kernel = *v;
    if (auto v = q.get("testbed_fingerprint")) in.testbed.fingerprint = *v;
    if (auto v = q.get("testbed_cores")) {
        auto cores = parse_int(*v);
        if (!cores || *cores < 0 || *cores > 1 << 20) {
            throw error(errors::ingest_bad_field, "query parameter 'testbed_cores' must be a non-negative integer");
        }
        in.testbed.cores = static_cast<int>(*cores);
    }
    in.perf_csv = req.body();
    return in;
}

// ---------------------------------------------------------------------------
// Endpoints

std::optional<response> post_run(const route_call& c)
{
    const request& req = c.req;
    context& ctx = c.ctx;
    const route_match& m = c.match;
    const query_params& q = c.query;
    const std::string type = media_type(sv(req[http::field::content_type]));
    model::ingest_request in;
    if (type == "application/json") {
        q.only({}); // the fields are in the body (the declared parameters are text/csv's)
        in = api::ingest_request_from_json(api::parse_request_body(req.body()));
        in.source = "request body: perf_csv";
    } else if (type == "text/csv") in = ingest_from_csv(req, q, m);
    else {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json or text/csv",
                                type.substr(0, 64)));
    }
    in.project = m.project;
    // Who uploads, whatever the body says: the token's scopes decide
    // whether the run may feed the main line (service::mainline_of).
    if (c.token) {
        in.written_by = c.token->ref();
        in.writer_scopes = c.token->scopes;
    }
    // Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): a retry
    // of an upload gets the first attempt's run (service::ingest).
    std::optional<std::string> key;
    if (req.count("Idempotency-Key") > 1) {
        throw error(errors::ingest_bad_idempotency_key, "Idempotency-Key: the header appears more than once");
    }
    if (auto it = req.find("Idempotency-Key"); it != req.end()) key = std::string(sv(it->value()));
    const model::ingest_result r = ctx.service.runs().ingest(in, key);
    if (!r.replayed) ctx.stats.run_ingested();
    response res = json_response(http::status::created, api::to_json(r), req);
    if (r.replayed) res.set("Idempotent-Replayed", "true");
    return res;
}

response answer_error(std::string_view id, std::string_view message, unsigned version, bool keep_alive,
                      std::string_view where);

// f()'s response, or the error response for what it threw (route()'s
// promise: every error becomes a JSON answer).
template <typename F>
std::optional<response> guarded(const request& req, F&& f)
{
    const auto fail = [&req](std::string_view id, std::string_view message) {
        const std::string where = fmt::format("{} {}", sv(req.method_string()), sv(req.target()).substr(0, 128));
        return answer_error(id, message, req.version(), req.keep_alive(), where);
    };
    try {
        return f();
    } catch (const error& e) {
        return fail(e.id(), e.what());
    } catch (const json::exception& e) {
        // nlohmann errors escaping a handler are bad input the handler did not
        // anticipate (e.g. a policy value of the wrong type).
        return fail(errors::http_bad_json.view(), fmt::format("request body: {}", api::json_error_text(e.what())));
    } catch (const std::exception& e) {
        return fail(errors::internal.view(), e.what());
    }
}

// A stored comparison's answer: the report as the service serialised it,
// with its comparison_id.
response compare_response(const service::comparison& c, std::string_view project, const request& req)
{
    response res = make_response(http::status::created, *c.json, "application/json", req);
    res.set(http::field::location, fmt::format("/api/v1/projects/{}/comparisons/{}", project, c.id));
    return res;
}

// later: the session can take the answer after this returns (route's
// responder); then a fresh report is stored by the service's committer and
// answered from its thread, and this returns nullopt.
std::optional<response> post_compare(const request& req, context& ctx, const route_match& m, const query_params& q,
                                     const responder* later)
{
    only_declared(m, q);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const json doc = api::parse_request_body(req.body());
    const auto pairs = api::compare_pairs_from_json(doc);
    const auto baseline = api::compare_baseline_from_json(doc);
    gate::policy rules;
    if (auto p = doc.find("policy"); p != doc.end() && !p->is_null()) {
        rules = gate::parse_policy(*p, "request body: policy");
    }

    if (!later)
        return compare_response(ctx.service.comparisons().compare(m.project, pairs, rules, baseline), m.project, req);
    // What the answer needs of the request once it is gone: its header.
    request head;
    head.base() = req.base();
    auto ready = ctx.service.comparisons().compare_later(
        m.project, pairs, rules,
        [head = std::move(head), project = m.project, later = *later](std::exception_ptr failure,
                                                                      const service::comparison* c) {
            later(*guarded(head, [&]() -> std::optional<response> {
                if (failure) std::rethrow_exception(failure);
                return compare_response(*c, project, head);
            }));
        },
        baseline);
    if (!ready) return std::nullopt;
    return compare_response(*ready, m.project, req);
}

// The comparison id of a path, a positive integer.
std::int64_t comparison_id_of(const route_match& m)
{
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error(errors::http_bad_param,
                    fmt::format("comparison id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    return *id;
}

// PUT: perfgate run --profile uploads a benchmark's differential flame graph
// after the comparison (service::store_flame_graph: at most
// max_flame_graph_bytes, else 413 "artifact.too_large").
response put_flame_graph(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    const auto id = comparison_id_of(m);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "image/svg+xml") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send image/svg+xml", type.substr(0, 64)));
    }
    const std::string benchmark = q.required("benchmark");
    ctx.service.artifacts().store_flame_graph(m.project, id, benchmark, req.body());
    const std::string url = fmt::format("/api/v1/projects/{}/comparisons/{}/flame-graph{}", html::url_encode(m.project),
                                        id, html::url_query({{"benchmark", benchmark}}));
    response res = json_response(
        http::status::created,
        json{{"comparison_id", id}, {"benchmark", benchmark}, {"bytes", req.body().size()}, {"url", url}}, req);
    res.set(http::field::location, url);
    return res;
}

// PUT: perfgate run sends each attributed benchmark's attribution after the
// comparison (service::store_attribution: the report's "attribution"
// object, at most max_attribution_bytes and max_attribution_functions rows
// per table); GET .../comparisons/{id} has it from then on.
response put_attribution(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    const auto id = comparison_id_of(m);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const std::string benchmark = q.required("benchmark");
    ctx.service.artifacts().store_attribution(m.project, id, benchmark, req.body());
    const std::string url = fmt::format("/api/v1/projects/{}/comparisons/{}", html::url_encode(m.project), id);
    response res = json_response(
        http::status::created,
        json{{"comparison_id", id}, {"benchmark", benchmark}, {"bytes", req.body().size()}, {"url", url}}, req);
    res.set(http::field::location, url);
    return res;
}

// GET: the SVG, sandboxed. It came from a client (a token holder): served as
// an image that runs nothing (CSP sandbox without allow-scripts, no fetches),
// never sniffed as HTML, framed only by this server's own pages.
response get_flame_graph(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    const auto id = comparison_id_of(m);
    const std::string benchmark = q.required("benchmark");
    auto svg = ctx.service.artifacts().flame_graph(m.project, id, benchmark);
    if (!svg) {
        throw error(errors::artifact_not_found,
                    fmt::format("comparison {} of project '{}' has no flame graph of benchmark '{}'", id, m.project,
                                benchmark));
    }
    response res = make_response(http::status::ok, std::move(*svg), "image/svg+xml; charset=utf-8", req);
    set_artifact_headers(res);
    return res;
}

response get_comparison(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error(errors::http_bad_param,
                    fmt::format("comparison id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    auto rep = ctx.service.comparisons().load(m.project, *id);
    if (!rep) {
        throw error(errors::comparison_not_found, fmt::format("no comparison {} in project '{}'", *id, m.project));
    }
    rep->comparison_id = *id;
    const std::string format = q.get("format").value_or("json");
    if (format == "json") {
        json out = report::to_json(*rep);
        out["comparison_id"] = *id;
        const auto accepted = ctx.service.acceptances().of(m.project, *id);
        out["acceptance"] = accepted ? api::to_json(*accepted) : json(nullptr);
        return json_response(http::status::ok, out, req);
    }
    if (format == "markdown") {
        report::markdown_options opt;
        // The dashboard's page of the comparison (server/pages): a person
        // follows this link from a PR comment, where a relative link leads
        // to github.com. So it is absolute, on --public-url; without one
        // there is no link (the request's Host header is the client's to
        // choose, and a link on it could point anywhere) and a note says why.
        const std::string page = fmt::format("/p/{}/comparisons/{}", html::url_encode(m.project), *id);
        if (!ctx.public_url.empty()) opt.comparison_url = ctx.public_url + page;
        else opt.link_note = fmt::format("stored comparison {}: no link, the server has no --public-url", *id);
        opt.repository_url = ctx.service.projects().repository_url(m.project).value_or("");
        return make_response(http::status::ok, report::render_markdown(*rep, opt), "text/markdown; charset=utf-8", req);
    }
    if (format == "text") {
        return make_response(http::status::ok, report::render_text(*rep, false), "text/plain; charset=utf-8", req);
    }
    throw error(errors::http_bad_param,
                fmt::format("query parameter 'format': expected json, markdown or text, got '{}'",
                            format.substr(0, 64)));
}

response get_comparisons(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    std::size_t limit = service::default_comparison_limit;
    if (auto v = q.get("limit")) {
        auto n = parse_int(*v);
        if (!n || *n < 1 || static_cast<std::uint64_t>(*n) > service::max_comparison_limit) {
            throw error(errors::http_bad_param,
                        fmt::format("query parameter 'limit': expected an integer in [1, {}], got '{}'",
                                    service::max_comparison_limit, v->substr(0, 64)));
        }
        limit = static_cast<std::size_t>(*n);
    }
    api::comparison_list list;
    list.comparisons = ctx.service.comparisons().recent(m.project, limit);
    list.repository_url = ctx.service.projects().repository_url(m.project);
    return json_response(http::status::ok, api::to_json(list), req);
}

response get_history(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    model::history_query hq;
    hq.project = m.project;
    hq.benchmark = q.required("benchmark");
    hq.counter = q.required("counter");
    // By default the series the watch sees (api/wire.hpp): the runs that
    // feed the baseline branch's series.
    const std::string role = q.get("role").value_or(std::string(api::default_history_role));
    if (!api::is_history_role(role)) {
        throw error(errors::http_bad_param, fmt::format("query parameter 'role': expected mainline, baseline, "
                                                        "candidate or all, got '{}'",
                                                        role.substr(0, 64)));
    }
    api::select_history_role(hq, role);
    const std::string branch = q.get("branch").value_or(ctx.service.projects().baseline_branch(m.project));
    if (branch != api::all_branches) hq.branch = branch;
    if (auto v = q.get("testbed")) hq.testbed = *v;
    if (auto v = q.get("since")) hq.since = parse_since(*v);
    if (auto v = q.get("limit")) {
        auto n = parse_int(*v);
        if (!n || *n < 1 || static_cast<std::uint64_t>(*n) > api::max_history_limit) {
            throw error(errors::http_bad_param,
                        fmt::format("query parameter 'limit': expected an integer in [1, {}], got '{}'",
                                    api::max_history_limit, v->substr(0, 64)));
        }
        hq.limit = static_cast<std::size_t>(*n);
    }
    const std::string format = q.get("format").value_or("json");
    if (format != "json" && format != "csv") {
        throw error(errors::http_bad_param,
                    fmt::format("query parameter 'format': expected json or csv, got '{}'", format.substr(0, 64)));
    }
    auto points = ctx.service.history().points(hq);
    if (format == "csv")
        return make_response(http::status::ok, api::history_to_csv(points), "text/csv; charset=utf-8", req);
    return json_response(http::status::ok, api::history_to_json(points), req);
}

// The stored run a deterministic backend's baseline reuses (perfgate run
// --baseline-source server; docs/http-api.md#baseline-run): 200 with
// {"run": {...}} or {"run": null}. branch defaults to the project's
// baseline branch; the others are required, an empty one too (an unknown
// toolchain is never reused).
response get_baseline_run(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    model::reusable_run_query rq;
    rq.project = m.project;
    rq.benchmark = q.required("benchmark");
    rq.git_sha = q.required("git_sha");
    rq.testbed = q.required("testbed");
    rq.backend = q.required("backend");
    rq.toolchain = q.required("toolchain");
    rq.branch = q.get("branch").value_or(ctx.service.projects().baseline_branch(m.project));
    const auto found = ctx.service.runs().find_reusable(rq);
    return json_response(http::status::ok, json{{"run", found ? api::to_json(*found) : json()}}, req);
}

response get_benchmarks(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    json list = json::array();
    for (const auto& b : ctx.service.history().benchmarks(m.project)) {
        list.push_back({{"name", b.name}, {"counters", b.counters}, {"runs", b.runs}, {"last_run_at", b.last_run_at}});
    }
    return json_response(http::status::ok, json{{"benchmarks", std::move(list)}}, req);
}

std::int64_t alert_id(const route_match& m)
{
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error(errors::http_bad_param,
                    fmt::format("alert id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    return *id;
}

response get_alerts(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    model::alert_query aq;
    aq.project = m.project;
    if (auto v = q.get("status")) {
        aq.status = model::parse_alert_status(*v);
        if (!aq.status) {
            throw error(errors::http_bad_param, fmt::format("query parameter 'status': expected {}, got '{}'",
                                                            model::alert_status_names(), v->substr(0, 64)));
        }
    }
    if (auto v = q.get("benchmark")) aq.benchmark = *v;
    if (auto v = q.get("counter")) aq.counter = *v;
    if (auto v = q.get("testbed")) aq.testbed = *v;
    if (auto v = q.get("limit")) {
        auto n = parse_int(*v);
        if (!n || *n < 1 || static_cast<std::uint64_t>(*n) > service::max_alert_limit) {
            throw error(errors::http_bad_param,
                        fmt::format("query parameter 'limit': expected an integer in [1, {}], got '{}'",
                                    service::max_alert_limit, v->substr(0, 64)));
        }
        aq.limit = static_cast<std::size_t>(*n);
    }
    return json_response(http::status::ok, api::alerts_to_json(ctx.service.alerts().list(aq)), req);
}

response get_alert(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    return json_response(http::status::ok, api::to_json(ctx.service.alerts().get(m.project, alert_id(m))), req);
}

response patch_alert(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const auto id = alert_id(m);
    model::alert_update u = api::alert_update_from_json(api::parse_request_body(req.body()));
    // Who triaged: the token's name is not known here; the project's token is.
    u.changed_by = "api";
    if (auto by = req.find("X-Perfgate-User"); by != req.end()) {
        // Cut on a character boundary: a name of multi-byte characters stays
        // valid UTF-8, so both engines store the same (issue 31, finding 7).
        constexpr std::size_t max_user = 64;
        u.changed_by = std::string(service::utf8_prefix(sv(by->value()), max_user));
        service::check_stored_text(errors::ingest_bad_field, "X-Perfgate-User", u.changed_by);
    }
    return json_response(http::status::ok, api::to_json(ctx.service.alerts().update(m.project, id, u)), req);
}

// PUT: what perfgate bisect --alert found, stored on the alert (docs/bisect.md
// "Stored on the alert"); answers the alert with it.
std::optional<response> put_culprit(const route_call& c)
{
    const request& req = c.req;
    only_declared(c.match, c.query);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const auto id = alert_id(c.match);
    if (req.body().size() > api::max_culprit_body_bytes) {
        throw error(errors::http_body_too_large,
                    fmt::format("a culprit of {} bytes is larger than the limit of {} bytes", req.body().size(),
                                api::max_culprit_body_bytes));
    }
    const model::alert_culprit k = api::culprit_request_from_json(api::parse_request_body(req.body()));
    const model::alert a = c.ctx.service.alerts().put_culprit(c.match.project, id, k,
                                                              c.token ? std::optional(c.token->ref()) : std::nullopt);
    return json_response(http::status::ok, api::to_json(a), req);
}

// POST: a reviewer's acceptance of the regression of a pull request head
// (perfgate accept, docs/http-api.md "Accept a regression"): stored with the
// project's newest comparison of that candidate commit.
std::optional<response> post_acceptance(const route_call& c)
{
    const request& req = c.req;
    context& ctx = c.ctx;
    const route_match& m = c.match;
    const query_params& q = c.query;
    only_declared(m, q);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const api::acceptance_request r = api::acceptance_request_from_json(api::parse_request_body(req.body()));
    const model::acceptance a = ctx.service.acceptances().accept(
        m.project, r.head_sha, r.login, r.reason, c.token ? std::optional(c.token->ref()) : std::nullopt);
    const std::string url = fmt::format("/api/v1/projects/{}/comparisons/{}", html::url_encode(m.project),
                                        a.comparison_id);
    response res = json_response(http::status::created, api::to_json(a), req);
    res.set(http::field::location, url);
    return res;
}

// POST: perfgate qualify's figures for a testbed and benchmark
// (docs/http-api.md "Qualifications"): stored, every one kept.
std::optional<response> post_qualification(const route_call& c)
{
    only_declared(c.match, c.query);
    const std::string type = media_type(sv(c.req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const model::qualification q = api::qualification_request_from_json(api::parse_request_body(c.req.body()));
    const model::qualification stored = c.ctx.service.qualifications().add(
        c.match.project, q, c.token ? std::optional(c.token->ref()) : std::nullopt);
    return json_response(http::status::created, api::to_json(stored), c.req);
}

// GET: the newest qualification of each testbed and benchmark, filtered by
// ?testbed= (a fingerprint) and ?benchmark=.
std::optional<response> get_qualifications(const route_call& c)
{
    only_declared(c.match, c.query);
    const auto testbed = c.query.get("testbed");
    const auto benchmark = c.query.get("benchmark");
    const auto list = c.ctx.service.qualifications().newest(c.match.project, testbed.value_or(std::string()),
                                                            benchmark.value_or(std::string()));
    return json_response(http::status::ok, api::to_json(list), c.req);
}

// A project's webhooks (docs/http-api.md "Webhooks"): never the secret,
// only whether there is one.
json webhook_to_json(const store::webhook_info& w)
{
    auto opt_text = [](const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); };
    auto opt_int = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(nullptr); };
    return json{{"id", w.id},
                {"url", w.url},
                {"format", w.format},
                {"signed", w.has_secret},
                {"created_at", w.created_at},
                {"last_delivery", w.last_outcome ? json{{"outcome", *w.last_outcome},
                                                        {"attempts", opt_int(w.last_attempts)},
                                                        {"at", opt_int(w.last_at)},
                                                        {"error", opt_text(w.last_error)}}
                                                 : json(nullptr)}};
}

response get_webhooks(const request& req, context& ctx, const route_match& m, const query_params& q);

response post_webhook(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const api::webhook_request r = api::webhook_request_from_json(api::parse_request_body(req.body()));
    const auto id = ctx.service.webhooks().add(m.project, r.url, r.format, r.secret);
    for (const auto& w : ctx.service.webhooks().list(m.project)) {
        if (w.id == id) return json_response(http::status::created, webhook_to_json(w), req);
    }
    // Removed again before it could be read back (a DELETE in between): the list, as it is now.
    return get_webhooks(req, ctx, m, q);
}

response get_webhooks(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    json out = json::array();
    for (const auto& w : ctx.service.webhooks().list(m.project)) out.push_back(webhook_to_json(w));
    return json_response(http::status::ok, json{{"webhooks", std::move(out)}}, req);
}

response delete_webhook(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error(errors::http_bad_param,
                    fmt::format("webhook id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    if (!ctx.service.webhooks().remove(m.project, *id)) {
        throw error(errors::http_not_found, fmt::format("project '{}' has no webhook {}", m.project, *id));
    }
    return json_response(http::status::ok, json{{"deleted", *id}}, req);
}

response get_change_points(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    only_declared(m, q);
    const auto points = ctx.service.history().change_points(m.project, q.required("benchmark"), q.required("counter"),
                                                            q.get("testbed"), q.get("branch"));
    return json_response(http::status::ok, api::change_points_to_json(points), req);
}

// ---------------------------------------------------------------------------
// The routes' handlers that are not above, and the adapters of the others.

// The store cannot serve (its file deleted or replaced, a damaged file,
// PostgreSQL down): 503 with the error's id, logged like every store error
// (docs/http-api.md#health-and-metrics).
std::optional<response> get_healthz(const route_call& c)
{
    try {
        c.ctx.service.maintenance().check_health();
    } catch (const error& e) {
        response res = error_response(e.id(), e.what(), c.req.version(), c.req.keep_alive());
        res.result(http::status::service_unavailable);
        return res;
    }
    return json_response(http::status::ok, json{{"status", "ok"}}, c.req);
}

std::optional<response> get_metrics(const route_call& c)
{
    auto& s = c.ctx.service;
    return make_response(http::status::ok,
                         c.ctx.stats.render(s.maintenance().store_size_bytes(), s.background().watch_stats(),
                                            s.background().commit_stats(),
                                            s.background().notify_stats().value_or(service::notifier::counts{})),
                         "text/plain; version=0.0.4; charset=utf-8", c.req);
}

std::optional<response> get_bench_constant(const route_call& c)
{
    return make_response(http::status::ok, "{\"status\":\"ok\"}", "application/json", c.req);
}

std::optional<response> get_openapi(const route_call& c)
{
    return make_response(http::status::ok, openapi_text(), "application/json", c.req);
}

// 429 for an address that used up its anonymous reads, with Retry-After.
response too_many_requests(const request& req, std::chrono::seconds wait)
{
    response res = error_response(errors::http_too_many_requests,
                                  fmt::format("too many reads without a token from your address; try again in {} "
                                              "seconds, or send a token",
                                              wait.count()),
                                  req.version(), req.keep_alive());
    res.set(http::field::retry_after, std::to_string(wait.count()));
    return res;
}

// A history read without a token (--public-read) takes one from its
// address's allowance (pages/client_throttle.hpp).
std::optional<response> get_history_throttled(const route_call& c)
{
    if (c.req.find(http::field::authorization) == c.req.end()) {
        const std::string client = pages::client_address(c.peer, c.req, c.ctx.trusted_proxies);
        if (const auto wait = client.empty() ? std::nullopt : c.ctx.anonymous_reads->take(client)) {
            return too_many_requests(c.req, *wait);
        }
    }
    return get_history(c.req, c.ctx, c.match, c.query);
}

std::optional<response> post_compare_call(const route_call& c)
{
    return post_compare(c.req, c.ctx, c.match, c.query, c.later);
}

template <response (*F)(const request&, context&, const route_match&, const query_params&)>
std::optional<response> call(const route_call& c)
{
    return F(c.req, c.ctx, c.match, c.query);
}

// ---------------------------------------------------------------------------
// The route table (routes.hpp). Rows of one path: GET first (the order of
// a 405's Allow header).

constexpr std::string_view json_type = "application/json";

using v = http::verb;
// Data, not code: built once at start-up (no other static reads it).
const std::vector<api_route> route_table{
    {v::post,
     "/api/v1/projects/{project}/runs",
     "POST /api/v1/projects/{project}/runs",
     access::upload,
     body_rule::bytes,
     post_run,
     "Upload a run: one benchmark's perf stat capture, or a google/benchmark suite",
     {{"benchmark", false, "benchmark name (text/csv only; default \"default\")"},
      {"role", true, "baseline or candidate (text/csv only)"},
      {"git_sha", true, "the commit measured (text/csv only)"},
      {"branch", true, "its branch (text/csv only)"},
      {"backend", false, "the measurement backend (text/csv only)"},
      {"pr", false, "pull request number (text/csv only)"},
      {"testbed", false, "testbed name (text/csv only)"},
      {"testbed_cpu", false, "testbed CPU model (text/csv only)"},
      {"testbed_kernel", false, "testbed kernel (text/csv only)"},
      {"testbed_fingerprint", false, "testbed fingerprint (text/csv only)"},
      {"testbed_cores", false, "testbed cores (text/csv only)"},
      {"session", false, "interleaved session id (text/csv only)"},
      {"input_format", false, "capture format (text/csv only)"},
      {"toolchain", false, "compiler identity (text/csv only)"},
      {"mainline", false, "true or false: the run feeds its branch's series (text/csv only)"}},
     {json_type, "text/csv"},
     "ingest_request",
     {{201, json_type, "ingest_result"}},
     false,
     "uploadRun"},
    {v::post,
     "/api/v1/projects/{project}/compare",
     "POST /api/v1/projects/{project}/compare",
     access::upload,
     body_rule::bytes,
     post_compare_call,
     "Compare stored runs (one pair or many, one gate) and store the comparison",
     {},
     {json_type},
     "compare_request",
     {{201, json_type, "report"}},
     false,
     "compareRuns"},
    {v::get,
     "/api/v1/projects/{project}/comparisons",
     "GET /api/v1/projects/{project}/comparisons",
     access::read,
     body_rule::none,
     call<get_comparisons>,
     "List the newest comparisons with their commits",
     {{"limit", false, "at most this many (1..200, default 20)"}},
     {},
     {},
     {{200, json_type, "comparison_list"}},
     false,
     "listComparisons"},
    {v::get,
     "/api/v1/projects/{project}/comparisons/{id}",
     "GET /api/v1/projects/{project}/comparisons/{id}",
     access::read,
     body_rule::none,
     call<get_comparison>,
     "Read a stored comparison: its report JSON, markdown or text",
     {{"format", false, "json (default), markdown or text"}},
     {},
     {},
     {{200, json_type, "stored_report"}, {200, "text/markdown", {}}, {200, "text/plain", {}}},
     false,
     "getComparison"},
    {v::get,
     "/api/v1/projects/{project}/comparisons/{id}/flame-graph",
     "GET /api/v1/projects/{project}/comparisons/{id}/flame-graph",
     access::read,
     body_rule::none,
     call<get_flame_graph>,
     "A benchmark's differential flame graph (SVG, sandboxed)",
     {{"benchmark", true, "the benchmark"}},
     {},
     {},
     {{200, "image/svg+xml", {}}},
     false,
     "getFlameGraph"},
    {v::put,
     "/api/v1/projects/{project}/comparisons/{id}/flame-graph",
     "PUT /api/v1/projects/{project}/comparisons/{id}/flame-graph",
     access::upload,
     body_rule::bytes,
     call<put_flame_graph>,
     "Store a benchmark's differential flame graph with a comparison",
     {{"benchmark", true, "the benchmark"}},
     {"image/svg+xml"},
     {},
     {{201, json_type, "artifact_stored"}},
     false,
     "putFlameGraph",
     service::max_flame_graph_bytes},
    {v::put,
     "/api/v1/projects/{project}/comparisons/{id}/attribution",
     "PUT /api/v1/projects/{project}/comparisons/{id}/attribution",
     access::upload,
     body_rule::bytes,
     call<put_attribution>,
     "Store a benchmark's attribution (the report's \"attribution\" object)",
     {{"benchmark", true, "the benchmark"}},
     {json_type},
     "attribution",
     {{201, json_type, "artifact_stored"}},
     false,
     "putAttribution"},
    {v::get,
     "/api/v1/projects/{project}/history",
     "GET /api/v1/projects/{project}/history",
     access::read,
     body_rule::none,
     get_history_throttled,
     "A benchmark's counter over time, oldest first",
     {{"benchmark", true, "the benchmark"},
      {"counter", true, "the counter"},
      {"branch", false, "a branch, or * for all (default: the project's baseline branch)"},
      {"role", false, "mainline (default), baseline, candidate or all"},
      {"testbed", false, "a testbed fingerprint"},
      {"since", false, "unix seconds or an ISO 8601 UTC date"},
      {"limit", false, "at most this many points (1..10000)"},
      {"format", false, "json (default) or csv"}},
     {},
     {},
     {{200, json_type, "history"}, {200, "text/csv", {}}},
     false,
     "getHistory"},
    {v::get,
     "/api/v1/projects/{project}/benchmarks",
     "GET /api/v1/projects/{project}/benchmarks",
     access::read,
     body_rule::none,
     call<get_benchmarks>,
     "The project's benchmarks with their counters and runs",
     {},
     {},
     {},
     {{200, json_type, "benchmark_list"}},
     false,
     "listBenchmarks"},
    {v::get,
     "/api/v1/projects/{project}/baseline-run",
     "GET /api/v1/projects/{project}/baseline-run",
     access::read,
     body_rule::none,
     call<get_baseline_run>,
     "The stored run a deterministic backend's baseline may reuse, or null",
     {{"benchmark", true, "the benchmark"},
      {"git_sha", true, "the baseline commit"},
      {"branch", false, "its branch (default: the project's baseline branch)"},
      {"testbed", true, "testbed fingerprint"},
      {"backend", true, "the measurement backend"},
      {"toolchain", true, "compiler identity"}},
     {},
     {},
     {{200, json_type, "baseline_run"}},
     false,
     "getBaselineRun"},
    {v::get,
     "/api/v1/projects/{project}/alerts",
     "GET /api/v1/projects/{project}/alerts",
     access::read,
     body_rule::none,
     call<get_alerts>,
     "Alerts opened by the history watch, newest first",
     {{"status", false, "open, acknowledged, resolved or ignored"},
      {"benchmark", false, "a benchmark"},
      {"counter", false, "a counter"},
      {"testbed", false, "a testbed fingerprint"},
      {"limit", false, "at most this many"}},
     {},
     {},
     {{200, json_type, "alert_list"}},
     false,
     "listAlerts"},
    {v::get,
     "/api/v1/projects/{project}/alerts/{id}",
     "GET /api/v1/projects/{project}/alerts/{id}",
     access::read,
     body_rule::none,
     call<get_alert>,
     "One alert",
     {},
     {},
     {},
     {{200, json_type, "alert"}},
     false,
     "getAlert"},
    {v::patch,
     "/api/v1/projects/{project}/alerts/{id}",
     "PATCH /api/v1/projects/{project}/alerts/{id}",
     access::admin,
     body_rule::bytes,
     call<patch_alert>,
     "Triage an alert: its status and note",
     {},
     {json_type},
     "alert_update",
     {{200, json_type, "alert"}},
     false,
     "updateAlert"},
    // A culprit names a commit and its author on the team's alert and goes
    // to its webhooks: triage, so admin, as PATCH above; an upload token (a
    // pull request job's) may not write one.
    {v::put,
     "/api/v1/projects/{project}/alerts/{id}/culprit",
     "PUT /api/v1/projects/{project}/alerts/{id}/culprit",
     access::admin,
     body_rule::bytes,
     put_culprit,
     "Store what perfgate bisect found for an alert (replacing an earlier result)",
     {},
     {json_type},
     "culprit_request",
     {{200, json_type, "alert"}},
     false,
     "putAlertCulprit"},
    {v::get,
     "/api/v1/projects/{project}/change-points",
     "GET /api/v1/projects/{project}/change-points",
     access::read,
     body_rule::none,
     call<get_change_points>,
     "Change points the watch found in a series",
     {{"benchmark", true, "the benchmark"},
      {"counter", true, "the counter"},
      {"testbed", false, "a testbed fingerprint"},
      {"branch", false, "a branch"}},
     {},
     {},
     {{200, json_type, "change_point_list"}},
     false,
     "listChangePoints"},
    // Webhook URLs can be credentials (a Slack incoming webhook's is):
    // reading them needs an admin token even with --public-read.
    {v::get,
     "/api/v1/projects/{project}/webhooks",
     "GET /api/v1/projects/{project}/webhooks",
     access::admin,
     body_rule::none,
     call<get_webhooks>,
     "The project's alert webhooks (never their secrets)",
     {},
     {},
     {},
     {{200, json_type, "webhook_list"}},
     false,
     "listWebhooks"},
    {v::post,
     "/api/v1/projects/{project}/webhooks",
     "POST /api/v1/projects/{project}/webhooks",
     access::admin,
     body_rule::bytes,
     call<post_webhook>,
     "Add an alert webhook",
     {},
     {json_type},
     "webhook_request",
     {{201, json_type, "webhook"}},
     false,
     "addWebhook"},
    {v::delete_,
     "/api/v1/projects/{project}/webhooks/{id}",
     "DELETE /api/v1/projects/{project}/webhooks/{id}",
     access::admin,
     body_rule::bytes,
     call<delete_webhook>,
     "Remove an alert webhook",
     {},
     {},
     {},
     {{200, json_type, "webhook_deleted"}},
     false,
     "deleteWebhook"},
    {v::post,
     "/api/v1/projects/{project}/acceptances",
     "POST /api/v1/projects/{project}/acceptances",
     access::admin,
     body_rule::bytes,
     post_acceptance,
     "Accept the regression of a pull request head (perfgate accept)",
     {},
     {json_type},
     "acceptance_request",
     {{201, json_type, "acceptance"}},
     false,
     "acceptRegression"},
    // A qualification says what a gate on a testbed can be trusted with:
    // a pull request's upload token must not vouch for its own runner, so
    // storing one needs the protected branch's scope, baseline.
    {v::post,
     "/api/v1/projects/{project}/qualifications",
     "POST /api/v1/projects/{project}/qualifications",
     access::baseline,
     body_rule::bytes,
     post_qualification,
     "Store a testbed's qualification of a benchmark (perfgate qualify --server)",
     {},
     {json_type},
     "qualification_request",
     {{201, json_type, "qualification"}},
     false,
     "storeQualification"},
    {v::get,
     "/api/v1/projects/{project}/qualifications",
     "GET /api/v1/projects/{project}/qualifications",
     access::read,
     body_rule::none,
     get_qualifications,
     "The newest qualification of each testbed and benchmark",
     {{"testbed", false, "a testbed fingerprint"}, {"benchmark", false, "a benchmark"}},
     {},
     {},
     {{200, json_type, "qualification_list"}},
     false,
     "listQualifications"},
    {v::get,
     "/api/v1/openapi.json",
     "GET /api/v1/openapi.json",
     access::open,
     body_rule::none,
     get_openapi,
     "This API's OpenAPI 3.1 document (docs/openapi.json)",
     {},
     {},
     {},
     {{200, json_type, "openapi"}},
     false,
     "getOpenApi"},
    {v::get,
     "/healthz",
     "GET /healthz",
     access::open,
     body_rule::none,
     get_healthz,
     "Whether the store can serve: 200, or 503 with the store's error",
     {},
     {},
     {},
     {{200, json_type, "health"}},
     false,
     "getHealth"},
    {v::get,
     "/metrics",
     "GET /metrics",
     access::open,
     body_rule::none,
     get_metrics,
     "Prometheus text exposition of the server's metrics",
     {},
     {},
     {},
     {{200, "text/plain", {}}},
     false,
     "getMetrics"},
    // Only with context::bench_routes (the hidden --bench-routes): a
    // constant body that measures the transport alone (bench/).
    {v::get,
     "/bench/constant",
     "GET /bench/constant",
     access::open,
     body_rule::none,
     get_bench_constant,
     "A constant answer for transport benchmarks",
     {},
     {},
     {},
     {{200, json_type, {}}},
     true,
     "benchConstant"},
};

const std::vector<api_route>& table() { return route_table; }

// The path's segments against a template's: literals equal, {project}
// percent-decoded, {id} as sent; neither may be empty.
bool segments_match(std::string_view path_template, const std::vector<std::string_view>& parts, route_match& m)
{
    const auto want = path_segments(path_template);
    if (want.size() != parts.size()) return false;
    std::optional<std::string> project;
    std::string id;
    for (std::size_t i = 0; i < want.size(); ++i) {
        if (want[i] == "{project}") {
            if (parts[i].empty()) return false;
            project = percent_decode(parts[i], false);
            if (!project) return false;
        } else if (want[i] == "{id}") {
            if (parts[i].empty()) return false;
            id = std::string(parts[i]);
        } else if (want[i] != parts[i]) {
            return false;
        }
    }
    m.project = project.value_or(std::string{});
    m.id = std::move(id);
    return true;
}

response method_not_allowed(const request& req, const route_match& m)
{
    std::vector<std::string_view> methods;
    for (const auto& r : table()) {
        if (r.path == m.row->path) methods.push_back(sv(http::to_string(r.method)));
    }
    const std::string allowed = fmt::format("{}", fmt::join(methods, ", "));
    response res = error_response(errors::http_method_not_allowed,
                                  fmt::format("{} is not allowed on {}; use {}", sv(req.method_string()), m.row->path,
                                              allowed),
                                  req.version(), req.keep_alive());
    res.set(http::field::allow, allowed);
    return res;
}

std::optional<response> dispatch(const request& req, context& ctx, const service::token_grant* checked,
                                 const responder* later, std::string_view peer)
{
    if (pages::page_label(req)) return pages::handle(req, ctx, peer);
    const route_match m = match_route(req);
    if (!m.row || (m.row->hidden && !ctx.bench_routes)) {
        auto [path, query] = split_target(sv(req.target()));
        if (path.size() > 1 && path.ends_with('/')) {
            throw error(errors::http_not_found,
                        fmt::format("no route for '{}' (paths take no trailing slash)", path.substr(0, 128)));
        }
        throw error(errors::http_not_found, fmt::format("no route for '{}'", path.substr(0, 128)));
    }
    if (!m.method_allowed) return method_not_allowed(req, m);
    std::string_view query;
    std::optional<service::token_grant> grant;
    if (checked) grant = *checked;
    if (m.row->who != access::open) {
        if (!checked) grant = check_token(m, req, ctx);
        ctx.service.projects().require(m.project);
        query = split_target(sv(req.target())).second;
    } // else: open routes ignore their query string (a probe may add a cache-buster)
    const query_params q(query);
    return m.row->handler(route_call{req, ctx, m, q, later, peer, grant ? &*grant : nullptr});
}

} // namespace

// ---------------------------------------------------------------------------

void default_security_headers(response& res)
{
    res.set("X-Content-Type-Options", "nosniff");
    if (res.find("Content-Security-Policy") == res.end()) {
        res.set("Content-Security-Policy",
                boost::beast::string_view(api_security_policy.data(), api_security_policy.size()));
    }
}

void set_artifact_headers(response& res)
{
    res.set("Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'self'");
    res.set("X-Content-Type-Options", "nosniff");
    res.set("X-Frame-Options", "SAMEORIGIN");
    res.set(http::field::cache_control, "no-store");
}

unsigned status_for(std::string_view id)
{
    // The error catalogue's status (model/error_catalogue.hpp, docs/errors.md);
    // 500 for an id it does not have.
    const error_entry* e = find_error(id);
    return e ? e->http_status : unknown_error_status;
}

namespace {

// Errors whose message is for the operator, not the client: a 500 (a bug, an
// I/O failure) and anything the store says, which names the database file
// and quotes SQLite.
bool internal_detail(std::string_view id) { return status_for(id) == 500 || id.starts_with("store."); }

// A reference that ties a scrubbed answer to its line in the server log:
// 8 hex digits from a process-wide counter with a random start, so that
// references from two runs of the server do not repeat each other.
std::string next_error_reference()
{
    static std::atomic<std::uint32_t> next{std::random_device{}()};
    return fmt::format("{:08x}", next.fetch_add(1, std::memory_order_relaxed));
}

// error_response(), with `where` ("GET /path") for the server log.
response answer_error(std::string_view id, std::string_view message, unsigned version, bool keep_alive,
                      std::string_view where)
{
    const unsigned status = status_for(id);
    std::string body;
    if (internal_detail(id)) {
        const std::string ref = next_error_reference();
        std::string line = fmt::format("perfgate serve: error {}{}{}: [{}] {}", ref, where.empty() ? "" : " on ", where,
                                       id, message);
        // One line per error, whatever the message holds.
        std::replace_if(
            line.begin(), line.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }, ' ');
        line += '\n';
        // One write: the access log shares stderr with other threads.
        std::fputs(line.c_str(), stderr);
        // A full disk says so (issue 31, finding 14): a client that retries
        // a 500 learns that retrying will not help until space is freed.
        body = status == 500
                   ? dump(api::error_json("internal", fmt::format("internal server error (reference {})", ref)))
               : id == errors::store_full.view()
                   ? dump(api::error_json(id, fmt::format("storage full: the server's database has no space left; "
                                                          "nothing was stored (reference {})",
                                                          ref)))
                   : dump(api::error_json(id, fmt::format("the store refused the request (reference {})", ref)));
    } else {
        body = dump(api::error_json(id, message));
    }
    response res{static_cast<http::status>(status), version};
    res.set(http::field::server, "perfgate");
    res.set(http::field::content_type, "application/json");
    default_security_headers(res);
    if (status == 401) res.set(http::field::www_authenticate, "Bearer realm=\"perfgate\"");
    res.keep_alive(keep_alive);
    res.body() = std::move(body);
    res.prepare_payload();
    return res;
}

} // namespace

response error_response(std::string_view id, std::string_view message, unsigned version, bool keep_alive)
{
    return answer_error(id, message, version, keep_alive, {});
}

response route(const request& req, context& ctx, const service::token_grant* checked, std::string_view peer)
{
    response res = *guarded(req, [&] { return dispatch(req, ctx, checked, nullptr, peer); });
    default_security_headers(res);
    return res;
}

std::optional<response> route(const request& req, context& ctx, const service::token_grant* checked, responder later,
                              std::string_view peer)
{
    // An answer made later (a compare the committer stores) gets the same headers.
    responder with_headers;
    if (later) {
        with_headers = [later = std::move(later)](response&& res) {
            default_security_headers(res);
            later(std::move(res));
        };
    }
    auto res = guarded(req, [&] { return dispatch(req, ctx, checked, with_headers ? &with_headers : nullptr, peer); });
    if (res) default_security_headers(*res);
    return res;
}

std::span<const api_route> routes() { return table(); }

route_match match_route(const request& req)
{
    route_match m;
    const auto parts = path_segments(split_target(sv(req.target())).first);
    for (const auto& r : table()) {
        if (m.row && r.path != m.row->path) continue; // the other methods of the path found
        route_match candidate;
        if (!m.row && !segments_match(r.path, parts, candidate)) continue;
        if (!m.row) {
            m = std::move(candidate);
            m.row = &r;
        }
        if (r.method == req.method()) {
            m.row = &r;
            m.method_allowed = true;
            break;
        }
    }
    return m;
}

bool needs_token(const api_route& r, const request& req, const context& ctx)
{
    switch (r.who) {
    case access::open: return false;
    case access::upload:
    case access::baseline:
    case access::admin: return true;
    case access::read: return !(ctx.public_read && req[http::field::authorization].empty());
    }
    return true;
}

std::optional<model::scope> needed_scope(const api_route& r, const context& ctx)
{
    switch (r.who) {
    case access::open: return std::nullopt;
    case access::read: return ctx.public_read ? std::nullopt : std::optional(model::scope::read);
    case access::upload: return model::scope::upload;
    case access::baseline: return model::scope::baseline;
    case access::admin: return model::scope::admin;
    }
    return model::scope::admin;
}

std::optional<service::token_grant> check_token(const route_match& m, const request& req, const context& ctx)
{
    if (!needs_token(*m.row, req, ctx)) return std::nullopt;
    service::token_grant grant = ctx.service.tokens().authorize(detail::bearer_token(req), m.project);
    if (const auto scope = needed_scope(*m.row, ctx)) service::require_scope(grant, *scope, m.row->label);
    return grant;
}

bool takes_body(const request& req)
{
    if (pages::page_label(req)) return req.method() != http::verb::get;
    const route_match m = match_route(req);
    if (!m.row) return req.method() != http::verb::get;
    return m.method_allowed ? m.row->body != body_rule::none : req.method() != http::verb::get;
}

std::string_view route_label(const request& req)
{
    if (auto page = pages::page_label(req)) return *page;
    const route_match m = match_route(req);
    return m.row ? m.row->label : std::string_view("unmatched");
}


} // namespace perfgate::server
