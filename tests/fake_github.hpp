// A local fake of the parts of GitHub's REST API that perfgate uses, for tests:
// an HTTP/1.1 server (Boost.Beast) on 127.0.0.1 with an ephemeral port, reached
// by pointing GITHUB_API_URL at url(). It keeps issue comments and commit
// statuses in memory, checks what GitHub checks (Bearer token, body limits,
// status description length, permissions) and records every request so tests
// can assert method, path, headers and body shape.
//
// Endpoints (docs.github.com/en/rest, API version 2022-11-28):
//   GET   /repos/{o}/{r}/issues/{n}/comments?per_page=&page=   (Link: rel="next")
//   GET   /repositories/{id}/issues/{n}/comments?...            (what Link points at)
//   POST  /repos/{o}/{r}/issues/{n}/comments                    {"body"} -> 201
//   PATCH /repos/{o}/{r}/issues/comments/{id}                   {"body"} -> 200
//   POST  /repos/{o}/{r}/statuses/{sha}    {"state","description","context","target_url"} -> 201
//   GET   /user                                                  (403 for ghs_ tokens, like GITHUB_TOKEN)
//   GET   /repos/{o}/{r}/collaborators/{user}/permission  -> {permission, role_name, user}; 404 for
//         a login set_permission made unknown
//   GET   /repos/{o}/{r}/commits/{sha}/statuses            -> [{state, context, created_at, ...}], newest first
//   GET   /repos/{o}/{r}/pulls/{n}                        -> {number, state, head: {sha, ref, ...}}; 404
//         for a number add_pull did not add
// Test-only helpers: /test/echo, /test/chunked, /test/close-delimited, /test/big?bytes=N.
//
// Plain HTTP by default; with tls_files it speaks HTTPS with that certificate
// (tests make a self-signed one with the openssl CLI and let the client trust
// it through SSL_CERT_FILE), so GITHUB_API_URL can be https:// as in Actions.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace perfgate::test {

struct recorded_request {
    std::string method;
    std::string target;                         // path and query as sent
    std::string path;                           // target without the query
    std::map<std::string, std::string> headers; // names lower-cased
    std::string body;
};

struct fake_comment {
    std::int64_t id = 0;
    std::string body;
    std::string login;
    std::string user_type; // "User" or "Bot"
};

// A scripted answer that replaces the next `times` matching requests.
struct fault {
    std::string method;        // empty: any
    std::string path_contains; // empty: any
    int status = 500;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body = R"({"message":"Server Error"})";
    int times = 1;
    // Answer only after this long: past the client's timeout, the answer is lost.
    std::chrono::milliseconds delay{0};
    // The request is handled as usual (a POST creates its comment) and only
    // `delay` applies; status, headers and body are unused. With a delay
    // past the client's timeout: a request that landed but whose answer was lost.
    bool takes_effect = false;
};

// A PEM certificate chain and its private key, for the TLS mode.
struct tls_files {
    std::string cert, key;
};

class fake_github {
public:
    // The token the fake accepts (anything else is 401) and the user it maps to.
    explicit fake_github(std::string token = "ghs_faketoken", std::string login = "github-actions[bot]",
                         std::string user_type = "Bot", std::optional<tls_files> tls = std::nullopt);
    ~fake_github();
    fake_github(const fake_github&) = delete;
    fake_github& operator=(const fake_github&) = delete;

    [[nodiscard]] std::string url() const; // "http://127.0.0.1:PORT", or https:// in TLS mode
    [[nodiscard]] unsigned short port() const { return port_; }
    // TCP connections accepted so far (a client that reuses its connection opens one).
    [[nodiscard]] std::size_t connections() const;

    [[nodiscard]] std::vector<recorded_request> requests() const;
    [[nodiscard]] std::vector<fake_comment> comments(std::int64_t issue) const;
    // Status posts as received (parsed JSON text) with the SHA from the path.
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> statuses() const;

    std::int64_t add_comment(std::int64_t issue, std::string login, std::string user_type, std::string body);
    // A user's repository permission as GET .../collaborators/{user}/permission
    // answers it: permission (admin, write, read, none) and role_name (admin,
    // maintain, write, triage, read, or a custom role). A user never set is
    // "read"/"read" (a public repository's non-collaborator); permission ""
    // makes the user unknown (404).
    void set_permission(const std::string& login, std::string permission, std::string role_name);
    // A pull request for GET .../pulls/{n}; adding it again moves its head (a push).
    void add_pull(std::int64_t number, std::string head_sha, std::string state = "open");
    // The created_at of statuses posted from now on ("2026-11-28T12:00:00Z");
    // "" for the real time.
    void set_clock(std::string iso);
    void add_fault(fault f);
    // Missing permissions answer 403 "Resource not accessible by integration".
    void deny_pull_requests(bool deny);
    void deny_statuses(bool deny);
    void clear_requests();

    struct state; // shared with the sessions (fake_github.cpp)
private:
    std::shared_ptr<state> state_;
    unsigned short port_ = 0;
    std::thread thread_;
};

} // namespace perfgate::test
