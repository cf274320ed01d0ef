#include "spawner/job_runner.h"

#include <unistd.h>

#include <algorithm>

#include "aiac/plugin.h"
#include "core/hex.h"
#include "net/capnp_bytes.h"
#include "net/random.h"
#include "net/server.h"
#include "spawner/gateways.h"

namespace aiac::spawner {

namespace asio = net::asio;
using net::awaitable;
using Clock = std::chrono::steady_clock;

namespace {

using net::AsBytes;

// Task data above this goes in TaskData chunks before the AssignTask instead of inside it, so no
// job is limited by the frame limit (a block of a large system can be hundreds of MB).
constexpr size_t kInlineDataBytes = 1u << 20;
constexpr size_t kChunkBytes = 4u << 20;

}  // namespace

JobRunner::JobRunner(JobSpec job, LoadedApp& app, SpawnerOptions options, RunSettings settings, Logger log)
    : job_(std::move(job)),
      app_(app),
      options_(std::move(options)),
      settings_(std::move(settings)),
      log_(std::move(log)) {
  summary_.job = job_.name;
  summary_.job_id = job_.name + "-" + Hex(net::RandomBytes(3));
  summary_.app = job_.app;
  summary_.tasks = job_.tasks;
  summary_.mode = settings_.sync ? "sync" : "async";
  summary_.mapping = settings_.mapping;
  summary_.balancing.mode = balance::BalanceModeName(settings_.balance);
  summary_.balancing.migration = settings_.migration;
  spawner_id_ = "spawner-" + std::to_string(getpid());
}

void JobRunner::Abort(const std::string& why) {
  if (aborted_) return;
  aborted_ = true;
  Fail(why);
  // Still waiting for daemons: nothing to give back, so the super-node link can go now.
  if (supernodes_ && !supervisor_) supernodes_->Stop();
}

void JobRunner::Fail(const std::string& why) {
  if (supervisor_) {
    supervisor_->Fail(why);
  } else if (failure_.empty()) {
    failure_ = why;
  }
  Wake();
}

awaitable<RunSummary> JobRunner::Run(std::vector<Endpoint> supernodes) {
  auto executor = co_await asio::this_coro::executor;
  wake_ = std::make_unique<asio::steady_timer>(executor);
  start_ = Clock::now();
  deadline_ = start_ + std::chrono::milliseconds(static_cast<int64_t>(job_.timeout_s * 1000));
  std::optional<Clock::time_point> started_at, checked_at;
  auto finish = [&](std::string status, std::string error) {
    summary_.status = std::move(status);
    summary_.error = std::move(error);
    const auto end = Clock::now();
    auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    summary_.wall_seconds = seconds(end - start_);
    summary_.phases.assign = seconds(started_at.value_or(end) - start_);
    summary_.phases.iterate = started_at ? seconds(checked_at.value_or(end) - *started_at) : 0;
    summary_.phases.gather = checked_at ? seconds(end - *checked_at) : 0;
    if (balancing_) {
      summary_.balancing = balancing_->stats();
      // Never known to hold movable items (an app without them, or a run over before every
      // task reported): nothing was balanced.
      if (!balancing_->movable()) summary_.balancing.mode = "off";
    }
    if (supervisor_) {
      summary_.links = MeasuredChannels();
      summary_.per_task = supervisor_->outcomes();
      summary_.failures = supervisor_->failures();
      summary_.replacements = supervisor_->replacements();
      summary_.balancing.coordinators = static_cast<uint32_t>(supervisor_->groups());
      summary_.balancing.relayed_reports = supervisor_->relayed_reports();
    }
    return summary_;
  };

  supernodes_ = std::make_unique<SupernodeSession>(std::move(supernodes), options_.net, spawner_id_, log_);
  supernodes_->Start(executor);
  Status acquired = co_await AcquireDaemons();
  if (acquired.ok()) acquired = MapTasks();
  if (!acquired.ok()) {
    supernodes_->Stop();
    co_return finish(aborted_ ? "aborted" : "failed", acquired.message());
  }

  const auto granted_at = Clock::now();
  supervisor_->Deploy(granted_at);
  Status outcome = co_await WaitUntil(
      [&] { return supervisor_->AllReady(); }, "assigning", deadline_);
  std::optional<app::GatherReport> verified;
  if (outcome.ok()) {
    const Deployment& deployment = supervisor_->deployment();
    for (size_t t = 0; t < deployment.tasks(); ++t) {
      std::string keepers;
      for (uint32_t b : deployment.backups(t)) keepers += (keepers.empty() ? "" : ", ") + deployment.task(b).daemon;
      log_->info("job {}: task {} on daemon {}, checkpoints kept by {}", summary_.job_id, t, deployment.task(t).daemon,
                 keepers.empty() ? "none" : keepers);
    }
    log_->info("job {}: {} tasks assigned ({} mapping, {} mode), starting", summary_.job_id, deployment.tasks(),
               settings_.mapping, summary_.mode);
    started_at = Clock::now();
    summary_.setup_seconds = std::chrono::duration<double>(*started_at - granted_at).count();
    supervisor_->Start();
    iterating_since_ = *started_at;
    balance::BalancerOptions balancer;
    balancer.chain = app_.plan.items_in_chain;
    balancing_ = std::make_unique<LiveBalancing>(settings_.balance, job_.tasks, balancer);
    balancing_->SetMigration(settings_.migration);
    balancing_->SetMoveCostPrior(summary_.setup_seconds);
    if (app_.plan.target_change > 0) {
      // A window of a tenth of the time allowed (2 to 20 s): a short job is judged sooner.
      forecast_.emplace(app_.plan.target_change, job_.timeout_s,
                        ConvergenceForecast::Options{std::clamp(job_.timeout_s / 10, 2.0, 20.0), 2});
    }
    auto checked = co_await RunToVerifiedResult();
    checked_at = Clock::now();
    if (balancing_) balancing_->Finish(SinceStart(*checked_at));
    if (checked.ok()) {
      verified = std::move(*checked);
      summary_.compute_seconds = std::chrono::duration<double>(*checked_at - *started_at).count();
    } else {
      outcome = checked.status();
    }
  }
  if (outcome.ok()) {
    log_->info("job {}: global convergence after {:.2f} s, result checked: {}", summary_.job_id,
               std::chrono::duration<double>(Clock::now() - start_).count(), verified->status);
  }
  // Short of a result with every task still running: their current iterate is the best there is.
  if (!outcome.ok() && supervisor_->started() && supervisor_->failure().empty()) co_await GatherPartial();
  // Whatever happened: halt the tasks, and wait a little for their final counts (the result
  // itself is the one checked above).
  supervisor_->Halt();
  if (outcome.ok()) {
    Status counted = co_await WaitUntil([&] { return supervisor_->AllFinished(); }, "gathering",
                                        Clock::now() + std::chrono::seconds(10));
    if (!counted.ok()) log_->warn("job {}: final counts incomplete: {}", summary_.job_id, counted.message());
  }
  std::vector<std::string> ids;
  for (const auto& d : supervisor_->deployment().granted()) ids.push_back(d.id);
  supernodes_->Release(summary_.job_id, ids);
  // Each link ends once its peer has read the last frames (the halts, the release): a
  // half-close, then the peer's own close (Connection::CloseWhenFlushed), a second at most. A
  // fixed pause before closing cost every run 50 ms, and an RST could still cut it short.
  const auto ends_by = Clock::now() + std::chrono::seconds(1);
  auto left = [&] {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(ends_by - Clock::now());
    return std::max(std::chrono::milliseconds(0), ms);
  };
  for (auto& conn : conns_) if (conn) conn->CloseWhenFlushed();
  co_await supernodes_->Finish(left());
  for (auto& conn : conns_) {
    if (conn) co_await conn->Closed(left());
  }
  for (auto& conn : conns_) if (conn) conn->Close();
  summary_.supernode_failovers = static_cast<uint32_t>(supernodes_->failovers());

  if (!outcome.ok()) {
    const bool diverged = failure().find("diverged") != std::string::npos;
    co_return finish(aborted_ ? "aborted" : diverged ? "diverged" : "failed", outcome.message());
  }
  // (residual and output were kept when the result was checked)
  for (const auto& [k, v] : verified->numbers) summary_.result[k] = v;
  co_return finish(verified->status, verified->error);
}

awaitable<Result<app::GatherReport>> JobRunner::RunToVerifiedResult() {
  for (;;) {
    // Items in transit between two tasks are in no task's result: a move under way ends first.
    Status s = co_await WaitUntil([&] { return supervisor_->converged() && !supervisor_->moving(); }, "running",
                                  deadline_, /*forecast=*/true);
    if (!s.ok()) co_return s;
    auto gathered = co_await GatherSnapshots("checking the result", deadline_);
    if (!gathered.ok()) co_return gathered.status();
    if (!*gathered) continue;  // a task moved meanwhile: converge again
    app::GatherReport& report = **gathered;
    if (report.status != "unconverged") co_return std::move(report);
    // Short of the app's test: every task tightens its local test and goes on from where it is.
    const double factor = report.residual_target > 0
                              ? std::clamp(report.residual / report.residual_target, 10.0, 1e4)
                              : 10.0;
    ++summary_.tightenings;
    log_->info("job {}: every task converged, but {}; tightening the local tests {:.0f}x and going on",
               summary_.job_id, report.error, factor);
    supervisor_->Tighten(factor);
    if (forecast_) forecast_->Tighten(factor);
  }
}

awaitable<Status> JobRunner::AcquireDaemons() {
  // The super-nodes may still be starting: a few passes over the list before giving up.
  if (Status linked = co_await supernodes_->WaitConnected(10); !linked.ok()) co_return linked;
  const auto wait_until = Clock::now() + std::chrono::milliseconds(options_.wait_daemons_ms);
  std::string last_error;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  while (!aborted_) {
    auto answer = co_await supernodes_->Request(summary_.job_id, job_.tasks,
                                                static_cast<uint32_t>(options_.spares), wait_until);
    if (aborted_) break;
    if (!answer.ok()) co_return answer.status();
    if (answer->error.empty()) {
      if (answer->daemons.size() < job_.tasks) co_return ProtocolError("super-node granted too few daemons");
      first_grant_ = std::move(answer->daemons);
      summary_.daemons = static_cast<uint32_t>(first_grant_.size());
      log_->info("job {}: granted {} daemons by {}", summary_.job_id, first_grant_.size(), supernodes_->Describe());
      co_return Status::Ok();
    }
    if (Clock::now() > wait_until) {
      co_return ResourceExhausted("not enough daemons after " + std::to_string(options_.wait_daemons_ms) +
                                  " ms: " + answer->error);
    }
    if (answer->error != last_error) log_->info("waiting for daemons: {}", answer->error);
    last_error = answer->error;
    pause.expires_after(std::chrono::milliseconds(200));
    co_await pause.async_wait(net::use_nothrow);
  }
  co_return Aborted(failure());
}

Status JobRunner::MapTasks() {
  const bool checkpointing = job_.backups > 0 && (job_.checkpoint_seconds > 0 || job_.checkpoint_every > 0);
  DeploymentSpec spec{app_.plan.graph, settings_.mapping, checkpointing ? job_.backups : 0};
  spec.graph.resize(job_.tasks);
  if (!settings_.start_order.empty()) {
    std::map<std::string, size_t> started;
    for (const std::string& id : settings_.start_order) started.emplace(id, started.size());
    const auto rank = [&](const GrantedDaemon& d) {
      auto it = started.find(d.id);
      return it == started.end() ? started.size() : it->second;  // not started here: last
    };
    std::stable_sort(first_grant_.begin(), first_grant_.end(),
                     [&](const GrantedDaemon& a, const GrantedDaemon& b) { return rank(a) < rank(b); });
  }
  auto deployment = Deployment::Create(std::move(spec), std::move(first_grant_));
  if (!deployment.ok()) return deployment.status();
  AIAC_RETURN_IF_ERROR(ReweighTasks(**deployment));
  SupervisorSettings settings;
  settings.job_id = summary_.job_id;
  settings.sync = settings_.sync;
  settings.failure_timeout = std::chrono::milliseconds(options_.failure_timeout_ms);
  settings.setup_timeout = std::chrono::milliseconds(options_.setup_timeout_ms);
  supervisor_ = std::make_unique<Supervisor>(std::move(settings), std::move(*deployment), Port(), log_);
  if (settings_.balance != balance::BalanceMode::kOff &&
      (settings_.migration == "distpm" || settings_.migration == "greedy")) {
    // DistPM's two layers of coordinators (section 4.1): each cluster's tasks report through
    // one of them, the spawner being the global one.
    auto groups = ReportGroups(TaskClusters());
    if (!groups.empty()) {
      std::string firsts;
      for (const auto& g : groups) firsts += (firsts.empty() ? "" : ", ") + std::to_string(g.front());
      log_->info("job {}: {} groups report through their coordinators, the daemons of tasks {}", summary_.job_id,
                 groups.size(), firsts);
      supervisor_->SetGroups(std::move(groups));
    }
  }
  conns_.resize(job_.tasks);
  if (!failure_.empty()) supervisor_->Fail(failure_);  // aborted meanwhile
  return Status::Ok();
}

Status JobRunner::ReweighTasks(Deployment& deployment) {
  if (settings_.split == "equal") return Status::Ok();
  const bool static_split = settings_.split == "sm" || settings_.split == "sp";
  std::vector<double> powers;
  std::vector<balance::Workstation> nodes;
  for (size_t t = 0; t < deployment.tasks(); ++t) {
    for (const auto& d : deployment.granted()) {
      if (d.id != deployment.task(t).daemon) continue;
      powers.push_back(d.power > 0 ? d.power : 1.0);
      if (auto it = settings_.nodes.find(d.id); static_split) {
        if (it == settings_.nodes.end()) return Internal("--split " + settings_.split + ": no figures for daemon " + d.id);
        nodes.push_back(it->second);
      }
    }
  }
  if (powers.size() != deployment.tasks()) return Status::Ok();
  std::string why;
  if (static_split) {
    // Lee & Cho's static schemes (section 4.1): each task's share of the work in proportion to
    // its node's expected rate, eq. (9) with sigma_n for S_P, without for S_M.
    powers = settings_.split == "sm" ? balance::SplitMeans(nodes, 1) : balance::SplitProposed(nodes, 1);
    why = settings_.split == "sm" ? "S_M" : "S_P";
  }
  const auto [lo, hi] = std::minmax_element(powers.begin(), powers.end());
  if (static_split ? *hi <= *lo * (1 + 1e-9) : *hi <= kReweighSpread * *lo) return Status::Ok();
  const auto t0 = Clock::now();
  auto plan = app_.app->Reweigh(app_.params, powers);
  if (!plan.ok()) return Status(plan.status().code(), "weighing the tasks by their daemons' powers: " + plan.status().message());
  if (!*plan) return Status::Ok();
  if ((*plan)->graph.size() != deployment.tasks() || (*plan)->slices.size() != deployment.tasks()) {
    return Internal("the app's reweighed plan has " + std::to_string((*plan)->graph.size()) + " tasks, not " +
                    std::to_string(deployment.tasks()));
  }
  AIAC_RETURN_IF_ERROR(deployment.Regraph((*plan)->graph));
  (*plan)->read_seconds = app_.plan.read_seconds;
  app_.plan = std::move(**plan);
  for (const auto& note : app_.plan.notes) log_->info("{}", note);
  if (static_split) {
    log_->info("job {}: tasks split by Lee & Cho's {} (shares {:.3g} to {:.3g}) in {:.2f} s", summary_.job_id, why, *lo,
               *hi, std::chrono::duration<double>(Clock::now() - t0).count());
  } else {
    log_->info("job {}: tasks reweighed for daemons of powers {:.3g} to {:.3g} in {:.2f} s", summary_.job_id, *lo, *hi,
               std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return Status::Ok();
}

SupervisorPort JobRunner::Port() {
  SupervisorPort port;
  port.connect = [this](size_t task, uint64_t incarnation) {
    // A message that throws when read (malformed text) fails the run with the reason, rather
    // than leaving it to time out.
    asio::co_spawn(wake_->get_executor(), WatchDaemon(task, incarnation), [this, task](std::exception_ptr e) {
      if (e) Fail("daemon of task " + std::to_string(task) + ": " + net::DescribeException(e));
    });
  };
  port.send = [this](size_t task, const EnvelopeFill& fill) {
    if (conns_[task]) conns_[task]->SendEnvelope(fill);
  };
  port.close = [this](size_t task) {
    if (conns_[task]) conns_[task]->Close();
    conns_[task].reset();
  };
  port.send_plugin = [this](size_t task) { SendPlugin(task); };
  port.request_daemon = [this](size_t task, uint64_t incarnation, const std::string& what) {
    auto done = [this, task](std::exception_ptr e) {
      if (e) Fail("replacing the daemon of task " + std::to_string(task) + ": " + net::DescribeException(e));
    };
    asio::co_spawn(wake_->get_executor(), ReplaceFromSupernode(task, incarnation, what), done);
  };
  port.changed = [this] { Wake(); };
  return port;
}

awaitable<void> JobRunner::WatchDaemon(size_t index, uint64_t incarnation) {
  // Everything below concerns this incarnation only: once the task moved on, this coroutine
  // neither acts nor reports.
  const std::string address = supervisor_->deployment().task(index).address;
  auto at = ParseEndpoint(address);
  if (!at.ok()) {
    Fail("daemon " + supervisor_->deployment().task(index).daemon + ": " + at.status().message());
    co_return;
  }
  net::RetryPolicy retry;
  retry.attempts = 5;
  auto conn = co_await net::Dial(*at, options_.net, proto::Role::SPAWNER, spawner_id_,
                                 proto::Role::DAEMON, retry);
  if (!supervisor_->Current(index, incarnation)) co_return;
  if (!conn.ok()) {
    supervisor_->OnUnreachable(index, incarnation, conn.status().message(), Clock::now());
    co_return;
  }
  const net::ConnectionPtr mine = *conn;
  conns_[index] = mine;
  supervisor_->OnConnected(index, incarnation, Clock::now());
  // The assignment goes out on its own coroutine while this one reads: a daemon that refuses
  // a frame says why at once, and that must be read before the connection goes.
  asio::co_spawn(wake_->get_executor(), SendAssignment(index, incarnation, mine), [this, index](std::exception_ptr e) {
    if (e) Fail("assigning task " + std::to_string(index) + ": " + net::DescribeException(e));
  });
  for (;;) {
    auto msg = co_await mine->Receive();
    if (!supervisor_->Current(index, incarnation)) co_return;
    if (!msg.ok()) {
      if (conns_[index] == mine) conns_[index].reset();
      supervisor_->OnLost(index, incarnation, msg.status().message(), Clock::now());
      co_return;
    }
    supervisor_->OnReport(index, incarnation, (*msg)->root(), Clock::now());
  }
}

void JobRunner::SendPlugin(size_t index) {
  const net::ConnectionPtr& conn = conns_[index];
  if (!conn) return;
  // In chunks well under the daemon's frame limit when it is large, like task data (the whole
  // plugin is in memory already: no flow control needed).
  const std::string& bytes = app_.bytes;
  const size_t chunk = ChunkBytes();
  const bool chunked = bytes.size() > chunk;
  log_->info("job {}: sending plugin {} ({} bytes{}) to daemon {}", summary_.job_id, app_.path, bytes.size(),
             chunked ? " in " + std::to_string((bytes.size() + chunk - 1) / chunk) + " chunks" : "",
             supervisor_->deployment().task(index).daemon);
  size_t at = 0;
  do {
    const size_t n = std::min(chunk, bytes.size() - at);
    conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto pd = e.initPluginData();
      pd.setSha256(AsBytes(app_.sha256));
      pd.setName(app_.path);
      pd.setBytes(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data() + at), n));
      if (chunked) {
        pd.setOffset(at);
        pd.setTotal(bytes.size());
      }
    });
    at += n;
  } while (at < bytes.size());
}

