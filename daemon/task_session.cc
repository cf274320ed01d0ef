#include "daemon/task_session.h"

#include <algorithm>
#include <utility>

#include "checkpoint/proof.h"
#include "core/names.h"
#include "daemon/app_child_runner.h"
#include "net/capnp_bytes.h"
#include "runtime/move_kind_wire.h"
#include "runtime/task_profile_wire.h"
#include "runtime/task_state.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::AsBytes;
using net::AsString;

namespace {

// The common end of both PrepareTasks: the checkpoint's state, the job's tightening so far.
Result<PreparedTask> Restore(const Assignment& a, std::unique_ptr<app::Task> task,
                             std::optional<checkpoint::Checkpoint> restored) {
  runtime::MoveState moves;
  std::vector<runtime::SentValues> resend;
  if (restored) {
    AIAC_ASSIGN_OR_RETURN(auto state, runtime::DecodeTaskState(restored->state));
    AIAC_RETURN_IF_ERROR(task->RestoreState(state.app_state));
    moves = std::move(state.moves);
    resend = std::move(state.sent);
  }
  // A task taking over mid-run starts with the local test its job tightened to so far.
  if (a.tighten > 1) AIAC_RETURN_IF_ERROR(task->Tighten(a.tighten));
  PreparedTask p;
  p.dependencies = task->Dependencies();
  p.notes = task->Notes();
  p.task = std::move(task);
  p.restored = std::move(restored);
  p.moves = std::move(moves);
  p.resend = std::move(resend);
  return p;
}

}  // namespace

Result<PreparedTask> PrepareTask(const Assignment& a, std::unique_ptr<app::App> app,
                                 std::optional<checkpoint::Checkpoint> restored) {
  if (app->name() != a.app) {
    return InvalidArgument("plugin " + a.plugin_name + " holds app '" + std::string(app->name()) +
                           "', not '" + a.app + "'");
  }
  AIAC_ASSIGN_OR_RETURN(auto task, app->MakeTask(a.params, a.task, a.slice));
  AIAC_ASSIGN_OR_RETURN(PreparedTask p, Restore(a, std::move(task), std::move(restored)));
  p.app = std::move(app);
  return p;
}

Result<PreparedTask> PrepareTask(const Assignment& a, const AppChildSpec& child,
                                 std::optional<checkpoint::Checkpoint> restored,
                                 std::optional<AppCrash>& crash) {
  AIAC_ASSIGN_OR_RETURN(auto task,
                        ChildTask::Start(child, a.app, a.params, a.task, a.slice, &crash));
  auto state = task->state();
  auto p = Restore(a, std::move(task), std::move(restored));
  if (!p.ok()) {
    crash = state->crash();  // in RestoreState or Tighten
    return p.status();
  }
  p->child = std::move(state);
  return p;
}

TaskSession::TaskSession(asio::io_context& io, const Assignment& a,
                         std::shared_ptr<runtime::Plugin> keep_loaded, SpawnerPort port, Logger log)
    : io_(io),
      job_(a.job),
      task_(a.task),
      incarnation_(a.incarnation),
      port_(std::move(port)),
      log_(std::move(log)),
      keep_loaded_(std::move(keep_loaded)),
      senders_(a.senders),
      group_(a.task, a.group) {}

TaskSession::~TaskSession() {
  // Not ended (a session that failed to start, a test): the runner (declared last) joins its
  // thread first, then the app goes, then its code.
  if (runner_) runner_->Halt();
}

