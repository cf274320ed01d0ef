// aiac-daemon: runs on every computing node; registers with a super-node and runs the task a
// spawner assigns to it.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "checkpoint/rocksdb_checkpoint_store.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "core/names.h"
#include "core/ready_file.h"
#include "daemon/background_load.h"
#include "daemon/daemon_options.h"
#include "daemon/supernode_link.h"
#include "daemon/task_host.h"
#include "emulation/emulated_node.h"
#include "monitor/power_benchmark.h"
#include "monitor/power_cache.h"
#include "net/net_config.h"
#include "runtime/code_signing.h"

namespace {

int Fail(const aiac::Status& s) {
  std::fprintf(stderr, "aiac-daemon: %s\n", s.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aiac;
  CLI::App app{"aiac daemon: runs tasks for spawners"};
  std::string config, listen, cluster, data, id, ready, level, emulate;
  std::vector<std::string> supernodes;
  double power = -1, slowdown = 1;
  uint64_t emulation_seed = 1;
  bool measure_power = false;
  app.add_option("--config", config, "TOML options file (see conf/daemon.toml)");
  app.add_option("--supernode", supernodes, "super-node HOST:PORT (repeatable, tried in order)");
  app.add_option("--listen", listen, "HOST:PORT for spawners and neighbours (port 0: any)");
  app.add_option("--cluster", cluster, "cluster name");
  app.add_option("--power", power,
                 "relative power (0: measure, or the value cached in DATA/power)");
  app.add_flag("--measure-power", measure_power, "measure the power again, ignoring DATA/power");
  app.add_option("--data", data, "data directory");
  app.add_option("--id", id, "daemon id");
  app.add_option("--ready-file", ready, "write the bound HOST:PORT here once registered");
  app.add_option("--log-level", level, "trace|debug|info|warn|error|off");
  app.add_option(
      "--emulate", emulate,
      "play the node --id of this platform file: its cluster and power, its links' latency and "
      "bandwidth, its background load (emulated platforms; docs/emulation.md)");
  app.add_option("--emulate-slowdown", slowdown,
                 "with --emulate: iterations take cpu x this / power (>= 1)");
  app.add_option("--emulate-seed", emulation_seed,
                 "with --emulate: seed of the background load's draws");
  std::string background;
  uint64_t background_seed = 1;
  app.add_option("--background", background,
                 "MEAN,STD,SIZE: run competing jobs on this host, normal(MEAN, STD) of them "
                 "redrawn every SIZE "
                 "seconds (Lee & Cho's model), to slow this daemon on purpose");
  app.add_option("--background-seed", background_seed, "with --background: seed of the draws");
  CLI11_PARSE(app, argc, argv);

  daemon::DaemonOptions o;
  if (Status s = daemon::LoadDaemonOptions(config, o); !s.ok()) return Fail(s);
  if (!supernodes.empty()) o.supernodes = supernodes;
  if (!listen.empty()) o.listen = listen;
  if (!cluster.empty()) o.cluster = cluster;
  if (!std::isfinite(power)) return Fail(InvalidArgument("--power must be a finite number"));
  if (power >= 0) o.power = power;
  if (!data.empty()) o.data_dir = data;
  if (!id.empty()) o.id = id;
  if (!ready.empty()) o.ready_file = ready;
  if (!level.empty()) o.log_level = level;
  if (Status s = net::FinishNetOptions(o.net); !s.ok()) return Fail(s);
  if (o.supernodes.empty())
    return Fail(InvalidArgument("no super-node given (--supernode HOST:PORT)"));
  std::vector<Endpoint> supernode_eps;
  for (const auto& s : o.supernodes) {
    auto ep = ParseEndpoint(s);
    if (!ep.ok()) return Fail(ep.status());
    supernode_eps.push_back(*ep);
  }
  auto listen_ep = ParseEndpoint(o.listen);
  if (!listen_ep.ok()) return Fail(listen_ep.status());
  // An emulated node: its cluster and power are the platform's, its links and iterations are
  // stretched to the platform's figures.
  std::shared_ptr<emulation::EmulatedNode> node;
  if (!emulate.empty()) {
    auto platform = emulation::LoadPlatformFile(emulate);
    if (!platform.ok()) return Fail(platform.status());
    auto made = emulation::EmulatedNode::Make(*platform, o.id, slowdown, emulation_seed);
    if (!made.ok())
      return Fail(InvalidArgument("--emulate: " + made.status().message() + " (give it as --id)"));
    node = std::make_shared<emulation::EmulatedNode>(std::move(*made));
    o.cluster = node->cluster();
    o.power = node->power();
    o.net.emulated_link =
        [node](const net::PeerIdentity& peer) -> std::optional<net::EmulatedLink> {
      auto link = node->LinkTo(peer.id);
      if (!link) return std::nullopt;
      return net::EmulatedLink{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::duration<double>(link->latency_seconds)),
                               link->bytes_per_second};
    };
  } else if (slowdown != 1) {
    return Fail(InvalidArgument("--emulate-slowdown needs --emulate"));
  }
  if (Status s = CheckName("cluster name", o.cluster); !s.ok()) return Fail(s);
  std::optional<emulation::BackgroundSpec> background_spec;
  if (!background.empty()) {
    auto spec = daemon::ParseBackgroundSpec(background);
    if (!spec.ok()) return Fail(spec.status());
    background_spec = *spec;
  }
  auto log_level = ParseLogLevel(o.log_level);
  if (!log_level.ok()) return Fail(log_level.status());
  Logger log = MakeLogger("daemon", *log_level);
  // Started before the power is measured: a slowed host measures slow, as it would be.
  std::unique_ptr<daemon::BackgroundLoad> background_load;
  if (background_spec) {
    const auto cap =
        static_cast<int>(std::ceil(background_spec->mean_jobs + 4 * background_spec->std_jobs));
    background_load = std::make_unique<daemon::BackgroundLoad>(*background_spec, background_seed,
                                                               std::min(64, cap));
    log->info("background load: {:.2f} +- {:.2f} competing jobs, drawn every {:.2f} s",
              background_spec->mean_jobs, background_spec->std_jobs, background_spec->mean_size);
  }

  std::error_code fs_ec;
  std::filesystem::create_directories(o.data_dir, fs_ec);
  if (fs_ec)
    return Fail(IoError("cannot create data directory " + o.data_dir + ": " + fs_ec.message()));

  daemon::TaskHostOptions host_options{
      o.id, o.net, std::chrono::milliseconds(o.progress_ms), o.data_dir + "/plugins", {}, o.limits,
      {},   {}};
  if (node) {
    const auto started = std::chrono::steady_clock::now();
    auto guard = std::make_shared<std::mutex>();
    host_options.iteration_time = [node, guard, started](std::chrono::nanoseconds cpu) {
      std::lock_guard lock(*guard);
      const double now =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(
          node->IterationSeconds(std::chrono::duration<double>(cpu).count(), now)));
    };
    host_options.competing_jobs = [node, guard] {
      std::lock_guard lock(*guard);
      return node->competing_jobs();
    };
  }
  if (background_load) {
    host_options.competing_jobs = [load = background_load.get()] {
      return static_cast<double>(load->jobs());
    };
  }
  for (const auto& key : o.trusted_keys)
    host_options.trusted_keys.push_back(*runtime::ParsePublicKey(key));
  auto checkpoints = checkpoint::RocksDbCheckpointStore::Open(o.data_dir + "/checkpoints");
  if (!checkpoints.ok()) return Fail(checkpoints.status());
  for (const auto& w : (*checkpoints)->recovery_warnings())
    log->warn("checkpoint store recovery: {}", w);
  net::asio::io_context io;
  daemon::TaskHost host(io, host_options, std::move(*checkpoints), log);
  auto bound = host.Listen(*listen_ep);
  if (!bound.ok()) return Fail(bound.status());
  if (o.id.empty()) o.id = "d-" + monitor::ThisHostName() + "-" + std::to_string(bound->port);
  if (Status s = CheckName("daemon id", o.id); !s.ok()) return Fail(s);
  host.set_id(o.id);

