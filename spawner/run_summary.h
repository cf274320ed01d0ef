// What `aiac-spawner run` reports: the printed summary and the --json file.
//
// JSON fields: job, job_id, app, status ("converged", "failed", "diverged", "aborted"), error
// (when not converged), notes (what the user should know: the tasks' notes of their set-up, a
// converged run whose local tests never settled; only when there are some), mode ("async"/"sync"),
// tasks, daemons, mapping, wall_seconds, setup_seconds (daemons granted to every task ready),
// compute_seconds (tasks started to global convergence; -1 when it was not reached),
// detection_seconds (every task locally converged to global convergence declared; null when it
// was not), spawner_cpu_seconds (the spawner process's CPU time), phases {read,
// prepare, assign, iterate, gather} (seconds; they add up to wall_seconds), iterations {min, max,
// per_task}, residual (when the app has one), output, per_task
// [{task, daemon, address, iterations, profile (log_view.h)}], checkpoints {written, bytes} (copies
// the backups acknowledged, and their state bytes), failures (daemons lost), replacements [{task,
// failed, daemon, restored_iteration, seconds_to_resume}], app_crashes [{task, daemon, iteration,
// cause, stderr}] (a task's app process died or hung; its daemon did not), supernode_failovers
// (times the spawner moved to another super-node after losing its own), spawner_restarts (times
// the spawner was lost and `aiac-spawner resume` took the job over), tightenings (times every
// task converged but the gathered result fell short of the app's test, so the local tests were
// tightened), partial (true when the run did not converge but `output` holds the last result
// gathered), balancing {mode ("dp", "dm" or "off"), migration, checks, redistributions, moves,
// abandoned, items_moved, items_between_clusters, seconds_moving, planned_seconds, predicted_gain,
// observed_gain} (live balancing, spawner/live_balancing.h), result (app-defined numbers).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/task_runner.h"
#include "spawner/live_balancing.h"

namespace aiac::spawner {

struct TaskOutcome {
  uint32_t task = 0;
  std::string daemon;
  std::string address;
  uint64_t iterations = 0;
  uint64_t checkpoints = 0;  // copies acknowledged by its backups
  uint64_t checkpoint_bytes = 0;
  // Where its time went and what it exchanged, over all its daemons (`--log-view`).
  runtime::TaskProfile profile;
  bool finished = false;
  std::string data;  // the result slice, app-defined bytes
};

// A task moved to another daemon after its daemon was lost.
struct Replacement {
  uint32_t task = 0;
  std::string failed;               // the daemon lost
  std::string daemon;               // the one that took over
  uint64_t restored_iteration = 0;  // of the checkpoint it resumed from (0: the initial state)
  double seconds_to_resume = -1;    // from the loss to the task running again (-1: never)
};

// A task's app process died or hung (daemon/app_child.h); its daemon went on.
struct AppCrashReport {
  uint32_t task = 0;
  std::string daemon;
  uint64_t iteration = 0;   // the task's last iteration completed
  std::string cause;        // "SIGSEGV", "exit code 3", "hung (no answer in 30 s)", ...
  std::string stderr_tail;  // the last lines of the app's standard error, newline-separated
};

// How a run ended: the summary's `status`.
enum class RunStatus {
  kConverged,  // the app checked the gathered result and accepted it
  kFailed,     // a task error, no daemon left to replace a lost one, a timeout, a stagnating
               // residual, a forecast that it cannot converge in time
  kDiverged,   // non-finite or unbounded values (a task's, or the gathered result's)
  kAborted,    // interrupted (SIGINT, SIGTERM)
};
// "converged", "failed", "diverged" or "aborted".
const char* RunStatusName(RunStatus status);

struct RunSummary {
  std::string job, job_id, app;
  RunStatus status = RunStatus::kFailed;
  std::string error;
  std::vector<std::string> notes;  // what the user should know, a line each
  std::string mode = "async";
  std::string mapping = "maheve";
  double residual = -1;  // < 0: none
  std::string output;
  uint32_t tasks = 0;
  uint32_t daemons = 0;     // daemons granted, spares included
  double wall_seconds = 0;  // the whole run command, input read to summary
  double setup_seconds = -1;
  double compute_seconds = -1;
  // From every task locally converged (the last time) to global convergence declared; -1 when it
  // was not.
  double detection_seconds = -1;
  // CPU time (user + system) the spawner process used, to the summary.
  double spawner_cpu_seconds = 0;
  // Where the time went, adding up to wall_seconds: reading input files and preparing the plan
  // (the spawner, before any daemon), getting daemons and assigning the tasks until all are
  // ready, iterating until a checked result (or the failure), then halting and giving back.
  struct Phases {
    double read = 0, prepare = 0, assign = 0, iterate = 0, gather = 0;
  } phases;
  std::vector<TaskOutcome> per_task;
  uint32_t failures = 0;  // task daemons lost (unreachable, disconnected or silent)
  std::vector<Replacement> replacements;
  std::vector<AppCrashReport> app_crashes;
  uint32_t supernode_failovers = 0;
  // Spawners lost and resumed during the run (`aiac-spawner resume`, spawner/job_state.h).
  uint32_t spawner_restarts = 0;
  uint32_t tightenings = 0;
  BalancingStats balancing;
  // The links between and within the clusters as the daemons measured them last (links).
  std::vector<LinkFigure> links;
  nlohmann::json result = nlohmann::json::object();

  bool succeeded() const { return status == RunStatus::kConverged; }
};

nlohmann::json ToJson(const RunSummary& summary);
// A few human lines: status, time, iterations, error.
std::string ToText(const RunSummary& summary);

}  // namespace aiac::spawner
