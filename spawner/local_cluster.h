// `spawner run --local N`: a super-node and N daemons started as child processes on free
// loopback ports, with a fresh random cluster_key and data in a temporary directory. Stop() (and
// the destructor) terminates and reaps every child and removes the directory: no process and no
// file is left behind, also after an error or Ctrl-C. A run killed outright (SIGKILL) cannot
// clean up: its directory records the owner's pid (owner.pid), and the next --local run removes
// every such directory of this user whose owner is no longer running.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/asio.h"
#include "spawner/child_process.h"

namespace aiac::spawner {

// Removes $TMPDIR/aiac-local-* directories of this user whose owner.pid names a process that
// no longer exists; returns how many were removed. Logs one line per removed directory.
size_t RemoveStaleLocalDirs(const std::string& root, const Logger& log);

class LocalCluster {
 public:
  // `bin_dir` holds aiac-supernode and aiac-daemon; children log at `log_level`.
  LocalCluster(size_t daemons, std::string bin_dir, std::string log_level, Logger log);
  ~LocalCluster();

  // Starts the super-node, waits (up to `timeout`) until it listens, then starts the daemons.
  net::awaitable<Result<Endpoint>> Start(std::chrono::milliseconds timeout);
  // The key every process of this cluster shares.
  const std::string& cluster_key() const { return key_; }
  // "super-node exited with 2" once the super-node exited while it should be running. Daemons
  // that exit are reaped and logged (the job runner replaces them), never reported here.
  std::string Casualty();
  void Stop();
  // SIGKILLs daemon `id` (fault injection); false when there is no such running daemon.
  bool Kill(const std::string& id);

 private:
  Status WriteConfigs();

  size_t daemons_;
  std::string bin_dir_, log_level_;
  Logger log_;
  std::string dir_, key_;
  std::vector<std::pair<std::string, ChildProcess>> children_;  // name, process
  std::set<std::string> reaped_;  // daemons that exited during the run
  bool stopped_ = false;
};

}  // namespace aiac::spawner
