// Test helper for tests/browser/test_flamegraph.py: the differential flame
// graph of two recorded `perf script` files, as perfgate run --profile draws
// it (profile/flamegraph.hpp).
//   make_flamegraph BASELINE.script CANDIDATE.script OUT.svg [TITLE]
#include "profile/flamegraph.hpp"
#include "profile/perf_script.hpp"

#include "model/error.hpp"
#include "model/file.hpp"

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: make_flamegraph BASELINE.script CANDIDATE.script OUT.svg [TITLE]\n");
        return 2;
    }
    try {
        using namespace perfgate;
        const auto before = profile::fold_perf_script(model::read_text_file(argv[1]), argv[1]);
        const auto after = profile::fold_perf_script(model::read_text_file(argv[2]), argv[2]);
        profile::flame_graph_options o;
        if (argc > 4) o.title = argv[4];
        o.subtitle = "cpu-clock: candidate " + std::to_string(after.samples) + " samples, baseline " +
                     std::to_string(before.samples);
        std::ofstream(argv[3], std::ios::binary) << profile::differential_flame_graph(before, after, o);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_flamegraph: %s\n", e.what());
        return 1;
    }
}
