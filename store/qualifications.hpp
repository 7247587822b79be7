// perfgate qualify's figures per testbed and benchmark
// (store::store::qualifications(); store/qualifications.cpp,
// 021_qualifications.sql): every stored qualification is kept, readers take
// the newest of a (testbed fingerprint, benchmark).
#pragma once

#include "model/qualification.hpp"

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

using model::qualification;

// list() answers at most this many qualifications (the newest pairs first).
inline constexpr std::size_t max_listed_qualifications = 500;

class qualifications {
public:
    explicit qualifications(detail::store_impl& s) noexcept : impl_(&s) {}
    qualifications(const qualifications&) = delete;
    qualifications& operator=(const qualifications&) = delete;

    // Stores q (its id and stored_at are set here) with its counters in one
    // transaction; the stored row. The store keeps the values as given
    // (service::qualifications checks them). "store.not_found" for an
    // unknown project; "store.constraint" for a text over the tables'
    // limits or a counter named twice: nothing stored.
    // by: the server token that asks (nullopt: the CLI on a database).
    qualification add(std::string_view project, qualification q,
                      const std::optional<model::token_ref>& by = std::nullopt);
    // The newest qualification of each (testbed fingerprint, benchmark) of
    // the project, newest first, at most max_listed_qualifications; a
    // non-empty testbed (a fingerprint) or benchmark keeps only those.
    [[nodiscard]] std::vector<qualification> newest(std::string_view project, std::string_view testbed = {},
                                                    std::string_view benchmark = {}) const;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
