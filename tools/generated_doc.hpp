// The command line every document generator of tools/ shares: no argument
// writes the document to standard output, `--output FILE` into FILE, and
// `--check FILE` exits 1 unless FILE holds it byte for byte, saying which
// build target regenerates it (the ctests *_up_to_date run --check).
#pragma once

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace perfgate::tools {

struct generated_doc {
    std::string_view program; // "perfgate_openapi"
    std::string_view source;  // what the document is made from, for the stale message
    std::string_view target;  // the build target that rewrites it
};

inline int generated_doc_main(const generated_doc& doc, const std::string& text, int argc, char** argv)
{
    const std::string program{doc.program};
    if (argc == 1) {
        std::fputs(text.c_str(), stdout);
        return std::fflush(stdout) == 0 ? 0 : 1;
    }
    const std::string_view mode = argc == 3 ? argv[1] : "";
    if (mode != "--output" && mode != "--check") {
        std::fprintf(stderr, "usage: %s [--output FILE | --check FILE]\n", program.c_str());
        return 2;
    }
    const std::string path = argv[2];
    if (mode == "--output") {
        std::ofstream out(path, std::ios::binary);
        out << text;
        if (out.flush()) return 0;
        std::fprintf(stderr, "%s: %s: cannot write\n", program.c_str(), path.c_str());
        return 1;
    }
    std::ifstream in(path, std::ios::binary);
    const std::string have{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (have == text) return 0;
    std::fprintf(stderr,
                 "%s: %s is not the document made from %s%s; regenerate it with\n"
                 "    cmake --build BUILD --target %s\n"
                 "and commit the result.\n",
                 program.c_str(), path.c_str(), std::string(doc.source).c_str(), in ? "" : " (it cannot be read)",
                 std::string(doc.target).c_str());
    return 1;
}

} // namespace perfgate::tools
