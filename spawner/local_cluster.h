// `spawner run --local N [--local-supernodes K]`: K peer super-nodes and N daemons started as
// child processes on free loopback ports, with a fresh random cluster_key, a throwaway
// authority that certifies every process of the run (SpawnerIdentity for this one), a throwaway
// plugin-signing key (the daemons trust only it; SignPlugin signs the job's plugin) and data in
// a temporary directory. Each daemon lists every super-node, starting with a different one, so
// registrations are spread and a daemon whose super-node dies registers with the next. Stop() (and
// the destructor) terminates and reaps every child and removes the directory: no process and no
// file is left behind, also after an error or Ctrl-C. A run killed outright (SIGKILL) cannot
// clean up: its directory records the owner's pid (owner.pid), and the next --local run removes
// every such directory of this user whose owner is no longer running.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/asio.h"
#include "net/identity.h"
#include "runtime/code_signing.h"
#include "spawner/child_process.h"

namespace aiac::spawner {

// Removes $TMPDIR/aiac-local-* directories of this user whose owner.pid names a process that
// no longer exists; returns how many were removed. Logs one line per removed directory.
size_t RemoveStaleLocalDirs(const std::string& root, const Logger& log);

// An emulated platform (`run --platform P --local`): one daemon per node of the platform file
// at `platform_path`, with the node's id, each playing its node (aiac-daemon --emulate,
// emulation/emulated_node.h). (At namespace scope: clang cannot default-construct a nested
// struct with member initializers inside the optional of its enclosing class.)
struct LocalEmulation {
  std::string platform_path;
  std::vector<std::string> node_ids;
  double slowdown = 1;
  uint64_t seed = 1;
  // `--emulation os`: the platform is up as namespaces and cgroups (`aiac-emulate up`); the
  // super-node listens on the host's port into it, and each daemon runs inside its node
  // (`aiac-emulate exec`) at the node's address, with the node's cluster and power, stretching
  // nothing itself: the kernel and the link switch do.
  struct OsNode {
    std::string address, cluster;
    double power = 1;
  };
  struct Os {
    std::string platform;      // its name, as aiac-emulate knows it
    std::string host_address;  // the host's address on it
    std::map<std::string, OsNode> nodes;
  };
  std::optional<Os> os;
};

class LocalCluster {
 public:
  // `bin_dir` holds aiac-supernode and aiac-daemon; children log at `log_level`.
  LocalCluster(size_t daemons, size_t supernodes, std::string bin_dir, std::string log_level,
               Logger log);
  ~LocalCluster();

  // Starts the super-nodes one by one, each linked with the ones before it and waited for (up
  // to `timeout` each) until it listens, then the daemons. Returns the super-nodes' endpoints.
  net::awaitable<Result<std::vector<Endpoint>>> Start(std::chrono::milliseconds timeout);
  // The key every process of this cluster shares.
  const std::string& cluster_key() const { return key_; }
  // The signature of a plugin's SHA-256 by this cluster's signing key, the one its daemons trust,
  // and that key (32 raw bytes).
  Result<std::pair<std::string, std::string>> SignPlugin(std::string_view sha256) const;
  // Set before Start: where the daemons run the tasks' apps (their app_isolation).
  void set_app_isolation(std::string isolation) { app_isolation_ = std::move(isolation); }
  // Set before Start: the daemons trust these public keys (hex), not the cluster's own key.
  void set_trusted_keys(std::vector<std::string> keys) { trusted_keys_ = std::move(keys); }
  // The identity of the spawner that runs this cluster's job, certified by its authority.
  Result<std::shared_ptr<const net::NodeIdentity>> SpawnerIdentity() const;
  // Reaps and logs the children that exited while they should be running. A run goes on
  // without them: the job runner replaces lost daemons, and fails over to another super-node.
  void Reap();
  void Stop();
  // SIGKILLs daemon `id` (fault injection); false when there is no such running daemon.
  bool Kill(const std::string& id);

  // The children's log format ("text" or "json"), set before Start: the run's own.
  void set_log_format(std::string format) { log_format_ = std::move(format); }

  // An emulated platform, set before Start (LocalEmulation).
  void set_emulation(LocalEmulation emulation) { emulation_ = std::move(emulation); }

 private:
  // What every child is started with: its binary, the cluster's config, a free port, its id, its
  // data directory and the log level.
  std::vector<std::string> ChildArgs(const std::string& binary, const std::string& id,
                                     const std::string& host = "127.0.0.1") const;
  // Super-node `k` (sn-local-k), peered with `peers`: its address once it listens.
  net::awaitable<Result<std::string>> StartSupernode(size_t k,
                                                     const std::vector<std::string>& peers,
                                                     std::chrono::milliseconds timeout);
  // The daemons, each listing every super-node of `supernodes`.
  Status StartDaemons(const std::vector<std::string>& supernodes);
  Status WriteConfigs();

  size_t daemons_, supernodes_;
  bool all_supernodes_gone_ = false;
  std::string bin_dir_, log_level_, log_format_ = "text";
  Logger log_;
  // Writes a key pair and a certificate for child `id` in the run's directory.
  Status WriteIdentity(const std::string& id, proto::Role role) const;

  std::string dir_, key_;
  Result<runtime::SigningKey> signing_;
  Result<Ed25519Key> authority_;
  std::vector<std::pair<std::string, ChildProcess>> children_;  // super-nodes first, then daemons
  std::set<std::string> reaped_;  // children that exited during the run
  bool stopped_ = false;
  std::optional<LocalEmulation> emulation_;
  std::vector<std::string> trusted_keys_;  // empty: the daemons trust signing_
  std::string app_isolation_ = "process";
};

}  // namespace aiac::spawner
