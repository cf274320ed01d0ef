#include "spawner/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

namespace aiac::spawner {

Result<ChildProcess> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                         const std::string& output) {
  AIAC_CHECK(!argv.empty());
  if (access(argv[0].c_str(), X_OK) != 0) {
    return NotFound("cannot execute " + argv[0] + ": " + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_fd = -1;
  if (!output.empty()) {
    out_fd = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) return IoError("cannot open " + output + ": " + std::strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    if (out_fd >= 0) close(out_fd);
    return Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    if (out_fd >= 0) {
      dup2(out_fd, STDOUT_FILENO);
      dup2(out_fd, STDERR_FILENO);
    }
    // Reset what the parent's io_context may have blocked or ignored.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execv(args[0], args.data());
    _exit(127);
  }
  if (out_fd >= 0) close(out_fd);
  setpgid(pid, pid);  // also from the parent, so it holds before either side runs on
  return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), exit_code_(other.exit_code_), terminated_(other.terminated_) {
  other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0) Stop();
    pid_ = other.pid_;
    exit_code_ = other.exit_code_;
    terminated_ = other.terminated_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) Stop();
}

std::optional<int> ChildProcess::Poll() {
  if (exit_code_ || pid_ <= 0) return exit_code_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } else if (r < 0 && errno == ECHILD) {
    exit_code_ = -1;  // reaped elsewhere
  }
  return exit_code_;
}

void ChildProcess::Signal(int sig) {
  if (pid_ <= 0 || Poll()) return;
  kill(pid_, sig);
  if (sig == SIGTERM) terminated_ = true;
}

std::optional<int> ChildProcess::WaitFor(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto code = Poll()) return code;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return exit_code_.value_or(-1);
  if (!terminated_) Signal(SIGTERM);
  if (!WaitFor(grace)) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_code_ = 128 + SIGKILL;
  }
  pid_ = -1;
  return exit_code_.value_or(-1);
}

}  // namespace aiac::spawner
