// Options of aiac-supernode: defaults here, conf/supernode.toml, then the command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/connection.h"
#include "net/server.h"

namespace aiac::supernode {

struct SupernodeOptions {
  // Identifier shown to peers and daemons. Default: "sn-" + the listening port.
  std::string id;
  // Where to listen. Default: 127.0.0.1:7400 (port 0 picks a free one).
  std::string listen = "127.0.0.1:7400";
  // Other super-nodes to exchange registry digests with. Default: none.
  std::vector<std::string> peers;
  // RocksDB directory of the registry. Default: ./supernode-data.
  std::string data_dir = "supernode-data";
  // A daemon silent for longer than this is dropped from the registry. Default: 5000 ms.
  int64_t failure_timeout_ms = 5000;
  // A granted daemon that runs no task for this long is free again (its spawner is gone).
  // Default: 30000 ms.
  int64_t grant_lease_ms = 30000;
  // How often the registry is checked for silent daemons and digests sent. Default: 500 ms.
  int64_t digest_interval_ms = 500;
  // Longest wait for a peer super-node's answer to a forwarded request. Default: 3000 ms.
  int64_t forward_timeout_ms = 3000;
  // File to write "HOST:PORT" to once listening (used by `spawner run --local`). Default: none.
  std::string ready_file;
  std::string log_level = "info";
  net::NetOptions net;
  // Connection and handshake caps of the listening side (net/server.h).
  net::ServerLimits limits;
};

// Reads `path` (may be empty) into `options`; unknown keys and wrong types are errors.
Status LoadSupernodeOptions(const std::string& path, SupernodeOptions& options);

}  // namespace aiac::supernode
