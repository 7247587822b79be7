// A differential flame graph as one self-contained SVG (issue 12): no script,
// no stylesheet, no font or image from outside; it opens in any browser, and
// a frame's tooltip (its <title>) gives both sides' counts and the change.
//
// What it shows:
//  - the candidate's stacks (folded, "comm;root;...;leaf N"), merged into a
//    tree rooted at "all"; a frame's width is its candidate samples
//    (inclusive: itself and its callees), children left to right by name,
//    callers below callees (root at the bottom), as flamegraph.pl draws;
//  - its colour is the change of the frame's *self* share: its samples as the
//    leaf of a stack over each side's total samples, after minus before
//    (normalised, so a candidate that ran longer does not redden everything).
//    Red grew, blue shrank, grey unchanged; the intensity is |change| over
//    max(largest |change| drawn, saturate_pp), so that in an A/A comparison
//    noise of a fraction of a point stays pale. Self rather than inclusive
//    change, like flamegraph.pl's differential mode: an inclusive colour
//    would paint every caller of a grown function as red as the function.
//  - frames narrower than min_frame_width pixels are not drawn, nor their
//    callees (counted in flame_layout::omitted); frames only in the baseline
//    have no candidate width and are not drawn (flame_layout::baseline_only;
//    the top-N table lists such functions).
// Names are XML-escaped (C++ templates have < > &); bytes that are not valid
// UTF-8 or not allowed in XML 1.0 become '?'.
#pragma once

#include "profile/perf_script.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace perfgate::profile {

struct flame_graph_options {
    std::string title = "Differential flame graph";
    std::string subtitle;         // e.g. the event and the sample counts; empty: none
    double width = 1200;          // px
    double frame_height = 16;     // px
    double min_frame_width = 0.1; // px, as flamegraph.pl --minwidth
    double saturate_pp = 2.0;     // percentage points, see above
    double font_size = 12;        // px, monospace
};

struct flame_frame {
    std::string name;
    std::size_t depth = 0;                         // 0: "all"
    double x = 0, width = 0;                       // px within the plot
    std::uint64_t after = 0, before = 0;           // inclusive samples per side
    std::uint64_t self_after = 0, self_before = 0; // as the leaf of a stack
    double change_pp = 0;                          // self share after - before, percentage points
};

struct flame_layout {
    std::vector<flame_frame> frames; // depth-first, parents before children, children by name
    std::size_t omitted = 0;         // candidate frames too narrow to draw (with their callees)
    std::size_t baseline_only = 0;   // frames with baseline samples and none in the candidate
    std::size_t max_depth = 0;       // of the drawn frames
    std::uint64_t total_before = 0, total_after = 0;
    double scale_pp = 0; // |change| drawn at full colour
};

// The tree of both profiles and the geometry of the frames to draw.
// Errors: "profile.no_samples" when the candidate has no samples.
flame_layout layout_flame_graph(const folded_stacks& before, const folded_stacks& after,
                                const flame_graph_options& options = {});

// The SVG document of a layout.
std::string render_flame_graph(const flame_layout& layout, const flame_graph_options& options = {});

// layout + render.
std::string differential_flame_graph(const folded_stacks& before, const folded_stacks& after,
                                     const flame_graph_options& options = {});

// One line per drawn frame: "depth x width after before change_pp name", for
// golden tests and reading a graph in a terminal.
std::string format_frames(const flame_layout& layout);

// Text as XML character data or an attribute value: & < > " ' escaped,
// control characters other than tab/newline and invalid UTF-8 as '?'.
std::string xml_escape(std::string_view text);

} // namespace perfgate::profile
