// Tests of runner/attribution: where a regression came from under
// --backend callgrind (issue 12). Library tests on hand-written callgrind
// files, then the real perfgate binary under real valgrind on the two
// builds of profile_vector.cpp (by const reference, by value), a stripped
// program, and a fake valgrind that writes a corrupt profile.
#include "runner/attribution.hpp"

#include <doctest/doctest.h>

#include "report/render.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

#include "support/process.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/process.hpp"

using namespace perfgate;
using namespace perfgate::runner;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using namespace perfgate::test;

const std::string by_ref = PERFGATE_BINARY_DIR "/tests/profile_vector_by_ref";
const std::string by_value = PERFGATE_BINARY_DIR "/tests/profile_vector_by_value";

fs::path write_file(const fs::path& p, const std::string& text)
{
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

// A callgrind file with one cost line of Ir per function: {name, file, Ir}.
struct fn_cost {
    std::string name, file;
    int ir;
};
std::string callgrind_text(const std::vector<fn_cost>& fns)
{
    std::string out = "# callgrind format\nversion: 1\ncreator: test\npositions: line\nevents: Ir\n";
    for (const auto& f : fns) out += "fl=" + f.file + "\nfn=" + f.name + "\n1 " + std::to_string(f.ir) + "\n";
    return out;
}

gate::report fail_report(const std::vector<std::string>& names, const std::vector<gate::verdict>& verdicts)
{
    gate::report r;
    for (std::size_t i = 0; i < names.size(); ++i) {
        gate::benchmark_report b;
        b.name = names[i];
        b.result = verdicts[i];
        r.benchmarks.push_back(b);
    }
    return r;
}

benchmark_measurement measured(const std::string& name, std::vector<fs::path> base, std::vector<fs::path> cand,
                               const std::string& backend_name = "callgrind")
{
    benchmark_measurement m;
    m.name = name;
    m.baseline.run.backend = m.candidate.run.backend = backend_name;
    m.baseline.profiles = std::move(base);
    m.candidate.profiles = std::move(cand);
    return m;
}

// The real callgrind output of `program` (one process).
fs::path callgrind_of(const fs::path& dir, const std::string& program, const std::string& tag)
{
    const auto out = dir / ("callgrind." + tag);
    spawn_options so;
    so.argv = {"valgrind", "--tool=callgrind", "-q", "--callgrind-out-file=" + out.string(), program};
    so.disable_aslr = true;
    REQUIRE(run_process(so, 120s).status.success());
    return out;
}

} // namespace

TEST_CASE("attribution: rows by change of exclusive Ir, with files and shares, children summed")
{
    temp_dir dir("pg-attr");
    const auto base = write_file(
        dir.path() / "b.1",
        callgrind_text({{"main", "main.cpp", 100}, {"helper(int)", "util.cpp", 50}, {"gone()", "old.cpp", 30}}));
    // The candidate ran a child process: its profile is a second file.
    const auto cand = write_file(dir.path() / "c.1",
                                 callgrind_text({{"main", "main.cpp", 100}, {"helper(int)", "util.cpp", 250}}));
    const auto child = write_file(dir.path() / "c.2", callgrind_text({{"memcpy", "???", 120}}));

    const auto a = callgrind_attribution({base}, {cand, child});
    CHECK(a.errors.empty());
    REQUIRE(a.callgrind);
    const auto& cg = *a.callgrind;
    CHECK(cg.event == "Ir");
    CHECK(cg.total_before == 180);
    CHECK(cg.total_after == 470);
    REQUIRE(cg.top.size() == 3); // main did not change: not listed
    CHECK(cg.top[0].name == "helper(int)");
    CHECK(cg.top[0].file == "util.cpp");
    CHECK(cg.top[0].before == 50);
    CHECK(cg.top[0].after == 250);
    CHECK(cg.top[0].delta == 200);
    CHECK(cg.top[0].share == doctest::Approx(200.0 / 350));
    CHECK(cg.top[1].name == "memcpy");
    CHECK(cg.top[1].file.empty()); // "???": no debug info
    CHECK(cg.top[2].name == "gone()");
    CHECK(cg.top[2].file == "old.cpp"); // gone from the candidate: the baseline's file
    CHECK(cg.top[2].delta == -30);
    CHECK(cg.top[2].share == doctest::Approx(-30.0 / 350));
    CHECK_FALSE(cg.top[0].interval); // perf only
    CHECK_FALSE(cg.top[0].significant);

    SUBCASE("--top N cuts the list, not the shares")
    {
        attribution_options opt;
        opt.top = 1;
        const auto one = callgrind_attribution({base}, {cand, child}, opt);
        REQUIRE(one.callgrind->top.size() == 1);
        CHECK(one.callgrind->top[0].share == doctest::Approx(200.0 / 350));
    }
    SUBCASE("the same profiles twice: an empty list")
    {
        const auto same = callgrind_attribution({base}, {base});
        REQUIRE(same.callgrind);
        CHECK(same.callgrind->top.empty());
        CHECK(same.callgrind->total_before == same.callgrind->total_after);
    }
}

