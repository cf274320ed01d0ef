#include "spawner/supervisor.h"

#include <algorithm>
#include <cmath>

#include "core/printable.h"
#include "core/sha256.h"
#include "net/capnp_bytes.h"
#include "net/hello.h"
#include "runtime/move_kind_wire.h"
#include "runtime/plugin.h"
#include "runtime/task_profile_wire.h"
#include "runtime/task_state.h"
#include "spawner/spawner_metrics.h"

namespace aiac::spawner {

namespace {

// The task incarnation a daemon's report speaks for; nullopt for messages that carry none.
std::optional<uint64_t> IncarnationOf(proto::Envelope::Reader env) {
  if (env.isTaskProgress()) return env.getTaskProgress().getIncarnation();
  if (env.isLocalConvergence()) return env.getLocalConvergence().getIncarnation();
  if (env.isConvergenceAnswer()) return env.getConvergenceAnswer().getIncarnation();
  if (env.isResult()) return env.getResult().getIncarnation();
  if (env.isSnapshotData()) return env.getSnapshotData().getIncarnation();
  if (env.isItemsMoved()) return env.getItemsMoved().getIncarnation();
  return std::nullopt;
}

}  // namespace

Supervisor::Supervisor(SupervisorSettings settings, std::unique_ptr<Deployment> deployment,
                       SupervisorPort port, Logger log)
    : settings_(std::move(settings)),
      deployment_(std::move(deployment)),
      port_(std::move(port)),
      log_(std::move(log)),
      tasks_(deployment_->tasks()),
      detector_(static_cast<uint32_t>(deployment_->tasks()),
                runtime::ConvergenceDetector::RoundBase(settings_.spawner_incarnation)),
      snapshot_round_(runtime::ConvergenceDetector::RoundBase(settings_.spawner_incarnation)),
      ledger_(deployment_->tasks()) {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    tasks_[t].outcome.task = static_cast<uint32_t>(t);
    tasks_[t].outcome.daemon = deployment_->task(t).daemon;
    tasks_[t].outcome.address = deployment_->task(t).address;
  }
}

void Supervisor::SetGroups(std::vector<std::vector<uint32_t>> groups) {
  groups_ = std::move(groups);
  group_of_.assign(tasks_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (uint32_t t : groups_[g]) group_of_[t] = static_cast<int>(g);
  }
}

const std::vector<uint32_t>& Supervisor::group(size_t task) const {
  static const std::vector<uint32_t> kNone;
  return task < group_of_.size() && group_of_[task] >= 0
             ? groups_[static_cast<size_t>(group_of_[task])]
             : kNone;
}

void Supervisor::Deploy(SteadyTime now) {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    tasks_[t].reached_at = now;
    port_.connect(t, deployment_->task(t).incarnation);
  }
}

void Supervisor::Restore(bool started, double tighten, uint32_t failures,
                         std::vector<Replacement> replacements, MoveLedger ledger,
                         const std::vector<uint64_t>& trimmed,
                         std::vector<AppCrashReport> app_crashes) {
  ledger_ = std::move(ledger);
  for (const auto& c : app_crashes) {
    if (c.task < tasks_.size()) tasks_[c.task].crashed_on.push_back(c.daemon);
  }
  app_crashes_ = std::move(app_crashes);
  for (size_t t = 0; t < trimmed.size() && t < tasks_.size(); ++t) tasks_[t].trimmed = trimmed[t];
  started_ = started;
  tighten_ = tighten;
  failures_ = failures;
  replacements_ = std::move(replacements);
}

void Supervisor::Adopt(SteadyTime now) {
  resumed_ = true;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    TaskState& s = tasks_[t];
    const TaskPlace& place = deployment_->task(t);
    s.outcome.daemon = place.daemon;
    s.outcome.address = place.address;
    s.reached_at = now;
    if (place.waiting) {
      // Its daemon was lost before the spawner, and no other was found then: replaced now.
      Lose(t, "was lost before the spawner was", now, /*daemon_lost=*/false);
      continue;
    }
    s.adopting = true;
    port_.connect(t, place.incarnation);
  }
}

void Supervisor::OnAdopted(size_t task, proto::TaskReady::Reader r, SteadyTime now) {
  TaskState& s = tasks_[task];
  s.adopting = false;
  if (!r.getAdopted()) {
    // The daemon answered, so it is not lost (a failure counts lost daemons): its task is gone
    // (its orphan time ran out, it restarted, or the lost spawner's assignment never finished
    // its set-up there). Replaced from the task's newest checkpoint.
    const std::string why =
        "kept no task for the resumed spawner: " + Printable(r.getError().cStr(), 300, false);
    log_->warn("job {}: daemon {} (task {}) {}; the task restarts from its newest checkpoint",
               settings_.job_id, s.outcome.daemon, task, why);
    Lose(task, why, now, /*daemon_lost=*/false);
    return;
  }
  s.ready = true;
  for (const auto& [moved, dead] : moved_since_resume_) {
    if (moved != task) TellMoved(task, moved, dead);
  }
  // Steps the lost spawner sent it may have died with that spawner's link: the journal's steps
  // after the move sequence its daemon last heard of go again (a step it took is answered again).
  if (std::vector<MoveStep> replay = ledger_.Replay(task, r.getRestoredMoves()); !replay.empty()) {
    log_->info("job {}: task {} is at item move {}: {} move steps to take again", settings_.job_id,
               task, r.getRestoredMoves(), replay.size());
    Apply({std::move(replay), std::nullopt, ""}, now);
  }
  log_->info("job {}: task {} adopted on daemon {} (incarnation {}{})", settings_.job_id, task,
             s.outcome.daemon, deployment_->task(task).incarnation,
             r.getStarted() ? ", iterating" : "");
  if (started_ && !r.getStarted())
    port_.send(task,
               [&](proto::Envelope::Builder e) { e.initStartTask().setJob(settings_.job_id); });
  Changed();
}

