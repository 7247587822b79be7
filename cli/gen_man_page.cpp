// gen_man_page FILE: writes the man page perfgate(1) to FILE, generated from
// the command tables (cli/man_page.hpp). The build runs it; see cli/CMakeLists.txt.
#include <cstdio>
#include <exception>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/man_page.hpp"
#include "cli/version.hpp"

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fputs("usage: gen_man_page FILE\n", stderr);
        return 2;
    }
    try {
        const std::string page = perfgate::cli::man_page(perfgate::cli::all_commands(), perfgate::cli::version());
        std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
        out << page;
        out.close();
        if (!out) {
            std::fprintf(stderr, "gen_man_page: cannot write %s\n", argv[1]);
            return 1;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gen_man_page: %s\n", e.what());
        return 1;
    }
    return 0;
}
