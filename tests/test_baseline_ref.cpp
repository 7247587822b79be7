// Issue 33, item 1: a pull request is measured against the right commit.
// Real git repositories made here, real builds (gcc), callgrind's exact
// instruction counts, a fake GitHub: a PR forked before main got faster is
// gated against its merge-base and passes where base-tip fails it; a
// baseline checkout at another commit, and a shallow clone, are refused
// with the fix; the rule and both commits reach the comment, the report
// and the stored comparison.
#include "fake_github.hpp"
#include "support/process.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "store/comparisons.hpp"
#include "store/runs.hpp"
#include "store/store.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using perfgate::test::run_perfgate;
using perfgate::test::shell_output;
using perfgate::test::shell_quoted;
using perfgate::test::temp_dir;

std::string program(long iterations)
{
    return fmt::format("#include <stdio.h>\nint main(void) {{\n    volatile unsigned long s = 0;\n"
                       "    for (unsigned long i = 0; i < {}UL; ++i) s += i * 7;\n"
                       "    printf(\"%lu\\n\", (unsigned long)s);\n    return 0;\n}}\n",
                       iterations);
}

// main: A (slow), then B (3x faster); the PR branch forks at A and changes
// only its README (H). Each commit's program is built in its own checkout.
struct history {
    fs::path repo;
    std::string a, b, h;
    std::string git;

    explicit history(const fs::path& dir) : repo(dir / "repo")
    {
        fs::create_directories(repo);
        git = "git -C " + shell_quoted(repo) + " -c user.name=t -c user.email=t@example.com ";
        shell_output(git + "init -q -b main");
        std::ofstream(repo / "prog.c") << program(300000);
        shell_output(git + "add prog.c && " + git + "commit -q -m A");
        a = shell_output(git + "rev-parse HEAD");
        shell_output(git + "checkout -q -b feature");
        std::ofstream(repo / "README") << "a change that does not touch the program\n";
        shell_output(git + "add README && " + git + "commit -q -m H");
        h = shell_output(git + "rev-parse HEAD");
        shell_output(git + "checkout -q main");
        std::ofstream(repo / "prog.c") << program(100000);
        shell_output(git + "commit -q -am B");
        b = shell_output(git + "rev-parse HEAD");
        shell_output(git + "checkout -q feature");
    }

    // A checkout of sha at dir/name with its program built there.
    fs::path build(const fs::path& dir, const std::string& name, const std::string& sha) const
    {
        const fs::path tree = dir / name;
        shell_output(git + "worktree add -q --detach " + shell_quoted(tree) + " " + sha);
        shell_output("gcc -O1 -o " + shell_quoted(tree / "prog") + " " + shell_quoted(tree / "prog.c"));
        return tree;
    }
};

struct pr_job {
    perfgate::test::fake_github gh;
    fs::path dir;
    std::vector<std::pair<std::string, std::string>> env;

    pr_job(const fs::path& d, const history& hist) : dir(d)
    {
        std::ofstream(dir / "event.json")
            << json{{"pull_request", {{"number", 5}, {"head", {{"sha", hist.h}}}, {"base", {{"sha", hist.b}}}}}}.dump();
        env = {{"GITHUB_ACTIONS", "true"},
               {"GITHUB_API_URL", gh.url()},
               {"GITHUB_SERVER_URL", "https://github.example"},
               {"GITHUB_REPOSITORY", "octo/widgets"},
               {"GITHUB_EVENT_NAME", "pull_request"},
               {"GITHUB_EVENT_PATH", (dir / "event.json").string()},
               {"GITHUB_TOKEN", "ghs_faketoken"},
               {"GITHUB_SHA", std::string(40, 'e')},
               {"GITHUB_REF_NAME", "5/merge"},
               {"GITHUB_HEAD_REF", "feature"},
               {"GITHUB_BASE_REF", "main"},
               {"GITHUB_RUN_ID", "1"},
               {"GITHUB_STEP_SUMMARY", (dir / "summary.md").string()},
               {"GITHUB_OUTPUT", (dir / "output.txt").string()}};
    }

    perfgate::test::cli_result run(const std::vector<std::string>& extra, const fs::path& baseline,
                                   const fs::path& candidate, const std::string& db)
    {
        std::vector<std::string> args = {"run",         "-q",
                                         "--backend",   "callgrind",
                                         "--baseline",  (baseline / "prog").string(),
                                         "--candidate", (candidate / "prog").string(),
                                         "--db",        db,
                                         "--format",    "json",
                                         "--output",    (dir / "report.json").string(),
                                         "--github"};
        args.insert(args.end(), extra.begin(), extra.end());
        return run_perfgate(args, dir, env);
    }

    // The report the last run wrote with --output (stdout also holds the
    // publisher's log lines).
    json report() const
    {
        std::ifstream in(dir / "report.json");
        return json::parse(in);
    }
};

} // namespace