void Supervisor::ResumeMoves(SteadyTime now) {
  const std::vector<MoveStep> steps = ledger_.Resend();
  if (steps.empty()) return;
  for (const MoveStep& step : steps) {
    log_->info("job {}: move {} was under way: its {} goes to task {} again", settings_.job_id,
               step.move.move, step.move.kind == runtime::MoveKind::kExport ? "export" : "import",
               step.task);
    // Its route, if it had one, died with the lost spawner: the items go through this one.
    moves_[step.move.move].started = now;
  }
  Apply({steps, std::nullopt, ""}, now);
}

std::vector<uint64_t> Supervisor::trimmed() const {
  std::vector<uint64_t> out;
  for (const auto& s : tasks_) out.push_back(s.trimmed);
  return out;
}

bool Supervisor::Current(size_t task, uint64_t incarnation) const {
  return failure_.empty() && deployment_->task(task).incarnation == incarnation;
}

void Supervisor::OnConnected(size_t task, uint64_t incarnation, SteadyTime now) {
  if (!Current(task, incarnation)) return;
  TaskState& s = tasks_[task];
  s.connected = true;
  s.version = port_.version ? port_.version(task) : net::kProtocolVersion;
  s.last_heard = s.reached_at = now;
}

void Supervisor::OnUnreachable(size_t task, uint64_t incarnation, const std::string& why,
                               SteadyTime now) {
  // Granted but unreachable (killed since it registered, say): replaced like a lost one.
  if (Current(task, incarnation)) Lose(task, "unreachable: " + why, now);
}

void Supervisor::OnLost(size_t task, uint64_t incarnation, const std::string& why, SteadyTime now) {
  if (!Current(task, incarnation)) return;
  tasks_[task].connected = false;
  if (!tasks_[task].outcome.finished) Lose(task, "lost: " + why, now);
}

void Supervisor::OnReport(size_t task, uint64_t incarnation, proto::Envelope::Reader env,
                          SteadyTime now) {
  if (!Current(task, incarnation)) return;
  TaskState& s = tasks_[task];
  s.last_heard = now;
  // Fencing: a report of another incarnation of the task never counts (logged once).
  if (auto from = IncarnationOf(env); from && *from != incarnation) {
    if (s.stale_logged != incarnation) {
      log_->warn(
          "job {}: dropped a report of task {} from incarnation {} on daemon {} (current {})",
          settings_.job_id, task, *from, s.outcome.daemon, incarnation);
      s.stale_logged = incarnation;
    }
    return;
  }
  const std::string who = "daemon " + s.outcome.daemon;
  if (env.isRefuse()) {
    // The daemon closes on us for something we sent (a frame over its max_frame_bytes, say):
    // any daemon would, so the run fails with its reason instead of replacing it.
    Fail(who + " (task " + std::to_string(task) +
         ") closed the connection: " + Printable(env.getRefuse().getReason().cStr(), 300, false));
  } else if (env.isTaskReady()) {
    OnReady(task, env.getTaskReady(), now);
  } else if (env.isTaskProgress()) {
    OnProgress(task, env.getTaskProgress(), now);
  } else if (env.isGroupReports()) {
    OnGroupReports(task, env.getGroupReports(), now);
  } else if (env.isItemsMoved()) {
    OnItemsMoved(task, env.getItemsMoved(), now);
  } else if (env.isLocalConvergence()) {
    auto c = env.getLocalConvergence();
    s.outcome.iterations = std::max(s.outcome.iterations, c.getIteration());
    detector_.OnLocal(static_cast<uint32_t>(task), c.getConverged());
    OnConvergenceEvent(now);
  } else if (env.isConvergenceAnswer()) {
    auto a = env.getConvergenceAnswer();
    detector_.OnAnswer(static_cast<uint32_t>(task), a.getRound(), a.getConverged());
    OnConvergenceEvent(now);
  } else if (env.isSnapshotData()) {
    auto d = env.getSnapshotData();
    if (d.getRound() == snapshot_round_) {
      s.snapshot = net::AsString(d.getData());
      s.outcome.iterations = std::max(s.outcome.iterations, d.getIteration());
      Changed();
    }
  } else if (env.isResult()) {
    auto r = env.getResult();
    s.outcome.iterations = r.getIterations();
    s.outcome.profile = s.earlier_profile;
    s.outcome.profile += runtime::FromProto(r.getProfile());
    s.outcome.checkpoints = std::max(s.outcome.checkpoints, r.getCheckpoints());
    s.outcome.checkpoint_bytes = std::max(s.outcome.checkpoint_bytes, r.getCheckpointBytes());
    if (r.hasCrash() && r.getCrash().getCrashed()) {
      OnAppCrash(task, r.getCrash(), now);
    } else if (r.getError().size() > 0) {
      Fail(
          "task " + std::to_string(task) + " failed: " + Printable(r.getError().cStr(), 300, false),
          r.getDiverged() ? RunStatus::kDiverged : RunStatus::kFailed);
    } else {
      s.outcome.data = net::AsString(r.getData());
      s.outcome.finished = true;
      Changed();
    }
  }
}