size_t JobRunner::ChunkBytes() const {
  return std::max<size_t>(256, std::min(kChunkBytes, options_.net.limits.max_frame_bytes / 4));
}

awaitable<void> JobRunner::SendAssignment(size_t index, uint64_t incarnation, net::ConnectionPtr mine) {
  auto current = [&] { return supervisor_->Current(index, incarnation) && mine->is_open(); };
  const Deployment& deployment = supervisor_->deployment();
  // Large data first, in chunks well under the frame limit, one queued at a time.
  const std::string& data = app_.plan.slices[index];
  const size_t chunk = ChunkBytes();
  const bool chunked = data.size() > std::min(kInlineDataBytes, chunk);
  if (chunked) {
    log_->info("job {}: sending task {}'s data ({} bytes) to daemon {} in {} chunks", summary_.job_id, index,
               data.size(), deployment.task(index).daemon, (data.size() + chunk - 1) / chunk);
    for (size_t offset = 0; offset < data.size() && mine->is_open(); offset += chunk) {
      const std::string_view part = std::string_view(data).substr(offset, chunk);
      mine->SendEnvelope([&](proto::Envelope::Builder e) {
        auto d = e.initTaskData();
        d.setJob(summary_.job_id);
        d.setTask(static_cast<uint32_t>(index));
        d.setOffset(offset);
        d.setTotal(data.size());
        d.setBytes(AsBytes(part));
      });
      co_await mine->Drained();
      if (!current()) co_return;
    }
  }
  const auto& node = app_.plan.graph[index];
  mine->SendEnvelope([&](proto::Envelope::Builder e) {
    auto a = e.initAssignTask();
    a.setJob(summary_.job_id);
    a.setTask(static_cast<uint32_t>(index));
    a.setTaskCount(job_.tasks);
    a.setApp(job_.app);
    a.setPluginHash(AsBytes(app_.sha256));
    a.setPluginSignature(AsBytes(app_.signature));
    a.setPluginName(app_.path.substr(app_.path.find_last_of('/') + 1));
    a.setSync(settings_.sync);
    if (chunked) {
      a.setDataSize(data.size());
      a.setDataSha256(AsBytes(runtime::Sha256(data)));
    } else {
      a.setData(AsBytes(data));
    }
    auto params = a.initParams(static_cast<unsigned>(job_.params.size()));
    unsigned p = 0;
    for (const auto& [k, v] : job_.params) {
      params[p].setKey(k);
      params[p].setValue(v);
      ++p;
    }
    auto ns = a.initNeighbours(static_cast<unsigned>(node.edges.size()));
    for (size_t n = 0; n < node.edges.size(); ++n) {
      const TaskPlace& to = deployment.task(node.edges[n].first);
      ns[n].setTask(node.edges[n].first);
      ns[n].setAddress(to.address);
      ns[n].setDaemonId(to.daemon);
    }
    // Tasks named with the daemon that runs them: senders, backups, and hosted tasks.
    auto fill = [&](capnp::List<proto::Neighbour>::Builder list, const std::vector<uint32_t>& tasks) {
      for (size_t n = 0; n < tasks.size(); ++n) {
        list[n].setTask(tasks[n]);
        list[n].setAddress(deployment.task(tasks[n]).address);
        list[n].setDaemonId(deployment.task(tasks[n]).daemon);
      }
    };
    fill(a.initSenders(static_cast<unsigned>(deployment.senders(index).size())), deployment.senders(index));
    fill(a.initBackupDaemons(static_cast<unsigned>(deployment.backups(index).size())), deployment.backups(index));
    fill(a.initHosted(static_cast<unsigned>(deployment.hosted(index).size())), deployment.hosted(index));
    fill(a.initGroup(static_cast<unsigned>(supervisor_->group(index).size())), supervisor_->group(index));
    a.setCheckpointEvery(job_.checkpoint_every);
    a.setCheckpointMs(static_cast<uint64_t>(job_.checkpoint_seconds * 1000));
    a.setIncarnation(incarnation);
    a.setRestore(supervisor_->started());
    a.setTighten(supervisor_->tighten());
  });
}

