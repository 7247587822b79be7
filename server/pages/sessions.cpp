#include "server/pages/sessions.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace perfgate::server::pages {

std::string random_hex_token()
{
    std::array<unsigned char, 32> bytes{};
    std::size_t got = 0;
    while (got < bytes.size()) {
        const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error("getrandom failed");
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

std::string session_store::create(const std::string& project, std::int64_t token_id)
{
    std::string id = random_hex_token();
    web_session s{project, token_id, random_hex_token(), std::chrono::steady_clock::now() + session_lifetime};
    std::lock_guard lock(mutex_);
    while (sessions_.size() >= max_sessions) {
        sessions_.erase(order_.front());
        order_.pop_front();
    }
    order_.push_back(id);
    sessions_.emplace(id, entry{std::move(s), std::prev(order_.end())});
    return id;
}

std::optional<web_session> session_store::find(std::string_view id, std::string_view project)
{
    if (id.empty()) return std::nullopt;
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(std::string(id));
    if (it == sessions_.end()) return std::nullopt;
    if (it->second.session.expires <= std::chrono::steady_clock::now()) {
        order_.erase(it->second.position);
        sessions_.erase(it);
        return std::nullopt;
    }
    if (it->second.session.project != project) return std::nullopt;
    return it->second.session;
}

void session_store::remove(std::string_view id)
{
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(std::string(id));
    if (it == sessions_.end()) return;
    order_.erase(it->second.position);
    sessions_.erase(it);
}

std::size_t session_store::size() const
{
    std::lock_guard lock(mutex_);
    return sessions_.size();
}

} // namespace perfgate::server::pages
