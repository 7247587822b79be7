// perfgate_openapi: writes docs/openapi.json from the route table and the
// wire types' schemas (server/openapi.hpp).
//
//   perfgate_openapi                 the document on standard output
//   perfgate_openapi --output FILE   the document into FILE
//   perfgate_openapi --check FILE    exit 1 unless FILE is the document
//
// The build target openapi_doc regenerates docs/openapi.json in the source
// tree; the ctest openapi_doc_up_to_date runs --check on it.
#include "server/openapi.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

namespace {

int usage()
{
    std::fputs("usage: perfgate_openapi [--output FILE | --check FILE]\n", stderr);
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string& text = perfgate::server::openapi_text();
    if (argc == 1) {
        std::fputs(text.c_str(), stdout);
        return std::fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc != 3) return usage();
    const std::string_view mode = argv[1];
    const std::string path = argv[2];
    if (mode == "--output") {
        std::ofstream out(path, std::ios::binary);
        out << text;
        if (!out.flush()) {
            std::fprintf(stderr, "perfgate_openapi: %s: cannot write\n", path.c_str());
            return 1;
        }
        return 0;
    }
    if (mode == "--check") {
        std::ifstream in(path, std::ios::binary);
        const std::string have{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        if (have == text) return 0;
        std::fprintf(stderr,
                     "perfgate_openapi: %s is not what the route table (server/router.cpp) and the wire "
                     "schemas (api/schemas.cpp) give%s; regenerate it with\n"
                     "    cmake --build BUILD --target openapi_doc\n"
                     "and commit the result.\n",
                     path.c_str(), in ? "" : " (it cannot be read)");
        return 1;
    }
    return usage();
}
