// Child processes for the measurement engine: vfork/exec with everything a
// benchmark execution needs set up in the child (cwd, environment, CPU
// affinity, ASLR off, its own process group, stdin/stdout to /dev/null,
// stderr captured), a deadline, and the child's rusage from wait4.
//
// Every handle is owned: file descriptors by unique_fd, the child by
// child_process (whose destructor SIGKILLs the child's process group and
// reaps it), temporary directories by temp_dir.
//
// Errors (perfgate::error): "process.exec_failed" when the program cannot be
// executed (the message names it and the errno text), "process.spawn_failed"
// for vfork/pipe failures. (CPU lists are parsed by check_env.hpp's
// parse_cpu_list.)
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate::runner {

// A file descriptor, closed on destruction. Move-only.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    ~unique_fd() { reset(); }
    unique_fd(unique_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    unique_fd& operator=(unique_fd&& o) noexcept
    {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;

    [[nodiscard]] int get() const noexcept { return fd_; }
    [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
// destruction.
class temp_dir {
public:
    explicit temp_dir(std::string_view prefix = "perfgate");
    ~temp_dir();
    temp_dir(temp_dir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
    temp_dir& operator=(temp_dir&&) = delete;
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
};

// The last lines written to a stream, with bounded memory: at most
// max_lines lines of at most max_line_chars characters each (longer lines
// are cut and marked with "...").
class line_tail {
public:
    static constexpr std::size_t default_lines = 20;
    static constexpr std::size_t default_line_chars = 400;

    explicit line_tail(std::size_t max_lines = default_lines, std::size_t max_line_chars = default_line_chars)
        : max_lines_(max_lines), max_line_chars_(max_line_chars)
    {}

    void append(std::string_view bytes);
    // Completed lines plus the unterminated last one, oldest first.
    [[nodiscard]] std::vector<std::string> lines() const;

private:
    void push_line();

    std::size_t max_lines_, max_line_chars_;
    std::deque<std::string> lines_;
    std::string partial_;
    bool partial_cut_ = false;
};

struct spawn_options {
    std::vector<std::string> argv; // argv[0] is looked up in PATH unless it has a '/'
    std::optional<std::filesystem::path> cwd;
    // Variables set (or overridden) in the child on top of this process's
    // environment; for a name given twice the later value wins.
    std::vector<std::pair<std::string, std::string>> env;
    // Measured commands (issue 43 finding 8): the variables of this process
    // whose names look like credentials (is_secret_name) are not inherited,
    // except those named in pass_env; `env` is set all the same.
    bool drop_secrets = false;
    std::vector<std::string> pass_env;
    std::vector<int> cpus;       // sched_setaffinity set; empty: inherit
    bool disable_aslr = false;   // personality(ADDR_NO_RANDOMIZE)
    bool capture_stdout = false; // else stdout goes to /dev/null
    // Stdout into this file (created or truncated, mode 0644) instead: for
    // output too large for capture_stdout's 1 MiB (perf script). Not with
    // capture_stdout.
    std::optional<std::filesystem::path> stdout_file;
    // RLIMIT_FSIZE of the child: a write past this many bytes in any file
    // kills it with SIGXFSZ. Bounds stdout_file (and so the disk and memory
    // a tool's output may take); nullopt: inherited.
    std::optional<std::uint64_t> max_file_bytes;
};

// Whether an environment variable's name looks like a credential, which a
// measured command does not inherit (docs/cli.md#the-measured-commands-environment):
// compared in upper case, a name that contains TOKEN, SECRET, PASSWORD,
// PASSWD, CREDENTIAL or PRIVATE, ends in _KEY or _PAT, or starts with
// ACTIONS_ID_TOKEN_REQUEST_ (GITHUB_TOKEN, PERFGATE_TOKEN,
// ACTIONS_RUNTIME_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, NPM_TOKEN,
// SSH_PRIVATE_KEY, ...). A rule over names, not a list: a CI system's next
// secret is named like its last.
bool is_secret_name(std::string_view name);

// How a child ended.
struct exit_status {
    bool exited = false; // normal exit: code is valid
    int code = 0;
    int signal = 0;         // killed by this signal (when !exited)
    bool timed_out = false; // we killed it at the deadline

    [[nodiscard]] bool success() const noexcept { return exited && code == 0 && !timed_out; }
    // "exited with status 3", "killed by signal 9 (SIGKILL)", "timed out after 1.0 s".
    [[nodiscard]] std::string describe() const;
};

struct process_result {
    exit_status status;
    // Our own CLOCK_MONOTONIC time from just before vfork() to wait4()'s return.
    std::chrono::nanoseconds wall{0};
    std::chrono::steady_clock::time_point ended; // when wait4 returned: the end of wall
    // From wait4's rusage: the child plus every descendant it waited for.
    std::chrono::nanoseconds user{0}, sys{0};
    long max_rss_kib = 0;                             // ru_maxrss (Linux: KiB)
    std::vector<std::string> stderr_tail;             // last lines of the child's stderr
    std::string stdout_text;                          // when capture_stdout
    std::optional<std::chrono::milliseconds> timeout; // the deadline that applied
};

// A running child. Move-only; the destructor kills the child's process group
// with SIGKILL and reaps it if wait() has not done so.
class child_process {
public:
    // Starts the child with vfork and execve. Between the two the child
    // only makes system calls (everything is prepared beforehand). Exec
    // failure is reported back through a close-on-exec pipe and thrown here
    // as "process.exec_failed".
    static child_process spawn(const spawn_options& opt);

    ~child_process();
    child_process(child_process&& o) noexcept;
    child_process& operator=(child_process&&) = delete;
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;

    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

    // Collects stderr (and stdout) until the child exits; at the deadline
    // kills the whole process group (SIGKILL) and reports timed_out. Call once.
    process_result wait(std::optional<std::chrono::milliseconds> timeout);

private:
    child_process() = default;
    void kill_and_reap() noexcept;

    pid_t pid_ = -1;
    unique_fd stderr_, stdout_, pidfd_;
    std::chrono::steady_clock::time_point started_;
};

// spawn + wait.
process_result run_process(const spawn_options& opt, std::optional<std::chrono::milliseconds> timeout = {});

// argv[0] resolution as execvp does it, done in the parent so that the child
// can call execve (execvp is not async-signal-safe). Returns name itself if
// it contains '/', nullopt if no executable is found in path.
std::optional<std::string> find_executable(std::string_view name, std::string_view path);

// On SIGINT / SIGTERM / SIGHUP, SIGKILL the process group of the child that
// is running (children live in their own group, so a Ctrl-C on the terminal
// does not reach them), then die of the same signal. Without this an
// interrupted `perfgate run` would leave perf and the benchmark running.
// Call once, from the main thread, before spawning.
void kill_children_on_interrupt();

// For a command that reports what it has when interrupted (perfgate
// qualify): on the first SIGINT / SIGTERM / SIGHUP, SIGKILL the running
// child's process group and remember the signal (interrupted()): the
// measurement then fails, and the caller, seeing interrupted(), stops and
// reports. A second signal kills as kill_children_on_interrupt does.
void stop_children_on_interrupt();
// The signal stop_children_on_interrupt caught, or 0.
int interrupted();

// "SIGKILL" for 9; "signal N" for unknown numbers.
std::string signal_name(int sig);

} // namespace perfgate::runner
