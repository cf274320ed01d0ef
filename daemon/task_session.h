// One task of a job running on this daemon: the app's task on its TaskRunner thread, what waits
// to go to each neighbour and to each backup, and what is reported to the spawner.
//
// It owns no socket. TaskHost's coroutines carry the queues (links(), backups()) over the
// network and call Deliver / Move / Acknowledged as messages come in; reports to the spawner
// go through a SpawnerPort. So it is unit-tested with a fake app and a fake port.
//
// Threads: PrepareTask, the app's part of setting up (MakeTask, RestoreState, Tighten: seconds
// for a large block), is meant for a worker thread, so that heartbeats and values keep flowing
// on the io thread meanwhile. The session lives on the io thread; the runner's callbacks are
// posted to it and dropped once the session ended.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/app.h"
#include "checkpoint/checkpoint.h"
#include "core/ed25519.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "daemon/app_child.h"
#include "daemon/assignment.h"
#include "daemon/report_group.h"
#include "daemon/value_log.h"
#include "net/connection.h"
#include "proto/aiac.capnp.h"
#include "runtime/plugin.h"
#include "runtime/task_runner.h"

namespace aiac::daemon {

// The job's plugin as this daemon holds it: its file, checked against the task's hash, and the
// library itself when the app runs in the daemon (TaskHostOptions::isolate_apps false).
struct PluginRef {
  std::string path;
  std::shared_ptr<runtime::Plugin> loaded;
};

// The app's task, built and restored, ready for a session.
struct PreparedTask {
  std::unique_ptr<app::App> app;  // null when the task runs in a child process
  std::unique_ptr<app::Task> task;
  std::vector<uint32_t> dependencies;
  std::optional<checkpoint::Checkpoint> restored;
  runtime::MoveState moves;                 // the restored checkpoint's item moves (task_state.h)
  std::vector<runtime::SentValues> resend;  // and what it sent last (synchronous runs)
  std::string notes;  // app::Task::Notes(), read once it was built and restored
  std::shared_ptr<const AppChildState> child;  // the task's child process, when it has one
};

// Builds task a.task of `app` from a.slice, restores `restored` when there is one (its runtime
// header, then the app's state), and applies the job's tightening so far. Touches nothing but its
// arguments: safe on any thread.
Result<PreparedTask> PrepareTask(const Assignment& a, std::unique_ptr<app::App> app,
                                 std::optional<checkpoint::Checkpoint> restored);
// The same, the task built in a child process started as `child` says (app_child.h); when that
// process crashes meanwhile, `crash` gets why.
Result<PreparedTask> PrepareTask(const Assignment& a, const AppChildSpec& child,
                                 std::optional<checkpoint::Checkpoint> restored,
                                 std::optional<AppCrash>& crash);

// A move of a neighbour task to another daemon (NeighbourMoved), copied out of its frame.
struct NeighbourMove {
  std::string job;
  uint32_t task = 0;
  std::string address, daemon, previous;
  uint64_t incarnation = 0;
};

// What this daemon measured of its link to another daemon (monitor/link_monitor.h).
struct LinkReport {
  std::string daemon;
  double alpha = 0;
  double seconds_per_byte = 0;
  uint32_t samples = 0;
};

using EnvelopeFill = std::function<void(proto::Envelope::Builder)>;

// How a session reaches the spawner that assigned its task.
struct SpawnerPort {
  std::function<void(const std::function<void(proto::Envelope::Builder)>&)> send;
  // The task ended by itself (halted and sent its result, or failed): the host ends the session.
  std::function<void(const std::string& why)> ended;
  // The task exported `items` in move `move` (after the reply went): the host sends them on when
  // the spawner gave the move a route. Optional.
  std::function<void(uint64_t move, const std::string& items)> exported;
};

class TaskSession : public std::enable_shared_from_this<TaskSession> {
 public:
  // One neighbour we send to. Values wait here until the link is free: in asynchronous mode only
  // the newest one (an older value is useless once a newer exists); in synchronous mode every
  // one, in order, since the neighbour waits for each iteration.
  struct OutLink {
    uint32_t task = 0;
    Endpoint address;
    std::string daemon;  // the id the neighbour must prove
    bool keep_all = false;
    using Value = LinkValue;
    std::deque<Value> pending;
    // Synchronous mode: what was handed to a connection, sent again on the next one
    // (value_log.h).
    ValueLog log;
    // Asynchronous mode: the newest value handed to a connection, sent again on the next one
    // (it may have been lost with the last).
    std::optional<Value> last;
    std::unique_ptr<net::asio::steady_timer>
        wake;                 // cancelled when `pending` or the target changes
    net::ConnectionPtr conn;  // the host's, closed when the target moves
  };

