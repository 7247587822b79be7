#include "api/wire.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/error.hpp"

namespace perfgate::api {

using nlohmann::json;

namespace {

// --- request fields, with errors that name the field ------------------------

const json* field(const json& doc, std::string_view name)
{
    auto it = doc.find(name);
    if (it == doc.end() || it->is_null()) return nullptr;
    return &*it;
}

[[noreturn]] void bad_field(const std::string& message)
{
    throw error(errors::ingest_bad_field, "request body: " + message);
}

std::optional<std::string> string_field(const json& doc, std::string_view name, std::string_view path, bool required)
{
    const json* v = field(doc, name);
    if (!v) {
        if (required) bad_field(fmt::format("field '{}{}' is required", path, name));
        return std::nullopt;
    }
    if (!v->is_string()) bad_field(fmt::format("field '{}{}' must be a string, got {}", path, name, v->type_name()));
    return v->get<std::string>();
}

// Every key of `obj` is one of `known`: a typo ("benchmrak") must not be
// dropped silently and the run stored under the default. `path` prefixes
// the name in the message ("testbed.").
void check_known_fields(const json& obj, std::initializer_list<std::string_view> known, std::string_view path)
{
    for (const auto& [key, value] : obj.items()) {
        if (std::find(known.begin(), known.end(), key) != known.end()) continue;
        // The key is the client's: quote a bounded part of it.
        constexpr std::size_t max_shown = 64;
        const std::string shown = key.size() > max_shown ? key.substr(0, max_shown) + "..." : key;
        bad_field(fmt::format("unknown field '{}{}' (known: {})", path, shown, fmt::join(known, ", ")));
    }
}

// A positive run id; `where` names it ("baseline_run", "pairs[0][1]").
std::int64_t run_id(const json& x, std::string_view where)
{
    if (!x.is_number_integer() || x.get<std::int64_t>() <= 0) {
        bad_field(fmt::format("field '{}' must be a positive run id, got {}", where, dump(x).substr(0, 64)));
    }
    return x.get<std::int64_t>();
}

void check_pair_count(const json& v, std::string_view name, std::string_view what)
{
    if (v.empty()) bad_field(fmt::format("field '{}' must hold 1..{} {}, got 0", name, max_compare_pairs, what));
    if (v.size() > max_compare_pairs) {
        throw error(errors::compare_too_many_pairs,
                    fmt::format("request body: field '{}' holds {} {}; at most {} pairs per compare", name, v.size(),
                                what, max_compare_pairs));
    }
}

// baseline_run / candidate_run: both run ids, or both arrays that pair up by position.
run_pairs pairs_from_columns(const json& doc)
{
    const json* base = field(doc, "baseline_run");
    const json* cand = field(doc, "candidate_run");
    if (!base) bad_field("field 'baseline_run' is required (or give 'pairs')");
    if (!cand) bad_field("field 'candidate_run' is required (or give 'pairs')");
    if (!base->is_array() && !cand->is_array())
        return {{run_id(*base, "baseline_run"), run_id(*cand, "candidate_run")}};
    if (!base->is_array() || !cand->is_array()) {
        const std::string_view scalar = base->is_array() ? "candidate_run" : "baseline_run";
        const std::string_view array = base->is_array() ? "baseline_run" : "candidate_run";
        bad_field(
            fmt::format("field '{}' is an array but '{}' is {}: give both as run ids or both as arrays of run ids",
                        array, scalar, field(doc, scalar)->type_name()));
    }
    check_pair_count(*base, "baseline_run", "run ids");
    check_pair_count(*cand, "candidate_run", "run ids");
    if (base->size() != cand->size()) {
        bad_field(fmt::format("'baseline_run' has {} run ids but 'candidate_run' has {}; they pair up by position",
                              base->size(), cand->size()));
    }
    run_pairs pairs;
    pairs.reserve(base->size());
    for (std::size_t i = 0; i < base->size(); ++i) {
        pairs.emplace_back(run_id((*base)[i], fmt::format("baseline_run[{}]", i)),
                           run_id((*cand)[i], fmt::format("candidate_run[{}]", i)));
    }
    return pairs;
}

// pairs: [[baseline_run, candidate_run], ...]
run_pairs pairs_from_list(const json& list)
{
    if (!list.is_array()) {
        bad_field(fmt::format("field 'pairs' must be an array of [baseline_run, candidate_run], got {}",
                              list.type_name()));
    }
    check_pair_count(list, "pairs", "[baseline_run, candidate_run] pairs");
    run_pairs pairs;
    pairs.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& p = list[i];
        if (!p.is_array() || p.size() != 2) {
            bad_field(fmt::format("field 'pairs[{}]' must be [baseline_run, candidate_run], got {}", i,
                                  dump(p).substr(0, 64)));
        }
        pairs.emplace_back(run_id(p[0], fmt::format("pairs[{}][0]", i)), run_id(p[1], fmt::format("pairs[{}][1]", i)));
    }
    return pairs;
}

// --- response fields: a server that answers nonsense is an environment failure

template <class F>
auto reading_response(std::string_view what, F&& read)
{
    try {
        return read();
    } catch (const json::exception& e) {
        throw error(errors::server_bad_response, fmt::format("{} response: {}", what, json_error_text(e.what())));
    }
}

std::string csv_field(std::string_view s)
{
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string optional_number(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); }

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

} // namespace

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// --- request bodies -----------------------------------------------------------

