// The dashboard's page cache: the pages that only read (overview, series,
// comparison, run) are kept rendered, apart from their header (the header
// holds the session's sign-out form), so a page asked for again costs a
// lookup and a copy instead of the store's queries and the JSON encoding.
//
// Freshness: an entry is valid only for the store generation it was made at
// (service::service::generation(): every write through this server's service
// moves it), so an upload, a comparison, a triage or a new alert shows on
// the next request. On PostgreSQL the generation also moves with every other
// replica's writes (store::generation: LISTEN/NOTIFY, milliseconds later).
// Writes by another process on the same SQLite file (`perfgate project --db`
// while the server runs) do not move it: entries also expire max_age after
// they were made.
//
// Bounded: at most max_bytes of keys and pages; the least recently used
// entries go first, and a page larger than max_bytes / 8 is never kept.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json_fwd.hpp>

#include "server/pages/html.hpp"

namespace perfgate::server::pages {

inline constexpr std::size_t page_cache_bytes = std::size_t{32} << 20;
inline constexpr std::chrono::milliseconds page_cache_max_age{5000};

// What a page shows apart from the header: its content and its data for
// dashboard.js (<script id="perfgate-data">), both already escaped.
struct page_view {
    html::markup name;
    std::string title;
    html::writer body;
    html::writer data;

    page_view(html::markup page_name, std::string page_title) : name(page_name), title(std::move(page_title)) {}
    void set_data(const nlohmann::json& d) { data.json_data(d); }
    [[nodiscard]] std::size_t bytes() const { return title.size() + body.str().size() + data.str().size(); }
};

class page_cache {
public:
    using clock = std::chrono::steady_clock;

    explicit page_cache(std::size_t max_bytes = page_cache_bytes,
                        std::chrono::milliseconds max_age = page_cache_max_age);

    // The view kept under key, made at this generation and younger than
    // max_age; nullptr otherwise.
    [[nodiscard]] std::shared_ptr<const page_view> find(const std::string& key, std::uint64_t generation,
                                                        clock::time_point now = clock::now());
    void put(const std::string& key, std::uint64_t generation, std::shared_ptr<const page_view> view,
             clock::time_point now = clock::now());

    struct counts {
        std::uint64_t hits = 0, misses = 0;
        std::size_t entries = 0, bytes = 0;
    };
    [[nodiscard]] counts stats() const;

private:
    struct entry {
        std::shared_ptr<const page_view> view;
        std::uint64_t generation = 0;
        clock::time_point made;
        std::size_t bytes = 0;
        std::list<std::string>::iterator position;
    };
    void erase(std::unordered_map<std::string, entry>::iterator it);

    const std::size_t max_bytes_;
    const std::chrono::milliseconds max_age_;
    mutable std::mutex mutex_;
    std::list<std::string> order_; // keys, most recently used first
    std::unordered_map<std::string, entry> entries_;
    std::size_t bytes_ = 0;
    std::uint64_t hits_ = 0, misses_ = 0;
};

} // namespace perfgate::server::pages
