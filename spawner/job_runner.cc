#include "spawner/job_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "aiac/plugin.h"
#include "core/hex.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"
#include "net/random.h"
#include "net/server.h"

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

// The task incarnation a daemon's report speaks for; nullopt for messages that carry none.
std::optional<uint64_t> IncarnationOf(proto::Envelope::Reader env) {
  if (env.isTaskProgress()) return env.getTaskProgress().getIncarnation();
  if (env.isLocalConvergence()) return env.getLocalConvergence().getIncarnation();
  if (env.isConvergenceAnswer()) return env.getConvergenceAnswer().getIncarnation();
  if (env.isResult()) return env.getResult().getIncarnation();
  if (env.isSnapshotData()) return env.getSnapshotData().getIncarnation();
  return std::nullopt;
}

}  // namespace

JobRunner::JobRunner(JobSpec job, LoadedApp& app, SpawnerOptions options, RunSettings settings, Logger log)
    : job_(std::move(job)),
      app_(app),
      options_(std::move(options)),
      settings_(std::move(settings)),
      log_(std::move(log)),
      detector_(job_.tasks) {
  summary_.job = job_.name;
  summary_.job_id = job_.name + "-" + Hex(net::RandomBytes(3));
  summary_.app = job_.app;
  summary_.tasks = job_.tasks;
  summary_.mode = settings_.sync ? "sync" : "async";
  summary_.mapping = settings_.mapping;
  spawner_id_ = "spawner-" + std::to_string(getpid());
}

void JobRunner::Abort(const std::string& why) {
  if (aborted_) return;
  aborted_ = true;
  failure_ = why;
  // Still waiting for daemons: nothing to give back, so the super-node link can go now.
  if (supernodes_ && !deployment_) supernodes_->Stop();
  if (wake_) Wake();
}

void JobRunner::Fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  Wake();
}

void JobRunner::SendAll(const std::function<void(proto::Envelope::Builder)>& fill) {
  for (auto& s : slots_) {
    if (s.conn) s.conn->SendEnvelope(fill);
  }
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
    summary_.per_task.clear();
    for (const auto& s : slots_) summary_.per_task.push_back(s.outcome);
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
  for (size_t i = 0; i < slots_.size(); ++i) {
    // A message that throws when read (malformed text) fails the run with the reason, rather
    // than leaving it to time out.
    asio::co_spawn(executor, WatchDaemon(i), [this, i](std::exception_ptr e) {
      if (e) Fail("daemon of task " + std::to_string(i) + ": " + net::DescribeException(e));
    });
  }
  Status outcome = co_await WaitUntil(
      [&] { return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.ready; }); },
      "assigning", deadline_);
  std::optional<app::GatherReport> verified;
  if (outcome.ok()) {
    for (size_t t = 0; t < slots_.size(); ++t) {
      std::string keepers;
      for (uint32_t b : deployment_->backups(t)) keepers += (keepers.empty() ? "" : ", ") + slots_[b].outcome.daemon;
      log_->info("job {}: task {} on daemon {}, checkpoints kept by {}", summary_.job_id, t, slots_[t].outcome.daemon,
                 keepers.empty() ? "none" : keepers);
    }
    log_->info("job {}: {} tasks assigned ({} mapping, {} mode), starting", summary_.job_id, slots_.size(),
               settings_.mapping, summary_.mode);
    started_ = true;
    started_at = Clock::now();
    summary_.setup_seconds = std::chrono::duration<double>(*started_at - granted_at).count();
    SendAll([&](proto::Envelope::Builder e) { e.initStartTask().setJob(summary_.job_id); });
    auto checked = co_await RunToVerifiedResult();
    checked_at = Clock::now();
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
  // Whatever happened: halt the tasks, and wait a little for their final counts (the result
  // itself is the one checked above).
  finishing_ = true;
  SendAll([&](proto::Envelope::Builder e) { e.initHalt().setJob(summary_.job_id); });
  if (outcome.ok()) {
    Status counted = co_await WaitUntil(
        [&] { return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.outcome.finished; }); },
        "gathering", Clock::now() + std::chrono::seconds(10));
    if (!counted.ok()) log_->warn("job {}: final counts incomplete: {}", summary_.job_id, counted.message());
  }
  std::vector<std::string> ids;
  for (const auto& d : deployment_->granted()) ids.push_back(d.id);
  supernodes_->Release(summary_.job_id, ids);
  // Let the halts and the release reach the wire before the connections go.
  asio::steady_timer flush(executor, std::chrono::milliseconds(50));
  co_await flush.async_wait(net::use_nothrow);
  for (auto& s : slots_) if (s.conn) s.conn->Close();
  supernodes_->Stop();
  summary_.supernode_failovers = static_cast<uint32_t>(supernodes_->failovers());

  if (!outcome.ok()) {
    const bool diverged = failure_.find("diverged") != std::string::npos;
    co_return finish(aborted_ ? "aborted" : diverged ? "diverged" : "failed", outcome.message());
  }
  // (residual and output were kept when the result was checked)
  for (const auto& [k, v] : verified->numbers) summary_.result[k] = v;
  co_return finish(verified->status, verified->error);
}

