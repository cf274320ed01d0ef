// The decisions of a job while its tasks run, apart from the wire: which daemon is each task's
// live owner and in which incarnation, what a daemon's report means (fenced by incarnation),
// when a daemon is lost (its connection closed, unreachable when dialed, or silent), how a lost
// daemon's task goes to a replacement (the deployment's mapping picks it; every other daemon is
// told first), when the tasks are globally converged (ConvergenceDetector with its confirmation
// round), and the result snapshots of a checking round.
//
// It owns no socket and reads no clock: the job runner dials, sends and reads through a
// SupervisorPort and passes the time of each event in, so the decisions are unit-tested with a
// fake port and a fake clock (tests/unit/spawner/supervisor_test.cc). Not thread-safe: the
// spawner's io thread calls it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/logging.h"
#include "net/job_status.h"
#include "proto/aiac.capnp.h"
#include "runtime/convergence.h"
#include "spawner/deployment.h"
#include "spawner/live_balancing.h"
#include "spawner/move_ledger.h"
#include "spawner/run_summary.h"

namespace aiac::spawner {

using SteadyTime = std::chrono::steady_clock::time_point;
// A steady-clock span in seconds, for logs and the summary.
inline double Seconds(SteadyTime::duration d) { return std::chrono::duration<double>(d).count(); }
using EnvelopeFill = std::function<void(proto::Envelope::Builder)>;

struct SupervisorSettings {
  std::string job_id;
  bool sync = false;
  // A synchronous run replaces a lost daemon: its tasks log the values they send
  // (daemon/value_log.h; job option value_log_mb > 0) and checkpoint (backups > 0).
  bool sync_replaces = false;
  // A ready task's daemon silent this long is lost (daemons report every 250 ms).
  std::chrono::milliseconds failure_timeout{5000};
  // A daemon not ready this long after it was reached is lost (a large block takes seconds).
  std::chrono::milliseconds setup_timeout{30000};
  // This spawner's incarnation for the job (1 for `run`, one more for each `resume`): its
  // confirmation and snapshot rounds are numbered above every earlier incarnation's.
  uint64_t spawner_incarnation = 1;
};

// How the supervisor reaches the daemons; the job runner carries it out.
struct SupervisorPort {
  // Dial the daemon deployment().task(task) names and assign it the task in `incarnation`; the
  // runner answers with OnConnected or OnUnreachable, then OnReport / OnLost.
  std::function<void(size_t task, uint64_t incarnation)> connect;
  // To task's daemon, when it is connected.
  std::function<void(size_t task, const EnvelopeFill& fill)> send;
  // Drop task's connection (its daemon is lost, or fenced off).
  std::function<void(size_t task)> close;
  // Task's daemon asked for the app plugin.
  std::function<void(size_t task)> send_plugin;
  // No granted daemon is free for task's `incarnation`: ask a super-node for one, then
  // AddDaemons (or Fail with `what` when none comes).
  std::function<void(size_t task, uint64_t incarnation, const std::string& what)> request_daemon;
  // Something the run waits for may hold now.
  std::function<void()> changed;
  // Optional: what happened to the tasks, for `run --history` (run_history.h).
  std::function<void(const struct HistoryEntry&)> record;
  // Optional: the protocol version task's daemon agreed on (net/hello.h); unset: the current.
  std::function<uint32_t(size_t task)> version;
  // Optional: what a resumed spawner needs changed (the deployment, started, tightened, a
  // move begun: spawner/job_state.h); called before the change goes out to any daemon.
  std::function<void()> persist;
};

// One event of a task's history: a progress report, its daemon lost, it resumed elsewhere
// (`iteration`: the checkpoint's), or items moved from it (`count`).
struct HistoryEntry {
  enum class Kind { kReport, kFailure, kResumed, kMove };
  Kind kind = Kind::kReport;
  size_t task = 0;
  uint64_t incarnation = 0, iteration = 0, count = 0;
  double change = 0;
  SteadyTime at{};
  uint64_t checkpoints = 0;  // the task's checkpoint copies acknowledged so far
  std::string daemon;        // its daemon then (for kFailure, the one lost)
};

// What the progress line shows.
struct SupervisorProgress {
  uint64_t min_iteration = 0, max_iteration = 0;
  double max_change = 0;
  uint32_t converged = 0, live = 0, tasks = 0;
  uint32_t failures = 0, replacements = 0;
  uint64_t checkpoints = 0;
};

class Supervisor {
 public:
  Supervisor(SupervisorSettings settings, std::unique_ptr<Deployment> deployment,
             SupervisorPort port, Logger log);

