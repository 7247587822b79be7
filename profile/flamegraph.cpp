#include "profile/flamegraph.hpp"

#include "model/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

namespace perfgate::profile {

namespace {

// Geometry of the drawing (px).
constexpr double flame_pad = 10;           // left, right and bottom margins
constexpr double flame_header = 66;        // title, subtitle and the legend line above the frames
constexpr double flame_char_width = 0.59;  // of the font size: flamegraph.pl's estimate for monospace
constexpr std::size_t flame_min_chars = 3; // shorter labels are left out

struct flame_node {
    std::map<std::string, std::unique_ptr<flame_node>, std::less<>> children; // by name: the drawing order
    std::uint64_t after = 0, before = 0, self_after = 0, self_before = 0;
};

void add_stack(flame_node& root, std::string_view stack, std::uint64_t n, bool candidate)
{
    flame_node* node = &root;
    auto count = [&](flame_node& f) { (candidate ? f.after : f.before) += n; };
    count(root);
    while (!stack.empty()) {
        const auto semi = stack.find(';');
        const auto name = stack.substr(0, semi);
        stack.remove_prefix(semi == std::string_view::npos ? stack.size() : semi + 1);
        auto it = node->children.find(name);
        if (it == node->children.end())
            it = node->children.emplace(std::string(name), std::make_unique<flame_node>()).first;
        node = it->second.get();
        count(*node);
    }
    (candidate ? node->self_after : node->self_before) += n;
}

std::size_t subtree_size(const flame_node& n, bool candidate_frames_only)
{
    std::size_t size = candidate_frames_only ? (n.after > 0) : 1;
    for (const auto& [name, child] : n.children) size += subtree_size(*child, candidate_frames_only);
    return size;
}

double share_pp(std::uint64_t n, std::uint64_t total)
{
    return total == 0 ? 0.0 : 100.0 * static_cast<double>(n) / static_cast<double>(total);
}

class flame_layouter {
public:
    flame_layouter(flame_layout& out, const flame_graph_options& o) : out_(out), opt_(o)
    {
        px_per_sample_ = (o.width - 2 * flame_pad) / static_cast<double>(out.total_after);
    }

    void place(const std::string& name, const flame_node& node, std::size_t depth, double x)
    {
        flame_frame f;
        f.name = name;
        f.depth = depth;
        f.x = x;
        f.width = static_cast<double>(node.after) * px_per_sample_;
        f.after = node.after;
        f.before = node.before;
        f.self_after = node.self_after;
        f.self_before = node.self_before;
        f.change_pp = share_pp(node.self_after, out_.total_after) - share_pp(node.self_before, out_.total_before);
        out_.max_depth = std::max(out_.max_depth, depth);
        out_.frames.push_back(std::move(f));

        double child_x = x;
        for (const auto& [child_name, child] : node.children) {
            if (child->after == 0) {
                out_.baseline_only += subtree_size(*child, false);
                continue;
            }
            const double w = static_cast<double>(child->after) * px_per_sample_;
            if (w < opt_.min_frame_width) {
                out_.omitted += subtree_size(*child, true);
            } else {
                place(child_name, *child, depth + 1, child_x);
            }
            child_x += w;
        }
    }

private:
    flame_layout& out_;
    const flame_graph_options& opt_;
    double px_per_sample_ = 0;
};

// Red grew, blue shrank, light grey unchanged; t in [0, 1] is the intensity.
std::string frame_colour(double change_pp, double scale_pp)
{
    const double t = std::min(1.0, std::fabs(change_pp) / scale_pp);
    const auto strong = static_cast<int>(std::lround(225 + 30 * t));
    const auto weak = static_cast<int>(std::lround(225 - 165 * t));
    if (change_pp > 0) return fmt::format("rgb({},{},{})", strong, weak, weak);
    if (change_pp < 0) return fmt::format("rgb({},{},{})", weak, weak, strong);
    return "rgb(225,225,225)";
}

// Length of the valid UTF-8 sequence starting at s[i] (0: invalid).
std::size_t utf8_sequence(std::string_view s, std::size_t i)
{
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return 0;
    for (std::size_t k = 1; k < len; ++k) {
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
    }
    return len;
}

// A label that fits `width` px: the name, or its start and "..".
std::string fitted_label(const std::string& name, double width, double font_size)
{
    const auto chars = static_cast<std::size_t>(std::max(0.0, (width - 6) / (font_size * flame_char_width)));
    if (chars < flame_min_chars) return {};
    if (name.size() <= chars) return name;
    std::size_t cut = chars - 2;
    // Not in the middle of a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xc0) == 0x80) --cut;
    return name.substr(0, cut) + "..";
}

std::string with_sign(double pp) { return fmt::format("{}{:.2f} pp", pp > 0 ? "+" : "", pp); }

std::string frame_tooltip(const flame_frame& f, const flame_layout& l)
{
    return fmt::format("{}\ncandidate: {} samples ({:.2f}%), self {} ({:.2f}%)\n"
                       "baseline: {} samples ({:.2f}%), self {} ({:.2f}%)\nchange of self share: {}",
                       f.name, f.after, share_pp(f.after, l.total_after), f.self_after,
                       share_pp(f.self_after, l.total_after), f.before, share_pp(f.before, l.total_before),
                       f.self_before, share_pp(f.self_before, l.total_before), with_sign(f.change_pp));
}

} // namespace

std::string xml_escape(std::string_view text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        const auto len = utf8_sequence(text, i);
        if (len == 0) {
            out += '?';
            ++i;
            continue;
        }
        if (len > 1) {
            out.append(text.substr(i, len));
            i += len;
            continue;
        }
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default:
            // XML 1.0 allows tab, newline and carriage return among the controls.
            out += static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c;
        }
        ++i;
    }
    return out;
}