void Supervisor::OnProgress(size_t task, proto::TaskProgress::Reader p, SteadyTime now) {
  TaskState& s = tasks_[task];
  s.outcome.iterations = std::max(s.outcome.iterations, p.getIteration());
  s.change = p.getLocalChange();
  s.outcome.checkpoints = std::max(s.outcome.checkpoints, p.getCheckpoints());
  s.outcome.checkpoint_bytes = std::max(s.outcome.checkpoint_bytes, p.getCheckpointBytes());
  // A relayed report may come after a newer one sent straight (its coordinator was slow).
  if (s.report && (p.getIteration() < s.report->iteration || p.getMoves() < s.report->moves))
    return;
  TaskReport r;
  r.iteration = p.getIteration();
  r.work_done = p.getWorkDone();
  r.remaining = p.getRemainingWork();
  r.items = p.getItems();
  r.moves = p.getMoves();
  r.n_mean = p.getRunQueueMean();
  r.n_std = p.getRunQueueStd();
  r.busy_s = p.getBusySeconds();
  for (auto l : p.getLinks()) {
    r.links.push_back({Printable(l.getDaemonId().cStr(), 128, false), l.getAlpha(),
                       l.getSecondsPerByte(), l.getSamples()});
  }
  s.report = r;
  s.report_at = now;
  if (settings_.sync) {
    s.value_log_from = p.getValueLogFrom();
    TrimSenders(task, p.getSafeCheckpoint());
  }
  s.outcome.profile = s.earlier_profile;
  s.outcome.profile += runtime::FromProto(p.getProfile());
  Record(HistoryEntry::Kind::kReport, task, now, r.iteration, s.change);
  if (r.items >= 0 && !ledger_.busy()) {
    // Every item owned by exactly one task: the counts add up whenever nothing is in transit.
    std::vector<std::pair<int64_t, uint64_t>> counts;
    for (const auto& t : tasks_)
      counts.emplace_back(t.report ? t.report->items : -1, t.report ? t.report->moves : 0);
    if (std::string wrong = ledger_.CheckCounts(counts); !wrong.empty()) Fail(wrong);
  }
}

std::string Supervisor::OldSyncDaemon() const {
  for (const TaskState& t : tasks_) {
    if (t.connected && t.version < net::kSyncReplaceVersion)
      return "daemon " + t.outcome.daemon + " speaks protocol " + std::to_string(t.version);
  }
  return "";
}

void Supervisor::TrimSenders(size_t task, uint64_t safe) {
  TaskState& s = tasks_[task];
  if (!settings_.sync_replaces || safe <= s.trimmed) return;
  s.trimmed = safe;
  Persist();  // a resumed spawner must not count on values dropped now
  for (uint32_t sender : deployment_->senders(task)) {
    // A daemon of an older protocol keeps no values, and would take the message for an attack.
    if (!tasks_[sender].connected || tasks_[sender].version < net::kSyncReplaceVersion) continue;
    port_.send(sender, [&](proto::Envelope::Builder e) {
      auto t = e.initTrimValues();
      t.setJob(settings_.job_id);
      t.setTask(static_cast<uint32_t>(task));
      t.setIteration(safe);
    });
  }
}

std::string Supervisor::SyncResumeProblem(size_t task, uint64_t restored) const {
  const std::string name = "task " + std::to_string(task);
  // Its iteration restored + 1 takes its senders' values of iteration `restored`.
  const uint64_t need = std::max<uint64_t>(restored, 1);
  for (uint32_t j : deployment_->senders(task)) {
    const TaskState& sender = tasks_[j];
    // One being replaced too is checked when it is restored, as this task's sender.
    if (!sender.ready) continue;
    const uint64_t holds =
        std::max({tasks_[task].trimmed, sender.value_log_from, sender.log_start});
    if (holds > need) {
      return name + " restored at iteration " + std::to_string(restored) + " needs task " +
             std::to_string(j) + "'s values from iteration " + std::to_string(need) +
             ", which holds them only from iteration " + std::to_string(holds) +
             (sender.value_log_from > need
                  ? " (its logs begin there: it was restored itself, or value_log_mb is too small)"
                  : "");
    }
  }
  // What the restored task sends first (task_state.h): its values of its checkpoint's last two
  // iterations.
  const uint64_t sends_from = runtime::FirstResentIteration(restored);
  if (sends_from <= 1) return "";
  for (size_t r = 0; r < tasks_.size(); ++r) {
    const auto& senders = deployment_->senders(r);
    if (r == task || !tasks_[r].ready ||
        std::find(senders.begin(), senders.end(), task) == senders.end())
      continue;
    // A neighbour both ways runs in step with it: it needs the value of an iteration at least
    // the dead daemon's last but one, never before `sends_from`. Unless it was itself restored
    // from an older checkpoint and may still be catching up; and a receiver only may lag behind
    // without bound. Those are judged by their last report (a lower bound).
    const auto& ours = deployment_->senders(task);
    const bool both_ways = std::find(ours.begin(), ours.end(), r) != ours.end();
    const TaskState& receiver = tasks_[r];
    if (both_ways && (receiver.log_start == 0 || receiver.restored_at >= sends_from)) continue;
    const uint64_t needs = std::max(receiver.outcome.iterations, receiver.restored_at);
    if (needs < sends_from) {
      return "task " + std::to_string(r) + " may still need " + name + "'s values from iteration " +
             std::to_string(needs) + ", and " + name + " restored at iteration " +
             std::to_string(restored) + " sends them only from iteration " +
             std::to_string(sends_from);
    }
  }
  return "";
}

