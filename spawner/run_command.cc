#include "spawner/run_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "core/hex.h"
#include "core/logging.h"
#include "core/read_file.h"
#include "core/status_line_sink.h"
#include "emulate/platform_state.h"
#include "emulation/platform_file.h"
#include "mapping/mapper.h"
#include "net/http_server.h"
#include "net/net_config.h"
#include "net/random.h"
#include "net/server.h"
#include "runtime/code_signing.h"
#include "runtime/plugin_signature.h"
#include "spawner/app_loader.h"
#include "spawner/fault_injector.h"
#include "spawner/job_runner.h"
#include "spawner/local_cluster.h"
#include "spawner/log_view.h"

namespace aiac::spawner {

namespace asio = net::asio;

namespace {

int BadInput(const Status& s) {
  std::fprintf(stderr, "aiac-spawner: %s\n", s.message().c_str());
  return 2;
}

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunArgs& args) {
  CLI::App* run = app.add_subcommand("run", "run a job on daemons and print its summary");
  run->add_option("job", args.job_file, "job file (TOML)")->required();
  run->add_option("--config", args.config, "spawner options file (see conf/spawner.toml)");
  args.declared = std::make_shared<OptionSet>();
  DeclareSpawnerOptions(*args.declared, args.options);
  args.declared->AddFlags(*run);
  CLI::Option* sn = run->get_option("--supernode")->allow_extra_args(false);
  auto* local =
      run->add_option(
             "--local", args.local,
             "start a super-node and N daemons on loopback for this run (with --platform, N may "
             "be left out: one daemon per node)")
          ->expected(0, 1)
          ->default_str("-1")
          ->check(CLI::Range(-1, 4096))
          ->excludes(sn);
  auto* platform = run->add_option(
      "--platform", args.platform,
      "with --local: emulate this platform file (conf/platforms/*.toml), one daemon per "
      "node playing it");
  run->add_option("--slowdown", args.slowdown,
                  "with --platform: iterations take cpu x this / the node's power (default: nodes "
                  "/ cores x the largest power, at least 1)")
      ->needs(platform);
  run->add_option("--platform-seed", args.platform_seed,
                  "with --platform: seed of the emulated nodes' background draws (default: "
                  "--kill-seed, else 1)")
      ->needs(platform);
  run->add_option("--emulation", args.emulation,
                  "with --platform: in-process (each daemon stretches its own iterations and "
                  "frames, default) or os (each daemon runs inside its node of the platform "
                  "`aiac-emulate up` made: namespaces, CPU cgroups, link switch)")
      ->check(CLI::IsMember({"in-process", "os"}))
      ->needs(platform);
  run->add_flag("--shuffle-nodes", args.shuffle_nodes,
                "with --platform: start the daemons (so they register, and the super-node hands "
                "them out) in an "
                "order drawn from the platform seed rather than the file's, cluster by cluster")
      ->needs(platform);
  run->add_option("--local-supernodes", args.local_supernodes,
                  "with --local: start K peer super-nodes (default 1); daemons list them all")
      ->check(CLI::Range(1, 16))
      ->needs(local);
  run->add_option("--json", args.json,
                  "write the run summary as JSON to this file (`-`: to standard output, the "
                  "summary line then going to standard error)");
  run->add_flag("--quiet", args.quiet,
                "no progress line (on a terminal one line rewritten in place, elsewhere a log "
                "line a second)");
  run->add_option("--history", args.history,
                  "write the convergence history to this CSV file: every task report, lost "
                  "daemon, resumption, item move and gathered residual (`aiac-spawner plot` "
                  "draws it)");
  run->add_flag("--log-view", args.log_view,
                "after the summary, a table per task of where its time went (computing, waiting "
                "for values, checkpoints, moves) and the messages and bytes it exchanged");
  run->add_option("--trace", args.trace,
                  "write the run as a Chrome trace (JSON) to this file: each task's iterations, "
                  "checkpoints, losses and moves, to open in ui.perfetto.dev");
  run->add_option("--mapping", args.mapping, "maheve (default), default, aiac-qm or f-ec");
  run->add_flag("--sync", args.sync,
                "synchronous iterations (each waits for its neighbours), for comparison");
  run->add_option("--balance", args.balance,
                  "live balancing of apps with movable items: dp (Lee & Cho's D_P, default), dm "
                  "(D_M: means only) or off");
  run->add_option(
      "--migration", args.migration,
      "how moved items travel: distpm (daemon to daemon, between clusters through gateways, the "
      "channels' amounts by DistPM's LP; default), greedy (the same, channels filled greedily), "
      "ring "
      "(between neighbours on the ring of tasks, planned by the ring paper), nearest (the same, "
      "each item "
      "the fewest hops, whatever the links cost) or spawner (through the spawner)");
  run->add_option("--split", args.split,
                  "the tasks' shares of the work before the run, for apps that can weigh them: "
                  "power (by the daemons' "
                  "powers, default), equal, or with --platform Lee & Cho's static sm (S_M: the "
                  "nodes' mean loads) or sp "
                  "(S_P: means and deviations)");
  auto* every =
      run->add_option(
             "--kill-every", args.kill_every,
             "fault injection: kill a random task daemon every S seconds once the tasks run")
          ->check(CLI::Range(0.01, 86400.0));
  run->add_option("--kill-count", args.kill_count,
                  "fault injection: how many daemons to kill (default 1)")
      ->check(CLI::Range(1u, 100000u))
      ->needs(every);
  run->add_option("--kill-seed", args.kill_seed,
                  "fault injection: seed of the victims' choice (default: the clock)")
      ->needs(every);
  run->add_option("--state", args.state,
                  "keep the job's state in this directory, so that `aiac-spawner resume DIR` can "
                  "take the job over should this spawner be lost (default: .aiac/jobs/JOB-ID in "
                  "the job file's folder; none with --local)");
  run->add_flag("--detach", args.detach,
                "print the job's id and state directory, and supervise it in the background "
                "(log in STATE.log), so that one can log out");
  return run;
}

CLI::App* AddResumeCommand(CLI::App& app, ResumeArgs& args) {
  CLI::App* resume = app.add_subcommand(
      "resume", "take over a job whose spawner was lost, from its state directory");
  resume->add_option("dir", args.dir, "the job's state directory (`run --state`)")->required();
  resume->add_option("--json", args.json,
                     "write the run summary as JSON to this file (`-`: to standard output); of a "
                     "job that ended already, the summary it stored");
  resume->add_flag("--quiet", args.quiet, "no progress line");
  resume->add_flag("--detach", args.detach, "supervise the job in the background (log in DIR.log)");
  return resume;
}

namespace {

using SteadyClock = std::chrono::steady_clock;

// Everything a run needs, checked before any process is started.
struct RunPlan {
  RunArgs args;
  SteadyClock::time_point start, prepared;
  std::optional<LocalEmulation> emulation;  // --platform: one local daemon per node, playing it
  RunSettings settings;
  SpawnerOptions options;
  spdlog::level::level_enum level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;
  JobSpec job;
  LoadedApp app;
  std::vector<Endpoint> supernodes;
  std::string job_id;
  std::string state_dir;              // empty: no state kept
  bool state_given = false;           // --state: a state that cannot be made is an error
  std::string resume_dir;             // `resume`: the lost spawner's state, opened by Execute
  std::vector<std::string> warnings;  // logged once the run's log is up
  int ready_fd = -1;                  // --detach: told "ok" or the error once the run is under way
};

// --emulation os: the nodes of the platform `aiac-emulate up` made from this file, where the
// super-node and the daemons will run.
Status FindOsPlatform(const emulation::PlatformFile& platform, LocalEmulation& emulation) {
  auto up = emulate::LoadState(platform.name);
  if (!up.ok()) {
    return InvalidArgument("--emulation os: platform '" + platform.name +
                           "' is not up (`aiac-emulate up " + emulation.platform_path + "` first)");
  }
  auto& os = emulation.os.emplace();
  os.platform = platform.name;
  os.host_address = up->plan.host_address;
  size_t nodes = 0;
  for (const auto& c : platform.clusters) {
    for (size_t k = 1; k <= c.powers.size(); ++k, ++nodes) {
      const std::string id = emulation::PlatformFile::NodeId(c.name, k);
      const emulation::OsNode* node = up->plan.Find(id);
      if (!node || node->cluster != c.name || node->power != c.powers[k - 1]) {
        return InvalidArgument("--emulation os: platform '" + platform.name +
                               "' is up with other nodes than the file's (node " + id +
                               "): `aiac-emulate down " + platform.name + "`, then up again");
      }
      os.nodes[id] = {node->address, node->cluster, node->power};
    }
  }
  if (nodes != up->plan.nodes.size()) {
    return InvalidArgument("--emulation os: platform '" + platform.name +
                           "' is up with other nodes than the file's: `aiac-emulate down " +
                           platform.name + "`, then up again");
  }
  return Status::Ok();
}

// --platform: the emulated platform's nodes (their daemon ids, and for Lee & Cho's static splits
// their figures), its links for the migration plan's channels, and the slowdown.
Status LoadPlatform(RunPlan& plan) {
  RunArgs& args = plan.args;
  if (args.local == 0) {
    return InvalidArgument("--platform needs --local: an emulated platform runs on this machine");
  }
  AIAC_ASSIGN_OR_RETURN(const emulation::PlatformFile platform,
                        emulation::LoadPlatformFile(args.platform));
  const auto nodes = static_cast<int>(platform.node_count());
  if (args.local > 0 && args.local != nodes) {
    return InvalidArgument("--local " + std::to_string(args.local) + " but platform " +
                           args.platform + " has " + std::to_string(nodes) +
                           " nodes (leave N out, or give that)");
  }
  args.local = nodes;
  plan.settings.channel = [links = platform](
                              const std::string& a,
                              const std::string& b) -> std::optional<std::pair<double, double>> {
    const auto link = links.Between(a, b);
    if (!(link.bandwidth_mbps > 0)) return std::nullopt;
    return std::make_pair(link.latency_ms / 1000, 8 / (link.bandwidth_mbps * 1e6));
  };
  LocalEmulation& emulation = plan.emulation.emplace();
  emulation.platform_path = std::filesystem::absolute(args.platform).string();
  if (args.emulation == "os") AIAC_RETURN_IF_ERROR(FindOsPlatform(platform, emulation));
  // Each node's daemon id, and for Lee & Cho's static splits its power and its competing jobs
  // (mean N and sigma_n, the task counted in N), as the platform file gives them.
  double fastest = 0;
  for (const auto& c : platform.clusters) {
    const emulation::BackgroundSpec bg = c.background.value_or(emulation::BackgroundSpec{});
    for (size_t k = 1; k <= c.powers.size(); ++k) {
      const std::string id = emulation::PlatformFile::NodeId(c.name, k);
      emulation.node_ids.push_back(id);
      plan.settings.nodes[id] = {c.powers[k - 1], 1 + bg.mean_jobs, bg.std_jobs};
      fastest = std::max(fastest, c.powers[k - 1]);
    }
  }
  // The default makes even the fastest node's emulated iteration outlast what sharing the
  // cores costs it when every daemon computes at once (nodes / cores): otherwise the fast
  // nodes would run at the machine's pace, and the platform would look flatter than it is.
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  emulation.slowdown = args.slowdown > 0 ? args.slowdown : std::max(1.0, nodes / cores * fastest);
  if (!(emulation.slowdown >= 1)) return InvalidArgument("--slowdown must be at least 1");
  emulation.seed = args.platform_seed != 0 ? args.platform_seed
                   : args.kill_seed != 0   ? args.kill_seed
                                           : 1;
  // A real grid's nodes register whenever they come up, so the order the super-node hands them
  // out in (the default mapping's, and its replacements') says nothing of their clusters or
  // powers; started in the file's order, they would come cluster by cluster, as the file lists
  // them.
  if (args.shuffle_nodes) {
    std::mt19937_64 rng(emulation.seed);
    std::shuffle(emulation.node_ids.begin(), emulation.node_ids.end(), rng);
  }
  plan.settings.start_order = emulation.node_ids;
  return Status::Ok();
}

// The tasks' shares and how moved items travel, from the flags (checked first, as before).
Status LoadSplit(RunPlan& plan) {
  const RunArgs& args = plan.args;
  AIAC_ASSIGN_OR_RETURN(plan.settings.split, ParseSplit(args.split));
  AIAC_ASSIGN_OR_RETURN(plan.settings.migration, ParseMigration(args.migration));
  const bool static_split = plan.settings.split == Split::kSm || plan.settings.split == Split::kSp;
  if (static_split && args.platform.empty()) {
    return InvalidArgument(
        "--split " + args.split +
        " needs --platform: the nodes' background loads are known only on an emulated platform");
  }
  return Status::Ok();
}

// The mapping, the balancing and the mode from the flags.
Status LoadModes(RunPlan& plan) {
  const RunArgs& args = plan.args;
  if (auto m = mapping::MakeMapper(args.mapping); !m.ok()) return m.status();
  AIAC_ASSIGN_OR_RETURN(plan.settings.balance, balance::ParseBalanceMode(args.balance));
  plan.settings.mapping = args.mapping;
  plan.settings.sync = args.sync;
  // A local cluster has no daemons besides the ones it started: a replacement asks once.
  if (args.local > 0) plan.settings.replacement_wait = std::chrono::milliseconds(0);
  return Status::Ok();
}

// The spawner's options, the job file and its app, prepared: everything the job needs is
// checked here, before any daemon is used.
Status LoadJob(RunPlan& plan) {
  const RunArgs& args = plan.args;
  SpawnerOptions& options = plan.options;
  options = args.options;
  AIAC_ASSIGN_OR_RETURN(plan.level, ParseLogLevel(options.log_level));
  AIAC_ASSIGN_OR_RETURN(plan.log_format, ParseLogFormat(options.log_format));
  AIAC_ASSIGN_OR_RETURN(plan.job, args.job_text.empty()
                                      ? LoadJobSpec(args.job_file)
                                      : LoadJobSpecText(args.job_file, args.job_text));
  JobSpec& job = plan.job;
  if (job.tasks == 0) {
    if (args.local == 0) return InvalidArgument(args.job_file + ": 'tasks' is missing");
    job.tasks = static_cast<uint32_t>(args.local);
  }
  // With --local N, every daemon the job does not run on stays reserved for replacements.
  if (args.local > 0 && job.tasks < static_cast<uint32_t>(args.local)) {
    options.spares =
        std::max<int64_t>(options.spares, args.local - static_cast<int64_t>(job.tasks));
  }
  if (args.local > 0 && job.tasks + options.spares > static_cast<uint32_t>(args.local)) {
    return InvalidArgument("job needs " + std::to_string(job.tasks + options.spares) +
                           " daemons (tasks + spares) but --local starts " +
                           std::to_string(args.local));
  }
  AIAC_RETURN_IF_ERROR(LoadModes(plan));
  // A local cluster's daemons are children of this process: they see its files.
  AIAC_ASSIGN_OR_RETURN(
      plan.app,
      LoadAndPrepare(job, options.plugin_dir.empty() ? DefaultPluginDir() : options.plugin_dir,
                     args.local != 0, MakeLogger("spawner", plan.level, plan.log_format)));
  plan.prepared = SteadyClock::now();
  // Signed at submit when asked (one's own cluster); otherwise the publisher's PLUGIN.sig goes
  // as it is. A local cluster's daemons trust only its throwaway key (Execute signs with it),
  // unless they are given the keys to trust.
  if (!options.sign_with.empty() && (args.local == 0 || !options.local_trusted_keys.empty())) {
    AIAC_ASSIGN_OR_RETURN(const runtime::SigningKey key,
                          runtime::SigningKey::Load(options.sign_with));
    plan.app.signature = key.Sign(plan.app.sha256);
    plan.app.signer = key.PublicKey();
  }
  if (!options.local_trusted_keys.empty()) {
    if (args.local == 0) return InvalidArgument("--local-trusted-key needs --local");
    for (const auto& key : options.local_trusted_keys) {
      AIAC_RETURN_IF_ERROR(ParsePublicKey(key, "a key of local_trusted_keys").status());
    }
    if (plan.app.signature.empty()) {
      return InvalidArgument("--local-trusted-key: plugin " + plan.app.path +
                             " is not signed (no " + runtime::SignaturePathFor(plan.app.path) +
                             "; aiac-spawner sign makes it)");
    }
  }
  if (args.sync && !plan.app.plan.supports_sync) {
    return InvalidArgument("--sync: app " + job.app + " has no synchronous mode");
  }
  for (const auto& text : options.supernodes) {
    AIAC_ASSIGN_OR_RETURN(Endpoint ep, ParseEndpoint(text));
    plan.supernodes.push_back(ep);
  }
  if (plan.supernodes.empty())
    return InvalidArgument("no super-node given (--supernode HOST:PORT)");
  return Status::Ok();
}

Result<RunPlan> PlanRun(const RunArgs& args) {
  RunPlan plan;
  plan.start = SteadyClock::now();
  plan.args = args;
  AIAC_RETURN_IF_ERROR(LoadSplit(plan));
  if (!args.platform.empty()) {
    AIAC_RETURN_IF_ERROR(LoadPlatform(plan));
  } else if (args.local < 0) {
    return InvalidArgument("--local needs the number of daemons (or --platform)");
  }
  AIAC_RETURN_IF_ERROR(LoadJob(plan));
  plan.job_id = plan.job.name + "-" + Hex(net::RandomBytes(3));
  if (!args.state.empty() && args.local != 0) {
    return InvalidArgument(
        "--state: a local cluster's daemons end with this spawner, so its job "
        "cannot be resumed");
  }
  plan.state_given = !args.state.empty();
  if (plan.state_given) {
    plan.state_dir = std::filesystem::absolute(args.state).string();
  } else if (args.local == 0) {
    plan.state_dir =
        (std::filesystem::absolute(args.job_file).parent_path() / ".aiac" / "jobs" / plan.job_id)
            .string();
  }
  return plan;
}

// --detach: tells the waiting foreground process how the start went, once.
void TellForeground(RunPlan& plan, const std::string& line) {
  if (plan.ready_fd < 0) return;
  const std::string text = line + "\n";
  [[maybe_unused]] auto written = ::write(plan.ready_fd, text.data(), text.size());
  ::close(plan.ready_fd);
  plan.ready_fd = -1;
}

// The job's state directory, for a new run (none when it has none); an error only when --state
// named it.
Status KeepState(RunPlan& plan, JobRunner& runner, const Logger& log) {
  if (plan.state_dir.empty()) return Status::Ok();
  auto state = JobState::Create(plan.state_dir);
  if (!state.ok()) {
    if (plan.state_given) return state.status();
    log->warn("job {}: no state kept, the job cannot be resumed: {}", plan.job_id,
              state.status().message());
    return Status::Ok();
  }
  StoredRun run;
  run.job_file = plan.args.job_file;
  std::error_code ec;
  run.cwd = std::filesystem::current_path(ec).string();
  run.args = plan.args.argv;
  run.job_text = plan.job.text;
  run.plugin_sha256 = Hex(plan.app.sha256);
  runner.set_state(std::move(*state), std::move(run));
  return Status::Ok();
}

std::unique_ptr<FaultInjector> MakeInjector(const RunArgs& args, JobRunner& runner,
                                            std::unique_ptr<LocalCluster>& cluster,
                                            const Logger& log) {
  if (args.kill_every <= 0) return nullptr;
  const uint64_t seed = args.kill_seed != 0
                            ? args.kill_seed
                            : static_cast<uint64_t>(SteadyClock::now().time_since_epoch().count());
  FaultPlan plan{args.kill_every, args.kill_count, seed};
  log->info("fault injection: {} kills, one every {} s (seed {})", plan.count, plan.every_seconds,
            plan.seed);
  return std::make_unique<FaultInjector>(
      plan, [&runner] { return runner.RunningTaskDaemons(); },
      [&runner, &cluster](const std::string& id) {
        return cluster ? cluster->Kill(id) : runner.AskToExit(id);
      },
      log);
}

// Starts the local cluster when there is one, runs the job and stops it: the run's summary, or
// nullopt when the network options are refused (`error` then says why).
std::optional<RunSummary> Execute(RunPlan& plan, const Logger& log, StatusLineSink* line,
                                  std::unique_ptr<RunHistory> history,
                                  std::unique_ptr<RunTrace> trace, Status& error) {
  const RunArgs& args = plan.args;
  asio::io_context io;
  std::unique_ptr<LocalCluster> cluster;
  if (args.local > 0) {
    cluster = std::make_unique<LocalCluster>(args.local, static_cast<size_t>(args.local_supernodes),
                                             SelfDirectory(), plan.options.local_log_level, log);
    cluster->set_log_format(plan.options.log_format);
    cluster->set_app_isolation(plan.options.local_app_isolation);
    if (plan.emulation) {
      if (plan.emulation->os) {
        log->info("platform {}: {} nodes, each daemon in its node of aiac-emulate's platform {}{}",
                  args.platform, args.local, plan.emulation->os->platform,
                  args.shuffle_nodes ? ", started in a shuffled order" : "");
      } else {
        log->info("emulating platform {}: {} nodes, slowdown {:g}{}", args.platform, args.local,
                  plan.emulation->slowdown,
                  args.shuffle_nodes ? ", started in a shuffled order" : "");
      }
      cluster->set_emulation(*plan.emulation);
    }
    plan.options.net.cluster_key = cluster->cluster_key();
    plan.options.net.cluster_key_file.clear();  // the run's own key replaces any configured one
    if (plan.options.local_trusted_keys.empty()) {
      // Its daemons trust only the cluster's throwaway signing key.
      auto signature = cluster->SignPlugin(plan.app.sha256);
      if (error = signature.status(); !error.ok()) return std::nullopt;
      plan.app.signature = signature->first;
      plan.app.signer = signature->second;
    } else {
      cluster->set_trusted_keys(plan.options.local_trusted_keys);
    }
    auto identity = cluster->SpawnerIdentity();
    if (error = identity.status(); !error.ok()) return std::nullopt;
    plan.options.net.identity = *identity;
  }
  if (error = net::FinishNetOptions(plan.options.net, proto::Role::SPAWNER); !error.ok())
    return std::nullopt;
  JobRunner runner(plan.job, plan.app, plan.options, plan.settings, log);
  runner.set_job_id(plan.job_id);
  runner.set_command_times(plan.start, plan.app.plan.read_seconds, plan.prepared);
  if (!plan.resume_dir.empty()) {
    auto state = JobState::Open(plan.resume_dir);
    error = state.ok() ? runner.Resume(std::move(*state)) : state.status();
  } else {
    error = KeepState(plan, runner, log);
  }
  if (!error.ok()) return std::nullopt;
  TellForeground(plan, "ok");
  runner.set_quiet(args.quiet);
  if (history) runner.set_history(std::move(history));
  if (trace) runner.set_trace(std::move(trace));
  if (line) runner.set_progress_line([line](const std::string& text) { line->SetLine(text); });
  std::unique_ptr<FaultInjector> injector = MakeInjector(args, runner, cluster, log);
  RunSummary summary;
  summary.job = plan.job.name;
  summary.app = plan.job.app;
  summary.tasks = plan.job.tasks;

  net::HttpServer http(io, log);
  if (!plan.options.metrics.empty()) {
    auto at = net::ServeMetrics(http, plan.options.metrics, log);
    if (error = at.status(); !error.ok()) return std::nullopt;
  }

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](net::error_code ec, int sig) {
    if (ec) return;
    log->warn("signal {}: stopping the run (again to stop at once)", sig);
    runner.Abort(std::string("interrupted by signal ") + std::to_string(sig));
    signals.async_wait([&](net::error_code ec2, int) {
      if (ec2) return;
      if (cluster) cluster->Stop();
      std::_Exit(130);
    });
  });
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        std::vector<Endpoint> targets = plan.supernodes;
        if (cluster) {
          auto started = co_await cluster->Start(std::chrono::milliseconds(10000));
          if (!started.ok()) {
            summary.error = "local cluster: " + started.status().message();
            summary.wall_seconds = Seconds(SteadyClock::now() - plan.start);
            co_await http.Stop();
            io.stop();
            co_return;
          }
          targets = *started;
          runner.set_on_progress([&] { cluster->Reap(); });
        }
        if (injector) net::SpawnLogged(io.get_executor(), injector->Run(), log, "fault injection");
        summary = co_await runner.Run(targets);
        co_await http.Stop();
        io.stop();
      },
      asio::detached);
  io.run();
  if (cluster) cluster->Stop();
  return summary;
}

