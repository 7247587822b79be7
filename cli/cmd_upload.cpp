// `perfgate upload`: stores an existing `perf stat -x,` capture as a run, on a
// server (POST /api/v1/projects/{p}/runs) or in a local database, through the
// same validation and gate service either way.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/wire.hpp"
#include "capture/harness.hpp"
#include "cli/commands.hpp"
#include "cli/target.hpp"
#include "model/error.hpp"
#include "model/file.hpp"
#include "runner/git_info.hpp"
#include "runner/testbed.hpp"
#include "service/service.hpp"
#include "store/store.hpp"

namespace perfgate::cli {

namespace {

command_spec upload_command()
{
    command_spec spec{
        "upload",
        "(--server URL [--token T] | --db PATH) --project P --role baseline|candidate [--benchmark NAME] "
        "[--git-sha SHA] [--branch BR] FILE",
        "Uploads perf stat CSV output (one file; several runs as -o FILE --append blocks)\n"
        "as one run, or a benchmark harness's output (google/benchmark JSON, hyperfine,\n"
        "Catch2 XML, nanobench, perfgate's samples JSON; docs/inputs.md) as one run per\n"
        "benchmark, all stored or none. Prints the run ids; use them with POST .../compare\n"
        "or perfgate history.",
        target_options("local database (SQLite file or postgresql:// URI) instead of a server", "project"),
    };
    // clang-format off
    spec.options.insert(spec.options.end(), {
        {"role", 0, true, false, "baseline|candidate", "which side of a comparison this run is"},
        {"benchmark", 0, true, false, "NAME", "benchmark name (default 'default'); a harness's output names its own"},
        {"input-format", 0, true, false, "FORMAT",
         "perf, gbench, hyperfine, catch2, nanobench or samples (default: detected from the content)"},
        {"git-sha", 0, true, false, "SHA", "commit measured (default: from GitHub Actions or git)"},
        {"branch", 0, true, false, "BR", "branch measured (default: from GitHub Actions or git)"},
        {"pr", 0, true, false, "N", "pull request number"},
        {"testbed", 0, true, false, "NAME", "testbed name (default: hostname); CPU/kernel detected here"},
        {"backend", 0, true, false, "perf|callgrind|rusage", "how the capture was measured (default perf)"},
        {"session", 0, true, false, "ID", "measurement session: give the baseline and candidate captures measured "
                                          "interleaved together the same ID (otherwise their comparison is judged "
                                          "as runs measured apart)"},
        {"format", 0, true, false, "text|json", "output format (default text)"},
    });
    // clang-format on
    return spec;
}

} // namespace

const command_spec& upload_spec()
{
    static const command_spec spec = upload_command();
    return spec;
}

int cmd_upload(const argv_t& argv)
{
    const command_spec& spec = upload_spec();
    const auto args = parse_args(spec, argv);
    if (!args) return exit_pass;
    if (args->positional().size() != 1) {
        throw error(errors::usage_missing_argument,
                    "perfgate upload: expected exactly one FILE (perf stat -x, output)");
    }
    target where = target_from(*args, {});
    const std::string format = args->get_choice("format", {"text", "json"}).value_or("text");
    const std::string& path = args->positional().front();

    runner::git_overrides flags;
    flags.sha = args->get("git-sha");
    flags.branch = args->get("branch");
    flags.pr = args->get_int("pr", 1, 1LL << 40);
    const runner::git_info git = runner::resolve_git_info(flags, runner::process_env(),
                                                          std::filesystem::current_path());
    if (git.sha.empty() || git.branch.empty()) {
        throw error(errors::usage_missing_option,
                    "perfgate upload: no git commit/branch found here; pass --git-sha and --branch");
    }

    model::ingest_request in;
    in.project = where.project;
    in.benchmark = args->get("benchmark").value_or("default");
    in.role = args->required("role");
    in.git_sha = git.sha;
    in.branch = git.branch;
    in.pr = git.pr;
    in.testbed = runner::detect_testbed(args->get("testbed"));
    in.backend = args->get("backend").value_or("perf");
    in.session = args->get("session").value_or("");
    if (auto f = args->get("input-format")) {
        if (!capture::parse_input_format(*f)) {
            throw error(errors::usage_bad_value,
                        fmt::format("--input-format: '{}' is not one of {}", *f, capture::input_format_names()));
        }
        in.input_format = *f;
    }
    in.perf_csv = model::read_text_file(path);
    in.source = path;

    model::ingest_result result;
    if (where.server) {
        result = where.server->upload(in);
    } else {
        store::store db(where.db);
        service::service service(db);
        service.projects().ensure(in.project);
        result = service.runs().ingest(in);
    }

    if (format == "json") {
        std::cout << api::to_json(result).dump(2) << '\n';
    } else {
        if (result.run_ids.empty()) {
            std::cout << fmt::format("run {}: {} samples of {} counters ({} {} {} @ {})\n", result.run_id,
                                     result.samples, result.counters, in.project, in.benchmark, in.role,
                                     in.git_sha.substr(0, 12));
        } else {
            std::cout << fmt::format("{} runs: {} samples of {} counters ({} {} @ {})\n", result.run_ids.size(),
                                     result.samples, result.counters, in.project, in.role, in.git_sha.substr(0, 12));
            for (std::size_t i = 0; i < result.run_ids.size(); ++i)
                std::cout << fmt::format("run {}: {}\n", result.run_ids[i], result.benchmarks.at(i));
        }
        for (const auto& w : result.warnings) std::cerr << "perfgate upload: warning: " << w << '\n';
    }
    return exit_pass;
}

} // namespace perfgate::cli
