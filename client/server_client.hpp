// The one client of perfgate's own server, used by every command that talks
// to one (run --server, upload --server, history --server): requests, token
// lookup, URL handling and one error mapping, so the same failure is the
// same exit code from every command (model/exit_code.hpp).
//
// Errors (perfgate::error), each naming the request:
//   "http.bad_url"        a malformed --server URL                  (exit 2)
//   "usage.missing_option" no token for a request that needs one    (exit 2)
//   "server.auth"         401/403: missing, unknown or foreign token (exit 2)
//   "server.rejected"     any other 4xx: the server refused the data (exit 2)
//   "server.failed"       5xx                                       (exit 4)
//   "server.bad_response" an answer that is not what the API says   (exit 4)
//   "http.unreachable"    resolve, connect, TLS, proxy, timeout     (exit 4)
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/wire.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/run.hpp"

namespace perfgate::client {

// The token to send: the flag's value, else $PERFGATE_TOKEN, else none.
std::optional<std::string> resolve_token(const std::optional<std::string>& flag);

// Upload attempts, and the pause before the second (doubled before each
// further one): a server restarting behind a load balancer is back within
// a second or two.
inline constexpr int upload_attempts = 3;
inline constexpr std::chrono::milliseconds upload_retry_pause{500};

// The Idempotency-Key of one upload: the hex SHA-256 of a random id made for
// it (128 bits) and its request body.
std::string upload_idempotency_key(std::string_view body);

class server_client {
public:
    // base_url: "http://host:port" (a trailing slash is dropped), checked at
    // once ("http.bad_url"). token: nullopt for a --public-read server.
    server_client(std::string base_url, std::string project, std::optional<std::string> token);

    // POST /api/v1/projects/{project}/runs (in.project is ignored: this
    // client's project), with an Idempotency-Key (upload_idempotency_key)
    // that every attempt repeats: up to upload_attempts attempts when the
    // server cannot be reached, times out or answers 5xx (but 507, storage
    // full: that fails the same until the operator frees space), so a run
    // whose first attempt was stored after all is stored once.
    model::ingest_result upload(const model::ingest_request& in);
    // POST .../compare with every pair in one request, so p-values are
    // adjusted across all of them. The report carries comparison_id.
    gate::report compare(const api::run_pairs& pairs, const std::optional<gate::policy>& rules,
                         const std::optional<model::baseline_choice>& baseline = std::nullopt);
    // GET .../comparisons?limit=1 with the token: one indexed read that
    // says whether the server answers and accepts this token for the
    // project, before a command spends minutes measuring (errors above; a
    // token is checked even by a --public-read server, docs/http-api.md).
    void check_access();
    // GET .../history with q's filters (q.project is ignored). No q.branch:
    // the server's default, the project's baseline branch; "*"
    // (api::all_branches): every branch. No q.role: role=all.
    std::vector<model::history_point> history(const model::history_query& q);

    // GET .../baseline-run (q.project is ignored; an empty q.branch: the
    // server's default, the project's baseline branch): the stored run a
    // deterministic backend reuses as its baseline, nullopt when none.
    std::optional<model::reusable_run> reusable_run(const model::reusable_run_query& q);

    // Where a stored comparison is served, for PR comments and logs.
    // GET .../alerts (q.project is ignored), GET .../alerts/{id},
    // PATCH .../alerts/{id}, GET .../change-points.
    std::vector<model::alert> alerts(const model::alert_query& q);
    model::alert alert(std::int64_t id);
    model::alert update_alert(std::int64_t id, const model::alert_update& u);
    // PUT .../alerts/{id}/culprit: stores what perfgate bisect found on the
    // alert (a token with scope admin); the alert with it.
    model::alert put_culprit(std::int64_t id, const model::alert_culprit& c);
    std::vector<model::change_point_record> change_points(const std::string& benchmark, const std::string& counter,
                                                          const std::optional<std::string>& testbed,
                                                          const std::optional<std::string>& branch);

    // PUT .../comparisons/{id}/flame-graph?benchmark=NAME: a benchmark's
    // differential flame graph, stored with the comparison (perfgate run
    // --profile). A server refuses one over its limit with 413 ("server.rejected").
    void upload_flame_graph(std::int64_t comparison_id, const std::string& benchmark, const std::string& svg);
    // PUT .../comparisons/{id}/attribution?benchmark=NAME: a benchmark's
    // attribution (the report's "attribution" object), stored with the
    // comparison so that its report and page say where a change came from.
    void upload_attribution(std::int64_t comparison_id, const std::string& benchmark,
                            const gate::attribution& attribution);

    // POST .../acceptances: login's acceptance of the newest comparison of
    // candidate commit head_sha (perfgate accept); the stored acceptance.
    // No such comparison: "server.rejected" naming accept.no_comparison.
    model::acceptance accept(const std::string& head_sha, const std::string& login, const std::string& reason);

    // POST .../qualifications: perfgate qualify's figures for a testbed and
    // benchmark (a token with scope baseline); the stored row.
    model::qualification store_qualification(const model::qualification& q);
    // GET .../qualifications?testbed=FINGERPRINT: the newest qualification
    // of each benchmark on that testbed (at most 500, docs/http-api.md).
    // A server without the route (older than issue 46) answers 404: an
    // empty list, no error. Any other failure is one of the errors above.
    std::vector<model::qualification> qualifications(const std::string& testbed_fingerprint);

    [[nodiscard]] std::string comparison_url(std::int64_t id) const;
    [[nodiscard]] const std::string& project() const { return project_; }
    [[nodiscard]] const std::string& base_url() const { return base_; }

private:
    // Sends and maps every non-2xx answer to the errors above.
    // body: JSON unless content_type says otherwise.
    std::string exchange(const std::string& method, const std::string& path, const std::string* body,
                         const std::vector<std::pair<std::string, std::string>>& headers = {},
                         const std::string& content_type = "application/json");

    std::string base_, project_;
    std::optional<std::string> token_;
    unsigned last_status_ = 0; // of the last answer exchange() got (0: none)
};

} // namespace perfgate::client
