// A server token's scopes (docs/http-api.md "Token scopes"): what a token
// may do on its project's routes. Shared by the store (which keeps them), the
// server (whose route table names the scope each route needs), the CLI
// (perfgate token create --scope) and the dashboard (a session carries its
// token's scopes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perfgate::model {

// One scope. What each allows (the route table, server/router.cpp, names
// the scope of every route):
//   read     : read the project's comparisons, history, benchmarks, alerts,
//              change points and the baseline run to reuse.
//   upload   : upload runs on any branch, compare them, store their flame
//              graphs and attributions. Its runs never feed the main line
//              (run_record::mainline is false whatever the client says) and
//              are never reused as a baseline: a pull request's job.
//   baseline : what upload allows, and its runs may feed the baseline
//              branch's series and be reused: a push job on the protected
//              branch.
//   admin    : webhooks, alert triage, acceptances (project settings and
//              tokens are set on the database, perfgate token/project).
enum class scope : std::uint8_t { read = 1, upload = 2, baseline = 4, admin = 8 };

// A set of scopes. A token created before scopes existed has none recorded
// and keeps every power: legacy().
class scope_set {
public:
    constexpr scope_set() = default;
    static constexpr scope_set legacy()
    {
        scope_set s;
        s.legacy_ = true;
        return s;
    }
    // "read,upload" (any order, no blanks, no repeats) -> the set. nullopt for
    // an empty list, an unknown name, a repeat. "legacy" is not accepted
    // here: no new token gets every power by name.
    static std::optional<scope_set> parse(std::string_view list);
    // As stored (store::create_token): a parse() of it; NULL in the store is legacy().
    static scope_set from_stored(const std::optional<std::string>& stored);

    // Whether this set allows what needs `s`: legacy allows all; baseline
    // allows upload too.
    [[nodiscard]] bool grants(scope s) const;
    [[nodiscard]] bool is_legacy() const noexcept { return legacy_; }
    [[nodiscard]] bool has(scope s) const noexcept { return (bits_ & static_cast<std::uint8_t>(s)) != 0; }
    scope_set& add(scope s) noexcept
    {
        bits_ |= static_cast<std::uint8_t>(s);
        return *this;
    }
    // "read,upload" in the order read, upload, baseline, admin; "legacy" for legacy().
    [[nodiscard]] std::string to_string() const;
    friend bool operator==(const scope_set&, const scope_set&) = default;

private:
    std::uint8_t bits_ = 0;
    bool legacy_ = false;
};

std::string_view to_string(scope s);

// Which token wrote a stored run or acceptance: its id (never reused on
// either engine) and its name (label) at the time.
struct token_ref {
    std::int64_t id = 0;
    std::string name;
    friend bool operator==(const token_ref&, const token_ref&) = default;
};

} // namespace perfgate::model