// Prints the summary, writes it as JSON when asked; the process exit code.
int Report(const RunSummary& summary, const std::string& json, bool log_view) {
  if (json == "-") {
    // Standard output holds the JSON alone, for a program to read; the line goes to stderr.
    std::fprintf(stderr, "%s\n", ToText(summary).c_str());
    if (log_view) std::fprintf(stderr, "%s", LogViewText(summary).c_str());
    std::printf("%s\n", ToJson(summary).dump(2).c_str());
    std::fflush(stdout);
  } else {
    std::printf("%s\n", ToText(summary).c_str());
    if (log_view) std::printf("%s", LogViewText(summary).c_str());
    std::fflush(stdout);
  }
  if (!json.empty() && json != "-") {
    std::ofstream out(json);
    out << ToJson(summary).dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "aiac-spawner: cannot write %s\n", json.c_str());
      return 1;
    }
  }
  if (summary.status == RunStatus::kAborted) return 130;
  return summary.succeeded() ? 0 : 1;
}

}  // namespace

namespace {

// `resume` of a job that ended: says so, and writes its stored summary where --json asks (with
// "-", standard output holds the JSON alone, as for `run`). Exit 0: there is nothing to do.
int ReportEnded(const std::string& job_id, const StoredEnd& end, const std::string& json) {
  std::FILE* line_to = json == "-" ? stderr : stdout;
  std::fprintf(line_to, "job %s ended already: %s\n", job_id.c_str(), end.summary_line.c_str());
  if (json.empty()) return 0;
  if (end.summary_json.empty()) {
    std::fprintf(stderr,
                 "aiac-spawner: %s not written: the state keeps no JSON summary (stored before "
                 "2026-12-06)\n",
                 json.c_str());
    return 0;
  }
  const auto summary = nlohmann::json::parse(end.summary_json, nullptr, false);
  if (summary.is_discarded()) {
    std::fprintf(stderr, "aiac-spawner: %s not written: the state's JSON summary does not parse\n",
                 json.c_str());
    return 2;
  }
  if (json == "-") {
    std::printf("%s\n", summary.dump(2).c_str());
    return 0;
  }
  std::ofstream out(json);
  out << summary.dump(2) << "\n";
  if (!out) {
    std::fprintf(stderr, "aiac-spawner: cannot write %s\n", json.c_str());
    return 1;
  }
  return 0;
}

// The log of a job supervised in the background.
std::string DetachedLog(const RunPlan& plan) {
  if (!plan.state_dir.empty()) return plan.state_dir + ".log";
  return (std::filesystem::absolute(plan.args.job_file).parent_path() / ".aiac" / "jobs" /
          (plan.job_id + ".log"))
      .string();
}

// --detach: forks. The foreground process waits until the background one says the run is under
// way (or why not), prints where the job is and returns its exit code; the background one
// (its own session, its output to the log) gets -1 and goes on.
int Detach(RunPlan& plan) {
  const std::string log_path = DetachedLog(plan);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(log_path).parent_path(), ec);
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return BadInput(IoError("--detach: cannot write " + log_path));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return BadInput(IoError("--detach: no pipe"));
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return BadInput(IoError("--detach: cannot fork"));
  if (pid == 0) {
    ::close(fds[0]);
    ::setsid();
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::close(null_fd);
    }
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::close(log_fd);
    plan.ready_fd = fds[1];
    return -1;
  }
  ::close(fds[1]);
  ::close(log_fd);
  std::string said;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    said.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  while (!said.empty() && said.back() == '\n') said.pop_back();
  if (said == "ok") {
    std::printf("job %s runs in the background (pid %d)\n", plan.job_id.c_str(), pid);
    if (!plan.state_dir.empty()) std::printf("state: %s\n", plan.state_dir.c_str());
    std::printf("log: %s\n", log_path.c_str());
    std::fflush(stdout);
    return 0;
  }
  std::fprintf(
      stderr, "aiac-spawner: %s\n",
      said.empty()
          ? ("the background spawner ended before the run started; see " + log_path).c_str()
          : said.c_str());
  return 2;
}

