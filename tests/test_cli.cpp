// The perfgate command as a process: what it does when its own output or its
// input files are hostile (full disks, devices, FIFOs, directories).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const std::string perfgate_exe = PERFGATE_BINARY_DIR "/bin/perfgate";
const std::string examples = PERFGATE_SOURCE_DIR "/examples/data";

struct outcome {
    int code = -1;       // exit status, or 128 + signal
    std::string err;     // what it wrote to stderr (when not redirected elsewhere)
};

// Runs `perfgate ARGS` through the shell, so tests can redirect to /dev/full.
// stdout goes to `out`; stderr is captured unless `redirect` replaces both.
outcome sh(const std::string& args, const std::string& redirect = "", const std::string& out = "/dev/null")
{
    static int n = 0;
    const auto err_file = std::filesystem::temp_directory_path() /
                          ("perfgate-cli-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + ".err");
    const std::string cmd = "'" + perfgate_exe + "' " + args + " " +
                            (redirect.empty() ? "> " + out + " 2> '" + err_file.string() + "'" : redirect);
    const int st = std::system(cmd.c_str());
    outcome o;
    if (WIFEXITED(st)) o.code = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) o.code = 128 + WTERMSIG(st);
    std::ifstream in(err_file);
    std::stringstream text;
    text << in.rdbuf();
    o.err = text.str();
    std::filesystem::remove(err_file);
    return o;
}

const std::string regression_args =
    "compare --baseline '" + examples + "/baseline.csv' --candidate '" + examples + "/regressed.csv'";

} // namespace

TEST_CASE("a report that cannot reach stdout is exit 4, never a silent verdict")
{
    const auto o = sh(regression_args, "> /dev/full 2> /dev/null");
    CHECK(o.code == 4);
    const auto with_err = sh(regression_args, "", "/dev/full");
    CHECK(with_err.code == 4);
    CHECK(with_err.err.find("[io.stdout]") != std::string::npos);
}

TEST_CASE("a stderr that cannot be written never aborts the command")
{
    // Before: fmt::print threw inside the error handler -> SIGABRT, exit 134.
    CHECK(sh("compare --baseline /nonexistent --candidate x", "> /dev/null 2> /dev/full").code == 2);
    CHECK(sh(regression_args, "> /dev/null 2> /dev/full").code == 1);
    CHECK(sh("no-such-command", "2> /dev/full").code == 2);
}

TEST_CASE("hostile input files get a clear error naming them")
{
    SUBCASE("a directory")
    {
        const auto o = sh("compare --baseline /tmp --candidate /tmp");
        CHECK(o.code == 2);
        CHECK(o.err.find("/tmp: cannot read: is a directory") != std::string::npos);
        const auto p = sh("compare --policy /tmp " + regression_args.substr(std::string("compare").size()));
        CHECK(p.code == 2);
        CHECK(p.err.find("/tmp: cannot read: is a directory") != std::string::npos);
    }
    SUBCASE("/dev/zero is cut at the input limit instead of filling memory")
    {
        const auto start = std::chrono::steady_clock::now();
        const auto o = sh("compare --baseline /dev/zero --candidate /dev/zero");
        CHECK(o.code == 2);
        CHECK(o.err.find("/dev/zero: cannot read: more than the limit of 64 MiB") != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
    }
    SUBCASE("a FIFO nobody writes to does not hang")
    {
        const auto fifo = std::filesystem::temp_directory_path() / ("perfgate-fifo-" + std::to_string(::getpid()));
        std::filesystem::remove(fifo);
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        const auto start = std::chrono::steady_clock::now();
        const auto o = sh("compare --baseline '" + fifo.string() + "' --candidate '" + fifo.string() + "'");
        CHECK(o.code == 2);
        CHECK(o.err.find(fifo.string()) != std::string::npos);
        CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
        std::filesystem::remove(fifo);
    }
    SUBCASE("a pipe with a writer is read whole (process substitution, /dev/stdin)")
    {
        const auto o = sh("compare --baseline /dev/stdin --candidate '" + examples + "/regressed.csv' < '" + examples +
                          "/baseline.csv'");
        CHECK(o.code == 1);
    }
}
