// Options of `aiac-spawner run`: defaults here, conf/spawner.toml, then the command line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/options.h"
#include "core/status.h"
#include "net/connection.h"

namespace aiac::spawner {

struct SpawnerOptions {
  // Super-nodes to ask for daemons, tried in order; when the one in use is lost the spawner
  // fails over to the next (ignored with --local). Config: `supernodes = [...]`, or one
  // `supernode = "..."`. Default: 127.0.0.1:7400.
  std::vector<std::string> supernodes = {"127.0.0.1:7400"};
  // How long to wait for enough free daemons.
  std::chrono::milliseconds wait_daemons{30000};
  // Extra daemons reserved for replacements. Default: 0.
  int64_t spares = 0;
  // A task daemon that sends nothing for this long is declared dead and replaced (daemons
  // report progress every 250 ms).
  std::chrono::milliseconds failure_timeout{5000};
  // A task daemon that is not ready this long after its assignment was sent (setting up the
  // task, or restoring it, never ends: the host was suspended, say) is declared dead and
  // replaced. Setting up a large block takes seconds.
  std::chrono::milliseconds setup_timeout{30000};
  // Period of the progress line.
  std::chrono::milliseconds progress{1000};
  // Where app plugins are found (libaiac_app_<app>.so). Default: plugins/ beside bin/.
  std::string plugin_dir;
  // Log level of the processes started by --local. Default: "warn".
  std::string local_log_level = "warn";
  // Ed25519 private key (PEM, mode 600) that signs the job's plugin at submit (one's own
  // development cluster); relative to the config file's folder. Default: none, the plugin's own
  // PLUGIN.sig is shipped (runtime/plugin_signature.h).
  std::string sign_with;
  // With --local: where its daemons run tasks' apps (daemon option app_isolation).
  std::string local_app_isolation = "process";
  // With --local: the public keys (hex) the local daemons trust instead of a throwaway key.
  std::vector<std::string> local_trusted_keys;
  // HOST:PORT (or PORT: 127.0.0.1) where `/metrics` is served during the run. Default: none.
  std::string metrics;
  std::string log_level = "info";
  std::string log_format = "text";  // or "json": one JSON object per line
  net::NetOptions net;
};

// Declares every option of `aiac-spawner run` (the file's keys and the flags), bound to
// `options`.
void DeclareSpawnerOptions(OptionSet& set, SpawnerOptions& options);

}  // namespace aiac::spawner