void Supervisor::OnGroupReports(size_t task, proto::GroupReports::Reader g, SteadyTime now) {
  const std::vector<uint32_t>& group = this->group(task);
  if (group.empty() || group.front() != task || g.getJob() != settings_.job_id) {
    if (!bad_group_report_logged_) {
      log_->warn(
          "job {}: ignored group reports from daemon {}, which does not coordinate task {}'s group",
          settings_.job_id, tasks_[task].outcome.daemon, task);
      bad_group_report_logged_ = true;
    }
    return;
  }
  for (auto p : g.getReports()) {
    const uint32_t t = p.getTask();
    if (std::find(group.begin(), group.end(), t) == group.end()) {
      if (!bad_group_report_logged_) {
        log_->warn(
            "job {}: ignored a report of task {} from daemon {}, the coordinator of another group",
            settings_.job_id, t, tasks_[task].outcome.daemon);
        bad_group_report_logged_ = true;
      }
      continue;
    }
    // Only for the incarnation that owns the task now: a report the coordinator had from a
    // dead daemon does not keep its replacement alive.
    if (!Current(t, p.getIncarnation())) continue;
    if (t != task) ++relayed_reports_;
    tasks_[t].last_heard = std::max(tasks_[t].last_heard, now);
    OnProgress(t, p, now);
  }
}

void Supervisor::OnReady(size_t task, proto::TaskReady::Reader r, SteadyTime now) {
  TaskState& s = tasks_[task];
  if (s.adopting) {
    OnAdopted(task, r, now);
    return;
  }
  if (r.getSuperseded()) {
    // A newer spawner took the job over (`aiac-spawner resume` elsewhere): this one stops at
    // once, without halting or releasing what is no longer its own.
    superseded_ = true;
    Fail("daemon " + s.outcome.daemon + ": " + Printable(r.getError().cStr(), 300, false));
    return;
  }
  if (r.getNeedPlugin()) {
    port_.send_plugin(task);
    return;
  }
  if (r.getError().size() > 0 && r.hasCrash() && r.getCrash().getCrashed()) {
    OnAppCrash(task, r.getCrash(), now);  // its app crashed while it was set up
    return;
  }
  if (r.getError().size() > 0 && resumed_ && s.replacement >= 0) {
    // A spare of a resumed job may have been freed while no spawner held it, and taken by
    // another job since: the task goes to the next one.
    Lose(task, "refused the task: " + Printable(r.getError().cStr(), 300, false), now);
    return;
  }
  if (r.getError().size() > 0) {
    Fail("daemon " + s.outcome.daemon + " refused task " + std::to_string(task) + ": " +
         Printable(r.getError().cStr(), 300, false));
    return;
  }
  s.ready = true;
  if (r.getNotes().size() > 0) {
    const std::string note =
        "task " + std::to_string(task) + ": " + Printable(r.getNotes().cStr(), 300, false);
    if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) {
      log_->info("job {}: {}", settings_.job_id, note);
      notes_.push_back(note);
    }
  }
  if (s.replacement >= 0) {
    auto& rep = replacements_[static_cast<size_t>(s.replacement)];
    rep.restored_iteration = r.getRestoredIteration();
    rep.seconds_to_resume = Seconds(now - s.failed_at);
    SpawnerMetrics::Get().resume_seconds.Observe(rep.seconds_to_resume);
    s.outcome.iterations = rep.restored_iteration;
    s.replacement = -1;
    if (settings_.sync) {
      std::string problem = OldSyncDaemon();
      if (!problem.empty()) {
        problem += ", which keeps no values for a replacement (it needs " +
                   std::to_string(net::kSyncReplaceVersion) + ")";
      } else {
        problem = SyncResumeProblem(task, rep.restored_iteration);
      }
      if (!problem.empty()) {
        Fail("sync run cannot go on: " + problem);
        return;
      }
      s.restored_at = rep.restored_iteration;
      s.log_start = runtime::FirstResentIteration(rep.restored_iteration);
      s.value_log_from = 0;
    }
    Record(HistoryEntry::Kind::kResumed, task, now, rep.restored_iteration);
    log_->info("job {}: task {} resumes on daemon {} from iteration {}, {:.2f} s after the loss",
               settings_.job_id, task, s.outcome.daemon, rep.restored_iteration,
               rep.seconds_to_resume);
    // Its checkpoint may be from before item moves it took part in, or hold an export whose
    // reply was lost: the ledger's steps bring it to what the other tasks assume.
    std::vector<runtime::ExportedItems> outbox;
    for (auto x : r.getOutbox())
      outbox.push_back({x.getMove(), x.getMoves(), x.getCount(), net::AsString(x.getItems())});
    const LedgerOutcome restored = ledger_.OnRestored(task, r.getRestoredMoves(), outbox);
    if (!restored.send.empty() || r.getRestoredMoves() > 0) {
      log_->info("job {}: task {} restored at item move {}: {} move steps to take again",
                 settings_.job_id, task, r.getRestoredMoves(), restored.send.size());
    }
    Apply(restored, now);
  }
  if (started_)
    port_.send(task,
               [&](proto::Envelope::Builder e) { e.initStartTask().setJob(settings_.job_id); });
  Changed();
}

