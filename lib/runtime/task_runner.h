// Runs one task's iterations on a thread of its own, so that computing never blocks the
// daemon's network thread and sending never blocks computing.
//
// Asynchronous mode: each iteration absorbs the newest value of every neighbour that sent one,
// computes, hands its outgoing values to `send` (the network side keeps only the newest per
// neighbour), and goes on at once; it idles only when the app says there is nothing to do.
// Synchronous mode (--sync): iteration k first waits for every neighbour's iteration k-1.
//
// Callbacks run on the runner's thread: they must only hand work to the network thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "app/app.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "runtime/mailbox.h"
#include "runtime/task_state.h"

namespace aiac::runtime {

// A value for one neighbour, with what the receiver needs to judge it: `seen` is the newest
// iteration of the receiver's own values that this task had absorbed when it computed it.
struct OutgoingValue {
  uint32_t to;
  std::string bytes;
  uint64_t seen;
  uint64_t seen_incarnation;  // the receiver's incarnation `seen` counts in
};

// A step of a live-balancing move (docs/balancing.md; proto MoveItems), run between two iterations.
enum class MoveKind { kExport, kImport, kDrop, kConfirm };
struct ItemMove {
  uint64_t move = 0;
  MoveKind kind = MoveKind::kExport;
  double work = 0;    // export: work units to give (app::Task::ExportItems)
  std::string items;  // import, drop: the items
  uint32_t to = 0;    // export: the task that will take them
};
// What a move step did (proto ItemsMoved).
struct MoveReport {
  uint64_t move = 0;
  MoveKind kind = MoveKind::kExport;
  Status error;        // nothing changed
  std::string items;   // export: the items that left
  uint64_t count = 0;  // items exported, imported or dropped
  int64_t items_after = -1;
  uint64_t moves = 0;  // the task's move sequence number after the step
};

// Where a task's time went and what it exchanged, since it started on its daemon (`run
// --log-view`, docs/user-guide.md): kept by the runner on its own thread.
struct TaskProfile {
  // Seconds spent in iterations that computed (Task::Iterate, or an emulated node's stretch of
  // it), not waiting for input (a synchronous step's wait included). Live balancing measures
  // speeds over TaskMeasures::active_s, which also counts the time between iterations.
  double compute_s = 0;
  double wait_s = 0;        // waiting for neighbours' values with nothing to compute
  double checkpoint_s = 0;  // serialising its state for checkpoints (sending is not here)
  double move_s = 0;        // live-balancing move steps
  uint64_t messages_sent = 0, bytes_sent = 0;          // values to neighbours
  uint64_t messages_received = 0, bytes_received = 0;  // neighbours' values absorbed