json parse_request_body(std::string_view body)
{
    // The callback sees every container as it opens, with the number of
    // containers already open around it; throwing there ends the parse
    // before the rest of the input is read or built.
    const json::parser_callback_t limit_depth = [](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
            static_cast<std::size_t>(depth) >= max_json_depth) {
            throw error(errors::http_too_deep,
                        fmt::format("request body: objects and arrays nested deeper than {} levels (the limit)",
                                    max_json_depth));
        }
        return true;
    };
    json doc;
    try {
        doc = json::parse(body.begin(), body.end(), limit_depth);
    } catch (const json::parse_error& e) {
        throw error(errors::http_bad_json, fmt::format("request body: {}", json_error_text(e.what())));
    }
    if (!doc.is_object()) {
        throw error(errors::http_bad_json,
                    fmt::format("request body: expected a JSON object, got {}", doc.type_name()));
    }
    return doc;
}

std::string json_error_text(std::string_view what)
{
    // nlohmann's form: "[json.exception.<kind>.<n>] <text>", and for parse
    // errors <text> = "parse error at line L, column C: ..." (or "parse error
    // at byte B: ...", "parse error: ...").
    constexpr std::string_view tag = "[json.exception.";
    if (what.starts_with(tag)) {
        if (auto close = what.find("] "); close != std::string_view::npos) what.remove_prefix(close + 2);
    }
    for (std::string_view lead : {"parse error at ", "parse error: "}) {
        if (what.starts_with(lead)) {
            what.remove_prefix(lead.size());
            break;
        }
    }
    return std::string(what);
}

// --- runs ---------------------------------------------------------------------

json to_json(const model::ingest_request& in)
{
    json j = {
        {"benchmark", in.benchmark},
        {"role", in.role},
        {"git_sha", in.git_sha},
        {"branch", in.branch},
        {"backend", in.backend},
        {"testbed",
         {{"name", in.testbed.name},
          {"cpu", in.testbed.cpu},
          {"cores", in.testbed.cores},
          {"kernel", in.testbed.kernel},
          {"fingerprint", in.testbed.fingerprint}}},
        {"perf_csv", in.perf_csv},
    };
    json env = json::parse(in.environment_json, nullptr, false);
    j["environment"] = env.is_object() ? env : json::object();
    if (in.pr) j["pr"] = *in.pr;
    if (!in.session.empty()) j["session"] = in.session;
    if (!in.input_format.empty()) j["input_format"] = in.input_format;
    if (!in.toolchain.empty()) j["toolchain"] = in.toolchain;
    if (in.mainline) j["mainline"] = *in.mainline;
    return j;
}

model::ingest_request ingest_request_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(doc,
                       {"benchmark", "role", "git_sha", "branch", "pr", "testbed", "backend", "environment", "session",
                        "perf_csv", "input_format", "toolchain", "mainline"},
                       "");
    model::ingest_request in;
    if (auto v = string_field(doc, "benchmark", "", false)) in.benchmark = *v;
    in.role = *string_field(doc, "role", "", true);
    in.git_sha = *string_field(doc, "git_sha", "", true);
    in.branch = *string_field(doc, "branch", "", true);
    in.perf_csv = *string_field(doc, "perf_csv", "", true);
    if (auto v = string_field(doc, "backend", "", false)) in.backend = *v;
    if (auto v = string_field(doc, "session", "", false)) in.session = *v;
    if (auto v = string_field(doc, "input_format", "", false)) in.input_format = *v;
    if (auto v = string_field(doc, "toolchain", "", false)) in.toolchain = *v;
    if (const json* mainline = field(doc, "mainline")) {
        if (!mainline->is_boolean()) {
            bad_field(fmt::format("field 'mainline' must be true or false, got {}", dump(*mainline).substr(0, 64)));
        }
        in.mainline = mainline->get<bool>();
    }
    if (const json* pr = field(doc, "pr")) {
        if (!pr->is_number_integer() || pr->get<std::int64_t>() <= 0) {
            bad_field(fmt::format("field 'pr' must be a positive integer, got {}", dump(*pr).substr(0, 64)));
        }
        in.pr = pr->get<std::int64_t>();
    }
    if (const json* tb = field(doc, "testbed")) {
        if (!tb->is_object()) bad_field(fmt::format("field 'testbed' must be an object, got {}", tb->type_name()));
        check_known_fields(*tb, {"name", "cpu", "cores", "kernel", "fingerprint"}, "testbed.");
        if (auto v = string_field(*tb, "name", "testbed.", false)) in.testbed.name = *v;
        if (auto v = string_field(*tb, "cpu", "testbed.", false)) in.testbed.cpu = *v;
        if (auto v = string_field(*tb, "kernel", "testbed.", false)) in.testbed.kernel = *v;
        if (auto v = string_field(*tb, "fingerprint", "testbed.", false)) in.testbed.fingerprint = *v;
        if (const json* cores = field(*tb, "cores")) {
            if (!cores->is_number_integer() || cores->get<std::int64_t>() < 0 || cores->get<std::int64_t>() > 1 << 20) {
                bad_field("field 'testbed.cores' must be a non-negative integer");
            }
            in.testbed.cores = cores->get<int>();
        }
    }
    if (const json* env = field(doc, "environment")) {
        if (!env->is_object())
            bad_field(fmt::format("field 'environment' must be an object, got {}", env->type_name()));
        in.environment_json = dump(*env);
    }
    return in;
}

json to_json(const model::ingest_result& r)
{
    json j = {{"run_id", r.run_id},
              {"samples", r.samples},
              {"counters", r.counters},
              {"warnings", r.warnings},
              {"alerts", r.alerts}};
    // A harness's output: a run per benchmark (absent for perf stat input).
    if (!r.run_ids.empty()) {
        j["run_ids"] = r.run_ids;
        j["benchmarks"] = r.benchmarks;
    }
    return j;
}

