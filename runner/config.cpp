#include "runner/config.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/names.hpp"
#include "gate/json_file.hpp"
#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::runner {

namespace {

// Characters that mean the shell must interpret the command (POSIX sh
// "Shell Command Language" §2.2 and §2.6: operators, expansions, globbing).
constexpr std::string_view shell_metachars = "|&;<>()$`*?[]{}~#!\n";

bool is_assignment(std::string_view word)
{
    auto eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0) return false;
    for (char c : word.substr(0, eq)) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    }
    return !std::isdigit(static_cast<unsigned char>(word[0]));
}

bool is_control(char c)
{
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
}

// The command as it can be shown in a message: control bytes as \xNN, so a
// NUL does not end the message and an escape sequence does not reach the
// terminal.
std::string printable(std::string_view text)
{
    std::string out;
    for (char c : text.substr(0, 200)) {
        if (is_control(c)) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else out += c;
    }
    if (text.size() > 200) out += "...";
    return out;
}

[[noreturn]] void bad_command(std::string_view text, std::string_view why)
{
    throw error(errors::input_bad_command, fmt::format("command '{}': {}", printable(text), why));
}

// execve takes C strings: a NUL would silently cut the argument short. Other
// control bytes are a paste accident (or an attempt to hide part of the
// command from a reader). Tab and newline are the shell's own separators and
// are allowed where `allow_separators` is.
void check_control(std::string_view text, std::string_view whole, bool allow_separators, std::size_t offset = 0)
{
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!is_control(text[i])) continue;
        if (allow_separators && (text[i] == '\t' || text[i] == '\n')) continue;
        bad_command(whole, fmt::format("control byte 0x{:02x} at offset {}{}", static_cast<unsigned char>(text[i]),
                                       offset + i, text[i] == '\0' ? " (a NUL would cut the argument short)" : ""));
    }
}

} // namespace

command command_from_argv(std::vector<std::string> argv)
{
    command c;
    for (auto& a : argv) {
        if (!c.text.empty()) c.text += ' ';
        c.text += a;
    }
    if (argv.empty() || argv[0].empty()) bad_command(c.text, "empty command");
    // Offsets are into the joined text shown in the message.
    std::size_t offset = 0;
    for (const auto& a : argv) {
        check_control(a, c.text, false, offset);
        offset += a.size() + 1;
    }
    c.argv = std::move(argv);
    return c;
}

command parse_command(std::string_view text)
{
    check_control(text, text, true);
    std::vector<std::string> words;
    std::string word;
    bool in_word = false, needs_shell = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '\'') {
            auto end = text.find('\'', i + 1);
            if (end == std::string_view::npos) bad_command(text, "unterminated single quote");
            word.append(text.substr(i + 1, end - i - 1));
            in_word = true;
            i = end;
        } else if (c == '"') {
            auto end = text.find('"', i + 1);
            if (end == std::string_view::npos) bad_command(text, "unterminated double quote");
            auto inner = text.substr(i + 1, end - i - 1);
            // Expansions and escapes inside double quotes are the shell's job.
            if (inner.find_first_of("$`\\") != std::string_view::npos) needs_shell = true;
            word.append(inner);
            in_word = true;
            i = end;
        } else if (c == '\\') {
            if (i + 1 >= text.size()) bad_command(text, "trailing backslash");
            if (text[i + 1] == '\n') needs_shell = true;
            word.push_back(text[++i]);
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(std::move(word));
            word.clear();
            in_word = false;
        } else {
            if (shell_metachars.find(c) != std::string_view::npos) needs_shell = true;
            word.push_back(c);
            in_word = true;
        }
    }
    if (in_word) words.push_back(std::move(word));
    if (words.empty()) bad_command(text, "empty command");
    if (is_assignment(words[0])) needs_shell = true;

    command out;
    out.text = std::string(text);
    out.argv = needs_shell ? std::vector<std::string>{"/bin/sh", "-c", std::string(text)} : std::move(words);
    return out;
}

namespace {

// Reads one configuration document; every error names the source and the
// field ("FILE: benchmarks[2].env.X: ...").
class config_reader {
public:
    config_reader(std::string_view source, const std::filesystem::path& base_dir) : source_(source), base_dir_(base_dir)
    {}

    [[nodiscard]] error bad(const std::string& where, std::string_view what) const
    {
        return error(errors::input_bad_config, fmt::format("{}: {}: {}", source_, where, what));
    }

