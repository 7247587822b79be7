#include "fake_gitlab.hpp"

#include <algorithm>
#include <cctype>
#include <deque>
#include <mutex>
#include <regex>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
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
// GitLab's documented limits: a note body of at most 1,000,000 characters
// (docs.gitlab.com/api/notes), per_page at most 100 with a default of 20
// (docs.gitlab.com/api/rest, "Offset-based pagination").
constexpr std::size_t max_note_chars = 1000000;
constexpr std::size_t max_description_chars = 255;
constexpr long max_per_page = 100;
constexpr long default_per_page = 20;

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
    while (!q.empty() && pos <= q.size()) {
        const auto amp = std::min(q.find('&', pos), q.size());
        const std::string part = q.substr(pos, amp - pos);
        const auto eq = part.find('=');
        out[part.substr(0, eq)] = eq == std::string::npos ? "" : part.substr(eq + 1);
        pos = amp + 1;
    }
    return out;
}

bool all_digits(const std::string& s)
{
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}
} // namespace

struct fake_gitlab::state {
    std::optional<asio::ssl::context> tls;
    asio::io_context ioc;
    tcp::acceptor acceptor{ioc};
    std::string project_id, token, username;
    std::int64_t user_id = 0;
    std::string base_url;

    mutable std::mutex mutex;
    std::vector<recorded_request> requests;
    std::map<std::int64_t, std::vector<fake_note>> notes; // by MR iid
    std::vector<std::pair<std::string, std::string>> statuses;
    std::deque<fault> faults;
    std::map<std::int64_t, std::pair<std::string, int>> members;                // user id -> (username, level)
    std::map<std::int64_t, std::pair<std::string, std::string>> merge_requests; // iid -> (sha, state)
    std::int64_t next_id = 5000;

    using response = http::response<http::string_body>;

    static response make(int status, const json& body, unsigned version, bool keep_alive)
    {
        response res{static_cast<http::status>(status), version};
        res.set(http::field::content_type, "application/json");
        res.keep_alive(keep_alive);
        res.body() = body.is_null() ? std::string() : body.dump();
        res.prepare_payload();
        return res;
    }

    static json note_json(const fake_note& n)
    {
        return {{"id", n.id},         {"type", nullptr},
                {"body", n.body},     {"author", {{"id", n.author_id}, {"username", n.author}, {"name", n.author}}},
                {"system", n.system}, {"noteable_type", "MergeRequest"}};
    }

