#include "tools/swarm_options.h"

#include "core/logging.h"
#include "daemon/supernode_link.h"
#include "net/net_config.h"

namespace aiac::tools {

void DeclareSwarmOptions(OptionSet& set, SwarmOptions& o) {
  set.Section("swarm");
  set.List("supernodes", o.supernodes,
           "super-nodes the played daemons register with, `[\"host:port\", ...]`, tried in "
           "order as a daemon does")
      .Flag("--supernode")
      .Default("none (required)");
  set.Integer("daemons", o.daemons, 1, 1000000, "how many daemons to play")
      .Default("none (required)");
  set.Path("authority_private_key", o.authority_private_key,
           "the deployment authority's private key (PEM, mode 600; `aiac-spawner keygen "
           "--authority PREFIX` made it): certifies each played daemon's fresh key in memory")
      .Default("none (required)");
  set.Text("id_prefix", o.id_prefix,
           "the played daemons' ids: this prefix and a six-digit number from 000000");
  set.Text("cluster", o.cluster, "the cluster every played daemon registers in");
  set.Number("power", o.power, 1e-9, 1e9, "the power every played daemon registers");
  set.Integer("cores", o.cores, 1, 1 << 20, "the cores every played daemon registers");
  set.Text("advertise", o.advertise,
           "the address every played daemon registers (nothing there takes tasks: a spawner "
           "granted one cannot reach it)");
  set.Duration("heartbeat_ms", o.heartbeat, "each played daemon's heartbeat period");
  set.Duration("reconnect_spread_ms", o.reconnect_spread, 0,
               "as the daemon's: the spread of each played daemon's wait before it dials the "
               "next super-node once one is lost; 0 = at once (the thundering herd)");
  set.Duration("supernode_timeout_ms", o.supernode_timeout, 0,
               "as the daemon's: a super-node that answers nothing this long is left for the "
               "next one; 0 = only a closed connection counts; more than heartbeat_ms");
  set.Duration("ramp_s", o.ramp, 0, 3600,
               "the daemons start spread evenly over this long; 0 = all at once (a "
               "registration storm)");
  set.Integer("max_registering", o.max_registering, 0, 1000000,
              "at most this many played daemons between their first dial and their first "
              "registration: the ramp waits for them; 0 = no cap (one process dialling faster "
              "than it can finish handshakes gets its connections closed as silent)");
  set.Duration("duration_s", o.duration, 0, 1e9,
               "play this long, then deregister every daemon and exit; 0 = until SIGINT or "
               "SIGTERM");
  set.Boolean("busy", o.busy, "register as busy, so that no spawner is granted them");
  set.Path("json", o.json, "write the summary here at exit (JSON)").Default("none");
  set.Choice("log_level", o.log_level, LogLevelNames(),
             "log level (`debug` also logs each played daemon's own lines)");
  set.Choice("log_format", o.log_format, LogFormatNames(),
             "log lines as text (ISO 8601 time first) or as one JSON object each (time, process, "
             "level, message), for machines");
  net::DeclareNetOptions(set, o.net);
}

Status CheckSwarmOptions(const SwarmOptions& o) {
  if (o.supernodes.empty()) {
    return InvalidArgument("option 'supernodes' is empty: give --supernode HOST:PORT");
  }
  if (o.daemons <= 0) return InvalidArgument("option 'daemons' is not set: give --daemons K");
  if (o.authority_private_key.empty()) {
    return InvalidArgument(
        "option 'authority_private_key' is not set: the played daemons' certificates are "
        "signed with the authority's private key (--authority-private-key FILE)");
  }
  if (Status s = daemon::CheckSilenceLimit(o.supernode_timeout, o.heartbeat); !s.ok()) return s;
  return Status::Ok();
}

}  // namespace aiac::tools
