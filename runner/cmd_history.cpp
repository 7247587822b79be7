// `perfgate history`: a counter's trend over stored runs, from a server or a
// local database, as a text table, JSON ({points:[...]}, as the server) or CSV.
#include <cstdlib>
#include <ctime>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/service.hpp"
#include "runner/cli.hpp"
#include "runner/commands.hpp"
#include "runner/http_client.hpp"
#include "schema/store.hpp"
#include "server/router.hpp"
#include "stats/error.hpp"

namespace perfgate::runner {

namespace {

const std::vector<option_spec>& history_options()
{
    static const std::vector<option_spec> specs = {
        {"server", 0, true, false, "URL", "perfgate server, e.g. http://127.0.0.1:8080"},
        {"db", 0, true, false, "PATH", "local SQLite database instead of a server"},
        {"project", 0, true, false, "P", "project"},
        {"benchmark", 0, true, false, "B", "benchmark name ('default' for single-benchmark runs)"},
        {"counter", 0, true, false, "C", "counter as perf names it, e.g. task-clock"},
        {"branch", 0, true, false, "BR", "only runs of this branch"},
        {"testbed", 0, true, false, "T", "only runs on this testbed (name or fingerprint)"},
        {"since", 0, true, false, "WHEN", "unix seconds or 2026-11-22[T02:11:05Z] (server mode)"},
        {"limit", 0, true, false, "N", "the most recent N points (default 100)"},
        {"token", 0, true, false, "T", "API token for --server (default: $PERFGATE_TOKEN)"},
        {"format", 0, true, false, "text|json|csv", "output format (default text)"},
        {"help", 'h', false, false, "", "show this help"},
    };
    return specs;
}

constexpr std::string_view description =
    "Prints one point per stored run (oldest first): median, mean, stddev and CoV of\n"
    "the counter, from per-run summaries.";

std::string iso_time(std::int64_t unix_seconds)
{
    std::time_t t = static_cast<std::time_t>(unix_seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string render_history_text(const std::vector<store::history_point>& points)
{
    if (points.empty()) return "no runs match\n";
    std::string out = fmt::format("{:>8}  {:<20}  {:<12}  {:<20}  {:>4}  {:>14}  {:>14}  {:>7}\n", "run", "created (UTC)",
                                  "git sha", "branch", "n", "median", "mean", "cov");
    for (const auto& p : points) {
        out += fmt::format("{:>8}  {:<20}  {:<12}  {:<20}  {:>4}  {:>14.6g}  {:>14.6g}  {:>7}\n", p.run_id,
                           iso_time(p.created_at), p.git_sha.substr(0, 12), p.branch.substr(0, 20), p.n, p.median,
                           p.mean, p.cov ? fmt::format("{:.2f}%", *p.cov * 100) : std::string("-"));
    }
    return out;
}

std::vector<store::history_point> from_server(const std::string& base, const parsed_args& a, const std::string& project)
{
    std::string url = fmt::format("{}/api/v1/projects/{}/history?benchmark={}&counter={}", base, url_encode(project),
                                  url_encode(*a.get("benchmark")), url_encode(*a.get("counter")));
    for (const char* key : {"branch", "testbed", "since", "limit"}) {
        if (auto v = a.get(key)) url += fmt::format("&{}={}", key, url_encode(*v));
    }
    http_request req;
    req.url = url;
    std::optional<std::string> token = a.get("token");
    if (!token) {
        if (const char* env = std::getenv("PERFGATE_TOKEN"); env && *env) token = env;
    }
    if (token) req.headers.emplace_back("Authorization", "Bearer " + *token);
    const http_response res = http_send(req);
    if (res.status != 200) throw server::error_from_response(static_cast<unsigned>(res.status), res.body, url);
    try {
        return server::history_from_json(nlohmann::json::parse(res.body));
    } catch (const nlohmann::json::exception& e) {
        throw error("server.error", fmt::format("{}: response is not JSON: {}", url, e.what()));
    }
}

} // namespace

int cmd_history(const argv_t& args)
{
    const auto& specs = history_options();
    auto parsed = parse_args("history", args, specs);
    if (parsed.has("help")) {
        std::cout << usage_text("history",
                                "(--server URL | --db PATH) --project P --benchmark B --counter C [--branch BR] "
                                "[--format text|json|csv]",
                                description, specs);
        return exit_pass;
    }
    if (!parsed.positional().empty()) {
        throw error("usage.unexpected_argument",
                    fmt::format("perfgate history: unexpected argument '{}'", parsed.positional().front()));
    }
    if (parsed.has("server") == parsed.has("db")) {
        throw error("usage.missing_option", "perfgate history: give exactly one of --server URL or --db PATH");
    }
    for (const char* required : {"project", "benchmark", "counter"}) {
        if (!parsed.get(required)) {
            throw error("usage.missing_option", fmt::format("perfgate history: --{} is required", required));
        }
    }
    const std::string format = parsed.get("format").value_or("text");
    if (format != "text" && format != "json" && format != "csv") {
        throw error("usage.bad_value", fmt::format("--format: expected text, json or csv, got '{}'", format));
    }
    const std::string project = *parsed.get("project");

    std::vector<store::history_point> points;
    if (auto url = parsed.get("server")) {
        std::string base = *url;
        while (!base.empty() && base.back() == '/') base.pop_back();
        points = from_server(base, parsed, project);
    } else {
        store::store db(*parsed.get("db"));
        if (!db.project_exists(project)) {
            throw error("input.unknown_project", fmt::format("{}: no project '{}'", *parsed.get("db"), project));
        }
        store::history_query q;
        q.project = project;
        q.benchmark = *parsed.get("benchmark");
        q.counter = *parsed.get("counter");
        q.branch = parsed.get("branch");
        q.testbed = parsed.get("testbed");
        if (auto v = parsed.get_int("since", 0, 1LL << 40)) q.since = *v;
        if (auto v = parsed.get_int("limit", 1, static_cast<long long>(server::max_history_limit))) {
            q.limit = static_cast<std::size_t>(*v);
        }
        gate::service service(db);
        points = service.history(q);
    }

    if (format == "json") std::cout << server::history_to_json(points).dump(2) << '\n';
    else if (format == "csv") std::cout << server::history_to_csv(points);
    else std::cout << render_history_text(points);
    std::cout.flush();
    return exit_pass;
}

} // namespace perfgate::runner