TEST_CASE("attribution: bad profiles are errors, never exceptions")
{
    temp_dir dir("pg-attr");
    const auto good = write_file(dir.path() / "good", callgrind_text({{"main", "m.cpp", 10}}));
    auto error_of = [](const gate::attribution& a) {
        REQUIRE(a.errors.size() == 1);
        CHECK_FALSE(a.callgrind);
        CHECK(a.errors[0].source == "callgrind");
        return a.errors[0];
    };
    SUBCASE("corrupt: the parser's message names the file and line")
    {
        const auto bad = write_file(dir.path() / "bad", callgrind_text({{"main", "m.cpp", 10}}) + "fn=x\n1 abc\n");
        const auto e = error_of(callgrind_attribution({good}, {bad}));
        CHECK(e.id == "profile.bad_callgrind");
        CHECK(e.message == (dir.path() / "bad").string() + ":10: cost 'abc' is not a 64-bit unsigned number");
    }
    SUBCASE("over the size limit")
    {
        attribution_options opt;
        opt.limits.max_file_bytes = 64;
        const auto e = error_of(callgrind_attribution({good}, {good}, opt));
        CHECK(e.id == "profile.too_large");
        CHECK(e.message.find("more than the limit of 64 bytes") != std::string::npos);
    }
    SUBCASE("no Ir event (a file of another tool's events)")
    {
        const auto other = write_file(dir.path() / "other", "events: Dr\nfn=main\n1 5\n");
        const auto e = error_of(callgrind_attribution({good}, {other}));
        CHECK(e.id == "profile.unknown_event");
        CHECK(e.message == "the profile has no event 'Ir' (it has: Dr)");
    }
    SUBCASE("missing: no file kept, or a file that is gone")
    {
        auto e = error_of(callgrind_attribution({}, {good}));
        CHECK(e.id == "attribution.no_profile");
        e = error_of(callgrind_attribution({good}, {dir.path() / "nonexistent"}));
        CHECK(e.id == "profile.unreadable");
    }
}

TEST_CASE("attribution: a stripped program is named as such, with the fix")
{
    CHECK(unnamed_function("0x0000000000401136"));
    CHECK(unnamed_function("0x10a2c0"));
    CHECK_FALSE(unnamed_function("0x"));
    CHECK_FALSE(unnamed_function("0xzz"));
    CHECK_FALSE(unnamed_function("main"));
    CHECK_FALSE(unnamed_function("0x1234'2"));

    temp_dir dir("pg-attr");
    const auto named = write_file(dir.path() / "named",
                                  callgrind_text({{"main", "m.cpp", 100}, {"0x401000", "???", 40}}));
    const auto stripped = write_file(dir.path() / "stripped", callgrind_text({{"0x0000000000401136", "???", 900},
                                                                              {"0x0000000000401200", "???", 50},
                                                                              {"memcpy", "???", 100}}));
    const auto a = callgrind_attribution({named}, {stripped});
    REQUIRE(a.errors.size() == 1);
    CHECK_FALSE(a.callgrind);
    CHECK(a.errors[0].id == "attribution.stripped");
    CHECK(a.errors[0].message.find("the candidate profile has 90% of its instructions in functions callgrind knows "
                                   "only by address (such as 0x0000000000401136)") != std::string::npos);
    CHECK(a.errors[0].message.find("compile with -g and do not strip it") != std::string::npos);
    // 40 of 140 unnamed is not "mostly": the attribution stands.
    CHECK(callgrind_attribution({named}, {named}).callgrind);
}

