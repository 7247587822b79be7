// perfgate bisect: which commit between a good and a bad one changed a
// counter (docs/bisect.md). Builds commits in git worktrees of its own,
// measures each against the ends of the range it narrows with perfgate
// run's interleaved machinery (runner/measure.hpp), and decides each step
// with gate/bisect.hpp. The state after every step goes to a file that
// --resume continues from.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/wire.hpp"
#include "capture/samples.hpp"
#include "cli/bisect_report.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/target.hpp"
#include "gate/bisect.hpp"
#include "gate/compare.hpp"
#include "model/error.hpp"
#include "report/render.hpp"
#include "runner/attribution.hpp"
#include "runner/check_env.hpp"
#include "runner/config.hpp"
#include "runner/measure.hpp"
#include "runner/process.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

using namespace perfgate::runner;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Limits and defaults (docs/bisect.md#options).
constexpr int default_block = 10;           // --repetitions: executions per side and pair at each look
constexpr int default_max_repetitions = 30; // --max-repetitions: per side and pair in one step
constexpr double default_alpha = 0.01;      // --alpha: each step's two intervals are at 1 - alpha
constexpr std::size_t max_range_commits = 100000;
constexpr std::chrono::milliseconds git_timeout{60000};
constexpr const char* state_schema = "perfgate.bisect-state/v1";

std::vector<option_spec> bisect_option_list()
{
    std::vector<option_spec> options;
    auto add = [&](std::vector<option_spec> group) { options.insert(options.end(), group.begin(), group.end()); };
    // clang-format off
    add(option_group("Range and commands", {
    {"good", 0, true, false, "REV", "a commit without the change (an ancestor of --bad)"},
    {"bad", 0, true, false, "REV", "a commit with the change"},
    {"build", 0, true, false, "CMD", "builds the checked-out commit (/bin/sh -c, in the commit's worktree)"},
    {"bench", 0, true, false, "CMD", "the benchmark, run in the commit's worktree (as perfgate run's --candidate)"},
    {"name", 0, true, false, "NAME", "the benchmark's name in the report (default \"default\")"},
    {"repo", 0, true, false, "DIR", "the git checkout (default: .); never modified: commits are built in worktrees"},
    {"work-dir", 0, true, false, "DIR", "worktrees and the state file (default REPO/.perfgate/bisect)"},
    {"first-parent", 0, false, false, "", "follow merges along their first parent (default)", {}, {"enter-merges"}},
    {"enter-merges", 0, false, false, "", "bisect every commit on the ancestry path, merged branches included "
                                          "(in topological order)"},
    {"resume", 0, false, false, "", "continue the bisection recorded in WORK-DIR/state.json"},
    }));
    add(option_group("Measurement and decisions", {
    {"backend", 0, true, false, "NAME", "perf (default), native, callgrind, rusage or memcheck; callgrind and "
                                        "memcheck decide each step with one execution a side"},
    {"counter", 0, true, false, "C", "the counter each step decides on (default: instructions, else task-clock; "
                                     "memcheck: heap-bytes)"},
    {"events", 'e', true, false, "EVENTS", "perf / native events (as perfgate run)"},
    {"repetitions", 'r', true, false, "N", "noisy backends: executions per side and pair at each look (default 10)"},
    {"max-repetitions", 0, true, false, "N", "noisy backends: at most N per side and pair in one step, then the step "
                                             "is undecided (default 30)"},
    {"budget", 0, true, false, "SECONDS", "no step starts after this much time (builds included): the ranges left "
                                          "are reported, --resume goes on; the ends are always measured"},
    {"alpha", 0, true, false, "P", "each step's intervals are at level 1 - P (default 0.01)"},
    {"resolution", 0, true, false, "R", "a part of the change smaller than R times the range's effect is not told "
                                        "apart from none (default 0.2, in (0, 0.5))"},
    {"timeout", 0, true, false, "SECONDS", "kill a build or an execution that runs longer"},
    {"cpus", 0, true, false, "LIST", "pin the benchmark to these CPUs"},
    }));
    add(option_group("From an alert", {
    {"alert", 0, true, false, "ID", "take --good and --bad from this alert's change point: the commit of the run "
                                    "before it and the alert's own; --counter defaults to the alert's"},
    }));
    add(option_group("From an alert", {
    {"no-store", 0, false, false, "", "do not store the result on the alert (stored by default: PUT "
                                      ".../alerts/ID/culprit, a token with scope admin)"},
    }));
    add(option_group("From an alert", target_options("the store of --alert (default ./.perfgate/perfgate.db)",
                                                     "the project of --alert (needed with --server; default "
                                                     "\"default\" locally)")));
    add(option_group("Output", {
    {"format", 0, true, false, "FORMAT", "text (default), json or markdown"},
    {"output", 'o', true, false, "FILE", "also write the report to FILE"},
    {"quiet", 'q', false, false, "", "no progress output"},
    }));
    // clang-format on
    return options;
}

const command_spec bisect_command{
    "bisect",
    "--good REV --bad REV --build CMD --bench CMD [options] | --alert ID [--server URL --project P] --build CMD "
    "--bench CMD [options] | --resume [--work-dir DIR]",
    "Finds the commit(s) between --good and --bad that changed a counter. Each commit\n"
    "is built in a git worktree of its own and measured against both ends of the range\n"
    "left, interleaved as perfgate run does; each step is decided statistically: like\n"
    "good, like bad, between (the change came in parts: each is searched) or undecided\n"
    "(measured more, up to --max-repetitions, then the range is reported, never a guess).\n"
    "A commit that does not build or whose benchmark fails is skipped and named.\n"
    "Exit 0: every part of the change has its commit; 3: a range is left undecided or\n"
    "the ends measure alike; 2: bad input (range, dirty tree, an endpoint that fails).",
    bisect_option_list(),
};

[[noreturn]] void bisect_error(error_id id, const std::string& message)
{
    throw error(id, "perfgate bisect: " + message);
}

struct git_out {
    bool ok = false;
    std::string out, message;
};

git_out git(const fs::path& repo, std::vector<std::string> args)
{
    spawn_options so;
    so.argv = {"git", "-C", repo.string()};
    so.argv.insert(so.argv.end(), args.begin(), args.end());
    so.capture_stdout = true;
    git_out g;
    const auto res = run_process(so, git_timeout);
    g.ok = res.status.success();
    g.out = res.stdout_text;
    while (!g.out.empty() && g.out.back() == '\n') g.out.pop_back();
    g.message = res.stderr_tail.empty() ? res.status.describe() : res.stderr_tail.back();
    return g;
}

std::vector<std::string> lines_of(const std::string& text)
{
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = text.find('\n', at);
        out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return out;
}


// What a bisection is: the command line's, or --resume's state file's.
struct bisect_settings {
    fs::path repo;
    std::string good, bad; // full shas
    std::string build, bench, name = "default";
    backend which = backend::perf;
    std::string counter; // empty: chosen from the first measurement
    std::vector<std::string> events;
    std::vector<int> cpus;
    int block = default_block, max_repetitions = default_max_repetitions;
    double alpha = default_alpha, resolution = gate::default_bisect_resolution;
    std::optional<double> timeout_s;
    bool first_parent = true;
    std::optional<std::int64_t> alert; // --alert: the result is stored on it (unless --no-store)
};

bool deterministic(backend b) { return b == backend::callgrind || b == backend::memcheck; }

json settings_json(const bisect_settings& s)
{
    json j{{"repo", s.repo.string()},
           {"good", s.good},
           {"bad", s.bad},
           {"build", s.build},
           {"bench", s.bench},
           {"name", s.name},
           {"backend", std::string(to_string(s.which))},
           {"counter", s.counter},
           {"events", s.events},
           {"cpus", s.cpus},
           {"repetitions", s.block},
           {"max_repetitions", s.max_repetitions},
           {"alpha", s.alpha},
           {"resolution", s.resolution},
           {"first_parent", s.first_parent}};
    j["timeout"] = s.timeout_s ? json(*s.timeout_s) : json();
    j["alert"] = s.alert ? json(*s.alert) : json();
    return j;
}

bisect_settings settings_from_json(const json& j)
{
    bisect_settings s;
    s.repo = j.at("repo").get<std::string>();
    s.good = j.at("good").get<std::string>();
    s.bad = j.at("bad").get<std::string>();
    s.build = j.at("build").get<std::string>();
    s.bench = j.at("bench").get<std::string>();
    s.name = j.at("name").get<std::string>();
    const auto b = parse_backend(j.at("backend").get<std::string>());
    if (!b) throw std::runtime_error("backend");
    s.which = *b;
    s.counter = j.at("counter").get<std::string>();
    s.events = j.at("events").get<std::vector<std::string>>();
    s.cpus = j.at("cpus").get<std::vector<int>>();
    s.block = j.at("repetitions").get<int>();
    s.max_repetitions = j.at("max_repetitions").get<int>();
    s.alpha = j.at("alpha").get<double>();
    s.resolution = j.at("resolution").get<double>();
    s.first_parent = j.at("first_parent").get<bool>();
    if (!j.at("timeout").is_null()) s.timeout_s = j.at("timeout").get<double>();
    // States written before results were stored on alerts have no "alert".
    if (const auto a = j.find("alert"); a != j.end() && !a->is_null()) s.alert = a->get<std::int64_t>();
    return s;
}

// A command line's settings; usage errors name the option.
bisect_settings settings_from_args(const parsed_args& args)
{
    bisect_settings s;
    s.repo = fs::absolute(args.get("repo").value_or("."));
    if (args.has("alert")) {
        for (const char* o : {"good", "bad"}) {
            if (args.has(o))
                bisect_error(errors::usage_conflict, fmt::format("--alert names the range: --{} is the alert's", o));
        }
    } else {
        s.good = args.required("good");
        s.bad = args.required("bad");
    }
    s.build = args.required("build");
    s.bench = args.required("bench");
    parse_command(s.bench); // input.bad_command now, not after the first build
    s.name = args.get("name").value_or("default");
    if (auto b = args.get("backend")) {
        const auto parsed = parse_backend(*b);
        if (!parsed) {
            bisect_error(errors::usage_bad_value,
                         fmt::format("--backend '{}': expected perf, native, callgrind, rusage or memcheck", *b));
        }
        s.which = *parsed;
    }
    s.counter = args.get("counter").value_or("");
    if (auto e = args.get("events")) {
        std::size_t at = 0;
        while (at <= e->size()) {
            const auto comma = e->find(',', at);
            const auto one = e->substr(at, comma == std::string::npos ? std::string::npos : comma - at);
            if (!one.empty()) s.events.push_back(one);
            if (comma == std::string::npos) break;
            at = comma + 1;
        }
    }
    if (auto c = args.get("cpus")) s.cpus = parse_cpu_list(*c);
    if (auto n = args.get_int("repetitions", 2, 1000)) s.block = static_cast<int>(*n);
    if (auto n = args.get_int("max-repetitions", 2, 10000)) s.max_repetitions = static_cast<int>(*n);
    if (s.max_repetitions < s.block) {
        bisect_error(errors::usage_conflict,
                     fmt::format("--max-repetitions {} is below --repetitions {}", s.max_repetitions, s.block));
    }
    if (auto a = args.get_double("alpha")) {
        if (!(*a > 0 && *a < 0.5)) bisect_error(errors::usage_bad_value, "--alpha: expected a level in (0, 0.5)");
        s.alpha = *a;
    }
    if (auto r = args.get_double("resolution")) {
        if (!(*r > 0 && *r < 0.5)) bisect_error(errors::usage_bad_value, "--resolution: expected a share in (0, 0.5)");
        s.resolution = *r;
    }
    if (auto t = args.get_double("timeout")) {
        if (!(*t > 0)) bisect_error(errors::usage_bad_value, "--timeout: expected a positive number of seconds");
        s.timeout_s = *t;
    }
    s.first_parent = !args.has("enter-merges");
    return s;
}

// One measured step, as the state file and the report keep it.
struct step_record {
    std::string lo, mid, hi;
    std::string decision; // gate::to_string(step_decision) or "skipped"
    gate::shift_reading from_good, to_bad;
    double effect = 0;
    int repetitions = 0; // per side and pair (deterministic: 1)
    std::string why;
};

gate::shift_reading reading_from(const json& j)
{
    return {j.at("estimate").get<double>(), j.at("lower").get<double>(), j.at("upper").get<double>()};
}

json step_json(const step_record& s)
{
    json j{{"lo", s.lo},         {"commit", s.mid},
           {"hi", s.hi},         {"decision", s.decision},
           {"effect", s.effect}, {"repetitions", s.repetitions},
           {"why", s.why}};
    if (s.decision != "skipped") {
        j["from_good"] = reading_json(s.from_good);
        j["to_bad"] = reading_json(s.to_bad);
    }
    return j;
}

step_record step_from(const json& j)
{
    step_record s;
    s.lo = j.at("lo").get<std::string>();
    s.mid = j.at("commit").get<std::string>();
    s.hi = j.at("hi").get<std::string>();
    s.decision = j.at("decision").get<std::string>();
    s.effect = j.at("effect").get<double>();
    s.repetitions = j.at("repetitions").get<int>();
    s.why = j.at("why").get<std::string>();
    if (s.decision != "skipped") {
        s.from_good = reading_from(j.at("from_good"));
        s.to_bad = reading_from(j.at("to_bad"));
    }
    return s;
}

std::optional<gate::step_decision> decision_from(std::string_view d)
{
    for (auto x : {gate::step_decision::like_good, gate::step_decision::like_bad, gate::step_decision::between,
                   gate::step_decision::undecided}) {
        if (gate::to_string(x) == d) return x;
    }
    return std::nullopt;
}

// A commit's build: its worktree, and whether the build succeeded.
struct build_record {
    bool ok = false;
    std::string message; // why not
};

// The whole bisection: settings, the range, what was built and measured.
class bisection {
public:
    bisection(bisect_settings s, fs::path work, bool quiet) : s_(std::move(s)), work_(std::move(work)), quiet_(quiet) {}

    void load_state();
    void check_repository() const;
    void list_commits();
    bisect_result run(std::optional<double> budget_s);
    // The alert whose range this is (--alert, or the state's on --resume).
    [[nodiscard]] std::optional<std::int64_t> alert() const { return s_.alert; }

private:
    void say(const std::string& line) const
    {
        if (!quiet_) print_error(fmt::format("perfgate bisect: {}\n", line));
    }
    fs::path tree_of(const std::string& sha) const { return work_ / "trees" / sha; }
    // --budget: the measuring time of this invocation is spent.
    bool budget_spent() const
    {
        return budget_s_ &&
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > *budget_s_;
    }
    fs::path state_path() const { return work_ / "state.json"; }
    void save_state() const;
    const build_record& build(const std::string& sha);
    measure_options measure_opts(int repetitions, int warmup) const;
    benchmark_spec spec_for(const std::string& base, const std::string& cand, const std::string& name) const;
    std::string pick_counter(const model::run_record& run);
    std::vector<double> values_of(const model::run_record& run) const;
    std::optional<double> value_of(const std::string& sha, std::string& failure);
    gate::shift_reading shift(const std::vector<double>& before, const std::vector<double>& after) const;
    struct endpoint_effect {
        gate::shift_reading shift;
        int repetitions = 0;
    };
    endpoint_effect measure_endpoints();
    endpoint_effect measure_endpoints_or_clean_up();
    step_record step_at(const gate::bisect_search::probe& p);
    void search(bisect_result& result, double effect);
    step_record measure_step(const gate::bisect_search::probe& p, std::string& failure);
    commit_info describe(const std::string& sha) const;
    std::vector<culprit_effect> culprit_effects(const std::string& before, const std::string& after,
                                                std::optional<gate::attribution>& attribution,
                                                std::optional<gate::shift_reading>& decided,
                                                std::vector<std::string>& warnings);
    void remove_trees();

    bisect_settings s_;
    fs::path work_;
    bool quiet_ = false;
    std::vector<std::string> commits_; // good first, bad last
    std::map<std::string, build_record> builds_;
    std::map<std::string, double> values_; // deterministic backends: one execution per commit
    std::vector<step_record> steps_;
    std::optional<endpoint_effect> endpoints_;
    std::set<std::string> measured_;
    std::size_t executions_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::optional<double> budget_s_;
};

void bisection::save_state() const
{
    if (!endpoints_) return; // the ends have not measured yet: nothing worth resuming
    json j{{"schema", state_schema}, {"settings", settings_json(s_)}, {"commits", commits_}};
    json builds = json::object();
    for (const auto& [sha, b] : builds_) builds[sha] = json{{"ok", b.ok}, {"message", b.message}};
    j["builds"] = builds;
    json values = json::object();
    for (const auto& [sha, v] : values_) values[sha] = v;
    j["values"] = values;
    j["measured"] = std::vector<std::string>(measured_.begin(), measured_.end());
    j["executions"] = executions_;
    if (endpoints_)
        j["endpoints"] = json{{"shift", reading_json(endpoints_->shift)}, {"repetitions", endpoints_->repetitions}};
    json steps = json::array();
    for (const auto& st : steps_) steps.push_back(step_json(st));
    j["steps"] = steps;
    // Written whole, then renamed over the old one: an interruption leaves
    // the previous step's state, never half a file.
    const fs::path tmp = state_path().string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << j.dump(1) << '\n';
        if (!out) throw error(errors::io_write, fmt::format("cannot write {}", tmp.string()));
    }
    fs::rename(tmp, state_path());
}

