// aiac-daemon: runs on every computing node; registers with a super-node and runs the task a
// spawner assigns to it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "checkpoint/rocksdb_checkpoint_store.h"
#include "core/atomic_file.h"
#include "core/endpoint.h"
#include "core/huge_pages.h"
#include "core/logging.h"
#include "core/names.h"
#include "core/self_directory.h"
#include "core/usage_error.h"
#include "daemon/background_load.h"
#include "daemon/daemon_options.h"
#include "daemon/enrollment.h"
#include "daemon/power_watch.h"
#include "daemon/supernode_link.h"
#include "daemon/task_host.h"
#include "emulation/emulated_node.h"
#include "monitor/power_benchmark.h"
#include "monitor/power_cache.h"
#include "net/descriptors.h"
#include "net/enrollment_token.h"
#include "net/http_server.h"
#include "net/identity.h"
#include "net/net_config.h"
#include "net/shutdown.h"
#include "net/version.h"
#include "runtime/code_signing.h"
#include "runtime/task_runner.h"

namespace {

using namespace aiac;

int Fail(const Status& s) {
  std::fprintf(stderr, "aiac-daemon: %s\n", s.message().c_str());
  return 2;
}

// Longest a stop may take: the task's current iteration, the app's set-up under way.
constexpr std::chrono::seconds kStopLimit{30};

// The command-line flags that are not options (those are in daemon_options.cc).
struct Flags {
  std::string config, emulate, background;
  double slowdown = 1;
  uint64_t emulation_seed = 1, background_seed = 1;
  bool measure_power = false;
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--config", f.config, "TOML options file (see conf/daemon.toml)");
  app.add_flag("--measure-power", f.measure_power, "measure the power again, ignoring DATA/power");
  app.add_option(
      "--emulate", f.emulate,
      "play the node --id of this platform file: its cluster and power, its links' latency and "
      "bandwidth, its background load (emulated platforms; docs/emulation.md)");
  app.add_option("--emulate-slowdown", f.slowdown,
                 "with --emulate: iterations take cpu x this / power (>= 1)");
  app.add_option("--emulate-seed", f.emulation_seed,
                 "with --emulate: seed of the background load's draws");
  app.add_option("--background", f.background,
                 "MEAN,STD,SIZE: run competing jobs on this host, normal(MEAN, STD) of them "
                 "redrawn every SIZE "
                 "seconds (Lee & Cho's model), to slow this daemon on purpose");
  app.add_option("--background-seed", f.background_seed, "with --background: seed of the draws");
}

// The options: defaults, then the config file, then the flags.
Status LoadOptions(const Flags& f, OptionSet& declared, daemon::DaemonOptions& o) {
  AIAC_RETURN_IF_ERROR(declared.Load(f.config));
  AIAC_RETURN_IF_ERROR(daemon::CheckDaemonOptions(o));
  if (o.net.identity_key_file.empty()) o.net.identity_key_file = o.data_dir + "/identity.key";
  if (o.net.certificate_file.empty()) o.net.certificate_file = o.data_dir + "/identity.cert";
  if (o.net.revocation_file.empty()) o.net.revocation_file = o.data_dir + "/revocations.json";
  AIAC_RETURN_IF_ERROR(net::FinishNetOptions(o.net, proto::Role::DAEMON, !o.enroll_token.empty()));
  if (o.supernodes.empty()) return InvalidArgument("no super-node given (--supernode HOST:PORT)");
  if (!o.net.identity->enrolling()) return net::AdoptCertifiedId(o.net, o.id);
  AIAC_ASSIGN_OR_RETURN(const net::EnrollmentToken token,
                        net::DecodeEnrollmentToken(o.enroll_token));
  if (!o.id.empty() && o.id != token.node_id) {
    return InvalidArgument("id '" + o.id + "' is not the one the enrollment token names ('" +
                           token.node_id + "'): leave the id out, or use that one");
  }
  o.id = token.node_id;
  return Status::Ok();
}

// A daemon with an enrollment token and no certificate yet gets one (daemon/enrollment.h) and
// keeps it in certificate_file; from then on it is certified like any other.
Status EnrollNow(net::asio::io_context& io, const std::vector<Endpoint>& supernodes,
                 daemon::DaemonOptions& o, const Logger& log) {
  std::optional<Result<net::Certificate>> got;
  net::asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        got = co_await daemon::Enroll(supernodes, o.net, o.enroll_token, log);
      },
      net::asio::detached);
  io.run();
  io.restart();
  if (!got) return Aborted("enrollment did not finish");
  AIAC_ASSIGN_OR_RETURN(net::Certificate cert, std::move(*got));
  AIAC_RETURN_IF_ERROR(WriteFileAtomically(o.net.certificate_file, net::CertificateJson(cert)));
  log->info("daemon {} enrolled by super-node {}; its certificate is in {} (valid {} more days)",
            cert.id, cert.issuer ? cert.issuer->id : std::string("?"), o.net.certificate_file,
            (cert.expires - net::UnixNow()) / 86400);
  const net::NodeIdentity& enrolling = *o.net.identity;
  AIAC_ASSIGN_OR_RETURN(o.net.identity,
                        net::MakeNodeIdentity(enrolling.key, std::move(cert), enrolling.trust));
  return Status::Ok();
}

