#include "runner/git_info.hpp"


#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/gitlab_ci.hpp"
#include "runner/process.hpp"

namespace perfgate::runner {

namespace {

// `git` answers in milliseconds; the limit only guards against a hung
// credential helper or network filesystem.
constexpr std::chrono::milliseconds git_timeout{10000};

std::optional<std::string> git_output(const std::filesystem::path& cwd, std::vector<std::string> args)
{
    spawn_options so;
    so.argv = {"git"};
    so.argv.insert(so.argv.end(), args.begin(), args.end());
    so.cwd = cwd;
    so.capture_stdout = true;
    try {
        auto res = run_process(so, git_timeout);
        if (!res.status.success()) return std::nullopt;
        std::string out = res.stdout_text;
        while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
        if (out.empty()) return std::nullopt;
        return out;
    } catch (const error&) {
        return std::nullopt; // no git installed: the run is still measurable
    }
}

// What git_info takes from the event payload: the pull request's number and
// its two sides' commits, from any event that carries a pull_request object;
// a push's `before`.
struct event_sides {
    std::optional<std::int64_t> pr;
    std::optional<std::string> head_sha, base_sha;
    std::optional<std::string> before;
};

event_sides read_event_sides(const std::string& path)
{
    const model::event_file file = model::read_event_file(path);
    if (file.state == model::event_file::outcome::unreadable) {
        throw error(errors::input_bad_event, fmt::format("{} (GITHUB_EVENT_PATH): cannot read the event file", path));
    }
    if (file.state == model::event_file::outcome::not_json) {
        throw error(errors::input_bad_event,
                    fmt::format("{} (GITHUB_EVENT_PATH): invalid JSON: {}", path, file.parse_error));
    }
    const nlohmann::json& doc = file.payload;
    event_sides ev;
    if (!doc.is_object()) return ev;
    if (auto before = doc.find("before"); before != doc.end() && before->is_string()) {
        ev.before = before->get<std::string>();
    }
    auto pr = doc.find("pull_request");
    if (pr != doc.end() && pr->is_object()) {
        if (auto n = pr->find("number"); n != pr->end() && n->is_number_integer()) ev.pr = n->get<std::int64_t>();
        auto sha_of = [&](const char* key) -> std::optional<std::string> {
            auto side = pr->find(key);
            if (side == pr->end() || !side->is_object()) return std::nullopt;
            auto sha = side->find("sha");
            if (sha == side->end() || !sha->is_string()) return std::nullopt;
            return sha->get<std::string>();
        };
        ev.head_sha = sha_of("head");
        ev.base_sha = sha_of("base");
    }
    return ev;
}

} // namespace

bool is_null_sha(const std::string& sha) { return !sha.empty() && sha.find_first_not_of('0') == std::string::npos; }

git_info resolve_git_info(const git_overrides& flags, const env_lookup& env, const std::filesystem::path& cwd)
{
    git_info out;
    out.source = "none";
    if (const auto gh = model::github_env::read(env); gh.actions) {
        out.source = "github";
        out.actions = true;
        out.event = gh.event_name;
        event_sides ev;
        if (!gh.event_path.empty()) ev = read_event_sides(gh.event_path);
        out.sha = ev.head_sha ? *ev.head_sha : gh.sha;
        out.branch = gh.head_ref.empty() ? gh.ref_name : gh.head_ref;
        out.pr = ev.pr;
        if (ev.pr) {
            out.base_sha = ev.base_sha.value_or("");
            out.pr_base_sha = out.base_sha;
            out.base_branch = gh.base_ref;
        } else if (gh.event_name == "push" && ev.before) {
            out.base_sha = *ev.before; // the push example's baseline build
        }
    } else if (const auto gl = model::gitlab_env::read(env); gl.ci) {
        // GitLab CI (docs/gitlab.md "The baseline"): a merge request
        // pipeline's base is the MR's merge base, a push's the commit before
        // it; CI_PIPELINE_SOURCE "push" is the push event as on GitHub.
        out.source = "gitlab";
        out.actions = true;
        out.event = gl.pipeline_source;
        out.sha = gl.mr_source_sha.empty() ? gl.commit_sha : gl.mr_source_sha;
        out.branch = !gl.mr_source_branch.empty() ? gl.mr_source_branch
                     : !gl.commit_branch.empty()  ? gl.commit_branch
                                                  : gl.commit_ref_name;
        if (!gl.mr_iid.empty()) {
            std::int64_t iid = 0;
            const auto* end = gl.mr_iid.data() + gl.mr_iid.size();
            if (auto [p, ec] = std::from_chars(gl.mr_iid.data(), end, iid); ec == std::errc() && p == end && iid > 0)
                out.pr = iid;
            out.base_sha = gl.mr_diff_base_sha;
            out.pr_base_sha = out.base_sha;
            out.base_branch = gl.mr_target_branch;
        } else if (gl.pipeline_source == "push") {
            out.base_sha = gl.commit_before_sha; // all zeros for a new branch: dropped below
        }
    }
    if (out.sha.empty() || out.branch.empty()) {
        // One git process for both: rev-parse applies --abbrev-ref to the
        // arguments after it, printing the SHA, then the branch ("HEAD" when
        // detached: no branch to report).
        if (auto text = git_output(cwd, {"rev-parse", "HEAD", "--abbrev-ref", "HEAD"})) {
            auto nl = text->find('\n');
            std::string sha = text->substr(0, nl);
            std::string branch = nl == std::string::npos ? "" : text->substr(nl + 1);
            if (out.sha.empty()) out.sha = sha;
            if (out.branch.empty() && branch != "HEAD") out.branch = branch;
            if (out.source == "none") out.source = "git";
        }
    }
    if (flags.sha || flags.branch || flags.pr || flags.base_sha || flags.base_branch) out.source = "flags";
    if (flags.sha) out.sha = *flags.sha;
    if (flags.branch) out.branch = *flags.branch;
    if (flags.pr) out.pr = *flags.pr;
    if (flags.base_sha) out.base_sha = *flags.base_sha;
    if (flags.base_branch) out.base_branch = *flags.base_branch;
    if (is_null_sha(out.base_sha)) out.base_sha.clear(); // a new branch: no commit before it
    return out;
}

mainline_side mainline_side_of(const git_info& git, std::optional<bool> asked)
{
    if (git.pr || (asked && !*asked)) return mainline_side::none;
    if (asked) return mainline_side::candidate;
    if (git.actions) return git.event == "push" ? mainline_side::candidate : mainline_side::none;
    const bool same_branch = git.base_branch.empty() || git.base_branch == git.branch;
    return same_branch ? mainline_side::baseline : mainline_side::none;
}

} // namespace perfgate::runner
