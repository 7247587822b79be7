// libFuzzer target for the JSON files a user hands perfgate: a policy file
// (gate/policy.hpp), a run config (runner/config.hpp) and a GitHub event
// payload (github/github.hpp). The first byte picks which one; the rest is
// the file. Any input may be rejected with a perfgate::error of that parser's
// ids; a crash, a sanitizer report or another exception is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "gate/policy.hpp"
#include "github/github.hpp"
#include "model/error.hpp"
#include "report/render.hpp"
#include "runner/config.hpp"

namespace {

bool starts_with_any(std::string_view id, std::initializer_list<std::string_view> prefixes)
{
    for (auto p : prefixes) {
        if (id.starts_with(p)) return true;
    }
    return false;
}

// The loaders and the event parser read a file: one per process in TMPDIR, rewritten per
// input, removed when the fuzzer exits.
const std::string& event_file()
{
    static const struct scratch_file {
        std::string path = (std::filesystem::temp_directory_path() /
                            ("perfgate-fuzz-event-" + std::to_string(::getpid()) + ".json"))
                               .string();
        ~scratch_file()
        {
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
    } file;
    return file.path;
}

constexpr const char* event_names[] = {"pull_request", "pull_request_target", "workflow_run",  "push",
                                       "merge_group",  "workflow_dispatch",   "issue_comment", "release"};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1) return 0;
    const unsigned which = data[0];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
        switch (which % 3) {
        // The file loaders themselves, as perfgate calls them: their parse
        // (malformed JSON, numbers beyond double range) is part of the target.
        case 0: {
            std::ofstream(event_file(), std::ios::binary | std::ios::trunc) << text;
            (void)perfgate::gate::to_json(perfgate::gate::load_policy(event_file()));
            break;
        }
        case 1: {
            std::ofstream(event_file(), std::ios::binary | std::ios::trunc) << text;
            (void)perfgate::runner::load_config(event_file());
            break;
        }
        default: {
            std::ofstream(event_file(), std::ios::binary | std::ios::trunc) << text;
            perfgate::github::event_source src;
            src.path = event_file();
            src.name = event_names[(which / 3) % std::size(event_names)];
            src.saved = (which & 0x80) != 0;
            src.repository = "o/r";
            src.api_url = "https://api.github.com";
            src.fallback_sha = "0123456789abcdef0123456789abcdef01234567";
            (void)perfgate::github::read_event(src);
            break;
        }
        }
    } catch (const perfgate::error& e) {
        if (!starts_with_any(e.id(), {"policy.", "input.", "usage."})) std::abort();
    }
    return 0;
}
