// perfgate run: measure baseline and candidate commands, store the runs
// (locally in SQLite or on a perfgate server), gate them and print the verdict.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "gate/service.hpp"
#include "runner/check_env.hpp"
#include "runner/cli.hpp"
#include "runner/commands.hpp"
#include "runner/config.hpp"
#include "runner/git_info.hpp"
#include "runner/github.hpp"
#include "runner/http_client.hpp"
#include "runner/measure.hpp"
#include "runner/output.hpp"
#include "runner/process.hpp"
#include "runner/testbed.hpp"
#include "schema/store.hpp"
#include "stats/error.hpp"

namespace perfgate::runner {

namespace {

// Repetitions per side when not given (issue text; min_samples 5 and the
// optimum of 9 in gate/policy.hpp make 10 the smallest round number that is
// not warned about).
constexpr int default_repetitions = 10;
constexpr const char* default_db = ".perfgate/perfgate.db";
constexpr const char* local_project = "default";

const std::vector<option_spec> run_options = {
    {"config", 'c', true, false, "FILE", "JSON list of benchmarks (name, baseline, candidate, cwd, env, repetitions)"},
    {"name", 0, true, false, "NAME", "benchmark name with --baseline/--candidate (default: \"default\")"},
    {"baseline", 0, true, false, "CMD", "baseline command (run via /bin/sh -c only if it uses shell syntax)"},
    {"candidate", 0, true, false, "CMD", "candidate command"},
    {"repetitions", 'r', true, false, "N", "measured executions per side (default 10; 1 with --backend callgrind)"},
    {"warmup", 0, true, false, "N", "discarded executions per side before measuring (default 1; 0 with callgrind)"},
    {"events", 'e', true, false, "EVENTS", "perf events, comma-separated (default: the supported ones of cycles, "
                                           "instructions, branch-misses, cache-misses, task-clock, page-faults, plus duration_time)"},
    {"cpus", 0, true, false, "LIST", "pin the benchmarks to these CPUs (sched_setaffinity), e.g. 2-3"},
    {"keep-aslr", 0, false, false, "", "leave address-space randomisation on (default: off for the benchmark)"},
    {"order", 0, true, false, "ORDER", "alternate (default: ABBA rounds), random (with --seed) or blocked"},
    {"seed", 0, true, false, "N", "seed for --order random (default 0)"},
    {"timeout", 0, true, false, "SECONDS", "kill an execution that runs longer (exit 4)"},
    {"backend", 0, true, false, "NAME", "perf (default), callgrind (deterministic, no PMU needed) or rusage"},
    {"split-events", 0, false, false, "", "measure multiplexed events in groups across executions"},
    {"cache-sim", 0, false, false, "", "callgrind: also simulate the caches (counter cache-misses)"},
    {"db", 0, true, false, "PATH", "local history database (default ./.perfgate/perfgate.db)"},
    {"server", 0, true, false, "URL", "perfgate server; needs --project and --token"},
    {"project", 0, true, false, "P", "project (server mode; default \"default\" locally)"},
    {"token", 0, true, false, "T", "API token for --server (default: $PERFGATE_TOKEN)"},
    {"policy", 0, true, false, "FILE", "JSON policy file (thresholds, gated counters, alpha, correction)"},
    {"format", 0, true, false, "FORMAT", "text (default), json or markdown"},
    {"output", 'o', true, false, "FILE", "also write the report to FILE"},
    {"fail-on-inconclusive", 0, false, false, "", "exit 3 when the verdict is inconclusive"},
    {"github", 0, false, false, "", "post the report to the pull request (comment, status, job summary)"},
    {"comment", 0, true, false, "MODE", "with --github: always (default), on-change, on-regression or never"},
    {"context", 0, true, false, "NAME", "with --github: status context and sticky-comment key (default: perfgate)"},
    {"sha", 0, true, false, "SHA", "candidate commit (default: GitHub Actions environment, else git)"},
    {"branch", 0, true, false, "BRANCH", "candidate branch (default: GitHub Actions environment, else git)"},
    {"base-branch", 0, true, false, "BRANCH", "branch of the baseline build (default: the PR's base, else --branch)"},
    {"pr", 0, true, false, "N", "pull request number (default: from GITHUB_EVENT_PATH)"},
    {"testbed", 0, true, false, "NAME", "name of this machine in the history (default: hostname)"},
    {"quiet", 'q', false, false, "", "no progress output"},
    {"help", 'h', false, false, "", "show this help"},
};

[[noreturn]] void usage_error(std::string_view id, const std::string& message)
{
    throw error(std::string(id), "perfgate run: " + message);
}

std::vector<benchmark_spec> benchmarks_from(const parsed_args& args)
{
    const bool inline_given = args.has("baseline") || args.has("candidate") || args.has("name");
    if (args.has("config")) {
        if (inline_given) usage_error("usage.conflict", "--config cannot be combined with --name/--baseline/--candidate");
        return load_config(*args.get("config"));
    }
    if (!args.has("baseline") || !args.has("candidate")) {
        usage_error("usage.missing_option", "give --baseline CMD and --candidate CMD, or --config FILE (see --help)");
    }
    benchmark_spec spec;
    spec.name = args.get("name").value_or("default");
    spec.baseline = parse_command(*args.get("baseline"));
    spec.candidate = parse_command(*args.get("candidate"));
    return {spec};
}

measure_options options_from(const parsed_args& args)
{
    measure_options opt;
    if (auto b = args.get("backend")) {
        auto parsed = parse_backend(*b);
        if (!parsed) usage_error("usage.bad_value", fmt::format("--backend: expected perf, callgrind or rusage, got '{}'", *b));
        opt.which = *parsed;
    }
    // Callgrind counts are deterministic: one execution per side decides
    // (design.md §3, "Deterministic counters"), and there is no cache or
    // frequency state for a warmup to settle.
    const bool deterministic = opt.which == backend::callgrind;
    opt.repetitions = static_cast<int>(args.get_int("repetitions", 1, 100000).value_or(deterministic ? 1 : default_repetitions));
    opt.warmup = static_cast<int>(args.get_int("warmup", 0, 1000).value_or(deterministic ? 0 : 1));
    if (auto e = args.get("events")) {
        if (opt.which != backend::perf) usage_error("usage.conflict", "-e/--events applies to --backend perf only");
        std::string_view rest = *e;
        while (!rest.empty()) {
            auto comma = rest.find(',');
            auto ev = rest.substr(0, comma);
            if (ev.empty()) usage_error("usage.bad_value", fmt::format("-e '{}': empty event name", *e));
            opt.events.emplace_back(ev);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
    }
    if (auto c = args.get("cpus")) opt.cpus = parse_cpu_list(*c);
    opt.keep_aslr = args.has("keep-aslr");
    if (auto o = args.get("order")) {
        auto parsed = parse_run_order(*o);
        if (!parsed) usage_error("usage.bad_value", fmt::format("--order: expected alternate, random or blocked, got '{}'", *o));
        opt.order = *parsed;
    }
    if (args.has("seed") && opt.order != run_order::random) usage_error("usage.conflict", "--seed applies to --order random only");
    opt.seed = static_cast<std::uint64_t>(args.get_int("seed", 0, std::numeric_limits<long long>::max()).value_or(0));
    if (auto t = args.get_double("timeout")) {
        if (!(*t > 0) || *t > 86400 * 7) usage_error("usage.bad_value", fmt::format("--timeout: expected seconds > 0, got {}", *t));
        opt.timeout = std::chrono::milliseconds(static_cast<long long>(*t * 1000.0));
    }
    opt.split_events = args.has("split-events");
    opt.cache_sim = args.has("cache-sim");
    if (opt.cache_sim && opt.which != backend::callgrind) usage_error("usage.conflict", "--cache-sim needs --backend callgrind");
    if (args.has("quiet")) {
        opt.progress = progress_style::none;
    } else {
        opt.progress = ::isatty(STDERR_FILENO) == 1 ? progress_style::tty : progress_style::plain;
    }
    return opt;
}

std::string environment_json(const measure_options& opt)
{
    env_options eo = default_env_options();
    if (!opt.cpus.empty()) eo.cpus = opt.cpus;
    eo.will_disable_aslr = !opt.keep_aslr;
    // The first execution probes the events anyway (measure.cpp); a second
    // perf run here would only cost time.
    eo.probe_perf = false;
    return to_json(check_environment(eo)).dump();
}

void fill_identity(store::run_record& run, const std::string& project, const git_info& git,
                   const store::testbed_info& testbed, const std::string& environment)
{
    run.project = project;
    const bool base = run.role == "baseline";
    run.git_sha = base && !git.base_sha.empty() ? git.base_sha : git.sha;
    run.branch = base && !git.base_branch.empty() ? git.base_branch : git.branch;
    run.pr = git.pr;
    run.testbed = testbed;
    run.environment_json = environment;
}

// --- server mode -----------------------------------------------------------

struct server_target {
    std::string url, project, token;
};

nlohmann::json post_json(const server_target& srv, const std::string& path, const nlohmann::json& body)
{
    http_request req;
    req.method = "POST";
    req.url = srv.url + path;
    req.headers = {{"Authorization", "Bearer " + srv.token},
                   {"Content-Type", "application/json"},
                   {"Accept", "application/json"}};
    req.body = body.dump();
    http_response res = http_send(req);
    nlohmann::json doc = nlohmann::json::parse(res.body, nullptr, false);
    if (res.status < 200 || res.status >= 300) {
        std::string detail = res.body.substr(0, 300);
        if (doc.is_object() && doc.contains("error") && doc["error"].is_object()) {
            detail = fmt::format("[{}] {}", doc["error"].value("id", "?"), doc["error"].value("message", ""));
        }
        throw error("server.rejected", fmt::format("POST {}: HTTP {}: {}", req.url, res.status, detail));
    }
    if (doc.is_discarded() || !doc.is_object()) {
        throw error("server.bad_response", fmt::format("POST {}: HTTP {} with a body that is not a JSON object", req.url, res.status));
    }
    return doc;
}

std::int64_t upload_run(const server_target& srv, const store::run_record& run)
{
    nlohmann::json body = {
        {"benchmark", run.benchmark},
        {"role", run.role},
        {"git_sha", run.git_sha},
        {"branch", run.branch},
        {"testbed",
         {{"name", run.testbed.name}, {"cpu", run.testbed.cpu}, {"cores", run.testbed.cores},
          {"kernel", run.testbed.kernel}, {"fingerprint", run.testbed.fingerprint}}},
        {"backend", run.backend},
        {"environment", nlohmann::json::parse(run.environment_json, nullptr, false)},
        {"perf_csv", to_perf_csv(run)},
    };
    if (body["environment"].is_discarded()) body["environment"] = nlohmann::json::object();
    if (run.pr) body["pr"] = *run.pr;
    auto doc = post_json(srv, "/api/v1/projects/" + url_encode(srv.project) + "/runs", body);
    if (!doc.contains("run_id") || !doc["run_id"].is_number_integer()) {
        throw error("server.bad_response", "the server's answer to POST .../runs has no integer run_id");
    }
    return doc["run_id"].get<std::int64_t>();
}

// All pairs go to ONE POST .../compare (baseline_run and candidate_run as
// arrays paired by position), so the server adjusts the p-values across every
// gated counter of every benchmark, as a local run does (design.md §3,
// "Multiplicity"). The answer is the report, comparison_id included.
gate::report compare_remote(const server_target& srv, const std::vector<std::pair<std::int64_t, std::int64_t>>& pairs,
                            const std::optional<gate::policy>& rules)
{
    nlohmann::json base = nlohmann::json::array(), cand = nlohmann::json::array();
    for (const auto& [b, c] : pairs) {
        base.push_back(b);
        cand.push_back(c);
    }
    nlohmann::json body = {{"baseline_run", std::move(base)}, {"candidate_run", std::move(cand)}};
    if (rules) body["policy"] = gate::to_json(*rules);
    const std::string path = "/api/v1/projects/" + url_encode(srv.project) + "/compare";
    const nlohmann::json doc = post_json(srv, path, body);
    try {
        return gate::report_from_json(doc);
    } catch (const error& e) {
        // "input.bad_report" would be exit 2, a user error; a server that
        // answers nonsense is an environment failure (exit 4).
        throw error("server.bad_response", fmt::format("POST {}{}: the answer is not a perfgate report: {}", srv.url,
                                                       path, e.what()));
    }
}

} // namespace

int cmd_run(const argv_t& argv)
{
    const auto args = parse_args("run", argv, run_options);
    if (args.has("help")) {
        std::fputs(usage_text("run", "(--config FILE | --name NAME --baseline CMD --candidate CMD) [options]",
                              "Measures the baseline and the candidate command of each benchmark in interleaved\n"
                              "rounds under perf stat (or callgrind / rusage), with the CPUs pinned and ASLR off,\n"
                              "stores both runs (./.perfgate/perfgate.db, or a server) and gates the candidate.\n"
                              "Exit: 0 pass, 1 regression, 2 usage error, 3 inconclusive with\n"
                              "--fail-on-inconclusive, 4 a benchmark failed or perf/the server is unusable.",
                              run_options)
                       .c_str(),
                   stdout);
        return exit_pass;
    }
    if (!args.positional().empty()) {
        usage_error("usage.unexpected_argument", fmt::format("unexpected argument '{}' (quote commands; see --help)",
                                                             args.positional().front()));
    }

    // Everything that can be a usage error is checked before measuring.
    const auto benchmarks = benchmarks_from(args);
    const measure_options opt = options_from(args);
    const report_format format = parse_format(args.get("format").value_or("text"));
    const std::optional<gate::policy> rules =
        args.get("policy") ? std::optional(gate::load_policy(*args.get("policy"))) : std::nullopt;
    std::optional<server_target> server;
    if (auto url = args.get("server")) {
        if (args.has("db")) usage_error("usage.conflict", "--server and --db are exclusive");
        auto token = args.get("token");
        if (!token) {
            if (const char* t = std::getenv("PERFGATE_TOKEN"); t && *t) token = t;
        }
        if (!args.has("project") || !token) {
            usage_error("usage.missing_option", "--server needs --project P and --token T (or PERFGATE_TOKEN)");
        }
        std::string base = *url;
        while (base.ends_with('/')) base.pop_back();
        server = server_target{base, *args.get("project"), *token};
    }
    std::optional<github_options> github;
    if (args.has("github")) {
        github.emplace();
        github->comment = args.get("comment").value_or("always");
        if (!is_comment_mode(github->comment)) {
            usage_error("usage.bad_value", fmt::format("--comment: expected always, on-change, on-regression or "
                                                       "never, got '{}'", github->comment));
        }
        github->context = args.get("context").value_or("perfgate");
        github->fail_on_inconclusive = args.has("fail-on-inconclusive");
        if (auto out = args.get("output")) github->report_path = *out;
    } else if (args.has("comment") || args.has("context")) {
        usage_error("usage.conflict", "--comment and --context apply to --github only");
    }
    git_overrides flags;
    flags.sha = args.get("sha");
    flags.branch = args.get("branch");
    flags.base_branch = args.get("base-branch");
    if (auto pr = args.get_int("pr", 1, std::numeric_limits<int>::max())) flags.pr = *pr;

    const git_info git = resolve_git_info(flags, process_env(), std::filesystem::current_path());
    // The server files every run under a commit and a branch (its history
    // queries are per branch): say so now rather than after measuring.
    if (server && (git.sha.empty() || git.branch.empty())) {
        usage_error("usage.missing_option",
                    fmt::format("--server needs the run's commit and branch ({}{}): run inside a git checkout or a "
                                "GitHub Actions job, or pass --sha and --branch",
                                git.sha.empty() ? "no commit found" : "commit " + git.sha,
                                git.branch.empty() ? ", no branch found" : ", branch " + git.branch));
    }
    const store::testbed_info testbed = detect_testbed(args.get("testbed"));
    const std::string environment = environment_json(opt);

    kill_children_on_interrupt();
    auto results = measure(benchmarks, opt, std::cerr);

    std::vector<std::string> warnings;
    for (auto& m : results) {
        for (auto* s : {&m.baseline, &m.candidate}) {
            for (auto& w : s->warnings) {
                if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
            }
        }
    }
    if (!args.has("quiet")) {
        for (auto& w : warnings) fmt::print(stderr, "perfgate run: warning: {}\n", w);
    }

    const std::string project = server ? server->project : args.get("project").value_or(local_project);
    for (auto& m : results) {
        fill_identity(m.baseline.run, project, git, testbed, environment);
        fill_identity(m.candidate.run, project, git, testbed, environment);
    }

    gate::report result;
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    if (server) {
        for (auto& m : results) pairs.emplace_back(upload_run(*server, m.baseline.run), upload_run(*server, m.candidate.run));
        result = compare_remote(*server, pairs, rules);
        if (github && result.comparison_id) {
            github->comparison_url = fmt::format("{}/api/v1/projects/{}/comparisons/{}", server->url,
                                                 url_encode(server->project), *result.comparison_id);
        }
    } else {
        const std::filesystem::path db_path = args.get("db").value_or(default_db);
        if (db_path.has_parent_path()) std::filesystem::create_directories(db_path.parent_path());
        store::store db(db_path);
        gate::service svc(db);
        for (auto& m : results) {
            auto b = svc.ingest_run(m.baseline.run);
            auto c = svc.ingest_run(m.candidate.run);
            pairs.emplace_back(b.run_id, c.run_id);
        }
        result = svc.compare(project, pairs, rules.value_or(gate::policy{})).result;
    }
    result.warnings.insert(result.warnings.begin(), warnings.begin(), warnings.end());

    emit_report(result, format, args.get("output"), {});
    const int code = verdict_exit_code(result.result, args.has("fail-on-inconclusive"));
    if (github) {
        // Publishing never changes the verdict: GitHub failures come back as
        // warnings (runner/github.hpp). Workflow commands go to stdout, where
        // the Actions runner reads them.
        const github_result res = publish_to_github(result, code, *github, std::cout);
        if (!res.warnings.empty()) {
            fmt::print(stderr, "perfgate run: {} GitHub warning(s); the verdict stands: {}\n", res.warnings.size(),
                       gate::to_string(result.result));
        }
    }
    return code;
}

} // namespace perfgate::runner
