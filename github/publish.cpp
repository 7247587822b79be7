#include "github/publish.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <ostream>
#include <random>

#include <fmt/format.h>

#include "github/comments.hpp"
#include "github/json_fields.hpp"
#include "model/error.hpp"
#include "model/exit_code.hpp"
#include "report/render.hpp"

namespace perfgate::github {

using detail::int_at;
using nlohmann::json;

namespace {

// GitHub's limits (docs.github.com/rest): an issue comment body holds at most
// 65,536 characters (a status description's 140: comments.hpp).
constexpr std::size_t comment_limit = 65536;
// A job summary may hold 1 MiB per step (docs.github.com, "Adding a job summary").
constexpr std::size_t summary_limit = 1024 * 1024;
// Annotations per kind: the UI shows at most 10 per step, so more is noise.
constexpr std::size_t max_annotations = 10;

// GitHub's error text: "message" plus any per-field "errors[].message".
} // namespace

namespace {

// "owner/name" as GitHub allows them: letters, digits, '-', '_', '.'; neither
// part "." or "..".
bool is_repository_name(std::string_view repo)
{
    const auto slash = repo.find('/');
    if (slash == std::string_view::npos) return false;
    const auto part_ok = [](std::string_view p) {
        return !p.empty() && p != "." && p != ".." && p.size() <= 100 && std::all_of(p.begin(), p.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        });
    };
    return part_ok(repo.substr(0, slash)) && part_ok(repo.substr(slash + 1));
}

} // namespace

event_source event_source_for(const github_env& env, const github_options& opt)
{
    event_source src;
    src.path = opt.event_path.value_or(env.event_path);
    src.saved = opt.event_path.has_value();
    src.name = opt.event_name.value_or(env.event_name);
    src.repository = env.repository;
    src.api_url = env.api_url;
    src.fallback_sha = env.sha;
    return src;
}

bool is_comment_mode(std::string_view mode)
{
    return std::find(std::begin(comment_modes), std::end(comment_modes), mode) != std::end(comment_modes);
}

std::string comment_marker(std::string_view context)
{
    // An HTML comment: invisible in the rendered PR, and "--" cannot occur in
    // one, so the context is sanitised: a run of '-' becomes one, '>' '_'.
    std::string safe;
    for (char ch : context) {
        if (ch == '-' && !safe.empty() && safe.back() == '-') continue;
        safe += ch == '>' ? '_' : ch;
    }
    return fmt::format("<!-- perfgate-comment: {} -->", safe);
}

std::string escape_command_data(std::string_view s)
{
    std::string out;
    for (char c : s) {
        if (c == '%') out += "%25";
        else if (c == '\r') out += "%0D";
        else if (c == '\n') out += "%0A";
        else out += c;
    }
    return out;
}

std::string escape_command_property(std::string_view s)
{
    std::string out;
    for (char c : escape_command_data(s)) {
        if (c == ':') out += "%3A";
        else if (c == ',') out += "%2C";
        else out += c;
    }
    return out;
}

std::string_view status_state(int exit_code)
{
    switch (exit_code) {
    case exit_pass: return "success";
    case exit_regression:
    case exit_inconclusive: return "failure";
    default: return "error";
    }
}

namespace {

class publisher {
public:
    publisher(const gate::report& r, int exit_code, const github_options& opt, std::ostream& log)
        : report_(r), exit_code_(exit_code), opt_(opt), log_(log), env_(github_env::from_environment())
    {}

