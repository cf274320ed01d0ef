// What the swarm benchmarks share (header only: each benchmark is one executable): their keys, a
// super-node started to hold many daemons from one address, and the wait until a swarm has
// registered all of its daemons.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/ed25519.h"
#include "net/identity.h"
#include "support/processes.h"
#include "support/test_support.h"

namespace aiac::bench {

// In `dir`: the authority (authority.key, mode 600, and authority.pub), a cluster key
// (cluster.key) and an identity certified by the authority for each super-node id (ID.key,
// ID.cert).
inline Status WriteSwarmKeys(const std::string& dir, const std::string& cluster_key,
                             const std::vector<std::string>& supernodes,
                             const Ed25519Key& authority) {
  aiac::testing::WriteFile(dir + "/authority.key", authority.PrivatePem());
  chmod((dir + "/authority.key").c_str(), 0600);
  aiac::testing::WriteFile(dir + "/authority.pub", authority.PublicHex());
  aiac::testing::WriteFile(dir + "/cluster.key", cluster_key + "\n");
  chmod((dir + "/cluster.key").c_str(), 0600);
  for (const std::string& id : supernodes) {
    AIAC_RETURN_IF_ERROR(net::WriteNewIdentity(authority, id, proto::Role::SUPERNODE,
                                               net::UnixNow() + 86400, dir + "/" + id + ".key",
                                               dir + "/" + id + ".cert"));
  }
  return Status::Ok();
}

// The same with a fresh authority.
inline Status WriteSwarmKeys(const std::string& dir, const std::string& cluster_key,
                             const std::vector<std::string>& supernodes) {
  AIAC_ASSIGN_OR_RETURN(Ed25519Key authority, Ed25519Key::Generate());
  return WriteSwarmKeys(dir, cluster_key, supernodes, authority);
}

// Super-node `id` (keys from WriteSwarmKeys) with room for `daemons`, its files named after
// `tag`: it writes its address to dir/TAGID.addr (SupernodeAddress) and logs to dir/TAGID.log;
// `extra`: more of its options.
inline spawner::ChildProcess StartBenchSupernode(const std::string& dir, const std::string& id,
                                                 const std::string& tag, int daemons,
                                                 const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {
      "--cluster-key-file", dir + "/cluster.key", "--authority-key",
      aiac::testing::ReadFile(dir + "/authority.pub"), "--id", id, "--listen", "127.0.0.1:0",
      "--ready-file", dir + "/" + tag + id + ".addr", "--data", dir + "/" + tag + id + ".db",
      "--identity-key-file", dir + "/" + id + ".key", "--certificate-file",
      dir + "/" + id + ".cert", "--max-connections", std::to_string(daemons + 256),
      // One address plays every daemon: the cap per address would be the only one that bites.
      "--max-handshakes-per-address", "4096", "--log-level", "warn"};
  args.insert(args.end(), extra.begin(), extra.end());
  return aiac::testing::Start("aiac-supernode", args, dir + "/" + tag + id + ".log");
}

// A loopback port free now (a super-node's --metrics binds it a moment later).
inline std::string FreeLoopbackAddress() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return "127.0.0.1:" + std::to_string(a.local_endpoint().port());
}

// Keeps every thread of this process off core 0 from now on (children inherit it), so that a
// super-node pinned there by PinToCoreZero has that core to itself, as it would have its host:
// false when the host has one core or the call fails.
inline bool LeaveCoreZero() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 2) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (long c = 1; c < cores; ++c) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// Moves the main thread of process `pid` (a super-node's only io thread) to core 0; its other
// threads (RocksDB's flushes and compactions, logging) stay where they were. False when it
// could not be moved.
inline bool PinToCoreZero(int pid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  return sched_setaffinity(pid, sizeof set, &set) == 0;
}

// The address StartBenchSupernode's super-node listens on, once it does; "" after a minute.
inline std::string SupernodeAddress(const std::string& dir, const std::string& id,
                                    const std::string& tag) {
  return aiac::testing::WaitForFile(dir + "/" + tag + id + ".addr", std::chrono::seconds(60));
}

