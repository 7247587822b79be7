// The report's renderers (docs/report.md "Report JSON"), one file per output
// format, like hyperfine's src/export/: the JSON tree and its parse back
// (report/json.cpp), the same JSON written as text without the tree
// (report/json_stream.cpp, with report/json_writer.hpp), the terminal table
// (report/text.cpp) and GitHub-flavoured markdown (report/markdown.cpp).
// The report's types live in gate/report.hpp: the gate fills them, these
// functions only write and read them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gate/report.hpp"
#include "model/acceptance.hpp"

namespace perfgate::report {

// The contract: schema "perfgate.report/v1"; statistics that do not apply are null.
// report_from_json accepts reports without the fields added later in v1
// (open_alerts, band, outside_band, noise): they read as null; and without
// added, removed, failed (absent when empty): they read as empty. "summary"
// and "overall" (reports of two or more benchmarks) are derived from the
// benchmarks (gate::count_benchmarks, gate::overall_geomeans): written,
// never read.
//
// "noise" (per counter; null as gate::counter_report::noise says):
//   { "bimodal": true | false | null, "drift": true | false | null,
//     "baseline":  { "dip": 0.19, "dip_critical": 0.14, "bimodal": true,
//                    "kendall_tau": -0.2, "kendall_p": 0.45, "drift": false },
//     "candidate": { ...the same; each test's three members null together... },
//     "repetitions_needed": 230 | null, "too_noisy": false, "advice": "..." | null }
//
// "attribution" (per benchmark; absent when nothing was profiled; optional
// members absent when empty):
//   { "callgrind": { "event": "Ir", "total_before": 1.2e6, "total_after": 3.4e6,
//                    "top": [ { "name": "memcpy", "file": "", "before": 0, "after": 2.1e6,
//                               "delta": 2.1e6, "share": 0.93 }, ... ] },
//     "perf": { "event": "cpu-clock", "executions": 5, "samples_before": 812, "samples_after": 1190,
//               "top": [ { ...as above..., "interval": [1.2, 4.5], "significant": true } ],
//               "flame_graph": "flame.svg" },
//     "errors": [ { "source": "callgrind", "id": "profile.bad_callgrind", "message": "..." } ] }
nlohmann::json to_json(const gate::report& r);
gate::report report_from_json(const nlohmann::json& j);
// to_json(r).dump(-1, ' ', false, error_handler_t::replace), byte for byte,
// written without building the tree (report/json_writer.hpp): the service's
// stored and served form. With id_at, and r without a comparison_id: the
// offset at which the member ,"comparison_id":N belongs (after benchmarks).
// policy_json: gate::to_json(r.rules).dump() when the caller has it already
// (the service's request key), written as is; empty: made here.
std::string to_json_text(const gate::report& r, std::size_t* id_at = nullptr, std::string_view policy_json = {});

// The "attribution" object alone (also written as --artifacts
// DIR/<benchmark>/attribution.json). attribution_from_json throws
// "input.bad_report" naming the field for a malformed object.
nlohmann::json to_json(const gate::attribution& a);
gate::attribution attribution_from_json(const nlohmann::json& j);

// A suite's "summary" object and "overall" array (docs/report.md "Suites").
nlohmann::json summary_json(const gate::suite_counts& n);
nlohmann::json overall_json(const std::vector<gate::overall_geomean>& rows);
// The "baseline_ref" object (docs/report.md).
nlohmann::json baseline_json(const gate::baseline_choice& b);
// The "measured" object (docs/report.md).
nlohmann::json measured_json(const gate::measurement& m);
// The report's "baseline_reused": [{benchmark, run_id, commit, date, created_at}].
nlohmann::json reused_json(const std::vector<gate::reused_baseline>& reused);

// A benchmark's "count_vs_time" array (docs/report.md).
nlohmann::json to_json(const std::vector<gate::count_time_disagreement>& d);

// Why a perf attribution and its flame graph can seem to disagree: when
// every changed function is within the noise (none `significant`), the
// flame graph still colours each change of self share, noise included. One
// paragraph naming the frame it paints most (its share on both sides, the
// interval, its self samples per execution) and why a share can stay put
// when a function slows down; empty when some row is beyond the noise or
// there are no rows. The text and markdown reports and the dashboard's
// comparison page print it in place of their perf table.
std::string perf_noise_note(const gate::perf_attribution& p);

struct markdown_options {
    std::string title = "perfgate";
    std::string marker;         // hidden sticky-comment marker, emitted first if set
    std::string run_url;        // link to the CI run
    std::string comparison_url; // link to the stored comparison
    // The repository's web URL ("https://github.com/o/r"): the commits in
    // the head link to {repository_url}/commit/{sha}; "" leaves them unlinked.
    std::string repository_url;
    // Plain text after the links, e.g. why a link is missing (the server
    // without --public-url); "" for none.
    std::string link_note;
    // Where `perfgate run --artifacts DIR` went (the CI run's artifacts) and
    // the artifact's name; linked from the attribution section when set.
    std::string artifacts_url;
    std::string artifact_name;
    std::size_t max_chars = 65536; // GitHub's comment body limit; details truncated to fit
};
// GitHub-flavoured markdown for a PR comment / job summary.
std::string render_markdown(const gate::report& r, const markdown_options& opt = {});

// User text as literal GitHub markdown on one line (markdown.cpp's rule: no
// link, emphasis, HTML, mention or issue reference can come out of it).
std::string markdown_literal(std::string_view s);

// The sticky comment's note that a reviewer accepted the regression
// (perfgate accept, report/acceptance_markdown.cpp), a block between
// acceptance_note_begin and acceptance_note_end: "Accepted by @login for
// <sha>: reason", and that commit status `context` is success for that
// commit only. Login and reason are rendered literally (markdown_literal).
inline constexpr std::string_view acceptance_note_begin = "<!-- perfgate-acceptance -->";
inline constexpr std::string_view acceptance_note_end = "<!-- /perfgate-acceptance -->";
std::string render_acceptance_note(const model::acceptance& a, std::string_view context);
// The reason of a "/perfgate accept <reason>" request (a GitHub comment or a
// GitLab note), or nullopt when text is not one: it must start with the
// command followed by a blank or its end (a quote "> /perfgate accept" or
// "/perfgate acceptable" is not). The reason is cleaned
// (model::clean_acceptance_reason).
std::optional<std::string> acceptance_request_reason(std::string_view text);
// The sticky comment's body with note in place: replacing an earlier
// acceptance note, else inserted after the line holding marker (at the top
// when there is none).
std::string with_acceptance_note(std::string_view body, std::string_view marker, std::string_view note);

// JUnit XML (report/junit.cpp, docs/report.md "JUnit XML"): one testcase per
// benchmark and gated counter, a regression a <failure>, inconclusive a
// <skipped> with the reason; suite_name names the <testsuites> and its
// one <testsuite>.
std::string render_junit(const gate::report& r, std::string_view suite_name = "perfgate");

// Terminal table; ANSI colour only when colour is true (the caller checks isatty).
std::string render_text(const gate::report& r, bool colour);

} // namespace perfgate::report
