#include "support/process.hpp"

#include <doctest/doctest.h>

#include <cstdio>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace perfgate::test {

using namespace std::chrono_literals;

std::string shell_output(const std::string& cmd)
{
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int status = ::pclose(p);
    INFO("command: " << cmd << "\noutput: " << out);
    REQUIRE(status == 0);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

std::string shell_quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

cli_result run_perfgate(const std::vector<std::string>& args, const std::filesystem::path& cwd, const env_list& env,
                        std::chrono::seconds timeout)
{
    runner::spawn_options so;
    so.argv = {perfgate_exe};
    so.argv.insert(so.argv.end(), args.begin(), args.end());
    if (!cwd.empty()) so.cwd = cwd;
    so.capture_stdout = true;
    so.env = {{"GITHUB_ACTIONS", ""}, {"GITLAB_CI", ""}, {"NO_COLOR", "1"}};
    so.env.insert(so.env.end(), env.begin(), env.end());
    auto res = runner::run_process(so, timeout);
    INFO("perfgate " << (args.empty() ? std::string() : args.front()) << ": " << res.status.describe());
    REQUIRE(res.status.exited);
    std::string err;
    for (const auto& line : res.stderr_tail) err += line + "\n";
    return {res.status.code, std::move(res.stdout_text), std::move(err)};
}

child::child(const std::vector<std::string>& args, const std::filesystem::path& stderr_file, const child_options& opt)
{
    REQUIRE(!args.empty());
    // Everything the child needs is built before fork.
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
        ::dup2(fds[1], STDOUT_FILENO);
        if (opt.stderr_fd >= 0) {
            ::dup2(opt.stderr_fd, STDERR_FILENO);
        } else {
            const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (err >= 0) ::dup2(err, STDERR_FILENO);
        }
        if (opt.close_stderr) ::close(STDERR_FILENO);
        if (opt.nofile != 0) {
            const rlimit lim{opt.nofile, opt.nofile};
            ::setrlimit(RLIMIT_NOFILE, &lim);
        }
        if (opt.fsize != 0) {
            ::signal(SIGXFSZ, SIG_IGN); // kept across exec
            const rlimit lim{opt.fsize, opt.fsize};
            ::setrlimit(RLIMIT_FSIZE, &lim);
        }
        if (opt.uid != 0 && (::setgid(opt.uid) != 0 || ::setuid(opt.uid) != 0)) ::_exit(126);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
}

child::~child()
{
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int st = 0;
        ::waitpid(pid_, &st, 0);
    }
    if (out_ >= 0) ::close(out_);
}

std::string child::read_until(const std::string& needle, std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline &&
           (needle.empty() || output_.find(needle) == std::string::npos)) {
        pollfd p{out_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        char buf[4096];
        const auto n = ::read(out_, buf, sizeof buf);
        if (n <= 0) break;
        output_.append(buf, static_cast<std::size_t>(n));
    }
    return output_;
}

void child::signal(int sig) { ::kill(pid_, sig); }

int child::wait(std::chrono::milliseconds timeout)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        int st = 0;
        if (::waitpid(pid_, &st, WNOHANG) == pid_) {
            pid_ = -1;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        std::this_thread::sleep_for(10ms);
    }
    return -1;
}

} // namespace perfgate::test
