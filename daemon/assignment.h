// An AssignTask as a daemon reads it: every field checked before anything is looked up, fetched
// or loaded. A pure function of the message and the daemon's trust settings, so it is unit-tested
// and fuzzed on its own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/app.h"
#include "checkpoint/proof.h"
#include "core/status.h"
#include "proto/aiac.capnp.h"
#include "runtime/code_signing.h"

namespace aiac::daemon {

// A task of this task's DistPM group (AssignTask.group) and the daemon that runs it.
struct GroupMember {
  uint32_t task = 0;
  std::string address, daemon;
};

// The longest a task waits for a resumed spawner (a week): a larger AssignTask.orphanSeconds is
// cut to it.
inline constexpr uint32_t kMaxOrphanSeconds = 7 * 24 * 3600;

struct Assignment {
  std::string job;
  uint32_t task = 0;
  app::JobParams params;
  std::string app, plugin_name, plugin_hash, plugin_signature, plugin_signer, slice;
  std::map<uint32_t, std::pair<std::string, std::string>> neighbours;  // task -> address, daemon
  std::map<uint32_t, std::string> senders;                             // task -> daemon id
  bool sync = false;
  // Synchronous runs: MiB of sent values kept per receiver for its replacement (value_log.h);
  // 0: none.
  uint64_t value_log_mb = 0;
  // Checkpoints: where this task's go (address, daemon id), whose this daemon keeps (task ->
  // the daemon that may write them), and how often.
  std::vector<std::pair<std::string, std::string>> backups;
  std::map<uint32_t, std::string> hosted;
  uint64_t checkpoint_every = 0;
  uint64_t checkpoint_ms = 0;
  // The job's limits on the app's child process (app_child.h); 0: none.
  uint64_t memory_mb = 0, cpu_seconds = 0, app_stall_ms = 0;
  uint64_t incarnation = 1;
  // Seconds the task runs on when its spawner's link drops, waiting for a resumed spawner
  // (AdoptTask); 0: it ends at once. And the spawner incarnation that assigned it (fencing).
  uint32_t orphan_seconds = 0;
  uint64_t spawner_epoch = 1;
  // Seconds of silence (no SpawnerAlive nor anything else) after which the spawner counts as
  // lost although its link is open; 0: only a closed link counts.
  uint32_t spawner_timeout_s = 0;
  bool restore = false;  // resume from the newest checkpoint on the backups
  double tighten = 1;    // the job's local tests were tightened this much so far (>= 1)
  // DistPM's group, its coordinator first (report_group.h); empty: report to the spawner.
  std::vector<GroupMember> group;
  // The spawner's grant of this (task, incarnation) to this daemon (checkpoint/proof.h); its
  // signature is checked by the caller, which knows the spawner's key.
  std::optional<checkpoint::TaskCapability> capability;
};

// Reads `in`. Refused (with a message for TaskReady.error): a job id or app name that fails
// CheckName, a plugin hash that is not 32 bytes, a task or neighbour outside the job, a sender
// or backup daemon id that fails CheckName, a backup that is this daemon, a hosted task that
// is this task, a group that repeats a task, leaves this task out or names a bad address or
// daemon id, a capability for another job, task, incarnation or daemon than `self_id`, and,
// unless `trust` allows unsigned plugins, a plugin hash not signed by one of its keys
// (kUnauthenticated). `self_id` is named in messages.
// Never throws: malformed text is kProtocol.
Result<Assignment> ParseAssignment(proto::AssignTask::Reader in, const runtime::PluginTrust& trust,
                                   const std::string& self_id);

}  // namespace aiac::daemon
