// `perfgate token create|list|revoke`: a project's API tokens (created with
// the project if new), listed without their secrets, revoked by id or secret.
#include <charconv>
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "capture/names.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "model/error.hpp"
#include "model/token_scope.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

const command_spec token_command{
    "token",
    "create|list|revoke --db PATH --project P [--label NAME] [--scope LIST] [--expires WHEN] [ID|TOKEN]",
    "create: makes an API token for a project (created if new) and prints it once\n"
    "on stdout. Only its SHA-256 is stored: keep the token in your CI secrets\n"
    "(e.g. PERFGATE_TOKEN). Its scopes say what it may do (docs/http-api.md, Token\n"
    "scopes): read; upload (runs on any branch, never the main line's: pull\n"
    "request jobs); baseline (upload, and its runs feed the baseline branch: push\n"
    "jobs); admin (webhooks, triage, acceptances). list: the project's tokens (id,\n"
    "label, created, last used, expires, scopes), never their secrets; a token made\n"
    "before scopes existed shows 'legacy' and keeps every power. revoke ID|TOKEN:\n"
    "deletes one token; the dashboard sessions signed in with it end at their next\n"
    "request, and its id is never given to another token.",
    {
        {"db", 0, true, false, "PATH|URI",
         "SQLite database file (created with its schema if missing) or postgresql:// URI"},
        {"project", 0, true, false, "P", "project of the tokens (created by create if new)"},
        {"label",
         0,
         true,
         false,
         "NAME",
         "create: label for the token, e.g. the CI that uses it (default 'default')",
         {},
         {"name"}},
        {"name", 0, true, false, "NAME", "the same as --label", {}, {"label"}},
        {"scope", 0, true, false, "LIST",
         "create: the token's scopes, comma-separated: read, upload, baseline, admin (e.g. upload,read for pull "
         "request jobs, baseline,read for pushes to the protected branch); default: all four, with a warning"},
        {"expires", 0, true, false, "WHEN",
         "create: the token opens nothing after WHEN: a duration from now (90d, 12h, 2w) or a UTC date (2027-01-31)"},
    },
};

// Unix seconds as "2026-11-26T21:59:11Z".
std::string utc(std::int64_t t)
{
    const std::time_t tt = static_cast<std::time_t>(t);
    std::tm tm{};
    if (::gmtime_r(&tt, &tm) == nullptr) return std::to_string(t);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
}

// --expires: "N" + h|d|w from now, or YYYY-MM-DD (00:00 UTC of that day).
std::int64_t parse_expires(const std::string& text, std::int64_t now)
{
    const auto bad = [&] {
        return error(errors::usage_bad_value,
                     fmt::format("--expires '{}': expected a duration from now (90d, 12h, 2w) or a UTC date "
                                 "YYYY-MM-DD in the future",
                                 text.substr(0, 64)));
    };
    if (text.size() == 10 && text[4] == '-' && text[7] == '-') {
        int y = 0, m = 0, d = 0;
        const auto num = [&](std::size_t at, std::size_t len, int& out) {
            const auto [p, ec] = std::from_chars(text.data() + at, text.data() + at + len, out);
            return ec == std::errc{} && p == text.data() + at + len;
        };
        if (!num(0, 4, y) || !num(5, 2, m) || !num(8, 2, d) || m < 1 || m > 12 || d < 1 || d > 31) throw bad();
        std::tm tm{};
        tm.tm_year = y - 1900;
        tm.tm_mon = m - 1;
        tm.tm_mday = d;
        const std::time_t t = ::timegm(&tm);
        if (tm.tm_mday != d || tm.tm_mon != m - 1 || t <= now) throw bad(); // 2027-02-31, or the past
        return static_cast<std::int64_t>(t);
    }
    if (text.size() < 2) throw bad();
    std::int64_t n = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size() - 1, n);
    if (ec != std::errc{} || p != text.data() + text.size() - 1 || n <= 0 || n > 100000) throw bad();
    std::int64_t unit = 0;
    switch (text.back()) {
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default: throw bad();
    }
    return now + n * unit;
}