awaitable<void> JobRunner::ReplaceFromSupernode(size_t index, uint64_t incarnation, std::string what) {
  const int64_t wait_ms = settings_.replacement_wait_ms < 0 ? options_.wait_daemons_ms : settings_.replacement_wait_ms;
  const auto until = Clock::now() + std::chrono::milliseconds(wait_ms);
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (;;) {
    auto answer = co_await supernodes_->Request(summary_.job_id, 1, 0, until);
    if (!supervisor_->Current(index, incarnation)) co_return;  // the run is over
    if (!answer.ok()) {
      Fail(what + "; no daemon left to replace it: " + answer.status().message());
      co_return;
    }
    if (answer->error.empty() && !answer->daemons.empty()) {
      log_->info("job {}: daemon {} granted by {} for task {}", summary_.job_id, answer->daemons.front().id,
                 supernodes_->Describe(), index);
      const bool placed = supervisor_->AddDaemons(index, incarnation, answer->daemons, Clock::now());
      summary_.daemons = static_cast<uint32_t>(supervisor_->deployment().granted().size());
      if (placed) co_return;
    }
    if (Clock::now() >= until) {
      Fail(what + "; no daemon left to replace it" + (answer->error.empty() ? "" : ": " + answer->error));
      co_return;
    }
    pause.expires_after(std::chrono::milliseconds(500));
    co_await pause.async_wait(net::use_nothrow);
  }
}

