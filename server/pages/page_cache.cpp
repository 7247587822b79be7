#include "server/pages/page_cache.hpp"

#include <nlohmann/json.hpp>

namespace perfgate::server::pages {

page_cache::page_cache(std::size_t max_bytes, std::chrono::milliseconds max_age)
    : max_bytes_(max_bytes), max_age_(max_age)
{}

std::shared_ptr<const page_view> page_cache::find(const std::string& key, std::uint64_t generation,
                                                  clock::time_point now)
{
    const std::lock_guard lock(mutex_);
    const auto it = entries_.find(key);
    if (it == entries_.end()) {
        ++misses_;
        return nullptr;
    }
    if (it->second.generation != generation || now - it->second.made > max_age_) {
        erase(it);
        ++misses_;
        return nullptr;
    }
    order_.splice(order_.begin(), order_, it->second.position);
    ++hits_;
    return it->second.view;
}

void page_cache::put(const std::string& key, std::uint64_t generation, std::shared_ptr<const page_view> view,
                     clock::time_point now)
{
    const std::size_t bytes = key.size() + view->bytes();
    if (bytes > max_bytes_ / 8) return;
    const std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end()) erase(it);
    while (!order_.empty() && bytes_ + bytes > max_bytes_) erase(entries_.find(order_.back()));
    order_.push_front(key);
    entries_.emplace(key, entry{std::move(view), generation, now, bytes, order_.begin()});
    bytes_ += bytes;
}

void page_cache::erase(std::unordered_map<std::string, entry>::iterator it)
{
    bytes_ -= it->second.bytes;
    order_.erase(it->second.position);
    entries_.erase(it);
}

page_cache::counts page_cache::stats() const
{
    const std::lock_guard lock(mutex_);
    return {hits_, misses_, entries_.size(), bytes_};
}

} // namespace perfgate::server::pages