model::ingest_result ingest_result_from_json(const json& doc)
{
    return reading_response("POST .../runs", [&] {
        model::ingest_result r;
        r.run_id = doc.at("run_id").get<std::int64_t>();
        r.samples = doc.at("samples").get<std::size_t>();
        r.counters = doc.at("counters").get<std::size_t>();
        r.warnings = doc.at("warnings").get<std::vector<std::string>>();
        // Servers before alerts existed do not send the field.
        if (doc.contains("alerts")) r.alerts = doc.at("alerts").get<std::vector<std::int64_t>>();
        if (doc.contains("run_ids")) {
            r.run_ids = doc.at("run_ids").get<std::vector<std::int64_t>>();
            r.benchmarks = doc.at("benchmarks").get<std::vector<std::string>>();
        }
        return r;
    });
}

// --- compare --------------------------------------------------------------------

json compare_request_json(const run_pairs& pairs, const json* policy_json, const model::baseline_choice* baseline)
{
    json base = json::array(), cand = json::array();
    for (const auto& [b, c] : pairs) {
        base.push_back(b);
        cand.push_back(c);
    }
    json body = {{"baseline_run", std::move(base)}, {"candidate_run", std::move(cand)}};
    if (policy_json) body["policy"] = *policy_json;
    if (baseline) {
        body["baseline_ref"] = {{"rule", baseline->rule},
                                {"baseline_sha", baseline->baseline_sha},
                                {"base_tip_sha",
                                 baseline->base_tip_sha.empty() ? json(nullptr) : json(baseline->base_tip_sha)},
                                {"head_sha", baseline->head_sha}};
    }
    return body;
}

std::optional<model::baseline_choice> compare_baseline_from_json(const json& doc)
{
    const json* b = field(doc, "baseline_ref");
    if (!b || b->is_null()) return std::nullopt;
    if (!b->is_object()) bad_field(fmt::format("field 'baseline_ref' must be an object, got {}", b->type_name()));
    check_known_fields(*b, {"rule", "baseline_sha", "base_tip_sha", "head_sha"}, "baseline_ref.");
    model::baseline_choice out;
    out.rule = *string_field(*b, "rule", "baseline_ref.", true);
    if (out.rule != "merge-base" && out.rule != "base-tip" && out.rule != "parent") {
        bad_field(fmt::format("field 'baseline_ref.rule' must be merge-base, base-tip or parent, got '{}'",
                              out.rule.substr(0, 64)));
    }
    const auto sha = [&](std::string_view name, bool required) {
        const json* v = field(*b, name);
        if (!required && (!v || v->is_null())) return std::string();
        std::string s = *string_field(*b, name, "baseline_ref.", true);
        const bool hex = (s.size() == 40 || s.size() == 64) &&
                         s.find_first_not_of("0123456789abcdef") == std::string::npos;
        if (!hex) bad_field(fmt::format("field 'baseline_ref.{}' must be a commit's 40 or 64 hex digits", name));
        return s;
    };
    out.baseline_sha = sha("baseline_sha", true);
    out.base_tip_sha = sha("base_tip_sha", false);
    out.head_sha = sha("head_sha", true);
    return out;
}

run_pairs compare_pairs_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(doc, {"baseline_run", "candidate_run", "pairs", "policy", "baseline_ref"}, "");
    if (const json* list = field(doc, "pairs")) {
        if (field(doc, "baseline_run") || field(doc, "candidate_run")) {
            bad_field("give either 'pairs' or 'baseline_run' and 'candidate_run', not both");
        }
        return pairs_from_list(*list);
    }
    return pairs_from_columns(doc);
}

// --- history --------------------------------------------------------------------

bool is_history_role(std::string_view role)
{
    return role == mainline_runs || role == "baseline" || role == "candidate" || role == all_roles;
}

std::optional<std::string> history_role_filter(std::string_view role)
{
    if (role == all_roles || role == mainline_runs) return std::nullopt;
    return std::string(role);
}

void select_history_role(model::history_query& q, std::string_view role)
{
    q.role = history_role_filter(role);
    q.mainline_only = role == mainline_runs;
}

json history_to_json(const std::vector<model::history_point>& points)
{
    json list = json::array();
    for (const auto& p : points) {
        list.push_back({{"run_id", p.run_id},
                        {"git_sha", p.git_sha},
                        {"branch", p.branch},
                        {"role", p.role},
                        {"created_at", p.created_at},
                        {"n", p.n},
                        {"median", p.median},
                        {"mean", p.mean},
                        {"stddev", optional_json(p.stddev)},
                        {"cov", optional_json(p.cov)},
                        {"min", optional_json(p.min)},
                        {"max", optional_json(p.max)},
                        {"testbed", p.testbed},
                        {"testbed_name", p.testbed_name},
                        {"change_point", p.change_point},
                        {"mainline", p.mainline}});
    }
    return json{{"points", std::move(list)}};
}

std::vector<model::history_point> history_from_json(const json& doc)
{
    return reading_response("history", [&] {
        std::vector<model::history_point> out;
        for (const json& p : doc.at("points")) {
            model::history_point h;
            h.run_id = p.at("run_id").get<std::int64_t>();
            h.git_sha = p.at("git_sha").get<std::string>();
            h.branch = p.at("branch").get<std::string>();
            h.created_at = p.at("created_at").get<std::int64_t>();
            h.n = p.at("n").get<std::size_t>();
            h.median = p.at("median").get<double>();
            h.mean = p.at("mean").get<double>();
            if (!p.at("stddev").is_null()) h.stddev = p.at("stddev").get<double>();
            if (!p.at("cov").is_null()) h.cov = p.at("cov").get<double>();
            // min .. testbed_name, role and change_point are absent from older servers' points.
            if (p.contains("min") && !p.at("min").is_null()) h.min = p.at("min").get<double>();
            if (p.contains("max") && !p.at("max").is_null()) h.max = p.at("max").get<double>();
            if (p.contains("role")) h.role = p.at("role").get<std::string>();
            if (p.contains("testbed")) h.testbed = p.at("testbed").get<std::string>();
            if (p.contains("testbed_name")) h.testbed_name = p.at("testbed_name").get<std::string>();
            if (p.contains("change_point")) h.change_point = p.at("change_point").get<bool>();
            if (p.contains("mainline")) h.mainline = p.at("mainline").get<bool>();
            out.push_back(std::move(h));
        }
        return out;
    });
}

