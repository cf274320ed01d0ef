#include "daemon/daemon_options.h"

#include "core/logging.h"
#include "daemon/supernode_link.h"
#include "net/net_config.h"
#include "runtime/code_signing.h"

namespace aiac::daemon {

void DeclareDaemonOptions(OptionSet& set, DaemonOptions& o) {
  set.Section("daemon");
  set.List("supernodes", o.supernodes,
           "super-nodes to register with, `[\"host:port\", ...]`, tried in order")
      .Flag("--supernode")
      .Default("none (required)");
  set.Text("id", o.id, "name in the registry; must be the one its certificate names")
      .Default("the certificate's");
  set.Text("listen", o.listen,
           "where spawners and neighbour daemons connect; registered as the daemon's address "
           "(port 0: any free port)");
  set.Text("advertise", o.advertise,
           "the address registered for others to connect to, when not `listen`'s (listening on "
           "0.0.0.0, behind NAT): HOST:PORT, or HOST for the bound port")
      .Default("the bound address");
  set.Text("cluster", o.cluster, "cluster name (for the mapping)");
  set.Number("power", o.power, 0, 1e9,
             "relative power; 0 = the value kept in `DATA/power`, else measured (GFlop/s of a "
             "dense kernel, median of five 40 ms runs) and kept there for the next start; kept "
             "values count on the same host name and core count only; `--measure-power` "
             "measures again");
  set.Integer("cores", o.cores, 0, 1 << 20, "cores offered; 0 = all");
  set.Duration("remeasure_power_ms", o.remeasure_power,
               "with a measured power (`power = 0`): how often an idle daemon measures it again, "
               "registering the new figure when it moved by more than 10 %; 0 = never");
  set.Text("data_dir", o.data_dir,
           "stored plugins (`plugins/`) and the checkpoints this daemon keeps for others "
           "(`checkpoints/`, RocksDB)")
      .Flag("--data");
  set.Integer("plugin_cache_mb", o.plugin_cache_mb, 0, 1 << 20,
              "the most the plugins stored in `DATA/plugins` may take: past it, the least "
              "recently used ones are removed (never one this daemon has loaded); 0 = no bound");
  set.Choice("app_isolation", o.app_isolation, {"process", "thread"},
             "where a task's app runs: `process`, a child process of the daemon (`aiac-app-child`, "
             "next to `aiac-daemon`) that may crash, hang or hit the job's limits without taking "
             "the daemon down; `thread`, in the daemon itself, for apps trusted not to crash (a "
             "crash then ends the daemon)");
  set.Integer("app_threads", o.app_threads, 0, 1024,
              "the threads a task's libraries may start: OpenMP's thread limit "
              "(`OMP_THREAD_LIMIT`) where the app runs (CHOLMOD's factorisations use OpenMP). A "
              "daemon runs one task per share of its host, and threads beyond it spin against "
              "the other tasks' (on `--local 5` on 2 cores, a 2-D grid's set-up took 5.7 s with "
              "CHOLMOD's own threads, 4.5 s with 1); 0 = what the environment says");
  set.Duration("heartbeat_ms", o.heartbeat, "heartbeat period towards the super-node");
  set.Duration("reconnect_spread_ms", o.reconnect_spread, 0,
               "once its super-node is lost, the daemon waits a random time up to this long before "
               "dialing the next one (so that a lost super-node's daemons do not all arrive at "
               "once), twice as long after each further failure, up to 8 times; 0 = at once");
  set.Duration("supernode_timeout_ms", o.supernode_timeout, 0,
               "a super-node that answers nothing this long (it answers a heartbeat at least "
               "every (this - heartbeat_ms) / 3, asked by the daemon) is taken for lost and the "
               "daemon moves to the next one, as when its connection "
               "closes: a hung host or a network cut closes nothing; 0 = only a closed "
               "connection counts; more than heartbeat_ms");
  set.Duration("progress_ms", o.progress, "progress reports to the spawner while a task runs");
  set.Text("ready_file", o.ready_file, "write the bound HOST:PORT here once registered");
  set.Text("metrics", o.metrics,
           "serve Prometheus metrics at http://HOST:PORT/metrics (PORT alone: on 127.0.0.1; "
           "port 0: any free port, logged)")
      .Default("off");
  set.List("trusted_keys", o.trusted_keys,
           "Ed25519 public keys (64 hex characters) of plugin signers: only plugins signed by "
           "one of them run (`aiac-spawner keygen --signing PREFIX` makes a pair)")
      .Flag("--trusted-key")
      .Default("none (required unless `allow_unsigned_plugins`)");
  set.Boolean("allow_unsigned_plugins", o.allow_unsigned_plugins,
              "run any plugin, signed or not: every spawner can then run native code on this "
              "daemon (a warning at every start)");
  set.Text("enroll_token", o.enroll_token,
           "a one-time enrollment token (`aiac-spawner enroll-token`): with no certificate yet, "
           "the daemon gets one from the super-node the token names, under the id it names, "
           "and keeps it in `certificate_file`; ignored once certified")
      .Default("none");
  set.Choice("log_level", o.log_level, LogLevelNames(), "log level");
  set.Choice("log_format", o.log_format, LogFormatNames(),
             "log lines as text (ISO 8601 time first) or as one JSON object each (time, process, "
             "level, message), for machines");
  net::DeclareNetOptions(set, o.net);
  net::DeclareServerLimits(set, o.limits);
}

Status CheckDaemonOptions(const DaemonOptions& o) {
  if (o.trusted_keys.empty() && !o.allow_unsigned_plugins) {
    return InvalidArgument(
        "option 'trusted_keys' is empty: list the public keys whose signed plugins this daemon "
        "runs (`aiac-spawner keygen --signing PREFIX` writes PREFIX.pub), or set "
        "allow_unsigned_plugins = true to let any spawner run code here");
  }
  for (const auto& key : o.trusted_keys) {
    if (auto raw = runtime::ParsePublicKey(key); !raw.ok()) {
      return InvalidArgument("option 'trusted_keys': " + raw.status().message());
    }
  }
  if (Status s = CheckSilenceLimit(o.supernode_timeout, o.heartbeat); !s.ok()) return s;
  if (!o.advertise.empty()) {
    if (Status s = AdvertisedAddress(Endpoint{"127.0.0.1", 1}, o.advertise).status(); !s.ok()) {
      return s;
    }
  }
  return Status::Ok();
}

bool IsWildcard(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
}

Result<std::string> AdvertisedAddress(const Endpoint& bound, const std::string& advertise) {
  if (advertise.empty()) return bound.ToString();
  // "HOST" alone (no port; an IPv6 address is bracketed when a port follows).
  const bool has_port = advertise.rfind(':') != std::string::npos &&
                        (advertise.front() != '[' || advertise.find("]:") != std::string::npos);
  Result<Endpoint> ep =
      ParseEndpoint(has_port ? advertise : advertise + ":" + std::to_string(bound.port));
  if (!ep.ok() || IsWildcard(ep->host)) {
    return InvalidArgument(
        "option 'advertise' must be HOST:PORT or HOST, an address others reach, "
        "not '" +
        advertise + "'");
  }
  if (ep->port == 0) ep->port = bound.port;
  return ep->ToString();
}

}  // namespace aiac::daemon