  daemon::SelfDescription self;
  self.id = o.id;
  self.address = bound->ToString();
  self.cluster = o.cluster;
  self.cores = o.cores > 0 ? static_cast<uint32_t>(o.cores)
                           : std::max(1u, std::thread::hardware_concurrency());
  self.power = o.power;
  if (self.power <= 0) {
    // Measured once per host and kept: a restart registers at once, with the same power.
    const std::string cache = o.data_dir + "/power";
    auto cached = measure_power
                      ? std::nullopt
                      : monitor::ReadCachedPower(cache, monitor::ThisHostName(), self.cores);
    if (cached) {
      self.power = *cached;
    } else {
      self.power = monitor::MeasurePowerMedian();
      Status kept =
          monitor::WriteCachedPower(cache, {self.power, monitor::ThisHostName(), self.cores});
      if (!kept.ok()) log->warn("power {:.2f} not cached: {}", self.power, kept.message());
    }
  }

  Status fatal;
  net::asio::signal_set signals(io, SIGINT, SIGTERM);
  net::asio::steady_timer wind_down(io);
  daemon::SupernodeLink link(
      supernode_eps, self, o.net, std::chrono::milliseconds(o.heartbeat_ms), log,
      [&] { return host.busy(); },
      [&](Status why) {
        // Wind down instead of stopping the loop at once: the Refuse this daemon is sending
        // still has to reach the super-node, so that both sides log why.
        fatal = why;
        host.Stop();
        signals.cancel();
        wind_down.expires_after(std::chrono::seconds(2));
        wind_down.async_wait([&](net::error_code ec) {
          if (!ec) io.stop();
        });
      });
  host.Serve();
  net::SpawnLogged(io.get_executor(), link.Run(), log, "super-node link");
  log->info(
      "daemon {} listening on {} (cluster {}, power {:.2f}, {} cores{})", o.id, bound->ToString(),
      self.cluster, self.power, self.cores,
      o.trusted_keys.empty()
          ? ""
          : ", plugins signed by " + std::to_string(o.trusted_keys.size()) + " trusted keys only");
  if (node) {
    log->info("daemon {} emulates node {} of platform {} (slowdown {:g})", o.id, node->id(),
              emulate, node->slowdown());
  }
  if (!o.ready_file.empty()) {
    if (Status s = WriteFileAtomically(o.ready_file, bound->ToString()); !s.ok()) return Fail(s);
  }

  signals.async_wait([&](net::error_code ec, int sig) {
    if (ec) return;
    log->info("signal {}: stopping", sig);
    link.Stop();
    host.Stop();
    io.stop();
  });
  io.run();
  if (!fatal.ok()) return Fail(fatal);
  return 0;
}