awaitable<Result<app::GatherReport>> JobRunner::RunToVerifiedResult() {
  for (;;) {
    Status s = co_await WaitUntil([&] { return detector_.converged(); }, "running", deadline_);
    if (!s.ok()) co_return s;
    // Every task's slice as it is now, between two of its iterations, without stopping it.
    const uint64_t round = ++snapshot_round_;
    const size_t moves = summary_.replacements.size();
    for (auto& slot : slots_) slot.snapshot.reset();
    SendAll([&](proto::Envelope::Builder e) {
      auto q = e.initSnapshot();
      q.setJob(summary_.job_id);
      q.setRound(round);
    });
    s = co_await WaitUntil(
        [&] {
          return summary_.replacements.size() != moves ||
                 std::all_of(slots_.begin(), slots_.end(), [](const Slot& x) { return x.snapshot.has_value(); });
        },
        "checking the result", deadline_);
    if (!s.ok()) co_return s;
    if (summary_.replacements.size() != moves) continue;  // a task moved meanwhile: converge again
    std::vector<std::string> slices;
    for (auto& slot : slots_) slices.push_back(std::move(*slot.snapshot));
    auto report = app_.app->Gather(app_.params, slices);
    if (!report.ok()) co_return report.status();
    summary_.residual = report->residual;
    summary_.output = report->output;
    if (report->status != "unconverged") co_return std::move(*report);
    // Short of the app's test: every task tightens its local test and goes on from where it is.
    const double factor = report->residual_target > 0
                              ? std::clamp(report->residual / report->residual_target, 10.0, 1e4)
                              : 10.0;
    tighten_ *= factor;
    ++summary_.tightenings;
    log_->info("job {}: every task converged, but {}; tightening the local tests {:.0f}x and going on",
               summary_.job_id, report->error, factor);
    SendAll([&](proto::Envelope::Builder e) {
      auto t = e.initTighten();
      t.setJob(summary_.job_id);
      t.setFactor(factor);
    });
    detector_.Reset();
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
  co_return Aborted(failure_);
}

Status JobRunner::MapTasks() {
  const bool checkpointing = job_.backups > 0 && (job_.checkpoint_seconds > 0 || job_.checkpoint_every > 0);
  DeploymentSpec spec{app_.plan.graph, settings_.mapping, checkpointing ? job_.backups : 0};
  spec.graph.resize(job_.tasks);
  auto deployment = Deployment::Create(std::move(spec), std::move(first_grant_));
  if (!deployment.ok()) return deployment.status();
  deployment_ = std::move(*deployment);
  slots_.resize(job_.tasks);
  for (uint32_t t = 0; t < job_.tasks; ++t) {
    slots_[t].outcome.task = t;
    slots_[t].outcome.daemon = deployment_->task(t).daemon;
    slots_[t].outcome.address = deployment_->task(t).address;
  }
  return Status::Ok();
}

awaitable<void> JobRunner::WatchDaemon(size_t index) {
  Slot& slot = slots_[index];
  const uint64_t incarnation = deployment_->task(index).incarnation;
  // Everything below concerns this incarnation only: once the task moved on, this coroutine
  // neither acts nor reports.
  auto current = [&] { return deployment_->task(index).incarnation == incarnation && failure_.empty(); };
  auto at = ParseEndpoint(slot.outcome.address);
  if (!at.ok()) {
    Fail("daemon " + slot.outcome.daemon + ": " + at.status().message());
    co_return;
  }
  net::RetryPolicy retry;
  retry.attempts = 5;
  auto conn = co_await net::Dial(*at, options_.net, proto::Role::SPAWNER, spawner_id_,
                                 proto::Role::DAEMON, retry);
  if (!current()) co_return;
  if (!conn.ok()) {
    // Granted but unreachable (killed since it registered, say): replaced like a lost one.
    Replace(index, "unreachable: " + conn.status().message());
    co_return;
  }
  slot.conn = *conn;
  slot.last_heard = Clock::now();
  slot.assigned_at = slot.last_heard;
  const net::ConnectionPtr mine = slot.conn;
  // The assignment goes out on its own coroutine while this one reads: a daemon that refuses
  // a frame says why at once, and that must be read before the connection goes.
  asio::co_spawn(wake_->get_executor(), SendAssignment(index, incarnation, mine), [this, index](std::exception_ptr e) {
    if (e) Fail("assigning task " + std::to_string(index) + ": " + net::DescribeException(e));
  });
  bool stale_logged = false;
  for (;;) {
    auto msg = co_await mine->Receive();
    if (!current()) co_return;
    if (!msg.ok()) {
      if (!slot.outcome.finished) Replace(index, "lost: " + msg.status().message());
      co_return;
    }
    slot.last_heard = Clock::now();
    auto env = (*msg)->root();
    // Fencing: a report of another incarnation of the task never counts (logged once).
    if (auto from = IncarnationOf(env); from && *from != incarnation) {
      if (!stale_logged) {
        log_->warn("job {}: dropped a report of task {} from incarnation {} on daemon {} (current {})",
                   summary_.job_id, index, *from, slot.outcome.daemon, incarnation);
        stale_logged = true;
      }
      continue;
    }
    if (env.isRefuse()) {
      // The daemon closes on us for something we sent (a frame over its max_frame_bytes, say):
      // any daemon would, so the run fails with its reason instead of replacing it.
      Fail("daemon " + slot.outcome.daemon + " (task " + std::to_string(index) + ") closed the connection: " +
           Printable(env.getRefuse().getReason().cStr(), 300, false));
      co_return;
    }
    if (env.isTaskReady()) {
      auto r = env.getTaskReady();
      if (r.getNeedPlugin()) {
        // In chunks well under the daemon's frame limit when it is large, like task data (the
        // whole plugin is in memory already: no flow control needed).
        const std::string& bytes = app_.bytes;
        const size_t chunk = ChunkBytes();
        const bool chunked = bytes.size() > chunk;
        log_->info("job {}: sending plugin {} ({} bytes{}) to daemon {}", summary_.job_id, app_.path, bytes.size(),
                   chunked ? " in " + std::to_string((bytes.size() + chunk - 1) / chunk) + " chunks" : "",
                   slot.outcome.daemon);
        size_t at = 0;
        do {
          const size_t n = std::min(chunk, bytes.size() - at);
          slot.conn->SendEnvelope([&](proto::Envelope::Builder e) {
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
      } else if (r.getError().size() > 0) {
        Fail("daemon " + slot.outcome.daemon + " refused task " + std::to_string(index) + ": " +
             Printable(r.getError().cStr(), 300, false));
      } else {
        slot.ready = true;
        if (slot.replacement >= 0) {
          auto& rep = summary_.replacements[static_cast<size_t>(slot.replacement)];
          rep.restored_iteration = r.getRestoredIteration();
          rep.seconds_to_resume = std::chrono::duration<double>(Clock::now() - slot.failed_at).count();
          slot.outcome.iterations = rep.restored_iteration;
          slot.replacement = -1;
          log_->info("job {}: task {} resumes on daemon {} from iteration {}, {:.2f} s after the loss", summary_.job_id,
                     index, slot.outcome.daemon, rep.restored_iteration, rep.seconds_to_resume);
        }
        if (started_) {
          slot.conn->SendEnvelope([&](proto::Envelope::Builder e) { e.initStartTask().setJob(summary_.job_id); });
        }
        Wake();
      }
    } else if (env.isTaskProgress()) {
      auto p = env.getTaskProgress();
      slot.outcome.iterations = std::max(slot.outcome.iterations, p.getIteration());
      slot.change = p.getLocalChange();
      slot.outcome.checkpoints = std::max(slot.outcome.checkpoints, p.getCheckpoints());
      slot.outcome.checkpoint_bytes = std::max(slot.outcome.checkpoint_bytes, p.getCheckpointBytes());
    } else if (env.isLocalConvergence()) {
      auto c = env.getLocalConvergence();
      slot.converged = c.getConverged();
      slot.outcome.iterations = std::max(slot.outcome.iterations, c.getIteration());
      detector_.OnLocal(static_cast<uint32_t>(index), c.getConverged());
      OnConvergenceEvent();
    } else if (env.isConvergenceAnswer()) {
      auto a = env.getConvergenceAnswer();
      detector_.OnAnswer(static_cast<uint32_t>(index), a.getRound(), a.getConverged());
      OnConvergenceEvent();
    } else if (env.isSnapshotData()) {
      auto d = env.getSnapshotData();
      if (d.getRound() == snapshot_round_) {
        auto data = d.getData();
        slot.snapshot = std::string(reinterpret_cast<const char*>(data.begin()), data.size());
        slot.outcome.iterations = std::max(slot.outcome.iterations, d.getIteration());
        Wake();
      }
    } else if (env.isResult()) {
      auto r = env.getResult();
      slot.outcome.iterations = r.getIterations();
      slot.outcome.checkpoints = std::max(slot.outcome.checkpoints, r.getCheckpoints());
      slot.outcome.checkpoint_bytes = std::max(slot.outcome.checkpoint_bytes, r.getCheckpointBytes());
      if (r.getError().size() > 0) {
        Fail("task " + std::to_string(index) + " failed: " + Printable(r.getError().cStr(), 300, false));
      } else {
        auto data = r.getData();
        slot.outcome.data.assign(reinterpret_cast<const char*>(data.begin()), data.size());
        slot.outcome.finished = true;
        Wake();
      }
    }
  }
}

size_t JobRunner::ChunkBytes() const {
  return std::max<size_t>(256, std::min(kChunkBytes, options_.net.limits.max_frame_bytes / 4));
}

awaitable<void> JobRunner::SendAssignment(size_t index, uint64_t incarnation, net::ConnectionPtr mine) {
  Slot& slot = slots_[index];
  auto current = [&] {
    return deployment_->task(index).incarnation == incarnation && failure_.empty() && mine->is_open();
  };
  // Large data first, in chunks well under the frame limit, one queued at a time.
  const std::string& data = app_.plan.slices[index];
  const size_t chunk = ChunkBytes();
  const bool chunked = data.size() > std::min(kInlineDataBytes, chunk);
  if (chunked) {
    log_->info("job {}: sending task {}'s data ({} bytes) to daemon {} in {} chunks", summary_.job_id, index,
               data.size(), slot.outcome.daemon, (data.size() + chunk - 1) / chunk);
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
      const auto& to = slots_[node.edges[n].first].outcome;
      ns[n].setTask(node.edges[n].first);
      ns[n].setAddress(to.address);
      ns[n].setDaemonId(to.daemon);
    }
    // Tasks named with the daemon that runs them: senders, backups, and hosted tasks.
    auto fill = [this](capnp::List<proto::Neighbour>::Builder list, const std::vector<uint32_t>& tasks) {
      for (size_t n = 0; n < tasks.size(); ++n) {
        list[n].setTask(tasks[n]);
        list[n].setAddress(slots_[tasks[n]].outcome.address);
        list[n].setDaemonId(slots_[tasks[n]].outcome.daemon);
      }
    };
    fill(a.initSenders(static_cast<unsigned>(deployment_->senders(index).size())), deployment_->senders(index));
    fill(a.initBackupDaemons(static_cast<unsigned>(deployment_->backups(index).size())), deployment_->backups(index));
    fill(a.initHosted(static_cast<unsigned>(deployment_->hosted(index).size())), deployment_->hosted(index));
    a.setCheckpointEvery(job_.checkpoint_every);
    a.setCheckpointMs(static_cast<uint64_t>(job_.checkpoint_seconds * 1000));
    a.setIncarnation(incarnation);
    a.setRestore(started_);
    a.setTighten(tighten_);
  });
}

void JobRunner::Replace(size_t index, const std::string& why) {
  Slot& slot = slots_[index];
  const std::string dead = slot.outcome.daemon;
  ++summary_.failures;
  log_->warn("job {}: daemon {} (task {}) {}", summary_.job_id, dead, index, why);
  if (!failure_.empty() || finishing_) return;
  if (settings_.sync) {
    Fail("daemon " + dead + " (task " + std::to_string(index) + ") " + why + "; sync mode cannot replace a daemon");
    return;
  }
  // From here on the dead daemon's incarnation is over: its coroutine stops acting, and a
  // paused daemon that comes back finds its connection closed.
  if (slot.conn) slot.conn->Close();
  slot.conn.reset();
  slot.ready = false;
  slot.converged = false;
  slot.change = 0;
  slot.failed_at = Clock::now();
  detector_.Withdraw(static_cast<uint32_t>(index));
  // The mapping algorithm picks the replacement among the granted daemons no task runs on
  // (deployment.h); when none is free, a super-node is asked for one.
  if (deployment_->Lose(index)) {
    MoveTask(index, dead);
    return;
  }
  asio::co_spawn(wake_->get_executor(), ReplaceFromSupernode(index, dead, why), [this, index](std::exception_ptr e) {
    if (e) Fail("replacing the daemon of task " + std::to_string(index) + ": " + net::DescribeException(e));
  });
}

awaitable<void> JobRunner::ReplaceFromSupernode(size_t index, std::string dead, std::string why) {
  const int64_t wait_ms = settings_.replacement_wait_ms < 0 ? options_.wait_daemons_ms : settings_.replacement_wait_ms;
  const auto until = Clock::now() + std::chrono::milliseconds(wait_ms);
  const uint64_t incarnation = deployment_->task(index).incarnation;
  const std::string what = "daemon " + dead + " (task " + std::to_string(index) + ") " + why;
  log_->info("job {}: no granted daemon is free for task {}; asking the super-node for one", summary_.job_id, index);
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (;;) {
    auto answer = co_await supernodes_->Request(summary_.job_id, 1, 0, until);
    if (!failure_.empty() || deployment_->task(index).incarnation != incarnation) co_return;  // the run is over
    if (!answer.ok()) {
      Fail(what + "; no daemon left to replace it: " + answer.status().message());
      co_return;
    }
    if (answer->error.empty() && !answer->daemons.empty()) {
      deployment_->AddGranted(answer->daemons);
      summary_.daemons = static_cast<uint32_t>(deployment_->granted().size());
      log_->info("job {}: daemon {} granted by {} for task {}", summary_.job_id, answer->daemons.front().id,
                 supernodes_->Describe(), index);
      if (deployment_->Place(index)) {
        MoveTask(index, dead);
        co_return;
      }
    }
    if (Clock::now() >= until) {
      Fail(what + "; no daemon left to replace it" + (answer->error.empty() ? "" : ": " + answer->error));
      co_return;
    }
    pause.expires_after(std::chrono::milliseconds(500));
    co_await pause.async_wait(net::use_nothrow);
  }
}

void JobRunner::MoveTask(size_t index, const std::string& dead) {
  Slot& slot = slots_[index];
  const TaskPlace& next = deployment_->task(index);
  slot.outcome.daemon = next.daemon;
  slot.outcome.address = next.address;
  slot.replacement = static_cast<int>(summary_.replacements.size());
  summary_.replacements.push_back({static_cast<uint32_t>(index), dead, next.daemon, 0, -1});
  log_->info("job {}: task {} goes to daemon {} (incarnation {})", summary_.job_id, index, next.daemon, next.incarnation);
  // Every other daemon first learns where the task went (its values, its checkpoints, and the
  // dead daemon's role as a backup); then the replacement gets the task.
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (i == index || !slots_[i].conn) continue;
    slots_[i].conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto m = e.initNeighbourMoved();
      m.setJob(summary_.job_id);
      m.setTask(static_cast<uint32_t>(index));
      m.setAddress(next.address);
      m.setDaemonId(next.daemon);
      m.setIncarnation(next.incarnation);
      m.setPreviousDaemonId(dead);
    });
  }
  asio::co_spawn(wake_->get_executor(), WatchDaemon(index), [this, index](std::exception_ptr e) {
    if (e) Fail("daemon of task " + std::to_string(index) + ": " + net::DescribeException(e));
  });
  Wake();
}

