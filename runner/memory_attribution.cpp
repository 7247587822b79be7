#include "runner/memory_attribution.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "model/error.hpp"
#include "profile/valgrind_memory.hpp"

namespace perfgate::runner {

namespace {

constexpr std::string_view source_valgrind = "valgrind";

struct side_memory {
    profile::memcheck_result memcheck;
    profile::dhat_result dhat;
};

side_memory read_side(const std::vector<std::filesystem::path>& files)
{
    side_memory out;
    for (const auto& f : files) {
        const auto name = f.filename().string();
        if (name.starts_with("memcheck.")) profile::merge(out.memcheck, profile::read_memcheck_xml(f));
        else if (name.starts_with("dhat.")) profile::merge(out.dhat, profile::read_dhat_json(f));
    }
    return out;
}

// A row being summed: before and after, and the stack and sentence of its
// largest occurrence on the candidate side (else the baseline's): of two
// sites in one function, the one that holds most of it.
struct tally {
    double before = 0, after = 0;
    double shown = -1; // value of the occurrence whose stack is kept
    bool shown_after = false;
    std::vector<profile::memory_frame> stack;
    std::string kind, what;
};

using tallies = std::map<std::string, tally, std::less<>>;

// The function responsible: the innermost frame outside the standard
// library (a by-value std::vector copy allocates in operator new, called
// from std::allocator, called from the vector's copy constructor, called
// from the function that copies).
std::string function_of(const std::vector<profile::memory_frame>& stack)
{
    const auto* f = profile::responsible_frame(stack);
    return f ? profile::frame_function(f->text) : std::string("(no stack)");
}

void add(tallies& t, const std::string& key, bool after, double v, const std::vector<profile::memory_frame>& stack,
         const std::string& kind = {}, const std::string& what = {})
{
    auto& row = t[key];
    (after ? row.after : row.before) += v;
    const bool better = (after && !row.shown_after) || (after == row.shown_after && v > row.shown);
    if (better) {
        row.shown = v;
        row.shown_after = after;
        row.stack = stack;
        row.kind = kind;
        row.what = what;
    }
}

tallies heap_sites(const side_memory& b, const side_memory& c, std::string_view counter)
{
    auto value = [counter](const profile::dhat_site& s) {
        return static_cast<double>(counter == "heap-allocs"  ? s.blocks
                                   : counter == "heap-bytes" ? s.bytes
                                                             : s.peak_bytes);
    };
    tallies t;
    for (const auto& s : b.dhat.sites) add(t, function_of(s.stack), false, value(s), s.stack);
    for (const auto& s : c.dhat.sites) add(t, function_of(s.stack), true, value(s), s.stack);
    return t;
}

tallies leaks(const side_memory& b, const side_memory& c)
{
    tallies t;
    for (const auto* side : {&b, &c}) {
        for (const auto& l : side->memcheck.leaks) {
            if (l.kind != "Leak_DefinitelyLost" && l.kind != "Leak_IndirectlyLost") continue;
            add(t, function_of(l.stack), side == &c, static_cast<double>(l.bytes), l.stack, l.kind, l.what);
        }
    }
    return t;
}

tallies errors_by_kind(const side_memory& b, const side_memory& c)
{
    tallies t;
    for (const auto* side : {&b, &c}) {
        for (const auto& e : side->memcheck.errors) {
            add(t, e.kind + " " + function_of(e.stack), side == &c, static_cast<double>(e.count), e.stack, e.kind,
                e.what);
        }
    }
    return t;
}

// The rows that grew, largest growth first, at most `top`.
void append_grown(std::vector<gate::memory_culprit>& out, const std::string& counter, const tallies& t, std::size_t top)
{
    std::vector<gate::memory_culprit> rows;
    for (const auto& [key, row] : t) {
        if (row.after <= row.before) continue;
        gate::memory_culprit m;
        m.counter = counter;
        m.function = function_of(row.stack);
        for (std::size_t i = 0; i < row.stack.size() && i < memory_stack_frames; ++i)
            m.stack.push_back(row.stack[i].text);
        m.kind = row.kind;
        m.what = row.what;
        m.before = row.before;
        m.after = row.after;
        rows.push_back(std::move(m));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& x, const auto& y) { return x.after - x.before > y.after - y.before; });
    if (rows.size() > top) rows.resize(top);
    for (auto& r : rows) out.push_back(std::move(r));
}

bool unnamed(const gate::memory_culprit& m) { return !m.stack.empty() && m.stack.front().starts_with("0x"); }

} // namespace

bool memory_counter(std::string_view counter)
{
    return counter == "heap-allocs" || counter == "heap-bytes" || counter == "heap-peak-bytes" ||
           counter == "leaked-bytes" || counter == "memcheck-errors";
}

gate::attribution memory_attribution(const std::vector<std::filesystem::path>& baseline,
                                     const std::vector<std::filesystem::path>& candidate,
                                     const std::vector<std::string>& failing_counters, std::size_t top)
{
    gate::attribution out;
    side_memory b, c;
    try {
        if (baseline.empty() || candidate.empty())
            throw error(errors::attribution_no_profile, "valgrind left no output files to attribute");
        b = read_side(baseline);
        c = read_side(candidate);
    } catch (const error& e) {
        out.errors.push_back({std::string(source_valgrind), std::string(e.id()), e.what()});
        return out;
    } catch (const std::exception& e) {
        out.errors.push_back({std::string(source_valgrind), std::string(errors::attribution_failed.view()), e.what()});
        return out;
    }
    gate::memory_attribution m;
    m.suppressed_before = b.memcheck.suppressed;
    m.suppressed_after = c.memcheck.suppressed;
    for (const auto& counter : failing_counters) {
        if (counter == "leaked-bytes") append_grown(m.top, counter, leaks(b, c), top);
        else if (counter == "memcheck-errors") append_grown(m.top, counter, errors_by_kind(b, c), top);
        else if (memory_counter(counter)) append_grown(m.top, counter, heap_sites(b, c, counter), top);
    }
    auto first_unnamed = std::find_if(m.top.begin(), m.top.end(), unnamed);
    if (first_unnamed != m.top.end()) {
        out.errors.push_back(
            {std::string(source_valgrind), std::string(errors::attribution_stripped.view()),
             fmt::format("valgrind knows '{}' only by its address ({}): the benchmark has no debug information. "
                         "Build it with -g and do not strip it (no -s, no strip) to see function names, files and "
                         "lines",
                         first_unnamed->function, first_unnamed->stack.front())});
    }
    out.memory = std::move(m);
    return out;
}

} // namespace perfgate::runner
