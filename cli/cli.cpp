#include "cli/cli.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::cli {

namespace {

const option_spec help_option{"help", 'h', false, false, "", "show this help"};

[[noreturn]] void usage(error_id id, std::string_view command, const std::string& message)
{
    throw error(id, fmt::format("perfgate {}: {}", command, message));
}

// parse_args's steps on one command line: read argv against the command's
// options (and -h/--help), then check conflicts, then add the environment's
// fallbacks.
class argv_parser {
public:
    explicit argv_parser(const command_spec& spec) : command_(spec.name)
    {
        for (const auto& s : spec.options) specs_.push_back(&s);
        specs_.push_back(&help_option);
        out_.command_ = spec.name;
    }

    // Options and their values in order; other words, and everything after
    // "--", are positional.
    void read(const argv_t& argv)
    {
        for (std::size_t i = 0; i < argv.size(); ++i) {
            const std::string& a = argv[i];
            if (a == "--") {
                out_.positional_.insert(out_.positional_.end(), argv.begin() + static_cast<long>(i) + 1, argv.end());
                return;
            }
            std::optional<std::string> inline_value;
            const option_spec* s = recognise(a, inline_value);
            if (!s) {
                out_.positional_.push_back(a);
                continue;
            }
            if (s->takes_value) {
                if (!inline_value) {
                    if (i + 1 >= argv.size()) {
                        usage(errors::usage_missing_value, command_,
                              fmt::format("option --{} needs a value ({})", s->name,
                                          s->value_name.empty() ? "VALUE" : s->value_name));
                    }
                    inline_value = argv[++i];
                }
                store(*s, *inline_value);
            } else {
                if (inline_value)
                    usage(errors::usage_unexpected_value, command_, fmt::format("option --{} takes no value", s->name));
                store(*s, "");
            }
        }
    }

    // Conflicts among what the command line gave; an environment fallback
    // never conflicts (PERFGATE_TOKEN set globally must not break --db).
    void check_conflicts() const
    {
        for (auto* s : specs_) {
            if (!out_.has(s->name)) continue;
            for (const auto& other : s->excludes) {
                if (out_.has(other)) {
                    usage(errors::usage_conflict, command_,
                          fmt::format("--{} and --{} cannot be given together", s->name, other));
                }
            }
        }
    }

    // Each option not given takes its `env` variable's value, when set and non-empty.
    void add_env_fallbacks()
    {
        for (auto* s : specs_) {
            if (s->env.empty() || out_.has(s->name)) continue;
            if (const char* v = std::getenv(s->env.c_str()); v && *v) out_.values_[s->name].emplace_back(v);
        }
    }

    [[nodiscard]] const parsed_args& parsed() const { return out_; }
    [[nodiscard]] parsed_args take() { return std::move(out_); }

private:
    // The option that `a` names ("--name", "--name=value", "-x", "-xvalue"),
    // its inline value in `inline_value`; nullptr when `a` is not an option.
    const option_spec* recognise(const std::string& a, std::optional<std::string>& inline_value) const
    {
        if (a.starts_with("--")) {
            std::string_view body = std::string_view(a).substr(2);
            if (auto eq = body.find('='); eq != std::string_view::npos) {
                inline_value = std::string(body.substr(eq + 1));
                body = body.substr(0, eq);
            }
            for (auto* s : specs_)
                if (s->name == body) return s;
            usage(errors::usage_unknown_option, command_,
                  fmt::format("unknown option --{} (see perfgate {} --help)", body, command_));
        }
        if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
            const option_spec* found = nullptr;
            for (auto* s : specs_) {
                if (s->short_name != 0 && s->short_name == a[1]) {
                    found = s;
                    break;
                }
            }
            if (!found)
                usage(errors::usage_unknown_option, command_,
                      fmt::format("unknown option {} (see perfgate {} --help)", a, command_));
            if (a.size() > 2) inline_value = a.substr(2);
            return found;
        }
        return nullptr;
    }

    void store(const option_spec& s, std::string value)
    {
        auto& slot = out_.values_[s.name];
        if (!slot.empty() && !s.repeatable) {
            usage(errors::usage_repeated_option, command_, fmt::format("option --{} given more than once", s.name));
        }
        slot.push_back(std::move(value));
    }

    std::string_view command_;
    std::vector<const option_spec*> specs_;
    parsed_args out_;
};

} // namespace

bool parsed_args::has(std::string_view name) const { return values_.find(name) != values_.end(); }

