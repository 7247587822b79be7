// The dashboard's router: which page a path names (and its /metrics label),
// the method and session checks, the page cache, the embedded assets; the
// views are in *_view.cpp (views.hpp), the headers, cookies and form checks
// in security.cpp.
#include "server/pages/pages.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>

#include "model/error.hpp"
#include "server/pages/assets.hpp"
#include "server/pages/security.hpp"
#include "server/pages/views.hpp"
#include "service/service.hpp"

namespace perfgate::server::pages {

namespace {

// ---------------------------------------------------------------------------
// Routes

enum class page {
    asset,
    overview,
    series,
    comparison,
    flame_graph,
    compare,
    alerts,
    triage,
    run,
    signin,
    signin_post,
    signout,
    none
};

struct page_match {
    page what = page::none;
    http::verb method = http::verb::get;
    std::string_view label;
    std::string project; // percent-decoded
    std::string id;      // comparisons/{id}, alerts/{id}, runs/{id}, assets/{name}
};

constexpr std::string_view label_asset = "GET /assets/{name}";
constexpr std::string_view label_overview = "GET /p/{project}";
constexpr std::string_view label_series = "GET /p/{project}/series";
constexpr std::string_view label_comparison = "GET /p/{project}/comparisons/{id}";
constexpr std::string_view label_flame_graph = "GET /p/{project}/comparisons/{id}/flame.svg";
constexpr std::string_view label_compare = "GET /p/{project}/compare";
constexpr std::string_view label_alerts = "GET /p/{project}/alerts";
constexpr std::string_view label_triage = "POST /p/{project}/alerts/{id}";
constexpr std::string_view label_run = "GET /p/{project}/runs/{id}";
constexpr std::string_view label_signin = "GET /p/{project}/signin";
constexpr std::string_view label_signin_post = "POST /p/{project}/signin";
constexpr std::string_view label_signout = "POST /p/{project}/signout";
constexpr std::string_view label_unmatched = "unmatched";

// nullopt: not a page path at all (the API router's business).
std::optional<page_match> match_page(const request& req)
{
    const std::string_view target = sv(req.target());
    const std::string_view path = target.substr(0, target.find('?'));
    if (!path.starts_with("/p/") && !path.starts_with("/assets/")) return std::nullopt;
    page_match m;
    m.label = label_unmatched;
    const auto parts = detail::path_segments(path);
    if (std::any_of(parts.begin(), parts.end(), [](std::string_view p) { return p.empty(); })) return m;
    if (parts[0] == "assets") {
        if (parts.size() == 2) {
            m.what = page::asset;
            m.label = label_asset;
            m.id = std::string(parts[1]);
        }
        return m;
    }
    if (parts.size() < 2 || parts.size() > 5) return m;
    auto project = detail::percent_decode(parts[1], false);
    if (!project) return m;
    m.project = std::move(*project);
    const bool post = req.method() == http::verb::post;
    if (parts.size() == 2) {
        m = {page::overview, http::verb::get, label_overview, m.project, {}};
    } else if (parts.size() == 3) {
        const std::string_view what = parts[2];
        if (what == "series") m = {page::series, http::verb::get, label_series, m.project, {}};
        else if (what == "compare") m = {page::compare, http::verb::get, label_compare, m.project, {}};
        else if (what == "alerts") m = {page::alerts, http::verb::get, label_alerts, m.project, {}};
        else if (what == "signin" && post) m = {page::signin_post, http::verb::post, label_signin_post, m.project, {}};
        else if (what == "signin") m = {page::signin, http::verb::get, label_signin, m.project, {}};
        else if (what == "signout") m = {page::signout, http::verb::post, label_signout, m.project, {}};
    } else if (parts.size() == 5) {
        // A comparison's flame graph (?benchmark=NAME), framed by its page.
        if (parts[2] == "comparisons" && parts[4] == "flame.svg") {
            m = {page::flame_graph, http::verb::get, label_flame_graph, m.project, std::string(parts[3])};
        }
    } else {
        const std::string_view what = parts[2];
        const std::string id(parts[3]);
        if (what == "comparisons") m = {page::comparison, http::verb::get, label_comparison, m.project, id};
        else if (what == "alerts") m = {page::triage, http::verb::post, label_triage, m.project, id};
        else if (what == "runs") m = {page::run, http::verb::get, label_run, m.project, id};
    }
    return m;
}

// ---------------------------------------------------------------------------
// Answers

response asset(const request& req, const page_match& m)
{
    const embedded_asset* a = find_asset(m.id);
    if (!a) throw error(errors::http_not_found, fmt::format("no asset '{}'", m.id.substr(0, 64)));
    const std::string etag = fmt::format("\"{}\"", a->sha256.substr(0, 32));
    const auto inm = req.find(http::field::if_none_match);
    response res{http::status::ok, req.version()};
    res.set(http::field::etag, etag);
    res.set(http::field::cache_control, "public, max-age=3600");
    res.set("X-Content-Type-Options", "nosniff");
    res.keep_alive(req.keep_alive());
    if (inm != req.end() && sv(inm->value()) == etag) {
        res.result(http::status::not_modified);
        return res;
    }
    res.set(http::field::content_type, bsv(asset_content_type(a->name)));
    res.body() = std::string(a->body);
    res.prepare_payload();
    return res;
}

// A read-only page from the cache, or made and kept. The generation is
// read before the page is made: a write racing with it leaves an entry
// that the next request already finds stale. The key is what the render
// depends on (page_key), never the raw target: `?from=1`, `?from=2`, ...
// or `/runs/005` would otherwise each cost a render (issue 31, finding 5).
template <typename Make>
response cached(page_state& p, const std::string& key, Make make)
{
    if (!p.ctx.page_cache) return render(p, make());
    const std::uint64_t generation = p.ctx.service.generation();
    if (const auto hit = p.ctx.page_cache->find(key, generation)) return render(p, *hit);
    // A render for a reader without a session (--public-read) takes one
    // from its address's allowance (client_throttle.hpp); a cached page is free.
    // (A request routed without a socket, in-process, has no address.)
    if (const std::string client = p.session ? "" : client_address(p.peer, p.req, p.ctx.trusted_proxies);
        !client.empty()) {
        if (const auto wait = p.ctx.anonymous_reads->take(client)) {
            response res = error_page(p, http::status::too_many_requests,
                                      fmt::format("Too many pages without signing in from your address; try again "
                                                  "in {} seconds, or sign in.",
                                                  wait->count()));
            res.set(http::field::retry_after, std::to_string(wait->count()));
            return res;
        }
    }
    const auto made = std::make_shared<const page_view>(make());
    p.ctx.page_cache->put(key, generation, made);
    return render(p, *made);
}

response dispatch_page(const request& req, context& ctx, const page_match& m, std::string_view peer)
{
    if (m.what == page::none && m.project.empty()) {
        throw error(errors::http_not_found, fmt::format("no page at '{}'", sv(req.target()).substr(0, 128)));
    }
    if (m.what == page::none) {
        // A mistyped dashboard address: a page a person can read, with a way back.
        const page_state p{req, ctx, m.project, session_of(req, ctx, m.project), peer};
        return error_page(p, http::status::not_found,
                          fmt::format("There is no page at '{}'.", sv(req.target()).substr(0, 128)));
    }
    if (req.method() != m.method) {
        response res = error_response(errors::http_method_not_allowed,
                                      fmt::format("{} is not allowed here; use {}", sv(req.method_string()),
                                                  sv(http::to_string(m.method))),
                                      req.version(), req.keep_alive());
        res.set(http::field::allow, http::to_string(m.method));
        return res;
    }
    if (m.what == page::asset) return asset(req, m);

    page_state p{req, ctx, m.project, session_of(req, ctx, m.project), peer};
    try {
        const std::string_view target = sv(req.target());
        const auto qpos = target.find('?');
        const query_params q(qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1));
        if (m.what == page::signin) return signin_page(p, q.get("next"));
        if (m.what == page::signin_post) return signin_post(p);
        if (m.what == page::signout) return signout(p);
        if (m.what == page::triage) check_form_origin(req);
        if (!p.session && !(ctx.public_read && m.what != page::triage)) {
            return redirect(project_path(p.project) + "/signin" + html::url_query({{"next", sv(req.target())}}), req);
        }
        // A session does what its token's scopes allow (docs/dashboard.md
        // "Sessions"): reading needs read (not with --public-read), triage
        // admin, running a comparison (it is stored) upload.
        if (p.session) {
            const model::scope need = m.what == page::triage    ? model::scope::admin
                                      : m.what == page::compare ? model::scope::upload
                                                                : model::scope::read;
            if (need != model::scope::read || !ctx.public_read) {
                service::require_scope({p.session->token_id, p.session->token_label, p.session->scopes}, need, m.label);
            }
        }
        ctx.service.projects().require(p.project);
        // The cache key: the page, its project, its id as a number and its
        // parameters in canonical form; the series' from/to only place the
        // chart's initial zoom, which dashboard.js reads from the address.
        const auto key = [&](std::string_view what, std::string id, const std::string& params) {
            return fmt::format("{}:{}{}|{}|{}", what, p.project.size(), p.project, id, params);
        };
        switch (m.what) {
        case page::overview: return cached(p, key("overview", "", q.canonical()), [&] { return overview_view(p, q); });
        case page::series:
            check_series_request(q);
            return cached(p, key("series", "", q.canonical({"from", "to"})), [&] { return series_view(p, q); });
        case page::comparison: {
            const auto id = positive_id(m.id, "comparison id");
            return cached(p, key("comparison", std::to_string(id), q.canonical()),
                          [&] { return comparison_view(p, id, q); });
        }
        case page::flame_graph: return flame_graph_file(p, m.id, q);
        case page::compare: return compare_page(p, q);
        case page::alerts: return alerts_page(p, q);
        case page::triage: return triage(p, m.id);
        case page::run: {
            q.only({}); // a run page takes no parameter
            const auto id = positive_id(m.id, "run id");
            return cached(p, key("run", std::to_string(id), ""), [&] { return run_view(p, m.id); });
        }
        default: break;
        }
        throw error(errors::http_not_found, "no such page");
    } catch (const error& e) {
        const unsigned status = status_for(e.id());
        // The router scrubs what only the operator should read.
        if (status >= 500 || std::string_view(e.id()).starts_with("store.")) throw;
        return error_page(p, static_cast<http::status>(status), e.what());
    }
}

} // namespace

std::optional<std::string_view> page_label(const request& req)
{
    const auto m = match_page(req);
    if (!m) return std::nullopt;
    return m->label;
}

response handle(const request& req, context& ctx, std::string_view peer)
{
    const auto m = match_page(req);
    PERFGATE_CHECK(m.has_value());
    return dispatch_page(req, ctx, *m, peer);
}

} // namespace perfgate::server::pages
