#include "runner/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "model/error.hpp"

extern char** environ;

namespace perfgate::runner {

namespace {

// What failed in the child between vfork and exec, sent to the parent through
// a close-on-exec pipe: a successful exec closes the pipe without a write.
enum class child_stage : int { dup, chdir, affinity, personality, rlimit, exec };

struct child_failure {
    child_stage stage;
    int err;
};

// Upper bound on captured stdout (git's output is a few lines); beyond it
// the rest is read and dropped so the child never blocks on a full pipe.
constexpr std::size_t stdout_limit = 1 << 20;

// The process group of the child being waited for, for the interrupt
// handler: a lock-free atomic is async-signal-safe to read.
std::atomic<pid_t> active_group{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

extern "C" void on_interrupt(int sig)
{
    // Only async-signal-safe calls here (signal-safety(7)).
    if (pid_t g = active_group.load(); g > 0) ::kill(-g, SIGKILL);
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

std::atomic<int> interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt_stop(int sig)
{
    // Only async-signal-safe calls here (signal-safety(7)). A second signal
    // dies as on_interrupt does.
    if (interrupt_signal.exchange(sig) != 0) on_interrupt(sig);
    if (pid_t g = active_group.load(); g > 0) ::kill(-g, SIGKILL);
}

std::string errno_text(int err) { return std::system_category().message(err); }

std::pair<unique_fd, unique_fd> make_pipe()
{
    std::array<int, 2> fds{};
    if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
        throw error(errors::process_spawn_failed, fmt::format("pipe2: {}", errno_text(errno)));
    }
    return {unique_fd(fds[0]), unique_fd(fds[1])};
}

// Everything the child needs, allocated before vfork: the child makes only
// system calls (exec_child), so no allocation there.
struct exec_plan {
    std::string path;
    std::vector<std::string> env_storage;
    std::vector<char*> argv, envp;
    cpu_set_t cpus{};
    bool set_cpus = false;
};

exec_plan make_plan(const spawn_options& opt)
{
    if (opt.argv.empty() || opt.argv[0].empty()) {
        throw error(errors::process_exec_failed, "empty command");
    }
    if (opt.capture_stdout && opt.stdout_file) {
        throw error(errors::process_spawn_failed, "spawn_options: capture_stdout and stdout_file exclude each other");
    }
    exec_plan plan;

    // The child's environment: ours (without credentials for a measured
    // command, unless passed on by name), with opt.env set on top.
    for (char** e = environ; e && *e; ++e) {
        std::string_view kv(*e);
        auto name = kv.substr(0, kv.find('='));
        bool overridden = std::any_of(opt.env.begin(), opt.env.end(), [&](auto& p) { return p.first == name; });
        if (overridden) continue;
        if (opt.drop_secrets && is_secret_name(name) &&
            std::find(opt.pass_env.begin(), opt.pass_env.end(), name) == opt.pass_env.end())
            continue;
        plan.env_storage.emplace_back(kv);
    }
    // A name given twice in opt.env: the later value wins.
    for (std::size_t i = 0; i < opt.env.size(); ++i) {
        const auto& name = opt.env[i].first;
        bool later = std::any_of(opt.env.begin() + static_cast<long>(i) + 1, opt.env.end(),
                                 [&](auto& p) { return p.first == name; });
        if (!later) plan.env_storage.push_back(name + "=" + opt.env[i].second);
    }

    std::string path_var = "/usr/local/bin:/usr/bin:/bin";
    for (auto& kv : plan.env_storage) {
        if (kv.starts_with("PATH=")) path_var = kv.substr(5);
    }
    auto exe = find_executable(opt.argv[0], path_var);
    if (!exe) {
        throw error(errors::process_exec_failed,
                    fmt::format("cannot execute '{}': command not found in PATH", opt.argv[0]));
    }
    plan.path = *exe;

    for (auto& a : opt.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
    plan.argv.push_back(nullptr);
    for (auto& kv : plan.env_storage) plan.envp.push_back(kv.data());
    plan.envp.push_back(nullptr);

    if (!opt.cpus.empty()) {
        CPU_ZERO(&plan.cpus);
        for (int c : opt.cpus) {
            if (c < 0 || c >= CPU_SETSIZE) {
                throw error(errors::usage_bad_cpus, fmt::format("CPU {} is out of range", c));
            }
            CPU_SET(c, &plan.cpus);
        }
        plan.set_cpus = true;
    }
    return plan;
}

[[noreturn]] void child_fail(int report_fd, child_stage stage) noexcept
{
    child_failure f{stage, errno};
    // Best effort: if this write fails the parent still sees exit status 127.
    [[maybe_unused]] auto n = ::write(report_fd, &f, sizeof f);
    ::_exit(127);
}

// Runs in the vfork child between vfork and exec. The child borrows the
// parent's memory and stack until execve, so: system calls only (no
// allocation, no library state, no writes to the parent's variables other
// than errno), every failure ends in _exit (child_fail).
[[noreturn]] void exec_child(const exec_plan& plan, const spawn_options& opt, int devnull, int out_fd, int err_fd,
                             int report_fd) noexcept
{
    // Own process group, so that a timeout can kill perf, the workload and
    // anything the workload started with one kill(-pgid).
    ::setpgid(0, 0);

    // The parent blocked every signal around vfork (spawn_vforked). Before
    // unblocking them, put back the default action for every signal with a
    // handler (a parent handler must not run here, on the parent's stack),
    // and for an ignored SIGPIPE, which execve would keep and which would
    // change the benchmark's behaviour. Other ignored signals stay ignored,
    // as a shell leaves them (nohup).
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction current {};
        if (::sigaction(sig, nullptr, &current) != 0) continue;
        const bool handled = current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
        if (handled || (sig == SIGPIPE && current.sa_handler == SIG_IGN)) {
            struct sigaction dfl {};
            dfl.sa_handler = SIG_DFL;
            ::sigaction(sig, &dfl, nullptr);
        }
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);

    if (::dup2(devnull, STDIN_FILENO) < 0 || ::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(err_fd, STDERR_FILENO) < 0) {
        child_fail(report_fd, child_stage::dup);
    }
    if (opt.cwd && ::chdir(opt.cwd->c_str()) != 0) child_fail(report_fd, child_stage::chdir);
    if (plan.set_cpus && ::sched_setaffinity(0, sizeof plan.cpus, &plan.cpus) != 0) {
        child_fail(report_fd, child_stage::affinity);
    }
    if (opt.disable_aslr) {
        // personality(0xffffffff) queries without changing; the flag survives
        // exec, so perf and the workload it starts both run without ASLR.
        int current = ::personality(0xffffffff);
        if (current == -1 || ::personality(static_cast<unsigned long>(current) | ADDR_NO_RANDOMIZE) == -1) {
            child_fail(report_fd, child_stage::personality);
        }
    }
    if (opt.max_file_bytes) {
        const rlimit limit{static_cast<rlim_t>(*opt.max_file_bytes), static_cast<rlim_t>(*opt.max_file_bytes)};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) child_fail(report_fd, child_stage::rlimit);
    }
    ::execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
    child_fail(report_fd, child_stage::exec);
}

// Starts the child with vfork(2): it runs on our memory until its execve
// (or _exit), and we are suspended until then, so no page tables are copied.
// fork() of perfgate (tens of MB mapped: its libraries, SQLite's cache)
// costs most of a short benchmark's start-up; vfork costs the same for any
// parent size. Every signal is blocked around it so that no handler of ours
// runs in the child (exec_child restores the defaults and unblocks). Returns
// the pid, or -1 with errno set.
pid_t spawn_vforked(const exec_plan& plan, const spawn_options& opt, int devnull, int out_fd, int err_fd,
                    int report_fd) noexcept
{
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = ::vfork();
    if (pid == 0) exec_child(plan, opt, devnull, out_fd, err_fd, report_fd);
    const int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = err;
    return pid;
}

std::string_view stage_text(child_stage s)
{
    switch (s) {
    case child_stage::dup: return "redirect stdio";
    case child_stage::chdir: return "change directory";
    case child_stage::affinity: return "set CPU affinity (sched_setaffinity)";
    case child_stage::personality: return "disable ASLR (personality)";
    case child_stage::rlimit: return "limit the output file size (setrlimit RLIMIT_FSIZE)";
    case child_stage::exec: return "execute";
    }
    return "start";
}

std::chrono::nanoseconds to_ns(const timeval& tv)
{
    return std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
}

// Appends what is available on fd; returns false at EOF or on error.
bool read_some(int fd, std::string& sink, std::size_t limit)
{
    std::array<char, 8192> buf{};
    for (;;) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n > 0) {
            if (sink.size() < limit)
                sink.append(buf.data(), std::min<std::size_t>(static_cast<std::size_t>(n), limit - sink.size()));
            return true;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

void set_nonblocking(int fd) noexcept
{
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

} // namespace

void unique_fd::reset(int fd) noexcept
{
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

temp_dir::temp_dir(std::string_view prefix)
{
    const char* base = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/{}-XXXXXX", base && *base ? base : "/tmp", prefix);
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw error(errors::process_io,
                    fmt::format("cannot create a temporary directory {}: {}", pattern, errno_text(errno)));
    }
    path_ = pattern;
}

temp_dir::~temp_dir()
{
    if (path_.empty()) return;
    std::error_code ec; // destructors never throw
    std::filesystem::remove_all(path_, ec);
}

void line_tail::push_line()
{
    if (partial_cut_) partial_ += "...";
    lines_.push_back(std::move(partial_));
    partial_.clear();
    partial_cut_ = false;
    while (lines_.size() > max_lines_) lines_.pop_front();
}

void line_tail::append(std::string_view bytes)
{
    for (char c : bytes) {
        if (c == '\n') {
            push_line();
        } else if (partial_.size() < max_line_chars_) {
            partial_.push_back(c);
        } else {
            partial_cut_ = true;
        }
    }
}

std::vector<std::string> line_tail::lines() const
{
    std::vector<std::string> out(lines_.begin(), lines_.end());
    if (!partial_.empty()) out.push_back(partial_ + (partial_cut_ ? "..." : ""));
    if (out.size() > max_lines_) out.erase(out.begin());
    return out;
}

void kill_children_on_interrupt()
{
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void stop_children_on_interrupt()
{
    struct sigaction sa {};
    sa.sa_handler = on_interrupt_stop;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

int interrupted() { return interrupt_signal.load(); }

std::string signal_name(int sig)
{
    static constexpr std::pair<int, const char*> names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},   {SIGTRAP, "SIGTRAP"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},
        {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"},
        {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
    };
    for (auto& [n, name] : names) {
        if (n == sig) return name;
    }
    return fmt::format("signal {}", sig);
}

std::string exit_status::describe() const
{
    if (timed_out) return "timed out and was killed";
    if (exited) return fmt::format("exited with status {}", code);
    return fmt::format("was killed by signal {} ({})", signal, signal_name(signal));
}

std::optional<std::string> find_executable(std::string_view name, std::string_view path)
{
    if (name.find('/') != std::string_view::npos) return std::string(name);
    while (true) {
        auto colon = path.find(':');
        std::string_view dir = path.substr(0, colon);
        // An empty PATH entry means the current directory (execvp's rule).
        std::string candidate = fmt::format("{}/{}", dir.empty() ? "." : dir, name);
        if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return candidate;
        if (colon == std::string_view::npos) break;
        path.remove_prefix(colon + 1);
    }
    return std::nullopt;
}

child_process child_process::spawn(const spawn_options& opt)
{
    exec_plan plan = make_plan(opt);

    unique_fd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!devnull) throw error(errors::process_spawn_failed, fmt::format("open /dev/null: {}", errno_text(errno)));
    auto [err_r, err_w] = make_pipe();
    auto [report_r, report_w] = make_pipe();
    unique_fd out_r, out_w;
    if (opt.capture_stdout) std::tie(out_r, out_w) = make_pipe();
    if (opt.stdout_file) {
        // The child's copy (dup2 onto 1) loses O_CLOEXEC; ours closes below.
        out_w.reset(::open(opt.stdout_file->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (!out_w) {
            throw error(errors::process_spawn_failed,
                        fmt::format("cannot create {}: {}", opt.stdout_file->string(), errno_text(errno)));
        }
    }

    child_process child;
    child.started_ = std::chrono::steady_clock::now();
    pid_t pid = spawn_vforked(plan, opt, devnull.get(), out_w ? out_w.get() : devnull.get(), err_w.get(),
                              report_w.get());
    if (pid < 0) throw error(errors::process_spawn_failed, fmt::format("vfork: {}", errno_text(errno)));
    child.pid_ = pid;
    // Also from the parent, so kill(-pid) works even before the child ran
    // (the usual race-free idiom); EACCES after the child's exec is harmless.
    ::setpgid(pid, pid);
    err_w.reset();
    out_w.reset();
    report_w.reset();

    child_failure failure{};
    ssize_t n;
    do {
        n = ::read(report_r.get(), &failure, sizeof failure);
    } while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof failure)) {
        // The child has already _exit()ed; the destructor reaps it.
        if (failure.stage == child_stage::chdir) {
            throw error(errors::process_exec_failed, fmt::format("cannot run '{}' in '{}': {}", opt.argv[0],
                                                                 opt.cwd->string(), errno_text(failure.err)));
        }
        throw error(errors::process_exec_failed,
                    fmt::format("cannot {} '{}': {}", stage_text(failure.stage), opt.argv[0], errno_text(failure.err)));
    }

    child.stderr_ = std::move(err_r);
    child.stdout_ = std::move(out_r);
    // pidfd (Linux >= 5.3) makes the child's exit pollable next to its pipes,
    // so exit is seen at once and the wall time is not padded by a poll interval.
    child.pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    active_group.store(pid);
    return child;
}

child_process::child_process(child_process&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), stderr_(std::move(o.stderr_)), stdout_(std::move(o.stdout_)),
      pidfd_(std::move(o.pidfd_)), started_(o.started_)
{}

child_process::~child_process() { kill_and_reap(); }

void child_process::kill_and_reap() noexcept
{
    if (pid_ <= 0) return;
    pid_t group = pid_;
    active_group.compare_exchange_strong(group, 0);
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int st = 0;
    while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

namespace {

using wait_clock = std::chrono::steady_clock;

// The child's pipes while child_process::wait runs: stderr goes to a line
// tail, stdout to a bounded text; a pipe is closed at EOF.
struct child_pipes {
    unique_fd& err;
    unique_fd& out;
    line_tail& tail;
    std::string& stdout_text;
};

// poll's timeout: until the deadline, at most 1 ms without a pidfd (then
// waitpid WNOHANG is asked every slice), else no limit (-1).
int poll_timeout_ms(bool have_pidfd, std::optional<wait_clock::time_point> deadline)
{
    int wait_ms = have_pidfd ? -1 : 1;
    if (deadline) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - wait_clock::now()).count();
        left = std::max<long long>(left, 0);
        wait_ms = wait_ms < 0 ? static_cast<int>(left) : std::min(wait_ms, static_cast<int>(left));
    }
    return wait_ms;
}

// One poll of the pipes and the pidfd, reading what is ready. True when the
// pidfd says the child exited (wait4 will not block).
bool poll_once(child_pipes& pipes, const unique_fd& pidfd, std::optional<wait_clock::time_point> deadline)
{
    std::array<pollfd, 3> fds{};
    nfds_t nfds = 0;
    int err_idx = -1, out_idx = -1, pid_idx = -1;
    if (pipes.err) {
        err_idx = static_cast<int>(nfds);
        fds[nfds++] = {pipes.err.get(), POLLIN, 0};
    }
    if (pipes.out) {
        out_idx = static_cast<int>(nfds);
        fds[nfds++] = {pipes.out.get(), POLLIN, 0};
    }
    if (pidfd) {
        pid_idx = static_cast<int>(nfds);
        fds[nfds++] = {pidfd.get(), POLLIN, 0};
    }

    const int wait_ms = poll_timeout_ms(static_cast<bool>(pidfd), deadline);
    int rc = nfds > 0 ? ::poll(fds.data(), nfds, wait_ms) : (::usleep(1000), 0);
    if (rc < 0 && errno != EINTR) throw error(errors::process_io, fmt::format("poll: {}", errno_text(errno)));

    if (rc > 0 && err_idx >= 0 && fds[err_idx].revents) {
        std::string err_chunk;
        if (!read_some(pipes.err.get(), err_chunk, SIZE_MAX)) pipes.err.reset();
        pipes.tail.append(err_chunk);
    }
    if (rc > 0 && out_idx >= 0 && fds[out_idx].revents) {
        if (!read_some(pipes.out.get(), pipes.stdout_text, stdout_limit)) pipes.out.reset();
    }
    return rc > 0 && pid_idx >= 0 && fds[pid_idx].revents;
}

// Reads what is left without blocking: a background grandchild may still
// hold the pipes open. Closes both.
void drain(child_pipes& pipes)
{
    for (unique_fd* fd : {&pipes.err, &pipes.out}) {
        if (!*fd) continue;
        set_nonblocking(fd->get());
        std::string chunk;
        // Ends at EOF, at EAGAIN (nothing more buffered) or on an error.
        while (true) {
            chunk.clear();
            const bool open = read_some(fd->get(), chunk, SIZE_MAX);
            if (chunk.empty()) break;
            if (fd == &pipes.err) {
                pipes.tail.append(chunk);
            } else if (pipes.stdout_text.size() < stdout_limit) {
                pipes.stdout_text.append(chunk, 0, stdout_limit - pipes.stdout_text.size());
            }
            if (!open) break;
        }
        fd->reset();
    }
}

// Exit status (unless timed out) and resource use from wait4.
void set_outcome(process_result& res, int status, const rusage& ru)
{
    if (!res.status.timed_out) {
        if (WIFEXITED(status)) {
            res.status.exited = true;
            res.status.code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
            res.status.signal = WTERMSIG(status);
        }
    }
    res.user = to_ns(ru.ru_utime);
    res.sys = to_ns(ru.ru_stime);
    res.max_rss_kib = ru.ru_maxrss;
}

} // namespace

process_result child_process::wait(std::optional<std::chrono::milliseconds> timeout)
{
    PERFGATE_CHECK(pid_ > 0);
    process_result res;
    res.timeout = timeout;
    line_tail tail;
    child_pipes pipes{stderr_, stdout_, tail, res.stdout_text};
    const auto deadline = timeout ? std::optional(started_ + *timeout) : std::nullopt;

    int status = 0;
    rusage ru{};
    bool reaped = false;
    while (!reaped) {
        const bool exited = poll_once(pipes, pidfd_, deadline);
        if (exited || !pidfd_) {
            pid_t w = ::wait4(pid_, &status, exited ? 0 : WNOHANG, &ru);
            if (w == pid_) reaped = true;
        }
        if (!reaped && deadline && wait_clock::now() >= *deadline) {
            // Kill the whole group: perf, the workload, and its children.
            ::kill(-pid_, SIGKILL);
            ::kill(pid_, SIGKILL);
            while (::wait4(pid_, &status, 0, &ru) < 0 && errno == EINTR) {
            }
            reaped = true;
            res.status.timed_out = true;
        }
    }
    // Wall time ends here: it covers vfork, exec, perf's own setup and
    // teardown when perf is the child, and the wait — the runner's view.
    res.ended = wait_clock::now();
    res.wall = res.ended - started_;
    pid_t group = pid_;
    active_group.compare_exchange_strong(group, 0);
    pid_ = -1;

    drain(pipes);
    set_outcome(res, status, ru);
    res.stderr_tail = tail.lines();
    return res;
}

process_result run_process(const spawn_options& opt, std::optional<std::chrono::milliseconds> timeout)
{
    auto child = child_process::spawn(opt);
    return child.wait(timeout);
}

bool is_secret_name(std::string_view name)
{
    std::string upper(name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (const std::string_view word : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE"}) {
        if (upper.find(word) != std::string::npos) return true;
    }
    return upper.ends_with("_KEY") || upper.ends_with("_PAT") || upper.starts_with("ACTIONS_ID_TOKEN_REQUEST_");
}

} // namespace perfgate::runner
