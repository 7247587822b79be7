// Tests of the perf side of attribution (issue 12) without processes: the
// intervals (stats/proportions), the self-sample diff (profile/perf_diff),
// the differential flame graph (profile/flamegraph) and the report's
// "attribution" JSON.
//
// tests/data/perf-script/checksum_*.script: examples/checksum.cpp built with
// `g++ -O2 -g -fno-omit-frame-pointer` as base/checksum and (with
// -DPERFGATE_EXAMPLE_REGRESSED, the vector taken by value) regressed/checksum,
// each recorded with `perf record -g -e cpu-clock -F 2000 -- ./checksum 60`
// (perf 6.1, kernel 6.x, a 2-vCPU VM without PMU) and printed with
// `perf script`: two recordings of the baseline, one of the candidate.
#include "gate/report.hpp"
#include "profile/flamegraph.hpp"
#include "profile/perf_diff.hpp"
#include "profile/perf_script.hpp"
#include "report/render.hpp"
#include "stats/mde.hpp"
#include "stats/proportions.hpp"

#include "model/error.hpp"
#include "model/file.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/numbers.hpp"

using namespace perfgate;
using namespace perfgate::profile;
using perfgate::test::close_rel;

namespace {

std::string perf_script_path(const std::string& name)
{
    return std::string(PERFGATE_TESTDATA_DIR) + "/perf-script/" + name;
}

folded_stacks recorded(const std::string& name)
{
    return fold_perf_script(model::read_text_file(perf_script_path(name)), name);
}

folded_stacks folded_of(std::initializer_list<std::pair<const char*, std::uint64_t>> stacks)
{
    folded_stacks f;
    for (const auto& [stack, n] : stacks) {
        f.stacks[stack] += n;
        f.total += n;
        f.samples += n;
    }
    return f;
}

const self_sample_change* row_named(const self_sample_diff& d, std::string_view name)
{
    for (const auto& r : d.top) {
        if (r.name == name) return &r;
    }
    return nullptr;
}

std::size_t count_of_text(const std::string& text, std::string_view needle)
{
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
    return n;
}

} // namespace