Result<std::shared_ptr<TaskSession>> TaskSession::Create(
    asio::io_context& io, const Assignment& a, PreparedTask prepared,
    std::shared_ptr<runtime::Plugin> keep_loaded, std::chrono::milliseconds progress_period,
    SpawnerPort port, Logger log, std::optional<Ed25519Key> checkpoint_key,
    std::function<std::chrono::nanoseconds(std::chrono::nanoseconds)> iteration_time) {
  std::shared_ptr<TaskSession> s(
      new TaskSession(io, a, std::move(keep_loaded), std::move(port), std::move(log)));
  if (checkpoint_key && a.capability) {
    s->signer_ = std::make_shared<const CheckpointSigner>(
        CheckpointSigner{std::move(*checkpoint_key), *a.capability});
  }
  for (const auto& [t, neighbour] : a.neighbours) {
    AIAC_ASSIGN_OR_RETURN(auto ep, ParseEndpoint(neighbour.first));
    auto link = std::make_shared<OutLink>();
    link->task = t;
    link->address = ep;
    link->daemon = neighbour.second;
    link->keep_all = a.sync;
    if (a.sync) link->log = ValueLog(a.value_log_mb << 20);
    link->wake =
        std::make_unique<asio::steady_timer>(io, std::chrono::steady_clock::time_point::max());
    s->links_[t] = link;
  }
  for (const auto& [address, daemon] : a.backups) {
    AIAC_ASSIGN_OR_RETURN(auto ep, ParseEndpoint(address));
    auto backup = std::make_shared<BackupLink>();
    backup->address = ep;
    backup->daemon = daemon;
    backup->wake =
        std::make_unique<asio::steady_timer>(io, std::chrono::steady_clock::time_point::max());
    s->backups_.push_back(backup);
  }
  runtime::RunnerOptions options;
  options.sync = a.sync;
  options.progress_period = progress_period;
  options.iteration_time = std::move(iteration_time);
  if (prepared.restored) {
    options.start_iteration = prepared.restored->iteration;
    if (a.sync) s->log_start_ = runtime::FirstResentIteration(prepared.restored->iteration);
  }
  options.incarnation = a.incarnation;
  s->moves_applied_ = prepared.moves.moves;
  options.moves = std::move(prepared.moves);
  options.resend = std::move(prepared.resend);
  if (!s->backups_.empty()) {
    options.checkpoint_every = a.checkpoint_every;
    options.checkpoint_period = std::chrono::milliseconds(a.checkpoint_ms);
  }
  s->app_ = std::move(prepared.app);
  s->child_ = prepared.child;
  if (prepared.child) {
    // The app runs in a child process: so does its runner (app_child_runner.h).
    std::unique_ptr<ChildTask> child(static_cast<ChildTask*>(prepared.task.release()));
    AIAC_ASSIGN_OR_RETURN(s->runner_,
                          ChildRunner::Run(io, std::move(child), options, s->Callbacks()));
  } else {
    s->runner_ = std::make_unique<runtime::TaskRunner>(
        std::move(prepared.task), std::move(prepared.dependencies), options, s->Callbacks());
  }
  return s;
}

void TaskSession::Start() {
  if (started_ || ended_) return;
  started_ = true;
  runner_->Start();
}

void TaskSession::Query(uint64_t round) {
  if (!ended_) runner_->Query(round);
}

void TaskSession::Snapshot(uint64_t round) {
  if (!ended_) runner_->Snapshot(round);
}

void TaskSession::Tighten(double factor) {
  if (!ended_) runner_->Tighten(factor);
}

void TaskSession::Move(runtime::ItemMove move) {
  if (!ended_) runner_->Move(std::move(move));
}

void TaskSession::Halt() {
  if (!ended_) runner_->Halt();
}

runtime::RunnerCallbacks TaskSession::Callbacks() {
  // The runner calls these on the task's thread; each posts its work to the io thread, where it
  // runs only while the session lives and has not ended. Nothing here may touch the session
  // itself: its runner's thread can outlive it (it is joined on the daemon's worker after the
  // job ended), so they hold the io_context, which outlives both, and a weak pointer.
  std::weak_ptr<TaskSession> weak = weak_from_this();
  auto on_io = [&io = io_, weak](auto fn) {
    asio::post(io, [weak, fn = std::move(fn)]() mutable {
      auto s = weak.lock();
      if (s && !s->ended_) fn(*s);
    });
  };
  runtime::RunnerCallbacks cb;
  cb.send = [on_io](std::vector<runtime::OutgoingValue> values, uint64_t iteration,
                    bool converged) {
    on_io([values = std::move(values), iteration, converged](TaskSession& s) mutable {
      s.QueueValues(std::move(values), iteration, converged);
    });
  };
  cb.local_convergence = [on_io](bool converged, uint64_t iteration) {
    on_io([=](TaskSession& s) { s.SendLocalConvergence(converged, iteration); });
  };
  cb.progress = [on_io](uint64_t iteration, double change, bool converged,
                        const runtime::TaskMeasures& m) {
    // Only noted here: the host sends it on its own clock, however long an iteration takes.
    on_io([=](TaskSession& s) {
      s.progress_iteration_ = iteration;
      s.progress_change_ = change;
      s.progress_converged_ = converged;
      s.progress_measures_ = m;
    });
  };
  cb.moved = [on_io](runtime::MoveReport r) {
    on_io([r = std::move(r)](TaskSession& s) { s.SendMoved(r); });
  };
  // The checksum and the signature are made here, on the task's thread, where the state was
  // made: a restore then verifies the state against what this daemon saw, whatever happened on
  // the way and on the backup's disk, and the io thread never hashes a large state.
  cb.checkpoint = [on_io, job = job_, task = task_, incarnation = incarnation_, signer = signer_](
                      std::string state, uint64_t iteration) {
    auto c = checkpoint::MakeCheckpoint(job, task, incarnation, iteration, std::move(state));
    if (signer) {
      c.proof =
          checkpoint::EncodeProof(checkpoint::ProveCheckpoint(signer->key, signer->capability, c));
    }
    on_io([c = std::move(c)](TaskSession& s) mutable { s.QueueCheckpoint(std::move(c)); });
  };
  cb.answer = [on_io](uint64_t round, bool converged) {
    on_io([=](TaskSession& s) { s.SendAnswer(round, converged); });
  };
  cb.snapshot = [on_io](uint64_t round, std::string slice, uint64_t iteration) {
    on_io([round, slice = std::move(slice), iteration](TaskSession& s) {
      s.SendSnapshot(round, slice, iteration);
    });
  };
  cb.finished = [on_io](Result<std::string> slice, uint64_t iterations) {
    on_io([slice = std::move(slice), iterations](TaskSession& s) mutable {
      s.Finish(std::move(slice), iterations);
    });
  };
  return cb;
}