    response handle(const http::request<http::string_body>& req, std::chrono::milliseconds& delay)
    {
        delay = std::chrono::milliseconds(0);
        recorded_request rec;
        rec.method = std::string(req.method_string());
        rec.target = std::string(req.target());
        const auto q = rec.target.find('?');
        rec.path = rec.target.substr(0, q);
        const std::string query = q == std::string::npos ? "" : rec.target.substr(q + 1);
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

        for (auto it = faults.begin(); it != faults.end(); ++it) {
            if ((it->method.empty() || it->method == rec.method) &&
                rec.path.find(it->path_contains) != std::string::npos) {
                delay = it->delay;
                if (it->takes_effect) {
                    if (--it->times <= 0) faults.erase(it);
                    break;
                }
                response res{static_cast<http::status>(it->status), v};
                for (auto& [k, val] : it->headers) res.set(k, val);
                res.set(http::field::content_type, "application/json");
                res.body() = it->body;
                res.keep_alive(ka);
                res.prepare_payload();
                if (--it->times <= 0) faults.erase(it);
                return res;
            }
        }

        const json not_found = {{"message", "404 Not found"}};
        if (!rec.path.starts_with("/api/v4/")) return make(404, not_found, v, ka);
        const std::string path = rec.path.substr(7);
        // Every endpoint here needs authentication (docs.gitlab.com/api/rest/authentication).
        if (rec.headers["private-token"] != token) return make(401, {{"message", "401 Unauthorized"}}, v, ka);
        if (rec.method != "GET" && !rec.headers["content-type"].starts_with("application/json"))
            return make(415, {{"message", "415 Unsupported Media Type"}}, v, ka);

        if (rec.method == "GET" && path == "/user") return make(200, {{"id", user_id}, {"username", username}}, v, ka);

        std::smatch m;
        static const std::regex project_re(R"(^/projects/([^/]+)(/.*)$)");
        if (!std::regex_match(path, m, project_re)) return make(404, not_found, v, ka);
        if (m[1].str() != project_id) return make(404, {{"message", "404 Project Not Found"}}, v, ka);
        const std::string rest = m[2].str();

        const json body = json::parse(rec.body.empty() ? "{}" : rec.body, nullptr, false);
        auto body_string = [&](const char* field) -> std::optional<std::string> {
            if (!body.is_object() || !body.contains(field) || !body[field].is_string()) return std::nullopt;
            return body[field].get<std::string>();
        };

        static const std::regex notes_re(R"(^/merge_requests/(\d+)/notes$)");
        static const std::regex note_re(R"(^/merge_requests/(\d+)/notes/(\d+)$)");
        static const std::regex mr_re(R"(^/merge_requests/(\d+)$)");
        static const std::regex status_re(R"(^/statuses/([0-9a-f]{40}|[0-9a-f]{64})$)");
        static const std::regex member_re(R"(^/members/all/(\d+)$)");

        if (std::regex_match(rest, m, notes_re)) {
            const std::int64_t iid = std::stoll(m[1]);
            if (!merge_requests.count(iid)) return make(404, {{"message", "404 Not found"}}, v, ka);
            auto& list = notes[iid];
            if (rec.method == "GET") {
                auto qs = parse_query(query);
                for (const auto& [k, val] : qs) {
                    if ((k == "per_page" || k == "page") && !all_digits(val))
                        return make(400, {{"error", k + " is invalid"}}, v, ka);
                    if (k == "sort" && val != "asc" && val != "desc")
                        return make(400, {{"error", "sort does not have a valid value"}}, v, ka);
                    if (k == "order_by" && val != "created_at" && val != "updated_at")
                        return make(400, {{"error", "order_by does not have a valid value"}}, v, ka);
                }
                const long per_page = std::clamp(qs.count("per_page") ? std::stol(qs["per_page"]) : default_per_page,
                                                 1L, max_per_page);
                const long page = qs.count("page") ? std::max(1L, std::stol(qs["page"])) : 1;
                std::vector<fake_note> ordered = list;
                if (qs["sort"] != "asc") std::reverse(ordered.begin(), ordered.end()); // GitLab's default: desc
                json arr = json::array();
                const auto first = static_cast<std::size_t>((page - 1) * per_page);
                for (std::size_t i = first; i < ordered.size() && i < first + static_cast<std::size_t>(per_page); ++i)
                    arr.push_back(note_json(ordered[i]));
                auto res = make(200, arr, v, ka);
                const long total = static_cast<long>(ordered.size());
                const long pages = std::max(1L, (total + per_page - 1) / per_page);
                const std::string link_base = base_url + rec.path + "?per_page=" + std::to_string(per_page) +
                                              "&sort=" + (qs["sort"].empty() ? "desc" : qs["sort"]) + "&page=";
                res.set("x-page", std::to_string(page));
                res.set("x-per-page", std::to_string(per_page));
                res.set("x-next-page", page < pages ? std::to_string(page + 1) : "");
                res.set("x-prev-page", page > 1 ? std::to_string(page - 1) : "");
                res.set("x-total", std::to_string(total));
                res.set("x-total-pages", std::to_string(pages));
                std::string link;
                if (page > 1) link += "<" + link_base + std::to_string(page - 1) + ">; rel=\"prev\", ";
                if (page < pages) link += "<" + link_base + std::to_string(page + 1) + ">; rel=\"next\", ";
                link += "<" + link_base + "1>; rel=\"first\", <" + link_base + std::to_string(pages) +
                        ">; rel=\"last\"";
                res.set(http::field::link, link);
                return res;
            }
            if (rec.method == "POST") {
                auto text = body_string("body");
                if (!text) return make(400, {{"error", "body is missing"}}, v, ka);
                if (utf8_length(*text) > max_note_chars)
                    return make(400, {{"message", {{"note", {"is too long (maximum is 1000000 characters)"}}}}}, v, ka);
                fake_note n{next_id++, *text, user_id, username, false};
                list.push_back(n);
                return make(201, note_json(n), v, ka);
            }
            return make(405, {{"message", "405 Method Not Allowed"}}, v, ka);
        }
        if (std::regex_match(rest, m, note_re)) {
            const std::int64_t iid = std::stoll(m[1]);
            const std::int64_t id = std::stoll(m[2]);
            auto& list = notes[iid];
            auto it = std::find_if(list.begin(), list.end(), [&](const fake_note& n) { return n.id == id; });
            if (it == list.end()) return make(404, {{"message", "404 Note Not Found"}}, v, ka);
            if (rec.method == "GET") return make(200, note_json(*it), v, ka);
            if (rec.method == "PUT") {
                auto text = body_string("body");
                if (!text) return make(400, {{"error", "body is missing"}}, v, ka);
                if (utf8_length(*text) > max_note_chars)
                    return make(400, {{"message", {{"note", {"is too long (maximum is 1000000 characters)"}}}}}, v, ka);
                if (it->author_id != user_id || it->system) return make(403, {{"message", "403 Forbidden"}}, v, ka);
                it->body = *text;
                return make(200, note_json(*it), v, ka);
            }
            return make(405, {{"message", "405 Method Not Allowed"}}, v, ka);
        }
        if (rec.method == "GET" && std::regex_match(rest, m, mr_re)) {
            auto it = merge_requests.find(std::stoll(m[1]));
            if (it == merge_requests.end()) return make(404, {{"message", "404 Not found"}}, v, ka);
            return make(200, {{"iid", it->first}, {"sha", it->second.first}, {"state", it->second.second}}, v, ka);
        }
        if (rec.method == "POST" && std::regex_match(rest, m, status_re)) {
            static const std::vector<std::string> states{"pending", "running", "success", "failed", "canceled"};
            auto st = body_string("state");
            if (!st) return make(400, {{"error", "state is missing"}}, v, ka);
            if (std::find(states.begin(), states.end(), *st) == states.end())
                return make(400, {{"error", "state does not have a valid value"}}, v, ka);
            if (auto d = body_string("description"); d && utf8_length(*d) > max_description_chars)
                return make(400, {{"message", {{"description", {"is too long (maximum is 255 characters)"}}}}}, v, ka);
            for (const char* field : {"name", "context", "target_url", "description", "ref"}) {
                if (body.contains(field) && !body[field].is_string())
                    return make(400, {{"error", std::string(field) + " is invalid"}}, v, ka);
            }
            statuses.emplace_back(m[1].str(), rec.body);
            json out = body;
            out["id"] = next_id++;
            out["sha"] = m[1].str();
            out["status"] = *st;
            return make(201, out, v, ka);
        }
        if (rec.method == "GET" && std::regex_match(rest, m, member_re)) {
            auto it = members.find(std::stoll(m[1]));
            if (it == members.end()) return make(404, {{"message", "404 Not found"}}, v, ka);
            return make(200,
                        {{"id", it->first},
                         {"username", it->second.first},
                         {"access_level", it->second.second},
                         {"state", "active"}},
                        v, ka);
        }
        return make(404, not_found, v, ka);
    }
};