  // DistPM's groups (distpm-workload-migration.md section 4.1; spawner/gateways.h ReportGroups):
  // the tasks of each, in task order; the first one's daemon coordinates the group and sends its
  // members' progress reports with its own (GroupReports). Before Deploy; none: every task
  // reports straight to the spawner.
  void SetGroups(std::vector<std::vector<uint32_t>> groups);
  // Task `task`'s group (its coordinator first), empty when it has none: for its AssignTask.
  const std::vector<uint32_t>& group(size_t task) const;
  size_t groups() const { return groups_.size(); }
  // Members' reports that came in a coordinator's GroupReports.
  uint64_t relayed_reports() const { return relayed_reports_; }

  // Dials every task's daemon (port.connect), for incarnation 1.
  void Deploy(SteadyTime now);
  // ---- A resumed spawner (`aiac-spawner resume`, spawner/job_state.h).
  // Before Adopt.
  // What the previous spawner had done: started the tasks, tightened their tests, counted
  // failures and replacements, moved items (its ledger), told senders to drop values and
  // recorded app crashes (a task whose app crashed before counts that daemon: one more crash
  // elsewhere ends the run).
  void Restore(bool started, double tighten, uint32_t failures,
               std::vector<Replacement> replacements, MoveLedger ledger,
               const std::vector<uint64_t>& trimmed, std::vector<AppCrashReport> app_crashes = {});
  // Dials every task's daemon to adopt it (port.connect; the runner sends an AdoptTask while
  // adopting(task)) in the incarnation the deployment gives; a task whose daemon refuses or is
  // gone is replaced, from its newest checkpoint, as a lost one; a task that was waiting for a
  // daemon asks for one.
  void Adopt(SteadyTime now);
  // Task `task`'s daemon is being asked to let this spawner adopt its task.
  bool adopting(size_t task) const { return tasks_[task].adopting; }
  // Once every task is adopted or replaced: the steps of the moves under way whose replies the
  // lost spawner may not have read are sent again (MoveLedger::Resend).
  void ResumeMoves(SteadyTime now);
  // For the job state.
  const MoveLedger& ledger() const { return ledger_; }
  std::vector<uint64_t> trimmed() const;

  // ---- Events from the runner, for task `task` in `incarnation` (the one it was dialed for).
  void OnConnected(size_t task, uint64_t incarnation, SteadyTime now);
  void OnUnreachable(size_t task, uint64_t incarnation, const std::string& why, SteadyTime now);
  // Its connection closed or failed (`why`).
  void OnLost(size_t task, uint64_t incarnation, const std::string& why, SteadyTime now);
  // A message from its daemon. A report of another incarnation is dropped (logged once).
  void OnReport(size_t task, uint64_t incarnation, proto::Envelope::Reader env, SteadyTime now);
  // Daemons a super-node granted for waiting task `task` (`incarnation`): the mapping places
  // it among them. False when the task is no longer waiting for them or none fits.
  bool AddDaemons(size_t task, uint64_t incarnation, const std::vector<GrantedDaemon>& daemons,
                  SteadyTime now);
  // Time passes: daemons silent past the failure timeout, or not ready past the setup timeout,
  // are lost.
  void Tick(SteadyTime now);
  // The spawner did not run for `gap` up to `now` (suspended, its host asleep, or starved): what
  // the daemons sent meanwhile waits unread, so that time does not count towards their silence
  // nor their set-up.
  void Paused(SteadyTime::duration gap, SteadyTime now);

  // ---- Steps of the run.
  void Start();                 // every task starts iterating (StartTask)
  uint64_t RequestSnapshots();  // every task's result slice as it is now; the round number
  void Tighten(double factor);  // every task's local test `factor` times finer; convergence again
  void Halt();                  // the run is ending: halt every task, replace no lost daemon
  // The run cannot go on: the first call's `why` and `status` (kFailed, or kDiverged when a
  // task's values diverged) are kept.
  void Fail(const std::string& why, RunStatus status = RunStatus::kFailed);

