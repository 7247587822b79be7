#include "cli/man_page.hpp"

#include <map>
#include <vector>

#include <fmt/format.h>

#include "model/exit_code.hpp"

namespace perfgate::cli {

namespace {

// Escapes one line of text; `text` has no newline.
std::string escape_line(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + 8);
    if (!text.empty() && (text.front() == '.' || text.front() == '\'')) out += "\\&";
    for (char c : text) {
        if (c == '\\') out += "\\e";
        else if (c == '-') out += "\\-";
        else out += c;
    }
    return out;
}

std::vector<std::string_view> lines_of(std::string_view text)
{
    std::vector<std::string_view> out;
    while (true) {
        auto nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
    return out;
}

// A paragraph of the tables' text, whose line breaks are only wrapping
// except where a line is indented (a list: "  list   newest first"): roff
// fills the plain lines and keeps the indented ones on lines of their own.
std::string paragraph(std::string_view text)
{
    std::string out;
    bool after_indented = false;
    for (auto line : lines_of(text)) {
        const bool indented = !line.empty() && line.front() == ' ';
        if (after_indented && !indented) out += ".br\n";
        out += escape_line(line) + "\n";
        after_indented = indented;
    }
    return out;
}

// The synopsis as written after "Usage: perfgate NAME ", continuation lines
// kept as they are.
std::string synopsis(const command_spec& spec)
{
    std::string out = ".nf\n";
    bool first = true;
    for (auto line : lines_of(spec.synopsis)) {
        if (first) out += fmt::format("\\fBperfgate {}\\fR {}\n", escape_line(spec.name), escape_line(line));
        else out += escape_line(line) + "\n";
        first = false;
    }
    return out + ".fi\n";
}

std::string option_item(const option_spec& s)
{
    std::string tag;
    if (s.short_name) tag += fmt::format("\\fB\\-{}\\fR, ", s.short_name);
    tag += fmt::format("\\fB\\-\\-{}\\fR", escape_line(s.name));
    if (s.takes_value) tag += fmt::format(" \\fI{}\\fR", escape_line(s.value_name.empty() ? "VALUE" : s.value_name));
    return fmt::format(".TP\n{}\n{}", tag, paragraph(option_help(s)));
}

std::string command_section(const command_entry& c)
{
    const command_spec& spec = c.spec();
    std::string out = fmt::format(".SS {}\n", escape_line(spec.name));
    out += synopsis(spec);
    out += ".PP\n" + paragraph(spec.description);
    for (const auto& group : visible_option_groups(spec)) {
        out += fmt::format(".PP\n.I {}\n", escape_line(group.heading.empty() ? "Options" : group.heading));
        out += ".RS 4\n";
        for (const auto* s : group.options) out += option_item(*s);
        out += ".RE\n";
    }
    return out;
}

// ENVIRONMENT: each variable an option falls back to, with the options.
std::string environment(std::span<const command_entry> commands)
{
    std::map<std::string, std::vector<std::string>> uses; // variable -> "run --token", ...
    std::map<std::string, std::string> help;              // variable -> the option's help
    for (const auto& c : commands) {
        for (const auto& s : c.spec().options) {
            if (s.env.empty() || s.hidden) continue;
            uses[s.env].push_back(fmt::format("\\fB{} \\-\\-{}\\fR", escape_line(c.spec().name), escape_line(s.name)));
            help.emplace(s.env, s.help);
        }
    }
    std::string out = ".SH ENVIRONMENT\n";
    for (const auto& [var, options] : uses) {
        out += fmt::format(".TP\n.B {}\n", escape_line(var));
        out += fmt::format("The value of {} when the option is not given: {}.\n", fmt::join(options, ", "),
                           escape_line(help[var]));
    }
    out +=
        ".TP\n.B NO_COLOR\n"
        "When set, text reports and \\fBcheck\\-env\\fR are not coloured on a terminal.\n"
        ".TP\n.B GITHUB_ACTIONS, GITHUB_SHA, GITHUB_HEAD_REF, GITHUB_REF_NAME, GITHUB_BASE_REF, GITHUB_EVENT_PATH\n"
        "In a GitHub Actions job (GITHUB_ACTIONS=true), the defaults of \\fBrun\\fR's "
        "\\fB\\-\\-sha\\fR, \\fB\\-\\-branch\\fR, \\fB\\-\\-base\\-branch\\fR and \\fB\\-\\-pr\\fR and of "
        "\\fBupload\\fR's \\fB\\-\\-git\\-sha\\fR and \\fB\\-\\-branch\\fR.\n"
        ".TP\n.B GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN, GITHUB_EVENT_NAME, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT\n"
        "Read by \\fBgithub\\fR and \\fBrun \\-\\-github\\fR to post the report: "
        "the pull request comment, the commit status, the job summary and the step outputs.\n";
    return out;
}

} // namespace

std::string roff_escape(std::string_view text)
{
    std::string out;
    bool first = true;
    for (auto line : lines_of(text)) {
        if (!first) out += '\n';
        out += escape_line(line);
        first = false;
    }
    return out;
}

std::string man_page(std::span<const command_entry> commands, std::string_view version)
{
    std::string out;
    out += ".\\\" Generated from perfgate's command tables by gen_man_page (cli/man_page.cpp): do not edit.\n";
    out += fmt::format(".TH PERFGATE 1 \"\" \"perfgate {}\" \"User Commands\"\n", escape_line(version));
    // No hyphenation, ragged right: option names and counter names stay whole.
    out += ".nh\n.ad l\n";
    out += ".SH NAME\nperfgate \\- a performance\\-regression gate for perf stat and callgrind measurements\n";

    out += ".SH SYNOPSIS\n.nf\n\\fBperfgate\\fR \\fIcommand\\fR [\\fIoptions\\fR]\n"
           "\\fBperfgate\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR\n"
           "\\fBperfgate \\-\\-help\\fR | \\fB\\-\\-version\\fR\n.fi\n";

    out += ".SH DESCRIPTION\n" + paragraph(program_description);
    out += ".PP\nThe commands:\n.RS 4\n.PD 0\n";
    for (const auto& c : commands) {
        out += fmt::format(".TP 16\n.B {}\n{}\n", escape_line(c.spec().name), escape_line(c.summary));
    }
    out += ".PD\n.RE\n.PP\n"
           "Options take their value as \\fB\\-\\-name VALUE\\fR or \\fB\\-\\-name=VALUE\\fR "
           "(short ones as \\fB\\-r VALUE\\fR or \\fB\\-rVALUE\\fR); arguments after \\fB\\-\\-\\fR "
           "are never read as options. Each command prints its options with \\fB\\-\\-help\\fR.\n";

    out += ".SH COMMANDS\n";
    for (const auto& c : commands) out += command_section(c);

    out += ".SH EXIT STATUS\n";
    const std::pair<int, const char*> codes[] = {
        {exit_pass, "pass: no gated counter regressed (improvements and warnings included); or the command did what "
                    "it was asked"},
        {exit_regression, "a gated counter regressed"},
        {exit_usage, "a usage or input error: an unknown or missing option, a bad value, an unreadable or malformed "
                     "file, a token the server refuses"},
        {exit_inconclusive, "the verdict is inconclusive, with \\-\\-fail\\-on\\-inconclusive"},
        {exit_measurement, "a measurement or environment failure: a benchmark that fails, perf that cannot be used, "
                           "a server that cannot be reached or fails, a database that cannot be written"},
    };
    for (const auto& [code, meaning] : codes) out += fmt::format(".TP\n.B {}\n{}.\n", code, meaning);
    out += ".PP\nA command whose description names other codes (for instance \\fBcheck\\-env \\-\\-strict\\fR) "
           "says so above.\n";

    out += environment(commands);

    out += ".SH SEE ALSO\n"
           ".BR perf\\-stat (1),\n"
           ".BR perf\\-record (1),\n"
           ".BR valgrind (1).\n"
           ".PP\n"
           "The documentation in the source tree: \\fIdocs/cli.md\\fR (commands, options, exit codes), "
           "\\fIdocs/report.md\\fR (the policy file and the report), \\fIdocs/errors.md\\fR (every error id), "
           "\\fIdocs/http\\-api.md\\fR and \\fIdocs/github.md\\fR.\n";
    return out;
}

} // namespace perfgate::cli