namespace {

// Which token wrote a run or an acceptance: {"id", "name"}, or null (the CLI
// on a database, or stored before tokens were recorded).
json written_by_json(const std::optional<model::token_ref>& by)
{
    return by ? json{{"id", by->id}, {"name", by->name}} : json(nullptr);
}

std::optional<model::token_ref> written_by_from(const json& doc)
{
    const auto it = doc.find("written_by");
    if (it == doc.end() || it->is_null()) return std::nullopt;
    return model::token_ref{it->at("id").get<std::int64_t>(), it->at("name").get<std::string>()};
}

} // namespace

json to_json(const model::reusable_run& r)
{
    return {{"run_id", r.run_id},       {"git_sha", r.git_sha},
            {"branch", r.branch},       {"role", r.role},
            {"toolchain", r.toolchain}, {"created_at", r.created_at},
            {"counters", r.counters},   {"written_by", written_by_json(r.written_by)}};
}

std::optional<model::reusable_run> reusable_run_from_json(const json& doc)
{
    return reading_response("baseline-run", [&]() -> std::optional<model::reusable_run> {
        const json& run = doc.at("run");
        if (run.is_null()) return std::nullopt;
        model::reusable_run r;
        r.run_id = run.at("run_id").get<std::int64_t>();
        if (r.run_id <= 0) {
            throw error(errors::server_bad_response,
                        fmt::format("baseline-run response: run_id must be positive, got {}", r.run_id));
        }
        r.git_sha = run.at("git_sha").get<std::string>();
        r.branch = run.at("branch").get<std::string>();
        r.role = run.at("role").get<std::string>();
        r.toolchain = run.at("toolchain").get<std::string>();
        r.created_at = run.at("created_at").get<std::int64_t>();
        r.counters = run.at("counters").get<std::vector<std::string>>();
        r.written_by = written_by_from(run);
        return r;
    });
}

std::string history_to_csv(const std::vector<model::history_point>& points)
{
    // role is the last column: readers of the older nine columns by name or
    // position keep working.
    std::string out = "run_id,git_sha,branch,created_at,n,median,mean,stddev,cov,role\n";
    for (const auto& p : points) {
        out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", p.run_id, csv_field(p.git_sha), csv_field(p.branch),
                           p.created_at, p.n, p.median, p.mean, optional_number(p.stddev), optional_number(p.cov),
                           csv_field(p.role));
    }
    return out;
}

// --- comparisons -------------------------------------------------------------------

namespace {

json side_json(const model::comparison_summary::side& s)
{
    return {{"run_id", s.run_id}, {"git_sha", s.git_sha}, {"branch", s.branch}};
}

model::comparison_summary::side side_from(const json& j)
{
    return {j.at("run_id").get<std::int64_t>(), j.at("git_sha").get<std::string>(), j.at("branch").get<std::string>()};
}

} // namespace

json to_json(const comparison_list& list)
{
    json items = json::array();
    for (const auto& c : list.comparisons) {
        items.push_back({{"id", c.id},
                         {"created_at", c.created_at},
                         {"verdict", c.verdict ? json(*c.verdict) : json(nullptr)},
                         {"benchmarks", c.benchmarks ? json(*c.benchmarks) : json(nullptr)},
                         {"baseline", side_json(c.baseline)},
                         {"candidate", side_json(c.candidate)}});
    }
    return {{"repository_url", list.repository_url ? json(*list.repository_url) : json(nullptr)},
            {"comparisons", std::move(items)}};
}

comparison_list comparison_list_from_json(const json& doc)
{
    return reading_response("comparisons", [&] {
        comparison_list out;
        if (!doc.at("repository_url").is_null()) out.repository_url = doc.at("repository_url").get<std::string>();
        for (const json& j : doc.at("comparisons")) {
            model::comparison_summary c;
            c.id = j.at("id").get<std::int64_t>();
            c.created_at = j.at("created_at").get<std::int64_t>();
            if (!j.at("verdict").is_null()) c.verdict = j.at("verdict").get<std::string>();
            if (!j.at("benchmarks").is_null()) c.benchmarks = j.at("benchmarks").get<std::size_t>();
            c.baseline = side_from(j.at("baseline"));
            c.candidate = side_from(j.at("candidate"));
            out.comparisons.push_back(std::move(c));
        }
        return out;
    });
}

// --- alerts and change points -----------------------------------------------------