// Values from tests/reference/gen_attribution_refs.py (scipy 1.10.1): the
// formulas, with Wilson cross-checked against scipy.stats.binomtest(...)
// .proportion_ci(method="wilson") and Newcombe against the paper's example.
TEST_CASE("proportions: Wilson and Newcombe intervals, dispersion (reference values)")
{
    constexpr double tol = 1e-9;
    const double z95 = 1.959963984540054; // norm.ppf(0.975)
    CHECK(close_rel(stats::normal_quantile(0.975), z95, 1e-12));

    struct wilson_row {
        double x, n, z, lo, hi;
    };
    for (const auto& r : {wilson_row{0, 10, z95, 0, 0.2775327998628892},
                          wilson_row{3, 10, z95, 0.10779126740630099, 0.60322185253885463},
                          wilson_row{10, 10, z95, 0.72246720013711074, 1},
                          wilson_row{304, 1613, 3.5, 0.15678253969859626, 0.22485105513296813},
                          wilson_row{1, 2, 1, 0.21132486540518713, 0.78867513459481287},
                          wilson_row{50.5, 101.25, z95, 0.40321601505621973, 0.59440510465412189}}) {
        CAPTURE(r.x);
        CAPTURE(r.n);
        const auto w = stats::wilson_interval(r.x, r.n, r.z);
        CHECK(close_rel(w.lo, r.lo, tol));
        CHECK(close_rel(w.hi, r.hi, tol));
    }

    struct newcombe_row {
        double x1, n1, x2, n2, z, lo, hi;
    };
    for (const auto& r :
         {newcombe_row{48, 80, 56, 70, z95, 0.052431472402365065, 0.33387265403690602},
          newcombe_row{0, 1198, 304, 1613, 3.5, 0.15520512913258255, 0.22485105513296813},
          newcombe_row{83, 95, 83, 95, z95, -0.097066731481952509, 0.097066731481952509},
          newcombe_row{5, 1000, 0, 900, 3, -0.017407143739771425, 0.0055271935766747606},
          newcombe_row{20.25, 300.5, 10.5, 280.75, z95, -0.067988035869395336, 0.0072899969549721291}}) {
        CAPTURE(r.x1);
        CAPTURE(r.x2);
        const auto d = stats::newcombe_difference(r.x1, r.n1, r.x2, r.n2, r.z);
        CHECK(close_rel(d.lo, r.lo, tol));
        CHECK(close_rel(d.hi, r.hi, tol));
    }

    using ec = stats::execution_count;
    CHECK(close_rel(stats::pearson_dispersion({{ec{10, 100}, ec{20, 100}, ec{15, 100}}, {ec{5, 80}, ec{9, 90}}}),
                    1.5698955864397037, tol));
    CHECK(stats::pearson_dispersion({{ec{10, 100}, ec{10, 100}, ec{10, 100}}, {ec{10, 100}}}) == 1);
    CHECK(close_rel(stats::pearson_dispersion({{ec{0, 100}, ec{0, 120}}, {ec{40, 100}, ec{10, 100}, ec{25, 110}}}),
                    12.36802063185042, tol));
    CHECK(stats::pearson_dispersion({{ec{5, 50}}, {ec{7, 60}}}) == 1); // no degrees of freedom

    // Bonferroni critical values: norm.ppf(1 - alpha / (2 m)).
    CHECK(close_rel(stats::normal_quantile(1 - 0.05 / (2 * 100)), 3.4807564043462422, tol));
    CHECK(close_rel(stats::normal_quantile(1 - 0.05 / (2 * 37)), 3.2048452050105642, tol));

    SUBCASE("bad input")
    {
        CHECK_THROWS_AS(stats::wilson_interval(3, 2, z95), error);
        CHECK_THROWS_AS(stats::wilson_interval(1, 0, z95), error);
        CHECK_THROWS_AS(stats::wilson_interval(-1, 2, z95), error);
        CHECK_THROWS_AS(stats::wilson_interval(1, 2, -1), error);
        CHECK_THROWS_AS(stats::pearson_dispersion({{ec{3, 2}}}), error);
    }
}