std::optional<std::string> parsed_args::get(std::string_view name) const
{
    auto it = values_.find(name);
    if (it == values_.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
}

std::vector<std::string> parsed_args::all(std::string_view name) const
{
    auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<long long> parsed_args::get_int(std::string_view name, long long min, long long max) const
{
    auto v = get(name);
    if (!v) return std::nullopt;
    long long out = 0;
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
    if (ec != std::errc{} || end != v->data() + v->size() || out < min || out > max) {
        throw error(errors::usage_bad_value,
                    fmt::format("--{}: expected an integer in [{}, {}], got '{}'", name, min, max, *v));
    }
    return out;
}

std::optional<double> parsed_args::get_double(std::string_view name) const
{
    auto v = get(name);
    if (!v) return std::nullopt;
    char* end = nullptr;
    double out = std::strtod(v->c_str(), &end);
    if (v->empty() || end != v->c_str() + v->size()) {
        throw error(errors::usage_bad_value, fmt::format("--{}: expected a number, got '{}'", name, *v));
    }
    return out;
}

std::optional<std::string> parsed_args::get_choice(std::string_view name,
                                                   const std::vector<std::string_view>& choices) const
{
    auto v = get(name);
    if (!v) return std::nullopt;
    if (std::find(choices.begin(), choices.end(), *v) == choices.end()) {
        std::string expected;
        for (std::size_t i = 0; i < choices.size(); ++i) {
            expected += i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ";
            expected += choices[i];
        }
        throw error(errors::usage_bad_value, fmt::format("--{}: expected {}, got '{}'", name, expected, *v));
    }
    return v;
}

std::string parsed_args::required(std::string_view name) const
{
    auto v = get(name);
    if (!v) usage(errors::usage_missing_option, command_, fmt::format("--{} is required (see --help)", name));
    return *v;
}

void no_positional(const parsed_args& args)
{
    if (!args.positional().empty()) {
        usage(errors::usage_unexpected_argument, args.command(),
              fmt::format("unexpected argument '{}' (see --help)", args.positional().front()));
    }
}

std::optional<parsed_args> parse_args(const command_spec& spec, const argv_t& argv)
{
    argv_parser parser(spec);
    parser.read(argv);
    if (parser.parsed().has("help")) {
        std::cout << usage_text(spec);
        std::cout.flush();
        return std::nullopt;
    }
    parser.check_conflicts();
    parser.add_env_fallbacks();
    return parser.take();
}

std::vector<option_spec> option_group(const std::string& group, std::vector<option_spec> options)
{
    for (auto& o : options) o.group = group;
    return options;
}

std::vector<option_group_view> visible_option_groups(const command_spec& spec)
{
    std::vector<option_group_view> groups;
    for (const auto& s : spec.options) {
        if (s.hidden) continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.heading == s.group; });
        if (it == groups.end()) it = groups.insert(groups.end(), option_group_view{s.group, {}});
        it->options.push_back(&s);
    }
    // -h/--help goes with the options without a heading: last on its own
    // when every other option has one.
    auto plain = std::find_if(groups.begin(), groups.end(), [](const auto& g) { return g.heading.empty(); });
    if (plain == groups.end()) plain = groups.insert(groups.end(), option_group_view{});
    plain->options.push_back(&help_option);
    return groups;
}

std::string option_help(const option_spec& s)
{
    std::string help = s.help;
    if (!s.env.empty()) help += fmt::format(" [env {}]", s.env);
    if (!s.excludes.empty()) {
        std::vector<std::string> names;
        for (const auto& e : s.excludes) names.push_back("--" + e);
        help += fmt::format(" [not with {}]", fmt::join(names, ", "));
    }
    return help;
}

std::string usage_text(const command_spec& spec)
{
    std::string out = fmt::format("Usage: perfgate {} {}\n\n{}\n", spec.name, spec.synopsis, spec.description);
    for (const auto& group : visible_option_groups(spec)) {
        out += fmt::format("\n{}:\n", group.heading.empty() ? "Options" : group.heading);
        for (const auto* s : group.options) {
            std::string left = s->short_name ? fmt::format("-{}, --{}", s->short_name, s->name)
                                             : fmt::format("    --{}", s->name);
            if (s->takes_value) left += " " + (s->value_name.empty() ? std::string("VALUE") : s->value_name);
            out += fmt::format("  {:<30} {}\n", left, option_help(*s));
        }
    }
    out += "\nExit codes: 0 pass, 1 regression, 2 usage or input error (incl. a token the server refuses),\n"
           "3 inconclusive with --fail-on-inconclusive, 4 measurement or environment failure.\n";
    return out;
}

} // namespace perfgate::cli
