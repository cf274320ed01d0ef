// Reassembles a task's data sent in TaskData chunks (data too large for one frame): chunks of
// one task arrive in order, offset 0 first; the AssignTask that follows names the size and
// SHA-256 of the whole, which Take() checks before handing the bytes over.
//
// The declared total is checked against the memory this host can spare before anything is
// kept, so a spawner cannot make a daemon buffer more than it can hold. Not thread-safe: one per
// spawner connection, on the io thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::daemon {

class TaskDataBuffer {
 public:
  // Takes one chunk. An error (out of order, another task's chunk mid-way, more than the total,
  // a total that does not fit in memory) means the sender is broken or hostile.
  Status Add(proto::TaskData::Reader chunk);
  // The whole data of `task` of `job`: exactly `size` bytes hashing to `sha256` (32 raw bytes).
  // Clears the buffer either way.
  Result<std::string> Take(const std::string& job, uint32_t task, uint64_t size, const std::string& sha256);

 private:
  std::string job_;
  uint32_t task_ = 0;
  uint64_t total_ = 0;
  std::string bytes_;
};

}  // namespace aiac::daemon