TEST_CASE("attribution: only failed benchmarks measured under callgrind, merged with what is there")
{
    temp_dir dir("pg-attr");
    const auto b = write_file(dir.path() / "b", callgrind_text({{"f", "f.cpp", 10}}));
    const auto c = write_file(dir.path() / "c", callgrind_text({{"f", "f.cpp", 30}}));
    const auto bad = write_file(dir.path() / "bad", "garbage\n");
    auto r = fail_report({"slow", "same", "perf-run", "broken"},
                         {gate::verdict::fail, gate::verdict::pass, gate::verdict::fail, gate::verdict::fail});
    // Another source's part (perf --profile) is kept.
    r.benchmarks[3].attribution_info.emplace().perf.emplace().event = "cpu-clock";
    const auto warnings = attribute_regressions(r,
                                                {measured("slow", {b}, {c}), measured("same", {b}, {b}),
                                                 measured("perf-run", {}, {}, "perf"), measured("broken", {b}, {bad})});
    REQUIRE(r.benchmarks[0].attribution_info);
    REQUIRE(r.benchmarks[0].attribution_info->callgrind);
    CHECK(r.benchmarks[0].attribution_info->callgrind->top.at(0).delta == 20);
    CHECK_FALSE(r.benchmarks[1].attribution_info); // pass: nothing to explain
    CHECK_FALSE(r.benchmarks[2].attribution_info); // not callgrind
    const auto& broken = *r.benchmarks[3].attribution_info;
    CHECK(broken.perf);
    CHECK_FALSE(broken.callgrind);
    REQUIRE(broken.errors.size() == 1);
    CHECK(broken.errors[0].id == "profile.bad_callgrind");
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].starts_with("benchmark 'broken': callgrind attribution failed (the verdict stands): "));
}

TEST_CASE("artifacts: one directory per benchmark inside DIR, raw profiles and attribution.json")
{
    CHECK(artifact_dir("/a", "BM_Sort/1024") == fs::path("/a/BM_Sort%2F1024"));
    CHECK(artifact_dir("/a", "..") == fs::path("/a/%2E."));
    CHECK(artifact_dir("/a", "a/../..") == fs::path("/a/a%2F..%2F.."));
    CHECK(artifact_dir("/a", "x%2F") == fs::path("/a/x%252F"));
    CHECK(artifact_dir("/a", "default") == fs::path("/a/default"));

    temp_dir dir("pg-attr");
    const auto b = write_file(dir.path() / "callgrind.100", callgrind_text({{"f", "f.cpp", 10}}));
    const auto c = write_file(dir.path() / "callgrind.200", callgrind_text({{"f", "f.cpp", 30}}));
    const auto c_child = write_file(dir.path() / "callgrind.201", callgrind_text({{"g", "g.cpp", 5}}));
    auto r = fail_report({"BM/1", "ok"}, {gate::verdict::fail, gate::verdict::pass});
    const std::vector<benchmark_measurement> m = {measured("BM/1", {b}, {c, c_child}), measured("ok", {b}, {b})};
    REQUIRE(attribute_regressions(r, m).empty());
    const auto root = dir.path() / "artifacts";
    CHECK(write_artifacts(r, m, root).empty());

    const auto bench = root / "BM%2F1";
    CHECK(model::read_text_file(bench / "baseline.callgrind") == model::read_text_file(b));
    CHECK(model::read_text_file(bench / "candidate.callgrind") == model::read_text_file(c));
    CHECK(model::read_text_file(bench / "candidate.callgrind.201") == model::read_text_file(c_child));
    const auto j = nlohmann::json::parse(model::read_text_file(bench / "attribution.json"));
    CHECK(j["benchmark"] == "BM/1");
    CHECK(j["callgrind"]["top"][0]["name"] == "f");
    CHECK(j["callgrind"]["top"][1]["name"] == "g");
    CHECK_FALSE(fs::exists(root / "ok")); // passed: no attribution, no artifacts

    SUBCASE("an unwritable DIR is a warning")
    {
        write_file(dir.path() / "file", "x");
        const auto warnings = write_artifacts(r, m, dir.path() / "file");
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0].starts_with("benchmark 'BM/1': could not write the artifacts to " +
                                      (dir.path() / "file" / "BM%2F1").string()));
    }
}

