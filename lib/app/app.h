// The app plugin API. An app is a shared library exporting two C functions, both written by
// AIAC_DEFINE_APP(MyApp):
//
//   extern "C" int aiac_app_api_version();           // kApiVersion, read first
//   extern "C" aiac::app::App* aiac_app_create();     // a new App the caller owns
//
// The loader refuses a plugin of another API version before it uses any of its classes. The same
// library is loaded by the spawner (to check the job and build the task graph before any daemon is
// used, and to gather the result) and by every daemon of the job (to run one task each). Apps do no
// networking and start no threads: the runtime moves their bytes and calls them from one thread per
// task.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace aiac::app {

// 2: Task::Tighten, GatherReport "unconverged"; 3: App::Reweigh; 4: movable items (WorkDone ...
// ImportItems); 5: DropItems; 6: ExportItems names the taking task, JobPlan::items_in_chain;
// 7: GatherReport::status is a GatherStatus, and an iteration that diverges returns Diverged();
// 8: Task::Notes; 9: the plugin exports its API version as a C function, read before any of its
// classes is used (a plugin of another version has another vtable layout), and JobParams::logger.
inline constexpr int kApiVersion = 9;
inline constexpr const char* kFactorySymbol = "aiac_app_create";
inline constexpr const char* kApiVersionSymbol = "aiac_app_api_version";

// How much a log line matters.
enum class LogLevel { kDebug, kInfo, kWarn, kError };

// Where an app writes log lines: the daemon's log for a task's hooks, tagged with the job, the
// task and its incarnation (`... daemon info job cg-1a2b task 2.1: <line>`), and the spawner's for
// Prepare and Gather. One line per event that matters, no newline; debug lines show only when
// the process logs at debug level. Thread-safe.
class Log {
 public:
  virtual ~Log() = default;
  virtual void Write(LogLevel level, std::string_view line) const = 0;
  void Debug(std::string_view line) const { Write(LogLevel::kDebug, line); }
  void Info(std::string_view line) const { Write(LogLevel::kInfo, line); }
  void Warn(std::string_view line) const { Write(LogLevel::kWarn, line); }
  void Error(std::string_view line) const { Write(LogLevel::kError, line); }
};

// The job's [params] as text, plus what the runtime knows.
struct JobParams {
  std::map<std::string, std::string> values;
  uint32_t tasks = 0;
  std::string base_dir;  // directory of the job file: relative paths in params start there
  // Spawner side only: the daemons see the spawner's files at the same paths (a --local run,
  // whose daemons are its children on this host). An app may then let daemons read their input
  // themselves; a job on other hosts says so in its own params.
  bool shared_files = false;
  // Never null when the runtime (or app::RunLocally) calls a hook; a task may keep a copy.
  std::shared_ptr<const Log> logger;

  const std::string* Find(const std::string& key) const {
    auto it = values.find(key);
    return it == values.end() ? nullptr : &it->second;
  }
};

// One task of the task interaction graph (TIG).
struct TaskNode {
  double cost = 1;                                 // e_i
  std::vector<std::pair<uint32_t, double>> edges;  // (neighbour, c_ij): tasks it exchanges with
};

// What the spawner needs before any daemon is used.
struct JobPlan {
  std::vector<TaskNode> graph;      // one per task
  std::vector<std::string> slices;  // per task: data shipped in AssignTask (may be empty)
  bool supports_sync = true;        // whether --sync makes sense for this app
  double read_seconds = 0;          // of Prepare's time, the part spent reading input files
  std::vector<std::string> notes;   // what the user should know of the preparing, a line each
  // The largest local change (Task::LocalChange) the tasks' local test accepts, for the
  // spawner's forecast of whether the run can converge in time (convergence_forecast.h); 0:
  // the app has no such threshold, no forecast.
  double target_change = 0;
  // The tasks' movable items (Task::ItemCount) lie along the task order, like the rows of
  // consecutive blocks: items move only between tasks t and t + 1, and every item is worked on
  // at each iteration until the job converges (Task::RemainingWork is items x the iterations the
  // task expects to need still). The spawner then plans moves along that chain
  // (docs/balancing.md, CG rows). False: any task can take any item.
  bool items_in_chain = false;
};

// A value for a neighbour after an iteration.
struct Outgoing {
  uint32_t to;
  std::string bytes;
};

// One task's computation. Called from a single thread.
class Task {
 public:
  virtual ~Task() = default;
  // The tasks whose values this one uses (--sync waits for each of them every iteration).
  virtual std::vector<uint32_t> Dependencies() const = 0;
  // Takes a neighbour's newest value (iteration numbers are handled by the runtime).
  virtual Status Absorb(uint32_t from, std::string_view bytes) = 0;
  // One iteration with the newest values absorbed. Returns false when there was nothing to do
  // (no new input and nothing left to compute): the runtime then waits for data instead of
  // spinning, and does not count an iteration; it calls Iterate again once something could give
  // the task work (a neighbour's value or convergence, a command, a query) or at its next
  // progress report, so a task must not return false while it has work of its own. An error ends
  // the run "failed"; an error with the code kDiverged (Diverged("...")) ends it "diverged".
  virtual Result<bool> Iterate() = 0;
  // What to send after the last iteration (possibly nothing).
  virtual std::vector<Outgoing> TakeOutgoing() = 0;
  // Largest change of the last iteration (max norm), for progress lines.
  virtual double LocalChange() const = 0;
  virtual bool LocallyConverged() const = 0;
  // Asynchronous mode, before each iteration: whether every input's newest value came from a
  // sender that was locally converged when it sent it (true when there are no inputs). Such
  // inputs change no more unless a sender's own inputs do, so an app may then count an
  // iteration without new input as one without change, and reach local convergence where no
  // new input will come (blocks that depend one way only). Default: ignored.
  virtual void InputsFinal(bool final) {}
  virtual std::string SaveState() const = 0;
  virtual Status RestoreState(std::string_view state) = 0;
  // What the user should know of how this task was set up (one line, or empty): read once after
  // MakeTask (and RestoreState), told to the spawner, which logs it and lists it in the run's
  // summary (`notes`). Default: nothing.
  virtual std::string Notes() const { return ""; }
  // The task's part of the result. Also called between iterations while the task runs, for the
  // spawner to check a globally converged result before it says so.
  virtual std::string ResultSlice() const = 0;
  // Divides the local convergence threshold by `factor` (> 1): the gathered result fell short
  // of the app's acceptance test (GatherReport "unconverged"). The task is then not locally
  // converged until it meets the tighter test, and its next Iterate() computes (it does not
  // return false for want of new input). An error (say, the threshold would go below what
  // double precision can tell) ends the run as failed, with the last result gathered.
  // Default: the app has no threshold to tighten.
  virtual Status Tighten(double factor) {
    (void)factor;
    return InvalidArgument("this app cannot tighten its local convergence test");
  }