std::vector<std::string> JobRunner::RunningTaskDaemons() const {
  return supervisor_ ? supervisor_->RunningTaskDaemons() : std::vector<std::string>{};
}

bool JobRunner::AskToExit(const std::string& id) {
  if (!supervisor_) return false;
  auto task = supervisor_->TaskOn(id);
  if (!task || !conns_[*task] || !conns_[*task]->is_open()) return false;
  conns_[*task]->SendEnvelope([&](proto::Envelope::Builder e) { e.initExit().setJob(summary_.job_id); });
  return true;
}

awaitable<Result<std::optional<app::GatherReport>>> JobRunner::GatherSnapshots(const char* phase,
                                                                               Clock::time_point deadline) {
  // Every task's slice as it is now, between two of its iterations, without stopping it.
  const size_t moves = supervisor_->replacements().size();
  supervisor_->RequestSnapshots();
  auto moved = [&] { return supervisor_->replacements().size() != moves; };
  Status s = co_await WaitUntil([&] { return moved() || supervisor_->SnapshotsComplete(); }, phase, deadline);
  if (!s.ok()) co_return s;
  if (moved()) co_return std::optional<app::GatherReport>();
  auto report = app_.app->Gather(app_.params, supervisor_->TakeSnapshots());
  if (!report.ok()) co_return report.status();
  summary_.residual = report->residual;
  summary_.output = report->output;
  co_return std::optional<app::GatherReport>(std::move(*report));
}