// `swarm` playing `daemons` daemons (keys from WriteSwarmKeys) that list `supernodes`, started over
// `ramp_s` (default daemons/1000 s) and heartbeating once a second; it logs to `log_file`. `extra`:
// more options.
inline spawner::ChildProcess StartSwarm(const std::string& dir,
                                        const std::vector<std::string>& supernodes, int daemons,
                                        const std::string& log_file,
                                        const std::vector<std::string>& extra = {},
                                        std::optional<double> ramp_s = std::nullopt) {
  std::vector<std::string> args = {"--cluster-key-file", dir + "/cluster.key",
                                   "--authority-private-key", dir + "/authority.key"};
  for (const std::string& s : supernodes) args.insert(args.end(), {"--supernode", s});
  args.insert(args.end(),
              {"--daemons", std::to_string(daemons), "--ramp-s",
               std::to_string(ramp_s.value_or(daemons / 1000.0)), "--heartbeat-ms", "1000"});
  args.insert(args.end(), extra.begin(), extra.end());
  return aiac::testing::Start("swarm", args, log_file);
}

// The swarm log `log_file` once it says all `daemons` are registered; "" (and the log on
// stderr, after `program`) when they never are.
inline std::string WaitAllRegistered(const char* program, const std::string& log_file,
                                     int daemons) {
  const std::string all = "all " + std::to_string(daemons) + " daemons registered in ";
  std::string log;
  if (aiac::testing::WaitUntil(
          [&] {
            log = aiac::testing::ReadFile(log_file);
            return log.find(all) != std::string::npos;
          },
          std::chrono::seconds(60 + daemons / 50))) {
    return log;
  }
  std::fprintf(stderr, "%s: %d daemons never all registered:\n%s\n", program, daemons, log.c_str());
  return "";
}

// Several `swarm` processes playing `daemons` between them, as many as one process's descriptor
// limit requires (a connection each: past about 19,900 daemons on a host whose hard limit is
// 20,000, one swarm cannot hold them all). Their ids differ by prefix (swarm-a-, swarm-b-, ...);
// together they start over daemons/1000 s; each logs to `log_prefix`-N.log.
struct Swarms {
  std::vector<spawner::ChildProcess> procs;
  std::vector<std::string> logs;
  std::vector<int> counts;

  // SIGTERM to each (every played daemon deregisters), then waits for them.
  void Stop() {
    for (auto& p : procs) p.Signal(SIGTERM);
    for (auto& p : procs) p.WaitFor(std::chrono::seconds(120));
  }
};

inline Swarms StartSwarms(const std::string& dir, const std::vector<std::string>& supernodes,
                          int daemons, const std::string& log_prefix,
                          const std::vector<std::string>& extra = {}) {
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  const int per_swarm = static_cast<int>(
      std::min<rlim_t>(files.rlim_max == RLIM_INFINITY ? 1u << 20 : files.rlim_max, 1u << 20) -
      256);
  const int n = (daemons + per_swarm - 1) / per_swarm;
  Swarms out;
  for (int i = 0; i < n; ++i) {
    const int count = daemons / n + (i < daemons % n ? 1 : 0);
    out.logs.push_back(log_prefix + "-" + std::to_string(i) + ".log");
    out.counts.push_back(count);
    std::vector<std::string> args = extra;
    args.insert(args.end(), {"--id-prefix", "swarm-" + std::string(1, char('a' + i)) + "-"});
    out.procs.push_back(
        StartSwarm(dir, supernodes, count, out.logs.back(), args, daemons / 1000.0));
  }
  return out;
}

// Seconds until the last of `swarms` had all its daemons registered (each swarm counts from its
// own start); -1 (and that swarm's log on stderr) when one never had.
inline double WaitAllSwarmsRegistered(const char* program, const Swarms& swarms) {
  double slowest = 0;
  for (size_t i = 0; i < swarms.procs.size(); ++i) {
    const std::string log = WaitAllRegistered(program, swarms.logs[i], swarms.counts[i]);
    if (log.empty()) return -1;
    const std::string all = "all " + std::to_string(swarms.counts[i]) + " daemons registered in ";
    slowest = std::max(slowest, std::atof(log.c_str() + log.find(all) + all.size()));
  }
  return slowest;
}

// The daemon counts K given on the command line, `defaults` when none is; nothing (usage said on
// stderr) when one is not a number from `min` to 100,000.
inline std::optional<std::vector<int>> SwarmSizes(int argc, char** argv, const char* program,
                                                  int min, std::vector<int> defaults) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    const int k = std::atoi(argv[i]);
    if (k < min || k > 100000) {
      std::fprintf(stderr, "usage: %s [K ...] (%d <= K <= 100000)\n", program, min);
      return std::nullopt;
    }
    sizes.push_back(k);
  }
  return sizes.empty() ? defaults : sizes;
}

}  // namespace aiac::bench