void TaskSession::QueueValues(std::vector<runtime::OutgoingValue> values, uint64_t iteration,
                              bool converged) {
  for (auto& v : values) {
    auto it = links_.find(v.to);
    if (it == links_.end()) continue;
    OutLink& link = *it->second;
    if (!link.keep_all) link.pending.clear();  // newest wins
    link.pending.push_back({iteration, std::move(v.bytes), converged, v.seen, v.seen_incarnation});
    link.wake->cancel();
  }
}

void TaskSession::Adopted() {
  if (last_local_) SendLocalConvergence(last_local_->first, last_local_->second);
}

void TaskSession::SendLocalConvergence(bool converged, uint64_t iteration) {
  last_local_ = {converged, iteration};
  port_.send([&](proto::Envelope::Builder e) {
    auto c = e.initLocalConvergence();
    c.setJob(job_);
    c.setTask(task_);
    c.setConverged(converged);
    c.setIteration(iteration);
    c.setIncarnation(incarnation_);
  });
}

void TaskSession::SendMoved(const runtime::MoveReport& r) {
  moves_applied_ = std::max(moves_applied_, r.moves);
  port_.send([&](proto::Envelope::Builder e) {
    auto m = e.initItemsMoved();
    m.setJob(job_);
    m.setTask(task_);
    m.setMove(r.move);
    m.setKind(runtime::ToProto(r.kind));
    m.setIncarnation(incarnation_);
    if (!r.error.ok()) m.setError(r.error.message());
    m.setItems(AsBytes(r.items));
    m.setCount(r.count);
    m.setItemsAfter(r.items_after);
    m.setMoves(r.moves);
  });
  if (r.error.ok() && r.kind == runtime::MoveKind::kExport && r.count > 0 && port_.exported) {
    port_.exported(r.move, r.items);
  }
  if (!r.error.ok()) {
    log_->warn("job {}: move {} of task {} refused: {}", job_, r.move, task_, r.error.message());
  } else if (r.kind != runtime::MoveKind::kConfirm) {
    log_->debug("job {}: move {}: task {} {} {} items, holds {}", job_, r.move, task_,
                r.kind == runtime::MoveKind::kExport   ? "gave"
                : r.kind == runtime::MoveKind::kImport ? "took"
                                                       : "dropped",
                r.count, r.items_after);
  }
}

void TaskSession::QueueCheckpoint(checkpoint::Checkpoint c) {
  for (auto& backup : backups_) {
    backup->pending = c;
    backup->wake->cancel();
  }
}

void TaskSession::SendAnswer(uint64_t round, bool converged) {
  port_.send([&](proto::Envelope::Builder e) {
    auto a = e.initConvergenceAnswer();
    a.setJob(job_);
    a.setTask(task_);
    a.setRound(round);
    a.setConverged(converged);
    a.setIncarnation(incarnation_);
  });
}

void TaskSession::SendSnapshot(uint64_t round, const std::string& slice, uint64_t iteration) {
  port_.send([&](proto::Envelope::Builder e) {
    auto d = e.initSnapshotData();
    d.setJob(job_);
    d.setTask(task_);
    d.setRound(round);
    d.setIteration(iteration);
    d.setIncarnation(incarnation_);
    d.setData(AsBytes(slice));
  });
}