namespace {

// The numbers both an alert and a change point carry.
void put_change(json& j, const model::change_point_record& r)
{
    j["benchmark"] = r.series.benchmark;
    j["counter"] = r.series.counter;
    j["testbed"] = r.series.testbed;
    j["branch"] = r.series.branch;
    j["run_id"] = r.run_id;
    j["git_sha"] = r.git_sha;
    j["p_value"] = r.p_value;
    j["mean_before"] = r.mean_before;
    j["mean_after"] = r.mean_after;
    j["median_before"] = r.median_before;
    j["median_after"] = r.median_after;
    j["delta_pct"] = optional_json(r.delta_pct);
    j["shift"] = r.shift;
    j["shift_ci"] = json::array({r.shift_lower, r.shift_upper});
}

model::change_point_record get_change(const json& j)
{
    model::change_point_record r;
    r.series = {j.at("benchmark").get<std::string>(), j.at("counter").get<std::string>(),
                j.at("testbed").get<std::string>(), j.at("branch").get<std::string>()};
    r.run_id = j.at("run_id").get<std::int64_t>();
    r.git_sha = j.at("git_sha").get<std::string>();
    r.p_value = j.at("p_value").get<double>();
    r.mean_before = j.at("mean_before").get<double>();
    r.mean_after = j.at("mean_after").get<double>();
    r.median_before = j.at("median_before").get<double>();
    r.median_after = j.at("median_after").get<double>();
    if (!j.at("delta_pct").is_null()) r.delta_pct = j.at("delta_pct").get<double>();
    r.shift = j.at("shift").get<double>();
    r.shift_lower = j.at("shift_ci").at(0).get<double>();
    r.shift_upper = j.at("shift_ci").at(1).get<double>();
    return r;
}

json effect_json(const model::culprit_effect& e)
{
    json ci = e.ci_lower_pct && e.ci_upper_pct ? json::array({*e.ci_lower_pct, *e.ci_upper_pct}) : json(nullptr);
    return json{{"counter", e.counter},
                {"unit", e.unit},
                {"status", e.status},
                {"before", optional_json(e.before)},
                {"after", optional_json(e.after)},
                {"delta_pct", optional_json(e.delta_pct)},
                {"ci_pct", std::move(ci)}};
}

std::optional<double> optional_number_from(const json& j, std::string_view name)
{
    const auto it = j.find(name);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<double>();
}

// The culprit of an answer (the server's; culprit_from_request checks a
// client's).
model::alert_culprit culprit_from(const json& j)
{
    model::alert_culprit k;
    k.status =
        model::parse_culprit_status(j.at("status").get<std::string>()).value_or(model::culprit_status::undecided);
    k.backend = j.at("backend").get<std::string>();
    k.counter = j.at("counter").get<std::string>();
    k.good_sha = j.at("good").get<std::string>();
    k.bad_sha = j.at("bad").get<std::string>();
    k.commits = j.at("commits").get<std::int64_t>();
    k.steps = j.at("steps").get<std::int64_t>();
    k.builds = j.at("builds").get<std::int64_t>();
    k.detail = j.at("detail").get<std::string>();
    k.stored_at = j.at("stored_at").get<std::int64_t>();
    k.written_by = written_by_from(j);
    for (const json& m : j.at("culprits")) {
        model::culprit_commit c{m.at("sha").get<std::string>(),
                                m.at("subject").get<std::string>(),
                                m.at("author").get<std::string>(),
                                m.at("share").get<double>(),
                                {}};
        for (const json& e : m.at("effects")) {
            model::culprit_effect x{e.at("counter").get<std::string>(),
                                    e.at("unit").get<std::string>(),
                                    e.at("status").get<std::string>(),
                                    optional_number_from(e, "before"),
                                    optional_number_from(e, "after"),
                                    optional_number_from(e, "delta_pct"),
                                    std::nullopt,
                                    std::nullopt};
            if (const auto ci = e.find("ci_pct"); ci != e.end() && !ci->is_null()) {
                x.ci_lower_pct = ci->at(0).get<double>();
                x.ci_upper_pct = ci->at(1).get<double>();
            }
            c.effects.push_back(std::move(x));
        }
        k.culprits.push_back(std::move(c));
    }
    return k;
}

model::alert get_alert(const json& j)
{
    model::alert a;
    a.id = j.at("id").get<std::int64_t>();
    a.change = get_change(j);
    a.change.created_at = j.at("run_created_at").get<std::int64_t>();
    const auto status = j.at("status").get<std::string>();
    a.status = model::parse_alert_status(status).value_or(model::alert_status::untriaged);
    a.note = j.at("note").get<std::string>();
    a.changed_by = j.at("changed_by").get<std::string>();
    a.changed_at = j.at("changed_at").get<std::int64_t>();
    a.created_at = j.at("created_at").get<std::int64_t>();
    a.updated_at = j.at("updated_at").get<std::int64_t>();
    // Servers before culprits were stored do not send the field.
    if (const auto c = j.find("culprit"); c != j.end() && !c->is_null()) a.culprit = culprit_from(*c);
    return a;
}

} // namespace

json to_json(const model::alert& a)
{
    json j = {{"id", a.id}};
    put_change(j, a.change);
    j["run_created_at"] = a.change.created_at;
    j["status"] = model::to_string(a.status);
    j["note"] = a.note;
    j["changed_by"] = a.changed_by;
    j["changed_at"] = a.changed_at;
    j["created_at"] = a.created_at;
    j["updated_at"] = a.updated_at;
    j["culprit"] = a.culprit ? to_json(*a.culprit) : json(nullptr);
    return j;
}

json culprit_request_json(const model::alert_culprit& c)
{
    json culprits = json::array();
    for (const auto& m : c.culprits) {
        json effects = json::array();
        for (const auto& e : m.effects) effects.push_back(effect_json(e));
        culprits.push_back(json{{"sha", m.sha},
                                {"subject", m.subject},
                                {"author", m.author},
                                {"share", m.share},
                                {"effects", std::move(effects)}});
    }
    return json{{"status", model::to_string(c.status)},
                {"backend", c.backend},
                {"counter", c.counter},
                {"good", c.good_sha},
                {"bad", c.bad_sha},
                {"commits", c.commits},
                {"steps", c.steps},
                {"builds", c.builds},
                {"culprits", std::move(culprits)},
                {"detail", c.detail}};
}

json to_json(const model::alert_culprit& c)
{
    json j = culprit_request_json(c);
    j["stored_at"] = c.stored_at;
    j["written_by"] = written_by_json(c.written_by);
    return j;
}