TEST_CASE("attribution: the same program twice under real callgrind gives an empty list")
{
    temp_dir dir("pg-attr");
    const auto first = callgrind_of(dir.path(), by_ref, "1");
    const auto second = callgrind_of(dir.path(), by_ref, "2");
    const auto a = callgrind_attribution({first}, {second});
    CHECK(a.errors.empty());
    REQUIRE(a.callgrind);
    INFO((a.callgrind->top.empty() ? std::string() : a.callgrind->top[0].name));
    CHECK(a.callgrind->top.empty());
    CHECK(a.callgrind->total_before > 100'000);
}

TEST_CASE("perfgate run --backend callgrind: the vector copied by value is where the regression came from")
{
    temp_dir dir("pg-attr");
    const auto r = run_perfgate({"run", "-q", "--backend", "callgrind", "--db", "h.db", "--baseline", by_ref,
                                 "--candidate", by_value, "--format", "json", "--artifacts", "art", "--top", "5"},
                                dir.path());
    CAPTURE(r.err);
    CHECK(r.code == 1);
    const auto report = nlohmann::json::parse(r.out);
    const auto& a = report["benchmarks"][0]["attribution"];
    REQUIRE(a.contains("callgrind"));
    const auto& top = a["callgrind"]["top"];
    REQUIRE(top.size() == 5);
    // The top contributor is the function that takes the vector by value
    // (its loop can no longer be hoisted out of main's: a copy per call) or
    // the copy itself.
    const std::string first = top[0]["name"];
    CAPTURE(first);
    const bool by_value_fn = first == "checksum(std::vector<int, std::allocator<int> >)";
    const bool copy_fn = first.find("memcpy") != std::string::npos || first.find("memmove") != std::string::npos;
    CHECK((by_value_fn || copy_fn));
    CHECK(top[0]["delta"].get<double>() > 0);
    CHECK(top[0]["share"].get<double>() > 0.5);
    // The workload's own source file. Only its place in the tree is checked:
    // a compiler cache may serve an object compiled in another checkout, or
    // record the path relative to the build directory.
    const std::string file = top[0]["file"];
    CAPTURE(file);
    CHECK(file.ends_with("/tests/profile_vector.cpp"));
    // The copy (8 copies of 256 KiB) is among the top three.
    bool copy_listed = false;
    for (std::size_t i = 0; i < 3; ++i) {
        const std::string n = top[i]["name"];
        copy_listed = copy_listed || n.find("memcpy") != std::string::npos || n.find("memmove") != std::string::npos;
    }
    CHECK(copy_listed);
    CHECK_FALSE(a.contains("errors"));

    // The artifacts: raw profiles that callgrind_annotate reads, and the same attribution.
    const auto art = dir.path() / "art" / "default";
    CHECK(model::read_text_file(art / "baseline.callgrind").starts_with("# callgrind format"));
    CHECK(model::read_text_file(art / "candidate.callgrind").find("checksum") != std::string::npos);
    auto j = nlohmann::json::parse(model::read_text_file(art / "attribution.json"));
    j.erase("benchmark");
    CHECK(j == a);

    // Stored with the comparison: the stored report has it (and so its dashboard page).
    {
        perfgate::store::store db(dir.path() / "h.db");
        perfgate::service::service svc(db);
        const auto stored = svc.comparisons().load("default", report["comparison_id"].get<std::int64_t>());
        REQUIRE(stored.has_value());
        REQUIRE(stored->benchmarks[0].attribution_info.has_value());
        CHECK(perfgate::report::to_json(*stored->benchmarks[0].attribution_info) == a);
    }

    SUBCASE("markdown: the collapsed table")
    {
        const auto md = run_perfgate({"run", "-q", "--backend", "callgrind", "--db", "h.db", "--baseline", by_ref,
                                      "--candidate", by_value, "--format", "markdown"},
                                     dir.path());
        CHECK(md.code == 1);
        CHECK(md.out.find("<details><summary>Where did it come from</summary>") != std::string::npos);
        CHECK(md.out.find("| checksum\\(std::vector&lt;int, std::allocator&lt;int&gt; &gt;\\) |") != std::string::npos);
    }
    SUBCASE("A/A: the same build on both sides passes and shows nothing")
    {
        const auto aa = run_perfgate({"run", "-q", "--backend", "callgrind", "--db", "h.db", "--baseline", by_ref,
                                      "--candidate", by_ref, "--format", "json", "--artifacts", "aa"},
                                     dir.path());
        CAPTURE(aa.err);
        CHECK(aa.code == 0);
        const auto rep = nlohmann::json::parse(aa.out);
        CHECK_FALSE(rep["benchmarks"][0].contains("attribution"));
        CHECK_FALSE(fs::exists(dir.path() / "aa"));
    }
}

TEST_CASE("perfgate run --backend callgrind --cache-sim: estimated-cycles, deterministic and gated")
{
    temp_dir dir("pg-attr");
    const auto r = run_perfgate({"run", "-q", "--backend", "callgrind", "--cache-sim", "--db", "h.db", "--baseline",
                                 by_ref, "--candidate", by_ref, "--format", "json"},
                                dir.path());
    CAPTURE(r.err);
    CHECK(r.code == 0);
    const auto report = nlohmann::json::parse(r.out);
    const nlohmann::json* est = nullptr;
    for (const auto& c : report["benchmarks"][0]["counters"]) {
        if (c["name"] == "estimated-cycles") est = &c;
    }
    REQUIRE(est != nullptr);
    CHECK((*est)["gated"] == true);
    CHECK((*est)["method"] == "deterministic");
    CHECK((*est)["delta_pct"] == 0.0);
    // Above Ir: every miss adds 10 or 100.
    double ir = 0;
    for (const auto& c : report["benchmarks"][0]["counters"]) {
        if (c["name"] == "instructions") ir = c["baseline"]["median"];
    }
    CHECK((*est)["baseline"]["median"].get<double>() > ir);
}

TEST_CASE("perfgate run --backend callgrind: attribution failures never change the verdict")
{
    temp_dir dir("pg-attr");
    SUBCASE("a corrupt profile (a fake valgrind on PATH)")
    {
        // Writes what callgrind would, with the Ir the benchmark's command
        // prints as its first argument, then a line no callgrind file has.
        const auto bin = dir.path() / "bin";
        fs::create_directories(bin);
        write_file(bin / "valgrind",
                   "#!/bin/sh\n"
                   "for a in \"$@\"; do case \"$a\" in --callgrind-out-file=*) out=${a#*=};; esac; done\n"
                   "last=\"\"; for a in \"$@\"; do last=\"$a\"; done\n"
                   "out=$(echo \"$out\" | sed \"s/%p/$$/\")\n"
                   "printf 'version: 1\\nevents: Ir\\nsummary: %s\\nfl=x.c\\nfn=main\\n1 %s\\n"
                   "this is not callgrind\\n' \"$last\" \"$last\" > \"$out\"\n");
        fs::permissions(bin / "valgrind", fs::perms::owner_all);
        const std::string path = bin.string() + ":" + std::getenv("PATH");
        const auto r = run_perfgate({"run", "--backend", "callgrind", "--db", "h.db", "--baseline", "echo 1000",
                                     "--candidate", "echo 2000", "--format", "json", "--artifacts", "art"},
                                    dir.path(), {{"PATH", path}});
        CAPTURE(r.err);
        CHECK(r.code == 1); // the regression stands
        const auto report = nlohmann::json::parse(r.out);
        CHECK(report["verdict"] == "fail");
        const auto& a = report["benchmarks"][0]["attribution"];
        CHECK_FALSE(a.contains("callgrind"));
        REQUIRE(a["errors"].size() == 1); // both sides' files are corrupt: the first one read is named
        CHECK(a["errors"][0]["id"] == "profile.bad_callgrind");
        CHECK(a["errors"][0]["message"].get<std::string>().find(":7: not a callgrind line: 'this is not callgrind'") !=
              std::string::npos);
        CHECK(r.err.find("perfgate run: warning: benchmark 'default': callgrind attribution failed (the verdict "
                         "stands): ") != std::string::npos);
        // The raw (corrupt) profiles are still there to look at.
        CHECK(fs::exists(dir.path() / "art" / "default" / "candidate.callgrind"));
    }
    SUBCASE("a stripped program")
    {
        write_file(dir.path() / "p.c", "#include <stdlib.h>\n"
                                       "int main(int argc, char** argv){volatile long s=0; long n = argc > 1 ? "
                                       "atol(argv[1]) : 1; for(long i=0;i<n;i++) s+=i; return 0;}\n");
        spawn_options cc;
        cc.argv = {"cc", "-O1", "-s", "-o", (dir.path() / "p").string(), (dir.path() / "p.c").string()};
        REQUIRE(run_process(cc).status.success());
        const std::string p = (dir.path() / "p").string();
        const auto r = run_perfgate({"run", "--backend", "callgrind", "--db", "h.db", "--baseline", p + " 300000",
                                     "--candidate", p + " 600000", "--format", "json"},
                                    dir.path());
        CAPTURE(r.err);
        CHECK(r.code == 1);
        const auto report = nlohmann::json::parse(r.out);
        const auto& a = report["benchmarks"][0]["attribution"];
        REQUIRE(a["errors"].size() == 1);
        CHECK(a["errors"][0]["id"] == "attribution.stripped");
        CHECK(r.err.find("functions callgrind knows only by address") != std::string::npos);
        CHECK(r.err.find("compile with -g and do not strip it") != std::string::npos);
    }
    SUBCASE("no valgrind: a measurement error (exit 4) saying how to install it")
    {
        const auto r = run_perfgate({"run", "--backend", "callgrind", "--db", "h.db", "--baseline", "true",
                                     "--candidate", "true"},
                                    dir.path(), {{"PATH", (dir.path() / "empty").string()}});
        CHECK(r.code == 4);
        CHECK(r.err.find("--backend callgrind needs valgrind, and 'valgrind' is not in PATH: install it (apt-get "
                         "install valgrind)") != std::string::npos);
    }
}