    github_result run()
    {
        if (!is_comment_mode(opt_.comment)) {
            throw error(errors::usage_bad_value,
                        fmt::format("--comment: expected always, on-change, on-regression or never, "
                                    "got '{}'",
                                    opt_.comment));
        }
        // Local files first: whatever happens on the network, the verdict,
        // the summary and the outputs are already there.
        guarded("write the job summary", [&] { write_summary(); });
        guarded("write the step outputs", [&] { write_outputs(); });
        annotate();

        std::vector<std::string> missing;
        if (env_.api_url.empty()) missing.emplace_back("GITHUB_API_URL");
        if (env_.repository.empty()) missing.emplace_back("GITHUB_REPOSITORY");
        if (env_.token.empty()) missing.emplace_back("GITHUB_TOKEN");
        const event_source source = event_source_for(env_, opt_);
        if (source.path.empty()) missing.emplace_back("GITHUB_EVENT_PATH");
        if (source.name.empty()) missing.emplace_back("GITHUB_EVENT_NAME");
        if (missing.empty() && !is_repository_name(env_.repository)) {
            // It goes into every API path: owner/name, GitHub's characters only.
            std::string msg = fmt::format(
                "GITHUB_REPOSITORY {} is not owner/name: nothing posted to GitHub",
                json(env_.repository.substr(0, 100)).dump(-1, ' ', true, json::error_handler_t::replace));
            if (opt_.require_environment) throw error(errors::input_github_env, msg);
            warn(msg);
            return std::move(result_);
        }
        if (!missing.empty()) {
            std::string msg = fmt::format("{} not set: cannot post the PR comment and commit status (run inside "
                                          "GitHub Actions and pass the token through env: GITHUB_TOKEN)",
                                          fmt::join(missing, ", "));
            if (opt_.require_environment) throw error(errors::input_github_env, msg);
            warn(msg);
            return std::move(result_);
        }

        event_target target;
        try {
            target = read_event(source);
        } catch (const error& e) {
            if (opt_.require_environment) throw;
            warn(e.what());
            return std::move(result_);
        }
        for (const auto& w : target.warnings) warn(w);
        api_.emplace(env_.api_url, env_.token, opt_.retry);

        if (opt_.comment != "never") {
            if (target.pr_number) {
                guarded("post the PR comment", [&] { post_comment(*target.pr_number); });
            } else {
                log_ << "perfgate: no pull request in this event; no comment posted\n";
            }
        }
        if (target.head_sha.empty()) {
            // An event that names no commit has said why above.
            if (target.warnings.empty()) warn("no commit SHA in the event or GITHUB_SHA: no commit status posted");
        } else {
            guarded("post the commit status", [&] { post_status(target.head_sha); });
        }
        return std::move(result_);
    }

private:
    template <class F>
    void guarded(std::string_view what, F&& f)
    {
        try {
            f();
        } catch (const std::exception& e) {
            warn(fmt::format("could not {}: {}", what, e.what()));
        }
    }

    void warn(const std::string& msg)
    {
        result_.warnings.push_back(msg);
        log_ << "::warning title=perfgate::" << escape_command_data(msg) << "\n";
    }

    std::string link_target() const { return opt_.comparison_url.value_or(env_.run_url()); }

    std::string render(std::string marker, std::size_t limit) const
    {
        report::markdown_options mo;
        mo.marker = std::move(marker);
        mo.run_url = env_.run_url();
        mo.comparison_url = opt_.comparison_url.value_or("");
        if (!env_.server_url.empty() && !env_.repository.empty())
            mo.repository_url = fmt::format("{}/{}", env_.server_url, env_.repository);
        // The run page lists its artifacts; they are uploaded after this
        // step, under the name the workflow gave (ci/action.yml).
        if (opt_.artifact_name && !mo.run_url.empty()) {
            mo.artifacts_url = mo.run_url + "#artifacts";
            mo.artifact_name = *opt_.artifact_name;
        }
        mo.max_chars = limit;
        return report::render_markdown(report_, mo);
    }

    void write_summary()
    {
        if (env_.step_summary.empty()) return;
        std::ofstream out(env_.step_summary, std::ios::app);
        if (!out)
            throw error(errors::io_write,
                        fmt::format("{}: cannot open GITHUB_STEP_SUMMARY for appending", env_.step_summary));
        out << render({}, summary_limit) << "\n";
        if (!out.flush()) throw error(errors::io_write, fmt::format("{}: write failed", env_.step_summary));
    }

