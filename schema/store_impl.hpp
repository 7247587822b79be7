// The store's private parts, shared by its sources (store.cpp, alerts.cpp):
// the connection pool behind store::impl and small helpers. Not an interface:
// nothing outside schema/ includes this.
#pragma once

#include "schema/sqlite.hpp"
#include "schema/store.hpp"

#include <condition_variable>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate::store {

namespace detail {

// Read connections kept per store. The server's default worker count is far
// below this; more readers than cores buys nothing.
inline constexpr std::size_t max_readers = 8;

std::int64_t unix_now();
// Names in error messages: quoted, and cut so a 10 KB hostile name does not
// become a 10 KB log line.
std::string shown_name(std::string_view name);
std::int64_t to_int64(std::size_t v);
// Per-connection settings; "store.open" when the file is not a usable database.
void configure(connection& c, bool writer, bool memory);
// SELECT id ... WHERE name-ish = :name, or nullopt.
std::optional<std::int64_t> lookup_id(connection& c, std::string_view sql,
                                      std::initializer_list<std::pair<const char*, std::string_view>> binds);

} // namespace detail

struct store::impl {
    std::string path_;
    bool memory_ = false;

    mutable std::mutex writer_mu_;
    std::unique_ptr<detail::connection> writer_;

    mutable std::mutex pool_mu_;
    mutable std::condition_variable pool_cv_;
    mutable std::vector<std::unique_ptr<detail::connection>> readers_;   // every reader opened
    mutable std::vector<detail::connection*> idle_;
    mutable std::size_t opening_ = 0;                             // readers being opened

    // A connection to read from, exclusively for this thread until destroyed.
    class read_lease {
    public:
        explicit read_lease(const impl& s) : s_(s)
        {
            if (s_.memory_) {
                writer_lock_ = std::unique_lock(s_.writer_mu_);
                conn_ = s_.writer_.get();
                return;
            }
            std::unique_lock lock(s_.pool_mu_);
            s_.pool_cv_.wait(lock, [&] {
                return !s_.idle_.empty() || s_.readers_.size() + s_.opening_ < detail::max_readers;
            });
            if (!s_.idle_.empty()) {
                conn_ = s_.idle_.back();
                s_.idle_.pop_back();
                return;
            }
            // Open a new reader outside the pool lock (it touches the file).
            ++s_.opening_;
            lock.unlock();
            std::unique_ptr<detail::connection> fresh;
            try {
                fresh = std::make_unique<detail::connection>(s_.path_, detail::connection::mode::read_only);
                detail::configure(*fresh, false, false);
            } catch (...) {
                lock.lock();
                --s_.opening_;
                s_.pool_cv_.notify_one();
                throw;
            }
            lock.lock();
            --s_.opening_;
            conn_ = fresh.get();
            s_.readers_.push_back(std::move(fresh));
        }
        read_lease(const read_lease&) = delete;
        read_lease& operator=(const read_lease&) = delete;
        ~read_lease()
        {
            if (s_.memory_) return;   // writer_lock_ releases
            {
                std::lock_guard lock(s_.pool_mu_);
                s_.idle_.push_back(conn_);
            }
            s_.pool_cv_.notify_one();
        }
        detail::connection& operator*() const noexcept { return *conn_; }

    private:
        const impl& s_;
        detail::connection* conn_ = nullptr;
        std::unique_lock<std::mutex> writer_lock_;
    };
};

} // namespace perfgate::store
