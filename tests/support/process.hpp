// Test support: scratch directories, the perfgate binary run to completion,
// and long-running children (servers) whose stdout a test reads as it comes.
//
// Runs to completion go through runner/process.hpp, the code perfgate
// measures benchmarks with. `child` is the one fork/exec of its own: a server
// test needs what a benchmark never does (stdout read while the child runs,
// descriptor and file-size limits, another uid), so it lives here and not in
// the runner.
#pragma once

#include "runner/process.hpp"

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace perfgate::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents at
// the end of the scope: temp_dir dir("perfgate-x"); dir.path() / "a.db".
using runner::temp_dir;

inline const std::string perfgate_exe = PERFGATE_BINARY_DIR "/bin/perfgate";
inline const std::string exec_helper = PERFGATE_BINARY_DIR "/bin/perfgate-exec";

using env_list = std::vector<std::pair<std::string, std::string>>;

struct cli_result {
    int code = -1;   // exit status
    std::string out; // stdout
    std::string err; // stderr's last lines (runner::line_tail), one "\n" after each
};

// Runs cmd with /bin/sh, REQUIREs that it exits 0 (naming the command and
// its output otherwise) and returns its stdout without trailing newlines.
std::string shell_output(const std::string& cmd);
// p in single quotes for sh (the tests' scratch paths hold no quote).
std::string shell_quoted(const std::filesystem::path& p);

// Runs the perfgate binary to completion in cwd (empty: this process's) with
// `env` on top of this environment, and with GITHUB_ACTIONS and GITLAB_CI emptied and
// NO_COLOR set, so that a CI job running the tests does not leak into them.
// Fails the test (REQUIRE) when perfgate does not exit by itself in time.
cli_result run_perfgate(const std::vector<std::string>& args, const std::filesystem::path& cwd = {},
                        const env_list& env = {}, std::chrono::seconds timeout = std::chrono::seconds(300));

// How a long-running child is started, beyond its arguments.
struct child_options {
    rlim_t nofile = 0;  // RLIMIT_NOFILE, soft and hard; 0: inherited
    rlim_t fsize = 0;   // RLIMIT_FSIZE with SIGXFSZ ignored (writes past it fail with EFBIG)
    int stderr_fd = -1; // dup2'ed to stderr instead of opening the stderr file
    bool close_stderr = false;
    uid_t uid = 0; // setgid+setuid to this (from root) before exec; 0: unchanged
};

// A child process (argv[0] a path) with its stdout on a pipe and its stderr
// appended to a file; killed (SIGKILL) and reaped on destruction unless
// already waited for. Only async-signal-safe calls between fork and exec.
class child {
public:
    child(const std::vector<std::string>& args, const std::filesystem::path& stderr_file,
          const child_options& opt = {});
    ~child();
    child(const child&) = delete;
    child& operator=(const child&) = delete;

    // Reads stdout until `needle` has been seen (empty: until EOF) or the
    // deadline; returns everything read so far.
    std::string read_until(const std::string& needle, std::chrono::milliseconds timeout);
    void signal(int sig);
    [[nodiscard]] pid_t pid() const { return pid_; }
    // Exit status (or 128 + signal), or -1 if still running at the deadline.
    int wait(std::chrono::milliseconds timeout);

private:
    pid_t pid_ = -1;
    int out_ = -1;
    std::string output_;
};

} // namespace perfgate::test
