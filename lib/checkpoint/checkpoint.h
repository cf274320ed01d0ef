// One task's saved state, as its backup daemons keep it (docs/architecture.md, the life of a job).
//
// Checkpoints are uncoordinated: each task saves on its own schedule. A checkpoint is ordered
// by (incarnation, iteration): a task restored on a new daemon runs under a higher incarnation,
// so its first checkpoints are newer than the last ones of its dead predecessor even when their
// iteration counts are lower. `checksum` is the CRC32C of `state`, computed by the daemon that
// ran the task, so a checkpoint damaged anywhere between there and a restore is recognised;
// `proof` says which daemon made it and is signed by it, so that a forged one is too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "core/crc32c.h"

namespace aiac::checkpoint {

struct Checkpoint {
  std::string job;
  uint32_t task = 0;
  uint64_t incarnation = 0;
  uint64_t iteration = 0;
  std::string state;
  uint32_t checksum = 0;  // Crc32c(state)
  // Who made it, and its signature (checkpoint/proof.h: EncodeProof); kept with it by every
  // store. Empty: none (a checkpoint of before proofs, or one made without an identity).
  std::string proof;
};

// A checkpoint of `state`, its checksum filled in.
Checkpoint MakeCheckpoint(std::string job, uint32_t task, uint64_t incarnation, uint64_t iteration,
                          std::string state);

// "checkpoint of task 3 of job cg-1 at iteration 120 (incarnation 2)", for logs and errors.
std::string Describe(const Checkpoint& c);

inline bool Verifies(const Checkpoint& c) { return Crc32c(c.state) == c.checksum; }

// Whether `a` was saved after `b` by the same task (higher incarnation, then higher iteration).
inline bool Newer(const Checkpoint& a, const Checkpoint& b) {
  return std::tie(a.incarnation, a.iteration) > std::tie(b.incarnation, b.iteration);
}

}  // namespace aiac::checkpoint
