// perfgate-exec: the workload wrapper that `perfgate run` puts between
// `perf stat` and the benchmark command.
//
//   perfgate-exec STATUS_FILE [-s NAME=VALUE | -u NAME]... -- CMD [ARGS...]
//
// Why it exists: perf stat exits 0 when its workload is killed by a signal
// and 255 both when the workload cannot be executed and on its own failures
// (docs/perf-input.md), so perf's exit status cannot tell the runner what happened
// to the benchmark. This wrapper forks and execs CMD, waits for it, and
// writes the true outcome to STATUS_FILE as one line:
//   "exit N"      CMD exited with status N
//   "signal N"    CMD was killed by signal N
//   "exec ERRNO"  CMD could not be executed (errno from execvp)
// An empty or missing STATUS_FILE therefore means perf never started the
// wrapper (perf itself failed). The wrapper then exits with CMD's status
// (128 + N for a signal, 127 for exec failure).
//
// -s / -u set or unset environment variables for CMD only. The runner runs
// perf with LC_ALL=C (perf calls setlocale(LC_ALL, ""), and a locale with a
// decimal comma would break its CSV) and uses these to give the benchmark
// back the user's own locale variables.
//
// perfgate qualify's second form (docs/cli.md#perfgate-qualify):
//
//   perfgate-exec --spin N -- CMD [ARGS...]
//
// forks and execs CMD, waits for it, then, when it exited 0, runs N
// iterations of runner/spin.hpp's loop in this process before exiting with
// CMD's status: extra work of a calibrated size inside the measured process
// tree, counted by every backend as the benchmark's own work is (perf and
// native follow the child and this process, rusage's wait4 sums both,
// callgrind traces both). N = 0 is the A/A side: the same wrapper, no work.
//
// Cost: one extra fork + exec of this small static program per execution,
// counted by perf (which follows children) identically on both sides of a
// comparison. Kept free of libstdc++ and linked statically so that the
// exec is cheap.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runner/spin.hpp"

namespace {

long long to_ns(const timeval& tv) { return static_cast<long long>(tv.tv_sec) * 1000000000LL + tv.tv_usec * 1000LL; }

// "KIND VALUE" and, when the workload ran, " UTIME_NS STIME_NS MAXRSS_KIB":
// the workload's own rusage from wait4. Seen from outside, wait4 on perf
// would report perf's user/sys time and perf's resident set (perf is bigger
// than many benchmarks, so max-rss could never move).
void write_status(const char* path, const char* kind, int value, const rusage* ru = nullptr)
{
    char line[160];
    int len = ru ? std::snprintf(line, sizeof line, "%s %d %lld %lld %ld\n", kind, value, to_ns(ru->ru_utime),
                                 to_ns(ru->ru_stime), ru->ru_maxrss)
                 : std::snprintf(line, sizeof line, "%s %d\n", kind, value);
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return;
    [[maybe_unused]] auto n = ::write(fd, line, static_cast<size_t>(len));
    ::close(fd);
}

// Runs CMD as a child, then the injected work (the --spin form above).
int spin_after(unsigned long long iterations, char** cmd)
{
    pid_t pid = ::fork();
    if (pid < 0) return 127;
    if (pid == 0) {
        ::execvp(cmd[0], cmd);
        static const char failed[] = "perfgate-exec: cannot execute the command\n";
        [[maybe_unused]] auto n = ::write(STDERR_FILENO, failed, sizeof failed - 1);
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    if (WEXITSTATUS(status) != 0) return WEXITSTATUS(status);
    volatile unsigned long long sink = perfgate::runner::spin(iterations);
    (void)sink;
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    static const char usage[] = "usage: perfgate-exec STATUS_FILE [-s NAME=VALUE | -u NAME]... -- CMD [ARGS...]\n"
                                "       perfgate-exec --spin N -- CMD [ARGS...]\n";
    if (argc >= 5 && std::strcmp(argv[1], "--spin") == 0 && std::strcmp(argv[3], "--") == 0) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long n = std::strtoull(argv[2], &end, 10);
        if (errno == 0 && end != argv[2] && *end == '\0' && argv[2][0] != '-') return spin_after(n, argv + 4);
    }
    if (argc >= 2 && std::strcmp(argv[1], "--spin") == 0) {
        [[maybe_unused]] auto n = ::write(STDERR_FILENO, usage, sizeof usage - 1);
        return 2;
    }
    int i = 2;
    for (; i + 1 < argc && std::strcmp(argv[i], "--") != 0; i += 2) {
        if (std::strcmp(argv[i], "-s") == 0) {
            ::putenv(argv[i + 1]); // NAME=VALUE, kept alive by argv
        } else if (std::strcmp(argv[i], "-u") == 0) {
            ::unsetenv(argv[i + 1]);
        } else {
            break;
        }
    }
    if (argc < 2 || i + 1 >= argc || std::strcmp(argv[i], "--") != 0) {
        [[maybe_unused]] auto n = ::write(STDERR_FILENO, usage, sizeof usage - 1);
        return 2;
    }
    const char* status_path = argv[1];
    char** cmd = argv + i + 1;

    // Exec failure is reported through a close-on-exec pipe: a successful
    // exec closes it with nothing written.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        write_status(status_path, "exec", errno);
        return 127;
    }
    pid_t pid = ::fork();
    if (pid < 0) {
        write_status(status_path, "exec", errno);
        return 127;
    }
    if (pid == 0) {
        ::close(report[0]);
        ::execvp(cmd[0], cmd);
        int err = errno;
        [[maybe_unused]] auto n = ::write(report[1], &err, sizeof err);
        ::_exit(127);
    }
    ::close(report[1]);
    int exec_errno = 0;
    ssize_t got;
    do {
        got = ::read(report[0], &exec_errno, sizeof exec_errno);
    } while (got < 0 && errno == EINTR);
    ::close(report[0]);

    int status = 0;
    rusage ru{};
    while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    if (got == static_cast<ssize_t>(sizeof exec_errno)) {
        write_status(status_path, "exec", exec_errno);
        return 127;
    }
    if (WIFSIGNALED(status)) {
        write_status(status_path, "signal", WTERMSIG(status), &ru);
        return 128 + WTERMSIG(status);
    }
    write_status(status_path, "exit", WEXITSTATUS(status), &ru);
    return WEXITSTATUS(status);
}
