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
#include "server/pages/html.hpp"
#include "server/pages/pages.hpp"
#include "server/request_text.hpp"
#include "service/service.hpp"
#include "service/text.hpp"

namespace perfgate::server {

namespace http = boost::beast::http;
using api::dump;
using detail::path_segments;
using detail::percent_decode;
using detail::query_params;
using detail::sv;
using nlohmann::json;

namespace {

// ---------------------------------------------------------------------------
// Route table. Labels are the /metrics "route" values: a fixed set, so a
// scanner probing random paths cannot blow up the metric cardinality.

enum class endpoint {
    healthz,
    metrics,
    bench_constant,
    runs,
    compare,
    comparisons,
    comparison,
    history,
    benchmarks,
    alerts,
    alert,
    change_points,
    flame_graph,
    attribution,
    webhooks,
    webhook,
    acceptances,
    baseline_run,
    none
};

struct route_match {
    endpoint target = endpoint::none;
    http::verb method = http::verb::get; // the one method the endpoint allows
    std::string_view label = "unmatched";
    std::string project; // percent-decoded path segment
    std::string id;      // comparisons/{id}, comparisons/{id}/flame-graph (/attribution), alerts/{id}
    // A second method the endpoint allows (alerts/{id}: GET and PATCH).
    std::optional<http::verb> also;
};

constexpr std::string_view label_healthz = "GET /healthz";
constexpr std::string_view label_metrics = "GET /metrics";
constexpr std::string_view label_bench = "GET /bench/constant";
constexpr std::string_view label_runs = "POST /api/v1/projects/{project}/runs";
constexpr std::string_view label_compare = "POST /api/v1/projects/{project}/compare";
constexpr std::string_view label_comparisons = "GET /api/v1/projects/{project}/comparisons";
constexpr std::string_view label_comparison = "GET /api/v1/projects/{project}/comparisons/{id}";
constexpr std::string_view label_history = "GET /api/v1/projects/{project}/history";
constexpr std::string_view label_benchmarks = "GET /api/v1/projects/{project}/benchmarks";
constexpr std::string_view label_alerts = "GET /api/v1/projects/{project}/alerts";
constexpr std::string_view label_alert = "GET /api/v1/projects/{project}/alerts/{id}";
constexpr std::string_view label_alert_patch = "PATCH /api/v1/projects/{project}/alerts/{id}";
constexpr std::string_view label_change_points = "GET /api/v1/projects/{project}/change-points";
constexpr std::string_view label_flame_graph = "GET /api/v1/projects/{project}/comparisons/{id}/flame-graph";
constexpr std::string_view label_flame_graph_put = "PUT /api/v1/projects/{project}/comparisons/{id}/flame-graph";
constexpr std::string_view label_attribution_put = "PUT /api/v1/projects/{project}/comparisons/{id}/attribution";
constexpr std::string_view label_webhooks = "GET /api/v1/projects/{project}/webhooks";
constexpr std::string_view label_webhooks_post = "POST /api/v1/projects/{project}/webhooks";
constexpr std::string_view label_baseline_run = "GET /api/v1/projects/{project}/baseline-run";
constexpr std::string_view label_webhook_delete = "DELETE /api/v1/projects/{project}/webhooks/{id}";
constexpr std::string_view label_acceptances_post = "POST /api/v1/projects/{project}/acceptances";

std::pair<std::string_view, std::string_view> split_target(std::string_view target)
{
    auto q = target.find('?');
    if (q == std::string_view::npos) return {target, {}};
    return {target.substr(0, q), target.substr(q + 1)};
}

route_match match(const request& req)
{
    auto [path, query] = split_target(sv(req.target()));
    route_match m;
    if (path == "/healthz") return {endpoint::healthz, http::verb::get, label_healthz, {}, {}, {}};
    if (path == "/metrics") return {endpoint::metrics, http::verb::get, label_metrics, {}, {}, {}};
    if (path == "/bench/constant") return {endpoint::bench_constant, http::verb::get, label_bench, {}, {}, {}};

    // One spelling per resource: no route takes a trailing slash or an empty
    // segment ("/healthz/", "/api/v1/projects/p/runs/", "/api//v1"), so a
    // path either names a resource exactly or is 404.
    auto parts = path_segments(path);
    if (parts.size() < 5 || parts.size() > 7 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "projects" ||
        std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); })) {
        return m;
    }
    auto project = percent_decode(parts[3], false);
    if (!project) return m;
    m.project = std::move(*project);
    const std::string_view what = parts[4];
    if (parts.size() == 7) {
        // A comparison's flame graph or attribution (?benchmark=NAME: names
        // may hold '/'). The attribution is read with the comparison.
        if (what != "comparisons") return m;
        m.id = std::string(parts[5]);
        if (parts[6] == "attribution") {
            m.target = endpoint::attribution;
            m.method = http::verb::put;
            m.label = label_attribution_put;
            return m;
        }
        if (parts[6] != "flame-graph") return m;
        m.target = endpoint::flame_graph;
        if (req.method() == http::verb::put) {
            m.method = http::verb::put;
            m.label = label_flame_graph_put;
            m.also = http::verb::get;
        } else {
            m.label = label_flame_graph;
            m.also = http::verb::put;
        }
        return m;
    }
    if (parts.size() == 5) {
        if (what == "runs") {
            m.target = endpoint::runs;
            m.method = http::verb::post;
            m.label = label_runs;
        } else if (what == "compare") {
            m.target = endpoint::compare;
            m.method = http::verb::post;
            m.label = label_compare;
        } else if (what == "comparisons") {
            m.target = endpoint::comparisons;
            m.label = label_comparisons;
        } else if (what == "history") {
            m.target = endpoint::history;
            m.label = label_history;
        } else if (what == "benchmarks") {
            m.target = endpoint::benchmarks;
            m.label = label_benchmarks;
        } else if (what == "alerts") {
            m.target = endpoint::alerts;
            m.label = label_alerts;
        } else if (what == "baseline-run") {
            m.target = endpoint::baseline_run;
            m.label = label_baseline_run;
        } else if (what == "change-points") {
            m.target = endpoint::change_points;
            m.label = label_change_points;
        } else if (what == "acceptances") {
            m.target = endpoint::acceptances;
            m.method = http::verb::post;
            m.label = label_acceptances_post;
        } else if (what == "webhooks") {
            m.target = endpoint::webhooks;
            if (req.method() == http::verb::post) {
                m.method = http::verb::post;
                m.label = label_webhooks_post;
                m.also = http::verb::get;
            } else {
                m.label = label_webhooks;
                m.also = http::verb::post;
            }
        }
    } else if (what == "comparisons") {
        m.target = endpoint::comparison;
        m.label = label_comparison;
        m.id = std::string(parts[5]);
    } else if (what == "webhooks") {
        m.target = endpoint::webhook;
        m.method = http::verb::delete_;
        m.label = label_webhook_delete;
        m.id = std::string(parts[5]);
    } else if (what == "alerts") {
        // Two methods: the label (and so the auth gate's idea of a write)
        // follows the request's method.
        m.target = endpoint::alert;
        m.id = std::string(parts[5]);
        if (req.method() == http::verb::patch) {
            m.method = http::verb::patch;
            m.label = label_alert_patch;
            m.also = http::verb::get;
        } else {
            m.label = label_alert;
            m.also = http::verb::patch;
        }
    }
    return m;
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

