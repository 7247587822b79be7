// The error-id catalogue (model/error_catalogue.hpp, its constants in
// model/error_ids.hpp) against itself and against the sources: every id the production code uses is in the table,
// every entry of the table is used, and the table keeps its invariants.
//
// The scan reads every .cpp/.hpp under the repository's top-level folders
// except tests/, bench/, examples/, docs/ and ci/ (and a build directory
// inside the checkout). Comments are skipped; a string literal whose whole
// text looks like an error id ("area.what") is taken for one, wherever it
// is (error(...), a helper's argument, a comparison with e.id()), unless it
// is listed in not_error_ids below or names a file by its extension. An
// entry counts as used when its literal or its constant (errors::area_what)
// appears.
#include "model/error_catalogue.hpp"
#include "model/exit_code.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fs = std::filesystem;
using perfgate::error_catalogue;
using perfgate::error_entry;

const fs::path source_dir = PERFGATE_SOURCE_DIR;

// Files that name every id on purpose: the constants and the table (whose
// rows carry the examples docs/errors.md shows).
constexpr std::array catalogue_files{std::string_view{"model/error_ids.hpp"},
                                     std::string_view{"model/error_catalogue.hpp"}};

// Top-level folders that are not production code.
constexpr std::array skipped_folders{std::string_view{"tests"}, std::string_view{"bench"}, std::string_view{"examples"},
                                     std::string_view{"docs"},  std::string_view{"ci"},    std::string_view{"tools"}};

// Dotted literals in the sources that are not error ids. A new one makes
// this test fail naming it: add it here if it is not an error id.
// clang-format off
constexpr std::array not_error_ids{
    // The environment checks' ids (runner/check_env.cpp), reported by
    // perfgate check-env, not thrown.
    std::string_view{"cpu.affinity"}, std::string_view{"cpu.governor"}, std::string_view{"cpu.isolated"},
    std::string_view{"cpu.load"}, std::string_view{"cpu.smt"}, std::string_view{"cpu.turbo"},
    std::string_view{"perf.available"}, std::string_view{"perf.events"}, std::string_view{"perf.paranoid"},
    // Field names in messages (service/service.cpp).
    std::string_view{"testbed.cpu"}, std::string_view{"testbed.fingerprint"}, std::string_view{"testbed.kernel"},
    std::string_view{"testbed.name"},
    // Event payload fields in messages (github/event.cpp, checked_sha).
    std::string_view{"workflow_run.head_sha"}, std::string_view{"merge_group.head_sha"},
    // Event payload fields in messages (github/accept.cpp, read_request).
    std::string_view{"issue.number"}, std::string_view{"pull_request.number"}, std::string_view{"sender.login"},
    // Webhook event names (service/notifier.hpp), sent to receivers.
    std::string_view{"alert.opened"}, std::string_view{"alert.status_changed"}, std::string_view{"alert.culprit_found"},
};
// clang-format on

// A literal "name.EXT" with one of these extensions is a file name.
constexpr std::array file_extensions{std::string_view{"h"},    std::string_view{"csv"},    std::string_view{"data"},
                                     std::string_view{"db"},   std::string_view{"folded"}, std::string_view{"html"},
                                     std::string_view{"json"}, std::string_view{"md"},     std::string_view{"sql"},
                                     std::string_view{"svg"},  std::string_view{"tmp"},    std::string_view{"txt"}};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// "area.what", lowercase letters, digits and '_', each part starting with a letter.
bool looks_like_id(std::string_view s)
{
    const auto dot = s.find('.');
    if (dot == std::string_view::npos || s.find('.', dot + 1) != std::string_view::npos) return false;
    for (std::string_view part : {s.substr(0, dot), s.substr(dot + 1)}) {
        if (part.empty() || part[0] < 'a' || part[0] > 'z') return false;
        for (char c : part) {
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
        }
    }
    return true;
}

bool valid_id(std::string_view s) { return s == "internal" || looks_like_id(s); }

bool file_name(std::string_view s)
{
    const std::string_view ext = s.substr(s.find('.') + 1);
    return std::find(file_extensions.begin(), file_extensions.end(), ext) != file_extensions.end();
}

struct literal {
    std::string text;
    std::size_t line;
};

// A source with its comments blanked out (literals kept), and its string
// literals outside #include lines.
struct lexed {
    std::string code;
    std::vector<literal> literals;
};