  // ---- State.
  // `incarnation` still owns `task` and the run has not failed.
  bool Current(size_t task, uint64_t incarnation) const;
  bool AllReady() const;
  bool AllFinished() const;
  bool converged() const { return detector_.converged(); }
  // From every task locally converged (the last time) to global convergence declared; -1 until
  // it was.
  double detection_seconds() const { return detection_seconds_; }
  // Every slice of the last RequestSnapshots round came.
  bool SnapshotsComplete() const;
  std::vector<std::string> TakeSnapshots();
  const std::string& failure() const { return failure_; }
  // How the failure ends the run: kFailed or kDiverged (kFailed while there is none).
  RunStatus failure_status() const { return failure_status_; }
  bool started() const { return started_; }
  // A newer spawner incarnation adopted the job's tasks: this one may no longer halt or release
  // them.
  bool superseded() const { return superseded_; }
  // Synchronous runs: whether the tasks keep their values for a replacement (value_log.h).
  bool sync_replaces() const { return settings_.sync && settings_.sync_replaces; }
  double tighten() const { return tighten_; }
  const Deployment& deployment() const { return *deployment_; }
  const TaskOutcome& outcome(size_t task) const { return tasks_[task].outcome; }
  std::vector<TaskOutcome> outcomes() const;
  uint32_t failures() const { return failures_; }
  const std::vector<Replacement>& replacements() const { return replacements_; }
  // Tasks' app processes that died or hung, their daemons fine: the first of a task's goes to
  // another daemon, from its newest checkpoint; the second ends the run.
  const std::vector<AppCrashReport>& app_crashes() const { return app_crashes_; }
  // What the tasks said of their set-up (app::Task::Notes), "task T: ...", each once.
  const std::vector<std::string>& notes() const { return notes_; }
  SupervisorProgress progress() const;
  // One row per task for `aiac-spawner status --job` (net/job_status.h), as of `now`.
  std::vector<net::TaskStatus> TaskStatuses(SteadyTime now) const;
  // Daemons running a task now (started, connected, ready, not finished), none once the run
  // converged or failed: the targets of fault injection.
  std::vector<std::string> RunningTaskDaemons() const;
  // The task daemon `daemon` runs and is connected for, if any.
  std::optional<size_t> TaskOn(const std::string& daemon) const;

  // ---- Live balancing (docs/balancing.md): item moves between running tasks, kept in a MoveLedger
  // so that a lost daemon neither loses nor duplicates items; moves of disjoint pairs of tasks run
  // side by side.
  enum class MoveStart {
    kStarted,
    kBusy,     // a task takes part in a move under way: try again once it ended
    kRefused,  // the run is ending, or either task is not running
  };
  // Starts moving items worth `work` from `from` to `to`. `via`: nullopt, the items go through
  // the spawner (the export's reply, then the import); else they also go daemon to daemon, from
  // the source's daemon through the daemons of tasks `via` (gateways) to the target's, which
  // imports them once the spawner names their hash. Should a daemon on that route be lost, or
  // the items not arrive within kRouteTimeout, the spawner sends its own copy (imported once
  // either way). A gateway being replaced sends the move through the spawner.
  MoveStart BeginMove(size_t from, size_t to, double work, SteadyTime now,
                      std::optional<std::vector<size_t>> via = std::nullopt);
  // How long routed items may take before the spawner sends its own copy.
  static constexpr std::chrono::seconds kRouteTimeout{20};
  // A move is under way: its items may be in transit, so the run is not over yet.
  bool moving() const { return ledger_.busy(); }
  // The moves that ended since the last call, with the seconds each took.
  std::vector<std::pair<CompletedMove, double>> TakeCompletedMoves();
  // Task `task`'s latest progress figures (at_s left 0) and when they came; nullopt before its
  // first report in its current incarnation.
  std::optional<std::pair<TaskReport, SteadyTime>> report(size_t task) const;
  // Whether task `task` last said it is locally converged.
  bool locally_converged(size_t task) const {
    return detector_.locally_converged(static_cast<uint32_t>(task));
  }
  // Whether every task last said it is locally converged (the confirmation rounds' condition).
  bool all_locally_converged() const { return detector_.converged_count() == tasks_.size(); }

 private:
  struct TaskState {
    TaskOutcome outcome;
    bool connected = false;
    bool ready = false;
    double change = 0;
    SteadyTime last_heard{}, reached_at{};
    SteadyTime failed_at{};     // when its previous daemon was lost
    int replacement = -1;       // index in replacements_ while its new daemon restores
    uint64_t stale_logged = 0;  // the incarnation whose stale reports were logged
    std::optional<std::string> snapshot;
    std::optional<TaskReport> report;  // its latest TaskProgress figures
    SteadyTime report_at{};
    // runtime::TaskProfile of the daemons it lost, added up (outcome.profile adds the current
    // daemon's latest).
    runtime::TaskProfile earlier_profile;
    std::vector<std::string> crashed_on;  // daemons its app crashed on
    // Synchronous runs (daemon/value_log.h). The iteration before which the task's senders
    // were told to drop its values (TrimValues); its daemon's TaskProgress.valueLogFrom; and,
    // once restored, the iteration it was restored at and the oldest iteration its current
    // daemon sent (0: never restored).
    uint64_t trimmed = 0, value_log_from = 0, restored_at = 0, log_start = 0;
    uint32_t version = 0;   // the protocol version its daemon agreed on (SupervisorPort::version)
    bool adopting = false;  // a resumed spawner asks its daemon to adopt it (AdoptTask)
  };