  // Where this task's checkpoints go: the newest one not yet sent waits in `pending` (an older
  // one still waiting is replaced: only the newest matters), one in flight at a time.
  struct BackupLink {
    Endpoint address;
    std::string daemon;
    std::optional<checkpoint::Checkpoint> pending;
    std::unique_ptr<net::asio::steady_timer> wake;
    net::ConnectionPtr conn;
    bool sending = false;  // a checkpoint is on its way, not acknowledged yet
    uint64_t stored = 0;   // the newest iteration this backup acknowledged (since it moved here)
  };

  // How long a failed task's result waits for its newest checkpoint to reach its backups.
  static constexpr std::chrono::seconds kFlushLimit{5};

  // A session for assignment `a` with its prepared task; the runner is built but not started.
  // Fails on a neighbour or backup address that does not parse. `keep_loaded` holds the app's
  // code in memory while the task runs (null in tests with an app linked in). `checkpoint_key`:
  // this daemon's key, which signs each checkpoint under a.capability (checkpoint/proof.h) on
  // the task's thread; without it (or a capability) checkpoints go unsigned, and backups refuse
  // them. `iteration_time`: an emulated node's iteration times
  // (runtime::RunnerOptions::iteration_time), else unset.
  static Result<std::shared_ptr<TaskSession>> Create(
      net::asio::io_context& io, const Assignment& a, PreparedTask prepared,
      std::shared_ptr<runtime::Plugin> keep_loaded, std::chrono::milliseconds progress_period,
      SpawnerPort port, Logger log, std::optional<Ed25519Key> checkpoint_key = std::nullopt,
      std::function<std::chrono::nanoseconds(std::chrono::nanoseconds)> iteration_time = {});
  ~TaskSession();
  TaskSession(const TaskSession&) = delete;
  TaskSession& operator=(const TaskSession&) = delete;

  const std::string& job() const { return job_; }
  uint32_t task() const { return task_; }
  uint64_t incarnation() const { return incarnation_; }
  bool started() const { return started_; }
  bool ended() const { return ended_; }
  // The task's item move sequence as its replies said it (for a resumed spawner's AdoptTask;
  // the runner may be a step further).
  uint64_t moves_applied() const { return moves_applied_; }
  // A resumed spawner adopted the task: it is told again what the lost one was told last of the
  // task's local convergence (sent only when it changes, it would otherwise never hear it).
  void Adopted();

  // The spawner's commands.
  void Start();
  void Query(uint64_t round);
  void Snapshot(uint64_t round);
  void Tighten(double factor);
  // One step of an item move (MoveItems); ItemsMoved answers it.
  void Move(runtime::ItemMove move);
  // Stops iterating; the runner's result is then sent and the port's `ended` called. A task not
  // started yet has no result: the caller ends the session instead.
  void Halt();

  // Values of task `from` sent by daemon `sender` (its proven id): absorbed when `sender` runs
  // `from`, else false (the caller closes the connection).
  bool Deliver(const std::string& sender, proto::DependencyData::Reader values);
  // A neighbour (or a backup's daemon) moved: links, senders and backups now point there, their
  // connections closed and their wakes cancelled. False when the move names a bad address or id.
  bool Move(const NeighbourMove& m);
  // A backup stored a checkpoint of `bytes`: counted in progress reports and the result.
  void Acknowledged(uint64_t bytes);
  // A backup's link has nothing waiting and nothing in flight. A failed task's result waits
  // for every backup to get there (or for kFlushLimit): the task is then replaced from the
  // newest checkpoint this daemon held when its app crashed, not from an older one.
  void BackupIdle();
  // The task failed and its result waits for its checkpoints to reach the backups.
  bool result_held() const { return static_cast<bool>(held_result_); }
  // Synchronous runs (TrimValues): values for task `to` before iteration `before` are no
  // longer needed.
  void TrimValues(uint32_t to, uint64_t before);
  // The newest iteration of this task's checkpoints that every backup acknowledged (0: none, or
  // no backups), and the oldest iteration every receiver's value log still holds beyond trims
  // (0: nothing dropped for want of room, and the task not restored): TaskProgress.safeCheckpoint
  // and valueLogFrom. A restored task's logs begin with what it sends first, its checkpoint's
  // last two iterations: the values before died with its previous daemon. Said by the daemon, a
  // spawner that resumed the job after the restore knows it too (Supervisor::SyncResumeProblem).
  uint64_t safe_checkpoint() const;
  uint64_t value_log_from() const;
  // Sends TaskProgress with the runner's latest report, the host's run-queue figures and its
  // links' (the host calls it on its own clock). A member of a DistPM group (report_group.h)
  // hands it to `to_coordinator`, which sends it to the group's coordinator when it can (true);
  // else it goes to the spawner. A coordinator that gathered its members' reports sends them
  // with its own in one GroupReports.
  void ReportProgress(double run_queue_mean = 1, double run_queue_std = 0,
                      const std::vector<LinkReport>& links = {},
                      const std::function<bool(const EnvelopeFill&)>& to_coordinator = {});
  // A group member's report, from daemon `sender` (its proven id): kept for the next
  // GroupReports when this task coordinates the group and `sender` runs that member; else false
  // (the caller refuses the connection).
  bool GatherReport(const std::string& sender, proto::TaskProgress::Reader report);
  const ReportGroup& group() const { return group_; }