lexed lex(const std::string& s)
{
    lexed out;
    out.code = s;
    std::size_t line = 1;
    auto blank = [&](std::size_t from, std::size_t to) {
        for (std::size_t k = from; k < to; ++k) {
            if (out.code[k] != '\n') out.code[k] = ' ';
        }
    };
    auto on_include_line = [&](std::size_t at) {
        const std::size_t start = s.rfind('\n', at) == std::string::npos ? 0 : s.rfind('\n', at) + 1;
        const std::size_t first = s.find_first_not_of(" \t", start);
        return first != std::string::npos && s.compare(first, 8, "#include") == 0;
    };
    const std::size_t n = s.size();
    std::size_t i = 0;
    while (i < n) {
        const char c = s[i];
        if (c == '\n') {
            ++line;
            ++i;
        } else if (s.compare(i, 2, "//") == 0) {
            const std::size_t end = std::min(s.find('\n', i), n);
            blank(i, end);
            i = end;
        } else if (s.compare(i, 2, "/*") == 0) {
            const std::size_t close = s.find("*/", i + 2);
            const std::size_t end = close == std::string::npos ? n : close + 2;
            line += static_cast<std::size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                        s.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
            blank(i, end);
            i = end;
        } else if (c == '"' && i > 0 && s[i - 1] == 'R' &&
                   (i < 2 || !ident_char(s[i - 2]) || s[i - 2] == '8' || s[i - 2] == 'L' || s[i - 2] == 'u' ||
                    s[i - 2] == 'U')) {
            // R"delim(...)delim": never an id; skip it whole.
            const std::size_t open = s.find('(', i);
            const std::string close = ")" + s.substr(i + 1, open - i - 1) + "\"";
            const std::size_t end = std::min(s.find(close, open), n - close.size()) + close.size();
            line += static_cast<std::size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(i),
                                                        s.begin() + static_cast<std::ptrdiff_t>(end), '\n'));
            i = end;
        } else if (c == '"') {
            std::size_t j = i + 1;
            while (j < n && s[j] != '"' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
            if (!on_include_line(i)) out.literals.push_back({s.substr(i + 1, j - i - 1), line});
            i = j + 1;
        } else if (c == '\'' && !(i > 0 && ident_char(s[i - 1]))) {
            // A character literal (after an identifier or a digit, ' is a
            // digit separator: 1'000'000).
            std::size_t j = i + 1;
            while (j < n && s[j] != '\'' && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
            i = j + 1;
        } else {
            ++i;
        }
    }
    return out;
}

struct scan_result {
    std::size_t files = 0;
    std::map<std::string, std::vector<std::string>> ids; // dotted literal -> "path:line", ...
    std::string code;                                    // every file's code, comments blanked
};

bool skipped(const fs::path& top)
{
    const std::string name = top.filename().string();
    if (name.empty() || name[0] == '.') return true;
    if (std::find(skipped_folders.begin(), skipped_folders.end(), name) != skipped_folders.end()) return true;
    // A build directory inside the checkout: its own, or the presets'
    // build/<preset> (CMakePresets.json) below it.
    if (fs::exists(top / "CMakeCache.txt")) return true;
    std::error_code ec;
    for (const auto& sub : fs::directory_iterator(top, ec)) {
        if (sub.is_directory() && fs::exists(sub.path() / "CMakeCache.txt")) return true;
    }
    return false;
}

const scan_result& scan()
{
    static const scan_result result = [] {
        scan_result r;
        for (const auto& top : fs::directory_iterator(source_dir)) {
            if (!top.is_directory() || skipped(top.path())) continue;
            for (const auto& f : fs::recursive_directory_iterator(top.path())) {
                const std::string ext = f.path().extension().string();
                if (!f.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
                const std::string rel = fs::relative(f.path(), source_dir).generic_string();
                if (std::find(catalogue_files.begin(), catalogue_files.end(), rel) != catalogue_files.end()) continue;
                std::ifstream in(f.path(), std::ios::binary);
                const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
                lexed l = lex(text);
                ++r.files;
                for (const literal& lit : l.literals) {
                    if (lit.text == "internal" || looks_like_id(lit.text)) {
                        r.ids[lit.text].push_back(rel + ":" + std::to_string(lit.line));
                    }
                }
                r.code += l.code;
                r.code += '\n';
            }
        }
        return r;
    }();
    return result;
}

std::string constant_name(std::string_view id)
{
    std::string name(id);
    std::replace(name.begin(), name.end(), '.', '_');
    return name;
}

// Whether code uses `errors::name` as a whole token.
bool uses_constant(const std::string& code, const std::string& name)
{
    const std::string token = "errors::" + name;
    for (std::size_t at = code.find(token); at != std::string::npos; at = code.find(token, at + 1)) {
        const std::size_t end = at + token.size();
        if ((at == 0 || !ident_char(code[at - 1])) && (end == code.size() || !ident_char(code[end]))) return true;
    }
    return false;
}

} // namespace