void Supervisor::OnItemsMoved(size_t task, proto::ItemsMoved::Reader m, SteadyTime now) {
  MoveReply reply;
  reply.move = m.getMove();
  reply.kind = runtime::FromProto(m.getKind());
  reply.error = Printable(m.getError().cStr(), 300, false);
  reply.items = net::AsString(m.getItems());
  reply.count = m.getCount();
  reply.items_after = m.getItemsAfter();
  reply.moves = m.getMoves();
  Apply(ledger_.OnReply(task, reply), now);
}

void Supervisor::Apply(const LedgerOutcome& outcome, SteadyTime now) {
  Persist();  // the ledger changed: stored before its steps go out
  for (const MoveStep& step : outcome.send) {
    const TaskState& s = tasks_[step.task];
    if (!s.connected || !s.ready) continue;  // being replaced: OnRestored gives it its steps
    auto under_way = moves_.find(step.move.move);
    MoveUnderWay* m = under_way == moves_.end() ? nullptr : &under_way->second;
    const bool routed = m && m->routed && !m->direct;
    const bool routed_export =
        routed && step.move.kind == runtime::MoveKind::kExport && step.task == m->path.front();
    const bool routed_import =
        routed && step.move.kind == runtime::MoveKind::kImport && step.task == m->path.back();
    port_.send(step.task, [&](proto::Envelope::Builder e) {
      auto mi = e.initMoveItems();
      mi.setJob(settings_.job_id);
      mi.setTask(static_cast<uint32_t>(step.task));
      mi.setMove(step.move.move);
      mi.setKind(runtime::ToProto(step.move.kind));
      mi.setWork(step.move.work);
      mi.setTo(step.move.to);
      if (routed_import) {
        // The items come daemon to daemon: only their hash from here.
        mi.setSha256(net::AsBytes(Sha256(step.move.items)));
      } else {
        mi.setItems(net::AsBytes(step.move.items));
      }
      if (routed_export) {
        auto hops = mi.initRoute(static_cast<unsigned>(m->path.size() - 1));
        for (unsigned i = 0; i < hops.size(); ++i) {
          const size_t t = m->path[i + 1];
          hops[i].setTask(static_cast<uint32_t>(t));
          hops[i].setAddress(tasks_[t].outcome.address);
          hops[i].setDaemonId(tasks_[t].outcome.daemon);
        }
      }
    });
    if (routed_import) m->import_named = now;
  }
  if (outcome.completed) {
    const CompletedMove& c = *outcome.completed;
    std::string way = "through the spawner";
    SteadyTime started = now;
    if (auto m = moves_.find(c.move); m != moves_.end()) {
      started = m->second.started;
      if (m->second.routed && !m->second.direct) {
        way = "daemon to daemon";
        const auto& path = m->second.path;
        for (size_t i = 1; i + 1 < path.size(); ++i) {
          way += (i == 1 ? ", through gateways " : ", ") + tasks_[path[i]].outcome.daemon;
        }
      }
      moves_.erase(m);
    }
    if (c.abandoned) {
      log_->warn("job {}: move {} from task {} to task {} abandoned: {}", settings_.job_id, c.move,
                 c.from, c.to, c.why);
    } else {
      log_->info("job {}: move {}: {} items from task {} to task {} in {:.3f} s, {}",
                 settings_.job_id, c.move, c.count, c.from, c.to, Seconds(now - started), way);
      // It holds other work now: whatever it said of its convergence before no longer counts.
      // (Only when it imported something: its runner then reports its convergence anew; an
      // export of no item never reaches the target, which would stay withdrawn for good.)
      if (c.count > 0) {
        detector_.Withdraw(static_cast<uint32_t>(c.to));
        ForgetDetection();
      }
      Record(HistoryEntry::Kind::kMove, c.from, now, 0, 0, c.count);
    }
    completed_moves_.emplace_back(c, Seconds(now - started));
  }
  if (!outcome.error.empty()) Fail(outcome.error);
  Changed();
}

Supervisor::MoveStart Supervisor::BeginMove(size_t from, size_t to, double work, SteadyTime now,
                                            std::optional<std::vector<size_t>> via) {
  if (halting_ || !failure_.empty() || from == to || from >= tasks_.size() || to >= tasks_.size()) {
    return MoveStart::kRefused;
  }
  for (size_t t : {from, to}) {
    if (!tasks_[t].connected || !tasks_[t].ready || tasks_[t].outcome.finished)
      return MoveStart::kRefused;
  }
  if (ledger_.busy(from) || ledger_.busy(to)) return MoveStart::kBusy;
  MoveUnderWay m;
  m.started = now;
  m.routed = via.has_value();
  m.path.push_back(from);
  if (via) {
    for (size_t t : *via) {
      // A gateway being replaced: this move goes through the spawner.
      if (t >= tasks_.size() || !tasks_[t].connected || !tasks_[t].ready) m.routed = false;
      m.path.push_back(t);
    }
  }
  m.path.push_back(to);
  if (!m.routed) m.path = {from, to};
  const MoveStep step = ledger_.Begin(from, to, work);
  moves_[step.move.move] = std::move(m);
  Apply({{step}, std::nullopt, ""}, now);
  return MoveStart::kStarted;
}

