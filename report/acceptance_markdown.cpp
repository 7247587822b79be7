// render_acceptance_note (report/render.hpp): the sticky comment's note
// that a reviewer accepted the regression (perfgate accept).
#include "report/render.hpp"

#include <fmt/format.h>

#include "model/text.hpp"

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

namespace {
constexpr std::string_view acceptance_command = "/perfgate accept";
}

std::optional<std::string> acceptance_request_reason(std::string_view comment_body)
{
    // A comment may start with blank lines or spaces; a reply quoting the
    // command ("> /perfgate accept") is not a request.
    const std::string_view body = model::trim(comment_body);
    if (!body.starts_with(acceptance_command)) return std::nullopt;
    std::string_view rest = body.substr(acceptance_command.size());
    if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t' && rest.front() != '\r' && rest.front() != '\n')
        return std::nullopt; // "/perfgate acceptable", "/perfgate accept-all"
    return model::clean_acceptance_reason(rest);
}

std::string with_acceptance_note(std::string_view body, std::string_view marker, std::string_view note)
{
    std::string out(body);
    const auto begin = out.find(acceptance_note_begin);
    if (begin != std::string::npos) {
        const auto end = out.find(acceptance_note_end, begin);
        if (end != std::string::npos) {
            std::size_t stop = end + acceptance_note_end.size();
            if (stop < out.size() && out[stop] == '\n') ++stop;
            out.replace(begin, stop - begin, note);
            return out;
        }
    }
    std::size_t at = 0;
    if (const auto m = out.find(marker); m != std::string::npos) {
        const auto eol = out.find('\n', m);
        if (eol == std::string::npos) {
            out += '\n';
            at = out.size();
        } else {
            at = eol + 1;
        }
    }
    out.insert(at, std::string(note) + "\n");
    return out;
}

} // namespace perfgate::report