namespace {

using plain_stream = beast::tcp_stream;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
public:
    template <class... Args>
    session(fake_gitlab::state* st, Args&&... stream_args)
        : stream_(std::forward<Args>(stream_args)...), timer_(stream_.get_executor()), state_(st)
    {}

    void start()
    {
        if constexpr (std::is_same_v<Stream, tls_stream>) {
            stream_.async_handshake(asio::ssl::stream_base::server,
                                    [self = this->shared_from_this()](beast::error_code ec) {
                                        if (!ec) self->read();
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
        if (ec) return;
        auto req = parser_->release();
        std::chrono::milliseconds delay{0};
        {
            std::lock_guard lock(state_->mutex);
            res_ = state_->handle(req, delay);
        }
        if (delay.count() == 0) return write();
        timer_.expires_after(delay);
        timer_.async_wait([self = this->shared_from_this()](beast::error_code) { self->write(); });
    }

    void write()
    {
        http::async_write(stream_, res_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return;
            if (!self->res_.keep_alive()) return;
            self->read();
        });
    }

    Stream stream_;
    asio::steady_timer timer_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::string_body>> parser_;
    http::response<http::string_body> res_;
    fake_gitlab::state* state_;
};

void accept(fake_gitlab::state* st)
{
    st->acceptor.async_accept([st](beast::error_code ec, tcp::socket socket) {
        if (ec) return;
        if (st->tls) std::make_shared<session<tls_stream>>(st, std::move(socket), *st->tls)->start();
        else std::make_shared<session<plain_stream>>(st, std::move(socket))->start();
        accept(st);
    });
}

} // namespace

fake_gitlab::fake_gitlab(std::string project_id, std::string token, std::int64_t user_id, std::string username,
                         std::optional<tls_files> tls)
    : state_(std::make_shared<state>())
{
    state_->project_id = std::move(project_id);
    state_->token = std::move(token);
    state_->user_id = user_id;
    state_->username = std::move(username);
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
    state_->base_url = (tls ? "https://127.0.0.1:" : "http://127.0.0.1:") +
                       std::to_string(state_->acceptor.local_endpoint().port());
    accept(state_.get());
    thread_ = std::thread([st = state_.get()] { st->ioc.run(); });
}

fake_gitlab::~fake_gitlab()
{
    state_->ioc.stop();
    if (thread_.joinable()) thread_.join();
}

std::string fake_gitlab::url() const { return state_->base_url; }
std::string fake_gitlab::api_url() const { return state_->base_url + "/api/v4"; }

std::vector<recorded_request> fake_gitlab::requests() const
{
    std::lock_guard lock(state_->mutex);
    return state_->requests;
}

std::vector<fake_note> fake_gitlab::notes(std::int64_t iid) const
{
    std::lock_guard lock(state_->mutex);
    auto it = state_->notes.find(iid);
    return it == state_->notes.end() ? std::vector<fake_note>{} : it->second;
}

std::vector<std::pair<std::string, std::string>> fake_gitlab::statuses() const
{
    std::lock_guard lock(state_->mutex);
    return state_->statuses;
}

std::int64_t fake_gitlab::add_note(std::int64_t iid, std::int64_t author_id, std::string author, std::string body,
                                   bool system)
{
    std::lock_guard lock(state_->mutex);
    fake_note n{state_->next_id++, std::move(body), author_id, std::move(author), system};
    state_->notes[iid].push_back(n);
    return n.id;
}

void fake_gitlab::set_member(std::int64_t user_id, std::string username, int access_level)
{
    std::lock_guard lock(state_->mutex);
    state_->members[user_id] = {std::move(username), access_level};
}

void fake_gitlab::add_merge_request(std::int64_t iid, std::string sha, std::string state)
{
    std::lock_guard lock(state_->mutex);
    state_->merge_requests[iid] = {std::move(sha), std::move(state)};
}

void fake_gitlab::add_fault(fault f)
{
    std::lock_guard lock(state_->mutex);
    state_->faults.push_back(std::move(f));
}

void fake_gitlab::clear_requests()
{
    std::lock_guard lock(state_->mutex);
    state_->requests.clear();
}

} // namespace perfgate::test
