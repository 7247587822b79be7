#include "client/server_client.hpp"

#include <cstdlib>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "client/http.hpp"
#include "model/digest.hpp"
#include "model/error.hpp"
#include "report/render.hpp"

namespace perfgate::client {

using nlohmann::json;

namespace {

json parse_object(const std::string& body, const std::string& what)
{
    json doc = json::parse(body, nullptr, false);
    if (!doc.is_object())
        throw error(errors::server_bad_response, fmt::format("{}: the answer is not a JSON object", what));
    return doc;
}

} // namespace

std::optional<std::string> resolve_token(const std::optional<std::string>& flag)
{
    if (flag && !flag->empty()) return flag;
    if (const char* env = std::getenv("PERFGATE_TOKEN"); env && *env) return std::string(env);
    return std::nullopt;
}

server_client::server_client(std::string base_url, std::string project, std::optional<std::string> token)
    : base_(std::move(base_url)), project_(std::move(project)), token_(std::move(token))
{
    while (base_.ends_with('/')) base_.pop_back();
    // A malformed URL is a usage error now, not after measuring.
    http_request probe;
    probe.url = base_;
    if (base_.find("://") == std::string::npos || base_.find_first_of("?#", base_.find("://")) != std::string::npos) {
        throw error(errors::http_bad_url, fmt::format("bad URL '{}': expected http://HOST[:PORT] or https://HOST[:PORT]"
                                                      "[/PREFIX]",
                                                      base_));
    }
    if (!base_.starts_with("http://") && !base_.starts_with("https://")) {
        throw error(errors::http_bad_url, fmt::format("bad URL '{}': only http and https", base_));
    }
}

std::string server_client::exchange(const std::string& method, const std::string& path, const std::string* body,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    const std::string& content_type)
{
    http_request req;
    req.method = method;
    req.url = base_ + path;
    req.headers.emplace_back("Accept", "application/json");
    if (token_) req.headers.emplace_back("Authorization", "Bearer " + *token_);
    req.headers.insert(req.headers.end(), headers.begin(), headers.end());
    if (body) {
        req.headers.emplace_back("Content-Type", content_type);
        req.body = *body;
    }
    const std::string what = fmt::format("{} {}", method, req.url);
    last_status_ = 0;
    const http_response res = http_send(req);
    last_status_ = res.status;
    if (res.status >= 200 && res.status < 300) return res.body;

    std::string detail;
    if (auto e = api::error_from_body(res.body)) detail = fmt::format("[{}] {}", e->first, e->second);
    else detail = res.body.substr(0, 200);
    const std::string message = fmt::format("{}: HTTP {}: {}", what, res.status, detail);
    if (res.status == 401 || res.status == 403) {
        throw error(errors::server_auth,
                    message + (token_ ? " (check --token / PERFGATE_TOKEN: a token of this project, from "
                                        "`perfgate token create`)"
                                      : " (no token given: pass --token or set PERFGATE_TOKEN)"));
    }
    if (res.status >= 400 && res.status < 500) throw error(errors::server_rejected, message);
    if (res.status >= 500) throw error(errors::server_failed, message);
    throw error(errors::server_bad_response, message);
}

std::string upload_idempotency_key(std::string_view body)
{
    // 128 bits from the OS (std::random_device reads getrandom on Linux):
    // two uploads of identical content are still two runs.
    std::random_device os;
    std::string id;
    for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", os());
    return model::sha256_hex(id + ":" + std::string(body));
}

model::ingest_result server_client::upload(const model::ingest_request& in)
{
    const std::string path = fmt::format("/api/v1/projects/{}/runs", url_encode(project_));
    const std::string body = api::dump(api::to_json(in));
    // Every attempt sends the same key: a retry after a timeout whose first
    // attempt was stored gets that run back instead of storing it twice.
    const std::vector<std::pair<std::string, std::string>> headers{{"Idempotency-Key", upload_idempotency_key(body)}};
    std::chrono::milliseconds pause = upload_retry_pause;
    for (int attempt = 1;; ++attempt) {
        try {
            const std::string answer = exchange("POST", path, &body, headers);
            return api::ingest_result_from_json(parse_object(answer, "POST " + base_ + path));
        } catch (const error& e) {
            // 507 (store.full): the next attempt would meet the same full disk.
            const bool transient = e.id() == errors::http_unreachable ||
                                   (e.id() == errors::server_failed && last_status_ != 507);
            if (!transient || attempt >= upload_attempts) {
                if (attempt == 1) throw;
                throw error(e.id(), fmt::format("{} (after {} attempts)", e.what(), attempt));
            }
        }
        std::this_thread::sleep_for(pause);
        pause *= 2;
    }
}

void server_client::upload_flame_graph(std::int64_t comparison_id, const std::string& benchmark, const std::string& svg)
{
    const std::string path = fmt::format("/api/v1/projects/{}/comparisons/{}/flame-graph?benchmark={}",
                                         url_encode(project_), comparison_id, url_encode(benchmark));
    exchange("PUT", path, &svg, {}, "image/svg+xml");
}

void server_client::upload_attribution(std::int64_t comparison_id, const std::string& benchmark,
                                       const gate::attribution& attribution)
{
    const std::string path = fmt::format("/api/v1/projects/{}/comparisons/{}/attribution?benchmark={}",
                                         url_encode(project_), comparison_id, url_encode(benchmark));
    const std::string body = api::dump(report::to_json(attribution));
    exchange("PUT", path, &body);
}

gate::report server_client::compare(const api::run_pairs& pairs, const std::optional<gate::policy>& rules,
                                    const std::optional<model::baseline_choice>& baseline)
{
    const std::string path = fmt::format("/api/v1/projects/{}/compare", url_encode(project_));
    const json policy_json = rules ? gate::to_json(*rules) : json();
    const std::string body = api::dump(api::compare_request_json(pairs, rules ? &policy_json : nullptr,
                                                                 baseline ? &*baseline : nullptr));
    const std::string answer = exchange("POST", path, &body);
    const json doc = parse_object(answer, "POST " + base_ + path);
    try {
        return report::report_from_json(doc);
    } catch (const error& e) {
        // "input.bad_report" would be exit 2, a user error; a server that
        // answers nonsense is an environment failure (exit 4).
        throw error(errors::server_bad_response,
                    fmt::format("POST {}{}: the answer is not a perfgate report: {}", base_, path, e.what()));
    }
}

void server_client::check_access()
{
    const std::string path = fmt::format("/api/v1/projects/{}/comparisons?limit=1", url_encode(project_));
    (void)parse_object(exchange("GET", path, nullptr), "GET " + base_ + path);
}

std::vector<model::history_point> server_client::history(const model::history_query& q)
{
    std::string path = fmt::format("/api/v1/projects/{}/history?benchmark={}&counter={}", url_encode(project_),
                                   url_encode(q.benchmark), url_encode(q.counter));
    if (q.branch) path += "&branch=" + url_encode(*q.branch);
    // The server's default is the mainline runs (api/wire.hpp); leaving it
    // out keeps this request valid for servers older than ?role= (whose
    // default, the baseline runs, was their series).
    if (q.mainline_only) {
        if (q.role) path += "&role=" + url_encode(*q.role);
    } else if (!q.role) {
        path += fmt::format("&role={}", api::all_roles);
    } else {
        path += "&role=" + url_encode(*q.role);
    }
    if (q.testbed) path += "&testbed=" + url_encode(*q.testbed);
    if (q.since) path += fmt::format("&since={}", *q.since);
    path += fmt::format("&limit={}", q.limit);
    const std::string answer = exchange("GET", path, nullptr);
    return api::history_from_json(parse_object(answer, "GET " + base_ + path));
}

std::optional<model::reusable_run> server_client::reusable_run(const model::reusable_run_query& q)
{
    std::string path = fmt::format("/api/v1/projects/{}/baseline-run?benchmark={}&git_sha={}&testbed={}&backend={}"
                                   "&toolchain={}",
                                   url_encode(project_), url_encode(q.benchmark), url_encode(q.git_sha),
                                   url_encode(q.testbed), url_encode(q.backend), url_encode(q.toolchain));
    if (!q.branch.empty()) path += "&branch=" + url_encode(q.branch);
    const std::string answer = exchange("GET", path, nullptr);
    return api::reusable_run_from_json(parse_object(answer, "GET " + base_ + path));
}

std::vector<model::alert> server_client::alerts(const model::alert_query& q)
{
    std::string path = fmt::format("/api/v1/projects/{}/alerts?limit={}", url_encode(project_), q.limit);
    if (q.status) path += fmt::format("&status={}", model::to_string(*q.status));
    if (q.benchmark) path += "&benchmark=" + url_encode(*q.benchmark);
    if (q.counter) path += "&counter=" + url_encode(*q.counter);
    if (q.testbed) path += "&testbed=" + url_encode(*q.testbed);
    const std::string answer = exchange("GET", path, nullptr);
    return api::alerts_from_json(parse_object(answer, "GET " + base_ + path));
}

model::alert server_client::alert(std::int64_t id)
{
    const std::string path = fmt::format("/api/v1/projects/{}/alerts/{}", url_encode(project_), id);
    const std::string answer = exchange("GET", path, nullptr);
    return api::alert_from_json(parse_object(answer, "GET " + base_ + path));
}

model::alert server_client::update_alert(std::int64_t id, const model::alert_update& u)
{
    const std::string path = fmt::format("/api/v1/projects/{}/alerts/{}", url_encode(project_), id);
    const std::string body = api::dump(api::to_json(u));
    // Who triaged, for the alert's changed_by (the server cannot tell who
    // holds a project token).
    const std::string answer = exchange("PATCH", path, &body, {{"X-Perfgate-User", u.changed_by}});
    return api::alert_from_json(parse_object(answer, "PATCH " + base_ + path));
}

model::alert server_client::put_culprit(std::int64_t id, const model::alert_culprit& c)
{
    const std::string path = fmt::format("/api/v1/projects/{}/alerts/{}/culprit", url_encode(project_), id);
    const std::string body = api::dump(api::culprit_request_json(c));
    const std::string answer = exchange("PUT", path, &body);
    return api::alert_from_json(parse_object(answer, "PUT " + base_ + path));
}

std::vector<model::change_point_record> server_client::change_points(const std::string& benchmark,
                                                                     const std::string& counter,
                                                                     const std::optional<std::string>& testbed,
                                                                     const std::optional<std::string>& branch)
{
    std::string path = fmt::format("/api/v1/projects/{}/change-points?benchmark={}&counter={}", url_encode(project_),
                                   url_encode(benchmark), url_encode(counter));
    if (testbed) path += "&testbed=" + url_encode(*testbed);
    if (branch) path += "&branch=" + url_encode(*branch);
    const std::string answer = exchange("GET", path, nullptr);
    return api::change_points_from_json(parse_object(answer, "GET " + base_ + path));
}

model::acceptance server_client::accept(const std::string& head_sha, const std::string& login,
                                        const std::string& reason)
{
    const std::string path = fmt::format("/api/v1/projects/{}/acceptances", url_encode(project_));
    const std::string body = api::dump(api::to_json(api::acceptance_request{head_sha, login, reason}));
    const std::string answer = exchange("POST", path, &body);
    return api::acceptance_from_json(parse_object(answer, "POST " + base_ + path));
}

model::qualification server_client::store_qualification(const model::qualification& q)
{
    const std::string path = fmt::format("/api/v1/projects/{}/qualifications", url_encode(project_));
    const std::string body = api::dump(api::qualification_request_to_json(q));
    const std::string answer = exchange("POST", path, &body);
    const auto stored = api::qualifications_from_json(nlohmann::json{
        {"qualifications", nlohmann::json::array({parse_object(answer, "POST " + base_ + path)})}});
    return stored.front();
}

std::vector<model::qualification> server_client::qualifications(const std::string& testbed_fingerprint)
{
    const std::string path = fmt::format("/api/v1/projects/{}/qualifications?testbed={}", url_encode(project_),
                                         url_encode(testbed_fingerprint));
    std::string answer;
    try {
        answer = exchange("GET", path, nullptr);
    } catch (const error&) {
        if (last_status_ == 404) return {}; // a server older than the route
        throw;
    }
    return api::qualifications_from_json(parse_object(answer, "GET " + base_ + path));
}

std::string server_client::comparison_url(std::int64_t id) const
{
    return fmt::format("{}/p/{}/comparisons/{}", base_, url_encode(project_), id);
}

} // namespace perfgate::client