namespace {

// The request's members, each named in its error as "culprits[0].sha".
std::int64_t count_field(const json& doc, std::string_view name)
{
    const json* v = field(doc, name);
    if (!v) bad_field(fmt::format("field '{}' is required", name));
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0) {
        bad_field(fmt::format("field '{}' must be an integer at least 0, got {}", name, dump(*v).substr(0, 64)));
    }
    return v->get<std::int64_t>();
}

std::optional<double> number_field(const json& doc, std::string_view name, std::string_view path, bool required)
{
    const json* v = field(doc, name);
    if (!v) {
        if (required) bad_field(fmt::format("field '{}{}' is required", path, name));
        return std::nullopt;
    }
    if (!v->is_number()) bad_field(fmt::format("field '{}{}' must be a number, got {}", path, name, v->type_name()));
    return v->get<double>();
}

const json& array_field(const json& doc, std::string_view name, std::string_view path)
{
    const json* v = field(doc, name);
    if (!v) bad_field(fmt::format("field '{}{}' is required", path, name));
    if (!v->is_array()) bad_field(fmt::format("field '{}{}' must be an array, got {}", path, name, v->type_name()));
    return *v;
}

const json& object_at(const json& v, const std::string& where)
{
    if (!v.is_object()) bad_field(fmt::format("field '{}' must be an object, got {}", where, v.type_name()));
    return v;
}

model::culprit_effect effect_from_request(const json& v, const std::string& at)
{
    const json& e = object_at(v, at);
    const std::string path = at + ".";
    check_known_fields(e, {"counter", "unit", "status", "before", "after", "delta_pct", "ci_pct"}, path);
    model::culprit_effect x;
    x.counter = *string_field(e, "counter", path, true);
    x.unit = string_field(e, "unit", path, false).value_or("");
    x.status = *string_field(e, "status", path, true);
    x.before = number_field(e, "before", path, false);
    x.after = number_field(e, "after", path, false);
    x.delta_pct = number_field(e, "delta_pct", path, false);
    if (const json* ci = field(e, "ci_pct")) {
        if (!ci->is_array() || ci->size() != 2 || !(*ci)[0].is_number() || !(*ci)[1].is_number()) {
            bad_field(fmt::format("field '{}ci_pct' must be [lower, upper] or null, got {}", path,
                                  dump(*ci).substr(0, 64)));
        }
        x.ci_lower_pct = (*ci)[0].get<double>();
        x.ci_upper_pct = (*ci)[1].get<double>();
    }
    return x;
}

} // namespace

model::alert_culprit culprit_request_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(
        doc, {"status", "backend", "counter", "good", "bad", "commits", "steps", "builds", "culprits", "detail"}, "");
    model::alert_culprit k;
    const auto status = *string_field(doc, "status", "", true);
    const auto parsed = model::parse_culprit_status(status);
    if (!parsed) {
        bad_field(fmt::format("field 'status': '{}' is not a bisection's status (expected {})", status.substr(0, 64),
                              model::culprit_status_names()));
    }
    k.status = *parsed;
    k.backend = *string_field(doc, "backend", "", true);
    k.counter = *string_field(doc, "counter", "", true);
    k.good_sha = *string_field(doc, "good", "", true);
    k.bad_sha = *string_field(doc, "bad", "", true);
    k.commits = count_field(doc, "commits");
    k.steps = count_field(doc, "steps");
    k.builds = count_field(doc, "builds");
    k.detail = string_field(doc, "detail", "", false).value_or("");
    const json& culprits = array_field(doc, "culprits", "");
    // Counted before each is read: a list of a million is refused at once.
    if (culprits.size() > model::max_culprit_commits) {
        bad_field(fmt::format("field 'culprits': {} culprits; at most {}", culprits.size(),
                              model::max_culprit_commits));
    }
    for (std::size_t i = 0; i < culprits.size(); ++i) {
        const std::string at = fmt::format("culprits[{}]", i);
        const json& m = object_at(culprits[i], at);
        const std::string path = at + ".";
        check_known_fields(m, {"sha", "subject", "author", "share", "effects"}, path);
        model::culprit_commit c;
        c.sha = *string_field(m, "sha", path, true);
        c.subject = string_field(m, "subject", path, false).value_or("");
        c.author = string_field(m, "author", path, false).value_or("");
        c.share = *number_field(m, "share", path, true);
        const json& effects = array_field(m, "effects", path);
        if (effects.size() > model::max_culprit_effects) {
            bad_field(fmt::format("field '{}effects': {} effects; at most {}", path, effects.size(),
                                  model::max_culprit_effects));
        }
        for (std::size_t j = 0; j < effects.size(); ++j) {
            c.effects.push_back(effect_from_request(effects[j], fmt::format("{}effects[{}]", path, j)));
        }
        k.culprits.push_back(std::move(c));
    }
    return k;
}

json alerts_to_json(const std::vector<model::alert>& alerts)
{
    json list = json::array();
    for (const auto& a : alerts) list.push_back(to_json(a));
    return json{{"alerts", std::move(list)}};
}

model::alert alert_from_json(const json& doc)
{
    return reading_response("alert", [&] { return get_alert(doc); });
}

std::vector<model::alert> alerts_from_json(const json& doc)
{
    return reading_response("alerts", [&] {
        std::vector<model::alert> out;
        for (const json& a : doc.at("alerts")) out.push_back(get_alert(a));
        return out;
    });
}

model::alert_update alert_update_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(doc, {"status", "note"}, "");
    const auto status = string_field(doc, "status", "", true);
    model::alert_update u;
    const auto parsed = model::parse_alert_status(*status);
    if (!parsed) {
        constexpr std::size_t max_shown = 64;
        throw error(errors::alert_bad_status,
                    fmt::format("request body: field 'status': '{}' is not a status (expected {})",
                                status->substr(0, max_shown), model::alert_status_names()));
    }
    u.status = *parsed;
    u.note = string_field(doc, "note", "", false);
    return u;
}