// ---------------------------------------------------------------------------
// Auth: writes always need a Bearer token of the path's project; reads too,
// unless the server runs with --public-read. A token that is sent is checked
// even then, so that a client can learn whether its token would be
// accepted for a write (perfgate run checks it before measuring). The store
// compares token hashes in constant time (store.hpp).

void authorize(const request& req, context& ctx, const std::string& project, bool write)
{
    if (!write && ctx.public_read && req[http::field::authorization].empty()) return;
    const std::string_view token = detail::bearer_token(req);
    ctx.service.authorize(token, project);
}

model::ingest_request ingest_from_csv(const request& req, const query_params& q, const std::string& project)
{
    q.only({"benchmark", "role", "git_sha", "branch", "backend", "pr", "testbed", "testbed_cpu", "testbed_kernel",
            "testbed_fingerprint", "testbed_cores", "session", "input_format", "toolchain", "mainline"});
    model::ingest_request in;
    in.project = project;
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

response post_run(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    const std::string type = media_type(sv(req[http::field::content_type]));
    model::ingest_request in;
    if (type == "application/json") {
        q.only({}); // the fields are in the body
        in = api::ingest_request_from_json(api::parse_request_body(req.body()));
        in.source = "request body: perf_csv";
    } else if (type == "text/csv") in = ingest_from_csv(req, q, m.project);
    else {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json or text/csv",
                                type.substr(0, 64)));
    }
    in.project = m.project;
    // Idempotency-Key (draft-ietf-httpapi-idempotency-key-header): a retry
    // of an upload gets the first attempt's run (service::ingest).
    std::optional<std::string> key;
    if (req.count("Idempotency-Key") > 1) {
        throw error(errors::ingest_bad_idempotency_key, "Idempotency-Key: the header appears more than once");
    }
    if (auto it = req.find("Idempotency-Key"); it != req.end()) key = std::string(sv(it->value()));
    const model::ingest_result r = ctx.service.ingest(in, key);
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
        return fail("internal", e.what());
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
    q.only({});
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

    if (!later) return compare_response(ctx.service.compare(m.project, pairs, rules, baseline), m.project, req);
    // What the answer needs of the request once it is gone: its header.
    request head;
    head.base() = req.base();
    auto ready = ctx.service.compare_later(
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
    q.only({"benchmark"});
    const auto id = comparison_id_of(m);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "image/svg+xml") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send image/svg+xml", type.substr(0, 64)));
    }
    const std::string benchmark = q.required("benchmark");
    ctx.service.store_flame_graph(m.project, id, benchmark, req.body());
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
    q.only({"benchmark"});
    const auto id = comparison_id_of(m);
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const std::string benchmark = q.required("benchmark");
    ctx.service.store_attribution(m.project, id, benchmark, req.body());
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
    q.only({"benchmark"});
    const auto id = comparison_id_of(m);
    const std::string benchmark = q.required("benchmark");
    auto svg = ctx.service.flame_graph(m.project, id, benchmark);
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
    q.only({"format"});
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error(errors::http_bad_param,
                    fmt::format("comparison id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    auto rep = ctx.service.load_comparison(m.project, *id);
    if (!rep) {
        throw error(errors::comparison_not_found, fmt::format("no comparison {} in project '{}'", *id, m.project));
    }
    rep->comparison_id = *id;
    const std::string format = q.get("format").value_or("json");
    if (format == "json") {
        json out = report::to_json(*rep);
        out["comparison_id"] = *id;
        const auto accepted = ctx.service.acceptance(m.project, *id);
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
        opt.repository_url = ctx.service.repository_url(m.project).value_or("");
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
    q.only({"limit"});
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
    list.comparisons = ctx.service.recent_comparisons(m.project, limit);
    list.repository_url = ctx.service.repository_url(m.project);
    return json_response(http::status::ok, api::to_json(list), req);
}

response get_history(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({"benchmark", "counter", "branch", "role", "testbed", "since", "limit", "format"});
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
    const std::string branch = q.get("branch").value_or(ctx.service.baseline_branch(m.project));
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
    auto points = ctx.service.history(hq);
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
    q.only({"benchmark", "git_sha", "branch", "testbed", "backend", "toolchain"});
    model::reusable_run_query rq;
    rq.project = m.project;
    rq.benchmark = q.required("benchmark");
    rq.git_sha = q.required("git_sha");
    rq.testbed = q.required("testbed");
    rq.backend = q.required("backend");
    rq.toolchain = q.required("toolchain");
    rq.branch = q.get("branch").value_or(ctx.service.baseline_branch(m.project));
    const auto found = ctx.service.find_reusable_run(rq);
    return json_response(http::status::ok, json{{"run", found ? api::to_json(*found) : json()}}, req);
}

response get_benchmarks(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({});
    json list = json::array();
    for (const auto& b : ctx.service.benchmarks(m.project)) {
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
    q.only({"status", "benchmark", "counter", "testbed", "limit"});
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
    return json_response(http::status::ok, api::alerts_to_json(ctx.service.alerts(aq)), req);
}

response get_alert(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({});
    return json_response(http::status::ok, api::to_json(ctx.service.alert(m.project, alert_id(m))), req);
}

response patch_alert(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({});
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
    return json_response(http::status::ok, api::to_json(ctx.service.update_alert(m.project, id, u)), req);
}

// POST: a reviewer's acceptance of the regression of a pull request head
// (perfgate accept, docs/http-api.md "Accept a regression"): stored with the
// project's newest comparison of that candidate commit.
response post_acceptance(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({});
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error(errors::http_unsupported_media_type,
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const api::acceptance_request r = api::acceptance_request_from_json(api::parse_request_body(req.body()));
    const model::acceptance a = ctx.service.accept_comparison(m.project, r.head_sha, r.login, r.reason);
    const std::string url = fmt::format("/api/v1/projects/{}/comparisons/{}", html::url_encode(m.project),
                                        a.comparison_id);
    response res = json_response(http::status::created, api::to_json(a), req);
    res.set(http::field::location, url);
    return res;
}

// A project's webhooks (docs/http-api.md "Webhooks"): never the secret,
// only whether there is one.
json webhook_to_json(const store::store::webhook_info& w)
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

response webhooks_route(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({});
    if (req.method() == http::verb::post) {
        const std::string type = media_type(sv(req[http::field::content_type]));
        if (type != "application/json") {
            throw error(errors::http_unsupported_media_type,
                        fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
        }
        const json body = api::parse_request_body(req.body());
        auto text = [&](const char* field, bool required) -> std::string {
            const auto it = body.is_object() ? body.find(field) : body.end();
            if (it == body.end() || it->is_null()) {
                if (required) throw error(errors::ingest_bad_field, fmt::format("field '{}' is required", field));
                return {};
            }
            if (!it->is_string())
                throw error(errors::ingest_bad_field, fmt::format("field '{}' must be a string", field));
            return it->get<std::string>();
        };
        const std::string url = text("url", true);
        std::string format = text("format", false);
        if (format.empty()) format = "json";
        const auto id = ctx.service.add_webhook(m.project, url, format, text("secret", false));
        for (const auto& w : ctx.service.webhooks(m.project)) {
            if (w.id == id) return json_response(http::status::created, webhook_to_json(w), req);
        }
    }
    json out = json::array();
    for (const auto& w : ctx.service.webhooks(m.project)) out.push_back(webhook_to_json(w));
    return json_response(http::status::ok, json{{"webhooks", std::move(out)}}, req);
}

response delete_webhook(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({});
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error(errors::http_bad_param,
                    fmt::format("webhook id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    if (!ctx.service.remove_webhook(m.project, *id)) {
        throw error(errors::http_not_found, fmt::format("project '{}' has no webhook {}", m.project, *id));
    }
    return json_response(http::status::ok, json{{"deleted", *id}}, req);
}

response get_change_points(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    q.only({"benchmark", "counter", "testbed", "branch"});
    const auto points = ctx.service.change_points(m.project, q.required("benchmark"), q.required("counter"),
                                                  q.get("testbed"), q.get("branch"));
    return json_response(http::status::ok, api::change_points_to_json(points), req);
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

std::optional<response> dispatch(const request& req, context& ctx, bool token_checked, const responder* later,
                                 std::string_view peer)
{
    if (pages::page_label(req)) return pages::handle(req, ctx, peer);
    const route_match m = match(req);
    if (m.target == endpoint::none || (m.target == endpoint::bench_constant && !ctx.bench_routes)) {
        auto [path, query] = split_target(sv(req.target()));
        if (path.size() > 1 && path.ends_with('/')) {
            throw error(errors::http_not_found,
                        fmt::format("no route for '{}' (paths take no trailing slash)", path.substr(0, 128)));
        }
        throw error(errors::http_not_found, fmt::format("no route for '{}'", path.substr(0, 128)));
    }
    if (req.method() != m.method && req.method() != m.also) {
        const std::string allowed = m.also ? fmt::format("{}, {}", sv(http::to_string(m.method)),
                                                         sv(http::to_string(*m.also)))
                                           : std::string(sv(http::to_string(m.method)));
        response res = error_response(errors::http_method_not_allowed,
                                      fmt::format("{} is not allowed on {}; use {}", sv(req.method_string()),
                                                  m.label.substr(m.label.find(' ') + 1), allowed),
                                      req.version(), req.keep_alive());
        res.set(http::field::allow, allowed);
        return res;
    }

    switch (m.target) {
    case endpoint::healthz: try { ctx.service.check_health();
        } catch (const error& e) {
            // The store cannot serve (its file deleted or replaced, a damaged
            // file, PostgreSQL down): 503 with the error's id, logged like
            // every store error (docs/http-api.md#health-and-metrics).
            response res = error_response(e.id(), e.what(), req.version(), req.keep_alive());
            res.result(http::status::service_unavailable);
            return res;
        }
        return json_response(http::status::ok, json{{"status", "ok"}}, req);
    case endpoint::metrics:
        return make_response(http::status::ok,
                             ctx.stats.render(ctx.service.store_size_bytes(), ctx.service.watch_stats(),
                                              ctx.service.commit_stats(),
                                              ctx.service.notify_stats().value_or(service::notifier::counts{})),
                             "text/plain; version=0.0.4; charset=utf-8", req);
    case endpoint::bench_constant:
        return make_response(http::status::ok, "{\"status\":\"ok\"}", "application/json", req);
    default: break;
    }

    // Webhook URLs can be credentials (a Slack incoming webhook's is): reading
    // them needs the project's token even with --public-read.
    const bool write = req.method() != http::verb::get || m.target == endpoint::webhooks;
    if (!token_checked) authorize(req, ctx, m.project, write);
    ctx.service.require_project(m.project);
    const query_params q(split_target(sv(req.target())).second);
    // A history read without a token (--public-read) takes one from its
    // address's allowance (pages/client_throttle.hpp).
    if (m.target == endpoint::history && req.find(http::field::authorization) == req.end()) {
        const std::string client = pages::client_address(peer, req, ctx.trusted_proxies);
        if (const auto wait = client.empty() ? std::nullopt : ctx.anonymous_reads->take(client)) {
            return too_many_requests(req, *wait);
        }
    }

    switch (m.target) {
    case endpoint::runs: return post_run(req, ctx, m, q);
    case endpoint::compare: return post_compare(req, ctx, m, q, later);
    case endpoint::comparisons: return get_comparisons(req, ctx, m, q);
    case endpoint::comparison: return get_comparison(req, ctx, m, q);
    case endpoint::history: return get_history(req, ctx, m, q);
    case endpoint::benchmarks: return get_benchmarks(req, ctx, m, q);
    case endpoint::alerts: return get_alerts(req, ctx, m, q);
    case endpoint::alert:
        return req.method() == http::verb::patch ? patch_alert(req, ctx, m, q) : get_alert(req, ctx, m, q);
    case endpoint::change_points: return get_change_points(req, ctx, m, q);
    case endpoint::flame_graph:
        return req.method() == http::verb::put ? put_flame_graph(req, ctx, m, q) : get_flame_graph(req, ctx, m, q);
    case endpoint::attribution: return put_attribution(req, ctx, m, q);
    case endpoint::webhooks: return webhooks_route(req, ctx, m, q);
    case endpoint::webhook: return delete_webhook(req, ctx, m, q);
    case endpoint::acceptances: return post_acceptance(req, ctx, m, q);
    case endpoint::baseline_run: return get_baseline_run(req, ctx, m, q);
    default: break;
    }
    PERFGATE_CHECK(false && "unreachable route");
    return {};
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

response route(const request& req, context& ctx, bool token_checked, std::string_view peer)
{
    response res = *guarded(req, [&] { return dispatch(req, ctx, token_checked, nullptr, peer); });
    default_security_headers(res);
    return res;
}

std::optional<response> route(const request& req, context& ctx, bool token_checked, responder later,
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
    auto res = guarded(req,
                       [&] { return dispatch(req, ctx, token_checked, with_headers ? &with_headers : nullptr, peer); });
    if (res) default_security_headers(*res);
    return res;
}

std::string_view route_label(const request& req)
{
    if (auto page = pages::page_label(req)) return *page;
    return match(req).label;
}


} // namespace perfgate::server
