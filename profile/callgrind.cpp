#include "profile/callgrind.hpp"

#include "model/error.hpp"
#include "model/file.hpp"
#include "profile/lines.hpp"

#include <fmt/format.h>

#include <cxxabi.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <system_error>
#include <tuple>
#include <unordered_map>

namespace perfgate::profile {

namespace {

constexpr std::uint32_t no_name = 0xffffffffu;

// The three id spaces of name compression (format spec, "Name compression"):
// cfi=/cfl=/fi=/fe=/jfi= share the files' ids, cfn=/jfn= the functions',
// cob= the objects'.
enum class name_space { object = 0, file = 1, function = 2 };

struct function_key {
    std::uint32_t object, file, name; // indices into the interned strings
    bool operator==(const function_key&) const = default;
};

struct function_key_hash {
    std::size_t operator()(const function_key& k) const noexcept
    {
        std::uint64_t h = k.object;
        h = h * 0x9E3779B97F4A7C15ull ^ k.file;
        h = h * 0x9E3779B97F4A7C15ull ^ k.name;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

struct function_acc {
    function_key key;
    std::vector<std::uint64_t> self;
    std::vector<std::uint64_t> out_calls; // inclusive cost of calls to other functions
    std::uint64_t calls = 0;
    // Self cost of the first event per file its cost lines were in (fi=/fe=
    // switch it for inlined code): a function has few, so a small vector.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> file_costs;

    void add_file_cost(std::uint32_t file, std::uint64_t cost)
    {
        for (auto& [f, c] : file_costs) {
            if (f == file) {
                c = c + cost < c ? ~std::uint64_t{0} : c + cost; // saturate: only compared
                return;
            }
        }
        file_costs.emplace_back(file, cost);
    }

    // The file with the most self cost; the fn= file on ties and when none.
    [[nodiscard]] std::uint32_t main_file() const
    {
        std::uint32_t best = key.file;
        std::uint64_t most = 0;
        for (auto& [f, c] : file_costs) {
            if (c > most || (c == most && f == key.file)) {
                best = f;
                most = c;
            }
        }
        return best;
    }
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_cg(std::string_view s)
{
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && (is_blank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// Splits off the next blank-separated token.
std::string_view next_token(std::string_view& s)
{
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    std::size_t n = 0;
    while (n < s.size() && !is_blank(s[n])) ++n;
    auto tok = s.substr(0, n);
    s.remove_prefix(n);
    return tok;
}

class callgrind_parser {
public:
    callgrind_parser(std::string_view source, const callgrind_limits& limits) : source_(source), limits_(limits) {}

    callgrind_profile parse(std::string_view text);

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw error(errors::profile_bad_callgrind, fmt::format("{}:{}: {}", source_, line_no_, what));
    }

    void line(std::string_view l);
    void header(std::string_view key, std::string_view value);
    void cost_line(std::string_view l);
    void calls_line(std::string_view value);

    std::uint64_t number(std::string_view tok, std::string_view what) const;
    std::uint32_t intern(std::string_view s);
    std::uint32_t name(name_space ns, std::string_view value, std::string_view key);
    std::uint32_t function_index(const function_key& k);
    void add(std::vector<std::uint64_t>& to, std::size_t i, std::uint64_t v) const;

    std::string_view source_;
    const callgrind_limits& limits_;
    std::size_t line_no_ = 0;

    callgrind_profile out_;
    bool saw_costs_ = false;
    std::size_t positions_ = 1; // "positions: line" is the default
    std::vector<std::int64_t> last_pos_ = std::vector<std::int64_t>(1, 0);
    std::optional<std::vector<std::uint64_t>> summary_, totals_;

    // Interned strings and, per id space, compressed id -> interned index.
    std::vector<std::string> strings_;
    std::unordered_map<std::string, std::uint32_t> string_ids_;
    std::unordered_map<std::uint64_t, std::uint32_t> ids_[3];

    std::vector<function_acc> functions_;
    std::unordered_map<function_key, std::uint32_t, function_key_hash> function_ids_;

    std::uint32_t object_ = no_name;  // ob=
    std::uint32_t file_ = no_name;    // fl=, or the fi=/fe= file
    std::optional<std::uint32_t> fn_; // the current function (index into functions_)
    std::uint32_t cob_ = no_name, cfi_ = no_name;
    std::optional<std::uint32_t> callee_;       // from the last cfn=
    std::optional<std::uint32_t> pending_call_; // a calls= line waits for its cost line
    std::vector<std::uint64_t> costs_;          // the current cost line's values
};

std::uint64_t callgrind_parser::number(std::string_view tok, std::string_view what) const
{
    int base = 10;
    if (tok.size() > 2 && tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
        tok.remove_prefix(2);
        base = 16;
    }
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v, base);
    if (tok.empty() || ec != std::errc{} || end != tok.data() + tok.size())
        fail(fmt::format("{} '{}' is not a 64-bit unsigned number", what, tok));
    return v;
}

std::uint32_t callgrind_parser::intern(std::string_view s)
{
    std::string key(s);
    if (auto it = string_ids_.find(key); it != string_ids_.end()) return it->second;
    if (strings_.size() >= limits_.max_names)
        fail(fmt::format("more than {} distinct names (callgrind_limits::max_names)", limits_.max_names));
    auto id = static_cast<std::uint32_t>(strings_.size());
    strings_.push_back(key);
    string_ids_.emplace(std::move(key), id);
    return id;
}

// "(id) name" defines id, "(id)" refers to it, "name" is uncompressed.
std::uint32_t callgrind_parser::name(name_space ns, std::string_view value, std::string_view key)
{
    value = trim_cg(value);
    auto as_written = [&](std::string_view n) {
        if (n.empty()) fail(fmt::format("{}= has an empty name", key));
        return ns == name_space::function ? intern(demangle(n)) : intern(n);
    };
    if (value.empty() || value.front() != '(') return as_written(value);
    auto close = value.find(')');
    if (close == std::string_view::npos) fail(fmt::format("{}={}: '(' without ')'", key, value));
    auto id = number(value.substr(1, close - 1), "name id");
    auto rest = trim_cg(value.substr(close + 1));
    auto& ids = ids_[static_cast<int>(ns)];
    if (rest.empty()) {
        auto it = ids.find(id);
        if (it == ids.end()) fail(fmt::format("{}=({}) refers to a name id that was never defined", key, id));
        return it->second;
    }
    auto s = as_written(rest);
    ids[id] = s; // a redefinition replaces, as in callgrind_annotate
    return s;
}

std::uint32_t callgrind_parser::function_index(const function_key& k)
{
    if (auto it = function_ids_.find(k); it != function_ids_.end()) return it->second;
    if (out_.events.empty()) fail("fn=/cfn= before events:");
    if (functions_.size() >= limits_.max_functions)
        fail(fmt::format("more than {} functions (callgrind_limits::max_functions)", limits_.max_functions));
    auto id = static_cast<std::uint32_t>(functions_.size());
    function_acc f;
    f.key = k;
    f.self.assign(out_.events.size(), 0);
    f.out_calls.assign(out_.events.size(), 0);
    functions_.push_back(std::move(f));
    function_ids_.emplace(k, id);
    return id;
}

void callgrind_parser::add(std::vector<std::uint64_t>& to, std::size_t i, std::uint64_t v) const
{
    if (__builtin_add_overflow(to[i], v, &to[i]))
        fail(fmt::format("the cost of event {} overflows 64 bits", out_.events[i]));
}

void callgrind_parser::header(std::string_view key, std::string_view value)
{
    value = trim_cg(value);
    auto costs = [&](std::string_view v) {
        if (out_.events.empty()) fail(fmt::format("{}: before events:", key));
        std::vector<std::uint64_t> c(out_.events.size(), 0);
        std::size_t i = 0;
        for (auto tok = next_token(v); !tok.empty(); tok = next_token(v)) {
            if (i == c.size()) fail(fmt::format("{}: has more values than the {} events", key, c.size()));
            c[i++] = number(tok, key);
        }
        return c;
    };
    if (key == "version") {
        if (number(value, "version") != 1)
            fail(fmt::format("callgrind format version {} is not supported (only 1)", value));
    } else if (key == "creator") {
        out_.creator = std::string(value);
    } else if (key == "cmd") {
        out_.command = std::string(value);
    } else if (key == "positions") {
        if (saw_costs_) fail("positions: after cost lines");
        std::size_t n = 0;
        for (auto tok = next_token(value); !tok.empty(); tok = next_token(value)) {
            if (tok != "instr" && tok != "line") fail(fmt::format("unknown position '{}' (expected instr, line)", tok));
            ++n;
        }
        if (n == 0 || n > 2) fail("positions: needs 'line', 'instr' or 'instr line'");
        positions_ = n;
        last_pos_.assign(n, 0);
    } else if (key == "events") {
        if (saw_costs_ || !out_.events.empty())
            fail("a second events: line (files with several parts are not supported)");
        for (auto tok = next_token(value); !tok.empty(); tok = next_token(value)) {
            if (out_.events.size() == limits_.max_events)
                fail(fmt::format("more than {} events (callgrind_limits::max_events)", limits_.max_events));
            out_.events.emplace_back(tok);
        }
        if (out_.events.empty()) fail("events: names no event");
        costs_.assign(out_.events.size(), 0);
    } else if (key == "summary") {
        summary_ = costs(value);
    } else if (key == "totals") {
        totals_ = costs(value);
    }
    // Other header lines (pid:, part:, desc:, thread:, event:, ...) carry
    // nothing the costs need.
}

void callgrind_parser::cost_line(std::string_view l)
{
    if (out_.events.empty()) fail("cost line before events:");
    if (!fn_) fail("cost line before any fn= line");
    saw_costs_ = true;
    for (std::size_t p = 0; p < positions_; ++p) {
        auto tok = next_token(l);
        if (tok.empty()) fail(fmt::format("cost line has fewer than the {} positions", positions_));
        // Subposition compression: relative to the same position of the
        // previous cost line.
        std::int64_t& pos = last_pos_[p];
        if (tok == "*") continue;
        if (tok[0] == '+' || tok[0] == '-') {
            auto d = static_cast<std::int64_t>(number(tok.substr(1), "position"));
            pos = tok[0] == '+' ? pos + d : pos - d;
        } else {
            pos = static_cast<std::int64_t>(number(tok, "position"));
        }
    }
    auto& costs = costs_;
    std::size_t n = 0;
    for (auto tok = next_token(l); !tok.empty(); tok = next_token(l)) {
        if (n == out_.events.size())
            fail(fmt::format("cost line has more values than the {} events", out_.events.size()));
        costs[n++] = number(tok, "cost");
    }
    if (pending_call_) {
        // The inclusive cost of the call: the caller's inclusive, not its self.
        auto callee = *pending_call_;
        pending_call_.reset();
        if (callee == *fn_) return; // direct recursion: already in self + other calls
        auto& caller = functions_[*fn_];
        for (std::size_t i = 0; i < n; ++i) add(caller.out_calls, i, costs[i]);
        return;
    }
    auto& f = functions_[*fn_];
    for (std::size_t i = 0; i < n; ++i) add(f.self, i, costs[i]);
    if (n > 0) f.add_file_cost(file_, costs[0]);
}

void callgrind_parser::calls_line(std::string_view value)
{
    if (!fn_) fail("calls= before any fn= line");
    if (!callee_) fail("calls= without a cfn= before it");
    if (pending_call_) fail("calls= after calls= without a cost line between");
    auto count = number(next_token(value), "call count");
    pending_call_ = *callee_;
    auto& callee = functions_[*callee_];
    if (__builtin_add_overflow(callee.calls, count, &callee.calls)) fail("call count overflows 64 bits");
    // The target position is the callee's; callgrind_annotate ignores it too.
}

void callgrind_parser::line(std::string_view l)
{
    if (l.empty() || l[0] == '#') return;
    char c = l[0];
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') return cost_line(l);
    if (pending_call_) fail("a calls= line must be followed by its cost line");
    auto eq = l.find('=');
    auto colon = l.find(':');
    if (eq != std::string_view::npos && (colon == std::string_view::npos || eq < colon)) {
        auto key = l.substr(0, eq);
        auto value = l.substr(eq + 1);
        if (key == "fn") {
            fn_ = function_index({object_, file_, name(name_space::function, value, key)});
            callee_.reset();
        } else if (key == "fl" || key == "fi" || key == "fe") {
            file_ = name(name_space::file, value, key); // fi/fe: inlined code, the function stays
        } else if (key == "ob") {
            object_ = name(name_space::object, value, key);
        } else if (key == "cob") {
            cob_ = name(name_space::object, value, key);
        } else if (key == "cfi" || key == "cfl") {
            cfi_ = name(name_space::file, value, key);
        } else if (key == "cfn") {
            // cob=/cfi= apply to this callee only; without them the callee
            // is in the caller's object and current file.
            function_key k{cob_ != no_name ? cob_ : object_, cfi_ != no_name ? cfi_ : file_,
                           name(name_space::function, value, key)};
            callee_ = function_index(k);
            cob_ = cfi_ = no_name;
        } else if (key == "calls") {
            calls_line(value);
        } else if (key == "jfi") {
            name(name_space::file, value, key); // may define an id
        } else if (key == "jfn") {
            name(name_space::function, value, key);
        } else if (key == "jump" || key == "jcnd") {
            // Jump counts (--collect-jumps): not costs.
        } else {
            fail(fmt::format("unknown specification '{}='", key));
        }
        return;
    }
    if (colon != std::string_view::npos && colon > 0) return header(l.substr(0, colon), l.substr(colon + 1));
    fail(fmt::format("not a callgrind line: '{}'", l.substr(0, 80)));
}

callgrind_profile callgrind_parser::parse(std::string_view text)
{
    while (!text.empty()) {
        ++line_no_;
        auto l = detail::take_line(text);
        if (l.size() > limits_.max_line_bytes)
            fail(fmt::format("line longer than {} bytes (callgrind_limits::max_line_bytes)", limits_.max_line_bytes));
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        line(l);
    }
    if (pending_call_) fail("the file ends after calls= without its cost line");
    if (out_.events.empty()) {
        line_no_ = 0;
        throw error(errors::profile_bad_callgrind,
                    fmt::format("{}: not a callgrind output file (no events: line)", source_));
    }

    const auto n = out_.events.size();
    std::vector<std::uint64_t> self_sum(n, 0);
    out_.functions.reserve(functions_.size());
    for (auto& f : functions_) {
        function_cost fc;
        fc.name = strings_[f.key.name];
        fc.file = f.key.file == no_name ? std::string("???") : strings_[f.key.file];
        const auto main = f.main_file();
        fc.main_file = main == no_name ? std::string("???") : strings_[main];
        fc.object = f.key.object == no_name ? std::string() : strings_[f.key.object];
        fc.inclusive = f.self;
        for (std::size_t i = 0; i < n; ++i) {
            add(fc.inclusive, i, f.out_calls[i]);
            add(self_sum, i, f.self[i]);
        }
        fc.self = std::move(f.self);
        fc.calls = f.calls;
        out_.functions.push_back(std::move(fc));
    }
    std::sort(out_.functions.begin(), out_.functions.end(), [](const function_cost& a, const function_cost& b) {
        return std::tie(a.name, a.file, a.object) < std::tie(b.name, b.file, b.object);
    });
    out_.totals = summary_ ? *summary_ : totals_ ? *totals_ : self_sum;
    return std::move(out_);
}

} // namespace

std::optional<std::size_t> callgrind_profile::event_index(std::string_view event) const
{
    auto it = std::find(events.begin(), events.end(), event);
    if (it == events.end()) return std::nullopt;
    return static_cast<std::size_t>(it - events.begin());
}

const function_cost* callgrind_profile::find(std::string_view name) const
{
    auto it = std::lower_bound(functions.begin(), functions.end(), name,
                               [](const function_cost& f, std::string_view n) { return f.name < n; });
    return it != functions.end() && it->name == name ? &*it : nullptr;
}

callgrind_profile parse_callgrind(std::string_view text, std::string_view source, const callgrind_limits& limits)
{
    return callgrind_parser(source, limits).parse(text);
}

callgrind_profile read_callgrind(const std::filesystem::path& path, const callgrind_limits& limits)
{
    // Said before reading: a profile over the limit is a limit, not a
    // read error (read_text_file would stop at the limit too).
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    if (!ec && bytes > limits.max_file_bytes) {
        throw error(errors::profile_too_large,
                    fmt::format("{}: {} bytes, more than the limit of {} bytes (callgrind_limits::max_file_bytes)",
                                path.string(), bytes, limits.max_file_bytes));
    }
    auto text = model::read_text_file(path, "profile.unreadable", limits.max_file_bytes);
    return parse_callgrind(text, path.string(), limits);
}

std::string demangle(std::string_view name)
{
    if (name.size() < 3 || name.substr(0, 2) != "_Z") return std::string(name);
    // callgrind appends "'2" (recursion depth) or "'caller" (--separate-callers)
    // to a name: demangle the symbol before it.
    auto quote = name.find('\'');
    std::string symbol(name.substr(0, quote));
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                                  &std::free);
    if (status != 0 || !d) return std::string(name);
    std::string out(d.get());
    if (quote != std::string_view::npos) out += name.substr(quote);
    return out;
}

} // namespace perfgate::profile