void bisection::load_state()
{
    const fs::path path = state_path();
    std::ifstream in(path);
    if (!in) {
        bisect_error(errors::input_bisect_state,
                     fmt::format("--resume: {} does not exist: no bisection to continue there", path.string()));
    }
    try {
        const json j = json::parse(in);
        if (j.at("schema") != state_schema) throw std::runtime_error("schema");
        s_ = settings_from_json(j.at("settings"));
        commits_ = j.at("commits").get<std::vector<std::string>>();
        for (const auto& [sha, b] : j.at("builds").items())
            builds_[sha] = {b.at("ok").get<bool>(), b.at("message").get<std::string>()};
        for (const auto& [sha, v] : j.at("values").items()) values_[sha] = v.get<double>();
        for (const auto& sha : j.at("measured")) measured_.insert(sha.get<std::string>());
        executions_ = j.at("executions").get<std::size_t>();
        if (j.contains("endpoints")) {
            endpoints_ = endpoint_effect{reading_from(j["endpoints"].at("shift")),
                                         j["endpoints"].at("repetitions").get<int>()};
        }
        for (const auto& st : j.at("steps")) steps_.push_back(step_from(st));
    } catch (const std::exception& e) {
        bisect_error(errors::input_bisect_state,
                     fmt::format("--resume: {}: not a perfgate bisect state ({})", path.string(), e.what()));
    }
    say(fmt::format("resuming {}..{}: {} step(s) and {} build(s) recorded", short_sha(s_.good), short_sha(s_.bad),
                    steps_.size(), builds_.size()));
}

