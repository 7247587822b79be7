// perfgate compare: the offline gate on two perf stat outputs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "capture/harness.hpp"
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
    "captures of several runs, -r N aggregates and --json output are all accepted,\n"
    "and so are the outputs of google/benchmark (--benchmark_format=json), hyperfine\n"
    "(--export-json), Catch2 (-r xml), nanobench (JSON) and perfgate's samples JSON:\n"
    "one benchmark per harness benchmark, all gated together (docs/inputs.md).",
    {
        {"baseline", 0, true, false, "FILE",
         "the baseline build's measurements: perf stat -x, output or a harness's (required)"},
        {"candidate", 0, true, false, "FILE", "the candidate build's measurements, in the same format (required)"},
        {"input-format", 0, true, false, "FORMAT",
         "perf, gbench, hyperfine, catch2, nanobench or samples (default: detected from each file's content)"},
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

    std::optional<capture::input_format> forced;
    if (auto f = args.get("input-format")) {
        forced = capture::parse_input_format(*f);
        if (!forced) {
            throw error(errors::usage_bad_value,
                        fmt::format("--input-format: '{}' is not one of {}", *f, capture::input_format_names()));
        }
    }
    auto load = [&](const std::string& path) {
        capture::parsed_input in = capture::read_input(path, forced, name);
        if (auto n = args.get_int("repeats", 2, 1000000)) {
            for (auto& b : in.set.benchmarks)
                if (b.summary_only && !b.summary_repeats) b.summary_repeats = static_cast<std::size_t>(*n);
        }
        return std::move(in.set);
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
