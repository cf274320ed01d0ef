// Where a daemon keeps the checkpoints of the tasks it backs up: an interface, so that the
// daemon's checkpoint service is tested against MemoryCheckpointStore and runs on
// RocksDbCheckpointStore.
//
// Contract, for every implementation:
// - Put stores the checkpoint durably before it returns OK (a daemon killed right after still
//   has it when it restarts), refuses one whose checksum does not match its state, and keeps
//   only the newest kKeep checkpoints of each (job, task): an older one than those is not stored.
// - Load returns a task's checkpoints newest first, only those whose checksum verifies; each one
//   skipped is described in `skipped` (for the log).
// - DropJob deletes everything of a job (it ended); Jobs lists the jobs that have checkpoints
//   (to drop those of jobs whose end was missed).
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "core/status.h"

namespace aiac::checkpoint {

// Checkpoints kept per task: the newest, and one more in case the newest turns out damaged.
inline constexpr size_t kKeep = 2;

struct Loaded {
  std::vector<Checkpoint> valid;     // newest first
  std::vector<std::string> skipped;  // one line per checkpoint that failed verification
};

class CheckpointStore {
 public:
  virtual ~CheckpointStore() = default;
  // True when stored, false when older than the kKeep already kept (nothing written).
  virtual Result<bool> Put(const Checkpoint& c) = 0;
  virtual Result<Loaded> Load(const std::string& job, uint32_t task) = 0;
  virtual Status DropJob(const std::string& job) = 0;
  virtual Result<std::vector<std::string>> Jobs() = 0;
};

// What every store checks before storing: a valid job name and a matching checksum.
Status CheckStorable(const Checkpoint& c);

}  // namespace aiac::checkpoint