    void write_outputs()
    {
        if (env_.output.empty()) return;
        std::ofstream out(env_.output, std::ios::app);
        if (!out)
            throw error(errors::io_write, fmt::format("{}: cannot open GITHUB_OUTPUT for appending", env_.output));
        // name<<DELIMITER ... DELIMITER, multi-line safe as long as the
        // delimiter is not in the value (docs.github.com, "Multiline strings").
        std::random_device rd;
        auto write = [&](std::string_view name, const std::string& value) {
            std::string delim;
            do delim = fmt::format("ghadelimiter_{:016x}", (std::uint64_t{rd()} << 32) | rd());
            while (value.find(delim) != std::string::npos);
            out << name << "<<" << delim << "\n" << value << "\n" << delim << "\n";
        };
        write("verdict", std::string(gate::to_string(report_.result)));
        write("report-path", opt_.report_path);
        write("comparison-url", opt_.comparison_url.value_or(""));
        write("exit-code", std::to_string(exit_code_));
        if (!out.flush()) throw error(errors::io_write, fmt::format("{}: write failed", env_.output));
    }

    void annotate()
    {
        std::size_t errors = 0, total = 0;
        for (const auto& b : report_.benchmarks) {
            for (const auto& c : b.counters) {
                if (!c.gated || c.state != gate::status::regression) continue;
                ++total;
                if (errors == max_annotations) continue;
                ++errors;
                std::string delta = c.delta_pct ? fmt::format("{:+.2f}%", *c.delta_pct) : "n/a";
                std::string p = c.p_adjusted ? fmt::format(", p_adj {:.3g}", *c.p_adjusted) : "";
                log_ << "::error title=" << escape_command_property(fmt::format("perfgate: {} regressed", b.name))
                     << "::"
                     << escape_command_data(fmt::format("{}/{}: median {} (threshold {}%){}", b.name, c.name, delta,
                                                        c.threshold_pct, p))
                     << "\n";
            }
        }
        if (total > errors)
            log_ << fmt::format("::error title=perfgate::... and {} more regressions\n", total - errors);
        std::size_t shown = 0;
        for (const auto& w : report_.warnings) {
            if (shown == max_annotations) {
                log_ << fmt::format("::warning title=perfgate::... and {} more warnings\n",
                                    report_.warnings.size() - shown);
                break;
            }
            ++shown;
            log_ << "::warning title=perfgate::" << escape_command_data(w) << "\n";
        }
    }

    bool has_change() const
    {
        return report_.count(gate::status::regression) + report_.count(gate::status::improvement) > 0;
    }

    // The login our comments are written by (detail::own_login).
    std::string own_login() { return detail::own_login(*api_, env_.token, opt_.comment_author); }

    // Ours: carries the marker and was written by our login
    // (detail::find_own_comment).
    std::optional<std::int64_t> find_comment(std::int64_t pr, const std::string& marker)
    {
        auto found = detail::find_own_comment(*api_, env_.repository, pr, marker, self_login_);
        return found ? std::optional<std::int64_t>(found->first) : std::nullopt;
    }

    json update_comment(std::int64_t id, const json& payload)
    {
        return api_->call("PATCH", fmt::format("/repos/{}/issues/comments/{}", env_.repository, id), &payload, nullptr,
                          "pull-requests: write");
    }

    // Creating a comment is not idempotent: a POST whose answer was lost (a
    // timeout, a dropped connection, a 5xx from a proxy) may have created it.
    // So it is never simply sent again: the comments are listed first, and
    // one of ours with the marker (the lost POST's) is updated instead, and
    // its id stored in `landed`.
    json create_comment(std::int64_t pr, const std::string& marker, const json& payload,
                        std::optional<std::int64_t>& landed)
    {
        const retry_policy& policy = api_->policy();
        for (int attempt = 1;; ++attempt) {
            try {
                return api_->call("POST", fmt::format("/repos/{}/issues/{}/comments", env_.repository, pr), &payload,
                                  nullptr, "pull-requests: write", replay::forbidden);
            } catch (const error& e) {
                const bool unanswered = e.id() == errors::github_unreachable || e.id() == errors::github_server_error;
                if (!unanswered || attempt >= policy.max_attempts) throw;
                log_ << fmt::format("perfgate: the comment POST got no answer ({}); looking for it before posting "
                                    "again\n",
                                    e.what());
                policy.sleep(std::chrono::milliseconds(policy.backoff.count() << (attempt - 1)));
            }
            if ((landed = find_comment(pr, marker))) return update_comment(*landed, payload);
        }
    }