awaitable<void> JobRunner::GatherPartial() {
  auto gathered = co_await GatherSnapshots("gathering the last iterate", Clock::now() + std::chrono::seconds(10));
  if (!gathered.ok() || !*gathered) {
    log_->warn("job {}: no last iterate to write: {}", summary_.job_id,
               gathered.ok() ? "a task moved meanwhile" : gathered.status().message());
    co_return;
  }
  const app::GatherReport& report = **gathered;
  log_->info("job {}: last iterate gathered, residual {:.3e}{}", summary_.job_id, report.residual,
             report.output.empty() ? "" : ", written to " + report.output);
}

awaitable<Status> JobRunner::WaitUntil(const std::function<bool()>& done, const char* phase, Clock::time_point deadline,
                                       bool forecast) {
  auto next_progress = Clock::now() + std::chrono::milliseconds(options_.progress_ms);
  for (;;) {
    if (!failure().empty()) co_return aborted_ ? Aborted(failure()) : Unavailable(failure());
    if (done()) co_return Status::Ok();
    const auto now = Clock::now();
    if (now > deadline) {
      co_return Timeout(std::string("job timed out while ") + phase + " (timeout_s = " + std::to_string(job_.timeout_s) + ")");
    }
    if (now >= next_progress) {
      supervisor_->Tick(now);
      const SupervisorProgress progress = supervisor_->progress();
      PrintProgress(progress);
      if (on_progress_) on_progress_();
      next_progress = now + std::chrono::milliseconds(options_.progress_ms);
      if (forecast && forecast_) {
        // A task that moved restarts from its checkpoint, and one that gave or took items
        // starts its convergence again on other work: the curve so far says nothing of either.
        const uint64_t item_moves = balancing_ ? balancing_->stats().moves : 0;
        if (supervisor_->replacements().size() != forecast_moves_ || item_moves != forecast_item_moves_) {
          forecast_moves_ = supervisor_->replacements().size();
          forecast_item_moves_ = item_moves;
          forecast_->Restart();
        }
        forecast_->Add(std::chrono::duration<double>(now - iterating_since_).count(), progress.max_change,
                       static_cast<double>(progress.min_iteration));
        if (std::string why = forecast_->Verdict(); !why.empty()) {
          co_return Unavailable("the run cannot converge in time: " + why);
        }
      }
    }
    auto wake_at = std::min(next_progress, deadline);
    if (forecast) wake_at = std::min(wake_at, BalanceTick(Clock::now()));
    wake_->expires_at(wake_at);
    co_await wake_->async_wait(net::use_nothrow);
  }
}

