#include "profile/valgrind_memory.hpp"

#include <algorithm>
#include <array>
#include <exception>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::profile {

namespace {

// memcheck's leak kinds that the gate counts (valgrind manual 4.2.8: what
// "definitely" and "indirectly lost" mean; "possibly lost" and "still
// reachable" are not counted, as --errors-for-leak-kinds=definite,indirect).
bool counted_leak(std::string_view kind) { return kind == "Leak_DefinitelyLost" || kind == "Leak_IndirectlyLost"; }

long long to_count(const pugi::xml_node& n, std::string_view source, std::string_view field)
{
    const std::string text = n.text().as_string();
    try {
        std::size_t used = 0;
        const long long v = std::stoll(text, &used, 0); // <unique> is hexadecimal ("0x1f")
        if (used != text.size() || v < 0) throw std::invalid_argument(text);
        return v;
    } catch (const std::exception&) {
        throw error(errors::profile_bad_memcheck, fmt::format("{}: <{}> is '{}', not a count", source, field, text));
    }
}

// Valgrind's own allocator replacements (malloc, calloc, realloc, operator
// new, ...) live in its preloaded objects: not where the program allocates.
bool allocator_frame(std::string_view text) { return text.find("vgpreload_") != std::string_view::npos; }

std::vector<memory_frame> xml_stack(const pugi::xml_node& stack)
{
    std::vector<memory_frame> out;
    for (auto f : stack.children("frame")) {
        if (allocator_frame(f.child_value("obj"))) continue;
        const std::string fn = f.child_value("fn");
        const std::string file = f.child_value("file");
        const std::string line = f.child_value("line");
        memory_frame fr;
        if (!fn.empty() && !file.empty()) {
            fr.text = fmt::format("{} ({}:{})", fn, file, line);
            fr.named = true;
            fr.system = system_header_dir(f.child_value("dir"));
        } else {
            fr.text = fmt::format("{} (in {})", fn.empty() ? std::string(f.child_value("ip")) : fn,
                                  f.child_value("obj"));
        }
        out.push_back(std::move(fr));
    }
    return out;
}

std::string error_what(const pugi::xml_node& e)
{
    if (auto w = e.child("what")) return w.child_value();
    return e.child("xwhat").child_value("text");
}

const nlohmann::json& field(const nlohmann::json& j, const char* name, std::string_view source)
{
    auto it = j.find(name);
    if (it == j.end()) throw error(errors::profile_bad_dhat, fmt::format("{}: no \"{}\"", source, name));
    return *it;
}

long long json_count(const nlohmann::json& j, const char* name, std::string_view source)
{
    const auto& v = field(j, name, source);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
        throw error(errors::profile_bad_dhat, fmt::format("{}: \"{}\" is not a count", source, name));
    return v.get<long long>();
}

memory_frame dhat_frame(std::string_view text)
{
    // "0x109183: churn (memprog.c:20)" -> "churn (memprog.c:20)"; without
    // symbols "0x109183: ??? (in prog)" -> "0x109183 (in prog)", as memcheck.
    std::string_view address;
    if (auto colon = text.find(": "); text.starts_with("0x") && colon != std::string_view::npos) {
        address = text.substr(0, colon);
        text.remove_prefix(colon + 2);
    }
    if (text.starts_with("??? ") && !address.empty()) return {fmt::format("{}{}", address, text.substr(3)), false};
    memory_frame fr{std::string(text), false};
    fr.named = text.find(" (in ") == std::string_view::npos && text.find(':') != std::string_view::npos;
    return fr;
}

std::string read_limited(const std::filesystem::path& path)
{
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    if (!ec && bytes > valgrind_memory_max_file_bytes) {
        throw error(errors::profile_too_large,
                    fmt::format("{}: {} bytes, more than the limit of {} bytes (valgrind_memory_max_file_bytes)",
                                path.string(), bytes, valgrind_memory_max_file_bytes));
    }
    return model::read_text_file(path, "profile.unreadable", valgrind_memory_max_file_bytes);
}

} // namespace

memcheck_result parse_memcheck_xml(std::string_view text, std::string_view source)
{
    pugi::xml_document doc;
    const auto ok = doc.load_buffer(text.data(), text.size());
    if (!ok) {
        throw error(errors::profile_bad_memcheck,
                    fmt::format("{}: not XML at byte {}: {}", source, ok.offset, ok.description()));
    }
    const auto root = doc.child("valgrindoutput");
    if (!root) throw error(errors::profile_bad_memcheck, fmt::format("{}: no <valgrindoutput>", source));
    if (std::string_view(root.child_value("protocoltool")) != "memcheck") {
        throw error(errors::profile_bad_memcheck, fmt::format("{}: <protocoltool> is '{}', expected memcheck", source,
                                                              root.child_value("protocoltool")));
    }
    memcheck_result out;
    std::vector<std::pair<std::string, std::size_t>> by_unique; // <unique> -> errors index
    for (auto e : root.children("error")) {
        const std::string kind = e.child_value("kind");
        if (kind.starts_with("Leak_")) {
            memcheck_leak l{kind, error_what(e), to_count(e.child("xwhat").child("leakedbytes"), source, "leakedbytes"),
                            to_count(e.child("xwhat").child("leakedblocks"), source, "leakedblocks"),
                            xml_stack(e.child("stack"))};
            if (counted_leak(kind)) out.leaked_bytes += l.bytes;
            out.leaks.push_back(std::move(l));
            continue;
        }
        by_unique.emplace_back(e.child_value("unique"), out.errors.size());
        out.errors.push_back({kind, error_what(e), 1, xml_stack(e.child("stack"))});
    }
    // <errorcounts> is written at exit: how often each unique error
    // happened (an error in a loop is printed once).
    for (auto p : root.child("errorcounts").children("pair")) {
        const std::string unique = p.child_value("unique");
        auto it = std::find_if(by_unique.begin(), by_unique.end(), [&](const auto& u) { return u.first == unique; });
        if (it != by_unique.end()) out.errors[it->second].count = to_count(p.child("count"), source, "count");
    }
    for (const auto& e : out.errors) out.error_count += e.count;
    for (auto p : root.child("suppcounts").children("pair"))
        out.suppressed += to_count(p.child("count"), source, "count");
    return out;
}

