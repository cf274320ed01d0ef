// Options of `swarm`, the load generator that plays many daemons from one process
// (tools/swarm.cc, docs/scale.md): defaults here, a TOML file (--config), then the command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "net/connection.h"

namespace aiac::tools {

struct SwarmOptions {
  // Super-nodes the daemons register with, tried in order (each daemon as aiac-daemon does).
  std::vector<std::string> supernodes;
  // How many daemons to play. Required.
  int64_t daemons = 0;
  // The deployment authority's private key (PEM, mode 600): certifies every played daemon's
  // fresh key in memory, as `aiac-spawner certify` would one by one. Required.
  std::string authority_private_key;
  // Ids: this prefix and the daemon's number (000000, 000001, ...).
  std::string id_prefix = "swarm-";
  std::string cluster = "swarm";
  double power = 1;
  int64_t cores = 1;
  // The address every played daemon registers: nothing there takes tasks.
  std::string advertise = "127.0.0.1:9";
  std::chrono::milliseconds heartbeat{1000};
  // As the daemon's reconnect_spread_ms (0: dial the next super-node at once).
  std::chrono::milliseconds reconnect_spread{1000};
  // As the daemon's supernode_timeout_ms (0: only a closed connection counts).
  std::chrono::milliseconds supernode_timeout{10000};
  // The daemons start spread over this long (0: all at once, a registration storm).
  std::chrono::duration<double> ramp{0};
  // At most this many daemons between their first dial and their first registration: the ramp
  // waits for them (0: no cap). One process dialling faster than it can finish TLS handshakes
  // only gets its connections closed as silent by the super-node, and dials them again.
  int64_t max_registering = 128;
  // Play this long, then deregister and exit (0: until SIGINT or SIGTERM).
  std::chrono::duration<double> duration{0};
  // Register as busy: no spawner is granted them.
  bool busy = false;
  // Where the summary goes at exit (JSON). Default: none.
  std::string json;
  std::string log_level = "info";
  std::string log_format = "text";
  net::NetOptions net;
};

void DeclareSwarmOptions(OptionSet& set, SwarmOptions& o);
// What the declarations cannot check: the required options.
Status CheckSwarmOptions(const SwarmOptions& o);

}  // namespace aiac::tools