// perfgate token create: a new token, shown once on stdout.
int token_create(const parsed_args& parsed, const std::string& db_path, const std::string& project, std::int64_t now)
{
    const std::string name = parsed.get("label").value_or(parsed.get("name").value_or("default"));
    capture::validate_name("label", name);
    std::optional<std::int64_t> expires;
    if (const auto e = parsed.get("expires")) expires = parse_expires(*e, now);
    model::scope_set scopes;
    if (const auto list = parsed.get("scope")) {
        const auto given = model::scope_set::parse(*list);
        if (!given) {
            throw error(errors::usage_bad_value,
                        fmt::format("--scope '{}': expected a comma-separated list of read, upload, baseline "
                                    "and admin, each at most once (e.g. upload,read)",
                                    list->substr(0, 64)));
        }
        scopes = *given;
    } else {
        for (const auto s : {model::scope::read, model::scope::upload, model::scope::baseline, model::scope::admin})
            scopes.add(s);
    }
    store::store db(db_path);
    service::service service(db);
    const std::string token = service.tokens().create(project, name, expires, scopes);
    std::cout << token << std::endl;
    std::cerr << fmt::format(
        "perfgate token: created token '{}' for project '{}' in {} with scopes {}{}; it is shown only once\n", name,
        project, db.location(), scopes.to_string(),
        expires ? fmt::format(", expiring {}", utc(*expires)) : std::string());
    if (!parsed.has("scope")) {
        std::cerr << "perfgate token: warning: no --scope: this token has every scope; give pull request jobs "
                     "--scope upload,read and push jobs --scope baseline,read\n";
    }
    return exit_pass;
}

// perfgate token list: one line per token, by columns.
int token_list(service::service& service, const std::string& project, std::int64_t now)
{
    // Labels are names (capture::validate_name): no spaces or controls, so
    // the columns split on whitespace.
    std::cout << "id\tlabel\tcreated\tlast_used\texpires\tscopes\n";
    std::size_t legacy = 0;
    for (const auto& t : service.tokens().list(project)) {
        if (t.scopes.is_legacy()) ++legacy;
        std::cout << fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", t.id, t.name, utc(t.created_at),
                                 t.last_used_at ? utc(*t.last_used_at) : "never",
                                 !t.expires_at          ? "never"
                                 : *t.expires_at <= now ? utc(*t.expires_at) + " (expired)"
                                                        : utc(*t.expires_at),
                                 t.scopes.is_legacy() ? "legacy(all)" : t.scopes.to_string());
    }
    if (legacy > 0) {
        std::cerr << fmt::format("perfgate token: warning: {} token(s) predate scopes and keep every power "
                                 "(scopes legacy(all)): replace them with scoped tokens (--scope) and revoke "
                                 "them\n",
                                 legacy);
    }
    return exit_pass;
}

} // namespace

const command_spec& token_spec() { return token_command; }

int cmd_token(const argv_t& args)
{
    const auto parsed = parse_args(token_command, args);
    if (!parsed) return exit_pass;
    const auto& pos = parsed->positional();
    const std::string sub = pos.empty() ? "" : pos.front();
    const bool create = sub == "create" && pos.size() == 1;
    const bool list = sub == "list" && pos.size() == 1;
    const bool revoke = sub == "revoke" && pos.size() == 2;
    if (!create && !list && !revoke) {
        throw error(errors::usage_bad_subcommand,
                    "perfgate token: expected 'create', 'list' or 'revoke ID|TOKEN' with --db PATH --project P");
    }
    if (!create && (parsed->has("label") || parsed->has("name") || parsed->has("expires") || parsed->has("scope"))) {
        throw error(errors::usage_conflict,
                    fmt::format("perfgate token {}: --label, --scope and --expires are for create", sub));
    }
    const std::string db_path = parsed->required("db");
    const std::string project = parsed->required("project");
    const auto now = static_cast<std::int64_t>(std::time(nullptr));

    if (create) return token_create(*parsed, db_path, project, now);
    store::store db(db_path);
    service::service service(db);
    if (list) return token_list(service, project, now);
    const auto id = service.tokens().revoke(project, pos[1]);
    std::cerr << fmt::format("perfgate token: revoked token {} of project '{}' in {}\n", id, project, db.location());
    return exit_pass;
}

} // namespace perfgate::cli