TEST_CASE("baseline-ref: merge-base gates what the PR changed, base-tip charges it for main's speed-up")
{
    temp_dir dir("pg-baseline");
    const history hist(dir.path());
    const fs::path head = hist.build(dir.path(), "head", hist.h);
    const fs::path merge_base = hist.build(dir.path(), "mb", hist.a);
    const fs::path tip = hist.build(dir.path(), "tip", hist.b);

    SUBCASE("perfgate baseline names each rule's commit, and writes the step outputs")
    {
        const auto mb = run_perfgate({"baseline", "--repo", head.string(), "--base", hist.b}, dir.path());
        CAPTURE(mb.err);
        REQUIRE(mb.code == 0);
        CHECK(mb.out == hist.a + "\n");
        CHECK(run_perfgate({"baseline", "--repo", head.string(), "--base", hist.b, "--baseline-ref", "base-tip"},
                           dir.path())
                  .out == hist.b + "\n");
        CHECK(run_perfgate({"baseline", "--repo", head.string(), "--baseline-ref", "parent"}, dir.path()).out ==
              hist.a + "\n");
        // In a pull_request job: the event's head and base, and GITHUB_OUTPUT.
        pr_job job(dir.path(), hist);
        const auto in_job = run_perfgate({"baseline", "--repo", head.string()}, dir.path(), job.env);
        CAPTURE(in_job.err);
        CHECK(in_job.out == hist.a + "\n");
        std::ifstream outputs(dir.path() / "output.txt");
        const std::string written((std::istreambuf_iterator<char>(outputs)), std::istreambuf_iterator<char>());
        CHECK(written == "sha=" + hist.a + "\nrule=merge-base\n");
        const auto bad = run_perfgate({"baseline", "--baseline-ref", "fork-point"}, dir.path(), job.env);
        CHECK(bad.code == 2);
        CHECK(bad.err.find("expected merge-base, base-tip or parent") != std::string::npos);
    }
    SUBCASE("run --github: merge-base (the default) passes, base-tip fails; the rule is in the comment and the store")
    {
        pr_job job(dir.path(), hist);
        const std::string db = (dir.path() / "h.db").string();
        const auto passed = job.run({"--repo", head.string(), "--baseline-dir", merge_base.string()}, merge_base, head,
                                    db);
        CAPTURE(passed.err);
        CHECK(passed.code == 0);
        const json report = job.report();
        CHECK(report.at("verdict") == "pass");
        CHECK(report.at("baseline_ref") ==
              json{{"rule", "merge-base"}, {"baseline_sha", hist.a}, {"base_tip_sha", hist.b}, {"head_sha", hist.h}});
        auto comments = job.gh.comments(5);
        REQUIRE(comments.size() == 1);
        // The head: both commits (linked to the repository), the rule, the base tip.
        CAPTURE(comments[0].body);
        CHECK(comments[0].body.find(fmt::format("`{}`]", hist.h.substr(0, 7))) != std::string::npos);
        CHECK(comments[0].body.find(fmt::format("`{}`]", hist.a.substr(0, 7))) != std::string::npos);
        CHECK(comments[0].body.find(fmt::format(", the **merge-base** (base tip [`{}`]", hist.b.substr(0, 7))) !=
              std::string::npos);
        CHECK(comments[0].body.find("backend **callgrind**") != std::string::npos);
        {
            perfgate::store::store s(db);
            const auto base_run = s.runs().load("default", 1);
            REQUIRE(base_run.has_value());
            CHECK(base_run->git_sha == hist.a); // the history names the commit measured
            const auto stored = s.comparisons().load("default", 1);
            REQUIRE(stored.has_value());
            CHECK(json::parse(*stored).at("baseline_ref").at("rule") == "merge-base");
        }

        // The same PR against main's tip: charged for B's speed-up.
        const auto failed = job.run(
            {"--repo", head.string(), "--baseline-ref", "base-tip", "--baseline-dir", tip.string()}, tip, head, db);
        CAPTURE(failed.err);
        CHECK(failed.code == 1);
        CHECK(job.report().at("baseline_ref").at("baseline_sha") == hist.b);
    }
    SUBCASE("a baseline checkout at another commit is refused before measuring, naming both")
    {
        pr_job job(dir.path(), hist);
        const auto r = job.run({"--repo", head.string(), "--baseline-dir", tip.string()}, tip, head,
                               (dir.path() / "x.db").string());
        CHECK(r.code == 2);
        CHECK(r.err.find("input.git") != std::string::npos);
        CHECK(r.err.find(fmt::format("is at commit {}, but the baseline is {} (baseline-ref merge-base)", hist.b,
                                     hist.a)) != std::string::npos);
        CHECK(job.gh.comments(5).empty());
        // --base-sha naming another commit than the rule's: the same.
        const auto named = job.run({"--repo", head.string(), "--base-sha", hist.b}, tip, head,
                                   (dir.path() / "y.db").string());
        CHECK(named.code == 2);
        CHECK(named.err.find("is not the baseline that --baseline-ref merge-base names") != std::string::npos);
    }
    SUBCASE("a shallow clone: exit 2 with the fix; not a repository: named")
    {
        const fs::path shallow = dir.path() / "shallow";
        shell_output(fmt::format("git clone -q --depth 1 --branch feature file://{} {}", hist.repo.string(),
                                 shell_quoted(shallow)));
        pr_job job(dir.path(), hist);
        const auto r = run_perfgate({"baseline", "--repo", shallow.string()}, dir.path(), job.env);
        CHECK(r.code == 2);
        CHECK(r.err.find("input.shallow_clone") != std::string::npos);
        CHECK(r.err.find("fetch-depth: 0") != std::string::npos);
        const auto run = job.run({"--repo", shallow.string()}, merge_base, head, (dir.path() / "z.db").string());
        CHECK(run.code == 2);
        CHECK(run.err.find("fetch-depth: 0") != std::string::npos);
        const auto none = run_perfgate({"baseline", "--repo", dir.path().string()}, dir.path(), job.env);
        CHECK(none.code == 2);
        CHECK(none.err.find("is not a git repository") != std::string::npos);
    }
}
