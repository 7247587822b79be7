#include "model/github_actions.hpp"

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

namespace perfgate::model {

env_lookup process_env()
{
    return [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        if (!v || !*v) return std::nullopt;
        return std::string(v);
    };
}

github_env github_env::read(const env_lookup& env)
{
    auto get = [&](const char* name) { return env(name).value_or(""); };
    github_env e;
    e.actions = get("GITHUB_ACTIONS") == "true";
    e.api_url = get("GITHUB_API_URL");
    e.server_url = get("GITHUB_SERVER_URL");
    e.repository = get("GITHUB_REPOSITORY");
    e.event_name = get("GITHUB_EVENT_NAME");
    e.event_path = get("GITHUB_EVENT_PATH");
    e.token = get("GITHUB_TOKEN");
    e.sha = get("GITHUB_SHA");
    e.ref_name = get("GITHUB_REF_NAME");
    e.head_ref = get("GITHUB_HEAD_REF");
    e.base_ref = get("GITHUB_BASE_REF");
    e.run_id = get("GITHUB_RUN_ID");
    e.step_summary = get("GITHUB_STEP_SUMMARY");
    e.output = get("GITHUB_OUTPUT");
    while (e.api_url.ends_with('/')) e.api_url.pop_back();
    return e;
}

github_env github_env::from_environment() { return read(process_env()); }

std::string github_env::run_url() const
{
    if (server_url.empty() || repository.empty() || run_id.empty()) return {};
    return fmt::format("{}/{}/actions/runs/{}", server_url, repository, run_id);
}

event_file read_event_file(const std::string& path)
{
    event_file f;
    std::ifstream in(path);
    if (!in) {
        f.state = event_file::outcome::unreadable;
        return f;
    }
    try {
        f.payload = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        f.state = event_file::outcome::not_json;
        f.parse_error = e.what();
    }
    return f;
}

} // namespace perfgate::model
