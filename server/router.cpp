#include "server/router.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>
#include <map>
#include <utility>

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/names.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "gate/service.hpp"
#include "server/metrics.hpp"
#include "stats/error.hpp"

namespace perfgate::server {

namespace http = boost::beast::http;
using nlohmann::json;
using gate::validate_backend;
using gate::validate_role;
using gate::validate_text;

namespace {

// Boost 1.74's beast::string_view is boost::string_view.
std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

// ---------------------------------------------------------------------------
// Route table. Labels are the /metrics "route" values: a fixed set, so a
// scanner probing random paths cannot blow up the metric cardinality.

enum class endpoint { healthz, metrics, bench_constant, runs, compare, comparison, history, benchmarks, none };

struct route_match {
    endpoint target = endpoint::none;
    http::verb method = http::verb::get;   // the one method the endpoint allows
    std::string_view label = "unmatched";
    std::string project;                   // percent-decoded path segment
    std::string id;                        // comparisons/{id}
};

constexpr std::string_view label_healthz = "GET /healthz";
constexpr std::string_view label_metrics = "GET /metrics";
constexpr std::string_view label_bench = "GET /bench/constant";
constexpr std::string_view label_runs = "POST /api/v1/projects/{project}/runs";
constexpr std::string_view label_compare = "POST /api/v1/projects/{project}/compare";
constexpr std::string_view label_comparison = "GET /api/v1/projects/{project}/comparisons/{id}";
constexpr std::string_view label_history = "GET /api/v1/projects/{project}/history";
constexpr std::string_view label_benchmarks = "GET /api/v1/projects/{project}/benchmarks";

int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// RFC 3986 percent-decoding; '+' is a space only in query strings
// (application/x-www-form-urlencoded). nullopt on a broken %XX.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= s.size()) return std::nullopt;
            int hi = hex_value(s[i + 1]);
            int lo = hex_value(s[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            out += static_cast<char>(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

std::pair<std::string_view, std::string_view> split_target(std::string_view target)
{
    auto q = target.find('?');
    if (q == std::string_view::npos) return {target, {}};
    return {target.substr(0, q), target.substr(q + 1)};
}

std::vector<std::string_view> split_path(std::string_view path)
{
    std::vector<std::string_view> parts;
    std::size_t pos = 0;
    if (!path.empty() && path[0] == '/') pos = 1;
    while (pos <= path.size()) {
        auto next = path.find('/', pos);
        if (next == std::string_view::npos) next = path.size();
        parts.push_back(path.substr(pos, next - pos));
        pos = next + 1;
    }
    // "/healthz/" and "/healthz" are the same resource.
    if (parts.size() > 1 && parts.back().empty()) parts.pop_back();
    return parts;
}

route_match match(const request& req)
{
    auto [path, query] = split_target(sv(req.target()));
    route_match m;
    if (path == "/healthz") return {endpoint::healthz, http::verb::get, label_healthz, {}, {}};
    if (path == "/metrics") return {endpoint::metrics, http::verb::get, label_metrics, {}, {}};
    if (path == "/bench/constant") return {endpoint::bench_constant, http::verb::get, label_bench, {}, {}};

    auto parts = split_path(path);
    if (parts.size() < 5 || parts.size() > 6 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "projects") {
        return m;
    }
    auto project = percent_decode(parts[3], false);
    if (!project) return m;
    m.project = std::move(*project);
    const std::string_view what = parts[4];
    if (parts.size() == 5) {
        if (what == "runs") { m.target = endpoint::runs; m.method = http::verb::post; m.label = label_runs; }
        else if (what == "compare") { m.target = endpoint::compare; m.method = http::verb::post; m.label = label_compare; }
        else if (what == "history") { m.target = endpoint::history; m.label = label_history; }
        else if (what == "benchmarks") { m.target = endpoint::benchmarks; m.label = label_benchmarks; }
    } else if (what == "comparisons") {
        m.target = endpoint::comparison;
        m.label = label_comparison;
        m.id = std::string(parts[5]);
    }
    return m;
}

// ---------------------------------------------------------------------------
// Query strings

class query_params {
public:
    explicit query_params(std::string_view query)
    {
        std::size_t pos = 0;
        while (pos < query.size()) {
            auto amp = query.find('&', pos);
            if (amp == std::string_view::npos) amp = query.size();
            std::string_view pair = query.substr(pos, amp - pos);
            pos = amp + 1;
            if (pair.empty()) continue;
            auto eq = pair.find('=');
            std::string_view raw_key = pair.substr(0, eq);
            std::string_view raw_value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
            auto key = percent_decode(raw_key, true);
            auto value = percent_decode(raw_value, true);
            if (!key || !value) {
                throw error("http.bad_param",
                            fmt::format("query string: bad percent-encoding in '{}'", pair.substr(0, 64)));
            }
            values_[*key] = std::move(*value);
        }
    }

    [[nodiscard]] std::optional<std::string> get(std::string_view key) const
    {
        auto it = values_.find(key);
        if (it == values_.end()) return std::nullopt;
        return it->second;
    }

    [[nodiscard]] std::string required(std::string_view key) const
    {
        auto v = get(key);
        if (!v || v->empty()) {
            throw error("http.missing_param", fmt::format("query parameter '{}' is required", key));
        }
        return *v;
    }

private:
    std::map<std::string, std::string, std::less<>> values_;
};

std::optional<std::int64_t> parse_int(std::string_view s)
{
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

// "since": unix seconds, or an ISO 8601 UTC date / date-time
// ("2026-11-22", "2026-11-22T02:11:05Z").
std::int64_t parse_since(std::string_view s)
{
    if (auto v = parse_int(s)) return *v;
    std::tm tm{};
    int consumed = 0;
    const std::string text(s);
    bool ok = false;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                    &tm.tm_min, &tm.tm_sec, &consumed) == 6 &&
        static_cast<std::size_t>(consumed) == text.size()) {
        ok = true;
    } else {
        tm = {};
        consumed = 0;
        ok = std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &consumed) == 3 &&
             static_cast<std::size_t>(consumed) == text.size();
    }
    if (!ok || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31) {
        throw error("http.bad_param",
                    fmt::format("query parameter 'since': expected unix seconds or an ISO 8601 UTC date "
                                "(2026-11-22 or 2026-11-22T02:11:05Z), got '{}'",
                                s.substr(0, 64)));
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<std::int64_t>(timegm(&tm));
}

// ---------------------------------------------------------------------------
// Responses

std::string dump(const json& j)
{
    // Replace invalid UTF-8 rather than throw: messages may quote user bytes.
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

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
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// ---------------------------------------------------------------------------
// Auth: writes always need a Bearer token of the path's project; reads too,
// unless the server runs with --public-read. The store compares token hashes
// in constant time (store.hpp).

void authorize(const request& req, context& ctx, const std::string& project, bool write)
{
    if (!write && ctx.public_read) return;
    auto header = req[http::field::authorization];
    if (header.empty()) {
        throw error("auth.missing_token", "missing 'Authorization: Bearer <token>' header "
                                          "(create a token with `perfgate token create`)");
    }
    constexpr std::string_view scheme = "bearer ";
    std::string_view h(header.data(), header.size());
    if (h.size() <= scheme.size() ||
        !std::equal(scheme.begin(), scheme.end(), h.begin(),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
        throw error("auth.bad_token", "Authorization header: expected 'Bearer <token>'");
    }
    std::string_view token = h.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    auto owner = ctx.db.token_project(token);
    if (!owner) throw error("auth.bad_token", "Authorization header: unknown or revoked token");
    if (*owner != project) {
        throw error("auth.forbidden", fmt::format("this token does not grant access to project '{}'", project));
    }
}

void require_project(context& ctx, const std::string& project)
{
    if (!ctx.db.project_exists(project)) {
        throw error("project.not_found",
                    fmt::format("no project '{}' (projects are created by `perfgate token create`)", project));
    }
}

// ---------------------------------------------------------------------------
// JSON field access with errors that name the field.

std::string_view type_name(const json& j)
{
    return j.type_name();
}

const json* field(const json& doc, std::string_view name)
{
    auto it = doc.find(name);
    if (it == doc.end() || it->is_null()) return nullptr;
    return &*it;
}

std::optional<std::string> string_field(const json& doc, std::string_view name, std::string_view path,
                                        bool required)
{
    const json* v = field(doc, name);
    if (!v) {
        if (required) throw error("ingest.bad_field", fmt::format("request body: field '{}{}' is required", path, name));
        return std::nullopt;
    }
    if (!v->is_string()) {
        throw error("ingest.bad_field",
                    fmt::format("request body: field '{}{}' must be a string, got {}", path, name, type_name(*v)));
    }
    return v->get<std::string>();
}




// The request body as a JSON object, or "http.bad_json" saying why not.
json parse_json_object(const request& req)
{
    json doc;
    try {
        doc = json::parse(req.body());
    } catch (const json::parse_error& e) {
        throw error("http.bad_json", fmt::format("request body: {}", e.what()));
    }
    if (!doc.is_object()) {
        throw error("http.bad_json", fmt::format("request body: expected a JSON object, got {}", type_name(doc)));
    }
    return doc;
}

gate::ingest_request ingest_from_json(const request& req, const std::string& project)
{
    const json doc = parse_json_object(req);

    gate::ingest_request in;
    in.project = project;
    in.source = "request body: perf_csv";
    if (auto v = string_field(doc, "benchmark", "", false)) in.benchmark = *v;
    in.role = *string_field(doc, "role", "", true);
    in.git_sha = *string_field(doc, "git_sha", "", true);
    in.branch = *string_field(doc, "branch", "", true);
    in.perf_csv = *string_field(doc, "perf_csv", "", true);
    if (auto v = string_field(doc, "backend", "", false)) in.backend = *v;
    if (const json* pr = field(doc, "pr")) {
        if (!pr->is_number_integer() || pr->get<std::int64_t>() <= 0) {
            throw error("ingest.bad_field",
                        fmt::format("request body: field 'pr' must be a positive integer, got {}", dump(*pr).substr(0, 64)));
        }
        in.pr = pr->get<std::int64_t>();
    }
    if (const json* tb = field(doc, "testbed")) {
        if (!tb->is_object()) {
            throw error("ingest.bad_field",
                        fmt::format("request body: field 'testbed' must be an object, got {}", type_name(*tb)));
        }
        if (auto v = string_field(*tb, "name", "testbed.", false)) in.testbed.name = *v;
        if (auto v = string_field(*tb, "cpu", "testbed.", false)) in.testbed.cpu = *v;
        if (auto v = string_field(*tb, "kernel", "testbed.", false)) in.testbed.kernel = *v;
        if (auto v = string_field(*tb, "fingerprint", "testbed.", false)) in.testbed.fingerprint = *v;
        if (const json* cores = field(*tb, "cores")) {
            if (!cores->is_number_integer() || cores->get<std::int64_t>() < 0 || cores->get<std::int64_t>() > 1 << 20) {
                throw error("ingest.bad_field", "request body: field 'testbed.cores' must be a non-negative integer");
            }
            in.testbed.cores = cores->get<int>();
        }
    }
    if (const json* env = field(doc, "environment")) {
        if (!env->is_object()) {
            throw error("ingest.bad_field",
                        fmt::format("request body: field 'environment' must be an object, got {}", type_name(*env)));
        }
        in.environment_json = dump(*env);
    }
    return in;
}

gate::ingest_request ingest_from_csv(const request& req, const query_params& q, const std::string& project)
{
    gate::ingest_request in;
    in.project = project;
    in.source = "request body (text/csv)";
    if (auto v = q.get("benchmark")) in.benchmark = *v;
    in.role = q.required("role");
    in.git_sha = q.required("git_sha");
    in.branch = q.required("branch");
    if (auto v = q.get("backend")) in.backend = *v;
    if (auto v = q.get("pr")) {
        auto pr = parse_int(*v);
        if (!pr || *pr <= 0) throw error("ingest.bad_field", "query parameter 'pr' must be a positive integer");
        in.pr = *pr;
    }
    if (auto v = q.get("testbed")) in.testbed.name = *v;
    if (auto v = q.get("testbed_cpu")) in.testbed.cpu = *v;
    if (auto v = q.get("testbed_kernel")) in.testbed.kernel = *v;
    if (auto v = q.get("testbed_fingerprint")) in.testbed.fingerprint = *v;
    if (auto v = q.get("testbed_cores")) {
        auto cores = parse_int(*v);
        if (!cores || *cores < 0 || *cores > 1 << 20) {
            throw error("ingest.bad_field", "query parameter 'testbed_cores' must be a non-negative integer");
        }
        in.testbed.cores = static_cast<int>(*cores);
    }
    in.perf_csv = req.body();
    return in;
}

void validate_ingest(const gate::ingest_request& in)
{
    validate_name("benchmark", in.benchmark);
    validate_role(in.role);
    validate_name("git_sha", in.git_sha);
    validate_name("branch", in.branch);
    validate_backend(in.backend);
    if (!in.testbed.name.empty()) validate_name("testbed.name", in.testbed.name);
    if (!in.testbed.fingerprint.empty()) validate_name("testbed.fingerprint", in.testbed.fingerprint);
    validate_text("testbed.cpu", in.testbed.cpu);
    validate_text("testbed.kernel", in.testbed.kernel);
    if (in.perf_csv.empty()) throw error("ingest.bad_field", "field 'perf_csv': empty; expected perf stat -x, output");
}

// ---------------------------------------------------------------------------
// Endpoints

response post_run(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    const std::string type = media_type(sv(req[http::field::content_type]));
    gate::ingest_request in;
    if (type == "application/json") in = ingest_from_json(req, m.project);
    else if (type == "text/csv") in = ingest_from_csv(req, q, m.project);
    else {
        throw error("http.unsupported_media_type",
                    fmt::format("Content-Type '{}' not supported here; send application/json or text/csv",
                                type.substr(0, 64)));
    }
    validate_ingest(in);
    gate::ingest_result r = ctx.service.ingest(in);
    ctx.stats.run_ingested();
    json out = {{"run_id", r.run_id}, {"samples", r.samples}, {"counters", r.counters}, {"warnings", r.warnings}};
    return json_response(http::status::created, out, req);
}

// One run id of a compare request; `where` names it in the error
// ("baseline_run", "candidate_run[2]", "pairs[0][1]").
std::int64_t run_id(const json& x, std::string_view where)
{
    if (!x.is_number_integer() || x.get<std::int64_t>() <= 0) {
        throw error("ingest.bad_field", fmt::format("request body: field '{}' must be a positive run id, got {}", where,
                                                    dump(x).substr(0, 64)));
    }
    return x.get<std::int64_t>();
}

// An array of 1..max_compare_pairs entries, or a 400 naming the field.
void check_pair_count(const json& v, std::string_view name, std::string_view what)
{
    if (v.empty() || v.size() > max_compare_pairs) {
        throw error("ingest.bad_field", fmt::format("request body: field '{}' must hold 1..{} {}, got {}", name,
                                                    max_compare_pairs, what, v.size()));
    }
}

// baseline_run / candidate_run: both run ids, or both arrays of run ids that
// pair up by position.
std::vector<std::pair<std::int64_t, std::int64_t>> pairs_from_columns(const json& doc)
{
    const json* base = field(doc, "baseline_run");
    const json* cand = field(doc, "candidate_run");
    if (!base) throw error("ingest.bad_field", "request body: field 'baseline_run' is required (or give 'pairs')");
    if (!cand) throw error("ingest.bad_field", "request body: field 'candidate_run' is required (or give 'pairs')");
    if (!base->is_array() && !cand->is_array()) {
        // The single-pair form, {baseline_run: 1, candidate_run: 2}.
        return {{run_id(*base, "baseline_run"), run_id(*cand, "candidate_run")}};
    }
    if (!base->is_array() || !cand->is_array()) {
        const std::string_view scalar = base->is_array() ? "candidate_run" : "baseline_run";
        const std::string_view array = base->is_array() ? "baseline_run" : "candidate_run";
        throw error("ingest.bad_field",
                    fmt::format("request body: field '{}' is an array but '{}' is {}: give both as run ids or both "
                                "as arrays of run ids",
                                array, scalar, type_name(*field(doc, scalar))));
    }
    check_pair_count(*base, "baseline_run", "run ids");
    check_pair_count(*cand, "candidate_run", "run ids");
    if (base->size() != cand->size()) {
        throw error("ingest.bad_field",
                    fmt::format("request body: 'baseline_run' has {} run ids but 'candidate_run' has {}; "
                                "they pair up by position",
                                base->size(), cand->size()));
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    pairs.reserve(base->size());
    for (std::size_t i = 0; i < base->size(); ++i) {
        pairs.emplace_back(run_id((*base)[i], fmt::format("baseline_run[{}]", i)),
                           run_id((*cand)[i], fmt::format("candidate_run[{}]", i)));
    }
    return pairs;
}

// pairs: [[baseline_run, candidate_run], ...]
std::vector<std::pair<std::int64_t, std::int64_t>> pairs_from_list(const json& list)
{
    if (!list.is_array()) {
        throw error("ingest.bad_field",
                    fmt::format("request body: field 'pairs' must be an array of [baseline_run, candidate_run], got {}",
                                type_name(list)));
    }
    check_pair_count(list, "pairs", "[baseline_run, candidate_run] pairs");
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    pairs.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& p = list[i];
        if (!p.is_array() || p.size() != 2) {
            throw error("ingest.bad_field",
                        fmt::format("request body: field 'pairs[{}]' must be [baseline_run, candidate_run], got {}", i,
                                    dump(p).substr(0, 64)));
        }
        pairs.emplace_back(run_id(p[0], fmt::format("pairs[{}][0]", i)), run_id(p[1], fmt::format("pairs[{}][1]", i)));
    }
    return pairs;
}

// The (baseline, candidate) run pairs of one compare request. All of them go
// to one service::compare call, so the p-values are adjusted across every
// gated counter of every benchmark (design.md §3, "Multiplicity"); a client
// that compared benchmark by benchmark would adjust per benchmark instead.
std::vector<std::pair<std::int64_t, std::int64_t>> compare_pairs(const json& doc)
{
    if (const json* list = field(doc, "pairs")) {
        if (field(doc, "baseline_run") || field(doc, "candidate_run")) {
            throw error("ingest.bad_field", "request body: give either 'pairs' or 'baseline_run' and "
                                            "'candidate_run', not both");
        }
        return pairs_from_list(*list);
    }
    return pairs_from_columns(doc);
}

response post_compare(const request& req, context& ctx, const route_match& m)
{
    const std::string type = media_type(sv(req[http::field::content_type]));
    if (type != "application/json") {
        throw error("http.unsupported_media_type",
                    fmt::format("Content-Type '{}' not supported here; send application/json", type.substr(0, 64)));
    }
    const json doc = parse_json_object(req);
    const auto pairs = compare_pairs(doc);
    gate::policy rules;
    if (const json* p = field(doc, "policy")) rules = gate::parse_policy(*p, "request body: policy");

    gate::comparison c = ctx.service.compare(m.project, pairs, rules);
    // The service serialises a report once, with its comparison_id.
    response res = make_response(http::status::created, *c.json, "application/json", req);
    res.set(http::field::location, fmt::format("/api/v1/projects/{}/comparisons/{}", m.project, c.id));
    return res;
}

response get_comparison(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    auto id = parse_int(m.id);
    if (!id || *id <= 0) {
        throw error("http.bad_param", fmt::format("comparison id must be a positive integer, got '{}'", m.id.substr(0, 64)));
    }
    auto rep = ctx.service.load_comparison(m.project, *id);
    if (!rep) {
        throw error("comparison.not_found", fmt::format("no comparison {} in project '{}'", *id, m.project));
    }
    rep->comparison_id = *id;
    const std::string format = q.get("format").value_or("json");
    if (format == "json") {
        json out = gate::to_json(*rep);
        out["comparison_id"] = *id;
        return json_response(http::status::ok, out, req);
    }
    if (format == "markdown") {
        gate::markdown_options opt;
        opt.comparison_url = fmt::format("/api/v1/projects/{}/comparisons/{}", m.project, *id);
        return make_response(http::status::ok, gate::render_markdown(*rep, opt), "text/markdown; charset=utf-8", req);
    }
    if (format == "text") {
        return make_response(http::status::ok, gate::render_text(*rep, false), "text/plain; charset=utf-8", req);
    }
    throw error("http.bad_param",
                fmt::format("query parameter 'format': expected json, markdown or text, got '{}'", format.substr(0, 64)));
}

response get_history(const request& req, context& ctx, const route_match& m, const query_params& q)
{
    store::history_query hq;
    hq.project = m.project;
    hq.benchmark = q.required("benchmark");
    validate_name("benchmark", hq.benchmark);
    hq.counter = q.required("counter");
    validate_name("counter", hq.counter);
    if (auto v = q.get("branch")) { validate_name("branch", *v); hq.branch = *v; }
    if (auto v = q.get("testbed")) { validate_name("testbed", *v); hq.testbed = *v; }
    if (auto v = q.get("since")) hq.since = parse_since(*v);
    if (auto v = q.get("limit")) {
        auto n = parse_int(*v);
        if (!n || *n < 1 || static_cast<std::uint64_t>(*n) > max_history_limit) {
            throw error("http.bad_param", fmt::format("query parameter 'limit': expected an integer in [1, {}], got '{}'",
                                                      max_history_limit, v->substr(0, 64)));
        }
        hq.limit = static_cast<std::size_t>(*n);
    }
    const std::string format = q.get("format").value_or("json");
    if (format != "json" && format != "csv") {
        throw error("http.bad_param",
                    fmt::format("query parameter 'format': expected json or csv, got '{}'", format.substr(0, 64)));
    }
    auto points = ctx.service.history(hq);
    if (format == "csv") return make_response(http::status::ok, history_to_csv(points), "text/csv; charset=utf-8", req);
    return json_response(http::status::ok, history_to_json(points), req);
}

response get_benchmarks(const request& req, context& ctx, const route_match& m)
{
    json list = json::array();
    for (const auto& b : ctx.service.benchmarks(m.project)) {
        list.push_back({{"name", b.name}, {"counters", b.counters}, {"runs", b.runs}, {"last_run_at", b.last_run_at}});
    }
    return json_response(http::status::ok, json{{"benchmarks", std::move(list)}}, req);
}

response dispatch(const request& req, context& ctx)
{
    const route_match m = match(req);
    if (m.target == endpoint::none || (m.target == endpoint::bench_constant && !ctx.bench_routes)) {
        auto [path, query] = split_target(sv(req.target()));
        throw error("http.not_found", fmt::format("no route for '{}'", path.substr(0, 128)));
    }
    if (req.method() != m.method) {
        response res = error_response("http.method_not_allowed",
                                      fmt::format("{} is not allowed on {}; use {}", sv(req.method_string()),
                                                  m.label.substr(m.label.find(' ') + 1), sv(http::to_string(m.method))),
                                      req.version(), req.keep_alive());
        res.set(http::field::allow, http::to_string(m.method));
        return res;
    }

    switch (m.target) {
    case endpoint::healthz:
        return json_response(http::status::ok, json{{"status", "ok"}}, req);
    case endpoint::metrics:
        return make_response(http::status::ok, ctx.stats.render(ctx.db.size_bytes()),
                             "text/plain; version=0.0.4; charset=utf-8", req);
    case endpoint::bench_constant:
        return make_response(http::status::ok, "{\"status\":\"ok\"}", "application/json", req);
    default:
        break;
    }

    validate_name("project", m.project);
    const bool write = m.method == http::verb::post;
    authorize(req, ctx, m.project, write);
    require_project(ctx, m.project);
    const query_params q(split_target(sv(req.target())).second);

    switch (m.target) {
    case endpoint::runs: return post_run(req, ctx, m, q);
    case endpoint::compare: return post_compare(req, ctx, m);
    case endpoint::comparison: return get_comparison(req, ctx, m, q);
    case endpoint::history: return get_history(req, ctx, m, q);
    case endpoint::benchmarks: return get_benchmarks(req, ctx, m);
    default: break;
    }
    PERFGATE_CHECK(false && "unreachable route");
    return {};
}

std::string csv_field(std::string_view s)
{
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string optional_number(const std::optional<double>& v)
{
    return v ? fmt::format("{}", *v) : std::string();
}

} // namespace

// ---------------------------------------------------------------------------

unsigned status_for(std::string_view id)
{
    // The one table from error id to status (README.md, "The perfgate server" / "Errors").
    static constexpr std::array<std::pair<std::string_view, unsigned>, 23> exact{{
        {"http.bad_request", 400},
        {"http.bad_json", 400},
        {"http.bad_param", 400},
        {"http.missing_param", 400},
        {"http.not_found", 404},
        {"http.method_not_allowed", 405},
        {"http.body_too_large", 413},
        {"http.unsupported_media_type", 415},
        {"http.header_too_large", 431},
        {"auth.missing_token", 401},
        {"auth.bad_token", 401},
        {"auth.forbidden", 403},
        {"project.not_found", 404},
        {"comparison.not_found", 404},
        {"ingest.bad_field", 400},
        {"ingest.bad_csv", 422},        // well-formed request, capture that does not parse
        {"ingest.unreadable", 422},
        {"compare.not_found", 404},     // a run id not in this project
        {"compare.mismatch", 422},      // runs that cannot be compared (other benchmark, ...)
        {"store.not_found", 404},
        {"store.constraint", 422},
        {"internal", 500},
        {"store.io", 500},
    }};
    for (const auto& [key, status] : exact) {
        if (key == id) return status;
    }
    // Families: the request was wrong in a way its area explains.
    static constexpr std::array<std::pair<std::string_view, unsigned>, 5> prefixes{{
        {"policy.", 400}, {"ingest.", 400}, {"usage.", 400}, {"compare.", 422}, {"http.", 400},
    }};
    for (const auto& [prefix, status] : prefixes) {
        if (id.starts_with(prefix)) return status;
    }
    return 500;
}

response error_response(std::string_view id, std::string_view message, unsigned version, bool keep_alive)
{
    const unsigned status = status_for(id);
    response res{static_cast<http::status>(status), version};
    res.set(http::field::server, "perfgate");
    res.set(http::field::content_type, "application/json");
    if (status == 401) res.set(http::field::www_authenticate, "Bearer realm=\"perfgate\"");
    res.keep_alive(keep_alive);
    res.body() = dump(json{{"error", {{"id", id}, {"message", message}}}});
    res.prepare_payload();
    return res;
}

response route(const request& req, context& ctx)
{
    try {
        return dispatch(req, ctx);
    } catch (const error& e) {
        return error_response(e.id(), e.what(), req.version(), req.keep_alive());
    } catch (const json::exception& e) {
        // nlohmann errors escaping a handler are bad input the handler did not
        // anticipate (e.g. a policy value of the wrong type).
        return error_response("http.bad_json", fmt::format("request body: {}", e.what()), req.version(),
                              req.keep_alive());
    } catch (const std::exception& e) {
        std::fputs(fmt::format("perfgate serve: internal error on {} {}: {}\n", sv(req.method_string()),
                               sv(req.target()).substr(0, 128), e.what())
                       .c_str(),
                   stderr);
        return error_response("internal", "internal server error (see the server log)", req.version(),
                              req.keep_alive());
    }
}

perfgate::error error_from_response(unsigned status, std::string_view body, std::string_view url)
{
    std::string detail;
    try {
        const json j = json::parse(body);
        detail = fmt::format("[{}] {}", j.at("error").at("id").get<std::string>(),
                             j.at("error").at("message").get<std::string>());
    } catch (const json::exception&) {
        detail = std::string(body.substr(0, 200));
    }
    const std::string message = fmt::format("{} answered {}: {}", url, status, detail);
    return status >= 400 && status < 500 ? error("input.server_rejected", message) : error("server.error", message);
}

std::string_view route_label(const request& req)
{
    return match(req).label;
}


json history_to_json(const std::vector<store::history_point>& points)
{
    json list = json::array();
    for (const auto& p : points) {
        list.push_back({{"run_id", p.run_id},
                        {"git_sha", p.git_sha},
                        {"branch", p.branch},
                        {"created_at", p.created_at},
                        {"n", p.n},
                        {"median", p.median},
                        {"mean", p.mean},
                        {"stddev", p.stddev ? json(*p.stddev) : json(nullptr)},
                        {"cov", p.cov ? json(*p.cov) : json(nullptr)}});
    }
    return json{{"points", std::move(list)}};
}

std::vector<store::history_point> history_from_json(const json& j)
{
    std::vector<store::history_point> out;
    try {
        for (const json& p : j.at("points")) {
            store::history_point h;
            h.run_id = p.at("run_id").get<std::int64_t>();
            h.git_sha = p.at("git_sha").get<std::string>();
            h.branch = p.at("branch").get<std::string>();
            h.created_at = p.at("created_at").get<std::int64_t>();
            h.n = p.at("n").get<std::size_t>();
            h.median = p.at("median").get<double>();
            h.mean = p.at("mean").get<double>();
            if (!p.at("stddev").is_null()) h.stddev = p.at("stddev").get<double>();
            if (!p.at("cov").is_null()) h.cov = p.at("cov").get<double>();
            out.push_back(std::move(h));
        }
    } catch (const json::exception& e) {
        throw error("http.bad_response", fmt::format("history response: {}", e.what()));
    }
    return out;
}

std::string history_to_csv(const std::vector<store::history_point>& points)
{
    std::string out = "run_id,git_sha,branch,created_at,n,median,mean,stddev,cov\n";
    for (const auto& p : points) {
        out += fmt::format("{},{},{},{},{},{},{},{},{}\n", p.run_id, csv_field(p.git_sha), csv_field(p.branch),
                           p.created_at, p.n, p.median, p.mean, optional_number(p.stddev), optional_number(p.cov));
    }
    return out;
}

} // namespace perfgate::server
