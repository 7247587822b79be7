// A least-recently-used cache bounded in bytes, shared by a server's
// threads: recent comparisons and loaded runs (caches.hpp). The caller
// says what an entry costs; an entry over max_entry_bytes is not kept (one
// would evict dozens of typical ones). Values are shared_ptrs to const data,
// so a value found stays valid after it is evicted.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace perfgate::service {

// A key of several parts, each ended by '\0', which no name contains
// (capture/names.hpp): different parts never make the same key.
inline std::string cache_key(std::initializer_list<std::string_view> parts)
{
    std::string key;
    for (const auto part : parts) (key += part) += '\0';
    return key;
}

template <typename Value>
class lru_cache {
public:
    lru_cache(std::size_t capacity_bytes, std::size_t max_entry_bytes)
        : capacity_(capacity_bytes), max_entry_(max_entry_bytes)
    {}

    // The value under key, now the most recent; null when there is none.
    std::shared_ptr<const Value> find(const std::string& key)
    {
        std::lock_guard lock(mu_);
        auto it = index_.find(key);
        if (it == index_.end()) return nullptr;
        order_.splice(order_.begin(), order_, it->second);
        return it->second->value;
    }

    // Keeps value under key unless it costs more than max_entry_bytes or the
    // key is there already (the first value stays: entries never change),
    // then evicts the least recent entries down to capacity_bytes.
    void add(const std::string& key, std::shared_ptr<const Value> value, std::size_t cost)
    {
        cost += sizeof(entry) + 2 * key.size() + 64; // the list node, the index's node and key copy
        if (cost > max_entry_) return;
        std::lock_guard lock(mu_);
        if (index_.contains(key)) return;
        order_.push_front({key, std::move(value), cost});
        index_.emplace(key, order_.begin());
        bytes_ += cost;
        while (bytes_ > capacity_) {
            bytes_ -= order_.back().cost;
            index_.erase(order_.back().key);
            order_.pop_back();
        }
    }

    // Drops every entry (after a prune removed stored rows: service/retention_job.hpp).
    void clear()
    {
        std::lock_guard lock(mu_);
        index_.clear();
        order_.clear();
        bytes_ = 0;
    }

    [[nodiscard]] std::size_t size_bytes() const
    {
        std::lock_guard lock(mu_);
        return bytes_;
    }
    [[nodiscard]] std::size_t size() const
    {
        std::lock_guard lock(mu_);
        return order_.size();
    }

private:
    struct entry {
        std::string key;
        std::shared_ptr<const Value> value;
        std::size_t cost;
    };
    const std::size_t capacity_, max_entry_;
    mutable std::mutex mu_;
    std::list<entry> order_; // most recent first
    std::unordered_map<std::string, typename std::list<entry>::iterator> index_;
    std::size_t bytes_ = 0; // sum of the entries' costs, at most capacity_
};

} // namespace perfgate::service