TEST_CASE("error catalogue: ids are unique and well formed, statuses 4xx/5xx, exit codes 2 or 4")
{
    std::set<std::string_view> seen;
    for (const error_entry& e : error_catalogue) {
        const std::string_view id = e.id.view();
        CAPTURE(id);
        CHECK(seen.insert(id).second);
        CHECK(valid_id(id));
        CHECK(e.http_status >= 400);
        CHECK(e.http_status <= 599);
        CHECK((e.exit == perfgate::exit_usage || e.exit == perfgate::exit_measurement));
        // One sentence: docs/errors.md prints it as it is.
        CHECK(!e.summary.empty());
        CHECK(e.summary.back() == '.');
        CHECK(e.summary.find('\n') == std::string_view::npos);
    }
    CHECK(error_catalogue.size() >= 100);
}

TEST_CASE("error catalogue: the ids of one area are together (docs/errors.md has one section per area)")
{
    std::set<std::string_view> closed;
    std::string_view current;
    for (const error_entry& e : error_catalogue) {
        const std::string_view id = e.id.view();
        const std::string_view area = id.substr(0, id.find('.'));
        if (area == current) continue;
        CAPTURE(id);
        CHECK_MESSAGE(closed.insert(area).second, "area '" << area << "' appears in two places of the table");
        current = area;
    }
}

TEST_CASE("error catalogue: find_error, exit_code_for and the defaults for an id it lacks")
{
    for (const error_entry& e : error_catalogue) {
        CAPTURE(e.id.view());
        REQUIRE(perfgate::find_error(e.id.view()) == &e);
        CHECK(perfgate::exit_code_for(e.id.view()) == e.exit);
    }
    CHECK(perfgate::find_error("something.unknown") == nullptr);
    CHECK(perfgate::find_error("") == nullptr);
    CHECK(perfgate::exit_code_for("something.unknown") == perfgate::exit_measurement);
    // No prefix rule: an unknown id of a known area is unknown too.
    CHECK(perfgate::exit_code_for("usage.no_such_id") == perfgate::unknown_error_exit);
    CHECK(perfgate::unknown_error_status == 500);
    // Spot checks of the contract (docs/cli.md, docs/http-api.md).
    CHECK(perfgate::exit_code_for("usage.bad_value") == perfgate::exit_usage);
    CHECK(perfgate::exit_code_for("http.bad_url") == perfgate::exit_usage);
    CHECK(perfgate::exit_code_for("server.auth") == perfgate::exit_usage);
    CHECK(perfgate::exit_code_for("server.failed") == perfgate::exit_measurement);
    CHECK(perfgate::exit_code_for("io.stdout") == perfgate::exit_measurement);
    CHECK(perfgate::find_error("ingest.bad_csv")->http_status == 422);
    CHECK(perfgate::find_error("internal")->http_status == 500);
}

TEST_CASE("error catalogue: one constant per entry, named after its id")
{
    // The table's ids are constants (it does not compile otherwise); this
    // checks that each constant is named after its id and has an entry.
    std::ifstream in(source_dir / "model/error_ids.hpp");
    REQUIRE(in);
    std::set<std::string> constants;
    const std::string marker = "inline constexpr error_id ";
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with(marker)) continue;
        const std::size_t brace = line.find("{\"");
        const std::size_t close = line.find("\"}", brace);
        REQUIRE(brace != std::string::npos);
        REQUIRE(close != std::string::npos);
        const std::string name = line.substr(marker.size(), brace - marker.size());
        const std::string id = line.substr(brace + 2, close - brace - 2);
        CAPTURE(line);
        CHECK(name == constant_name(id));
        CHECK(constants.insert(id).second);
        CHECK_MESSAGE(perfgate::find_error(id) != nullptr,
                      "errors::" << name << " has no entry in model/error_catalogue.hpp");
    }
    CHECK(constants.size() == error_catalogue.size());
    CHECK(perfgate::errors::ingest_bad_csv == "ingest.bad_csv");
    CHECK(perfgate::errors::internal.view() == "internal");
    CHECK(perfgate::find_error("ingest.bad_csv")->id == perfgate::errors::ingest_bad_csv);
}

TEST_CASE("error catalogue: every error id in the sources is in the table")
{
    const scan_result& r = scan();
    INFO("scanned " << r.files << " files under " << source_dir.string());
    // A scan that found nothing would pass every check below.
    REQUIRE(r.files >= 50);
    // (Most ids are errors::constants now: the literals left are the
    // environment checks', report error ids and field names.)
    REQUIRE(r.ids.size() >= 30);
    for (const auto& [id, where] : r.ids) {
        if (perfgate::find_error(id) != nullptr) continue;
        if (std::find(not_error_ids.begin(), not_error_ids.end(), id) != not_error_ids.end()) continue;
        if (file_name(id)) continue;
        const std::string at = where.front() + (where.size() > 1 ? ", ..." : "");
        FAIL_CHECK("\"" << id << "\" (" << at
                        << ") is not in model/error_catalogue.hpp: add it there and to "
                           "model/error_ids.hpp (and regenerate docs/errors.md), "
                           "or, if it is not an error id, to not_error_ids in tests/test_errors.cpp");
    }
    for (std::string_view id : not_error_ids) {
        CAPTURE(id);
        CHECK_MESSAGE(r.ids.count(std::string(id)) == 1, "not_error_ids lists an id no source has: remove it");
        CHECK(perfgate::find_error(id) == nullptr);
    }
}