// Runs a planned job, in the background with --detach; the process exit code.
int RunPlanned(RunPlan& plan) {
  const RunArgs& args = plan.args;
  std::unique_ptr<RunHistory> history;
  if (!args.history.empty()) {
    auto created = RunHistory::Create(args.history);
    if (!created.ok()) return BadInput(created.status());
    history = std::move(*created);
  }
  std::unique_ptr<RunTrace> trace;
  if (!args.trace.empty()) {
    auto created = RunTrace::Create(args.trace);
    if (!created.ok()) return BadInput(created.status());
    trace = std::move(*created);
  }
  if (args.detach) {
    if (const int code = Detach(plan); code >= 0) return code;
  }
  // On a terminal, the progress is one line rewritten in place under the log lines.
  std::shared_ptr<StatusLineSink> line;
  if (!args.quiet && plan.log_format == LogFormat::kText && isatty(STDERR_FILENO)) {
    line = std::make_shared<StatusLineSink>();
  }
  Logger log = MakeLogger("spawner", plan.level, plan.log_format, line);
  for (const auto& note : plan.app.plan.notes) log->info("{}", note);
  for (const auto& warning : plan.warnings) log->warn("{}", warning);
  Status refused;
  auto summary = Execute(plan, log, line.get(), std::move(history), std::move(trace), refused);
  if (!summary) {
    TellForeground(plan, refused.message());
    return BadInput(refused);
  }
  return Report(*summary, args.json, args.log_view);
}

}  // namespace