void Supervisor::SendImportDirectly(uint64_t move, const std::string& why, SteadyTime now) {
  auto m = moves_.find(move);
  if (m == moves_.end() || !m->second.routed || m->second.direct) return;
  m->second.direct = true;
  auto import = ledger_.ImportInFlight(move);
  if (!import) return;  // not exported yet: the import will carry the items
  log_->warn("job {}: move {}: {}; the spawner sends the items itself", settings_.job_id, move,
             why);
  Apply({{*import}, std::nullopt, ""}, now);
}

std::vector<std::pair<CompletedMove, double>> Supervisor::TakeCompletedMoves() {
  std::vector<std::pair<CompletedMove, double>> out;
  out.swap(completed_moves_);
  return out;
}

std::optional<std::pair<TaskReport, SteadyTime>> Supervisor::report(size_t task) const {
  const TaskState& s = tasks_[task];
  if (!s.report) return std::nullopt;
  return std::make_pair(*s.report, s.report_at);
}

void Supervisor::Tick(SteadyTime now) {
  std::vector<uint64_t> late;
  for (const auto& [move, m] : moves_) {
    if (m.routed && !m.direct && m.import_named && now - *m.import_named >= kRouteTimeout)
      late.push_back(move);
  }
  for (uint64_t move : late) {
    SendImportDirectly(move,
                       "its items did not come by their route within " +
                           std::to_string(kRouteTimeout.count()) + " s",
                       now);
  }
  for (size_t t = 0; t < tasks_.size(); ++t) {
    TaskState& s = tasks_[t];
    if (!s.connected || s.outcome.finished || !failure_.empty()) continue;
    if (s.ready && now - s.last_heard >= settings_.failure_timeout) {
      Lose(t,
           "silent for " + std::to_string(settings_.failure_timeout.count()) +
               " ms (failure_timeout_ms)",
           now);
    } else if (!s.ready && now - s.reached_at >= settings_.setup_timeout) {
      // Building a large block may keep a daemon quiet for seconds before its TaskReady, hence a
      // limit of its own for the setup.
      Lose(t,
           "not ready " + std::to_string(settings_.setup_timeout.count()) +
               " ms after its assignment (setup_timeout_ms)",
           now);
    }
  }
}

void Supervisor::Paused(SteadyTime::duration gap, SteadyTime now) {
  log_->warn(
      "job {}: the spawner did not run for at least {:.1f} s (suspended, its host asleep, or "
      "starved): its daemons' silence is counted without that time",
      settings_.job_id, Seconds(gap));
  for (TaskState& s : tasks_) {
    s.last_heard = std::min(s.last_heard + gap, now);
    s.reached_at = std::min(s.reached_at + gap, now);
  }
}

void Supervisor::OnAppCrash(size_t task, proto::AppCrash::Reader c, SteadyTime now) {
  TaskState& s = tasks_[task];
  AppCrashReport report;
  report.task = static_cast<uint32_t>(task);
  report.daemon = s.outcome.daemon;
  report.iteration = c.getIteration();
  report.cause = Printable(c.getCause().cStr(), 200, false);
  // The app's own output, from a daemon: each line made printable, at most 20 of them.
  const std::string tail = c.getStderrTail().cStr();
  std::vector<std::string> lines;
  for (size_t at = 0; at < tail.size() && lines.size() < 20;) {
    const size_t end = std::min(tail.find('\n', at), tail.size());
    if (end > at)
      lines.push_back(Printable(std::string_view(tail).substr(at, end - at), 300, false));
    at = end + 1;
  }
  for (const auto& line : lines)
    report.stderr_tail += (report.stderr_tail.empty() ? "" : "\n") + line;
  app_crashes_.push_back(report);
  if (halting_ || !failure_.empty()) {
    // The run is over (halted after its result, or failed already): recorded, nothing more.
    log_->warn("job {}: task {}'s app crashed on daemon {} after the run ended: {}",
               settings_.job_id, task, report.daemon, report.cause);
    return;
  }
  s.crashed_on.push_back(report.daemon);
  // The line that says most: the last one that is neither a frame of the backtrace nor the
  // child's own "caught SIGx" (the cause says that).
  std::string last;
  for (auto it = lines.rbegin(); it != lines.rend() && last.empty(); ++it) {
    if (it->find("[0x") == std::string::npos && it->rfind("aiac-app-child: ", 0) != 0)
      last = ": " + *it;
  }
  log_->warn("job {}: task {}'s app crashed on daemon {} after iteration {}: {}{}",
             settings_.job_id, task, report.daemon, report.iteration, report.cause, last);
  if (s.crashed_on.size() >= 2) {
    // The same task crashed on two daemons: the app, not a host, is at fault. Ending now keeps
    // the job from eating every spare.
    std::string where;
    for (size_t i = 0; i < s.crashed_on.size(); ++i)
      where += (i == 0 ? "" : i + 1 == s.crashed_on.size() ? " and " : ", ") + s.crashed_on[i];
    Fail("app crashed: " + report.cause + " in task " + std::to_string(task) + " after iteration " +
         std::to_string(report.iteration) + " on " + where + last);
    return;
  }
  Lose(task, "app crashed: " + report.cause, now, /*daemon_lost=*/false);
}