void TaskSession::Finish(Result<std::string> slice, uint64_t iterations) {
  if (slice.ok() || BackupsIdle()) {
    SendResult(slice, iterations);
    return;
  }
  // Its replacement restores the newest checkpoint its backups hold: the one that this daemon
  // made last may still wait to go, or be on its way (a crash soon after the start comes
  // before the first connection to a backup is up).
  log_->debug("job {}: task {} failed; its result waits for its checkpoints to reach its backups",
              job_, task_);
  held_result_ = [this, slice = std::move(slice), iterations] { SendResult(slice, iterations); };
  hold_timer_ = std::make_unique<net::asio::steady_timer>(io_, kFlushLimit);
  hold_timer_->async_wait([weak = weak_from_this()](const std::error_code& ec) {
    auto s = weak.lock();
    if (ec || !s || s->ended_ || !s->held_result_) return;
    s->log_->warn("job {}: task {}'s last checkpoint did not reach every backup within {} s",
                  s->job_, s->task_, kFlushLimit.count());
    std::exchange(s->held_result_, nullptr)();
  });
}

bool TaskSession::BackupsIdle() const {
  for (const auto& backup : backups_) {
    if (backup->pending || backup->sending) return false;
  }
  return true;
}

void TaskSession::BackupIdle() {
  if (ended_ || !held_result_ || !BackupsIdle()) return;
  hold_timer_->cancel();
  std::exchange(held_result_, nullptr)();
}

void TaskSession::SendResult(const Result<std::string>& slice, uint64_t iterations) {
  const std::optional<AppCrash> crash =
      !slice.ok() && child_ ? child_->crash() : std::optional<AppCrash>();
  port_.send([&](proto::Envelope::Builder e) {
    auto r = e.initResult();
    r.setJob(job_);
    r.setTask(task_);
    r.setIterations(iterations);
    r.setIncarnation(incarnation_);
    r.setCheckpoints(checkpoints_);
    r.setCheckpointBytes(checkpoint_bytes_);
    if (slice.ok()) {
      r.setData(AsBytes(*slice));
    } else {
      r.setError(slice.status().message());
    }
    r.setDiverged(!slice.ok() && slice.status().code() == StatusCode::kDiverged);
    // The runner's last progress came just before its result (runtime/task_runner.h).
    runtime::ToProto(progress_measures_.profile, r.initProfile());
    if (crash) {
      auto c = r.initCrash();
      c.setCrashed(true);
      c.setCause(crash->cause);
      c.setIteration(iterations);
      c.setStderrTail(crash->stderr_tail);
    }
  });
  if (crash) {
    log_->warn("job {}: task {}'s app crashed after iteration {}: {}; this daemon goes on", job_,
               task_, iterations, crash->cause);
  } else if (!slice.ok()) {
    log_->warn("job {}: task {} failed: {}", job_, task_, slice.status().message());
  }
  port_.ended(crash ? "its app crashed" : slice.ok() ? "halted" : "failed");
}

bool TaskSession::Deliver(const std::string& sender, proto::DependencyData::Reader values) {
  if (ended_) return true;  // late: dropped, and not the sender's fault
  auto it = senders_.find(values.getFromTask());
  if (it == senders_.end() || it->second != sender) return false;
  runner_->Put(values.getFromTask(), values.getIteration(), AsString(values.getData()),
               values.getConverged(), values.getSeen(),
               std::max<uint64_t>(values.getIncarnation(), 1),
               std::max<uint64_t>(values.getSeenIncarnation(), 1));
  return true;
}

bool TaskSession::Move(const NeighbourMove& m) {
  if (m.job != job_) return false;
  auto ep = ParseEndpoint(m.address);
  if (!ep.ok() || !CheckName("daemon id", m.daemon).ok()) {
    log_->warn("job {}: ignored a move of task {} to a bad address or id", job_, m.task);
    return false;
  }
  log_->info("job {}: task {} moved to daemon {} at {} (incarnation {})", job_, m.task, m.daemon,
             ep->ToString(), m.incarnation);
  if (auto link = links_.find(m.task); link != links_.end()) {
    link->second->address = *ep;
    link->second->daemon = m.daemon;
    if (link->second->conn) link->second->conn->Close();
    link->second->wake->cancel();
  }
  if (auto sender = senders_.find(m.task); sender != senders_.end()) sender->second = m.daemon;
  group_.Moved(m.task, *ep, m.daemon);
  // The new daemon takes over the dead one's role as a backup of this task.
  for (auto& backup : backups_) {
    if (backup->daemon != m.previous) continue;
    backup->address = *ep;
    backup->daemon = m.daemon;
    backup->stored = 0;
    if (backup->conn) backup->conn->Close();
    backup->wake->cancel();
  }
  return true;
}