std::string resolve(const fs::path& repo, const std::string& rev, std::string_view option)
{
    const auto g = git(repo, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
    if (!g.ok || g.out.empty())
        bisect_error(errors::input_git, fmt::format("--{} '{}': not a commit of {}", option, rev, repo.string()));
    return g.out;
}

void bisection::check_repository() const
{
    const auto top = git(s_.repo, {"rev-parse", "--show-toplevel"});
    if (!top.ok)
        bisect_error(errors::input_git, fmt::format("{} is not a git checkout: {}", s_.repo.string(), top.message));
    // A tree with uncommitted changes to tracked files: the user may believe
    // the bisection sees them (it builds commits only).
    const auto status = git(s_.repo, {"status", "--porcelain", "--untracked-files=no"});
    if (!status.ok)
        bisect_error(errors::input_git, fmt::format("git status in {}: {}", s_.repo.string(), status.message));
    if (!status.out.empty()) {
        std::string files;
        for (const auto& line : lines_of(status.out)) {
            if (line.size() > 3) files += (files.empty() ? "" : ", ") + line.substr(3);
        }
        bisect_error(errors::input_dirty_tree,
                     fmt::format("{} has uncommitted changes ({}): commit or stash them first (the bisection builds "
                                 "commits, never the working tree)",
                                 top.out, files));
    }
}

void bisection::list_commits()
{
    const std::string given_good = s_.good, given_bad = s_.bad;
    s_.good = resolve(s_.repo, given_good, "good");
    s_.bad = resolve(s_.repo, given_bad, "bad");
    if (s_.good == s_.bad)
        bisect_error(errors::input_bisect_range, fmt::format("--good and --bad are the same commit {}", s_.good));
    if (!git(s_.repo, {"merge-base", "--is-ancestor", s_.good, s_.bad}).ok) {
        bisect_error(errors::input_bisect_range,
                     fmt::format("--good {} ({}) is not an ancestor of --bad {} ({}): nothing to bisect", given_good,
                                 short_sha(s_.good), given_bad, short_sha(s_.bad)));
    }
    std::vector<std::string> args{"rev-list", "--reverse"};
    if (s_.first_parent) args.emplace_back("--first-parent");
    else {
        args.emplace_back("--topo-order");
        args.emplace_back("--ancestry-path");
    }
    args.push_back(s_.good + ".." + s_.bad);
    const auto list = git(s_.repo, args);
    if (!list.ok) bisect_error(errors::input_git, fmt::format("git rev-list: {}", list.message));
    commits_ = {s_.good};
    for (auto& sha : lines_of(list.out)) commits_.push_back(std::move(sha));
    if (commits_.size() > max_range_commits) {
        bisect_error(errors::input_bisect_range, fmt::format("{} commits between --good and --bad: at most {}",
                                                             commits_.size() - 1, max_range_commits));
    }
    // Along the first parent, good must be on bad's first-parent line.
    if (s_.first_parent) {
        const auto parent = git(s_.repo, {"rev-parse", commits_[1] + "^"});
        if (!parent.ok || parent.out != s_.good) {
            bisect_error(errors::input_bisect_range,
                         fmt::format("--good {} is not on the first-parent line of --bad {} (it was merged from a "
                                     "branch): use --enter-merges, or a good commit of the main line",
                                     short_sha(s_.good), short_sha(s_.bad)));
        }
    }
}

const build_record& bisection::build(const std::string& sha)
{
    if (auto it = builds_.find(sha); it != builds_.end() && (!it->second.ok || fs::exists(tree_of(sha))))
        return it->second;
    const fs::path tree = tree_of(sha);
    // A worktree left by an interrupted run: made again from scratch.
    if (fs::exists(tree)) {
        git(s_.repo, {"worktree", "remove", "--force", tree.string()});
        fs::remove_all(tree);
    }
    git(s_.repo, {"worktree", "prune"});
    fs::create_directories(tree.parent_path());
    const auto add = git(s_.repo, {"worktree", "add", "--detach", "--force", tree.string(), sha});
    if (!add.ok) throw error(errors::input_git, fmt::format("git worktree add {}: {}", tree.string(), add.message));
    say(fmt::format("building {} {}", short_sha(sha), describe(sha).subject));
    spawn_options so;
    so.argv = {"/bin/sh", "-c", s_.build};
    so.cwd = tree;
    std::optional<std::chrono::milliseconds> timeout;
    if (s_.timeout_s) timeout = std::chrono::milliseconds(static_cast<long long>(*s_.timeout_s * 1000));
    const auto res = run_process(so, timeout);
    build_record b;
    b.ok = res.status.success();
    if (!b.ok) {
        b.message = fmt::format("the build command failed ({})", res.status.describe());
        if (!res.stderr_tail.empty()) b.message += ": " + res.stderr_tail.back();
    }
    builds_[sha] = b;
    save_state();
    return builds_[sha];
}

measure_options bisection::measure_opts(int repetitions, int warmup) const
{
    measure_options opt;
    opt.which = s_.which;
    opt.repetitions = repetitions;
    opt.warmup = warmup;
    opt.events = s_.events;
    opt.cpus = s_.cpus;
    if (s_.timeout_s) opt.timeout = std::chrono::milliseconds(static_cast<long long>(*s_.timeout_s * 1000));
    return opt;
}

benchmark_spec bisection::spec_for(const std::string& base, const std::string& cand, const std::string& name) const
{
    benchmark_spec spec;
    spec.name = name;
    spec.baseline = spec.candidate = parse_command(s_.bench);
    spec.baseline_cwd = tree_of(base);
    spec.candidate_cwd = tree_of(cand);
    return spec;
}

// The counter every step decides on: --counter, else the first of the
// backend's usual ones that was measured.
std::string bisection::pick_counter(const model::run_record& run)
{
    const auto has = [&](std::string_view c) {
        return std::any_of(run.counters.begin(), run.counters.end(),
                           [&](const model::counter_samples& x) { return x.counter == c; });
    };
    if (!s_.counter.empty()) {
        if (!has(s_.counter)) {
            std::string names;
            for (const auto& c : run.counters) names += (names.empty() ? "" : ", ") + c.counter;
            bisect_error(errors::usage_bad_value,
                         fmt::format("--counter {}: the {} backend did not measure it (measured: {})", s_.counter,
                                     to_string(s_.which), names));
        }
        return s_.counter;
    }
    for (const char* c : {"instructions", "heap-bytes", "task-clock", "user-time"}) {
        if (has(c)) return s_.counter = c;
    }
    bisect_error(errors::usage_missing_option, "no default counter was measured: name one with --counter");
}

std::vector<double> bisection::values_of(const model::run_record& run) const
{
    std::vector<double> out;
    for (const auto& c : run.counters) {
        if (c.counter != s_.counter) continue;
        for (const auto& v : c.samples) {
            if (v.value) out.push_back(*v.value);
        }
    }
    return out;
}

gate::shift_reading bisection::shift(const std::vector<double>& before, const std::vector<double>& after) const
{
    return gate::shift_of(before, after, s_.alpha);
}

// Deterministic backends: one execution of the commit; nullopt with the
// failure when its benchmark fails.
std::optional<double> bisection::value_of(const std::string& sha, std::string& failure)
{
    if (auto it = values_.find(sha); it != values_.end()) return it->second;
    auto opt = measure_opts(1, 0);
    opt.candidate_only = true;
    std::vector<benchmark_measurement> m;
    try {
        m = measure({spec_for(sha, sha, s_.name)}, opt, std::cerr);
    } catch (const error& e) {
        if (e.id() != errors::measure_failed && e.id() != errors::measure_timeout) throw;
        failure = e.what();
        return std::nullopt;
    }
    ++executions_;
    measured_.insert(sha);
    pick_counter(m.at(0).candidate.run);
    const auto v = values_of(m.at(0).candidate.run);
    if (v.empty()) {
        failure = fmt::format("counter {} has no value", s_.counter);
        return std::nullopt;
    }
    values_[sha] = v.front();
    return v.front();
}

bisection::endpoint_effect bisection::measure_endpoints()
{
    if (endpoints_) return *endpoints_;
    for (const auto* sha : {&s_.good, &s_.bad}) build(*sha);
    const auto& g = builds_[s_.good];
    const auto& b = builds_[s_.bad];
    if (!g.ok && !b.ok) {
        bisect_error(errors::input_bisect_endpoint,
                     fmt::format("the build fails at both ends: --good {}: {}; --bad {}: {}", short_sha(s_.good),
                                 g.message, short_sha(s_.bad), b.message));
    }
    for (const auto* sha : {&s_.good, &s_.bad}) {
        if (!builds_[*sha].ok) {
            bisect_error(errors::input_bisect_endpoint, fmt::format("--{} {}: {}", sha == &s_.good ? "good" : "bad",
                                                                    short_sha(*sha), builds_[*sha].message));
        }
    }
    endpoint_effect out;
    if (deterministic(s_.which)) {
        for (const auto* sha : {&s_.good, &s_.bad}) {
            std::string failure;
            if (!value_of(*sha, failure)) {
                bisect_error(errors::input_bisect_endpoint,
                             fmt::format("--{} {}: the benchmark fails: {}", sha == &s_.good ? "good" : "bad",
                                         short_sha(*sha), failure));
            }
        }
        out.shift = shift({values_[s_.good]}, {values_[s_.bad]});
        out.repetitions = 1;
    } else {
        std::vector<double> before, after;
        for (int done = 0; done < s_.max_repetitions; done += s_.block) {
            std::vector<benchmark_measurement> m;
            try {
                m = measure({spec_for(s_.good, s_.bad, s_.name)}, measure_opts(s_.block, done == 0 ? 1 : 0), std::cerr);
            } catch (const error& e) {
                if (e.id() != errors::measure_failed && e.id() != errors::measure_timeout) throw;
                bisect_error(errors::input_bisect_endpoint, fmt::format("an endpoint's benchmark fails: {}", e.what()));
            }
            executions_ += 2 * static_cast<std::size_t>(s_.block);
            pick_counter(m.at(0).baseline.run);
            const auto b1 = values_of(m.at(0).baseline.run), c1 = values_of(m.at(0).candidate.run);
            before.insert(before.end(), b1.begin(), b1.end());
            after.insert(after.end(), c1.begin(), c1.end());
            out.shift = shift(before, after);
            out.repetitions = done + s_.block;
            if (out.shift.lower > 0 || out.shift.upper < 0) break;
        }
        measured_.insert(s_.good);
        measured_.insert(s_.bad);
    }
    endpoints_ = out;
    save_state();
    return out;
}

step_record bisection::measure_step(const gate::bisect_search::probe& p, std::string& failure)
{
    step_record st;
    st.lo = commits_[p.lo];
    st.mid = commits_[p.mid];
    st.hi = commits_[p.hi];
    st.effect = p.effect;
    st.decision = gate::to_string(gate::step_decision::undecided);
    if (budget_spent()) return st; // repetitions 0: not measured
    const auto& b = build(st.mid);
    if (!b.ok) {
        failure = b.message;
        return st;
    }
    say(fmt::format("measuring {} between {} and {}", short_sha(st.mid), short_sha(st.lo), short_sha(st.hi)));
    if (deterministic(s_.which)) {
        std::string why;
        const auto lo = value_of(st.lo, why), mid = value_of(st.mid, failure), hi = value_of(st.hi, why);
        if (!mid) return st;
        PERFGATE_CHECK(lo && hi); // ends of a segment were measured before
        st.from_good = shift({*lo}, {*mid});
        st.to_bad = shift({*mid}, {*hi});
        st.repetitions = 1;
        st.decision = gate::to_string(gate::decide_step(st.from_good, st.to_bad, p.effect, s_.resolution));
        return st;
    }
    std::vector<double> lo, mid_a, mid_b, hi;
    gate::step_decision d = gate::step_decision::undecided;
    for (int done = 0; done < s_.max_repetitions; done += s_.block) {
        if (budget_s_ &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() > *budget_s_)
            break;
        std::vector<benchmark_measurement> m;
        try {
            m = measure({spec_for(st.lo, st.mid, s_.name + "/from-good"), spec_for(st.mid, st.hi, s_.name + "/to-bad")},
                        measure_opts(s_.block, done == 0 ? 1 : 0), std::cerr);
        } catch (const error& e) {
            if (e.id() != errors::measure_failed && e.id() != errors::measure_timeout) throw;
            failure = e.what();
            return st;
        }
        executions_ += 4 * static_cast<std::size_t>(s_.block);
        measured_.insert(st.mid);
        for (auto [from, to] : {std::pair{&m.at(0).baseline, &lo}, std::pair{&m.at(0).candidate, &mid_a},
                                std::pair{&m.at(1).baseline, &mid_b}, std::pair{&m.at(1).candidate, &hi}}) {
            const auto v = values_of(from->run);
            to->insert(to->end(), v.begin(), v.end());
        }
        st.from_good = shift(lo, mid_a);
        st.to_bad = shift(mid_b, hi);
        st.repetitions = done + s_.block;
        d = gate::decide_step(st.from_good, st.to_bad, p.effect, s_.resolution);
        if (d != gate::step_decision::undecided) break;
    }
    st.decision = gate::to_string(d);
    return st;
}

commit_info bisection::describe(const std::string& sha) const
{
    const auto g = git(s_.repo, {"show", "-s", "--format=%s%n%an <%ae>", sha});
    const auto l = lines_of(g.out);
    return {sha, l.size() > 0 ? l[0] : "", l.size() > 1 ? l[1] : ""};
}

// culprit^ against culprit, as perfgate run measures a pair: every counter's
// shift with its interval, and callgrind's per-function attribution.
std::vector<culprit_effect> bisection::culprit_effects(const std::string& before, const std::string& after,
                                                       std::optional<gate::attribution>& attribution,
                                                       std::optional<gate::shift_reading>& decided,
                                                       std::vector<std::string>& warnings)
{
    const bool det = deterministic(s_.which);
    auto opt = measure_opts(det ? 1 : s_.max_repetitions, det ? 0 : 1);
    std::optional<temp_dir> profiles;
    if (det) {
        profiles.emplace("perfgate-bisect-profiles");
        opt.keep_profiles = profiles->path();
    }
    std::vector<benchmark_measurement> m;
    try {
        m = measure({spec_for(before, after, s_.name)}, opt, std::cerr);
    } catch (const error& e) {
        warnings.push_back(fmt::format("the culprit {} was not measured against its parent: {}", short_sha(after),
                                       e.what()));
        return {};
    }
    executions_ += 2 * static_cast<std::size_t>(opt.repetitions);
    const auto b_values = values_of(m[0].baseline.run), c_values = values_of(m[0].candidate.run);
    if (!b_values.empty() && !c_values.empty()) decided = shift(b_values, c_values);
    capture::sample_set b, c;
    b.benchmarks.push_back(capture::samples_from_run(m[0].baseline.run));
    c.benchmarks.push_back(capture::samples_from_run(m[0].candidate.run));
    b.benchmarks[0].name = c.benchmarks[0].name = s_.name;
    gate::report r = gate::compare(b, c, gate::policy{});
    std::vector<culprit_effect> out;
    for (const auto& k : r.benchmarks.at(0).counters) {
        culprit_effect e;
        e.counter = k.name;
        e.unit = k.unit;
        e.gated = k.gated || k.name == s_.counter;
        e.status = std::string(gate::to_string(k.state));
        e.before = k.baseline.median;
        e.after = k.candidate.median;
        e.delta_pct = k.delta_pct;
        if (k.shift_ci && k.baseline.median && *k.baseline.median != 0) {
            e.ci_pct = std::pair{100 * k.shift_ci->first / *k.baseline.median,
                                 100 * k.shift_ci->second / *k.baseline.median};
        } else if (det && k.delta_pct) {
            e.ci_pct = std::pair{*k.delta_pct, *k.delta_pct}; // one execution of a deterministic count: exact
        }
        if (e.gated) out.push_back(std::move(e));
    }
    if (det && s_.which == backend::callgrind) {
        attribution = callgrind_attribution(m[0].baseline.profiles, m[0].candidate.profiles);
        for (const auto& err : attribution->errors) warnings.push_back(err.message);
    }
    return out;
}

void bisection::remove_trees()
{
    for (const auto& [sha, b] : builds_) {
        const auto tree = tree_of(sha);
        if (!fs::exists(tree)) continue;
        git(s_.repo, {"worktree", "remove", "--force", tree.string()});
        std::error_code ec;
        fs::remove_all(tree, ec);
    }
    git(s_.repo, {"worktree", "prune"});
}

// The ends measured; on bad input at the ends nothing is left behind (no
// worktree, no state).
bisection::endpoint_effect bisection::measure_endpoints_or_clean_up()
{
    try {
        return measure_endpoints();
    } catch (...) {
        remove_trees();
        std::error_code ec;
        fs::remove(state_path(), ec);
        fs::remove(work_ / "trees", ec); // only when empty, as the next two
        fs::remove(work_, ec);
        if (work_.parent_path().filename() == ".perfgate") fs::remove(work_.parent_path(), ec);
        throw;
    }
}

// One probe's step: replayed as recorded, or measured and recorded. A step
// recorded undecided (its --budget spent, say) is measured again when resumed.
step_record bisection::step_at(const gate::bisect_search::probe& p)
{
    const auto same_probe = [&](const step_record& st) {
        return st.lo == commits_[p.lo] && st.mid == commits_[p.mid] && st.hi == commits_[p.hi];
    };
    std::erase_if(steps_, [&](const step_record& st) {
        return st.decision == gate::to_string(gate::step_decision::undecided) && same_probe(st);
    });
    if (const auto recorded = std::find_if(steps_.begin(), steps_.end(), same_probe); recorded != steps_.end()) {
        return *recorded;
    }
    std::string failure;
    step_record st = measure_step(p, failure);
    if (!failure.empty()) {
        st.decision = "skipped";
        st.why = fmt::format("{} {} skipped: {}", short_sha(st.mid), describe(st.mid).subject, failure);
    } else if (st.repetitions == 0) {
        st.why = fmt::format("{} not measured: the --budget was spent (--resume measures it)", short_sha(st.mid));
    } else {
        st.why = fmt::format("{:+.4g} from {} and {:+.4g} to {} ({} of {:+.4g} expected)", st.from_good.estimate,
                             short_sha(st.lo), st.to_bad.estimate, short_sha(st.hi), st.decision, p.effect);
    }
    steps_.push_back(st);
    save_state();
    say(st.why);
    return st;
}

// The search between the ends, whose shift is `effect`: the culprits (each
// confirmed by its own pair), the open ranges and the skipped commits.
void bisection::search(bisect_result& result, double effect)
{
    gate::bisect_search halving(commits_.size(), effect);
    while (auto p = halving.next()) {
        const step_record st = step_at(*p);
        if (st.decision == "skipped") {
            halving.skip(p->mid);
            continue;
        }
        const auto d = decision_from(st.decision);
        if (!d) bisect_error(errors::input_bisect_state, fmt::format("unknown decision '{}'", st.decision));
        halving.record(*p, *d, st.from_good, st.to_bad);
    }
    for (const auto& c : halving.culprits()) {
        culprit_report cr;
        cr.commit = describe(commits_[c.commit]);
        cr.parent = commits_[c.commit - 1];
        cr.share = c.effect / effect;
        std::optional<gate::shift_reading> own;
        cr.effects = culprit_effects(cr.parent, cr.commit.sha, cr.attribution, own, result.warnings);
        // Named only when its own pair shows its part (gate::confirms).
        if (!own || !gate::confirms(*own, c.effect, s_.resolution)) {
            result.open.push_back({describe(cr.parent), cr.commit, 1,
                                   "not confirmed: its own pair against its parent does not show the part"});
            continue;
        }
        result.culprits.push_back(std::move(cr));
    }
    for (const auto& o : halving.open_ranges()) {
        result.open.push_back({describe(commits_[o.lo]), describe(commits_[o.hi]), o.hi - o.lo,
                               o.all_skipped ? "every commit inside was skipped" : "undecided"});
    }
    for (auto i : halving.skipped()) {
        const auto it = std::find_if(steps_.rbegin(), steps_.rend(), [&](const step_record& st) {
            return st.mid == commits_[i] && st.decision == "skipped";
        });
        result.skipped.push_back({describe(commits_[i]), it != steps_.rend() ? it->why : ""});
    }
    result.status = result.open.empty() ? "found" : "undecided";
}

bisect_result bisection::run(std::optional<double> budget_s)
{
    budget_s_ = budget_s;
    fs::create_directories(work_);
    bisect_result result;
    result.good = describe(s_.good);
    result.bad = describe(s_.bad);
    result.backend = std::string(to_string(s_.which));
    result.commits = commits_.size() - 1;
    const endpoint_effect ends = measure_endpoints_or_clean_up();
    result.counter = s_.counter;
    result.effect = ends.shift;
    const double effect = ends.shift.estimate;
    const bool changed = deterministic(s_.which)
                             ? std::abs(effect) >= gate::deterministic_floor * std::abs(values_[s_.good])
                             : (ends.shift.lower > 0 || ends.shift.upper < 0);
    if (changed) {
        search(result, effect);
    } else {
        result.status = "no_change";
        say(fmt::format("--good and --bad measure alike on {}: nothing to bisect", s_.counter));
    }
    for (const auto& st : steps_) {
        result.steps.push_back({st.lo, st.mid, st.hi, st.decision, st.from_good, st.to_bad, st.effect, st.repetitions,
                                st.why});
    }
    result.builds = builds_.size();
    result.measured_commits = measured_.size();
    result.executions = executions_;
    save_state();
    remove_trees();
    return result;
}

// --alert ID: the range of the alert's change point. bad: the commit of the
// change's first run (the first at or after the change); good: the commit of
// the series's run before it (the last before). An alert the store or server
// does not have is a usage error naming it (exit 2), before anything is built.
void range_from_alert(const parsed_args& args, bisect_settings& s, std::int64_t& alert_id)
{
    const auto id = args.get_int("alert", 1, std::numeric_limits<std::int64_t>::max());
    alert_id = *id;
    target_rules rules = local_default_rules();
    rules.token_required = false;       // a read: a --public-read server needs none
    rules.default_db_must_exist = true; // never an empty store where the user expected theirs
    target where = target_from(args, rules);
    model::alert alert;
    std::vector<model::history_point> before;
    const auto unknown = [&](const error& e) {
        bisect_error(errors::usage_bad_value,
                     fmt::format("--alert {}: project '{}' has no such alert ({})", alert_id, where.project, e.what()));
    };
    model::history_query q;
    try {
        std::optional<store::store> db;
        std::optional<service::service> svc;
        if (!where.server) svc.emplace(db.emplace(where.db));
        try {
            alert = where.server ? where.server->alert(alert_id) : svc->alerts().get(where.project, alert_id);
        } catch (const error& e) {
            if (e.id() == errors::alert_not_found || e.id() == errors::store_not_found ||
                e.id() == errors::server_rejected)
                unknown(e);
            throw;
        }
        const auto& c = alert.change;
        q.project = where.project;
        q.benchmark = c.series.benchmark;
        q.counter = c.series.counter;
        q.branch = c.series.branch;
        q.testbed = c.series.testbed;
        // The store answers "before this run" itself; a server's history
        // route has no such filter: its newest points are read and the run
        // before the change is picked here.
        q.before_run = c.run_id;
        q.mainline_only = true;
        q.limit = api::max_history_limit;
        before = where.server ? where.server->history(q) : svc->history().points(q);
        std::erase_if(before, [&](const model::history_point& p) { return p.run_id >= c.run_id; });
        std::sort(before.begin(), before.end(),
                  [](const model::history_point& x, const model::history_point& y) { return x.run_id < y.run_id; });
    } catch (const error& e) {
        if (e.id().starts_with("usage.")) throw;
        throw error(e.id(), fmt::format("perfgate bisect: --alert {}: {}", alert_id, e.what()));
    }
    if (alert.change.git_sha.empty() || before.empty() || before.back().git_sha.empty()) {
        bisect_error(errors::input_bisect_range,
                     fmt::format("--alert {}: {}: name the range with --good and --bad", alert_id,
                                 before.empty() ? fmt::format("no run before the change among the series's "
                                                              "newest {} points",
                                                              api::max_history_limit)
                                                : "a run around the change has no commit (--sha, "
                                                  "docs/history.md#which-commit-a-run-measured)"));
    }
    s.good = before.back().git_sha;
    s.bad = alert.change.git_sha;
    s.alert = alert_id;
    if (s.counter.empty()) s.counter = alert.change.series.counter;
    if (s.name == "default") s.name = alert.change.series.benchmark;
}

// The result stored on its alert (docs/bisect.md "Stored on the alert"):
// on the server or database that --alert read (--resume: the one its
// command line names again). A failure is the command's error, after the
// report was written: the bisection is in the state file, and
// `perfgate bisect --resume` with the store named stores it without
// measuring again.
void store_on_alert(const parsed_args& args, const bisect_result& result, bool resumed)
{
    const std::int64_t id = *result.alert;
    if (resumed && !args.has("server") && !args.has("db")) {
        std::cerr << fmt::format("perfgate bisect: warning: the result was not stored on alert {}: name its store "
                                 "(--server URL --project P, or --db PATH) with --resume, or pass --no-store\n",
                                 id);
        return;
    }
    target_rules rules = local_default_rules();
    rules.default_db_must_exist = true;
    target where = target_from(args, rules);
    const model::alert_culprit k = culprit_of(result);
    try {
        if (where.server) {
            where.server->put_culprit(id, k);
        } else {
            store::store db(where.db);
            service::service svc(db);
            svc.alerts().put_culprit(where.project, id, k);
        }
    } catch (const error& e) {
        throw error(e.id(), fmt::format("perfgate bisect: storing the result on alert {}: {}", id, e.what()));
    }
    std::cerr << fmt::format("perfgate bisect: stored on alert {} ({})\n", id, model::to_string(k.status));
}

} // namespace