json to_json(const model::alert_update& u)
{
    json j = {{"status", model::to_string(u.status)}};
    if (u.note) j["note"] = *u.note;
    return j;
}

webhook_request webhook_request_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(doc, {"url", "format", "secret"}, "");
    webhook_request r;
    r.url = *string_field(doc, "url", "", true);
    if (auto v = string_field(doc, "format", "", false); v && !v->empty()) r.format = *v;
    if (auto v = string_field(doc, "secret", "", false)) r.secret = *v;
    return r;
}

json to_json(const webhook_request& r)
{
    json out{{"url", r.url}, {"format", r.format}};
    if (!r.secret.empty()) out["secret"] = r.secret;
    return out;
}

acceptance_request acceptance_request_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(doc, {"head_sha", "login", "reason"}, "");
    acceptance_request r;
    r.head_sha = *string_field(doc, "head_sha", "", true);
    r.login = *string_field(doc, "login", "", true);
    r.reason = *string_field(doc, "reason", "", true);
    return r;
}

json to_json(const acceptance_request& r)
{
    return json{{"head_sha", r.head_sha}, {"login", r.login}, {"reason", r.reason}};
}

json to_json(const model::acceptance& a)
{
    return json{{"comparison_id", a.comparison_id},
                {"head_sha", a.head_sha},
                {"login", a.login},
                {"reason", a.reason},
                {"accepted_at", a.accepted_at},
                {"written_by", written_by_json(a.written_by)}};
}

model::acceptance acceptance_from_json(const json& doc)
{
    return reading_response("acceptance", [&] {
        model::acceptance a;
        a.comparison_id = doc.at("comparison_id").get<std::int64_t>();
        a.head_sha = doc.at("head_sha").get<std::string>();
        a.login = doc.at("login").get<std::string>();
        a.reason = doc.at("reason").get<std::string>();
        a.accepted_at = doc.at("accepted_at").get<std::int64_t>();
        a.written_by = written_by_from(doc);
        return a;
    });
}

namespace {

std::optional<double> percent_field(const json& doc, std::string_view name, std::string_view path, bool required)
{
    const json* v = field(doc, name);
    if (!v || v->is_null()) {
        if (required) bad_field(fmt::format("field '{}{}' is required", path, name));
        return std::nullopt;
    }
    if (!v->is_number()) bad_field(fmt::format("field '{}{}' must be a number, got {}", path, name, v->type_name()));
    return v->get<double>();
}

bool bool_field(const json& doc, std::string_view name, std::string_view path)
{
    const json* v = field(doc, name);
    if (!v) bad_field(fmt::format("field '{}{}' is required", path, name));
    if (!v->is_boolean())
        bad_field(fmt::format("field '{}{}' must be true or false, got {}", path, name, v->type_name()));
    return v->get<bool>();
}

json qualified_counters_json(const model::qualification& q)
{
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    json counters = json::array();
    for (const auto& c : q.counters) {
        counters.push_back(json{{"counter", c.counter},
                                {"threshold_pct", c.threshold_pct},
                                {"detects_80_pct", opt(c.detects_80_pct)},
                                {"detects_95_pct", opt(c.detects_95_pct)},
                                {"reaches_threshold", c.reaches_threshold},
                                {"deterministic", c.deterministic}});
    }
    return counters;
}

std::string utc_iso(std::int64_t t)
{
    const auto tt = static_cast<std::time_t>(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
}

} // namespace

model::qualification qualification_request_from_json(const json& doc)
{
    if (!doc.is_object()) bad_field(fmt::format("expected a JSON object, got {}", doc.type_name()));
    check_known_fields(doc, {"testbed_fingerprint", "testbed", "benchmark", "backend", "date", "counters"}, "");
    model::qualification q;
    q.testbed_fingerprint = *string_field(doc, "testbed_fingerprint", "", true);
    if (auto v = string_field(doc, "testbed", "", false)) q.testbed = *v;
    q.benchmark = *string_field(doc, "benchmark", "", true);
    q.backend = *string_field(doc, "backend", "", true);
    const std::string date = *string_field(doc, "date", "", true);
    const auto when = parse_timestamp(date);
    if (!when) {
        bad_field(fmt::format("field 'date': '{}' is not an RFC 3339 UTC time (2026-11-28T16:05:00Z)",
                              date.substr(0, 64)));
    }
    q.qualified_at = *when;
    const json* counters = field(doc, "counters");
    if (!counters) bad_field("field 'counters' is required");
    if (!counters->is_array())
        bad_field(fmt::format("field 'counters' must be an array, got {}", counters->type_name()));
    if (counters->size() > model::max_qualified_counters) {
        bad_field(fmt::format("field 'counters': expected 1 to {} counters, got {}", model::max_qualified_counters,
                              counters->size()));
    }
    for (std::size_t i = 0; i < counters->size(); ++i) {
        const json& c = (*counters)[i];
        const std::string path = fmt::format("counters[{}].", i);
        if (!c.is_object()) bad_field(fmt::format("field 'counters[{}]' must be an object, got {}", i, c.type_name()));
        check_known_fields(
            c, {"counter", "threshold_pct", "detects_80_pct", "detects_95_pct", "reaches_threshold", "deterministic"},
            path);
        model::qualified_counter k;
        k.counter = *string_field(c, "counter", path, true);
        k.threshold_pct = *percent_field(c, "threshold_pct", path, true);
        k.detects_80_pct = percent_field(c, "detects_80_pct", path, false);
        k.detects_95_pct = percent_field(c, "detects_95_pct", path, false);
        k.reaches_threshold = bool_field(c, "reaches_threshold", path);
        k.deterministic = bool_field(c, "deterministic", path);
        q.counters.push_back(std::move(k));
    }
    return q;
}

json qualification_request_to_json(const model::qualification& q)
{
    return json{{"testbed_fingerprint", q.testbed_fingerprint},
                {"testbed", q.testbed},
                {"benchmark", q.benchmark},
                {"backend", q.backend},
                {"date", utc_iso(q.qualified_at)},
                {"counters", qualified_counters_json(q)}};
}

json to_json(const model::qualification& q)
{
    json j = qualification_request_to_json(q);
    j["id"] = q.id;
    j["qualified_at"] = q.qualified_at;
    j["stored_at"] = q.stored_at;
    j["written_by"] = written_by_json(q.written_by);
    return j;
}

json to_json(const std::vector<model::qualification>& list)
{
    json out = json::array();
    for (const auto& q : list) out.push_back(to_json(q));
    return json{{"qualifications", std::move(out)}};
}

std::vector<model::qualification> qualifications_from_json(const json& doc)
{
    return reading_response("qualifications", [&] {
        std::vector<model::qualification> out;
        for (const json& j : doc.at("qualifications")) {
            model::qualification q;
            q.id = j.at("id").get<std::int64_t>();
            q.testbed_fingerprint = j.at("testbed_fingerprint").get<std::string>();
            q.testbed = j.at("testbed").get<std::string>();
            q.benchmark = j.at("benchmark").get<std::string>();
            q.backend = j.at("backend").get<std::string>();
            q.qualified_at = j.at("qualified_at").get<std::int64_t>();
            q.stored_at = j.at("stored_at").get<std::int64_t>();
            q.written_by = written_by_from(j);
            for (const json& c : j.at("counters")) {
                auto opt = [&](const char* name) {
                    const json& v = c.at(name);
                    return v.is_null() ? std::optional<double>() : std::optional(v.get<double>());
                };
                q.counters.push_back({c.at("counter").get<std::string>(), c.at("threshold_pct").get<double>(),
                                      opt("detects_80_pct"), opt("detects_95_pct"),
                                      c.at("reaches_threshold").get<bool>(), c.at("deterministic").get<bool>()});
            }
            out.push_back(std::move(q));
        }
        return out;
    });
}

json change_points_to_json(const std::vector<model::change_point_record>& points)
{
    json list = json::array();
    for (const auto& p : points) {
        json j = json::object();
        put_change(j, p);
        j["created_at"] = p.created_at;
        list.push_back(std::move(j));
    }
    return json{{"change_points", std::move(list)}};
}

std::vector<model::change_point_record> change_points_from_json(const json& doc)
{
    return reading_response("change-points", [&] {
        std::vector<model::change_point_record> out;
        for (const json& j : doc.at("change_points")) {
            auto r = get_change(j);
            r.created_at = j.at("created_at").get<std::int64_t>();
            out.push_back(std::move(r));
        }
        return out;
    });
}

namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
// (Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms",
// days_from_civil). Pure arithmetic: no time zone, no timegm, no tm
// normalisation that would turn 02-31 into 03-03.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool is_leap(unsigned y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(unsigned y, unsigned m)
{
    static constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

// The n-digit number at s[at..at+n), or nullopt unless all n are digits.
std::optional<unsigned> digits(std::string_view s, std::size_t at, std::size_t n)
{
    unsigned v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(s[i] - '0');
    }
    return v;
}

} // namespace

