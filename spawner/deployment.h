// A job's deployment: the spawner's model of where everything runs. It holds the daemons
// granted to the job (alive or lost), the mapping's state (platform, TIG, mapper, placement with
// its reserved nodes), which daemon runs each task in which incarnation, who sends values to
// whom, and which tasks' daemons keep each task's checkpoints.
//
// Replacements go through it: Lose() marks a task's daemon dead, raises the task's incarnation
// and lets the mapping pick a free granted daemon (MAHEVE: a reserved node of the same cluster
// first); when none is free the task waits until AddGranted() brings daemons and Place() maps
// it. Backups and hosted tasks name tasks, not daemons, so they follow a task to its new daemon.
//
// Pure: no I/O, no clock, no threads; the job runner moves the messages. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/app.h"
#include "core/logging.h"
#include "core/status.h"
#include "mapping/mapper.h"
#include "model/platform.h"
#include "model/tig.h"
#include "spawner/granted_daemon.h"

namespace aiac::spawner {

struct DeploymentSpec {
  std::vector<app::TaskNode> graph;  // the app's task graph, one node per task
  std::string mapping = "maheve";    // maheve | default | aiac-qm | f-ec
  uint32_t backups = 0;              // daemons keeping each task's checkpoints; 0: none
};

struct TaskPlace {
  std::string daemon, address;  // while waiting: the daemon lost
  uint64_t incarnation = 1;     // 1 on the first daemon, one more per replacement
  bool waiting = false;         // lost its daemon and none was free yet
};

// The log level of what the spawner says of each task in turn (its daemon and backups, the
// plugin sent to it): info for a job of up to 32 tasks, debug beyond, where one line per task
// would bury the run's progress (512 tasks: a thousand lines before the first iteration).
inline spdlog::level::level_enum PerTaskLogLevel(size_t tasks) {
  return tasks <= 32 ? spdlog::level::info : spdlog::level::debug;
}

class Deployment {
 public:
  // Maps the tasks onto `granted` (at least as many daemons as tasks, unique ids).
  static Result<std::unique_ptr<Deployment>> Create(DeploymentSpec spec,
                                                    std::vector<GrantedDaemon> granted);

  size_t tasks() const { return places_.size(); }
  const TaskPlace& task(size_t t) const { return places_[t]; }
  const std::vector<uint32_t>& senders(size_t t) const { return senders_[t]; }  // send values to t
  const std::vector<uint32_t>& backups(size_t t) const {
    return backups_[t];
  }  // keep t's checkpoints
  const std::vector<uint32_t>& hosted(size_t t) const {
    return hosted_[t];
  }  // t's daemon keeps theirs
  const std::vector<GrantedDaemon>& granted() const { return granted_; }
  bool lost(const std::string& daemon) const { return lost_.count(daemon) > 0; }

  // Task `t`'s daemon is lost: from now on it counts as dead, the task's incarnation goes up, and
  // the mapping picks a free granted daemon. True when the task was placed (task(t) names the
  // new daemon); false when none is free and the task waits (AddGranted, then Place).
  bool Lose(size_t t);
  // Daemons granted during the run; an id already known counts as alive again (a daemon
  // restarted under its id), with its new address.
  void AddGranted(const std::vector<GrantedDaemon>& daemons);
  // Maps waiting task `t` among the free granted daemons; false when none is free.
  bool Place(size_t t);
  // A resumed spawner's deployment (spawner/job_state.h): built like the first spawner's from the
  // daemons granted first, then given the daemons granted since (`later`), the daemons lost,
  // each task's place and incarnation, and the backups as they were. InvalidArgument when they
  // do not fit this job (another task count, a task on a daemon never granted).
  Status Resume(const std::vector<GrantedDaemon>& later, const std::vector<std::string>& lost,
                const std::vector<TaskPlace>& places,
                const std::vector<std::vector<uint32_t>>& backups);
  // The app's task graph changed before any task started (App::Reweigh): the same tasks on the
  // same daemons, with new costs and neighbours.
  Status Regraph(std::vector<app::TaskNode> graph);

 private:
  Deployment() = default;
  static Result<model::Tig> TigOf(const std::vector<app::TaskNode>& graph);
  static std::vector<std::vector<uint32_t>> SendersOf(const std::vector<app::TaskNode>& graph);
  // Per task: the tasks whose checkpoints its daemon keeps, from each task's backups.
  static std::vector<std::vector<uint32_t>> HostedOf(
      const std::vector<std::vector<uint32_t>>& backups);
  // The granted daemons as the mapping's platform; granted_of_node_ follows.
  Status BuildPlatform();
  // The placement again from the tasks' daemons and lost_, after the platform changed.
  void RebuildPlacement();
  int NodeOf(const std::string& daemon) const;  // platform node, or -1
  // Task `t` goes to platform node `node`.
  void Assign(size_t t, int node);

  DeploymentSpec spec_;
  std::vector<GrantedDaemon> granted_;
  std::set<std::string> lost_;
  std::vector<TaskPlace> places_;
  std::vector<std::vector<uint32_t>> senders_, backups_, hosted_;
  std::unique_ptr<model::Platform> platform_;
  std::unique_ptr<model::Tig> tig_;
  std::unique_ptr<mapping::Mapper> mapper_;
  std::unique_ptr<mapping::Placement> placement_;
  std::vector<size_t> granted_of_node_;  // platform node -> index in granted_
};

}  // namespace aiac::spawner