Clock::time_point JobRunner::BalanceTick(Clock::time_point now) {
  const auto never = Clock::time_point::max();
  if (!balancing_) return never;
  const std::vector<std::string> clusters = TaskClusters();
  for (const auto& [move, seconds] : supervisor_->TakeCompletedMoves()) {
    balancing_->OnMoveDone(move, seconds, clusters[move.from] != clusters[move.to]);
  }
  for (size_t t = 0; t < job_.tasks; ++t) {
    if (auto r = supervisor_->report(t)) {
      TaskReport report = r->first;
      report.at_s = SinceStart(r->second);
      balancing_->OnReport(t, report);
    }
  }
  if (balancing_->mode() == balance::BalanceMode::kOff) return never;
  if (!balancing_announced_ && balancing_->known()) {
    balancing_announced_ = true;
    if (!balancing_->movable()) {
      log_->info("job {}: no live balancing: app {} has no items to move", summary_.job_id, job_.app);
      balancing_ = std::make_unique<LiveBalancing>(balance::BalanceMode::kOff, job_.tasks);
      return never;
    }
    log_->info("job {}: live balancing on ({})", summary_.job_id, balance::BalanceModeName(balancing_->mode()));
  }
  // Each move's end wakes the run (SupervisorPort::changed), and the next ones start.
  if (StartMoves(now)) return never;
  if (redistribution_since_) {
    balancing_->OnRedistributionDone(std::chrono::duration<double>(now - *redistribution_since_).count());
    redistribution_since_.reset();
  }
  if (supervisor_->converged() || !balancing_->movable()) return now + std::chrono::milliseconds(250);
  if (now < AtSecond(balancing_->next_check_s())) return AtSecond(balancing_->next_check_s());
  if (settings_.migration != "spawner") balancing_->SetClusters(Clusters());
  const auto moves = balancing_->Check(SinceStart(now));
  const auto checked_next = AtSecond(balancing_->next_check_s());
  LogCheckingPoint(moves);
  if (moves.empty()) return checked_next;
  move_queue_.assign(moves.begin(), moves.end());
  redistribution_since_ = now;
  return StartMoves(now) ? never : checked_next;
}

