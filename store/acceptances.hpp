// Reviewers' acceptances of a comparison's regression
// (store::store::acceptances(); store/acceptances.cpp, 017_acceptances.sql):
// who (a GitHub login), why, when (unix seconds) and for which commit (the
// pull request head).
#pragma once

#include "model/acceptance.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace perfgate::store {

namespace detail {
struct store_impl;
}

using model::acceptance;

class acceptances {
public:
    explicit acceptances(detail::store_impl& s) noexcept : impl_(&s) {}
    acceptances(const acceptances&) = delete;
    acceptances& operator=(const acceptances&) = delete;

    // Records login's acceptance of the project's newest comparison whose
    // candidate run (its first pair's) is of commit head_sha, replacing an
    // earlier acceptance of that comparison; the stored row. nullopt when no
    // comparison of the project has that candidate commit: nothing stored.
    // The store keeps the texts as given (service::service checks them).
    // "store.not_found" for an unknown project; "store.constraint" for an
    // empty login or a sha outside 7 to 64 characters.
    // by: the server token that asks (stored with it; nullopt: none).
    std::optional<acceptance> accept(std::string_view project, std::string_view head_sha, std::string_view login,
                                     std::string_view reason, const std::optional<model::token_ref>& by = std::nullopt);
    // The acceptance of comparison `comparison_id` of the project, if any.
    [[nodiscard]] std::optional<acceptance> load(std::string_view project, std::int64_t comparison_id) const;

private:
    detail::store_impl* impl_;
};

} // namespace perfgate::store
