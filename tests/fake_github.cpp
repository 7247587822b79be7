#include "fake_github.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <regex>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <nlohmann/json.hpp>

namespace perfgate::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

namespace {
// GitHub's limits (docs.github.com: issue comment body 65,536 characters;
// commit status description 140 characters), and its page size cap.
constexpr std::size_t max_comment_chars = 65536;
constexpr std::size_t max_description_chars = 140;
constexpr long max_per_page = 100;
constexpr long default_per_page = 30;
// The numeric repository id used in Link headers, as GitHub does.
constexpr const char* repository_id = "4242";

// GitHub's timestamps: "2026-11-28T12:00:00Z".
std::string iso_now()
{
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::size_t utf8_length(const std::string& s)
{
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

std::map<std::string, std::string> parse_query(const std::string& q)
{
    std::map<std::string, std::string> out;
    std::size_t pos = 0;
    while (pos <= q.size() && !q.empty()) {
        auto amp = q.find('&', pos);
        std::string part = q.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
        auto eq = part.find('=');
        out[part.substr(0, eq)] = eq == std::string::npos ? "" : part.substr(eq + 1);
        if (amp == std::string::npos) break;
        pos = amp + 1;
    }
    return out;
}
} // namespace

struct fake_github::state {
    // Declared first, destroyed last: the sessions' TLS streams, destroyed
    // with the io_context's pending handlers, were made from it.
    std::optional<asio::ssl::context> tls; // set in TLS mode
    asio::io_context ioc;
    tcp::acceptor acceptor{ioc};
    std::string token, login, user_type;
    unsigned short port = 0;
    std::string base_url; // http(s)://127.0.0.1:PORT

    mutable std::mutex mutex;
    std::vector<recorded_request> requests;
    std::map<std::int64_t, std::vector<fake_comment>> comments; // by issue number
    std::vector<std::pair<std::string, std::string>> statuses;
    std::vector<std::string> status_times; // created_at of statuses[i]
    std::string clock;                     // set_clock's time; "" for the real one
    std::deque<fault> faults;
    std::int64_t next_id = 1000;
    bool deny_pulls = false, deny_statuses = false;
    std::map<std::string, std::pair<std::string, std::string>> permissions; // login -> (permission, role_name)
    std::map<std::int64_t, std::pair<std::string, std::string>> pulls;      // number -> (head sha, state)
    std::size_t connections = 0;

    using response = http::response<http::string_body>;

    response make(int status, const json& body, unsigned version, bool keep_alive)
    {
        response res{static_cast<http::status>(status), version};
        res.set(http::field::content_type, "application/json; charset=utf-8");
        res.keep_alive(keep_alive);
        res.body() = body.is_null() ? std::string() : body.dump();
        res.prepare_payload();
        return res;
    }

    static json comment_json(const fake_comment& c)
    {
        return {{"id", c.id}, {"body", c.body}, {"user", {{"login", c.login}, {"type", c.user_type}}}};
    }

    // Returns the response and sets how long to hold it back (a fault's
    // delay); called with the mutex held.
    response handle(const http::request<http::string_body>& req, std::chrono::milliseconds& delay)
    {
        delay = std::chrono::milliseconds(0);
        recorded_request rec;
        rec.method = std::string(req.method_string());
        rec.target = std::string(req.target());
        auto q = rec.target.find('?');
        rec.path = rec.target.substr(0, q);
        std::string query = q == std::string::npos ? "" : rec.target.substr(q + 1);
        for (const auto& f : req) {
            std::string name(f.name_string());
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            rec.headers[name] = std::string(f.value());
        }
        rec.body = req.body();
        requests.push_back(rec);

        const unsigned v = req.version();
        const bool ka = req.keep_alive();
        std::smatch m;

        // Test helpers for the HTTP client, no auth.
        if (rec.path == "/test/echo") {
            return make(200,
                        {{"method", rec.method}, {"target", rec.target}, {"headers", rec.headers}, {"body", rec.body}},
                        v, ka);
        }
        if (rec.path == "/test/chunked") {
            response res{http::status::ok, v};
            res.set(http::field::content_type, "text/plain");
            res.body() = std::string(100000, 'c');
            res.chunked(true);
            res.keep_alive(ka);
            return res;
        }
        if (rec.path == "/test/big") {
            auto qs = parse_query(query);
            response res{http::status::ok, v};
            res.body() = std::string(std::stoul(qs["bytes"]), 'b');
            res.keep_alive(ka);
            res.prepare_payload();
            return res;
        }

        for (auto it = faults.begin(); it != faults.end(); ++it) {
            if ((it->method.empty() || it->method == rec.method) &&
                rec.path.find(it->path_contains) != std::string::npos) {
                delay = it->delay;
                if (it->takes_effect) {
                    if (--it->times <= 0) faults.erase(it);
                    break; // handled as usual below, answered late
                }
                response res{static_cast<http::status>(it->status), v};
                for (auto& [k, val] : it->headers) res.set(k, val);
                res.set(http::field::content_type, "application/json; charset=utf-8");
                res.body() = it->body;
                res.keep_alive(ka);
                res.prepare_payload();
                if (--it->times <= 0) faults.erase(it);
                return res;
            }
        }

        // What GitHub checks on every API call.
        if (rec.headers["authorization"] != "Bearer " + token) {
            return make(401, {{"message", "Bad credentials"}}, v, ka);
        }
        const json no_permission = {{"message", "Resource not accessible by integration"},
                                    {"documentation_url", "https://docs.github.com/rest"}};

        if (rec.method == "GET" && rec.path == "/user") {
            if (token.rfind("ghs_", 0) == 0) return make(403, no_permission, v, ka);
            return make(200, {{"login", login}, {"type", user_type}}, v, ka);
        }

        // GitHub's shapes: components/schemas/repository-collaborator-permission
        // (permission, role_name, user; all required) and pull-request
        // (number, state, head {label, ref, repo, sha, user}, ...), in
        // github/rest-api-description's api.github.com description.
        static const std::regex permission_re(R"(^/repos/[^/]+/[^/]+/collaborators/([^/]+)/permission$)");
        static const std::regex pull_re(R"(^/repos/[^/]+/[^/]+/pulls/(\d+)$)");
        const json not_found = {{"message", "Not Found"}, {"documentation_url", "https://docs.github.com/rest"}};
        if (rec.method == "GET" && std::regex_match(rec.path, m, permission_re)) {
            const std::string user = m[1].str();
            auto it = permissions.find(user);
            const auto granted = it == permissions.end() ? std::pair<std::string, std::string>{"read", "read"}
                                                         : it->second;
            if (granted.first.empty()) return make(404, not_found, v, ka);
            return make(200,
                        {{"permission", granted.first},
                         {"role_name", granted.second},
                         {"user", {{"login", user}, {"id", 1}, {"type", "User"}}}},
                        v, ka);
        }
        if (rec.method == "GET" && std::regex_match(rec.path, m, pull_re)) {
            auto it = pulls.find(std::stoll(m[1]));
            if (it == pulls.end()) return make(404, not_found, v, ka);
            return make(200,
                        {{"number", it->first},
                         {"state", it->second.second},
                         {"head",
                          {{"sha", it->second.first},
                           {"ref", "feature"},
                           {"label", "octo:feature"},
                           {"repo", {{"full_name", "octo/widgets"}}},
                           {"user", {{"login", "octo"}}}}}},
                        v, ka);
        }

        static const std::regex list_re(R"(^/(?:repos/[^/]+/[^/]+|repositories/\d+)/issues/(\d+)/comments$)");
        static const std::regex create_re(R"(^/repos/[^/]+/[^/]+/issues/(\d+)/comments$)");
        static const std::regex patch_re(R"(^/repos/[^/]+/[^/]+/issues/comments/(\d+)$)");
        static const std::regex status_re(R"(^/repos/[^/]+/[^/]+/statuses/([0-9a-fA-F]{7,64})$)");

        // GET .../commits/{ref}/statuses: the commit's statuses, newest
        // first, each with its created_at (GitHub's "List commit statuses
        // for a reference").
        static const std::regex commit_statuses_re(R"(^/repos/[^/]+/[^/]+/commits/([0-9a-fA-F]{7,64})/statuses$)");
        if (rec.method == "GET" && std::regex_match(rec.path, m, commit_statuses_re)) {
            json list = json::array();
            for (std::size_t i = statuses.size(); i-- > 0;) {
                if (statuses[i].first != m[1].str()) continue;
                json st = json::parse(statuses[i].second, nullptr, false);
                st["created_at"] = status_times[i];
                st["updated_at"] = status_times[i];
                list.push_back(std::move(st));
            }
            return make(200, list, v, ka);
        }
        if (rec.method == "GET" && std::regex_match(rec.path, m, list_re)) {
            std::int64_t issue = std::stoll(m[1]);
            auto qs = parse_query(query);
            long per_page = qs.count("per_page") ? std::stol(qs["per_page"]) : default_per_page;
            per_page = std::clamp(per_page, 1L, max_per_page);
            long page = qs.count("page") ? std::max(1L, std::stol(qs["page"])) : 1;
            const auto& all = comments[issue];
            json arr = json::array();
            auto first = static_cast<std::size_t>((page - 1) * per_page);
            for (std::size_t i = first; i < all.size() && i < first + static_cast<std::size_t>(per_page); ++i) {
                arr.push_back(comment_json(all[i]));
            }
            auto res = make(200, arr, v, ka);
            long last = std::max(1L, static_cast<long>((all.size() + static_cast<std::size_t>(per_page) - 1) /
                                                       static_cast<std::size_t>(per_page)));
            if (page < last) {
                // Like GitHub: absolute URLs under /repositories/{id}, not the path we were called on.
                std::string base = base_url + "/repositories/" + repository_id + "/issues/" + std::to_string(issue) +
                                   "/comments?per_page=" + std::to_string(per_page) + "&page=";
                res.set(http::field::link, "<" + base + std::to_string(page + 1) + ">; rel=\"next\", <" + base +
                                               std::to_string(last) + ">; rel=\"last\"");
            }
            return res;
        }

        auto body_of = [&](const char* field) -> std::optional<std::string> {
            json j = json::parse(rec.body, nullptr, false);
            if (!j.is_object() || !j.contains(field) || !j[field].is_string()) return std::nullopt;
            return j[field].get<std::string>();
        };
        auto too_long = [&](const char* resource, const char* field, std::size_t max) {
            return make(422,
                        {{"message", "Validation Failed"},
                         {"errors", json::array({{{"resource", resource},
                                                  {"code", "custom"},
                                                  {"field", field},
                                                  {"message", std::string(field) + " is too long (maximum is " +
                                                                  std::to_string(max) + " characters)"}}})}},
                        v, ka);
        };

        if (rec.method == "POST" && std::regex_match(rec.path, m, create_re)) {
            if (deny_pulls) return make(403, no_permission, v, ka);
            auto body = body_of("body");
            if (!body) return make(422, {{"message", "Invalid request: body is required"}}, v, ka);
            if (utf8_length(*body) > max_comment_chars) return too_long("IssueComment", "body", max_comment_chars);
            fake_comment c{next_id++, *body, login, user_type};
            comments[std::stoll(m[1])].push_back(c);
            return make(201, comment_json(c), v, ka);
        }
        if (rec.method == "PATCH" && std::regex_match(rec.path, m, patch_re)) {
            if (deny_pulls) return make(403, no_permission, v, ka);
            auto body = body_of("body");
            if (!body) return make(422, {{"message", "Invalid request: body is required"}}, v, ka);
            if (utf8_length(*body) > max_comment_chars) return too_long("IssueComment", "body", max_comment_chars);
            std::int64_t id = std::stoll(m[1]);
            for (auto& [issue, list] : comments) {
                for (auto& c : list) {
                    if (c.id != id) continue;
                    // GitHub only lets the author (or admins) edit; the fake is strict.
                    if (c.login != login)
                        return make(403, {{"message", "Must have admin rights to Repository."}}, v, ka);
                    c.body = *body;
                    return make(200, comment_json(c), v, ka);
                }
            }
            return make(404, {{"message", "Not Found"}}, v, ka);
        }
        if (rec.method == "POST" && std::regex_match(rec.path, m, status_re)) {
            if (deny_statuses) return make(403, no_permission, v, ka);
            json j = json::parse(rec.body, nullptr, false);
            static const std::vector<std::string> states{"error", "failure", "pending", "success"};
            if (!j.is_object() || !j.contains("state") || !j["state"].is_string() ||
                std::find(states.begin(), states.end(), j["state"].get<std::string>()) == states.end()) {
                return make(422, {{"message", "Validation Failed"}}, v, ka);
            }
            if (j.contains("description") &&
                (!j["description"].is_string() ||
                 utf8_length(j["description"].get<std::string>()) > max_description_chars)) {
                return too_long("Status", "description", max_description_chars);
            }
            statuses.emplace_back(m[1].str(), rec.body);
            status_times.push_back(clock.empty() ? iso_now() : clock);
            json out = j;
            out["id"] = next_id++;
            out["created_at"] = status_times.back();
            return make(201, out, v, ka);
        }
        return make(404, {{"message", "Not Found"}, {"documentation_url", "https://docs.github.com/rest"}}, v, ka);
    }
};

namespace {

using plain_stream = beast::tcp_stream;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

// One connection: read a request, answer (after a fault's delay), repeat
// while keep-alive. Stream is plain TCP or TLS over TCP.
template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
public:
    // The state owns the io_context that runs this session, so it outlives it.
    template <class... Args>
    session(fake_github::state* st, Args&&... stream_args)
        : stream_(std::forward<Args>(stream_args)...), timer_(stream_.get_executor()), state_(st)
    {}

    void start()
    {
        if constexpr (std::is_same_v<Stream, tls_stream>) {
            stream_.async_handshake(asio::ssl::stream_base::server,
                                    [self = this->shared_from_this()](beast::error_code ec) {
                                        if (!ec) self->read(); // else: the client refused the certificate
                                    });
        } else {
            read();
        }
    }

private:
    void read()
    {
        parser_.emplace();
        parser_->body_limit(16 * 1024 * 1024);
        http::async_read(stream_, buffer_, *parser_,
                         [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
    }

    void on_read(beast::error_code ec)
    {
        if (ec) return; // closed or broken: nothing to answer
        auto req = parser_->release();
        std::chrono::milliseconds delay{0};
        {
            std::lock_guard lock(state_->mutex);
            res_ = state_->handle(req, delay);
        }
        if (req.target() == "/test/close-delimited") {
            // HTTP/1.1 body delimited by closing the connection (RFC 9112 §6.3 rule 8).
            res_.keep_alive(false);
            auto raw = std::make_shared<std::string>(
                "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nuntil-eof");
            asio::async_write(stream_, asio::buffer(*raw),
                              [self = this->shared_from_this(), raw](beast::error_code, std::size_t) {
                                  self->close();
                              });
            return;
        }
        if (delay.count() == 0) return write();
        timer_.expires_after(delay);
        timer_.async_wait([self = this->shared_from_this()](beast::error_code) { self->write(); });
    }

    void write()
    {
        http::async_write(stream_, res_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return;
            if (!self->res_.keep_alive()) return self->close();
            self->read();
        });
    }

    // Ends our side: a TLS close_notify, or a TCP FIN.
    void close()
    {
        if constexpr (std::is_same_v<Stream, tls_stream>) {
            stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {});
        } else {
            beast::error_code ignored;
            stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        }
    }

    Stream stream_;
    asio::steady_timer timer_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
    fake_github::state* state_;
};

// Handlers hold a plain pointer: a shared_ptr would make a cycle through the
// io_context that the state owns.
void accept(fake_github::state* st)
{
    st->acceptor.async_accept([st](beast::error_code ec, tcp::socket socket) {
        if (ec) return; // acceptor closed: the fake is stopping
        {
            std::lock_guard lock(st->mutex);
            ++st->connections;
        }
        if (st->tls) {
            std::make_shared<session<tls_stream>>(st, std::move(socket), *st->tls)->start();
        } else {
            std::make_shared<session<plain_stream>>(st, std::move(socket))->start();
        }
        accept(st);
    });
}

} // namespace

fake_github::fake_github(std::string token, std::string login, std::string user_type, std::optional<tls_files> tls)
    : state_(std::make_shared<state>())
{
    state_->token = std::move(token);
    state_->login = std::move(login);
    state_->user_type = std::move(user_type);
    if (tls) {
        state_->tls.emplace(asio::ssl::context::tls_server);
        state_->tls->use_certificate_chain_file(tls->cert);
        state_->tls->use_private_key_file(tls->key, asio::ssl::context::pem);
    }
    tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    state_->acceptor.open(ep.protocol());
    state_->acceptor.set_option(asio::socket_base::reuse_address(true));
    state_->acceptor.bind(ep);
    state_->acceptor.listen();
    port_ = state_->acceptor.local_endpoint().port();
    state_->port = port_;
    state_->base_url = (tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + std::to_string(port_);
    accept(state_.get());
    thread_ = std::thread([st = state_.get()] { st->ioc.run(); });
}

fake_github::~fake_github()
{
    state_->ioc.stop();
    if (thread_.joinable()) thread_.join();
}

std::string fake_github::url() const { return state_->base_url; }

std::size_t fake_github::connections() const
{
    std::lock_guard lock(state_->mutex);
    return state_->connections;
}

std::vector<recorded_request> fake_github::requests() const
{
    std::lock_guard lock(state_->mutex);
    return state_->requests;
}

std::vector<fake_comment> fake_github::comments(std::int64_t issue) const
{
    std::lock_guard lock(state_->mutex);
    auto it = state_->comments.find(issue);
    return it == state_->comments.end() ? std::vector<fake_comment>{} : it->second;
}

std::vector<std::pair<std::string, std::string>> fake_github::statuses() const
{
    std::lock_guard lock(state_->mutex);
    return state_->statuses;
}

std::int64_t fake_github::add_comment(std::int64_t issue, std::string login, std::string user_type, std::string body)
{
    std::lock_guard lock(state_->mutex);
    fake_comment c{state_->next_id++, std::move(body), std::move(login), std::move(user_type)};
    state_->comments[issue].push_back(c);
    return c.id;
}

void fake_github::set_permission(const std::string& login, std::string permission, std::string role_name)
{
    std::lock_guard lock(state_->mutex);
    state_->permissions[login] = {std::move(permission), std::move(role_name)};
}

void fake_github::set_clock(std::string iso)
{
    std::lock_guard lock(state_->mutex);
    state_->clock = std::move(iso);
}

void fake_github::add_pull(std::int64_t number, std::string head_sha, std::string state)
{
    std::lock_guard lock(state_->mutex);
    state_->pulls[number] = {std::move(head_sha), std::move(state)};
}

void fake_github::add_fault(fault f)
{
    std::lock_guard lock(state_->mutex);
    state_->faults.push_back(std::move(f));
}

void fake_github::deny_pull_requests(bool deny)
{
    std::lock_guard lock(state_->mutex);
    state_->deny_pulls = deny;
}

void fake_github::deny_statuses(bool deny)
{
    std::lock_guard lock(state_->mutex);
    state_->deny_statuses = deny;
}

void fake_github::clear_requests()
{
    std::lock_guard lock(state_->mutex);
    state_->requests.clear();
}

} // namespace perfgate::test