// A revocation list a super-node passed on: adopted, kept, and the revoked peers cut off.
void OnRevocations(const net::RevocationList& list, const daemon::DaemonOptions& o,
                   daemon::TaskHost& host, const Logger& log) {
  auto adopted = net::AdoptRevocations(*o.net.identity, list, o.net.revocation_file);
  if (!adopted.ok() && adopted.status().code() == StatusCode::kUnauthenticated) {
    log->warn("revocation list refused: {}", adopted.status().message());
    return;
  }
  if (!adopted.ok()) log->warn("revocation list not kept: {}", adopted.status().message());
  if (adopted.ok() && !*adopted) return;
  log->info("revocation list {} adopted: {} keys revoked", list.serial, list.keys.size());
  host.CloseRevoked();
}

// An emulated node (--emulate): its cluster and power are the platform's, its links and
// iterations are stretched to the platform's figures. Null without --emulate.
Result<std::shared_ptr<emulation::EmulatedNode>> LoadEmulatedNode(const Flags& f,
                                                                  daemon::DaemonOptions& o) {
  if (f.emulate.empty()) {
    if (f.slowdown != 1) return InvalidArgument("--emulate-slowdown needs --emulate");
    return std::shared_ptr<emulation::EmulatedNode>();
  }
  AIAC_ASSIGN_OR_RETURN(const emulation::PlatformFile platform,
                        emulation::LoadPlatformFile(f.emulate));
  auto made = emulation::EmulatedNode::Make(platform, o.id, f.slowdown, f.emulation_seed);
  if (!made.ok())
    return InvalidArgument("--emulate: " + made.status().message() + " (give it as --id)");
  auto node = std::make_shared<emulation::EmulatedNode>(std::move(*made));
  o.cluster = node->cluster();
  o.power = node->power();
  o.net.emulated_link = [node](const net::PeerIdentity& peer) -> std::optional<net::EmulatedLink> {
    auto link = node->LinkTo(peer.id);
    if (!link) return std::nullopt;
    return net::EmulatedLink{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::duration<double>(link->latency_seconds)),
                             link->bytes_per_second};
  };
  return node;
}

// A competing load on this host (--background), started before the power is measured: a slowed
// host measures slow, as it would be. Null without --background.
Result<std::unique_ptr<daemon::BackgroundLoad>> StartBackground(const Flags& f, const Logger& log) {
  if (f.background.empty()) return std::unique_ptr<daemon::BackgroundLoad>();
  AIAC_ASSIGN_OR_RETURN(const emulation::BackgroundSpec spec,
                        daemon::ParseBackgroundSpec(f.background));
  const auto cap = static_cast<int>(std::ceil(spec.mean_jobs + 4 * spec.std_jobs));
  auto load = std::make_unique<daemon::BackgroundLoad>(spec, f.background_seed, std::min(64, cap));
  log->info("background load: {:.2f} +- {:.2f} competing jobs, drawn every {:.2f} s",
            spec.mean_jobs, spec.std_jobs, spec.mean_size);
  return load;
}

daemon::TaskHostOptions HostOptions(const daemon::DaemonOptions& o,
                                    const std::shared_ptr<emulation::EmulatedNode>& node,
                                    daemon::BackgroundLoad* background) {
  daemon::TaskHostOptions host{o.id, o.net,    o.progress, o.data_dir + "/plugins",
                               {},   o.limits, {},         {}};
  host.plugin_cache_bytes = static_cast<uint64_t>(o.plugin_cache_mb) << 20;
  // An emulated node stretches each iteration after its CPU time, which only a runner in the
  // daemon can: its tasks' apps run there.
  host.isolate_apps = o.app_isolation == "process" && !node;
  host.app_child_executable = SelfDirectory() + "/aiac-app-child";
  host.app_threads = static_cast<int>(o.app_threads);
  host.task_dir = o.data_dir + "/tasks";
  if (node) {
    const auto started = std::chrono::steady_clock::now();
    auto guard = std::make_shared<std::mutex>();
    host.iteration_time = [node, guard, started](std::chrono::nanoseconds cpu) {
      std::lock_guard lock(*guard);
      const double now =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(
          node->IterationSeconds(std::chrono::duration<double>(cpu).count(), now)));
    };
    host.competing_jobs = [node, guard] {
      std::lock_guard lock(*guard);
      return node->competing_jobs();
    };
  }
  if (background)
    host.competing_jobs = [background] { return static_cast<double>(background->jobs()); };
  for (const auto& key : o.trusted_keys) host.trust.keys.push_back(*runtime::ParsePublicKey(key));
  // A signing key revoked like any other (revoked_keys, an authority's revocation list) runs
  // nothing here any more, even when trusted_keys still lists it.
  if (o.net.identity) {
    host.trust.revoked = [revoked = o.net.identity->trust.revoked](std::string_view key) {
      return revoked->Contains(key);
    };
  }
  host.trust.allow_unsigned = o.allow_unsigned_plugins;
  return host;
}

