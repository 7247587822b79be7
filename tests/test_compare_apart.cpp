// perfgate compare of two google/benchmark files measured apart (issue 44,
// item 5; docs/cli.md#perfgate-compare): the real perfgate binary on the
// output of a real google/benchmark program (tests/gbench_suite.cpp, built
// against Debian's libbenchmark).
//
// The trial that found it: google/snappy's benchmark run by hand twice, one
// after the other, on untouched code, "showed" +85% (a load spike between the
// two runs) and perfgate compare failed with exit 1. Measuring twice and
// waiting for a load spike would make this test slow and flaky, so the
// candidate file is made from one real run: its context.date moved 65 s
// later (a minute apart) and every time multiplied by 1.85 (the spike's
// +85%). That is exactly what such a file looks like; only the machine's
// mood is simulated. The control case keeps the candidate's date within the
// baseline's run time: the same +85% is then a confident fail, so the first
// case passes because of the dates, not because the change was too small.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/process.hpp"

using nlohmann::json;
using perfgate::test::run_perfgate;
using perfgate::test::shell_output;
using perfgate::test::shell_quoted;
using perfgate::test::temp_dir;

namespace {

const std::string suite = PERFGATE_BINARY_DIR "/tests/gbench_suite";

// The load spike's effect on every time of the candidate file.
constexpr double spike = 1.85;

json read_json(const std::filesystem::path& p)
{
    std::ifstream in(p);
    REQUIRE_MESSAGE(in, "cannot read " << p);
    return json::parse(in);
}

// The baseline file from one real run (10 repetitions of each benchmark: the
// rank test then finds a 1.85x shift even with a noisy repetition or two),
// made once for all the subcases.
const json& real_run()
{
    static const json doc = [] {
        temp_dir dir("pg-compare-apart-run");
        const auto out = dir.path() / "real.json";
        shell_output(suite + " --benchmark_min_time=0.02 --benchmark_repetitions=10 --benchmark_out=" +
                     shell_quoted(out) + " --benchmark_out_format=json > /dev/null 2>&1");
        return read_json(out);
    }();
    return doc;
}

// The candidate: the real run with `date` and every time scaled by `spike`.
json spiked(json doc, const std::string& date)
{
    doc["context"]["date"] = date;
    for (auto& row : doc["benchmarks"]) {
        for (const char* t : {"real_time", "cpu_time"}) row[t] = row[t].get<double>() * spike;
    }
    return doc;
}

std::filesystem::path write(const std::filesystem::path& p, const json& doc)
{
    std::ofstream(p) << doc.dump(2);
    return p;
}

// "2026-11-28T09:00:00+00:00" + seconds, in the same form (google/benchmark
// writes ISO 8601 with the zone's offset). Seconds stay below an hour.
std::string later(const std::string& date, int seconds)
{
    REQUIRE(date.size() >= 19);
    const int h = std::stoi(date.substr(11, 2)), m = std::stoi(date.substr(14, 2)), s = std::stoi(date.substr(17, 2));
    int total = h * 3600 + m * 60 + s + seconds;
    REQUIRE_MESSAGE(total < 24 * 3600, "the test's date arithmetic stays within one day: " << date);
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", total / 3600, total / 60 % 60, total % 60);
    return date.substr(0, 11) + buf + date.substr(19);
}

bool has_warning(const json& report, const std::string& part)
{
    for (const auto& w : report.at("warnings"))
        if (w.get<std::string>().find(part) != std::string::npos) return true;
    return false;
}

} // namespace

TEST_CASE("compare: google/benchmark files run a minute apart with a load spike between are not a confident fail")
{
    temp_dir dir("pg-compare-apart");
    const json& base = real_run();
    const std::string date = base.at("context").at("date");
    const auto base_file = dir.path() / "base.json";
    std::ofstream(base_file) << base.dump(2);

    SUBCASE("a minute apart: judged as measured apart, inconclusive without a history, and said so")
    {
        const auto cand = write(dir.path() / "cand.json", spiked(base, later(date, 65)));
        const auto r = run_perfgate({"compare", "--baseline", base_file.string(), "--candidate", cand.string(),
                                     "--format", "json"});
        INFO(r.err);
        CHECK(r.code == 0);
        const json report = json::parse(r.out);
        CHECK(report.at("verdict") == "inconclusive");
        for (const auto& b : report.at("benchmarks")) {
            CAPTURE(b.at("name"));
            CHECK(b.at("interleaved") == false);
            for (const auto& c : b.at("counters")) {
                if (c.at("name") != "real_time" && c.at("name") != "cpu_time") continue;
                CHECK(c.at("status") == "inconclusive");
                CHECK(c.at("reason").get<std::string>().find("not measured interleaved") != std::string::npos);
            }
        }
        CHECK(has_warning(report, "measured apart"));
        CHECK(has_warning(report, "perfgate run --harness gbench"));
        // Loud: on stderr too, whatever the format.
        CHECK(r.err.find("measured apart") != std::string::npos);
        // --fail-on-inconclusive makes it exit 3, never 1.
        const auto strict = run_perfgate({"compare", "--baseline", base_file.string(), "--candidate", cand.string(),
                                          "--fail-on-inconclusive"});
        CHECK(strict.code == 3);
    }
    SUBCASE("the other order (candidate measured first) is apart too")
    {
        const auto early = write(dir.path() / "early.json", spiked(base, later(date, 0)));
        const auto late_base = write(dir.path() / "late-base.json", [&] {
            json doc = base;
            doc["context"]["date"] = later(date, 65);
            return doc;
        }());
        const auto r = run_perfgate({"compare", "--baseline", late_base.string(), "--candidate", early.string(),
                                     "--format", "json"});
        INFO(r.err);
        CHECK(r.code == 0);
        CHECK(json::parse(r.out).at("verdict") == "inconclusive");
    }
    SUBCASE("control: the same +85% with dates that cannot tell the runs apart is a fail, with a loud warning")
    {
        const auto cand = write(dir.path() / "cand.json", spiked(base, date));
        const auto r = run_perfgate({"compare", "--baseline", base_file.string(), "--candidate", cand.string(),
                                     "--format", "json"});
        INFO(r.err);
        CHECK(r.code == 1);
        const json report = json::parse(r.out);
        CHECK(report.at("verdict") == "fail");
        CHECK(has_warning(report, "compared as if interleaved"));
        CHECK(r.err.find("compared as if interleaved") != std::string::npos);
        for (const auto& b : report.at("benchmarks")) CHECK_FALSE(b.contains("interleaved"));
    }
    SUBCASE("control: no date at all (an older google/benchmark file): compared as if interleaved, said so")
    {
        json doc = spiked(base, date);
        doc["context"].erase("date");
        const auto cand = write(dir.path() / "cand.json", doc);
        const auto r = run_perfgate({"compare", "--baseline", base_file.string(), "--candidate", cand.string(),
                                     "--format", "json"});
        INFO(r.err);
        CHECK(r.code == 1);
        const json report = json::parse(r.out);
        CHECK(has_warning(report, "compared as if interleaved"));
        CHECK(has_warning(report, "carries no run time"));
    }
}
