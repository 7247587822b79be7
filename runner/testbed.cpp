#include "runner/testbed.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include "model/error.hpp"
#include "model/testbed.hpp"
#include "model/text.hpp"
#include "runner/check_env.hpp"

namespace perfgate::runner {

namespace {

namespace fs = std::filesystem;

// "model name : AMD EPYC 7B13" on x86; ARM kernels write "Hardware" or
// "Processor" (older) instead, and "CPU part" codes that name no model.
std::string cpu_model(const fs::path& proc_root)
{
    std::ifstream in(proc_root / "cpuinfo");
    std::string fallback;
    for (std::string line; std::getline(in, line);) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        auto key = model::trim(std::string_view(line).substr(0, colon));
        std::string value(model::trim(std::string_view(line).substr(colon + 1)));
        if (value.empty()) continue;
        if (key == "model name") return value;
        if (fallback.empty() && (key == "Hardware" || key == "Processor" || key == "cpu model")) fallback = value;
    }
    return fallback.empty() ? "unknown" : fallback;
}

int online_cores(const fs::path& sys_root)
{
    std::ifstream in(sys_root / "devices/system/cpu/online");
    std::string text;
    if (std::getline(in, text)) {
        try {
            if (auto cpus = parse_cpu_list(text); !cpus.empty()) return static_cast<int>(cpus.size());
        } catch (const perfgate::error&) {
            // fall through to the C++ runtime's count
        }
    }
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string kernel_release()
{
    utsname u{};
    if (::uname(&u) != 0) return "unknown";
    return u.release;
}

std::string host_name()
{
    // HOST_NAME_MAX is 64 on Linux; gethostname may not NUL-terminate on truncation.
    std::array<char, 256> buf{};
    if (::gethostname(buf.data(), buf.size() - 1) != 0 || buf[0] == '\0') return "unknown";
    return buf.data();
}

} // namespace

model::testbed_info detect_testbed(std::optional<std::string> name, const fs::path& sys_root, const fs::path& proc_root)
{
    model::testbed_info t;
    t.cpu = cpu_model(proc_root);
    t.cores = online_cores(sys_root);
    t.kernel = kernel_release();
    t.name = name && !name->empty() ? std::move(*name) : host_name();
    t.fingerprint = model::testbed_fingerprint(t);
    return t;
}

model::testbed_info detect_testbed(std::optional<std::string> name)
{
    return detect_testbed(std::move(name), "/sys", "/proc");
}

} // namespace perfgate::runner