// Keeps a measured power in DATA/power for the next start (a failure only costs a measurement).
void KeepPower(const daemon::DaemonOptions& o, uint32_t cores, double power, const Logger& log) {
  Status kept =
      monitor::WriteCachedPower(o.data_dir + "/power", {power, monitor::ThisHostName(), cores});
  if (!kept.ok()) log->warn("power {:.2f} not cached: {}", power, kept.message());
}

// The power this daemon registers with: given, else the value kept in DATA/power for this host,
// else measured (and kept there for the next start).
double Power(const daemon::DaemonOptions& o, uint32_t cores, bool measure, const Logger& log) {
  if (o.power > 0) return o.power;
  auto cached =
      measure ? std::nullopt
              : monitor::ReadCachedPower(o.data_dir + "/power", monitor::ThisHostName(), cores);
  if (cached) return *cached;
  const double power = monitor::MeasurePowerMedian();
  KeepPower(o, cores, power, log);
  return power;
}

Result<std::vector<Endpoint>> Endpoints(const std::vector<std::string>& texts) {
  std::vector<Endpoint> out;
  for (const auto& text : texts) {
    AIAC_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(text));
    out.push_back(ep);
  }
  return out;
}

// The checkpoints this daemon keeps for other tasks, in DATA/checkpoints (RocksDB).
Result<std::unique_ptr<checkpoint::RocksDbCheckpointStore>> OpenCheckpoints(
    const std::string& data_dir, const Logger& log) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return IoError("cannot create data directory " + data_dir + ": " + ec.message());
  AIAC_ASSIGN_OR_RETURN(auto store,
                        checkpoint::RocksDbCheckpointStore::Open(data_dir + "/checkpoints"));
  for (const auto& w : store->recovery_warnings()) log->warn("checkpoint store recovery: {}", w);
  return store;
}