memcheck_result read_memcheck_xml(const std::filesystem::path& path)
{
    return parse_memcheck_xml(read_limited(path), path.string());
}

void merge(memcheck_result& a, memcheck_result b)
{
    for (auto& e : b.errors) a.errors.push_back(std::move(e));
    for (auto& l : b.leaks) a.leaks.push_back(std::move(l));
    a.error_count += b.error_count;
    a.leaked_bytes += b.leaked_bytes;
    a.suppressed += b.suppressed;
}

dhat_result parse_dhat_json(std::string_view text, std::string_view source)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw error(errors::profile_bad_dhat, fmt::format("{}: not JSON: {}", source, e.what()));
    }
    if (!j.is_object() || json_count(j, "dhatFileVersion", source) != 2 || field(j, "mode", source) != "heap") {
        throw error(errors::profile_bad_dhat,
                    fmt::format("{}: not a DHAT heap profile of version 2 (valgrind --tool=dhat)", source));
    }
    const auto& ftbl = field(j, "ftbl", source);
    const auto& pps = field(j, "pps", source);
    if (!ftbl.is_array() || !pps.is_array())
        throw error(errors::profile_bad_dhat, fmt::format("{}: \"ftbl\" and \"pps\" must be arrays", source));
    dhat_result out;
    for (const auto& pp : pps) {
        dhat_site s;
        s.blocks = json_count(pp, "tbk", source);
        s.bytes = json_count(pp, "tb", source);
        s.peak_bytes = json_count(pp, "gb", source);
        for (const auto& f : field(pp, "fs", source)) {
            if (!f.is_number_unsigned() || f.get<std::size_t>() >= ftbl.size() ||
                !ftbl[f.get<std::size_t>()].is_string())
                throw error(errors::profile_bad_dhat,
                            fmt::format("{}: frame index {} is not in \"ftbl\"", source, f.dump()));
            const auto& t = ftbl[f.get<std::size_t>()].get_ref<const std::string&>();
            if (t == "[root]" || allocator_frame(t)) continue;
            s.stack.push_back(dhat_frame(t));
        }
        out.blocks += s.blocks;
        out.bytes += s.bytes;
        out.peak_bytes += s.peak_bytes;
        out.sites.push_back(std::move(s));
    }
    return out;
}

dhat_result read_dhat_json(const std::filesystem::path& path)
{
    return parse_dhat_json(read_limited(path), path.string());
}

void merge(dhat_result& a, dhat_result b)
{
    a.blocks += b.blocks;
    a.bytes += b.bytes;
    a.peak_bytes += b.peak_bytes;
    for (auto& s : b.sites) a.sites.push_back(std::move(s));
}

std::string frame_function(std::string_view frame_text)
{
    return std::string(frame_text.substr(0, frame_text.find(" (")));
}

bool system_header_dir(std::string_view dir)
{
    auto under = [dir](std::string_view root) {
        return dir.starts_with(root) && (dir.size() == root.size() || dir[root.size()] == '/');
    };
    return under("/usr/include") || under("/usr/lib/gcc") || dir.starts_with("/usr/lib/llvm-");
}

bool library_frame(std::string_view frame_text)
{
    // "fn (file:line)": the file is between the last " (" and the last ':'.
    const auto open = frame_text.rfind(" (");
    const auto colon = frame_text.rfind(':');
    if (open == std::string_view::npos || colon == std::string_view::npos || colon < open) return false;
    const auto file = frame_text.substr(open + 2, colon - open - 2);
    if (file.starts_with("in ")) return false; // "(in object)": no debug information
    static constexpr std::array<std::string_view, 12> headers = {
        "new_allocator.h",   "alloc_traits.h",     "allocator.h",   "basic_string.h",
        "hashtable.h",       "hashtable_policy.h", "unique_ptr.h",  "shared_ptr.h",
        "shared_ptr_base.h", "std_function.h",     "char_traits.h", "stl_construct.h"};
    // GCC's and clang's x86 intrinsics (emmintrin.h, immintrin.h,
    // avx2intrin.h, ...) and Arm's (arm_neon.h, arm_sve.h).
    const bool intrinsics = file.ends_with("intrin.h") || file == "arm_neon.h" || file == "arm_sve.h";
    return intrinsics || file.find('.') == std::string_view::npos || file.starts_with("stl_") ||
           file.ends_with(".tcc") || std::find(headers.begin(), headers.end(), file) != headers.end();
}

const memory_frame* responsible_frame(const std::vector<memory_frame>& stack)
{
    if (stack.empty()) return nullptr;
    for (const auto& f : stack)
        if (!f.system && !library_frame(f.text)) return &f;
    return &stack.front();
}

} // namespace perfgate::profile
