// perfgate compare: the offline gate on two perf stat outputs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "capture/harness.hpp"
#include "capture/run_times.hpp"
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
        {"format", 0, true, false, "FORMAT", "text (default), json, markdown or junit"},
        {"output", 'o', true, false, "FILE", "also write the report to FILE"},
        {"name", 0, true, false, "NAME", "benchmark name in the report (default: \"default\")"},
        {"repeats", 0, true, false, "N", "repetitions behind perf stat -r N aggregates (perf does not print N)"},
        {"fail-on-inconclusive", 0, false, false, "", "exit 3 when the verdict is inconclusive"},
        {"not-interleaved", 0, false, false, "",
         "the two captures were not measured interleaved (different sessions): tested counters are inconclusive, "
         "as no history can judge between-run variation here (implied when the files' run times show them "
         "measured apart)"},
    },
};

// How the two files were measured, from the run times they carry
// (capture/run_times.hpp; docs/cli.md#perfgate-compare): nullopt when they
// are judged as interleaved without a word (their executions' times overlap,
// several a side: perf stat -o --append in one alternating loop), else the
// warning to print and whether they were measured apart.
struct measured_how {
    bool apart = false;
    std::string warning;
};

std::string started(const capture::run_times& t) { return t.first_text; }

std::optional<measured_how> how_measured(const capture::parsed_input& base, const std::string& base_path,
                                         const capture::parsed_input& cand, const std::string& cand_path)
{
    constexpr std::string_view prefer =
        "measure both sides in one `perfgate run`, which interleaves their executions (`perfgate run --harness gbench` "
        "for google/benchmark binaries)";
    const capture::time_relation rel = capture::relate(base.times, cand.times);
    if (rel == capture::time_relation::apart) {
        const std::int64_t gap = std::abs(cand.times->first_start - base.times->first_start);
        return measured_how{
            true, fmt::format("{} (started {}) and {} (started {}, {} s {}) were measured apart, not interleaved: "
                              "their tested counters are judged as runs measured apart, inconclusive without a "
                              "history of baseline runs, since a load change between the two sessions looks like "
                              "a change of the code; {}",
                              base_path, started(*base.times), cand_path, started(*cand.times), gap,
                              cand.times->first_start >= base.times->first_start ? "later" : "earlier", prefer)};
    }
    if (rel == capture::time_relation::overlapping && base.times->executions > 1 && cand.times->executions > 1)
        return std::nullopt;
    std::string why;
    if (rel == capture::time_relation::overlapping) {
        why = fmt::format("{} (started {}) and {} (started {}) ran too close together to tell apart", base_path,
                          started(*base.times), cand_path, started(*cand.times));
    } else if (!base.times || !cand.times) {
        why = fmt::format("{} carries no run time (hyperfine, Catch2 and nanobench outputs have none; google/benchmark "
                          "writes context.date, perf stat -o a \"# started on\" line)",
                          !base.times ? base_path : cand_path);
    } else {
        why = fmt::format("{} is in local time and {} in UTC", base.times->zoned ? cand_path : base_path,
                          base.times->zoned ? base_path : cand_path);
    }
    return measured_how{false, fmt::format("compared as if interleaved: {}. If the files were measured one after the "
                                           "other, a change between the sessions (load, frequency, another job) is "
                                           "reported as a change of the code: {}, or pass --not-interleaved",
                                           why, prefer)};
}

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
        return in;
    };
    const capture::parsed_input base = load(baseline_path);
    const capture::parsed_input cand = load(candidate_path);
    // Files whose run times show them measured apart are judged as runs
    // measured apart, as --not-interleaved; files that cannot show it are
    // compared as interleaved, and the report says so (docs/cli.md#perfgate-compare).
    const std::optional<measured_how> how = args.has("not-interleaved")
                                                ? std::nullopt
                                                : how_measured(base, baseline_path, cand, candidate_path);
    gate::pairing_fn pairing;
    if (args.has("not-interleaved") || (how && how->apart)) {
        pairing = [](std::string_view) { return std::optional<gate::pairing>(gate::pairing{false, {}}); };
    }
    gate::report result = gate::compare(base.set, cand.set, rules, {}, pairing);
    if (how) {
        result.warnings.push_back(how->warning);
        print_error(fmt::format("perfgate compare: warning: {}\n", how->warning));
    }

    emit_report(result, format, args.get("output"), {});
    return verdict_exit_code(result.result, args.has("fail-on-inconclusive"));
}

} // namespace perfgate::cli