  std::map<uint32_t, std::shared_ptr<OutLink>>& links() { return links_; }
  std::vector<std::shared_ptr<BackupLink>>& backups() { return backups_; }

  // What keeps an ended task's thread and code alive until its runner stopped: the runner ends
  // after its current iteration (seconds on a large block), so the caller lets these go on a
  // worker thread, never on the io thread.
  struct Retired {
    std::shared_ptr<runtime::Plugin> plugin;
    std::unique_ptr<app::App> app;
    std::unique_ptr<runtime::Runner> runner;  // destroyed first: joins the task's thread
  };
  // Ends the session: no callback is handled after this, wakes are cancelled and connections
  // closed, the runner is told to halt. Returns the parts to let go (once; empty afterwards).
  Retired End();

 private:
  TaskSession(net::asio::io_context& io, const Assignment& a,
              std::shared_ptr<runtime::Plugin> keep_loaded, SpawnerPort port, Logger log);
  runtime::RunnerCallbacks Callbacks();
  // What the runner's callbacks do, on the io thread.
  void QueueValues(std::vector<runtime::OutgoingValue> values, uint64_t iteration, bool converged);
  void SendLocalConvergence(bool converged, uint64_t iteration);
  void SendMoved(const runtime::MoveReport& report);
  void QueueCheckpoint(checkpoint::Checkpoint c);
  void SendAnswer(uint64_t round, bool converged);
  void SendSnapshot(uint64_t round, const std::string& slice, uint64_t iteration);
  // The task ended: its result goes now, or once its checkpoints reached the backups when it
  // failed (BackupIdle).
  void Finish(Result<std::string> slice, uint64_t iterations);
  bool BackupsIdle() const;
  // The task ended (halted, or failed: then its daemon says whether it diverged, or how its
  // app's process died).
  void SendResult(const Result<std::string>& slice, uint64_t iterations);
  void FillProgress(proto::TaskProgress::Builder p, double run_queue_mean, double run_queue_std,
                    const std::vector<LinkReport>& links) const;

  net::asio::io_context& io_;
  std::string job_;
  uint32_t task_;
  uint64_t incarnation_;
  uint64_t moves_applied_ = 0;  // io thread
  uint64_t log_start_ = 0;      // a restored synchronous task's first logged iteration (0: from 0)
  std::optional<std::pair<bool, uint64_t>> last_local_;  // the last LocalConvergence; io thread
  SpawnerPort port_;
  Logger log_;
  // This daemon's key and capability, when its checkpoints are signed; shared with the task's
  // thread, which signs.
  struct CheckpointSigner {
    Ed25519Key key;
    checkpoint::TaskCapability capability;
  };
  std::shared_ptr<const CheckpointSigner> signer_;
  std::shared_ptr<runtime::Plugin> keep_loaded_;  // declared before the app: unloaded after it
  std::unique_ptr<app::App> app_;
  std::shared_ptr<const AppChildState> child_;  // the app's process, when it has one
  std::map<uint32_t, std::shared_ptr<OutLink>> links_;
  std::vector<std::shared_ptr<BackupLink>> backups_;
  std::map<uint32_t, std::string> senders_;  // task -> the only daemon id that may send its values
  ReportGroup group_;
  // A TaskRunner here, or (the app in a child process) a ChildRunner.
  std::unique_ptr<runtime::Runner> runner_;
  bool started_ = false;
  bool ended_ = false;
  // A failed task's result, held until its checkpoints reached the backups (Finish).
  std::function<void()> held_result_;
  std::unique_ptr<net::asio::steady_timer> hold_timer_;
  uint64_t checkpoints_ = 0;  // copies the backups acknowledged
  uint64_t checkpoint_bytes_ = 0;
  // The runner's last progress report, sent by ReportProgress.
  uint64_t progress_iteration_ = 0;
  double progress_change_ = 0;
  bool progress_converged_ = false;
  runtime::TaskMeasures progress_measures_;
};

}  // namespace aiac::daemon
