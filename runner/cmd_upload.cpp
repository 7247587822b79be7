// `perfgate upload`: stores an existing `perf stat -x,` capture as a run, on a
// server (POST /api/v1/projects/{p}/runs) or in a local database, through the
// same validation and gate service either way.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/service.hpp"
#include "runner/cli.hpp"
#include "runner/commands.hpp"
#include "runner/git_info.hpp"
#include "runner/http_client.hpp"
#include "runner/testbed.hpp"
#include "schema/store.hpp"
#include "server/router.hpp"
#include "stats/error.hpp"

namespace perfgate::runner {

namespace {

const std::vector<option_spec>& upload_options()
{
    static const std::vector<option_spec> specs = {
        {"server", 0, true, false, "URL", "perfgate server, e.g. http://127.0.0.1:8080"},
        {"db", 0, true, false, "PATH", "local SQLite database instead of a server"},
        {"project", 0, true, false, "P", "project"},
        {"token", 0, true, false, "T", "API token for --server (default: $PERFGATE_TOKEN)"},
        {"role", 0, true, false, "baseline|candidate", "which side of a comparison this run is"},
        {"benchmark", 0, true, false, "NAME", "benchmark name (default 'default')"},
        {"git-sha", 0, true, false, "SHA", "commit measured (default: from GitHub Actions or git)"},
        {"branch", 0, true, false, "BR", "branch measured (default: from GitHub Actions or git)"},
        {"pr", 0, true, false, "N", "pull request number"},
        {"testbed", 0, true, false, "NAME", "testbed name (default: hostname); CPU/kernel detected here"},
        {"backend", 0, true, false, "perf|callgrind|rusage", "how the capture was measured (default perf)"},
        {"format", 0, true, false, "text|json", "output format (default text)"},
        {"help", 'h', false, false, "", "show this help"},
    };
    return specs;
}

constexpr std::string_view description =
    "Uploads perf stat CSV output (one file; several runs as -o FILE --append blocks)\n"
    "as one run. Prints the run id; use it with POST .../compare or perfgate history.";

std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error("input.unreadable", fmt::format("{}: cannot open for reading", path));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw error("input.unreadable", fmt::format("{}: read error", path));
    return text.str();
}

nlohmann::json request_json(const gate::ingest_request& in)
{
    nlohmann::json j = {
        {"benchmark", in.benchmark},
        {"role", in.role},
        {"git_sha", in.git_sha},
        {"branch", in.branch},
        {"backend", in.backend},
        {"testbed",
         {{"name", in.testbed.name},
          {"cpu", in.testbed.cpu},
          {"kernel", in.testbed.kernel},
          {"fingerprint", in.testbed.fingerprint},
          {"cores", in.testbed.cores}}},
        {"perf_csv", in.perf_csv},
    };
    if (in.pr) j["pr"] = *in.pr;
    return j;
}

} // namespace

int cmd_upload(const argv_t& args)
{
    const auto& specs = upload_options();
    auto parsed = parse_args("upload", args, specs);
    if (parsed.has("help")) {
        std::cout << usage_text("upload",
                                "(--server URL [--token T] | --db PATH) --project P --role baseline|candidate "
                                "[--benchmark NAME] [--git-sha SHA] [--branch BR] FILE",
                                description, specs);
        return exit_pass;
    }
    if (parsed.positional().size() != 1) {
        throw error("usage.missing_argument", "perfgate upload: expected exactly one FILE (perf stat -x, output)");
    }
    if (parsed.has("server") == parsed.has("db")) {
        throw error("usage.missing_option", "perfgate upload: give exactly one of --server URL or --db PATH");
    }
    for (const char* required : {"project", "role"}) {
        if (!parsed.get(required)) throw error("usage.missing_option", fmt::format("perfgate upload: --{} is required", required));
    }
    const std::string format = parsed.get("format").value_or("text");
    if (format != "text" && format != "json") {
        throw error("usage.bad_value", fmt::format("--format: expected text or json, got '{}'", format));
    }
    const std::string& path = parsed.positional().front();

    git_overrides flags;
    flags.sha = parsed.get("git-sha");
    flags.branch = parsed.get("branch");
    flags.pr = parsed.get_int("pr", 1, 1LL << 40);
    const git_info git = resolve_git_info(flags, process_env(), std::filesystem::current_path());
    if (git.sha.empty() || git.branch.empty()) {
        throw error("usage.missing_option",
                    "perfgate upload: no git commit/branch found here; pass --git-sha and --branch");
    }

    gate::ingest_request in;
    in.project = *parsed.get("project");
    in.benchmark = parsed.get("benchmark").value_or("default");
    in.role = *parsed.get("role");
    in.git_sha = git.sha;
    in.branch = git.branch;
    in.pr = git.pr;
    in.testbed = detect_testbed(parsed.get("testbed"));
    in.backend = parsed.get("backend").value_or("perf");
    in.perf_csv = read_file(path);
    in.source = path;

    gate::ingest_result result;
    if (auto base = parsed.get("server")) {
        std::string url = *base;
        while (!url.empty() && url.back() == '/') url.pop_back();
        url += fmt::format("/api/v1/projects/{}/runs", url_encode(in.project));
        http_request req;
        req.method = "POST";
        req.url = url;
        req.headers.emplace_back("Content-Type", "application/json");
        std::optional<std::string> token = parsed.get("token");
        if (!token) {
            if (const char* env = std::getenv("PERFGATE_TOKEN"); env && *env) token = env;
        }
        if (token) req.headers.emplace_back("Authorization", "Bearer " + *token);
        req.body = request_json(in).dump();
        const http_response res = http_send(req);
        if (res.status != 201) throw server::error_from_response(static_cast<unsigned>(res.status), res.body, url);
        try {
            const auto j = nlohmann::json::parse(res.body);
            result.run_id = j.at("run_id").get<std::int64_t>();
            result.samples = j.at("samples").get<std::size_t>();
            result.counters = j.at("counters").get<std::size_t>();
            result.warnings = j.at("warnings").get<std::vector<std::string>>();
        } catch (const nlohmann::json::exception& e) {
            throw error("server.error", fmt::format("{}: unexpected response: {}", url, e.what()));
        }
    } else {
        server::validate_name("project", in.project);
        server::validate_name("benchmark", in.benchmark);
        server::validate_name("branch", in.branch);
        store::store db(*parsed.get("db"));
        db.ensure_project(in.project);
        gate::service service(db);
        result = service.ingest(in);
    }

    if (format == "json") {
        std::cout << nlohmann::json{{"run_id", result.run_id},
                                    {"samples", result.samples},
                                    {"counters", result.counters},
                                    {"warnings", result.warnings}}
                         .dump(2)
                  << '\n';
    } else {
        std::cout << fmt::format("run {}: {} samples of {} counters ({} {} {} @ {})\n", result.run_id, result.samples,
                                 result.counters, in.project, in.benchmark, in.role, in.git_sha.substr(0, 12));
        for (const auto& w : result.warnings) std::cerr << "perfgate upload: warning: " << w << '\n';
    }
    return exit_pass;
}

} // namespace perfgate::runner
