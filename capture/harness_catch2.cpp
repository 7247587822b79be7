// Catch2's XML reporter output (-r xml), v2 (<Catch>) and v3
// (<Catch2TestRun>): capture/harness.hpp, docs/inputs.md.
//
// Each <BenchmarkResults> (at any depth inside a <TestCase>: BENCHMARK in a
// SECTION is nested in <Section>) is one benchmark, named by its name
// attribute (capture/names.hpp to_valid_name). The reporter writes no
// per-sample values, only the mean and standard deviation of the samples
// (each sample the mean time of `iterations` calls, in ns): the benchmark is
// summary-only, counter real_time (ns per call, as google/benchmark's
// real_time: wall-clock time per iteration), with the relative standard
// error of the mean sd/sqrt(samples)/mean*100 and `samples`, so the gate
// judges it by Welch's rule as perf stat -r aggregates.
// A <BenchmarkResults> with <failed message> (the benchmark threw), or one
// in a test case whose <OverallResult success="false"> (an assertion
// failed), is a failed benchmark, reported with the message or the first
// failed expression. --benchmark-no-analysis writes no standard deviation
// (value 0, ci 0): that is an error saying to run without it.
#include <cmath>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <pugixml.hpp>

#include "capture/harness.hpp"
#include "capture/suite_builder.hpp"
#include "model/error.hpp"

namespace perfgate::capture {

namespace {

struct context {
    std::string_view source;
    detail::suite_builder* suite;
    std::map<std::string, std::string, std::less<>> seen;
    std::size_t benchmarks = 0;
};

std::string element_path(const pugi::xml_node& node)
{
    std::string path;
    for (pugi::xml_node n = node; n && n.type() == pugi::node_element; n = n.parent()) {
        std::string part = n.name();
        if (const char* name = n.attribute("name").as_string(nullptr)) {
            part += fmt::format("[@name='{}']", std::string_view(name).substr(0, 80));
        }
        path = path.empty() ? part : part + "/" + path;
    }
    return path;
}

double number_attr(const pugi::xml_node& node, const char* attr, std::string_view source)
{
    const pugi::xml_attribute a = node.attribute(attr);
    const std::string where = fmt::format("{}/@{}", element_path(node), attr);
    if (!a) detail::bad_input(source, where, "missing; expected a number");
    const std::string text = a.value();
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size()) {
        detail::bad_input(source, where, fmt::format("'{}' is not a number", text.substr(0, 32)));
    }
    if (!std::isfinite(v)) detail::bad_input(source, where, "not a finite number");
    return v;
}

// The first failed assertion of a test case: "REQUIRE( fib(5) == 6 ) at c2.cpp:44".
std::string first_failure(const pugi::xml_node& test_case)
{
    const pugi::xpath_node e = test_case.select_node(".//Expression[@success='false']");
    if (e) {
        const pugi::xml_node x = e.node();
        std::string original = x.child_value("Original");
        const auto first = original.find_first_not_of(" \t\r\n");
        const auto last = original.find_last_not_of(" \t\r\n");
        original = first == std::string::npos ? "" : original.substr(first, last - first + 1);
        return fmt::format("{}( {} ) failed at {}:{}", x.attribute("type").as_string("CHECK"), original.substr(0, 200),
                           x.attribute("filename").as_string("?"), x.attribute("line").as_string("?"));
    }
    for (const char* kind : {".//Exception", ".//FatalErrorCondition"}) {
        if (const pugi::xpath_node f = test_case.select_node(kind)) {
            std::string text = f.node().child_value();
            const auto first = text.find_first_not_of(" \t\r\n");
            const auto last = text.find_last_not_of(" \t\r\n");
            text = first == std::string::npos ? "" : text.substr(first, last - first + 1);
            return fmt::format("{}: {}", f.node().name(), text.substr(0, 200));
        }
    }
    return "the test case failed";
}

void read_benchmark(context& c, const pugi::xml_node& result, const std::string& case_failure)
{
    const std::string where = element_path(result);
    if (++c.benchmarks > max_benchmarks_per_input) {
        detail::bad_input(c.source, where,
                          fmt::format("more than {} benchmarks in one input", max_benchmarks_per_input));
    }
    const char* raw = result.attribute("name").as_string(nullptr);
    if (!raw) detail::bad_input(c.source, where + "/@name", "missing; expected the benchmark's name");
    const std::string name = detail::unique_name(c.seen, raw, c.source, where + "/@name", "benchmark");
    if (const pugi::xml_node f = result.child("failed")) {
        c.suite->fail(name, fmt::format("benchmark failed: {}", f.attribute("message").as_string("")));
        return;
    }
    if (!case_failure.empty()) {
        c.suite->fail(name, case_failure);
        return;
    }
    const double samples = number_attr(result, "samples", c.source);
    if (samples < 2 || samples != std::floor(samples) || samples > static_cast<double>(max_repetitions)) {
        detail::bad_input(c.source, where + "/@samples",
                          fmt::format("expected a whole number of samples from 2 to {}", max_repetitions));
    }
    const pugi::xml_node mean = result.child("mean");
    const pugi::xml_node sd = result.child("standardDeviation");
    if (!mean) detail::bad_input(c.source, where + "/mean", "missing; expected the benchmark's mean");
    if (!sd) detail::bad_input(c.source, where + "/standardDeviation", "missing; expected the standard deviation");
    const double m = number_attr(mean, "value", c.source);
    const double s = number_attr(sd, "value", c.source);
    if (m <= 0) detail::bad_input(c.source, where + "/mean/@value", "expected a time > 0");
    if (s < 0) detail::bad_input(c.source, where + "/standardDeviation/@value", "expected a value >= 0");
    if (s == 0 && sd.attribute("ci").as_double(1) == 0) {
        detail::bad_input(c.source, where + "/standardDeviation",
                          "no standard deviation (Catch2 ran with --benchmark-no-analysis): run the benchmarks "
                          "without it, so that their spread is known");
    }
    const double rse_pct = s / std::sqrt(samples) / m * 100.0;
    const std::size_t b = c.suite->new_repetition(name, where);
    c.suite->set_summary(b, "real_time", "ns", m, rse_pct, static_cast<std::size_t>(samples), where);
}

// The first element nested deeper than max_xml_depth, or null. pugixml's
// traversal is iterative, so a deep document cannot exhaust the stack here.
pugi::xml_node too_deep(pugi::xml_document& doc)
{
    struct walker : pugi::xml_tree_walker {
        pugi::xml_node found;
        bool for_each(pugi::xml_node& n) override
        {
            // depth() is 0 for the root element: its depth is 1.
            if (n.type() != pugi::node_element || static_cast<std::size_t>(depth()) < max_xml_depth) return true;
            found = n;
            return false;
        }
    } w;
    doc.traverse(w);
    return w.found;
}

// The outermost <TestCase> elements below root, in document order. Catch2
// never nests test cases; were a document to, an inner one belongs to its
// outer one (read once, with it), so every element is visited once: reading
// each test case's subtree from every enclosing one was quadratic.
std::vector<pugi::xml_node> outer_test_cases(const pugi::xml_node& root)
{
    std::vector<pugi::xml_node> out;
    std::vector<pugi::xml_node> stack;
    for (pugi::xml_node n = root.last_child(); n; n = n.previous_sibling()) stack.push_back(n);
    while (!stack.empty()) {
        const pugi::xml_node n = stack.back();
        stack.pop_back();
        if (n.type() != pugi::node_element) continue;
        if (std::string_view(n.name()) == "TestCase") {
            out.push_back(n);
            continue;
        }
        for (pugi::xml_node c = n.last_child(); c; c = c.previous_sibling()) stack.push_back(c);
    }
    return out;
}

// The benchmarks of a test case, at any depth (sections nest them).
void read_test_case(context& c, const pugi::xml_node& test_case)
{
    const pugi::xml_node overall = test_case.child("OverallResult");
    std::string case_failure;
    if (overall && !overall.attribute("success").as_bool(true)) {
        case_failure = fmt::format("test case '{}': {}",
                                   std::string_view(test_case.attribute("name").as_string("?")).substr(0, 120),
                                   first_failure(test_case));
    }
    for (const pugi::xpath_node& r : test_case.select_nodes(".//BenchmarkResults")) {
        read_benchmark(c, r.node(), case_failure);
    }
}

} // namespace