TEST_CASE("error catalogue: a throw site names its id by constant, so the compiler checks it")
{
    // error("store.io", ...) compiles with any text; error(errors::store_io, ...)
    // only with an id of model/error_ids.hpp. The same for the helpers that
    // throw or answer an error on the caller's behalf.
    const scan_result& r = scan();
    REQUIRE(r.files >= 50);
    const std::regex literal_id(
        R"re(\b(error|usage_error|run_usage_error|usage|error_response)\(\s*"[a-z_]+\.[a-z_]+")re");
    std::smatch m;
    std::string::const_iterator from = r.code.cbegin();
    std::string found;
    while (std::regex_search(from, r.code.cend(), m, literal_id)) {
        found += m.str() + "\n";
        from = m.suffix().first;
    }
    INFO("write errors::<area>_<what> instead of the quoted id");
    CHECK(found == "");
    // The check itself sees a literal where there is one.
    CHECK(std::regex_search(std::string(R"(throw error("store.io", "x");)"), literal_id));
    CHECK_FALSE(std::regex_search(std::string("throw error(errors::store_io, \"x\");"), literal_id));
}

TEST_CASE("error catalogue: a catch site compares ids with constants, never quoted ids")
{
    // if (e.id() != "store.not_found") compiles with a typo and silently
    // never matches; e.id() != errors::store_not_found does not compile
    // with one.
    const scan_result& r = scan();
    REQUIRE(r.files >= 50);
    const std::regex literal_compare(
        R"re(id\(\)\s*[!=]=\s*(std::string(_view)?\()?"|"[a-z_]+\.[a-z_]+"\s*[!=]=\s*\w+\.id\(\))re");
    std::smatch m;
    std::string::const_iterator from = r.code.cbegin();
    std::string found;
    while (std::regex_search(from, r.code.cend(), m, literal_compare)) {
        found += m.str() + "\n";
        from = m.suffix().first;
    }
    INFO("compare with errors::<area>_<what> instead of the quoted id");
    CHECK(found == "");
    // The check itself sees a quoted comparison where there is one.
    CHECK(std::regex_search(std::string(R"(if (e.id() != "store.io") throw;)"), literal_compare));
    CHECK(std::regex_search(std::string(R"(e.id() == std::string("project.not_found"))"), literal_compare));
    CHECK_FALSE(std::regex_search(std::string("if (e.id() != errors::store_io) throw;"), literal_compare));
}

TEST_CASE("error catalogue: every entry is used by the sources")
{
    const scan_result& r = scan();
    REQUIRE(r.files >= 50);
    for (const error_entry& e : error_catalogue) {
        const std::string_view id = e.id.view();
        const bool used = r.ids.count(std::string(id)) == 1 || uses_constant(r.code, constant_name(id));
        CHECK_MESSAGE(used, "\"" << id << "\" is in model/error_catalogue.hpp but no source uses it (neither \"" << id
                                 << "\" nor errors::" << constant_name(id)
                                 << "): remove its entry and constant (model/error_ids.hpp) and regenerate "
                                    "docs/errors.md");
    }
}

TEST_CASE("error catalogue: the source scan reads literals, not comments")
{
    const lexed l = lex("// \"a.b\" in a comment\n"
                        "/* \"c.d\"\n */ throw error(\"e.f\", \"x\");\n"
                        "#include \"g.hpp\"\n"
                        "auto n = 1'000'000; char q = '\"'; auto r = R\"x(\"h.i\")x\"; f(\"j.k\");\n");
    std::vector<std::string> texts;
    for (const literal& lit : l.literals) {
        if (looks_like_id(lit.text)) texts.push_back(lit.text + ":" + std::to_string(lit.line));
    }
    CHECK(texts == std::vector<std::string>{"e.f:3", "j.k:5"});
    CHECK(l.code.find("a.b") == std::string::npos);
    CHECK(uses_constant(" throw error(errors::ingest_bad_csv, m);", "ingest_bad_csv"));
    CHECK_FALSE(uses_constant(" errors::ingest_bad_csv_x ", "ingest_bad_csv"));
}