bool JobRunner::StartMoves(Clock::time_point now) {
  const bool chain = app_.plan.items_in_chain;
  const bool ring = !chain && Ring().has_value();
  const std::vector<std::string> clusters = TaskClusters();
  for (auto it = move_queue_.begin(); it != move_queue_.end();) {
    // A ring or chain move of a later wave waits for its source's moves of the earlier ones, in
    // and out (those under way make BeginMove answer kBusy): it gives items that only then are
    // there, or that its source can only then spare. Moves of other tasks run beside it: on 64
    // CG tasks a redistribution was up to 37 chain moves, which used to run one after the other.
    const bool waits = std::any_of(move_queue_.begin(), move_queue_.end(), [&](const balance::MoveOrder& m) {
      return m.wave < it->wave && (m.to == it->from || m.from == it->from);
    });
    if (waits) {
      ++it;
      continue;
    }
    std::optional<std::vector<size_t>> via;
    // Ring and chain neighbours send to each other straight, whatever their clusters (chain
    // neighbours exchange their values straight at every iteration anyway); `--migration
    // spawner` still sends everything through the spawner.
    if (ring || (chain && settings_.migration != "spawner")) {
      via = std::vector<size_t>{};
    } else if (settings_.migration != "spawner") {
      via = GatewaysBetween(clusters, it->from, it->to);
    }
    const auto started = supervisor_->BeginMove(it->from, it->to, it->work, now, via);
    if (started == Supervisor::MoveStart::kBusy) {
      ++it;  // once its tasks' moves ended
    } else {
      it = move_queue_.erase(it);  // started, or refused: a task not running now (being replaced)
    }
  }
  return supervisor_->moving();
}

std::optional<std::string> JobRunner::ClusterOf(const std::string& daemon) const {
  for (const auto& g : supervisor_->deployment().granted()) {
    if (g.id == daemon) return g.cluster;
  }
  return std::nullopt;
}

std::vector<std::string> JobRunner::TaskClusters() const {
  std::vector<std::string> clusters;
  const Deployment& d = supervisor_->deployment();
  for (size_t t = 0; t < d.tasks(); ++t) clusters.push_back(ClusterOf(d.task(t).daemon).value_or(std::string()));
  return clusters;
}

std::optional<redistribution::RingPlanner> JobRunner::Ring() const {
  if (settings_.migration == "ring") return redistribution::RingPlanner::kOptimal;
  if (settings_.migration == "nearest") return redistribution::RingPlanner::kNearest;
  return std::nullopt;
}

ClusterView JobRunner::Clusters() const {
  ClusterView view;
  view.planner = settings_.migration == "greedy" ? redistribution::ChannelPlanner::kGreedy
                                                 : redistribution::ChannelPlanner::kDistPM;
  view.ring = Ring();
  std::vector<std::string>& names = view.names;
  for (const std::string& c : TaskClusters()) {
    auto at = std::find(names.begin(), names.end(), c);
    view.cluster.push_back(static_cast<int>(at - names.begin()));
    if (at == names.end()) names.push_back(c);
  }
  // Unknown channels: 1 ms and 1 Gbit/s each, so the plan only spreads the items evenly.
  const size_t n = names.size();
  view.latency.assign(n, std::vector<double>(n, 1e-3));
  view.seconds_per_byte.assign(n, std::vector<double>(n, 8e-9));
  view.measured.assign(n, std::vector<bool>(n, false));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      if (!settings_.channel) continue;
      if (auto link = settings_.channel(names[a], names[b])) {
        view.latency[a][b] = link->first;
        view.seconds_per_byte[a][b] = link->second;
      }
    }
  }
  // What the daemons' link monitors measured, averaged over the links between two clusters,
  // replaces the rest.
  for (const LinkFigure& f : MeasuredChannels()) {
    const auto a = static_cast<size_t>(std::find(names.begin(), names.end(), f.from) - names.begin());
    const auto b = static_cast<size_t>(std::find(names.begin(), names.end(), f.to) - names.begin());
    if (a >= n || b >= n) continue;
    view.latency[a][b] = f.alpha;
    if (f.seconds_per_byte > 0) view.seconds_per_byte[a][b] = f.seconds_per_byte;
    view.measured[a][b] = true;
  }
  return view;
}

std::vector<LinkFigure> JobRunner::MeasuredChannels() const {
  struct Sum {
    double alpha = 0, per_byte = 0;
    int links = 0, sized = 0;
    uint64_t samples = 0;
  };
  std::map<std::pair<std::string, std::string>, Sum> sums;
  const Deployment& d = supervisor_->deployment();
  for (size_t t = 0; t < d.tasks(); ++t) {
    auto r = supervisor_->report(t);
    auto from = ClusterOf(d.task(t).daemon);
    if (!r || !from) continue;
    for (const MeasuredLink& l : r->first.links) {
      auto to = ClusterOf(l.daemon);
      if (!to) continue;
      Sum& s = sums[{*from, *to}];
      s.alpha += l.alpha;
      ++s.links;
      s.samples += l.samples;
      if (l.seconds_per_byte > 0) {
        s.per_byte += l.seconds_per_byte;
        ++s.sized;
      }
    }
  }
  std::vector<LinkFigure> out;
  for (const auto& [pair, s] : sums) {
    out.push_back({pair.first, pair.second, s.alpha / s.links, s.sized ? s.per_byte / s.sized : 0, s.samples});
  }
  return out;
}

