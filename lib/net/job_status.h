// What a spawner tells its super-node of its running job (proto JobStatus), and what
// `aiac-spawner status` shows of it: the job's figures and one row per task. The spawner fills
// it in at each progress tick; the super-node keeps the latest, passes it to its peers in its
// digests and answers StatusQuery with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct TaskStatus {
  uint32_t task = 0;
  std::string daemon;  // its daemon (the one lost, while it waits for another)
  uint64_t iteration = 0;
  double change = 0;  // its latest local change
  uint64_t incarnation = 1;
  uint64_t checkpoints = 0;    // copies its backups acknowledged
  int64_t report_age_ms = -1;  // since its latest report; -1: none yet in this incarnation

  friend bool operator==(const TaskStatus&, const TaskStatus&) = default;
};

struct JobStatus {
  std::string id, app;
  std::string spawner_id, spawner_address;  // set by the super-node, never by the spawner
  uint32_t tasks = 0, daemons = 0;
  int64_t started_unix = 0;
  // acquiring | assigning | running | checking | gathering, or kSpawnerLostPhase (set by the
  // super-node)
  std::string phase;
  uint64_t min_iteration = 0, max_iteration = 0;
  double max_change = 0;
  uint32_t failures = 0, replacements = 0;
  uint64_t moves = 0;
  double eta_seconds = -1;  // the forecast's time to convergence; < 0: none yet
  std::vector<TaskStatus> task_list;
  std::string supernode;  // set by the super-node the job is registered with

  friend bool operator==(const JobStatus&, const JobStatus&) = default;
};

// The phase a super-node gives a job whose spawner's connection closed without JobEnded: its
// tasks may run on, waiting for `aiac-spawner resume` (whose spawner takes the record over).
inline constexpr const char* kSpawnerLostPhase = "spawner-lost";

// The most tasks a JobStatus may list: a larger one is refused (a digest is one frame).
inline constexpr size_t kMaxStatusTasks = 100000;

void ToProto(const JobStatus& job, proto::JobStatus::Builder out);
// Decodes a peer's JobStatus: InvalidArgument when its id, app or phase is not a name
// (core/names.h), it lists more than kMaxStatusTasks tasks, or a figure is not finite.
Result<JobStatus> FromProto(proto::JobStatus::Reader in);

}  // namespace aiac::net
