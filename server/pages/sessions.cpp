#include "server/pages/sessions.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::server::pages {

std::string random_hex_token()
{
    std::array<unsigned char, 32> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            // A 500 for the router to log and scrub (docs/errors.md "internal").
            throw error(errors::internal, fmt::format("getrandom failed: {}", std::strerror(errno)));
        }
        got += static_cast<std::size_t>(n);
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const unsigned char b : bytes) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

bool equal_constant_time(std::string_view a, std::string_view b)
{
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

std::string session_store::create(const std::string& project, std::int64_t token_id, std::string token_label,
                                  model::scope_set scopes)
{
    std::string id = random_hex_token();
    const auto now = std::chrono::steady_clock::now();
    web_session s{project, token_id, std::move(token_label), scopes, random_hex_token(), now + lifetime_};
    std::lock_guard lock(mutex_);
    end_expired(now);
    // erase() drops a project's list once it is empty: look it up again each time.
    for (auto full = by_project_.find(project); full != by_project_.end() && full->second.size() >= per_project_;
         full = by_project_.find(project)) {
        erase(sessions_.find(full->second.front()));
    }
    auto& mine = by_project_[project];
    order_.push_back(id);
    mine.push_back(id);
    sessions_.emplace(id, entry{std::move(s), std::prev(order_.end()), std::prev(mine.end())});
    return id;
}

void session_store::erase(entry_map::iterator it)
{
    const auto project = by_project_.find(it->second.session.project);
    project->second.erase(it->second.project_position);
    if (project->second.empty()) by_project_.erase(project);
    order_.erase(it->second.position);
    sessions_.erase(it);
}

void session_store::end_expired(std::chrono::steady_clock::time_point now)
{
    // Sessions all live as long: the expired ones are at the front.
    while (!order_.empty()) {
        const auto it = sessions_.find(order_.front());
        if (it->second.session.expires > now) break;
        erase(it);
    }
}

std::optional<web_session> session_store::find(std::string_view id, std::string_view project)
{
    if (id.empty()) return std::nullopt;
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(std::string(id));
    if (it == sessions_.end()) return std::nullopt;
    if (it->second.session.expires <= std::chrono::steady_clock::now()) {
        erase(it);
        return std::nullopt;
    }
    if (it->second.session.project != project) return std::nullopt;
    return it->second.session;
}

void session_store::remove(std::string_view id)
{
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(std::string(id));
    if (it != sessions_.end()) erase(it);
}

std::size_t session_store::size() const
{
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

std::size_t session_store::size(std::string_view project) const
{
    std::lock_guard lock(mutex_);
    const auto it = by_project_.find(std::string(project));
    return it == by_project_.end() ? 0 : it->second.size();
}

} // namespace perfgate::server::pages