  // ---- Live balancing (docs/balancing.md), API 4. A task whose work is a set of independent items
  // can have some of them moved to another task of the job while both run; the defaults say the app
  // cannot. All are called between two iterations, on the task's thread. Work units done so far, in
  // the app's own unit (the same in every task): the task's speed is measured in them. Monotonic.
  // Default 0: not measured.
  virtual double WorkDone() const { return 0; }
  // Work units still to do, as far as the task can tell from what it holds now; < 0: it cannot
  // (it iterates until convergence). Default -1.
  virtual double RemainingWork() const { return -1; }
  // Items held now; -1: the app has no movable items (the default).
  virtual int64_t ItemCount() const { return -1; }
  // Removes items worth about `work` units of remaining work (as RemainingWork counts them) and
  // returns them encoded for task `to`; from now on they are not this task's. The result may
  // hold no item (nothing worth `work` to give). Fails, changing nothing, when the app cannot.
  virtual Result<std::string> ExportItems(double work, uint32_t to) {
    (void)work;
    (void)to;
    return InvalidArgument("this app has no items to move");
  }
  // Takes items another task of the job exported; from now on they are this task's. Fails,
  // changing nothing, on bytes that are not items of this job, or items it already holds.
  virtual Status ImportItems(std::string_view items) {
    (void)items;
    return InvalidArgument("this app has no items to move");
  }
  // Forgets items this task exported before (the bytes ExportItems returned): a task restored
  // from a checkpoint older than that export holds them again, and they are another task's now.
  // Fails, changing nothing, unless it holds every one of them.
  virtual Status DropItems(std::string_view items) {
    (void)items;
    return InvalidArgument("this app has no items to move");
  }
};

// How a gathered result stands against the app's acceptance test.
enum class GatherStatus {
  kConverged,    // it passes: the run ends "converged"
  kUnconverged,  // finite but short of the test (e.g. residual above residual_tolerance): the
                 // runtime tightens the tasks' local tests (Task::Tighten) and goes on
  kDiverged,     // non-finite or unbounded values: the run ends "diverged"
};

// What Gather reports back to the spawner's summary.
struct GatherReport {
  GatherStatus status = GatherStatus::kConverged;
  double residual = -1;         // ||b - A x|| / ||b|| when the app has one, else -1
  double residual_target = -1;  // the residual the app accepts (its residual_tolerance), else -1
  std::string output;           // file written, if any
  std::string error;            // why, when not converged: required, one line
  std::map<std::string, double> numbers;  // app-defined extra result fields
};

class App {
 public:
  virtual ~App() = default;
  virtual int api_version() const { return kApiVersion; }
  virtual std::string_view name() const = 0;
  // Spawner side: checks the parameters and input files and builds the plan. Any problem is one
  // line naming it. The App may keep what it read for Gather.
  virtual Result<JobPlan> Prepare(const JobParams& params) = 0;
  // Spawner side, after the mapping chose a daemon for every task and before anything is sent:
  // the relative powers of those daemons, one per task, when they differ. An app whose split of
  // the work can follow them returns a new plan for the same tasks in which task t's share of
  // the work is about proportional to task_powers[t] (Gather then expects the slices of that
  // plan); nullopt keeps the plan. Default: the split is the app's own, kept.
  virtual Result<std::optional<JobPlan>> Reweigh(const JobParams& params,
                                                 const std::vector<double>& task_powers) {
    (void)params;
    (void)task_powers;
    return std::optional<JobPlan>();
  }
  // Daemon side: the task `task` of the job, from the params and its data slice.
  virtual Result<std::unique_ptr<Task>> MakeTask(const JobParams& params, uint32_t task,
                                                 std::string_view slice) = 0;
  // Spawner side, after Prepare: combines the result slices (one per task, in task order),
  // checks them, writes outputs.
  virtual Result<GatherReport> Gather(const JobParams& params,
                                      const std::vector<std::string>& slices) = 0;
};

using Factory = App* (*)();
using ApiVersionFunction = int (*)();

}  // namespace aiac::app

#define AIAC_DEFINE_APP(AppClass)                                                         \
  extern "C" __attribute__((visibility("default"))) int aiac_app_api_version() {          \
    return ::aiac::app::kApiVersion;                                                      \
  }                                                                                       \
  extern "C" __attribute__((visibility("default"))) ::aiac::app::App* aiac_app_create() { \
    return new AppClass();                                                                \
  }