std::optional<std::int64_t> parse_timestamp(std::string_view s)
{
    // Unix seconds: an optional '-' and digits, nothing else.
    if (!s.empty() && s.find_first_not_of("0123456789", s.front() == '-' ? 1 : 0) == std::string_view::npos &&
        s != "-") {
        std::int64_t seconds = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), seconds);
        if (ec == std::errc{} && end == s.data() + s.size()) return seconds;
        return std::nullopt; // out of range
    }
    // YYYY-MM-DD (10 characters) or YYYY-MM-DDTHH:MM:SSZ (20): the RFC 3339
    // profile of ISO 8601, UTC only, two-digit fields, upper-case T and Z.
    if (s.size() != 10 && s.size() != 20) return std::nullopt;
    if (s[4] != '-' || s[7] != '-') return std::nullopt;
    const auto year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2);
    if (!year || !month || !day || *month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month)) {
        return std::nullopt;
    }
    std::int64_t t = days_from_civil(*year, *month, *day) * 86400;
    if (s.size() == 10) return t;
    if (s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z') return std::nullopt;
    const auto hour = digits(s, 11, 2), minute = digits(s, 14, 2), second = digits(s, 17, 2);
    if (!hour || !minute || !second || *hour > 23 || *minute > 59) return std::nullopt;
    // A leap second is 23:59:60 (RFC 3339 5.7); unix time has none, so it
    // is the next day's first second, as POSIX timegm makes it.
    if (*second > 59 && !(*second == 60 && *hour == 23 && *minute == 59)) return std::nullopt;
    return t + *hour * 3600 + *minute * 60 + *second;
}

// --- errors ---------------------------------------------------------------------

json error_json(std::string_view id, std::string_view message)
{
    return json{{"error", {{"id", id}, {"message", message}}}};
}

std::optional<std::pair<std::string, std::string>> error_from_body(std::string_view body)
{
    const json j = json::parse(body, nullptr, false);
    if (!j.is_object()) return std::nullopt;
    auto e = j.find("error");
    if (e == j.end() || !e->is_object()) return std::nullopt;
    auto id = e->find("id");
    auto message = e->find("message");
    if (id == e->end() || !id->is_string() || message == e->end() || !message->is_string()) return std::nullopt;
    return std::pair{id->get<std::string>(), message->get<std::string>()};
}

} // namespace perfgate::api