std::vector<std::string> JobRunner::RunningTaskDaemons() const {
  std::vector<std::string> out;
  if (!started_ || !failure_.empty() || detector_.converged()) return out;
  for (const auto& s : slots_) {
    if (s.ready && s.conn && s.conn->is_open() && !s.outcome.finished) out.push_back(s.outcome.daemon);
  }
  return out;
}

bool JobRunner::AskToExit(const std::string& id) {
  for (auto& s : slots_) {
    if (s.outcome.daemon != id || !s.conn || !s.conn->is_open()) continue;
    s.conn->SendEnvelope([&](proto::Envelope::Builder e) { e.initExit().setJob(summary_.job_id); });
    return true;
  }
  return false;
}

void JobRunner::CheckSilence() {
  const auto limit = std::chrono::milliseconds(options_.failure_timeout_ms);
  const auto setup_limit = std::chrono::milliseconds(options_.setup_timeout_ms);
  const auto now = Clock::now();
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (!s.conn || s.outcome.finished) continue;
    // Closing makes its WatchDaemon see the loss and replace it.
    if (s.ready && now - s.last_heard >= limit) {
      log_->warn("job {}: daemon {} (task {}) silent for {} ms", summary_.job_id, s.outcome.daemon, i,
                 options_.failure_timeout_ms);
      s.conn->Close();
    } else if (!s.ready && now - s.assigned_at >= setup_limit) {
      // Building a large block may keep a daemon quiet for seconds before its TaskReady, hence a
      // limit of its own for the setup.
      log_->warn("job {}: daemon {} (task {}) not ready {} ms after its assignment", summary_.job_id,
                 s.outcome.daemon, i, options_.setup_timeout_ms);
      s.conn->Close();
    }
  }
}

