// perfgate compare: the offline gate on two perf stat outputs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "gate/compare.hpp"
#include "gate/perf_csv.hpp"
#include "gate/policy.hpp"
#include "gate/report.hpp"
#include "runner/cli.hpp"
#include "runner/commands.hpp"
#include "runner/output.hpp"
#include "stats/error.hpp"

namespace perfgate::runner {

namespace {

const std::vector<option_spec> compare_options = {
    {"baseline", 0, true, false, "FILE", "perf stat -x, output of the baseline build (required)"},
    {"candidate", 0, true, false, "FILE", "perf stat -x, output of the candidate build (required)"},
    {"policy", 0, true, false, "FILE", "JSON policy file (thresholds, gated counters, alpha, correction)"},
    {"format", 0, true, false, "FORMAT", "text (default), json or markdown"},
    {"output", 'o', true, false, "FILE", "also write the report to FILE"},
    {"name", 0, true, false, "NAME", "benchmark name in the report (default: \"default\")"},
    {"repeats", 0, true, false, "N", "repetitions behind perf stat -r N aggregates (perf does not print N)"},
    {"fail-on-inconclusive", 0, false, false, "", "exit 3 when the verdict is inconclusive"},
    {"help", 'h', false, false, "", "show this help"},
};

} // namespace

int cmd_compare(const argv_t& argv)
{
    const auto args = parse_args("compare", argv, compare_options);
    if (args.has("help")) {
        std::fputs(usage_text("compare", "--baseline FILE --candidate FILE [options]",
                              "Compares a candidate build's perf stat output with a baseline's and prints the\n"
                              "verdict with per-counter deltas. Multi-run files (-o FILE --append), plain\n"
                              "captures of several runs, -r N aggregates and --json output are all accepted.",
                              compare_options)
                       .c_str(),
                   stdout);
        return exit_pass;
    }
    if (!args.positional().empty()) {
        throw error("usage.unexpected_argument",
                    fmt::format("perfgate compare: unexpected argument '{}' (see --help)", args.positional().front()));
    }
    const auto baseline_path = args.get("baseline");
    const auto candidate_path = args.get("candidate");
    if (!baseline_path || !candidate_path) {
        throw error("usage.missing_option", "perfgate compare: --baseline FILE and --candidate FILE are required");
    }
    const report_format format = parse_format(args.get("format").value_or("text"));
    gate::policy rules = args.get("policy") ? gate::load_policy(*args.get("policy")) : gate::policy{};
    const std::string name = args.get("name").value_or("default");

    auto load = [&](const std::string& path) {
        gate::sample_set set;
        const gate::perf_capture cap = gate::read_perf_stat(path);
        set.benchmarks.push_back(gate::from_capture(cap, name));
        if (auto n = args.get_int("repeats", 2, 1000000)) set.benchmarks.back().summary_repeats = static_cast<std::size_t>(*n);
        for (const auto& w : cap.warnings) set.warnings.push_back(w);
        return set;
    };
    const gate::sample_set base = load(*baseline_path);
    const gate::sample_set cand = load(*candidate_path);
    const gate::report result = gate::compare(base, cand, rules);

    emit_report(result, format, args.get("output"), {});
    return verdict_exit_code(result.result, args.has("fail-on-inconclusive"));
}

} // namespace perfgate::runner