  TaskProfile& operator+=(const TaskProfile& o);
};

// The task's figures for the spawner's balancer, with each progress report.
struct TaskMeasures {
  double work_done = 0;
  double remaining = -1;
  int64_t items = -1;
  uint64_t moves = 0;
  TaskProfile profile;
  // Seconds the task had something to do since its runner started: the time since, less its
  // waits for input (TaskProfile::wait_s) and its move steps (move_s). A task's speed is its work
  // done over them, what its host gives it (live balancing): unlike compute_s, they count the
  // time the task lost between its iterations, where a node throttled by a CPU quota loses much
  // of it once its iterations are short (a quarter-speed node that had given work away measured
  // 2.2x its speed over compute_s).
  double active_s = 0;
};

struct RunnerCallbacks {
  // `converged`: the task is locally converged after this iteration (receivers use it, with
  // OutgoingValue::seen, to know their inputs are final, see app::Task::InputsFinal).
  std::function<void(std::vector<OutgoingValue> values, uint64_t iteration, bool converged)> send;
  std::function<void(bool converged, uint64_t iteration)> local_convergence;
  std::function<void(uint64_t iteration, double change, bool converged,
                     const TaskMeasures& measures)>
      progress;
  std::function<void(uint64_t round, bool converged)> answer;
  // The task's current result slice after `iteration`, asked by Snapshot(round). Optional.
  std::function<void(uint64_t round, std::string slice, uint64_t iteration)> snapshot;
  // The task's state after `iteration`, every RunnerOptions::checkpoint_every iterations or
  // checkpoint_period (whichever comes first), and after each item move, to go to its backups:
  // EncodeTaskState of the runner's moves and the app's SaveState (task_state.h). Optional.
  std::function<void(std::string state, uint64_t iteration)> checkpoint;
  // A move step ran (Move()). Optional: without it, moves are refused.
  std::function<void(MoveReport report)> moved;
  // Last call: the result slice (or why the task failed) and its iteration count.
  std::function<void(Result<std::string> slice, uint64_t iterations)> finished;
};

struct RunnerOptions {
  bool sync = false;
  std::chrono::milliseconds progress_period{250};
  uint64_t checkpoint_every = 0;  // iterations; 0: not by iterations
  // Emulated platforms (emulation/emulated_node.h): given the CPU time an iteration used, the
  // wall time it should take; the runner sleeps the difference before sending its values.
  // Unset: iterations take what they take.
  std::function<std::chrono::nanoseconds(std::chrono::nanoseconds cpu)> iteration_time;
  std::chrono::milliseconds checkpoint_period{0};  // 0: not by time
  // A task restored from a checkpoint goes on counting from the checkpoint's iteration.
  uint64_t start_iteration = 0;
  // 1 for a task's first daemon, one more for each replacement (AssignTask.incarnation).
  uint64_t incarnation = 1;
  // A restored task: the moves its checkpoint had applied and its unconfirmed exports.
  MoveState moves;
  // A restored synchronous task: what it sent after its checkpoint's last iterations
  // (DecodedTaskState::sent), sent again before it computes: a neighbour may still wait for it.
  std::vector<SentValues> resend;
  // Set when this runner's commands reach its process through a descriptor that its own thread
  // can read (an app's child process, daemon/app_child_server.h): once started, the runner's
  // thread calls it to read what came and pass it on (Put, Query, Halt, ...), with 0 at each pass
  // and, when idle, with how long it may wait for something to come. Returns false once nothing
  // more can come: the runner halts. Unset: the calls come from other threads, and the runner
  // waits on its mailbox. (A thread that reads and hands over is one more wakeup on each value's
  // way: about 5 % of the main job's time to the solution, docs/fault-tolerance.md.)
  std::function<bool(std::chrono::milliseconds wait)> input;
  // What the runner reads the time from (checkpoint_period, progress_period, the measures);
  // outlives the runner. Tests give a ManualClock.
  const Clock* clock = &Clock::Steady();
};

// aiac_task_iterations_total (docs/operations.md, "Metrics"): the iterations every task of this
// process computed (a runner in a child process counts in its daemon: app_child_runner.h).
metrics::Counter& IterationsComputed();

// What a task's session drives while the task runs: a TaskRunner in this process, or one in the
// app's child process (daemon/app_child_runner.h). Every call is thread-safe and returns at once;
// what the runner does comes back through its RunnerCallbacks.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual void Start() = 0;
  // A neighbour's value (Mailbox::Put).
  virtual void Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
                   uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) = 0;
  virtual void Query(uint64_t round) = 0;
  virtual void Snapshot(uint64_t round) = 0;
  virtual void Tighten(double factor) = 0;
  virtual void Move(ItemMove move) = 0;
  virtual void Halt() = 0;
};

class TaskRunner final : public Runner {
 public:
  TaskRunner(std::unique_ptr<app::Task> task, std::vector<uint32_t> neighbours,
             RunnerOptions options, RunnerCallbacks callbacks);
  ~TaskRunner() override;

