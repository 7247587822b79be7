// perfgate compare: the offline gate on two perf stat outputs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "capture/perf_csv.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "gate/compare.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "model/error.hpp"

namespace perfgate::cli {

namespace {

const command_spec compare_command{
    "compare",
    "--baseline FILE --candidate FILE [options]",
    "Compares a candidate build's perf stat output with a baseline's and prints the\n"
    "verdict with per-counter deltas. Multi-run files (-o FILE --append), plain\n"
    "captures of several runs, -r N aggregates and --json output are all accepted.",
    {
        {"baseline", 0, true, false, "FILE", "perf stat -x, output of the baseline build (required)"},
        {"candidate", 0, true, false, "FILE", "perf stat -x, output of the candidate build (required)"},
        {"policy", 0, true, false, "FILE", "JSON policy file (thresholds, gated counters, alpha, correction)"},
        {"format", 0, true, false, "FORMAT", "text (default), json or markdown"},
        {"output", 'o', true, false, "FILE", "also write the report to FILE"},
        {"name", 0, true, false, "NAME", "benchmark name in the report (default: \"default\")"},
        {"repeats", 0, true, false, "N", "repetitions behind perf stat -r N aggregates (perf does not print N)"},
        {"fail-on-inconclusive", 0, false, false, "", "exit 3 when the verdict is inconclusive"},
        {"not-interleaved", 0, false, false, "",
         "the two captures were not measured interleaved (different sessions): tested counters are inconclusive, "
         "as no history can judge between-run variation here"},
    },
};

} // namespace

const command_spec& compare_spec() { return compare_command; }

int cmd_compare(const argv_t& argv)
{
    const auto parsed = parse_args(compare_command, argv);
    if (!parsed) return exit_pass;
    const parsed_args& args = *parsed;
    no_positional(args);
    const std::string baseline_path = args.required("baseline");
    const std::string candidate_path = args.required("candidate");
    const report_format format = parse_format(args.get("format").value_or("text"));
    gate::policy rules = args.get("policy") ? gate::load_policy(*args.get("policy")) : gate::policy{};
    const std::string name = args.get("name").value_or("default");

    auto load = [&](const std::string& path) {
        capture::sample_set set;
        const capture::perf_capture cap = capture::read_perf_stat(path);
        set.benchmarks.push_back(capture::from_capture(cap, name));
        if (auto n = args.get_int("repeats", 2, 1000000))
            set.benchmarks.back().summary_repeats = static_cast<std::size_t>(*n);
        for (const auto& w : cap.warnings) set.warnings.push_back(w);
        return set;
    };
    const capture::sample_set base = load(baseline_path);
    const capture::sample_set cand = load(candidate_path);
    // By default the user measured the captures as they should (interleaved),
    // and the report says nothing about it.
    gate::pairing_fn pairing;
    if (args.has("not-interleaved")) {
        pairing = [](std::string_view) { return std::optional<gate::pairing>(gate::pairing{false, {}}); };
    }
    const gate::report result = gate::compare(base, cand, rules, {}, pairing);

    emit_report(result, format, args.get("output"), {});
    return verdict_exit_code(result.result, args.has("fail-on-inconclusive"));
}

} // namespace perfgate::cli