void JobRunner::LogCheckingPoint(const std::vector<balance::MoveOrder>& moves) const {
  double work = 0;
  std::string pairs;
  for (const auto& m : moves) {
    work += m.work;
    pairs += (pairs.empty() ? "" : ", ") + std::to_string(m.from) + "->" + std::to_string(m.to);
  }
  double slowest = balancing_->rate(0), fastest = slowest;
  for (size_t t = 1; t < job_.tasks; ++t) {
    slowest = std::min(slowest, balancing_->rate(t));
    fastest = std::max(fastest, balancing_->rate(t));
  }
  const balance::DynamicStep& step = balancing_->last_decision().step;
  if (log_->should_log(spdlog::level::debug) && balancing_->last_decision().measured) {
    std::string each;
    for (size_t t = 0; t < job_.tasks; ++t) each += fmt::format("{}{:.3g}", t ? " " : "", balancing_->rate(t));
    log_->debug("job {}: checking point {}: task speeds {}", summary_.job_id, balancing_->stats().checks, each);
  }
  if (moves.empty()) {
    // Every checking point, for whoever wants to see why nothing moved (--log-level debug).
    if (balancing_->last_decision().measured) {
      log_->debug("job {}: checking point {}: speeds {:.3g}..{:.3g} units/s, expected end {:.2f} s -> {:.2f} s, gain {:.2f} s "
                  "net of {:.2f} s moving: nothing moved",
                  summary_.job_id, balancing_->stats().checks, slowest, fastest,
                  step.t_rem.empty() ? 0.0 : *std::max_element(step.t_rem.begin(), step.t_rem.end()), step.t_after,
                  step.gain, balancing_->last_decision().overhead);
    }
    return;
  }
  log_->info("job {}: checking point {}: speeds {:.3g}..{:.3g} units/s, expected end {:.2f} s -> {:.2f} s; moving {:.3g} "
             "work units in {} moves ({})",
             summary_.job_id, balancing_->stats().checks, slowest, fastest,
             step.t_rem.empty() ? 0.0 : *std::max_element(step.t_rem.begin(), step.t_rem.end()), step.t_after, work,
             moves.size(), pairs);
  if (!balancing_->channels().empty()) {
    const ClusterView view = Clusters();
    const std::vector<std::string>& names = view.names;
    std::string channels;
    for (const auto& f : balancing_->channels()) {
      const auto a = static_cast<size_t>(f.from), b = static_cast<size_t>(f.to);
      const double per_byte = view.seconds_per_byte[a][b];
      channels += fmt::format("{}{} -> {} {} items ({:.1f} ms, {:.0f} Mbit/s, {})", channels.empty() ? "" : ", ",
                              names[a], names[b], f.amount, 1e3 * view.latency[a][b],
                              per_byte > 0 ? 8e-6 / per_byte : 0.0, view.measured[a][b] ? "measured" : "nominal");
    }
    log_->info("job {}: checking point {}: between clusters ({}): {}", summary_.job_id, balancing_->stats().checks,
               settings_.migration, channels);
  }
  if (const auto& ring = balancing_->ring_plan()) {
    std::string links;
    for (const auto& m : ring->moves) {
      links += fmt::format("{}{}->{} {} items{}", links.empty() ? "" : ", ", m.from, m.to, m.items,
                           m.wave > 0 ? fmt::format(" (wave {})", m.wave + 1) : "");
    }
    log_->info("job {}: checking point {}: around the ring ({}, {}): {}; planned {:.3f} s (bound {:.3f} s) for "
               "items of {:.0f} bytes",
               summary_.job_id, balancing_->stats().checks, settings_.migration, ring->ring_case, links,
               ring->planned_time, ring->lower_bound, balancing_->bytes_per_item());
  }
  if (const auto& chain = balancing_->chain_plan()) {
    log_->info("job {}: checking point {}: along the chain ({}): planned {:.3f} s over the links (busiest link {:.3f} s) "
               "for items of {:.0f} bytes",
               summary_.job_id, balancing_->stats().checks, chain->ring_case, chain->planned_time, chain->lower_bound,
               balancing_->bytes_per_item());
  }
}

void JobRunner::PrintProgress(const SupervisorProgress& p) {
  const double t = std::chrono::duration<double>(Clock::now() - start_).count();
  log_->info("[{:6.1f}s] job {}: iterations {}..{}, max local change {:.3e}, locally converged {}/{}, "
             "live daemons {}/{}, failures {}, replacements {}, checkpoints {}",
             t, summary_.job_id, p.min_iteration, p.max_iteration, p.max_change, p.converged, p.tasks, p.live, p.tasks,
             p.failures, p.replacements, p.checkpoints);
}

}  // namespace aiac::spawner
