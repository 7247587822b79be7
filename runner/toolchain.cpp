#include "runner/toolchain.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <set>

#include "model/digest.hpp"
#include "runner/backend.hpp"
#include "runner/process.hpp"

namespace perfgate::runner {

namespace {

// Hex digits of the SHA-256 in a key: 64 bits, no accidental collision
// between the handful of toolchains one project sees.
constexpr std::size_t key_hash_digits = 16;

// One section: where it is and whether its bytes are stored as they are.
struct section {
    std::string name;
    std::uint64_t offset = 0, size = 0;
    bool compressed = false;
};

template <class T>
bool read_at(std::ifstream& in, std::uint64_t offset, T& out)
{
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(&out), sizeof out);
    return static_cast<bool>(in);
}

std::string read_bytes(std::ifstream& in, std::uint64_t offset, std::uint64_t size)
{
    std::string out(static_cast<std::size_t>(std::min<std::uint64_t>(size, max_toolchain_scan_bytes)), '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(out.data(), static_cast<std::streamsize>(out.size()));
    out.resize(static_cast<std::size_t>(in.gcount()));
    in.clear();
    return out;
}

// The section headers of a little-endian ELF file of class Ehdr/Shdr, with
// their names; empty when a header is cut short.
template <class Ehdr, class Shdr>
std::vector<section> sections_of(std::ifstream& in)
{
    Ehdr eh{};
    if (!read_at(in, 0, eh) || eh.e_shentsize != sizeof(Shdr) || eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum)
        return {};
    std::vector<Shdr> headers(eh.e_shnum);
    for (std::size_t i = 0; i < headers.size(); ++i) {
        if (!read_at(in, eh.e_shoff + i * sizeof(Shdr), headers[i])) return {};
    }
    const Shdr& names = headers[eh.e_shstrndx];
    const std::string table = read_bytes(in, names.sh_offset, names.sh_size);
    std::vector<section> out;
    for (const auto& h : headers) {
        if (h.sh_type == SHT_NOBITS || h.sh_name >= table.size()) continue;
        section s;
        s.name = std::string(table.c_str() + h.sh_name);
        s.offset = h.sh_offset;
        s.size = h.sh_size;
        s.compressed = (h.sh_flags & SHF_COMPRESSED) != 0;
        out.push_back(std::move(s));
    }
    return out;
}

// The NUL-separated strings of a string section.
std::vector<std::string> split_strings(const std::string& bytes)
{
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < bytes.size()) {
        const std::size_t end = std::min(bytes.find('\0', at), bytes.size());
        if (end > at) out.emplace_back(bytes.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

// A DWARF producer string: gcc's "GNU C++20 11.4.0 -O2 ..." ("GNU", a
// language, a version) or clang's "... clang version 14.0.0 ...".
bool is_producer(std::string_view s)
{
    if (s.find("clang version ") != std::string_view::npos) return true;
    if (!s.starts_with("GNU ")) return false;
    const auto lang_end = s.find(' ', 4);
    return lang_end != std::string_view::npos && lang_end > 4 && lang_end + 1 < s.size() &&
           std::isdigit(static_cast<unsigned char>(s[lang_end + 1])) != 0;
}

void add_unique(std::vector<std::string>& out, std::string s)
{
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
}

} // namespace

std::vector<std::string> toolchain_strings(const std::filesystem::path& elf)
{
    std::ifstream in(elf, std::ios::binary);
    if (!in) return {};
    unsigned char ident[EI_NIDENT] = {};
    in.read(reinterpret_cast<char*>(ident), EI_NIDENT);
    if (!in || std::memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != ELFDATA2LSB) return {};
    std::vector<section> sections;
    if (ident[EI_CLASS] == ELFCLASS64) sections = sections_of<Elf64_Ehdr, Elf64_Shdr>(in);
    else if (ident[EI_CLASS] == ELFCLASS32) sections = sections_of<Elf32_Ehdr, Elf32_Shdr>(in);
    std::vector<std::string> out;
    for (const char* wanted : {".comment", ".debug_str"}) {
        for (const auto& s : sections) {
            if (s.name != wanted || s.compressed) continue;
            for (auto& str : split_strings(read_bytes(in, s.offset, s.size))) {
                if (s.name == ".comment" || is_producer(str)) add_unique(out, std::move(str));
            }
        }
    }
    return out;
}

std::optional<std::string> toolchain_key_of(const std::vector<std::string>& strings)
{
    if (strings.empty()) return std::nullopt;
    const std::set<std::string> sorted(strings.begin(), strings.end());
    std::string all;
    for (const auto& s : sorted) all += s + '\n';
    std::string label = strings.front().substr(0, toolchain_label_bytes);
    // The label is free text in the store: no control characters.
    std::replace_if(
        label.begin(), label.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
    return label + " #" + model::sha256_hex(all).substr(0, key_hash_digits);
}

std::optional<std::string> toolchain_key(const std::vector<std::string>& argv,
                                         const std::optional<std::filesystem::path>& cwd)
{
    if (argv.empty()) return std::nullopt;
    // A shell command line: /bin/sh's own compiler says nothing of the program it starts.
    if (argv.size() == 3 && argv[0] == "/bin/sh" && argv[1] == "-c") return std::nullopt;
    std::filesystem::path exe;
    if (argv[0].find('/') != std::string::npos) {
        exe = argv[0];
        if (exe.is_relative() && cwd) exe = *cwd / exe;
    } else {
        auto found = find_executable(argv[0], detail::path_env());
        if (!found) return std::nullopt;
        exe = *found;
    }
    return toolchain_key_of(toolchain_strings(exe));
}

} // namespace perfgate::runner