TEST_CASE("perf diff: self samples, shares, intervals")
{
    SUBCASE("a hand-made pair: values worked out from the formulas")
    {
        // Baseline: f 60, g 40 (of 100). Candidate: f 60, g 40, copy 100 (of 200).
        const auto before = folded_of({{"p;main;f", 60}, {"p;main;g", 40}});
        const auto after = folded_of({{"p;main;f", 60}, {"p;main;g", 40}, {"p;main;copy", 100}});
        const auto d = diff_self_samples({before}, {after}, 10);
        CHECK(d.samples_before == 100);
        CHECK(d.samples_after == 200);
        CHECK(d.functions == 3);
        CHECK(close_rel(d.z, stats::normal_quantile(1 - 0.05 / 6), 1e-12));
        REQUIRE(d.top.size() == 3);
        // |change|: copy +50 points, f -30, g -20.
        CHECK(d.top[0].name == "copy");
        CHECK(d.top[0].change_pp == doctest::Approx(50));
        CHECK(d.top[1].name == "f");
        CHECK(d.top[1].change_pp == doctest::Approx(-30));
        CHECK(d.top[2].name == "g");
        // Counts: only copy's changed (0 -> 100): its share of the change is 1.
        CHECK(d.top[0].before == 0);
        CHECK(d.top[0].after == 100);
        CHECK(d.top[0].share_of_change == 1);
        CHECK(d.top[1].share_of_change == 0);
        // One execution per side: no dispersion estimate, the binomial interval.
        CHECK(d.top[0].dispersion == 1);
        const auto ci = stats::newcombe_difference(0, 100, 100, 200, d.z);
        CHECK(d.top[0].lo_pp == doctest::Approx(ci.lo * 100));
        CHECK(d.top[0].hi_pp == doctest::Approx(ci.hi * 100));
        CHECK(d.top[0].significant);
        CHECK(d.top[1].significant); // 60% -> 30% of 100 and 200 samples
    }
    SUBCASE("the same profile on both sides: nothing listed")
    {
        const auto f = folded_of({{"p;main;f", 60}, {"p;main;g", 40}});
        CHECK(diff_self_samples({f, f}, {f, f}, 10).top.empty());
    }
    SUBCASE("executions that disagree widen the interval (dispersion)")
    {
        // f's share: 10%, 50% in the baseline's executions; 30%, 30% in the candidate's.
        const auto b1 = folded_of({{"p;f", 10}, {"p;g", 90}});
        const auto b2 = folded_of({{"p;f", 50}, {"p;g", 50}});
        const auto c = folded_of({{"p;f", 29}, {"p;g", 71}});
        const auto d = diff_self_samples({b1, b2}, {c, c}, 10);
        const auto* f = row_named(d, "f");
        REQUIRE(f != nullptr);
        CHECK(f->dispersion > 10);
        // X^2 of the baseline (p = 0.3): (10-30)^2/21 + (50-30)^2/21; the
        // candidate's two equal executions add 0; one degree of freedom each.
        CHECK(f->dispersion == doctest::Approx((400.0 / 21 + 400.0 / 21) / 2));
        CHECK_FALSE(f->significant);
    }
    SUBCASE("the top N, ordered by |change|, ties by name")
    {
        const auto before = folded_of({{"p;a", 10}, {"p;b", 10}, {"p;c", 10}, {"p;d", 70}});
        const auto after = folded_of({{"p;a", 20}, {"p;b", 20}, {"p;c", 10}, {"p;d", 50}});
        const auto d = diff_self_samples({before}, {after}, 2);
        REQUIRE(d.top.size() == 2);
        CHECK(d.top[0].name == "d");
        CHECK(d.top[1].name == "a");
    }
    SUBCASE("a side without samples")
    {
        const auto f = folded_of({{"p;f", 1}});
        CHECK_THROWS_WITH_AS(diff_self_samples({folded_stacks{}}, {f}, 10),
                             doctest::Contains("the baseline side's profile has no samples"), error);
        CHECK_THROWS_WITH_AS(diff_self_samples({f}, {}, 10),
                             doctest::Contains("the candidate side's profile has no samples"), error);
    }
}

TEST_CASE("perf diff on recorded profiles: A/A marks nothing, the by-value copy is the top grown function")
{
    const auto base1 = recorded("checksum_base_1.script");
    const auto base2 = recorded("checksum_base_2.script");
    const auto regressed = recorded("checksum_regressed.script");
    CHECK(base1.samples == 133);
    CHECK(base2.samples == 142);
    CHECK(regressed.samples == 197);

    SUBCASE("A/A: two recordings of the baseline")
    {
        const auto d = diff_self_samples({base1}, {base2}, 50);
        REQUIRE(!d.top.empty());
        for (const auto& r : d.top) {
            CAPTURE(r.name);
            CHECK_FALSE(r.significant);
            CHECK(r.lo_pp < 0);
            CHECK(r.hi_pp > 0);
        }
    }
    SUBCASE("A/B: the copy of the vector taken by value")
    {
        const auto d = diff_self_samples({base1, base2}, {regressed}, 10);
        const auto* copy = row_named(d, "__memmove_avx512_unaligned_erms");
        REQUIRE(copy != nullptr);
        CHECK(copy->before == 0);
        CHECK(copy->after == 42);
        CHECK(copy->change_pp == doctest::Approx(100.0 * 42 / 197));
        CHECK(copy->significant);
        CHECK(copy->lo_pp > 10);
        // The top grown function, by far: every other one grew by less than a third of it.
        for (const auto& r : d.top) {
            if (&r != copy && r.change_pp > 0) CHECK(r.change_pp * 3 < copy->change_pp);
        }
        // main (the inlined checksum loop) keeps its samples but loses share.
        const auto* main_row = row_named(d, "main");
        REQUIRE(main_row != nullptr);
        CHECK(main_row->change_pp < 0);
    }
}

