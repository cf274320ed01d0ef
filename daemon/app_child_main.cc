// aiac-app-child: the process a daemon runs one task's app in (daemon/app_child.h), so that
// whatever the app does wrong ends this process and not the daemon. Started by the daemon only:
//
//   aiac-app-child --fd 3 --parent PID [--memory-mb N] [--cpu-seconds S]
//
// fd 3 is its end of a socketpair with the daemon; its standard output and error go to the
// task's stderr file, whose last lines the daemon reports when this process dies.
#include <execinfo.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <string>

#include "daemon/app_child_server.h"

namespace {

// At most this many frames (the handler's own not printed), so that the crash's tail (the last
// 20 lines, TailOfFile) still holds the lines written before the backtrace: what an uncaught
// exception said, the app's last words. A deep or unoptimised stack has more, and after an
// abort the first nine are the signal's and the C++ runtime's own.
constexpr int kBacktraceFrames = 16;

// A signal that ends the process: its name and a backtrace to stderr, then the default action,
// so that the daemon sees the signal itself. Only async-signal-safe calls (backtrace() is
// primed at start, so it does not allocate here).
void OnFatalSignal(int sig) {
  const char* name = sigabbrev_np(sig);
  const char head[] = "aiac-app-child: caught SIG";
  (void)!write(STDERR_FILENO, head, sizeof head - 1);
  if (name) (void)!write(STDERR_FILENO, name, std::strlen(name));
  const char tail[] = "; backtrace:\n";
  (void)!write(STDERR_FILENO, tail, sizeof tail - 1);
  void* frames[kBacktraceFrames];
  const int n = backtrace(frames, kBacktraceFrames);
  if (n > 1) backtrace_symbols_fd(frames + 1, n - 1, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallFatalHandlers() {
  void* prime[1];
  backtrace(prime, 1);  // loads libgcc's unwinder now, not in the handler
  // Its own stack: a stack overflow leaves none to run the handler on.
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXCPU}) sigaction(sig, &sa, nullptr);
}

bool Limit(int resource, rlim_t soft, rlim_t hard) {
  rlimit r{soft, hard};
  return setrlimit(resource, &r) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli("aiac-app-child: runs one task's app for a daemon (started by the daemon only)");
  int fd = -1;
  pid_t parent = 0;
  uint64_t memory_mb = 0, cpu_seconds = 0;
  cli.add_option("--fd", fd, "its end of the socketpair with the daemon")->required();
  cli.add_option("--parent", parent, "the daemon's pid")->required();
  cli.add_option("--memory-mb", memory_mb, "address space limit in MiB (0: none)");
  cli.add_option("--cpu-seconds", cpu_seconds, "CPU time limit in seconds (0: none)");
  CLI11_PARSE(cli, argc, argv);
  // Never outlive the daemon (it may be SIGKILLed while the app computes).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) return 1;
  InstallFatalHandlers();
#if !defined(AIAC_SANITIZE)
  // (AddressSanitizer reserves terabytes of address space: no limit there.)
  if (memory_mb > 0 && !Limit(RLIMIT_AS, memory_mb << 20, memory_mb << 20)) {
    std::fprintf(stderr, "aiac-app-child: cannot limit memory to %llu MiB: %s\n",
                 static_cast<unsigned long long>(memory_mb), std::strerror(errno));
    return 1;
  }
#endif
  // SIGXCPU at the limit, SIGKILL a second later should the app ignore it.
  if (cpu_seconds > 0 && !Limit(RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)) {
    std::fprintf(stderr, "aiac-app-child: cannot limit CPU time: %s\n", std::strerror(errno));
    return 1;
  }
  return aiac::daemon::ServeAppChild(fd);
}