flame_layout layout_flame_graph(const folded_stacks& before, const folded_stacks& after,
                                const flame_graph_options& options)
{
    flame_node root;
    for (const auto& [stack, n] : after.stacks) add_stack(root, stack, n, true);
    for (const auto& [stack, n] : before.stacks) add_stack(root, stack, n, false);
    if (root.after == 0)
        throw error(errors::profile_no_samples, "the candidate's profile has no samples: no flame graph to draw");

    flame_layout out;
    out.total_after = root.after;
    out.total_before = root.before;
    flame_layouter(out, options).place("all", root, 0, 0);
    double largest = 0;
    for (const auto& f : out.frames) largest = std::max(largest, std::fabs(f.change_pp));
    out.scale_pp = std::max(largest, options.saturate_pp);
    return out;
}

std::string render_flame_graph(const flame_layout& l, const flame_graph_options& o)
{
    const double height = flame_header + static_cast<double>(l.max_depth + 1) * o.frame_height + 2 * flame_pad +
                          o.font_size;
    std::string svg = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
        "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
        "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"monospace\" font-size=\"{2:g}\">\n"
        "<title>{3}</title>\n"
        "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"rgb(250,250,250)\"/>\n"
        "<text x=\"{4:.1f}\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">{3}</text>\n",
        o.width, height, o.font_size, xml_escape(o.title), o.width / 2);
    if (!o.subtitle.empty()) {
        svg += fmt::format("<text x=\"{:.1f}\" y=\"42\" text-anchor=\"middle\" fill=\"rgb(80,80,80)\">{}</text>\n",
                           o.width / 2, xml_escape(o.subtitle));
    }
    // Legend: what the colours and widths mean.
    const double legend_y = 52;
    svg += fmt::format("<g id=\"legend\"><rect x=\"{0:.1f}\" y=\"{1:.1f}\" width=\"12\" height=\"10\" fill=\"{2}\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4:.1f}\">self share grew</text>"
                       "<rect x=\"{5:.1f}\" y=\"{1:.1f}\" width=\"12\" height=\"10\" fill=\"{6}\"/>"
                       "<text x=\"{7:.1f}\" y=\"{4:.1f}\">shrank (full colour at {8:.2f} pp)</text>"
                       "<text x=\"{9:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\">width: candidate samples</text></g>\n",
                       flame_pad, legend_y, frame_colour(1, 1), flame_pad + 16, legend_y + 9, flame_pad + 150,
                       frame_colour(-1, 1), flame_pad + 166, l.scale_pp, o.width - flame_pad);

    const double bottom = flame_header + static_cast<double>(l.max_depth + 1) * o.frame_height;
    for (const auto& f : l.frames) {
        const double x = flame_pad + f.x;
        const double y = bottom - static_cast<double>(f.depth + 1) * o.frame_height;
        svg += fmt::format("<g><title>{}</title><rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" "
                           "fill=\"{}\" rx=\"2\" ry=\"2\"/>",
                           xml_escape(frame_tooltip(f, l)), x, y, f.width, o.frame_height - 1,
                           frame_colour(f.change_pp, l.scale_pp));
        if (auto label = fitted_label(f.name, f.width, o.font_size); !label.empty()) {
            svg += fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text>", x + 3, y + o.frame_height - 4.5,
                               xml_escape(label));
        }
        svg += "</g>\n";
    }
    std::string note = fmt::format("{} frames", l.frames.size());
    if (l.omitted > 0) note += fmt::format("; {} narrower than {:g} px not drawn", l.omitted, o.min_frame_width);
    if (l.baseline_only > 0) note += fmt::format("; {} only in the baseline not drawn", l.baseline_only);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"rgb(80,80,80)\">{}</text>\n", flame_pad,
                       bottom + flame_pad + o.font_size - 2, xml_escape(note));
    svg += "</svg>\n";
    return svg;
}

std::string differential_flame_graph(const folded_stacks& before, const folded_stacks& after,
                                     const flame_graph_options& options)
{
    return render_flame_graph(layout_flame_graph(before, after, options), options);
}

std::string format_frames(const flame_layout& layout)
{
    std::string out;
    for (const auto& f : layout.frames) {
        out += fmt::format("{} {:.2f} {:.2f} {} {} {:+.3f} {}\n", f.depth, f.x, f.width, f.after, f.before, f.change_pp,
                           f.name);
    }
    return out;
}

} // namespace perfgate::profile
