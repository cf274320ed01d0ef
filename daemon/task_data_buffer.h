// Reassembles data sent in chunks (too large for one frame): a task's data in TaskData chunks,
// whose AssignTask then names the size and SHA-256 of the whole, or a plugin in PluginData
// chunks. Chunks arrive in order, offset 0 first; Take() checks size and hash before handing
// the bytes over.
//
// The declared total is checked against the memory this host can spare and reserved from the
// process's memory budget before anything is kept, so spawners cannot make a daemon buffer more
// than it can hold, one connection or many. Not thread-safe: one per
// spawner connection, on the io thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/memory_budget.h"
#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::daemon {

class TaskDataBuffer {
 public:
  // Declared totals reserve from `budget` (the process's, net::NetOptions::budget) when given.
  explicit TaskDataBuffer(MemoryBudget* budget = nullptr) : budget_(budget) {}

  // Takes one chunk. An error (out of order, another task's chunk mid-way, more than the total,
  // a total that does not fit in memory) means the sender is broken or hostile.
  Status Add(proto::TaskData::Reader chunk);
  // The whole data of `task` of `job`: exactly `size` bytes hashing to `sha256` (32 raw bytes).
  // Clears the buffer either way.
  Result<std::string> Take(const std::string& job, uint32_t task, uint64_t size,
                           const std::string& sha256);

  // The same for other data sent in chunks (a plugin), `key` naming what the chunks belong to.
  Status Add(const std::string& key, uint64_t offset, uint64_t total, std::string_view bytes);
  Result<std::string> Take(const std::string& key, uint64_t size, const std::string& sha256);
  // Bytes received so far, and the declared total.
  uint64_t received() const { return bytes_.size(); }
  uint64_t total() const { return total_; }

 private:
  static std::string KeyOf(const std::string& job, uint32_t task) {
    return job + '\0' + std::to_string(task);
  }

  MemoryBudget* budget_;
  MemoryBudget::Reservation reserved_;  // total_ bytes, while the chunks come
  std::string key_;
  uint64_t total_ = 0;
  std::string bytes_;
};

}  // namespace aiac::daemon