void JobRunner::OnConvergenceEvent() {
  if (auto round = detector_.RoundToOpen()) {
    log_->debug("job {}: every task locally converged, confirmation round {}", summary_.job_id, *round);
    SendAll([&](proto::Envelope::Builder e) {
      auto q = e.initConvergenceQuery();
      q.setJob(summary_.job_id);
      q.setRound(*round);
    });
  }
  if (detector_.converged()) Wake();
}

awaitable<Status> JobRunner::WaitUntil(const std::function<bool()>& done, const char* phase, Clock::time_point deadline) {
  auto next_progress = Clock::now() + std::chrono::milliseconds(options_.progress_ms);
  for (;;) {
    if (!failure_.empty()) co_return aborted_ ? Aborted(failure_) : Unavailable(failure_);
    if (done()) co_return Status::Ok();
    const auto now = Clock::now();
    if (now > deadline) {
      co_return Timeout(std::string("job timed out while ") + phase + " (timeout_s = " + std::to_string(job_.timeout_s) + ")");
    }
    if (now >= next_progress) {
      CheckSilence();
      PrintProgress();
      if (on_progress_) on_progress_();
      next_progress = now + std::chrono::milliseconds(options_.progress_ms);
    }
    wake_->expires_at(std::min(next_progress, deadline));
    co_await wake_->async_wait(net::use_nothrow);
  }
}

void JobRunner::PrintProgress() {
  uint64_t lo = UINT64_MAX, hi = 0;
  double change = 0;
  size_t live = 0;
  uint64_t checkpoints = 0;
  for (const auto& s : slots_) {
    lo = std::min(lo, s.outcome.iterations);
    hi = std::max(hi, s.outcome.iterations);
    if (std::isfinite(s.change)) change = std::max(change, s.change);
    live += s.conn && s.conn->is_open() && s.ready;
    checkpoints += s.outcome.checkpoints;
  }
  if (slots_.empty()) lo = 0;
  const double t = std::chrono::duration<double>(Clock::now() - start_).count();
  log_->info("[{:6.1f}s] job {}: iterations {}..{}, max local change {:.3e}, locally converged {}/{}, "
             "live daemons {}/{}, failures {}, replacements {}, checkpoints {}",
             t, summary_.job_id, lo, hi, change, detector_.converged_count(), slots_.size(), live, slots_.size(),
             summary_.failures, summary_.replacements.size(), checkpoints);
}

}  // namespace aiac::spawner