TEST_CASE("flame graph: layout of recorded profiles (golden frame list)")
{
    const auto before = recorded("checksum_base_1.script");
    const auto after = recorded("checksum_regressed.script");
    const auto layout = layout_flame_graph(before, after);
    CHECK(layout.total_before == 133);
    CHECK(layout.total_after == 197);
    REQUIRE(!layout.frames.empty());

    // The root spans the plot (1200 px - 2 x 10 px margins).
    CHECK(layout.frames[0].name == "all");
    CHECK(layout.frames[0].width == doctest::Approx(1180));
    // The copy: 42 of the candidate's 197 samples wide, +21.3 points of self share.
    const flame_frame* copy = nullptr;
    for (const auto& f : layout.frames) {
        if (f.name == "__memmove_avx512_unaligned_erms" && f.self_after == 42) copy = &f;
    }
    REQUIRE(copy != nullptr);
    // Inclusive width: its 42 samples and the page faults taken inside it.
    CHECK(copy->width == doctest::Approx(1180.0 * static_cast<double>(copy->after) / 197));
    CHECK(copy->after == 42 + 7);
    CHECK(copy->change_pp == doctest::Approx(100.0 * 42 / 197));
    CHECK(copy->before == 0);
    // The largest growth; main (the inlined loop) shrank by a little more,
    // which sets the colour scale.
    double largest_growth = 0, largest = 0;
    for (const auto& f : layout.frames) {
        largest_growth = std::max(largest_growth, f.change_pp);
        largest = std::max(largest, std::fabs(f.change_pp));
    }
    CHECK(largest_growth == copy->change_pp);
    CHECK(layout.scale_pp == largest);

    // Golden: tests/data/perf-script/checksum_diff.frames, produced by this
    // code from the two files above and checked against the recordings by
    // the assertions above (widths, counts, changes); a change of layout
    // rules shows up here. PERFGATE_UPDATE_GOLDEN=1 rewrites it.
    const auto golden_path = perf_script_path("checksum_diff.frames");
    const auto frames = format_frames(layout);
    if (std::getenv("PERFGATE_UPDATE_GOLDEN") != nullptr) std::ofstream(golden_path) << frames;
    CHECK(frames == model::read_text_file(golden_path));
}

