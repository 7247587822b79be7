// perfgate_errors_doc: writes docs/errors.md from the error catalogue
// (model/error_catalogue.hpp): one row per id with its status, exit code,
// summary and example message.
//
//   perfgate_errors_doc                 the page on standard output
//   perfgate_errors_doc --output FILE   the page into FILE
//   perfgate_errors_doc --check FILE    exit 1 unless FILE is the page
//
// The build target errors_doc regenerates docs/errors.md in the source
// tree; the ctest errors_doc_up_to_date runs --check on it.
#include "model/error_catalogue.hpp"
#include "tools/generated_doc.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using perfgate::error_catalogue;
using perfgate::error_entry;

// The page's sections, in order; each lists the areas ("usage" of
// "usage.bad_value") it documents. Every area of the catalogue is in one.
struct section {
    std::string_view title;
    std::string_view intro;
    std::vector<std::string_view> areas;
};

const std::vector<section>& sections()
{
    static const std::vector<section> all{
        {"The command line",
         "The command line is wrong. The message names the option or argument; `perfgate CMD --help` lists them.",
         {"usage"}},
        {"Input files and environment",
         "A file or environment the CLI reads is wrong: the benchmark config, a report, the GitHub Actions "
         "environment, a series for change-points.",
         {"input"}},
        {"The policy file",
         "The policy file (`--policy`, or the policy of a compare request) is wrong; the message "
         "gives the file and the key path (docs/report.md).",
         {"policy"}},
        {"Captures and uploaded runs",
         "A `perf stat -x,` capture or an uploaded run is wrong (docs/perf-input.md, docs/http-api.md).",
         {"ingest"}},
        {"Compares", "The runs of a compare cannot be found or compared.", {"compare"}},
        {"Server resources",
         "Lists, alerts, comparisons, acceptances, projects and flame graphs on the server.",
         {"query", "alert", "comparison", "accept", "project", "artifact"}},
        {"Authentication", "The server refuses who is asking (docs/http-api.md, tokens).", {"auth", "token"}},
        {"HTTP",
         "Answered by the server when a request's framing, route or parameters are wrong; the last five are met "
         "by perfgate's HTTP client when it talks to a server or to GitHub.",
         {"http"}},
        {"perfgate's server, seen by the CLI",
         "What `perfgate run --server`, `upload` and the other client commands met at the server. A token or a "
         "request the server refuses is the user's to fix (exit 2); a failing server is not (exit 4).",
         {"server"}},
        {"The store",
         "The database, SQLite or PostgreSQL. The server answers these without the engine's message, which "
         "names files and quotes SQL: the body keeps the id and gives a reference to the server log's line.",
         {"store"}},
        {"Measuring", "Running the benchmarks on this machine failed.", {"measure", "env", "process"}},
        {"Profiles and attribution",
         "`--profile` (perf record) and callgrind attribution. Ids whose meaning starts \"In the report\" are not "
         "thrown to the user: they are listed in the report's attribution errors and the verdict stands.",
         {"profile", "attribution"}},
        {"GitHub",
         "GitHub's REST API, from `perfgate github` and `perfgate run --github` (docs/github.md).",
         {"github"}},
        {"GitLab",
         "GitLab's REST API v4, from `perfgate gitlab` and `perfgate accept --gitlab` (docs/gitlab.md).",
         {"gitlab"}},
        {"Files and the system", "The machine under perfgate.", {"io", "crypto"}},
        {"Statistics",
         "A statistics function was called outside its domain. Callers check the user's input first, so these "
         "are bugs in perfgate: please report them.",
         {"stats"}},
        {"Internal", "Anything else.", {"internal"}},
    };
    return all;
}


std::string_view area_of(std::string_view id) { return id.substr(0, id.find('.')); }

