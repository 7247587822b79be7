#include "profile/perf_script.hpp"

#include "model/error.hpp"
#include "profile/lines.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <vector>

namespace perfgate::profile {

namespace {

bool is_space_ps(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool all_digits(std::string_view s)
{
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_hex_offset(std::string_view s) // "0x1b"
{
    return s.size() > 2 && s[0] == '0' && s[1] == 'x' && std::all_of(s.begin() + 2, s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
           });
}

class perf_script_folder {
public:
    perf_script_folder(std::string_view source, const perf_script_options& o) : source_(source), opt_(o) {}

    folded_stacks fold(std::string_view text)
    {
        while (!text.empty()) feed(detail::take_line(text));
        return finish();
    }

    // One line, without its '\n'.
    void feed(std::string_view l)
    {
        ++line_no_;
        if (l.size() > opt_.max_line_bytes)
            fail(fmt::format("line longer than {} bytes (perf_script_options::max_line_bytes)", opt_.max_line_bytes));
        while (!l.empty() && is_space_ps(l.back())) l.remove_suffix(1);
        line(l);
    }

    folded_stacks finish()
    {
        finish_sample();
        return std::move(out_);
    }

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw error(errors::profile_bad_perf_script, fmt::format("{}:{}: {}", source_, line_no_, what));
    }

    void line(std::string_view l)
    {
        if (l.empty()) return finish_sample();
        if (l[0] == '#') return;
        if (l[0] == ' ' || l[0] == '\t') return frame(l);
        finish_sample();
        header(l);
    }

    // "comm pid[/tid] [cpu] time: [period] event:"; comm may hold spaces,
    // so the pid is the first all-digit (or digits/digits) token after it.
    void header(std::string_view l)
    {
        std::vector<std::string_view> tokens;
        for (std::size_t i = 0; i < l.size();) {
            while (i < l.size() && is_space_ps(l[i])) ++i;
            auto start = i;
            while (i < l.size() && !is_space_ps(l[i])) ++i;
            if (i > start) tokens.push_back(l.substr(start, i - start));
        }
        std::size_t pid = 0;
        for (std::size_t i = 1; i < tokens.size() && pid == 0; ++i) {
            auto t = tokens[i];
            auto slash = t.find('/');
            if (all_digits(t.substr(0, slash)) && (slash == std::string_view::npos || all_digits(t.substr(slash + 1))))
                pid = i;
        }
        if (pid == 0)
            fail(fmt::format("not a perf script sample header (no pid after the command): '{}'", l.substr(0, 80)));
        auto comm_end = tokens[pid - 1].data() + tokens[pid - 1].size();
        comm_ = std::string(l.substr(0, static_cast<std::size_t>(comm_end - l.data())));
        weight_ = 1;
        if (opt_.weight_by_period) {
            // The period is the number right before the event name ("...: 500000 cpu-clock:").
            weight_ = 0;
            for (std::size_t i = pid + 1; i + 1 < tokens.size(); ++i)
                if (tokens[i].back() == ':' && all_digits(tokens[i + 1]) && i + 2 < tokens.size()) {
                    std::from_chars(tokens[i + 1].data(), tokens[i + 1].data() + tokens[i + 1].size(), weight_);
                    break;
                }
            if (weight_ == 0) fail("no period in the sample header (perf script -F ...,period)");
        }
        in_sample_ = true;
        frames_.clear();
    }

    // "\t<addr> <symbol>+0x<offset> (<dso>)"
    void frame(std::string_view l)
    {
        if (!in_sample_) fail("a stack frame outside a sample (no header line before it)");
        if (frames_.size() == opt_.max_frames)
            fail(fmt::format("a sample with more than {} frames (perf_script_options::max_frames)", opt_.max_frames));
        while (!l.empty() && is_space_ps(l.front())) l.remove_prefix(1);
        auto space = l.find(' ');
        auto rest = space == std::string_view::npos ? std::string_view() : l.substr(space + 1);
        std::string_view dso;
        if (auto open = rest.rfind(" ("); open != std::string_view::npos && rest.back() == ')') {
            dso = rest.substr(open + 2, rest.size() - open - 3);
            rest = rest.substr(0, open);
        } else if (rest.starts_with('(') && rest.back() == ')') { // no symbol at all: "(/usr/bin/app)"
            dso = rest.substr(1, rest.size() - 2);
            rest = {};
        }
        if (auto plus = rest.rfind('+'); plus != std::string_view::npos && is_hex_offset(rest.substr(plus + 1)))
            rest = rest.substr(0, plus);
        std::string sym = rest.empty() ? std::string("[unknown]") : std::string(rest);
        std::replace(sym.begin(), sym.end(), ';', ':');
        if (frames_.empty())
            leaf_unsymbolized_dso_ = sym == "[unknown]" && !dso.empty() && dso != "[unknown]" ? dso : "";
        frames_.push_back(std::move(sym));
    }

    void finish_sample()
    {
        if (!in_sample_) return;
        in_sample_ = false;
        std::string stack = comm_;
        std::replace(stack.begin(), stack.end(), ';', ':');
        for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
            stack += ';';
            stack += *it;
        }
        auto found = out_.stacks.find(stack);
        if (found == out_.stacks.end()) {
            if (out_.stacks.size() == opt_.max_stacks)
                fail(fmt::format("more than {} distinct stacks (perf_script_options::max_stacks)", opt_.max_stacks));
            found = out_.stacks.emplace(std::move(stack), 0).first;
        }
        found->second += weight_;
        out_.total += weight_;
        ++out_.samples;
        if (!frames_.empty() && !leaf_unsymbolized_dso_.empty()) {
            auto dso = out_.unsymbolized_leaves.find(leaf_unsymbolized_dso_);
            if (dso == out_.unsymbolized_leaves.end())
                dso = out_.unsymbolized_leaves.emplace(leaf_unsymbolized_dso_, 0).first;
            ++dso->second;
        }
    }

