#include "runner/cli.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "stats/error.hpp"

namespace perfgate::runner {

int exit_code_for(std::string_view id)
{
    for (std::string_view prefix : {"usage.", "ingest.", "policy.", "input.", "compare."}) {
        if (id.starts_with(prefix)) return exit_usage;
    }
    // A malformed --server URL is a command-line mistake, not an unreachable server.
    if (id == "http.bad_url") return exit_usage;
    return exit_measurement;
}

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
        throw error("usage.bad_value",
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
        throw error("usage.bad_value", fmt::format("--{}: expected a number, got '{}'", name, *v));
    }
    return out;
}

parsed_args parse_args(std::string_view command, const std::vector<std::string>& argv,
                       const std::vector<option_spec>& specs)
{
    auto find_long = [&](std::string_view n) -> const option_spec* {
        for (auto& s : specs) if (s.name == n) return &s;
        return nullptr;
    };
    auto find_short = [&](char c) -> const option_spec* {
        for (auto& s : specs) if (s.short_name != 0 && s.short_name == c) return &s;
        return nullptr;
    };

    parsed_args out;
    auto store = [&](const option_spec& spec, std::string value) {
        auto& slot = out.values_[spec.name];
        if (!slot.empty() && !spec.repeatable) {
            throw error("usage.repeated_option",
                        fmt::format("perfgate {}: option --{} given more than once", command, spec.name));
        }
        slot.push_back(std::move(value));
    };

    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a == "--") {
            out.positional_.insert(out.positional_.end(), argv.begin() + static_cast<long>(i) + 1, argv.end());
            break;
        }
        const option_spec* spec = nullptr;
        std::optional<std::string> inline_value;
        if (a.starts_with("--")) {
            std::string_view body = std::string_view(a).substr(2);
            if (auto eq = body.find('='); eq != std::string_view::npos) {
                inline_value = std::string(body.substr(eq + 1));
                body = body.substr(0, eq);
            }
            spec = find_long(body);
            if (!spec) {
                throw error("usage.unknown_option",
                            fmt::format("perfgate {}: unknown option --{} (see perfgate {} --help)", command, body, command));
            }
        } else if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
            spec = find_short(a[1]);
            if (!spec) {
                throw error("usage.unknown_option",
                            fmt::format("perfgate {}: unknown option {} (see perfgate {} --help)", command, a, command));
            }
            if (a.size() > 2) inline_value = a.substr(2);
        } else {
            out.positional_.push_back(a);
            continue;
        }
        if (spec->takes_value) {
            if (!inline_value) {
                if (i + 1 >= argv.size()) {
                    throw error("usage.missing_value",
                                fmt::format("perfgate {}: option --{} needs a value ({})", command, spec->name,
                                            spec->value_name.empty() ? "VALUE" : spec->value_name));
                }
                inline_value = argv[++i];
            }
            store(*spec, *inline_value);
        } else {
            if (inline_value) {
                throw error("usage.unexpected_value",
                            fmt::format("perfgate {}: option --{} takes no value", command, spec->name));
            }
            store(*spec, "");
        }
    }
    return out;
}

std::string usage_text(std::string_view command, std::string_view synopsis, std::string_view description,
                       const std::vector<option_spec>& specs)
{
    std::string out = fmt::format("Usage: perfgate {} {}\n\n{}\n\nOptions:\n", command, synopsis, description);
    for (auto& s : specs) {
        std::string left = s.short_name ? fmt::format("-{}, --{}", s.short_name, s.name) : fmt::format("    --{}", s.name);
        if (s.takes_value) left += " " + (s.value_name.empty() ? std::string("VALUE") : s.value_name);
        out += fmt::format("  {:<30} {}\n", left, s.help);
    }
    return out;
}

} // namespace perfgate::runner