void TaskSession::Acknowledged(uint64_t bytes) {
  ++checkpoints_;
  checkpoint_bytes_ += bytes;
}

void TaskSession::TrimValues(uint32_t to, uint64_t before) {
  auto it = links_.find(to);
  if (it == links_.end()) return;
  OutLink& link = *it->second;
  link.log.Trim(before);
  while (!link.pending.empty() && link.pending.front().iteration < before) link.pending.pop_front();
}

uint64_t TaskSession::safe_checkpoint() const {
  if (backups_.empty()) return 0;
  uint64_t safe = UINT64_MAX;
  for (const auto& backup : backups_) safe = std::min(safe, backup->stored);
  return safe;
}

uint64_t TaskSession::value_log_from() const {
  uint64_t from = log_start_;
  for (const auto& [t, link] : links_) {
    if (link->log.dropped_through() > 0) from = std::max(from, link->log.dropped_through() + 1);
  }
  return from;
}

void TaskSession::ReportProgress(double run_queue_mean, double run_queue_std,
                                 const std::vector<LinkReport>& links,
                                 const std::function<bool(const EnvelopeFill&)>& to_coordinator) {
  auto fill = [&](proto::TaskProgress::Builder p) {
    FillProgress(p, run_queue_mean, run_queue_std, links);
  };
  if (group_.coordinator() && group_.gathered() > 0) {
    port_.send([&](proto::Envelope::Builder e) {
      auto g = e.initGroupReports();
      g.setJob(job_);
      auto reports = g.initReports(static_cast<unsigned>(1 + group_.gathered()));
      fill(reports[0]);
      group_.TakeInto(reports, 1);
    });
    return;
  }
  auto report = [&](proto::Envelope::Builder e) { fill(e.initTaskProgress()); };
  if (to_coordinator && group_.coordinator_of_member() && to_coordinator(report)) return;
  port_.send(report);
}

bool TaskSession::GatherReport(const std::string& sender, proto::TaskProgress::Reader report) {
  return !ended_ && group_.Gather(job_, sender, report);
}

void TaskSession::FillProgress(proto::TaskProgress::Builder p, double run_queue_mean,
                               double run_queue_std, const std::vector<LinkReport>& links) const {
  p.setJob(job_);
  p.setTask(task_);
  p.setIteration(progress_iteration_);
  p.setLocalChange(progress_change_);
  p.setConverged(progress_converged_);
  p.setCheckpoints(checkpoints_);
  p.setCheckpointBytes(checkpoint_bytes_);
  p.setIncarnation(incarnation_);
  p.setSafeCheckpoint(safe_checkpoint());
  p.setValueLogFrom(value_log_from());
  p.setWorkDone(progress_measures_.work_done);
  p.setRemainingWork(progress_measures_.remaining);
  p.setItems(progress_measures_.items);
  p.setMoves(progress_measures_.moves);
  p.setBusySeconds(progress_measures_.active_s);
  runtime::ToProto(progress_measures_.profile, p.initProfile());
  p.setRunQueueMean(run_queue_mean);
  p.setRunQueueStd(run_queue_std);
  auto out = p.initLinks(static_cast<unsigned>(links.size()));
  for (unsigned i = 0; i < out.size(); ++i) {
    out[i].setDaemonId(links[i].daemon);
    out[i].setAlpha(links[i].alpha);
    out[i].setSecondsPerByte(links[i].seconds_per_byte);
    out[i].setSamples(links[i].samples);
  }
}

TaskSession::Retired TaskSession::End() {
  if (ended_) return {};
  ended_ = true;
  for (auto& [t, link] : links_) {
    link->wake->cancel();
    if (link->conn) link->conn->Close();
  }
  for (auto& backup : backups_) {
    backup->wake->cancel();
    if (backup->conn) backup->conn->Close();
  }
  if (hold_timer_) hold_timer_->cancel();
  held_result_ = nullptr;
  runner_->Halt();
  return {std::move(keep_loaded_), std::move(app_), std::move(runner_)};
}

}  // namespace aiac::daemon
