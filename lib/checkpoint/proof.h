// Who may write and read a task's checkpoints, and how a checkpoint proves where it came from
// (docs/fault-tolerance.md, docs/security.md).
//
// - The job's spawner gives each (task, incarnation) a capability: "daemon D, whose certified
//   key is K, runs incarnation I of task T of job J", signed with the spawner's own key
//   (TaskCapability). The daemon gets it with its AssignTask.
// - The daemon signs each checkpoint it makes, with K, over the job, task, incarnation,
//   iteration and the SHA-256 of the state (CheckpointBytes), and sends the signature with its
//   capability (CheckpointProof).
// - A backup stores a checkpoint only when the proof verifies under the spawner's key (the one
//   that assigned the backup its own task) and the capability names the daemon on the other end
//   of the connection, for a task it hosts, in the newest incarnation it has seen; the proof is
//   stored with the checkpoint. A CheckpointGet carries the asker's capability, checked alike.
// - A restoring daemon verifies the proof of what a backup returns before it uses it.
// So a daemon of another task cannot write or read a task's checkpoints, a backup cannot alter
// or forge one (it holds neither K nor the spawner's key), and a daemon replaced by a newer
// incarnation can no longer write or read. A backup can still withhold its newest checkpoint
// and return an older genuine one; the restoring daemon takes the newest of all backups.
//
// What is signed (core/signed_bytes.h): "aiac-task-capability-v1", job, task, incarnation,
// daemon id, daemon key; "aiac-checkpoint-v1", job, task, incarnation, iteration, SHA-256.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "checkpoint/checkpoint.h"
#include "core/ed25519.h"
#include "core/status.h"

namespace aiac::checkpoint {

struct TaskCapability {
  std::string job;
  uint32_t task = 0;
  uint64_t incarnation = 0;
  std::string daemon_id;
  std::string daemon_key;  // 32 raw bytes: the key the daemon's certificate names
  std::string signature;   // 64 bytes, by the spawner over CapabilityBytes
};

struct CheckpointProof {
  TaskCapability capability;
  std::string signature;  // 64 bytes, by capability.daemon_key over CheckpointBytes
};

std::string CapabilityBytes(const TaskCapability& c);
std::string CheckpointBytes(const Checkpoint& c);

// The spawner's capability for `daemon_id` (certified key `daemon_key`) to run `incarnation` of
// `task` of `job`.
TaskCapability GrantCapability(const Ed25519Key& spawner, std::string job, uint32_t task,
                               uint64_t incarnation, std::string daemon_id, std::string daemon_key);

// Ok when `c` is signed by `spawner_key` and well formed; kUnauthenticated otherwise.
Status VerifyCapability(const TaskCapability& c, std::string_view spawner_key);

// The proof of checkpoint `c`, made by the daemon holding `capability` with its key `daemon`.
CheckpointProof ProveCheckpoint(const Ed25519Key& daemon, const TaskCapability& capability,
                                const Checkpoint& c);

// Ok when `proof` makes `c` believable under `spawner_key`: the capability verifies and names
// c's job, task and incarnation, and its daemon's key signed c (its state as it is now).
// kUnauthenticated otherwise, saying which part failed.
Status VerifyCheckpoint(const Checkpoint& c, const CheckpointProof& proof,
                        std::string_view spawner_key);

// A proof as bytes, for a store (Checkpoint::proof), and back (Corruption when damaged).
std::string EncodeProof(const CheckpointProof& proof);
Result<CheckpointProof> DecodeProof(std::string_view bytes);

}  // namespace aiac::checkpoint