  Mailbox& mailbox() { return mailbox_; }
  void Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
           uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) override {
    mailbox_.Put(from, iteration, std::move(bytes), sender_converged, seen, incarnation,
                 seen_incarnation);
  }
  void Start() override;
  // Thread-safe: answer convergence round `round` after the next iteration (or at once when idle);
  // a converged asynchronous task waits until its two-way neighbours have absorbed its newest
  // changed value and stayed converged (Mailbox::AbsorbedByConverged).
  void Query(uint64_t round) override;
  // Thread-safe: between two iterations, hand the current result slice to `snapshot`.
  void Snapshot(uint64_t round) override;
  // Thread-safe: before the next iteration, tighten the task's local test by `factor`
  // (app::Task::Tighten) and report its local convergence anew; an error ends the task.
  void Tighten(double factor) override;
  // Thread-safe: between two iterations, one step of an item move (app::Task::ExportItems,
  // ImportItems, DropItems, or forgetting a confirmed export); `moved` reports it, and a
  // checkpoint with the new items follows at once.
  void Move(ItemMove move) override;
  // Thread-safe: stop after the current iteration, then `finished`.
  void Halt() override;
  void Join();
  // Passes of the runner's loop so far (an iteration, or a look at the mailbox when idle, every
  // 5 ms at most): a test proves that nothing happened over some of them, not over some time.
  uint64_t passes() const { return passes_.load(); }

 private:
  // Commands queued by Snapshot() and Tighten(), run on the runner thread between iterations.
  struct Command {
    enum Kind { kSnapshot, kTighten, kMove } kind;
    uint64_t round = 0;
    double factor = 1;
    ItemMove move;
  };
  void Loop();
  // RunnerOptions::input, when set: false (and the runner halts) once nothing more can come.
  bool Read(std::chrono::milliseconds wait);
  // The idle wait: until the mailbox changes after `since`, or `timeout`.
  void WaitForChange(uint64_t since, std::chrono::milliseconds timeout);
  // Runs the queued commands after `iteration`; `converged` is the task's last reported state.
  Status RunCommands(uint64_t iteration, bool& converged);
  Status Step(uint64_t next_iteration, bool& did_work);
  // Hands the state to `checkpoint` when one is due after `iteration` (or `now`).
  void MaybeCheckpoint(uint64_t iteration, bool now = false);
  // One move step; `converged` as in RunCommands. A step this runner took already is answered
  // again as it was, not applied twice: an export (with its items while they are unconfirmed), an
  // import, a drop, and the drop of an export it made (a journal replay). A resumed spawner sends
  // the steps whose replies the lost one may not have read, and replays what it cannot know
  // arrived. Either way the task's local convergence is reported after the answer.
  void RunMove(ItemMove move, uint64_t iteration, bool& converged);
  // The answer to a step taken already (see RunMove), or false.
  bool AnswerAgain(const ItemMove& m, MoveReport& r) const;
  TaskMeasures Measures() const;
  // An idle asynchronous task acknowledges what it absorbed since it last sent: its newest value
  // again, at the same iteration, to each two-way neighbour whose newer values it took, with the
  // new `seen` and its convergence (Mailbox::Put takes only those from a value sent again). A
  // neighbour waiting to answer a confirmation round needs it (Mailbox::AbsorbedByConverged)
  // when this task has stopped iterating.
  void Acknowledge(uint64_t iteration, bool converged);
  // Records which outgoing values changed and adds each receiver's `seen`; asynchronous: leaves
  // out a value its receiver has already, with the same `seen` and convergence.
  std::vector<OutgoingValue> Track(std::vector<app::Outgoing> out, uint64_t iteration,
                                   bool converged);

  std::unique_ptr<app::Task> task_;
  std::vector<uint32_t> neighbours_;
  // Async bookkeeping for InputsFinal, runner thread only. A neighbour's "converged" says
  // nothing about our inputs until it has absorbed our newest values: in between it may still
  // move. (Apps that never answer a value, like the ring's token, simply never see final inputs.)
  std::map<uint32_t, std::string> last_sent_;  // per receiver, the bytes sent last
  std::map<uint32_t, uint64_t>
      need_seen_;  // per two-way neighbour, our iteration it must have absorbed
  // Per receiver, the `seen` (and its incarnation) our last value to it carried.
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> told_seen_;
  std::map<uint32_t, bool> told_converged_;  // per receiver, the convergence it carried
  RunnerOptions options_;
  RunnerCallbacks cb_;
  Mailbox mailbox_;
  std::atomic<bool> halt_{false};
  std::atomic<uint64_t> query_{0};
  std::atomic<uint64_t> passes_{0};
  std::mutex commands_mu_;
  std::vector<Command> commands_;  // guarded by commands_mu_
  std::thread thread_;
  uint64_t last_checkpoint_ = 0;  // iteration; runner thread only
  // TaskProfile::compute_s, kept as a duration so that it adds up exactly; runner thread only.
  std::chrono::steady_clock::duration busy_{};
  Clock::time_point started_{};  // when Loop began: TaskMeasures::active_s counts from it
  TaskProfile profile_;          // runner thread only; compute_s from busy_
  // Sends `values` (cb_.send), counted in profile_.
  void Send(std::vector<OutgoingValue> values, uint64_t iteration, bool converged);
  // Counts `v` in profile_ as received.
  void Received(const Mailbox::Value& v) {
    ++profile_.messages_received;
    profile_.bytes_received += v.bytes.size();
  }
  // The last step's computing: Iterate()'s wall time, or the emulated node's stretch of it.
  std::chrono::steady_clock::duration iterate_time_{};
  MoveState moves_;  // runner thread only
  // The steps this runner applied (exports, imports, drops), by move: their kind, count and the
  // move sequence after them; the newest kMaxStepsKept. Runner thread only.
  struct TakenStep {
    MoveKind kind = MoveKind::kExport;
    uint64_t count = 0, moves = 0;
  };
  std::map<uint64_t, TakenStep> taken_;
  static constexpr size_t kMaxStepsKept = 4096;
  // Synchronous mode: what the last two iterations sent, for the checkpoints (task_state.h);
  // runner thread only.
  std::vector<SentValues> recent_sent_;
  std::chrono::steady_clock::time_point next_checkpoint_;
};

}  // namespace aiac::runtime
