// A child process that is always reaped: started with fork/exec in its own process group (so a
// terminal's Ctrl-C reaches only the parent, which stops the children in order), killed by the
// kernel if the parent dies (PR_SET_PDEATHSIG), and terminated then reaped by the destructor.
// Used by `spawner run --local` and by the integration tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/self_directory.h"
#include "core/status.h"

namespace aiac::spawner {

class ChildProcess {
 public:
  // Starts argv[0] (a path) with the arguments. `output` (if set) receives stdout and stderr;
  // otherwise they are inherited.
  static Result<ChildProcess> Spawn(const std::vector<std::string>& argv,
                                    const std::string& output = "");
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Exit code (or 128 + signal) once exited; nullopt while running. Reaps.
  std::optional<int> Poll();
  void Signal(int sig);
  // Waits up to `timeout` for exit; nullopt on timeout.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);
  // SIGTERM (unless one was sent already: a second one tells aiac's programs to stop without
  // waiting for their work to end), wait up to `grace`, then SIGKILL; always reaps. Returns the
  // exit code.
  int Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  bool terminated_ = false;  // SIGTERM sent
};

// The directory holding the running executable, to find sibling binaries.
using aiac::SelfDirectory;

}  // namespace aiac::spawner
