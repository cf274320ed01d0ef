// Options of aiac-daemon: defaults here, conf/daemon.toml, then the command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/options.h"
#include "core/status.h"
#include "net/connection.h"
#include "net/server.h"

namespace aiac::daemon {

struct DaemonOptions {
  // Identifier in the registry: the one its certificate (or its enrollment token) names.
  // Default: that one.
  std::string id;
  // Super-nodes to register with, tried in order; the next one when one goes away. Required.
  std::vector<std::string> supernodes;
  // Where spawners and neighbour daemons reach this daemon. Default: 127.0.0.1:0 (free port).
  std::string listen = "127.0.0.1:0";
  // The address registered for spawners and other daemons to connect to, when it is not the one
  // listened on (listening on 0.0.0.0, behind NAT): "HOST:PORT", or "HOST" for the bound port.
  // Default: the bound address.
  std::string advertise;
  // Cluster name used by the mapping. Default: "default".
  std::string cluster = "default";
  // Relative computing power; 0 = measure with a short benchmark at start-up. Default: 0.
  double power = 0;
  // Cores offered; 0 = all the machine has. Default: 0.
  int64_t cores = 0;
  // Directory for this daemon's data (checkpoints of others, stored plugins). Default:
  // ./daemon-data.
  std::string data_dir = "daemon-data";
  // How often an idle daemon measures its power again (0: never; daemon/power_watch.h).
  std::chrono::milliseconds remeasure_power{600000};
  // The most the plugins stored in DATA/plugins may take; past it the least recently used go.
  int64_t plugin_cache_mb = 256;
  // Where tasks' apps run: "process" (a child process each, aiac-app-child: an app that crashes
  // cannot take the daemon down) or "thread" (in the daemon, for apps trusted not to crash).
  std::string app_isolation = "process";
  // The threads a task's libraries may start (OpenMP's thread limit, OMP_THREAD_LIMIT, in the
  // process where the app runs); 0: whatever the environment says.
  int64_t app_threads = 1;
  // Heartbeat period towards the super-node.
  std::chrono::milliseconds heartbeat{1000};
  // The spread of the wait before dialing the next super-node once one is lost, doubled at each
  // setback in a row up to 8 times it (reconnect_backoff.h). 0: dial at once.
  std::chrono::milliseconds reconnect_spread{1000};
  // Silence of the super-node (no answer to heartbeats) after which the daemon leaves it for the
  // next one (supernode_link.h). 0: only a closed connection counts.
  std::chrono::milliseconds supernode_timeout{10000};
  // Period of progress reports to the spawner while a task runs.
  std::chrono::milliseconds progress{250};
  // File to write "HOST:PORT" to once listening. Default: none.
  std::string ready_file;
  // HOST:PORT (or PORT: 127.0.0.1) where `/metrics` is served. Default: none (off).
  std::string metrics;
  // Ed25519 public keys (64 hex characters each) whose signatures this daemon accepts on
  // plugins; unsigned or otherwise signed plugins are refused. Required (at least one) unless
  // allow_unsigned_plugins.
  std::vector<std::string> trusted_keys;
  // Runs plugins whatever signs them: any holder of the cluster key runs native code here.
  // Default: false; logged as a warning at every start when true.
  bool allow_unsigned_plugins = false;
  // A one-time enrollment token (net/enrollment_token.h), used when there is no certificate
  // yet. Default: none.
  std::string enroll_token;
  std::string log_level = "info";
  std::string log_format = "text";  // or "json": one JSON object per line
  net::NetOptions net;
  // Connection and handshake caps of the listening side (net/server.h).
  net::ServerLimits limits;
};

// Declares every option of aiac-daemon (the file's keys and the flags), bound to `options`.
void DeclareDaemonOptions(OptionSet& set, DaemonOptions& options);

// What the declarations cannot say: trusted keys that parse, and at least one of them unless
// unsigned plugins are allowed by name.
Status CheckDaemonOptions(const DaemonOptions& options);

// The address a daemon bound to `bound` registers: `advertise` ("HOST:PORT", or "HOST" for the
// bound port) when set, else the bound address.
Result<std::string> AdvertisedAddress(const Endpoint& bound, const std::string& advertise);

// Whether `host` is an address no other host can connect to (0.0.0.0, ::, empty).
bool IsWildcard(const std::string& host);

}  // namespace aiac::daemon
