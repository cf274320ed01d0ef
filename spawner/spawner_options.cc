#include "spawner/spawner_options.h"

#include "core/logging.h"
#include "net/net_config.h"

namespace aiac::spawner {

void DeclareSpawnerOptions(OptionSet& set, SpawnerOptions& o) {
  set.Section("spawner");
  auto one = std::make_shared<std::string>();
  set.Text("supernode", *one, "one super-node instead of `supernodes` (not both)")
      .NoFlag()
      .Default("none");
  set.List("supernodes", o.supernodes,
           "super-nodes to ask for daemons, `[\"host:port\", ...]`: tried in order, the next "
           "one when one is lost; ignored with `--local`")
      .Flag("--supernode");
  set.CheckFile([one, &o](const ConfigFile& file) {
    if (one->empty()) return Status::Ok();
    if (file.Has("supernodes")) {
      return InvalidArgument(file.name() + ": give either 'supernode' or 'supernodes', not both");
    }
    o.supernodes = {*one};
    return Status::Ok();
  });
  set.Duration("wait_daemons_ms", o.wait_daemons,
               "how long to wait for enough free daemons before failing; the super-node holds a "
               "request it cannot meet (up to 3 s at a time) and answers as soon as enough "
               "daemons are free, so no start-up waits on a polling period");
  set.Integer("spares", o.spares, 0, 100000,
              "extra daemons reserved for replacements (with `--local N`: at least N - tasks)");
  set.Duration("failure_timeout_ms", o.failure_timeout,
               "a task daemon silent this long, or that does not answer a connection this long, "
               "is declared dead and replaced");
  set.Duration("setup_timeout_ms", o.setup_timeout,
               "a task daemon not ready this long after its assignment (setting up or restoring "
               "its task) is declared dead and replaced");
  set.Duration("progress_ms", o.progress, "period of the progress line");
  set.Choice("local_log_level", o.local_log_level, LogLevelNames(),
             "log level of the processes `--local` starts");
  set.Text("plugin_dir", o.plugin_dir, "where `libaiac_app_<app>.so` are found")
      .Default("`plugins/` beside `bin/`");
  set.Path("sign_with", o.sign_with,
           "sign the job's plugin at submit with this Ed25519 private key (PEM, mode 600), for "
           "one's own development cluster; a published plugin ships its publisher's signature "
           "instead (PLUGIN.sig, `aiac-spawner sign`), and the spawner then needs no key");
  set.Choice("local_app_isolation", o.local_app_isolation, {"process", "thread"},
             "with `--local`: where its daemons run the tasks' apps (the daemons' "
             "`app_isolation`): `process`, a child process each, or `thread`, in the daemon");
  set.List("local_trusted_keys", o.local_trusted_keys,
           "with `--local`: the public keys (64 hex) its daemons trust, instead of a throwaway "
           "key that signs the plugin; the plugin must then carry a signature by one of them")
      .Flag("--local-trusted-key");
  set.Text("metrics", o.metrics,
           "serve Prometheus metrics at http://HOST:PORT/metrics during the run (PORT alone: on "
           "127.0.0.1; port 0: any free port, logged)")
      .Default("off");
  set.Choice("log_level", o.log_level, LogLevelNames(), "log level");
  set.Choice("log_format", o.log_format, LogFormatNames(),
             "log lines as text (ISO 8601 time first) or as one JSON object each (time, process, "
             "level, message), for machines");
  net::DeclareNetOptions(set, o.net);
}

}  // namespace aiac::spawner