TEST_CASE("flame graph: SVG document")
{
    const auto before = folded_of({{"app;main;std::vector<int, std::allocator<int> >::operator=", 10},
                                   {"app;main;work", 90}});
    const auto after = folded_of({{"app;main;std::vector<int, std::allocator<int> >::operator=", 40},
                                  {"app;main;work", 60},
                                  {"app;main;a&b \"q\" 'x'", 1}});
    flame_graph_options o;
    o.title = "t <1>";
    o.subtitle = "cpu-clock & more";
    const auto svg = differential_flame_graph(before, after, o);

    SUBCASE("self-contained, escaped, one <g> with a <title> per frame")
    {
        CHECK(svg.starts_with("<?xml version=\"1.0\""));
        CHECK(svg.find("<script") == std::string::npos);
        CHECK(svg.find("href") == std::string::npos);
        CHECK(svg.find("<style") == std::string::npos);
        CHECK(svg.find("std::vector&lt;int, std::allocator&lt;int&gt; &gt;::operator=") != std::string::npos);
        CHECK(svg.find("a&amp;b &quot;q&quot; &apos;x&apos;") != std::string::npos);
        CHECK(svg.find("t &lt;1&gt;") != std::string::npos);
        CHECK(svg.find("cpu-clock &amp; more") != std::string::npos);
        // all, app, main and three functions; the legend group has no title.
        CHECK(count_of_text(svg, "<g><title>") == 6);
        CHECK(count_of_text(svg, "<g") == count_of_text(svg, "</g>"));
        CHECK(count_of_text(svg, "<rect") == 6 + 3); // frames, background, two legend swatches
        // No raw '<' or '&' other than markup and entities.
        for (std::size_t at = svg.find('&'); at != std::string::npos; at = svg.find('&', at + 1)) {
            const auto entity = svg.substr(at, svg.find(';', at) - at + 1);
            CHECK((entity == "&amp;" || entity == "&lt;" || entity == "&gt;" || entity == "&quot;" ||
                   entity == "&apos;"));
        }
    }
    SUBCASE("colours: the grown frame red, the shrunk one blue, callers grey")
    {
        const auto layout = layout_flame_graph(before, after, o);
        auto fill_of = [&](std::string_view name) {
            const auto at = svg.find(xml_escape(name) + "\ncandidate:");
            REQUIRE(at != std::string::npos);
            const auto fill = svg.find("fill=\"", at) + 6;
            return svg.substr(fill, svg.find('"', fill) - fill);
        };
        // work: 90% -> 60/101, the largest change: full blue; the scale.
        CHECK(layout.scale_pp == doctest::Approx(90 - 100.0 * 60 / 101));
        CHECK(fill_of("work") == "rgb(60,60,255)");
        // operator=: 10% -> 40/101, a smaller change: a lighter red.
        const double t = (100.0 * 40 / 101 - 10) / layout.scale_pp;
        CHECK(fill_of("std::vector<int, std::allocator<int> >::operator=") ==
              fmt::format("rgb({},{},{})", std::lround(225 + 30 * t), std::lround(225 - 165 * t),
                          std::lround(225 - 165 * t)));
        CHECK(fill_of("main") == "rgb(225,225,225)");
    }
    SUBCASE("tooltips give both counts and the change")
    {
        CHECK(svg.find("work\ncandidate: 60 samples (59.41%), self 60 (59.41%)\n"
                       "baseline: 90 samples (90.00%), self 90 (90.00%)\nchange of self share: -30.59 pp") !=
              std::string::npos);
    }
}