void Supervisor::Lose(size_t task, const std::string& why, SteadyTime now, bool daemon_lost) {
  TaskState& s = tasks_[task];
  const std::string dead = s.outcome.daemon;
  if (!failure_.empty() || halting_) {
    // The run is over (halted, or failed already): its daemons closing is its own shutdown,
    // not a failure to count.
    log_->debug("job {}: daemon {} (task {}) {} after the run ended", settings_.job_id, dead, task,
                why);
    return;
  }
  if (daemon_lost) {
    ++failures_;
    SpawnerMetrics::Get().failures_detected.Add();
    log_->warn("job {}: daemon {} (task {}) {}", settings_.job_id, dead, task, why);
  }
  Record(HistoryEntry::Kind::kFailure, task, now);
  if (settings_.sync && !settings_.sync_replaces) {
    // A task restored at iteration k would wait for values of k + 1 its neighbours sent long ago
    // and no longer keep.
    Fail("daemon " + dead + " (task " + std::to_string(task) + ") " + why +
         "; a synchronous run replaces a daemon only with value_log_mb > 0 and backups > 0");
    return;
  }
  if (settings_.sync) {
    if (const std::string old = OldSyncDaemon(); !old.empty()) {
      Fail("daemon " + dead + " (task " + std::to_string(task) + ") " + why + "; " + old +
           ", and a synchronous run replaces a daemon only when all of its daemons speak " +
           std::to_string(net::kSyncReplaceVersion));
      return;
    }
  }
  // From here on the dead daemon's incarnation is over: the runner stops acting for it, and a
  // paused daemon that comes back reads that it must drop its task (else it would wait for a
  // resumed spawner), then finds its connection closed.
  if (s.connected) {
    port_.send(task, [&](proto::Envelope::Builder e) {
      auto h = e.initHalt();
      h.setJob(settings_.job_id);
      h.setDropped(true);
    });
    port_.close(task);
  }
  s.connected = false;
  std::vector<uint64_t> cut;  // routed moves whose items may be lost on the way
  for (auto& [move, m] : moves_) {
    if (!m.routed || std::count(m.path.begin(), m.path.end(), task) == 0) continue;
    // A lost target gets the items from its restore (OnRestored), not now.
    if (task == m.path.back())
      m.direct = true;
    else
      cut.push_back(move);
  }
  for (uint64_t move : cut)
    SendImportDirectly(move, "daemon " + dead + " on the items' route is lost", now);
  s.ready = false;
  s.adopting = false;
  s.change = 0;
  s.failed_at = now;
  s.snapshot.reset();
  s.report.reset();
  // What the lost daemon did, as its last report said, stays in the task's profile.
  s.earlier_profile = s.outcome.profile;
  detector_.Withdraw(static_cast<uint32_t>(task));
  ForgetDetection();
  // The mapping picks the replacement among the granted daemons no task runs on (deployment.h);
  // when none is free, a super-node is asked for one.
  if (deployment_->Lose(task)) {
    Move(task, dead);
  } else {
    Persist();
    log_->info("job {}: no granted daemon is free for task {}; asking the super-node for one",
               settings_.job_id, task);
    port_.request_daemon(task, deployment_->task(task).incarnation,
                         "daemon " + dead + " (task " + std::to_string(task) + ") " + why);
  }
  Changed();
}

bool Supervisor::AddDaemons(size_t task, uint64_t incarnation,
                            const std::vector<GrantedDaemon>& daemons, SteadyTime now) {
  if (!Current(task, incarnation) || !deployment_->task(task).waiting) return false;
  deployment_->AddGranted(daemons);
  const std::string dead = tasks_[task].outcome.daemon;  // Move overwrites it
  if (!deployment_->Place(task)) return false;
  tasks_[task].reached_at = now;
  Move(task, dead);
  return true;
}

void Supervisor::Move(size_t task, const std::string& dead) {
  TaskState& s = tasks_[task];
  const TaskPlace& next = deployment_->task(task);
  s.outcome.daemon = next.daemon;
  s.outcome.address = next.address;
  s.replacement = static_cast<int>(replacements_.size());
  replacements_.push_back({static_cast<uint32_t>(task), dead, next.daemon, 0, -1});
  // Stored before anyone hears of it: a resumed spawner adopts the new incarnation or replaces it.
  Persist();
  SpawnerMetrics::Get().replacements.Add();
  log_->info("job {}: task {} goes to daemon {} (incarnation {})", settings_.job_id, task,
             next.daemon, next.incarnation);
  // Every other daemon first learns where the task went (its values, its checkpoints, and the
  // dead daemon's role as a backup); then the replacement gets the task.
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (t != task && tasks_[t].connected) TellMoved(t, task, dead);
  }
  // A task still being adopted may not be connected yet: it hears of the move once adopted.
  if (resumed_) moved_since_resume_[task] = dead;
  port_.connect(task, next.incarnation);
}

void Supervisor::TellMoved(size_t to, size_t task, const std::string& dead) {
  const TaskPlace& next = deployment_->task(task);
  port_.send(to, [&](proto::Envelope::Builder e) {
    auto m = e.initNeighbourMoved();
    m.setJob(settings_.job_id);
    m.setTask(static_cast<uint32_t>(task));
    m.setAddress(next.address);
    m.setDaemonId(next.daemon);
    m.setIncarnation(next.incarnation);
    m.setPreviousDaemonId(dead);
  });
}

