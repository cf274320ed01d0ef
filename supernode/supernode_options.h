// Options of aiac-supernode: defaults here, conf/supernode.toml, then the command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"
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
  // A daemon silent for longer than this is dropped from the registry.
  std::chrono::milliseconds failure_timeout{5000};
  // A granted daemon that runs no task for this long is free again (its spawner is gone).
  std::chrono::milliseconds grant_lease{30000};
  // How often the registry is checked for silent daemons and digests sent.
  std::chrono::milliseconds digest_interval{500};
  // Longest wait for a peer super-node's answer to a forwarded request.
  std::chrono::milliseconds forward_timeout{3000};
  // File to write "HOST:PORT" to once listening (used by `spawner run --local`). Default: none.
  std::string ready_file;
  // HOST:PORT (or PORT: 127.0.0.1) where `/metrics` and the web page `/` are served.
  // Default: none (off).
  std::string metrics;
  std::string log_level = "info";
  std::string log_format = "text";  // or "json": one JSON object per line
  net::NetOptions net;
  // Connection and handshake caps of the listening side (net/server.h).
  net::ServerLimits limits;
};

// Declares every option of aiac-supernode (the file's keys and the flags), bound to `options`.
void DeclareSupernodeOptions(OptionSet& set, SupernodeOptions& options);

}  // namespace aiac::supernode