const command_spec& bisect_spec() { return bisect_command; }

int cmd_bisect(const argv_t& argv)
{
    const auto parsed = parse_args(bisect_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    no_positional(args);
    const report_format format = parse_format(args.get("format").value_or("text"));
    if (format == report_format::junit)
        bisect_error(errors::usage_bad_value, "--format junit: a bisection has no test cases; text, json or markdown");
    std::optional<double> budget;
    if (auto b = args.get_double("budget")) {
        if (!(*b > 0)) bisect_error(errors::usage_bad_value, "--budget: expected a positive number of seconds");
        budget = *b;
    }
    const bool resume = args.has("resume");
    std::int64_t alert_id = 0;
    bisect_settings settings;
    fs::path work;
    if (resume) {
        for (const char* o :
             {"good", "bad", "build", "bench", "backend", "counter", "events", "repetitions", "max-repetitions",
              "alpha", "resolution", "enter-merges", "first-parent", "name", "alert"}) {
            if (args.has(o)) {
                bisect_error(errors::usage_conflict,
                             fmt::format("--resume continues the recorded bisection: --{} is the state file's", o));
            }
        }
        settings.repo = fs::absolute(args.get("repo").value_or("."));
    } else {
        if (args.has("no-store") && !args.has("alert"))
            bisect_error(errors::usage_conflict, "--no-store: only with --alert (or --resume), whose alert it skips");
        settings = settings_from_args(args);
        if (args.has("alert")) range_from_alert(args, settings, alert_id);
    }
    work = args.get("work-dir") ? fs::absolute(*args.get("work-dir")) : settings.repo / ".perfgate" / "bisect";
    bisection b(settings, work, args.has("quiet"));
    if (resume) b.load_state();
    b.check_repository();
    if (!resume) b.list_commits();
    kill_children_on_interrupt();
    bisect_result result = b.run(budget);
    if (alert_id) result.alert = alert_id;
    if (!result.alert) result.alert = b.alert();
    const std::string text = render_bisect(result, format);
    std::cout << text << std::flush;
    if (auto out = args.get("output")) {
        std::ofstream f(*out, std::ios::trunc);
        f << text;
        if (!f) throw error(errors::io_write, fmt::format("--output {}: cannot write", *out));
    }
    if (result.alert && !args.has("no-store")) store_on_alert(args, result, resume);
    return result.status == "found" ? exit_pass : exit_inconclusive;
}

} // namespace perfgate::cli