TEST_CASE("flame graph: narrow frames, baseline-only frames, an A/A scale, names")
{
    SUBCASE("frames narrower than min_frame_width are not drawn, nor their callees")
    {
        const auto after = folded_of({{"p;big", 100000}, {"p;tiny;deeper", 1}});
        const auto layout = layout_flame_graph(folded_of({{"p;big", 1}}), after);
        CHECK(layout.omitted == 2); // tiny and deeper: 1/100001 of 1180 px < 0.1 px
        for (const auto& f : layout.frames) CHECK(f.name != "tiny");
        CHECK(render_flame_graph(layout).find("2 narrower than 0.1 px not drawn") != std::string::npos);
    }
    SUBCASE("functions only in the baseline are counted, not drawn")
    {
        const auto layout = layout_flame_graph(folded_of({{"p;gone;callee", 5}, {"p;kept", 5}}),
                                               folded_of({{"p;kept", 5}}));
        CHECK(layout.baseline_only == 2);
        CHECK(layout.frames.size() == 3); // all, p, kept
    }
    SUBCASE("small changes stay pale: the colour saturates at saturate_pp at least")
    {
        const auto layout = layout_flame_graph(folded_of({{"p;f", 500}, {"p;g", 500}}),
                                               folded_of({{"p;f", 505}, {"p;g", 495}}));
        CHECK(layout.scale_pp == 2.0);
        const auto svg = render_flame_graph(layout);
        CHECK(svg.find("rgb(255,60,60)") == svg.find("rgb(255,60,60)\"/><text x=\"26.0\"")); // only the legend's
    }
    SUBCASE("no candidate samples")
    {
        CHECK_THROWS_WITH_AS(layout_flame_graph(folded_of({{"p;f", 1}}), folded_stacks{}),
                             doctest::Contains("no samples"), error);
    }
    SUBCASE("xml_escape: markup, controls, invalid UTF-8")
    {
        CHECK(xml_escape("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;");
        CHECK(xml_escape("tab\tnl\ncr\r") == "tab\tnl\ncr\r");
        CHECK(xml_escape(std::string("bell\x07 nul") + '\0') == "bell? nul?");
        CHECK(xml_escape("caf\xc3\xa9") == "caf\xc3\xa9"); // valid UTF-8 kept
        CHECK(xml_escape("bad\xc3(\xff") == "bad?(?");
        CHECK(xml_escape("cut\xe2\x82") == "cut??");
    }
    SUBCASE("long names are cut to fit their frame, not in a UTF-8 sequence")
    {
        const std::string name = std::string(300, 'x') + "\xc3\xa9";
        const auto svg = differential_flame_graph(folded_of({{"p;f", 1}}),
                                                  folded_of({{(std::string("p;") + name).c_str(), 1}}));
        CHECK(svg.find(name + "</title>") == std::string::npos); // tooltip: the full name...
        CHECK(svg.find(name + "\ncandidate") != std::string::npos);
        CHECK(svg.find("x..</text>") != std::string::npos); // ...the label: cut
    }
}

TEST_CASE("perf script: samples without symbols are counted per object (stripped binaries)")
{
    const auto f = fold_perf_script("app 1 1.0: 250000 cpu-clock:\n"
                                    "\t    1315 [unknown] (/tmp/app)\n"
                                    "\t    2000 main+0x1 (/tmp/app)\n"
                                    "\n"
                                    "app 1 1.1: 250000 cpu-clock:\n"
                                    "\t    1315 [unknown] (/tmp/app)\n"
                                    "\n"
                                    "app 1 1.2: 250000 cpu-clock:\n"
                                    "\t       0 [unknown] ([unknown])\n"
                                    "\n"
                                    "app 1 1.3: 250000 cpu-clock:\n"
                                    "\t    2000 main+0x1 (/tmp/app)\n"
                                    "\t    1315 [unknown] (/tmp/app)\n",
                                    "s.txt");
    CHECK(f.samples == 4);
    // Leaves only; an unknown object is not a stripped binary.
    REQUIRE(f.unsymbolized_leaves.size() == 1);
    CHECK(f.unsymbolized_leaves.at("/tmp/app") == 2);
}

TEST_CASE("perf script: read_perf_script streams a file in chunks, with the same result")
{
    const auto text = model::read_text_file(perf_script_path("checksum_regressed.script"));
    const auto whole = fold_perf_script(text, "x");
    CHECK(format_folded(read_perf_script(perf_script_path("checksum_regressed.script"))) == format_folded(whole));

    // Past the 1 MiB chunk: lines cut at chunk boundaries are joined.
    const auto dir = std::filesystem::temp_directory_path();
    const auto big = dir / "perfgate-test-flame-big.script";
    std::string many;
    std::size_t copies = 0;
    while (many.size() < (3u << 20) + 12345) {
        many += text;
        ++copies;
    }
    std::ofstream(big, std::ios::binary) << many;
    const auto f = read_perf_script(big);
    CHECK(f.samples == copies * whole.samples);
    CHECK(format_folded(f) == format_folded(fold_perf_script(many, "x")));
    // The same without a final newline.
    std::ofstream(big, std::ios::binary) << "p 1 1.0: 1 cpu-clock:\n\t1 f+0x1 (/x)";
    CHECK(format_folded(read_perf_script(big)) == "p;f 1\n");

    SUBCASE("errors name the file as given and the line")
    {
        std::ofstream(big, std::ios::binary) << "p 1 1.0: 1 cpu-clock:\n\t1 f (/x)\n\n\t2 g (/x)\n";
        CHECK_THROWS_WITH_AS(read_perf_script(big, {}, "cand-1.script"),
                             "cand-1.script:4: a stack frame outside a sample (no header line before it)", error);
        perf_script_options o;
        o.max_line_bytes = 100;
        std::ofstream(big, std::ios::binary) << "p 1 1.0: 1 cpu-clock:\n\t" << std::string(5000, 'x');
        CHECK_THROWS_WITH_AS(read_perf_script(big, o, "c"),
                             "c:2: line longer than 100 bytes (perf_script_options::max_line_bytes)", error);
        CHECK_THROWS_WITH_AS(read_perf_script(dir / "perfgate-no-such-file.script"),
                             doctest::Contains("perfgate-no-such-file.script: cannot read: No such file or directory"),
                             error);
    }
    std::filesystem::remove(big);
}

TEST_CASE("report JSON: attribution")
{
    gate::report r;
    gate::benchmark_report b;
    b.name = "parse";
    r.benchmarks.push_back(b);
    SUBCASE("absent when nothing was profiled")
    {
        const auto j = perfgate::report::to_json(r);
        CHECK_FALSE(j["benchmarks"][0].contains("attribution"));
        CHECK_FALSE(perfgate::report::report_from_json(j).benchmarks[0].attribution_info.has_value());
    }
    SUBCASE("round trip; optionals absent when empty")
    {
        gate::attribution a;
        gate::perf_attribution p;
        p.event = "cpu-clock";
        p.executions = 3;
        p.samples_before = 1198;
        p.samples_after = 1613;
        p.flame_graph = "parse/flame.svg";
        gate::function_change row;
        row.name = "__memmove_avx512_unaligned_erms";
        row.before = 0;
        row.after = 304;
        row.delta = 304;
        row.share = 0.65;
        row.interval = std::pair{10.4, 27.9};
        row.significant = true;
        p.top.push_back(row);
        a.perf = p;
        a.errors.push_back({"perf", "profile.stripped", "samples without function names"});
        r.benchmarks[0].attribution_info = a;

        const auto j = perfgate::report::to_json(r);
        const auto& ja = j["benchmarks"][0]["attribution"];
        CHECK_FALSE(ja.contains("callgrind"));
        CHECK(ja["perf"]["event"] == "cpu-clock");
        CHECK(ja["perf"]["executions"] == 3);
        CHECK(ja["perf"]["flame_graph"] == "parse/flame.svg");
        CHECK(ja["perf"]["top"][0]["interval"] == nlohmann::json::array({10.4, 27.9}));
        CHECK(ja["perf"]["top"][0]["significant"] == true);
        CHECK(ja["errors"][0]["id"] == "profile.stripped");

        const auto back = perfgate::report::report_from_json(j).benchmarks[0].attribution_info;
        REQUIRE(back.has_value());
        REQUIRE(back->perf.has_value());
        CHECK(back->perf->top[0].name == row.name);
        CHECK(back->perf->top[0].after == 304);
        CHECK(back->perf->top[0].interval == row.interval);
        CHECK(back->perf->top[0].significant == true);
        CHECK(back->perf->flame_graph == p.flame_graph);
        CHECK(back->errors.size() == 1);
        CHECK(perfgate::report::to_json(perfgate::report::report_from_json(j)) == j);
    }
    SUBCASE("callgrind rows carry no interval")
    {
        gate::attribution a;
        gate::callgrind_attribution c;
        c.total_before = 100;
        c.total_after = 150;
        gate::function_change row;
        row.name = "f";
        row.delta = 50;
        c.top.push_back(row);
        a.callgrind = c;
        const auto j = perfgate::report::to_json(a);
        CHECK_FALSE(j["callgrind"]["top"][0].contains("interval"));
        CHECK_FALSE(j["callgrind"]["top"][0].contains("significant"));
        CHECK(j["callgrind"]["event"] == "Ir");
        CHECK(perfgate::report::to_json(perfgate::report::attribution_from_json(j)) == j);
    }
}