    // The list: the document itself, or the object's key "benchmarks".
    [[nodiscard]] const nlohmann::json& benchmark_list(const nlohmann::json& doc) const
    {
        const nlohmann::json* list = &doc;
        if (doc.is_object()) {
            for (auto& [key, value] : doc.items()) {
                if (key != "benchmarks" && key != "backend" && key != "suppressions")
                    throw bad(key, "unknown key (expected \"benchmarks\", \"backend\" or \"suppressions\")");
            }
            if (!doc.contains("benchmarks")) throw bad("benchmarks", "missing");
            list = &doc["benchmarks"];
        }
        if (!list->is_array()) throw bad("benchmarks", "expected a list of benchmarks");
        if (list->empty()) throw bad("benchmarks", "the list is empty");
        return *list;
    }

    // benchmarks[i] (at), its name not among `names` yet.
    [[nodiscard]] benchmark_spec benchmark(const nlohmann::json& b, const std::string& at,
                                           std::set<std::string>& names) const
    {
        if (!b.is_object()) throw bad(at, "expected an object");
        for (auto& [key, value] : b.items()) {
            static const std::set<std::string, std::less<>> known = {"name",          "baseline",    "candidate",
                                                                     "cwd",           "env",         "baseline_env",
                                                                     "candidate_env", "repetitions", "warmup",
                                                                     "harness",       "filter"};
            if (!known.contains(key)) throw bad(fmt::format("{}.{}", at, key), "unknown key");
        }
        benchmark_spec spec;
        spec.name = name(b, at);
        if (!names.insert(spec.name).second) throw bad(at + ".name", fmt::format("duplicate name '{}'", spec.name));
        spec.baseline = get_command(b, at, "baseline");
        spec.candidate = get_command(b, at, "candidate");
        if (b.contains("cwd")) spec.cwd = cwd(b["cwd"], at);
        if (b.contains("env")) spec.env = env(b["env"], at, "env");
        if (b.contains("baseline_env")) spec.baseline_env = env(b["baseline_env"], at, "baseline_env");
        if (b.contains("candidate_env")) spec.candidate_env = env(b["candidate_env"], at, "candidate_env");
        spec.repetitions = get_count(b, at, "repetitions", 1);
        spec.warmup = get_count(b, at, "warmup", 0);
        if (b.contains("harness")) {
            if (!b["harness"].is_string() || b["harness"] != "gbench")
                throw bad(at + ".harness", "expected \"gbench\"");
            spec.harness = "gbench";
        }
        if (b.contains("filter")) {
            if (spec.harness.empty()) throw bad(at + ".filter", "applies to \"harness\": \"gbench\" only");
            if (!b["filter"].is_string()) throw bad(at + ".filter", "expected a string (a regular expression)");
            spec.filter = b["filter"].get<std::string>();
        }
        return spec;
    }

    // The object form's "backend" and "suppressions".
    void run_options(const nlohmann::json& doc, run_config& out) const
    {
        if (!doc.is_object()) return;
        if (doc.contains("backend")) {
            const auto& v = doc["backend"];
            auto parsed = v.is_string() ? parse_backend(v.get<std::string>()) : std::nullopt;
            if (!parsed)
                throw bad("backend", "expected \"perf\", \"native\", \"callgrind\", \"rusage\" or \"memcheck\"");
            out.which = parsed;
        }
        if (!doc.contains("suppressions")) return;
        const auto& list = doc["suppressions"];
        if (!list.is_array()) throw bad("suppressions", "expected a list of file names");
        if (out.which != backend::memcheck) throw bad("suppressions", "needs \"backend\": \"memcheck\"");
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string at = fmt::format("suppressions[{}]", i);
            if (!list[i].is_string() || list[i].get<std::string>().empty()) throw bad(at, "expected a file name");
            const auto& text = list[i].get_ref<const std::string&>();
            if (std::ranges::any_of(text, is_control)) throw bad(at, "contains a control character");
            std::filesystem::path file = text;
            if (!file.is_absolute()) file = base_dir_ / file;
            std::error_code ec;
            if (!std::filesystem::is_regular_file(file, ec))
                throw bad(at, fmt::format("'{}' is not a readable file", printable(text)));
            // valgrind is started in the benchmark's cwd: an absolute path.
            out.suppressions.push_back(std::filesystem::absolute(file));
        }
    }

private:
    [[nodiscard]] std::string name(const nlohmann::json& b, const std::string& at) const
    {
        if (!b.contains("name") || !b["name"].is_string() || b["name"].get<std::string>().empty()) {
            throw bad(at + ".name", "missing or not a non-empty string");
        }
        auto text = b["name"].get<std::string>();
        // The store takes only plain names (capture/names.hpp): say so now, not
        // after every round has been measured.
        try {
            capture::validate_name("name", text);
        } catch (const error& e) {
            std::string_view why = e.what();
            if (why.starts_with("field 'name': ")) why.remove_prefix(std::string_view("field 'name': ").size());
            throw bad(at + ".name", why);
        }
        return text;
    }

