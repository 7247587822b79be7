// perfgate::error — the one exception type of the project.
//
// Every error carries a stable id ("ingest.bad_csv", "policy.unknown_key",
// "store.constraint", ...), one of model/error_ids.hpp's constants
// (errors::ingest_bad_csv). The id is part of the API: the HTTP layer turns
// it into {"error": {"id", "message"}} and the CLI into its exit code, both
// from model/error_catalogue.hpp (docs/errors.md lists them). Messages name
// the file, line or field that was wrong.
#pragma once

#include "model/error_ids.hpp"

#include <stdexcept>
#include <string>

namespace perfgate {

class error : public std::runtime_error {
public:
    error(std::string id, const std::string& message) : std::runtime_error(message), id_(std::move(id)) {}
    // error(errors::ingest_bad_csv, "..."): an id the compiler checked.
    error(error_id id, const std::string& message) : error(std::string(id.view()), message) {}

    // Stable, dotted identifier: "<area>.<what>".
    [[nodiscard]] const std::string& id() const noexcept { return id_; }

private:
    std::string id_;
};

// Internal invariant check: aborts with file/line, never throws. For
// conditions that are bugs in perfgate, not bad input.
[[noreturn]] void check_failed(const char* expr, const char* file, int line) noexcept;

} // namespace perfgate

#define PERFGATE_CHECK(expr) ((expr) ? static_cast<void>(0) : ::perfgate::check_failed(#expr, __FILE__, __LINE__))