// GitHub's anchor for a heading: lowercase, punctuation other than '-' and
// '_' dropped, spaces to '-'.
std::string anchor(std::string_view heading)
{
    std::string out;
    for (char c : heading) {
        if (c == ' ') out += '-';
        else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') out += c;
        else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

// Inline code that may itself hold backticks.
std::string code(std::string_view text)
{
    if (text.find('`') == std::string_view::npos) return "`" + std::string(text) + "`";
    return "`` " + std::string(text) + " ``";
}

std::string table_cell(std::string_view text)
{
    std::string out;
    for (char c : text) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

// The catalogue and this file agree: every area in one section, every
// example an id of the catalogue. Returns the problems, one per line.
std::string problems()
{
    std::string out;
    std::map<std::string_view, int> sections_of;
    for (const section& s : sections()) {
        for (std::string_view a : s.areas) ++sections_of[a];
    }
    for (const error_entry& e : error_catalogue) {
        const int n = sections_of.count(area_of(e.id.view())) ? sections_of[area_of(e.id.view())] : 0;
        if (n != 1) {
            out += "area '" + std::string(area_of(e.id.view())) + "' (of " + std::string(e.id.view()) + ") is in " +
                   std::to_string(n) + " sections of tools/errors_doc.cpp, not 1\n";
        }
    }
    return out;
}

std::string page()
{
    std::ostringstream o;
    o << "# Error ids\n\n"
         "<!-- Generated from model/error_catalogue.hpp by tools/errors_doc.cpp: do not edit. Change the\n"
         "     catalogue, then run `cmake --build BUILD --target errors_doc`. -->\n\n"
         "Every failure perfgate reports carries a stable id, `area.what` (for example `ingest.bad_csv`), and a\n"
         "message that names the file, line, field or option that was wrong. Ids are part of the interface:\n"
         "they are never renamed nor reused for another meaning, so scripts may match on them; messages may\n"
         "change.\n\n"
         "- The **CLI** prints `perfgate CMD: error [ID]: MESSAGE` on standard error and exits with the id's\n"
         "  exit code (docs/cli.md): **2** when the command line, an input file or a request is the user's to\n"
         "  fix, **4** when the machine, a service or perfgate itself failed. Exit codes 0, 1 and 3 are\n"
         "  verdicts (pass, regression, inconclusive), never errors.\n"
         "- The **server** answers `{\"error\": {\"id\": ID, \"message\": MESSAGE}}` with the id's HTTP\n"
         "  status (docs/http-api.md). For a 500 the body is `internal` with a reference to the line of the\n"
         "  server's log that holds the real message; `store.*` ids keep their id and status, and their\n"
         "  message is replaced by such a reference too.\n"
         "- An id the catalogue does not have is answered as a bug: HTTP 500, exit 4.\n\n"
         "Each id has one status and one exit code, whichever side meets it. For ids only the CLI meets\n"
         "(`usage.*`, `measure.*`, ...) the status is the one the server would answer if one ever reached it.\n\n";

    o << "## All ids\n\n| Id | HTTP | Exit | Section |\n|---|---|---|---|\n";
    for (const section& s : sections()) {
        for (const error_entry& e : error_catalogue) {
            if (std::find(s.areas.begin(), s.areas.end(), area_of(e.id.view())) == s.areas.end()) continue;
            o << "| [" << code(e.id.view()) << "](#" << anchor(e.id.view()) << ") | " << e.http_status << " | "
              << static_cast<int>(e.exit) << " | " << table_cell(s.title) << " |\n";
        }
    }
    for (const section& s : sections()) {
        o << "\n## " << s.title << "\n\n" << s.intro << "\n";
        for (const error_entry& e : error_catalogue) {
            if (std::find(s.areas.begin(), s.areas.end(), area_of(e.id.view())) == s.areas.end()) continue;
            o << "\n### " << e.id.view() << "\n\nHTTP " << e.http_status << " · exit " << static_cast<int>(e.exit)
              << "\n\n"
              << e.summary << "\n";
            if (!e.example.empty()) o << "\nExample: " << code(e.example) << "\n";
        }
    }
    return o.str();
}

} // namespace

int main(int argc, char** argv)
{
    if (const std::string p = problems(); !p.empty()) {
        std::fputs(p.c_str(), stderr);
        return 1;
    }
    return perfgate::tools::generated_doc_main({"perfgate_errors_doc", "model/error_catalogue.hpp", "errors_doc"},
                                               page(), argc, argv);
}