    [[nodiscard]] command get_command(const nlohmann::json& b, const std::string& at, const char* key) const
    {
        const std::string where = fmt::format("{}.{}", at, key);
        if (!b.contains(key)) throw bad(where, "missing");
        const auto& v = b[key];
        try {
            if (v.is_string()) return parse_command(v.get<std::string>());
            if (v.is_array()) {
                std::vector<std::string> argv;
                for (auto& a : v) {
                    if (!a.is_string()) throw bad(where, "expected an array of strings");
                    argv.push_back(a.get<std::string>());
                }
                return command_from_argv(std::move(argv));
            }
        } catch (const error& e) {
            if (e.id() == errors::input_bad_config) throw;
            throw bad(where, e.what());
        }
        throw bad(where, "expected a string or an array of strings");
    }

    [[nodiscard]] std::optional<int> get_count(const nlohmann::json& b, const std::string& at, const char* key,
                                               int min) const
    {
        if (!b.contains(key)) return std::nullopt;
        const auto& v = b[key];
        if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > 1000000) {
            throw bad(fmt::format("{}.{}", at, key), fmt::format("expected an integer >= {}", min));
        }
        return static_cast<int>(v.get<long long>());
    }

    // Relative to the configuration file's directory.
    [[nodiscard]] std::filesystem::path cwd(const nlohmann::json& v, const std::string& at) const
    {
        if (!v.is_string()) throw bad(at + ".cwd", "expected a string");
        if (v.get<std::string>().find('\0') != std::string::npos) throw bad(at + ".cwd", "contains a NUL byte");
        std::filesystem::path dir = v.get<std::string>();
        return dir.is_absolute() ? dir : base_dir_ / dir;
    }

    // "env", "baseline_env" or "candidate_env" (key).
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> env(const nlohmann::json& v, const std::string& at,
                                                                       std::string_view key) const
    {
        if (!v.is_object()) throw bad(fmt::format("{}.{}", at, key), "expected an object of strings");
        std::vector<std::pair<std::string, std::string>> out;
        for (auto& [k, value] : v.items()) {
            if (!value.is_string()) throw bad(fmt::format("{}.{}.{}", at, key, k), "expected a string");
            if (k.empty() || k.find('=') != std::string::npos || std::ranges::any_of(k, is_control)) {
                throw bad(fmt::format("{}.{}.{}", at, key, printable(k)), "not a valid variable name");
            }
            if (value.get<std::string>().find('\0') != std::string::npos) {
                throw bad(fmt::format("{}.{}.{}", at, key, k), "contains a NUL byte");
            }
            out.emplace_back(k, value.get<std::string>());
        }
        return out;
    }

    std::string_view source_;
    const std::filesystem::path& base_dir_;
};

} // namespace

run_config parse_config(const nlohmann::json& doc, std::string_view source, const std::filesystem::path& base_dir)
{
    const config_reader reader(source, base_dir);
    const auto& list = reader.benchmark_list(doc);
    run_config out;
    reader.run_options(doc, out);
    std::set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
        out.benchmarks.push_back(reader.benchmark(list[i], fmt::format("benchmarks[{}]", i), names));
    }
    return out;
}

run_config load_config(const std::filesystem::path& path)
{
    std::stringstream text(model::read_text_file(path, "input.bad_config"));
    nlohmann::json doc;
    try {
        doc = nlohmann::json::parse(text.str());
    } catch (const nlohmann::json::parse_error& e) {
        throw error(errors::input_bad_config, fmt::format("{}:{}: invalid JSON: {}", path.string(),
                                                          gate::json_error_line(text.str(), e), e.what()));
    } catch (const nlohmann::json::out_of_range& e) {
        // A number beyond double range (1e400): an input error, not a bug.
        throw error(errors::input_bad_config,
                    fmt::format("{}:{}: {}", path.string(), gate::json_error_line(text.str(), e), e.what()));
    }
    auto base = path.parent_path();
    return parse_config(doc, path.string(), base.empty() ? std::filesystem::path(".") : base);
}

} // namespace perfgate::runner
