// JSON of a benchmark's attribution (report.hpp; the contract in
// /work/notes/attribution-contract.md): keys are the member names, optionals
// and an empty error list absent, an interval is [lo, hi].
#include "gate/report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::gate {

using nlohmann::json;

namespace {

// JSON has no NaN or infinity: a value that is not finite is written as null
// and read back as 0 (costs and shares are always finite when computed).
json attribution_number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

double attribution_number_from(const json& j, const char* key)
{
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? 0.0 : it->get<double>();
}

json function_change_json(const function_change& f)
{
    json j = {{"name", f.name},
              {"file", f.file},
              {"before", attribution_number(f.before)},
              {"after", attribution_number(f.after)},
              {"delta", attribution_number(f.delta)},
              {"share", attribution_number(f.share)}};
    if (f.interval && std::isfinite(f.interval->first) && std::isfinite(f.interval->second)) {
        j["interval"] = json::array({f.interval->first, f.interval->second});
    }
    if (f.significant) j["significant"] = *f.significant;
    return j;
}

function_change function_change_from(const json& j)
{
    function_change f;
    f.name = j.at("name").get<std::string>();
    f.file = j.value("file", std::string());
    f.before = attribution_number_from(j, "before");
    f.after = attribution_number_from(j, "after");
    f.delta = attribution_number_from(j, "delta");
    f.share = attribution_number_from(j, "share");
    if (auto it = j.find("interval"); it != j.end() && it->is_array() && it->size() == 2) {
        f.interval = std::pair{(*it)[0].get<double>(), (*it)[1].get<double>()};
    }
    if (auto it = j.find("significant"); it != j.end() && !it->is_null()) f.significant = it->get<bool>();
    return f;
}

json top_json(const std::vector<function_change>& top)
{
    json rows = json::array();
    for (const auto& f : top) rows.push_back(function_change_json(f));
    return rows;
}

std::vector<function_change> top_from(const json& j)
{
    std::vector<function_change> top;
    if (auto it = j.find("top"); it != j.end() && it->is_array()) {
        for (const auto& row : *it) top.push_back(function_change_from(row));
    }
    return top;
}

} // namespace

json to_json(const attribution& a)
{
    json j = json::object();
    if (a.callgrind) {
        j["callgrind"] = {{"event", a.callgrind->event},
                          {"total_before", attribution_number(a.callgrind->total_before)},
                          {"total_after", attribution_number(a.callgrind->total_after)},
                          {"top", top_json(a.callgrind->top)}};
    }
    if (a.perf) {
        json p = {{"event", a.perf->event},
                  {"executions", a.perf->executions},
                  {"samples_before", attribution_number(a.perf->samples_before)},
                  {"samples_after", attribution_number(a.perf->samples_after)},
                  {"top", top_json(a.perf->top)}};
        if (a.perf->flame_graph) p["flame_graph"] = *a.perf->flame_graph;
        j["perf"] = std::move(p);
    }
    // Absent when empty, as the other members (the contract).
    if (!a.errors.empty()) {
        json errors = json::array();
        for (const auto& e : a.errors) errors.push_back({{"source", e.source}, {"id", e.id}, {"message", e.message}});
        j["errors"] = std::move(errors);
    }
    return j;
}

attribution attribution_from_json(const json& j)
{
    if (!j.is_object()) throw error("input.bad_report", "report JSON: \"attribution\" is not an object");
    attribution a;
    if (auto it = j.find("callgrind"); it != j.end() && !it->is_null()) {
        callgrind_attribution c;
        c.event = it->value("event", std::string("Ir"));
        c.total_before = attribution_number_from(*it, "total_before");
        c.total_after = attribution_number_from(*it, "total_after");
        c.top = top_from(*it);
        a.callgrind = std::move(c);
    }
    if (auto it = j.find("perf"); it != j.end() && !it->is_null()) {
        perf_attribution p;
        p.event = it->value("event", std::string());
        p.executions = it->value("executions", std::size_t{0});
        p.samples_before = attribution_number_from(*it, "samples_before");
        p.samples_after = attribution_number_from(*it, "samples_after");
        p.top = top_from(*it);
        if (auto fg = it->find("flame_graph"); fg != it->end() && !fg->is_null()) p.flame_graph = fg->get<std::string>();
        a.perf = std::move(p);
    }
    if (auto it = j.find("errors"); it != j.end() && it->is_array()) {
        for (const auto& e : *it) {
            a.errors.push_back({e.at("source").get<std::string>(), e.at("id").get<std::string>(),
                                e.value("message", std::string())});
        }
    }
    return a;
}

} // namespace perfgate::gate