    std::string_view source_;
    const perf_script_options& opt_;
    std::size_t line_no_ = 0;
    folded_stacks out_;
    bool in_sample_ = false;
    std::string comm_;
    std::uint64_t weight_ = 1;
    std::vector<std::string> frames_;
    std::string leaf_unsymbolized_dso_; // the leaf frame's object when it has no symbol
};

} // namespace

folded_stacks fold_perf_script(std::string_view text, std::string_view source, const perf_script_options& options)
{
    return perf_script_folder(source, options).fold(text);
}

folded_stacks read_perf_script(const std::filesystem::path& path, const perf_script_options& options,
                               std::string_view name)
{
    const auto source = name.empty() ? path.string() : std::string(name);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errors::profile_unreadable, fmt::format("{}: cannot read: {}", source, std::strerror(errno)));
    perf_script_folder folder(source, options);
    // Whole lines of each chunk go to the folder; a line cut by the chunk's
    // end waits in `pending` for the rest.
    std::vector<char> chunk(1u << 20);
    std::string pending;
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        std::string_view text(chunk.data(), static_cast<std::size_t>(in.gcount()));
        while (!text.empty()) {
            const auto nl = text.find('\n');
            if (nl == std::string_view::npos) {
                pending.append(text);
                // A line longer than the limit is an error at once, not a buffer.
                if (pending.size() > options.max_line_bytes) folder.feed(pending);
                break;
            }
            if (pending.empty()) {
                folder.feed(text.substr(0, nl));
            } else {
                pending.append(text.substr(0, nl));
                folder.feed(pending);
                pending.clear();
            }
            text.remove_prefix(nl + 1);
        }
    }
    if (in.bad())
        throw error(errors::profile_unreadable, fmt::format("{}: cannot read: {}", source, std::strerror(errno)));
    if (!pending.empty()) folder.feed(pending);
    return folder.finish();
}

std::string format_folded(const folded_stacks& folded)
{
    std::string out;
    for (const auto& [stack, count] : folded.stacks) out += fmt::format("{} {}\n", stack, count);
    return out;
}

} // namespace perfgate::profile