  // Task `task`'s daemon is gone (`why`): counted, then replaced unless the run is ending.
  // `daemon_lost` false: the daemon is fine, the task's app crashed there or the daemon holds
  // no task for a resumed spawner (not counted as a failure; the daemon is not used again for
  // the job).
  void Lose(size_t task, const std::string& why, SteadyTime now, bool daemon_lost = true);
  // Task `task`'s app process died or hung on its daemon (Result.crash).
  void OnAppCrash(size_t task, proto::AppCrash::Reader crash, SteadyTime now);
  // Task `task` goes to the daemon the deployment placed it on, its old one `dead`.
  void Move(size_t task, const std::string& dead);
  void OnReady(size_t task, proto::TaskReady::Reader r, SteadyTime now);
  // Synchronous runs: why task `task`, restored at iteration `restored`, cannot go on in step
  // with its neighbours (a value one of them needs is no longer anywhere), or empty.
  std::string SyncResumeProblem(size_t task, uint64_t restored) const;
  // Synchronous runs: a connected daemon of the job that speaks a protocol older than
  // kSyncReplaceVersion (it keeps no values), as "daemon d1 speaks protocol 4", or empty.
  std::string OldSyncDaemon() const;
  // Synchronous runs: task `task`'s backups all hold iteration `safe` now; its senders may drop
  // the values they sent it before.
  void TrimSenders(size_t task, uint64_t safe);
  // Task `task`'s figures (its daemon's TaskProgress, or relayed by its group's coordinator).
  void OnProgress(size_t task, proto::TaskProgress::Reader p, SteadyTime now);
  // The reports of coordinator `task`'s group; each counts as hearing from its task's daemon.
  void OnGroupReports(size_t task, proto::GroupReports::Reader g, SteadyTime now);
  void OnItemsMoved(size_t task, proto::ItemsMoved::Reader m, SteadyTime now);
  // Sends the ledger's steps (to running tasks: a task being replaced gets its steps from
  // OnRestored), records a completed move, fails the run on the ledger's error.
  void Apply(const LedgerOutcome& outcome, SteadyTime now);
  void OnConvergenceEvent(SteadyTime now);
  // What the detector was told no longer counts (a task withdrawn, the local tests tightened),
  // a declared convergence included: neither does the time its detection took.
  void ForgetDetection();
  // Move `move` goes through the spawner from now on (`why`): its import, when out, is sent
  // again with the items.
  void SendImportDirectly(uint64_t move, const std::string& why, SteadyTime now);
  void SendAll(const EnvelopeFill& fill);
  void Changed() {
    if (port_.changed) port_.changed();
  }
  void Persist() {
    if (port_.persist) port_.persist();
  }
  // Tells task `to`'s daemon that task `task` moved to the daemon it has now, from `dead`.
  void TellMoved(size_t to, size_t task, const std::string& dead);
  // The answer to an AdoptTask (Adopt).
  void OnAdopted(size_t task, proto::TaskReady::Reader r, SteadyTime now);
  void Record(HistoryEntry::Kind kind, size_t task, SteadyTime at, uint64_t iteration = 0,
              double change = 0, uint64_t count = 0) {
    if (port_.record) {
      port_.record(HistoryEntry{kind, task, deployment_->task(task).incarnation, iteration, count,
                                change, at, tasks_[task].outcome.checkpoints,
                                tasks_[task].outcome.daemon});
    }
  }

  SupervisorSettings settings_;
  std::unique_ptr<Deployment> deployment_;
  SupervisorPort port_;
  Logger log_;
  std::vector<TaskState> tasks_;
  runtime::ConvergenceDetector detector_;
  std::optional<SteadyTime> all_converged_at_;  // since when every task is locally converged
  double detection_seconds_ = -1;
  uint32_t failures_ = 0;
  std::vector<std::string> notes_;
  std::vector<Replacement> replacements_;
  std::vector<AppCrashReport> app_crashes_;
  bool started_ = false;
  bool halting_ = false;
  uint64_t snapshot_round_;  // the last one asked for (from the incarnation's RoundBase)
  double tighten_ = 1;       // the Tighten factors sent so far, multiplied
  std::string failure_;
  RunStatus failure_status_ = RunStatus::kFailed;
  MoveLedger ledger_;
  struct MoveUnderWay {
    SteadyTime started{};
    std::vector<size_t> path;  // source, gateways, target
    bool routed = false;       // the items also travel daemon to daemon
    bool direct = false;       // routed, but given up: the spawner sends the items itself
    std::optional<SteadyTime> import_named;  // when the target was told the items' hash
  };
  std::map<uint64_t, MoveUnderWay> moves_;  // by move
  std::vector<std::pair<CompletedMove, double>> completed_moves_;
  std::vector<std::vector<uint32_t>> groups_;
  std::vector<int> group_of_;  // per task: its index in groups_, or -1
  uint64_t relayed_reports_ = 0;
  bool resumed_ = false;
  bool superseded_ = false;  // Adopt was called: this spawner took the job over
  std::map<size_t, std::string> moved_since_resume_;  // task -> the daemon it left
  bool bad_group_report_logged_ = false;
};

}  // namespace aiac::spawner
