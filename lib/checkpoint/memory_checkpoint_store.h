// CheckpointStore in memory: the fake the daemon's checkpoint service is unit-tested with.
// Same contract as the RocksDB store (checkpoint_store.h), minus durability.
#pragma once

#include <map>
#include <mutex>
#include <utility>

#include "checkpoint/checkpoint_store.h"

namespace aiac::checkpoint {

class MemoryCheckpointStore final : public CheckpointStore {
 public:
  Result<bool> Put(const Checkpoint& c) override;
  Result<Loaded> Load(const std::string& job, uint32_t task) override;
  Status DropJob(const std::string& job) override;
  Result<std::vector<std::string>> Jobs() override;

  // For tests that damage what is stored: the kept checkpoints of a task, oldest first.
  std::vector<Checkpoint>& Kept(const std::string& job, uint32_t task);

 private:
  std::mutex mu_;
  std::map<std::pair<std::string, uint32_t>, std::vector<Checkpoint>> kept_;  // oldest first
};

}  // namespace aiac::checkpoint
