// render_acceptance_note (report/render.hpp): the sticky comment's note
// that a reviewer accepted the regression (perfgate accept).
#include "report/render.hpp"

#include <fmt/format.h>

namespace perfgate::report {

namespace {
// A commit as GitHub shows it in prose: its first 12 hex digits link to it.
constexpr std::size_t short_sha_chars = 12;
} // namespace

std::string render_acceptance_note(const model::acceptance& a, std::string_view context)
{
    const std::string reason = a.reason.empty() ? "_no reason given_" : markdown_literal(a.reason);
    // "Accepted", not "Regression accepted": the note is written whatever
    // the head's verdict was, and a passing head may be accepted too.
    return fmt::format("{}\n> [!NOTE]\n> **Accepted** by {} for commit {}: {}\n>\n"
                       "> The commit status {} of that commit is success. A new push is gated afresh.\n{}\n",
                       acceptance_note_begin, markdown_literal("@" + a.login),
                       markdown_literal(a.head_sha.substr(0, short_sha_chars)), reason, markdown_literal(context),
                       acceptance_note_end);
}

} // namespace perfgate::report