void LogStart(const daemon::DaemonOptions& o, const daemon::SelfDescription& self,
              const emulation::EmulatedNode* node, const std::string& platform, const Logger& log) {
  log->info(
      "daemon {} listening on {} (cluster {}, power {:.2f}, {} cores{})", o.id, self.address,
      self.cluster, self.power, self.cores,
      o.allow_unsigned_plugins
          ? ", any plugin"
          : ", plugins signed by " + std::to_string(o.trusted_keys.size()) + " trusted keys only");
  if (o.allow_unsigned_plugins) {
    log->warn(
        "daemon {} runs unsigned plugins (allow_unsigned_plugins = true): any spawner can run "
        "code on this machine",
        o.id);
  }
  if (node) {
    log->info("daemon {} emulates node {} of platform {} (slowdown {:g})", o.id, node->id(),
              platform, node->slowdown());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything is opened: the tasks' blocks and factors, here or in the apps' processes
  // (which inherit the environment), get huge pages.
  ReexecWithHugePageMalloc(argv);
  CLI::App app{"aiac daemon: runs tasks for spawners"};
  app.set_version_flag("--version", aiac::net::VersionLine("aiac-daemon"));
  Flags flags;
  AddFlags(app, flags);
  daemon::DaemonOptions o;
  OptionSet declared;
  daemon::DeclareDaemonOptions(declared, o);
  declared.AddFlags(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return aiac::UsageError(app, e, argc, argv);  // 0 for --help, --version; else 2
  }
  if (Status s = LoadOptions(flags, declared, o); !s.ok()) return Fail(s);
  // Apps that run in this process (app_isolation = "thread", an emulated node) load their
  // libraries later, and OpenMP reads its limit then; child processes get theirs from
  // AppChildSpec::threads.
  if (o.app_threads > 0) ::setenv("OMP_THREAD_LIMIT", std::to_string(o.app_threads).c_str(), 1);
  auto supernode_eps = Endpoints(o.supernodes);
  if (!supernode_eps.ok()) return Fail(supernode_eps.status());
  auto listen_ep = ParseEndpoint(o.listen);
  if (!listen_ep.ok()) return Fail(listen_ep.status());
  auto node = LoadEmulatedNode(flags, o);
  if (!node.ok()) return Fail(node.status());
  if (Status s = CheckName("cluster name", o.cluster); !s.ok()) return Fail(s);
  auto log_level = ParseLogLevel(o.log_level);
  if (!log_level.ok()) return Fail(log_level.status());
  auto log_format = ParseLogFormat(o.log_format);
  if (!log_format.ok()) return Fail(log_format.status());
  Logger log = MakeLogger("daemon", *log_level, *log_format);
  auto background = StartBackground(flags, log);
  if (!background.ok()) return Fail(background.status());

  auto checkpoints = OpenCheckpoints(o.data_dir, log);
  if (!checkpoints.ok()) return Fail(checkpoints.status());
  // A descriptor per connection (spawner, neighbour tasks, checkpoint partners) and per file.
  net::RaiseDescriptorLimit(o.limits.max_connections + net::kReservedDescriptors);
  net::asio::io_context io;
  if (o.net.identity->enrolling()) {
    if (Status s = EnrollNow(io, *supernode_eps, o, log); !s.ok()) return Fail(s);
  } else if (!o.enroll_token.empty()) {
    log->info("daemon {} is certified already: its enrollment token is not used", o.id);
  }
  daemon::TaskHost host(io, HostOptions(o, *node, background->get()), std::move(*checkpoints), log);
  auto bound = host.Listen(*listen_ep);
  if (!bound.ok()) return Fail(bound.status());
  host.set_id(o.id);

  daemon::SelfDescription self;
  self.id = o.id;
  auto advertised = daemon::AdvertisedAddress(*bound, o.advertise);
  if (!advertised.ok()) return Fail(advertised.status());
  self.address = *advertised;
  if (o.advertise.empty() && daemon::IsWildcard(bound->host)) {
    log->warn(
        "daemon {} listens on {} and would register that address, which no other host can "
        "connect to: set advertise = \"HOST\" (--advertise) to an address they reach",
        o.id, self.address);
  }
  self.cluster = o.cluster;
  self.cores = o.cores > 0 ? static_cast<uint32_t>(o.cores)
                           : std::max(1u, std::thread::hardware_concurrency());
  self.power = Power(o, self.cores, flags.measure_power, log);

  net::HttpServer http(io, log);
  if (!o.metrics.empty()) {
    if (auto at = net::ServeMetrics(http, o.metrics, log); !at.ok()) return Fail(at.status());
    // Listed at 0 from the start: a scrape before this daemon's first task iteration reads none
    // computed, not a metric that is missing.
    runtime::IterationsComputed();
  }

  Status fatal;
  std::optional<daemon::SupernodeLink> link;
  // A measured power is measured again while the daemon is idle (a given or emulated one is not).
  const bool measured = o.power <= 0;
  daemon::PowerWatch power_watch(
      io.get_executor(), self.power, measured ? o.remeasure_power : std::chrono::milliseconds(0),
      {[&] { return host.busy(); }, [] { return monitor::MeasurePowerMedian(); },
       [&](double power) {
         KeepPower(o, self.cores, power, log);
         link->UpdatePower(power);
       }},
      log);
  net::Shutdown shutdown(
      io, log,
      [&]() -> net::awaitable<void> {
        co_await power_watch.Stop();
        co_await http.Stop();
        co_await link->Stop();
        co_await host.Stop();
      },
      kStopLimit);
  link.emplace(
      io.get_executor(), *supernode_eps, self, o.net, o.heartbeat, log, [&] { return host.busy(); },
      [&](Status why) {
        // Wind down instead of stopping the loop at once: the Refuse this daemon is sending
        // still has to reach the super-node, so that both sides log why.
        fatal = why;
        shutdown.Begin(std::chrono::seconds(2));
      },
      [&](const net::RevocationList& list) { OnRevocations(list, o, host, log); });
  link->set_backoff(daemon::ReconnectBackoff::WithSpread(o.reconnect_spread));
  link->set_silence_limit(o.supernode_timeout);
  host.Serve();
  link->Start();
  power_watch.Start();
  LogStart(o, self, node->get(), flags.emulate, log);
  if (!o.ready_file.empty()) {
    if (Status s = WriteFileAtomically(o.ready_file, bound->ToString()); !s.ok()) return Fail(s);
  }
  io.run();
  if (!fatal.ok()) return Fail(fatal);
  return 0;
}
