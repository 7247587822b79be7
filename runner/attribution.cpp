#include "runner/attribution.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "report/render.hpp"
#include "runner/memory_attribution.hpp"

namespace perfgate::runner {

namespace {

constexpr std::string_view cost_event = "Ir";
constexpr std::string_view source_callgrind = "callgrind";

// Adds one file's functions to a side: costs by name, and each name's file
// where its exclusive cost is highest.
void add_profile(side_profile& side, std::map<std::string, std::uint64_t, std::less<>>& file_cost,
                 const profile::callgrind_profile& p)
{
    const auto event = p.event_index(cost_event);
    if (!event) {
        throw error(errors::profile_unknown_event,
                    fmt::format("the profile has no event '{}' (it has: {})", cost_event, fmt::join(p.events, " ")));
    }
    for (const auto& f : p.functions) {
        const std::uint64_t cost = f.self[*event];
        auto& c = side.costs[f.name];
        c += cost;
        side.total += cost;
        if (unnamed_function(f.name)) {
            side.unnamed += cost;
            if (side.unnamed_example.empty()) side.unnamed_example = f.name;
        }
        // The costliest entry's file names the function: a name defined in
        // several files (static helpers) shows where most of it ran.
        auto& best = file_cost[f.name];
        if (cost >= best) {
            best = cost;
            side.files[f.name] = f.main_file == "???" ? std::string() : f.main_file;
        }
    }
}

// "baseline: 87% of ..." when a side is mostly unnamed, else "".
std::string stripped_message(std::string_view which, const side_profile& side)
{
    if (side.total == 0) return {};
    const double share = static_cast<double>(side.unnamed) / static_cast<double>(side.total);
    if (share <= max_unnamed_share) return {};
    return fmt::format("the {} profile has {:.0f}% of its instructions in functions callgrind knows only by address "
                       "(such as {}): the benchmark has no symbols (stripped, or linked with -s). Build it with "
                       "symbols to see function names: compile with -g and do not strip it (no -s, no strip, no "
                       "install -s)",
                       which, share * 100, side.unnamed_example);
}

// The candidate's file of a function, or the baseline's for one that is gone.
std::string file_of(const std::string& name, const side_profile& after, const side_profile& before)
{
    if (auto it = after.files.find(name); it != after.files.end()) return it->second;
    if (auto it = before.files.find(name); it != before.files.end()) return it->second;
    return {};
}

gate::callgrind_attribution to_report(const profile::profile_diff& d, const side_profile& before,
                                      const side_profile& after)
{
    gate::callgrind_attribution out;
    out.event = std::string(cost_event);
    out.total_before = static_cast<double>(d.total_before);
    out.total_after = static_cast<double>(d.total_after);
    for (const auto& c : d.top) {
        gate::function_change row;
        row.name = c.name;
        row.file = file_of(c.name, after, before);
        row.before = static_cast<double>(c.before);
        row.after = static_cast<double>(c.after);
        row.delta = static_cast<double>(c.delta);
        row.share = c.share;
        out.top.push_back(std::move(row));
    }
    return out;
}

const benchmark_measurement* measurement_of(const std::vector<benchmark_measurement>& measured, std::string_view name)
{
    auto it = std::find_if(measured.begin(), measured.end(), [&](const auto& m) { return m.name == name; });
    return it == measured.end() ? nullptr : &*it;
}

// "callgrind.1234" -> "1234": the pid callgrind put in the file name.
std::string pid_suffix(const std::filesystem::path& p)
{
    const auto name = p.filename().string();
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

void copy_profiles(const std::vector<std::filesystem::path>& files, const std::filesystem::path& dir,
                   std::string_view which)
{
    for (std::size_t i = 0; i < files.size(); ++i) {
        // --backend memcheck: valgrind's own files, under their names
        // (<side>.memcheck.<pid>.xml, <side>.dhat.<pid>.json).
        const auto own = files[i].filename().string();
        if (own.starts_with("memcheck.") || own.starts_with("dhat.")) {
            std::filesystem::copy_file(files[i], dir / fmt::format("{}.{}", which, own),
                                       std::filesystem::copy_options::overwrite_existing);
            continue;
        }
        const auto name = i == 0 ? fmt::format("{}.callgrind", which)
                                 : fmt::format("{}.callgrind.{}", which, pid_suffix(files[i]));
        std::filesystem::copy_file(files[i], dir / name, std::filesystem::copy_options::overwrite_existing);
    }
}

void write_json(const std::filesystem::path& path, const nlohmann::json& j)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out.flush()) throw error(errors::io_write, fmt::format("{}: cannot write", path.string()));
}

} // namespace