sample_set parse_catch2_xml(std::string_view text, std::string_view source)
{
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed = doc.load_buffer(text.data(), text.size());
    if (!parsed) {
        detail::bad_input(source, fmt::format("byte {}", parsed.offset),
                          fmt::format("not valid XML: {}", parsed.description()));
    }
    const pugi::xml_node root = doc.document_element();
    const std::string_view root_name = root.name();
    if (root_name != "Catch" && root_name != "Catch2TestRun") {
        detail::bad_input(source, root_name.empty() ? "/" : std::string(root_name).substr(0, 80),
                          "expected Catch2's XML reporter output (<Catch> or <Catch2TestRun>)");
    }
    if (const pugi::xml_node deep = too_deep(doc)) {
        detail::bad_input(source, fmt::format("byte {}", deep.offset_debug()),
                          fmt::format("<{}> is nested more than {} elements deep, the limit for Catch2's XML "
                                      "(docs/inputs.md#catch2)",
                                      std::string_view(deep.name()).substr(0, 80), max_xml_depth));
    }
    detail::suite_builder suite(source);
    context c{source, &suite, {}, 0};
    // v2 puts test cases in <Group>, v3 directly under the root.
    for (const pugi::xml_node& t : outer_test_cases(root)) read_test_case(c, t);
    sample_set out = suite.finish();
    if (out.benchmarks.empty()) {
        detail::bad_input(source, root_name,
                          "no benchmark results (<BenchmarkResults>): build with CATCH_CONFIG_ENABLE_BENCHMARKING "
                          "(Catch2 v2) and do not pass --skip-benchmarks");
    }
    return out;
}

} // namespace perfgate::capture