int RunCommand(RunArgs& args) {
  if (Status s = args.declared->Load(args.config); !s.ok()) return BadInput(s);
  auto plan = PlanRun(args);
  if (!plan.ok()) return BadInput(plan.status());
  return RunPlanned(*plan);
}

int ResumeCommand(const ResumeArgs& r) {
  const auto refuse = [&](const Status& s) {
    return BadInput(Status(s.code(), "resume: " + s.message()));
  };
  const std::string dir = std::filesystem::absolute(r.dir).string();
  StoredRun run;
  {
    // Closed again before the run: with --detach, RocksDB's threads must not cross the fork.
    // A spawner killed a moment ago may still hold the lock while the kernel tears it down.
    auto state = JobState::Open(dir, std::chrono::seconds(3));
    if (!state.ok()) return refuse(state.status());
    auto end = (*state)->end();
    if (!end.ok()) return refuse(end.status());
    auto stored = (*state)->run();
    if (!stored.ok()) return refuse(stored.status());
    run = std::move(*stored);
    if (*end) return ReportEnded(run.job_id, **end, r.json);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(run.cwd, ec)) std::filesystem::current_path(run.cwd, ec);
  // The job as `run` was given it: the same options, files and modes.
  CLI::App parser;
  RunArgs args;
  AddRunCommand(parser, args);
  std::vector<std::string> argv(run.args.rbegin(), run.args.rend());
  argv.push_back("run");
  try {
    parser.parse(argv);
  } catch (const CLI::ParseError& e) {
    return refuse(
        InvalidArgument("the stored command line does not parse: " + std::string(e.what())));
  }
  if (Status s = args.declared->Load(args.config); !s.ok()) return refuse(s);
  if (args.local != 0) {
    return refuse(InvalidArgument("job " + run.job_id +
                                  " ran on a local cluster, whose daemons ended with its spawner"));
  }
  args.options.supernodes = run.supernodes;
  args.kill_every = 0;  // the lost spawner's fault injection is not played again
  args.history.clear();
  args.trace.clear();
  args.state.clear();
  args.json = r.json;
  args.quiet = r.quiet;
  args.detach = r.detach;
  args.argv = run.args;
  // The job as it ran, whatever became of its file: a job file edited since (another size, other
  // tasks) would have the resumed spawner check the tasks' slices against another system.
  std::string changed;
  if (!run.job_text.empty()) {
    args.job_text = run.job_text;
    auto now = ReadWholeFile(args.job_file);
    if (!now.ok()) {
      changed = "is gone";
    } else if (*now != run.job_text) {
      changed = "changed since the job started";
    }
  }
  auto plan = PlanRun(args);
  if (!plan.ok()) return refuse(plan.status());
  if (!changed.empty()) {
    plan->warnings.push_back("job " + run.job_id + ": job file " +
                             std::filesystem::absolute(args.job_file).string() + " " + changed +
                             "; going on with the job as it ran (the state's copy)");
  }
  // Its tasks run the plugin they started with, and a replacement must run the same.
  if (const std::string now = Hex(plan->app.sha256);
      !run.plugin_sha256.empty() && now != run.plugin_sha256) {
    return refuse(InvalidArgument(
        "plugin " + plan->app.path + " changed since job " + run.job_id + " started (SHA-256 " +
        now.substr(0, 16) + "..., the job's " + run.plugin_sha256.substr(0, 16) +
        "...): its tasks run the plugin they started with, and so must their replacements"));
  }
  plan->job_id = run.job_id;
  plan->state_dir = dir;
  plan->state_given = true;
  plan->resume_dir = dir;
  return RunPlanned(*plan);
}

}  // namespace aiac::spawner