bool unnamed_function(std::string_view name)
{
    if (name.size() < 3 || name[0] != '0' || (name[1] != 'x' && name[1] != 'X')) return false;
    return std::all_of(name.begin() + 2, name.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
}

side_profile read_side(const std::vector<std::filesystem::path>& files, const profile::callgrind_limits& limits)
{
    if (files.empty()) {
        throw error(errors::attribution_no_profile, "callgrind left no profile to attribute (see the warnings above)");
    }
    side_profile side;
    std::map<std::string, std::uint64_t, std::less<>> file_cost;
    // One file at a time: the memory is one parsed profile, not all of them.
    for (const auto& f : files) add_profile(side, file_cost, profile::read_callgrind(f, limits));
    return side;
}

gate::attribution callgrind_attribution(const std::vector<std::filesystem::path>& baseline,
                                        const std::vector<std::filesystem::path>& candidate,
                                        const attribution_options& opt)
{
    gate::attribution out;
    auto fail = [&](std::string_view id, std::string message) {
        out.errors.push_back({std::string(source_callgrind), std::string(id), std::move(message)});
        return out;
    };
    side_profile before, after;
    try {
        before = read_side(baseline, opt.limits);
        after = read_side(candidate, opt.limits);
    } catch (const error& e) {
        return fail(e.id(), e.what());
    } catch (const std::exception& e) { // bad_alloc, filesystem errors
        return fail(errors::attribution_failed.view(), e.what());
    }
    for (const auto& [which, side] : {std::pair{"baseline", &before}, std::pair{"candidate", &after}}) {
        if (auto why = stripped_message(which, *side); !why.empty())
            return fail(errors::attribution_stripped.view(), why);
    }
    out.callgrind = to_report(profile::diff_costs(before.costs, after.costs, opt.top), before, after);
    return out;
}

std::vector<std::string> attribute_regressions(gate::report& r, const std::vector<benchmark_measurement>& measured,
                                               const attribution_options& opt)
{
    std::vector<std::string> warnings;
    for (auto& b : r.benchmarks) {
        if (b.result != gate::verdict::fail) continue;
        const auto* m = measurement_of(measured, b.name);
        if (!m) continue;
        gate::attribution found;
        if (m->candidate.run.backend == to_string(backend::callgrind)) {
            found = callgrind_attribution(m->baseline.profiles, m->candidate.profiles, opt);
        } else if (m->candidate.run.backend == to_string(backend::memcheck)) {
            std::vector<std::string> failing;
            for (const auto& c : b.counters)
                if (c.gated && c.state == gate::status::regression) failing.push_back(c.name);
            found = memory_attribution(m->baseline.profiles, m->candidate.profiles, failing);
        } else {
            continue;
        }
        auto& info = b.attribution_info ? *b.attribution_info : b.attribution_info.emplace();
        info.callgrind = std::move(found.callgrind);
        info.memory = std::move(found.memory);
        for (auto& e : found.errors) {
            warnings.push_back(fmt::format("benchmark '{}': {} attribution failed (the verdict stands): {}", b.name,
                                           e.source, e.message));
            info.errors.push_back(std::move(e));
        }
    }
    return warnings;
}

std::filesystem::path artifact_dir(const std::filesystem::path& root, std::string_view benchmark)
{
    std::string name;
    for (std::size_t i = 0; i < benchmark.size(); ++i) {
        const char c = benchmark[i];
        if (c == '/' || c == '%' || (i == 0 && c == '.')) name += fmt::format("%{:02X}", static_cast<unsigned char>(c));
        else name += c;
    }
    return root / name;
}

std::vector<std::string> write_artifacts(const gate::report& r, const std::vector<benchmark_measurement>& measured,
                                         const std::filesystem::path& root)
{
    std::vector<std::string> warnings;
    for (const auto& b : r.benchmarks) {
        if (!b.attribution_info) continue;
        const auto dir = artifact_dir(root, b.name);
        try {
            std::filesystem::create_directories(dir);
            if (const auto* m = measurement_of(measured, b.name)) {
                copy_profiles(m->baseline.profiles, dir, "baseline");
                copy_profiles(m->candidate.profiles, dir, "candidate");
            }
            auto j = report::to_json(*b.attribution_info);
            j["benchmark"] = b.name;
            write_json(dir / "attribution.json", j);
        } catch (const std::exception& e) {
            warnings.push_back(fmt::format("benchmark '{}': could not write the artifacts to {}: {}", b.name,
                                           dir.string(), e.what()));
        }
    }
    return warnings;
}

} // namespace perfgate::runner