    void post_comment(std::int64_t pr)
    {
        const std::string marker = comment_marker(opt_.context);
        self_login_ = own_login();
        std::optional<std::int64_t> existing = find_comment(pr, marker);
        bool wanted = opt_.comment == "always" || (opt_.comment == "on-change" && has_change()) ||
                      (opt_.comment == "on-regression" && report_.result == gate::verdict::fail);
        // An existing comment is always brought up to date, so it never shows
        // a stale regression after the fix.
        if (!wanted && !existing) {
            log_ << fmt::format("perfgate: --comment {}: nothing to report, no comment posted\n", opt_.comment);
            return;
        }
        std::string body = render(marker, comment_limit);
        if (body.find(marker) == std::string::npos) body = marker + "\n" + body;
        if (detail::utf8_length(body) > comment_limit) {
            // The renderer keeps to the limit; this guards the API contract anyway.
            const std::string note = "\n\n_… truncated to fit GitHub's comment limit._\n";
            body = detail::utf8_truncate(body, comment_limit - note.size()) + note;
        }
        json payload = {{"body", body}};
        json res;
        if (existing) {
            res = update_comment(*existing, payload);
            log_ << fmt::format("perfgate: updated PR #{} comment {}\n", pr, *existing);
        } else {
            res = create_comment(pr, marker, payload, existing);
            if (existing)
                log_ << fmt::format("perfgate: updated PR #{} comment {} (the lost POST had landed)\n", pr, *existing);
            else log_ << fmt::format("perfgate: commented on PR #{}\n", pr);
        }
        result_.comment_posted = true;
        result_.comment_id = int_at(res, "id");
    }

    std::string description() const
    {
        std::string d;
        if (exit_code_ == exit_usage || exit_code_ == exit_measurement) {
            d = fmt::format("perfgate could not decide (exit {}): see the job log", exit_code_);
        } else {
            // A regression that does not fail the check (fail-on-regression
            // false) must not read "fail" beside a green mark.
            const std::string verdict = report_.result == gate::verdict::fail && exit_code_ == exit_pass
                                            ? "regression (not failing: fail-on-regression false)"
                                            : std::string(gate::to_string(report_.result));
            d = fmt::format("{}: {} regressed, {} improved, {} unchanged, {} inconclusive", verdict,
                            report_.count(gate::status::regression), report_.count(gate::status::improvement),
                            report_.count(gate::status::unchanged),
                            report_.count(gate::status::inconclusive) + report_.count(gate::status::insufficient));
        }
        return detail::status_description(d);
    }

    void post_status(const std::string& sha)
    {
        json payload = {{"state", status_state(exit_code_)}, {"context", opt_.context}, {"description", description()}};
        if (std::string t = link_target(); !t.empty()) payload["target_url"] = t;
        api_->call("POST", fmt::format("/repos/{}/statuses/{}", env_.repository, sha), &payload, nullptr,
                   "statuses: write");
        result_.status_posted = true;
        log_ << fmt::format("perfgate: commit status '{}' {} on {}\n", opt_.context, status_state(exit_code_), sha);
    }

    const gate::report& report_;
    int exit_code_;
    const github_options& opt_;
    std::ostream& log_;
    github_env env_;
    std::optional<github_api> api_;
    std::string self_login_;
    github_result result_;
};

} // namespace

github_result publish_to_github(const gate::report& r, int exit_code, const github_options& opt, std::ostream& log)
{
    return publisher(r, exit_code, opt, log).run();
}

} // namespace perfgate::github
