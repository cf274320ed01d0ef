#include "supernode/supernode_options.h"

#include "core/logging.h"
#include "net/net_config.h"

namespace aiac::supernode {

void DeclareSupernodeOptions(OptionSet& set, SupernodeOptions& o) {
  set.Section("supernode");
  set.Text("id", o.id, "name shown to peers and daemons; must be the one its certificate names")
      .Default("the certificate's");
  set.Text("listen", o.listen, "HOST:PORT to listen on; port 0 = any free port");
  set.List("peers", o.peers,
           "other super-nodes; each sends the others what changed in its registry every "
           "`digest_interval_ms`")
      .Flag("--peer");
  set.Text("data_dir", o.data_dir,
           "RocksDB directory of the registry; a restarted super-node keeps its daemons (each "
           "gets one `failure_timeout_ms` to heartbeat again)")
      .Flag("--data");
  set.Duration("failure_timeout_ms", o.failure_timeout, "a daemon silent this long is dropped");
  set.Duration("grant_lease_ms", o.grant_lease,
               "a granted daemon that runs no task for this long is free again (its spawner died)");
  set.Duration("digest_interval_ms", o.digest_interval, "expiry check and digest period");
  set.Duration("forward_timeout_ms", o.forward_timeout,
               "wait for a peer's answer to a forwarded request");
  set.Text("ready_file", o.ready_file, "write the bound HOST:PORT here once listening");
  set.Text("metrics", o.metrics,
           "serve Prometheus metrics at http://HOST:PORT/metrics and the live web page at `/` "
           "(PORT alone: on 127.0.0.1; port 0: any free port, logged)")
      .Default("off");
  set.Choice("log_level", o.log_level, LogLevelNames(), "log level");
  set.Choice("log_format", o.log_format, LogFormatNames(),
             "log lines as text (ISO 8601 time first) or as one JSON object each (time, process, "
             "level, message), for machines");
  net::DeclareNetOptions(set, o.net);
  net::DeclareServerLimits(set, o.limits);
}

}  // namespace aiac::supernode
