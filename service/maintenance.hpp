// Health and sizes: /healthz's check, the store's size and the service's in-memory caches
// (service::service::maintenance(); bodies in service/service.cpp and service/caches.cpp).
#pragma once

#include "service/common.hpp"

namespace perfgate::service {

namespace detail {
class service_impl; // service/service_impl.hpp
} // namespace detail

class maintenance {
public:
    explicit maintenance(detail::service_impl& s) noexcept : impl_(&s) {}
    maintenance(const maintenance&) = delete;
    maintenance& operator=(const maintenance&) = delete;

    // /healthz: throws what keeps the store from serving (store::maintenance::check_health).
    void check_health() const;
    [[nodiscard]] std::int64_t store_size_bytes() const;
    // The comparison cache: bytes charged (at most comparison_cache_bytes)
    // and entries.
    [[nodiscard]] std::size_t cached_comparison_bytes() const;
    [[nodiscard]] std::size_t cached_comparisons() const;
    // The run cache: bytes charged (at most run_cache_bytes) and runs.
    [[nodiscard]] std::size_t cached_run_bytes() const;
    [[nodiscard]] std::size_t cached_runs() const;
    // The history cache: queries kept.
    [[nodiscard]] std::size_t cached_histories() const;

private:
    detail::service_impl* impl_;
};

} // namespace perfgate::service
