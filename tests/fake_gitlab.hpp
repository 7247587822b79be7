// A local fake of the parts of GitLab's REST API v4 that perfgate uses, for
// tests: an HTTP/1.1 server (Boost.Beast) on 127.0.0.1 with an ephemeral
// port, reached by pointing CI_API_V4_URL at api_url(). It keeps merge
// request notes and commit statuses in memory, enforces what GitLab
// documents for these endpoints and records every request.
//
// Endpoints (docs.gitlab.com/api pages notes, commits "Set the pipeline
// status of a commit", members, merge_requests, users, rest "Pagination"), all under /api/v4 and all needing PRIVATE-TOKEN (401
// otherwise):
//   GET  /user                                   -> {id, username}
//   GET  /projects/:id/merge_requests/:iid/notes?per_page=&page=&sort=&order_by=
//        -> array; x-page, x-per-page, x-next-page, x-prev-page, x-total,
//        x-total-pages and Link (rel next/prev/first/last) headers; per_page
//        at most 100 (default 20)
//   GET  /projects/:id/merge_requests/:iid/notes/:note_id
//   POST /projects/:id/merge_requests/:iid/notes {body} -> 201; body
//        required (400), at most 1,000,000 characters (400)
//   PUT  /projects/:id/merge_requests/:iid/notes/:note_id {body} -> 200;
//        only the note's author may edit (403)
//   POST /projects/:id/statuses/:sha {state, name, target_url, description}
//        -> 201; state required, one of pending, running, success, failed,
//        canceled (400); description at most 255 characters (400, perfgate's
//        conservative limit: GitLab documents none)
//   GET  /projects/:id/members/all/:user_id -> {id, username, access_level};
//        404 for a user set_member did not add
//   GET  /projects/:id/merge_requests/:iid  -> {iid, sha, state}; 404 unknown
// Any other project id is 404 "404 Project Not Found", as GitLab answers.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fake_github.hpp" // recorded_request, fault, tls_files

namespace perfgate::test {

struct fake_note {
    std::int64_t id = 0;
    std::string body;
    std::int64_t author_id = 0;
    std::string author; // username
    bool system = false;
};

class fake_gitlab {
public:
    // token: the PRIVATE-TOKEN accepted; it writes as user (id, username).
    explicit fake_gitlab(std::string project_id = "42", std::string token = "glpat-faketoken",
                         std::int64_t user_id = 900, std::string username = "project_42_bot",
                         std::optional<tls_files> tls = std::nullopt);
    ~fake_gitlab();
    fake_gitlab(const fake_gitlab&) = delete;
    fake_gitlab& operator=(const fake_gitlab&) = delete;

    [[nodiscard]] std::string url() const;     // "http://127.0.0.1:PORT" (CI_SERVER_URL)
    [[nodiscard]] std::string api_url() const; // url() + "/api/v4" (CI_API_V4_URL)

    [[nodiscard]] std::vector<recorded_request> requests() const;
    [[nodiscard]] std::vector<fake_note> notes(std::int64_t iid) const;
    // Status posts as received: (sha from the path, body text).
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> statuses() const;

    std::int64_t add_note(std::int64_t iid, std::int64_t author_id, std::string author, std::string body,
                          bool system = false);
    // A project member (direct or inherited) with an access level (10
    // Guest, 20 Reporter, 30 Developer, 40 Maintainer, 50 Owner).
    void set_member(std::int64_t user_id, std::string username, int access_level);
    void add_merge_request(std::int64_t iid, std::string sha, std::string state = "opened");
    void add_fault(fault f);
    void clear_requests();

    struct state;

private:
    std::shared_ptr<state> state_;
    std::thread thread_;
};

} // namespace perfgate::test