void Supervisor::Start() {
  started_ = true;
  Persist();
  SendAll([&](proto::Envelope::Builder e) { e.initStartTask().setJob(settings_.job_id); });
}

uint64_t Supervisor::RequestSnapshots() {
  const uint64_t round = ++snapshot_round_;
  for (auto& s : tasks_) s.snapshot.reset();
  SendAll([&](proto::Envelope::Builder e) {
    auto q = e.initSnapshot();
    q.setJob(settings_.job_id);
    q.setRound(round);
  });
  return round;
}

bool Supervisor::SnapshotsComplete() const {
  return std::all_of(tasks_.begin(), tasks_.end(),
                     [](const TaskState& s) { return s.snapshot.has_value(); });
}

std::vector<std::string> Supervisor::TakeSnapshots() {
  std::vector<std::string> slices;
  for (auto& s : tasks_) {
    slices.push_back(s.snapshot ? std::move(*s.snapshot) : std::string());
    s.snapshot.reset();
  }
  return slices;
}

void Supervisor::Tighten(double factor) {
  tighten_ *= factor;
  Persist();
  SendAll([&](proto::Envelope::Builder e) {
    auto t = e.initTighten();
    t.setJob(settings_.job_id);
    t.setFactor(factor);
  });
  detector_.Reset();
  ForgetDetection();
}

void Supervisor::Halt() {
  halting_ = true;
  SendAll([&](proto::Envelope::Builder e) { e.initHalt().setJob(settings_.job_id); });
}

void Supervisor::Fail(const std::string& why, RunStatus status) {
  if (failure_.empty()) {
    failure_ = why;
    failure_status_ = status;
  }
  Changed();
}

bool Supervisor::AllReady() const {
  return std::all_of(tasks_.begin(), tasks_.end(), [](const TaskState& s) { return s.ready; });
}

bool Supervisor::AllFinished() const {
  return std::all_of(tasks_.begin(), tasks_.end(),
                     [](const TaskState& s) { return s.outcome.finished; });
}

std::vector<TaskOutcome> Supervisor::outcomes() const {
  std::vector<TaskOutcome> out;
  for (const auto& s : tasks_) out.push_back(s.outcome);
  return out;
}

SupervisorProgress Supervisor::progress() const {
  SupervisorProgress p;
  p.tasks = static_cast<uint32_t>(tasks_.size());
  p.min_iteration = tasks_.empty() ? 0 : UINT64_MAX;
  for (const auto& s : tasks_) {
    p.min_iteration = std::min(p.min_iteration, s.outcome.iterations);
    p.max_iteration = std::max(p.max_iteration, s.outcome.iterations);
    if (std::isfinite(s.change)) p.max_change = std::max(p.max_change, s.change);
    p.live += s.connected && s.ready;
    p.checkpoints += s.outcome.checkpoints;
  }
  p.converged = detector_.converged_count();
  p.failures = failures_;
  p.replacements = static_cast<uint32_t>(replacements_.size());
  return p;
}

std::vector<net::TaskStatus> Supervisor::TaskStatuses(SteadyTime now) const {
  std::vector<net::TaskStatus> rows;
  rows.reserve(tasks_.size());
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const TaskState& s = tasks_[t];
    net::TaskStatus row;
    row.task = static_cast<uint32_t>(t);
    row.daemon = deployment_->task(t).daemon;
    row.incarnation = deployment_->task(t).incarnation;
    row.iteration = s.outcome.iterations;
    row.change = std::isfinite(s.change) ? s.change : 0;
    row.checkpoints = s.outcome.checkpoints;
    if (s.report) {
      row.report_age_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - s.report_at).count();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> Supervisor::RunningTaskDaemons() const {
  std::vector<std::string> out;
  if (!started_ || !failure_.empty() || detector_.converged()) return out;
  for (const auto& s : tasks_) {
    if (s.ready && s.connected && !s.outcome.finished) out.push_back(s.outcome.daemon);
  }
  return out;
}

std::optional<size_t> Supervisor::TaskOn(const std::string& daemon) const {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (tasks_[t].connected && tasks_[t].outcome.daemon == daemon) return t;
  }
  return std::nullopt;
}

void Supervisor::ForgetDetection() {
  all_converged_at_.reset();
  detection_seconds_ = -1;
}

void Supervisor::OnConvergenceEvent(SteadyTime now) {
  // How long detection takes: from the moment every task was locally converged (for the last
  // time) to the round that confirmed it.
  if (!all_locally_converged()) {
    all_converged_at_.reset();
  } else if (!all_converged_at_) {
    all_converged_at_ = now;
  }
  if (detector_.converged() && detection_seconds_ < 0 && all_converged_at_)
    detection_seconds_ = Seconds(now - *all_converged_at_);
  if (auto round = detector_.RoundToOpen()) {
    log_->debug("job {}: every task locally converged, confirmation round {}", settings_.job_id,
                *round);
    SendAll([&](proto::Envelope::Builder e) {
      auto q = e.initConvergenceQuery();
      q.setJob(settings_.job_id);
      q.setRound(*round);
    });
  }
  if (detector_.converged()) Changed();
}

void Supervisor::SendAll(const EnvelopeFill& fill) {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    if (tasks_[t].connected) port_.send(t, fill);
  }
}

}  // namespace aiac::spawner
