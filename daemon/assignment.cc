#include "daemon/assignment.h"

#include <kj/exception.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "checkpoint/proof_wire.h"
#include "core/endpoint.h"
#include "core/hex.h"
#include "core/names.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"
#include "runtime/code_signing.h"

namespace aiac::daemon {
namespace {

using net::AsString;

Result<Assignment> Parse(proto::AssignTask::Reader in, const runtime::PluginTrust& trust,
                         const std::string& self_id) {
  Assignment a;
  a.job = in.getJob().cStr();
  a.task = in.getTask();
  a.app = in.getApp().cStr();
  a.plugin_name = in.getPluginName().cStr();
  a.plugin_hash = AsString(in.getPluginHash());
  a.plugin_signature = AsString(in.getPluginSignature());
  a.plugin_signer = AsString(in.getPluginSigner());
  a.slice = AsString(in.getData());
  a.sync = in.getSync();
  a.params.tasks = in.getTaskCount();
  AIAC_RETURN_IF_ERROR(CheckName("job id", a.job));
  AIAC_RETURN_IF_ERROR(CheckName("app name", a.app));
  if (a.plugin_hash.size() != 32) return InvalidArgument("plugin hash must be 32 bytes (SHA-256)");
  if (a.task >= a.params.tasks) {
    return InvalidArgument("task " + std::to_string(a.task) + " of a job of " +
                           std::to_string(a.params.tasks) + " tasks");
  }
  if (Status signed_ =
          runtime::CheckPluginSignature(trust, a.plugin_hash, a.plugin_signer, a.plugin_signature);
      !signed_.ok()) {
    return Unauthenticated("plugin " + Printable(a.plugin_name, 64) + " (" +
                           Hex(a.plugin_hash).substr(0, 12) + ") " + signed_.message() +
                           "; daemon " + self_id + " runs only plugins signed by one of its " +
                           std::to_string(trust.keys.size()) + " trusted_keys");
  }
  for (auto p : in.getParams()) a.params.values[p.getKey().cStr()] = p.getValue().cStr();
  for (auto n : in.getNeighbours()) {
    if (n.getTask() >= a.params.tasks) return InvalidArgument("neighbour task out of range");
    a.neighbours[n.getTask()] = {n.getAddress().cStr(), n.getDaemonId().cStr()};
  }
  for (auto n : in.getSenders()) {
    if (n.getTask() >= a.params.tasks) return InvalidArgument("sender task out of range");
    AIAC_RETURN_IF_ERROR(CheckName("sender daemon id", n.getDaemonId().cStr()));
    a.senders[n.getTask()] = n.getDaemonId().cStr();
  }
  for (auto n : in.getBackupDaemons()) {
    AIAC_RETURN_IF_ERROR(CheckName("backup daemon id", n.getDaemonId().cStr()));
    if (n.getDaemonId() == self_id)
      return InvalidArgument("a task's backup cannot be its own daemon");
    a.backups.emplace_back(n.getAddress().cStr(), n.getDaemonId().cStr());
  }
  for (auto n : in.getHosted()) {
    if (n.getTask() >= a.params.tasks || n.getTask() == a.task)
      return InvalidArgument("hosted task out of range");
    AIAC_RETURN_IF_ERROR(CheckName("hosted task's daemon id", n.getDaemonId().cStr()));
    a.hosted[n.getTask()] = n.getDaemonId().cStr();
  }
  std::set<uint32_t> in_group;
  for (auto n : in.getGroup()) {
    if (n.getTask() >= a.params.tasks || !in_group.insert(n.getTask()).second) {
      return InvalidArgument("group task out of range or repeated");
    }
    AIAC_RETURN_IF_ERROR(CheckName("group member's daemon id", n.getDaemonId().cStr()));
    if (!ParseEndpoint(n.getAddress().cStr()).ok())
      return InvalidArgument("group member's address does not parse");
    a.group.push_back({n.getTask(), n.getAddress().cStr(), n.getDaemonId().cStr()});
  }
  if (!a.group.empty() && in_group.count(a.task) == 0)
    return InvalidArgument("a group without this task");
  a.checkpoint_every = in.getCheckpointEvery();
  a.checkpoint_ms = std::min<uint64_t>(in.getCheckpointMs(), uint64_t{1} << 40);
  // Bounded so that no shift or conversion further on overflows (a bound that large is none).
  a.memory_mb = std::min<uint64_t>(in.getMemoryMb(), uint64_t{1} << 30);
  a.cpu_seconds = std::min<uint64_t>(in.getCpuSeconds(), uint64_t{1} << 40);
  a.app_stall_ms = std::min<uint64_t>(in.getAppStallMs(), uint64_t{1} << 40);
  a.value_log_mb = std::min<uint64_t>(in.getValueLogMb(), uint64_t{1} << 30);
  a.incarnation = std::max<uint64_t>(in.getIncarnation(), 1);
  a.orphan_seconds = std::min<uint32_t>(in.getOrphanSeconds(), kMaxOrphanSeconds);
  a.spawner_epoch = std::max<uint64_t>(in.getSpawnerEpoch(), 1);
  a.spawner_timeout_s = std::min<uint32_t>(in.getSpawnerTimeoutS(), kMaxOrphanSeconds);
  a.restore = in.getRestore();
  const double tighten = in.getTighten();
  if (tighten != 0 && !(std::isfinite(tighten) && tighten >= 1 && tighten <= 1e300)) {
    return InvalidArgument("assign: tighten must be at least 1");
  }
  a.tighten = std::max(1.0, tighten);
  if (in.hasCapability()) {
    a.capability = checkpoint::ReadCapability(in.getCapability());
    const checkpoint::TaskCapability& c = *a.capability;
    if (c.job != a.job || c.task != a.task || c.incarnation != a.incarnation ||
        c.daemon_id != self_id) {
      return InvalidArgument("assign: the capability is for another task, incarnation or daemon");
    }
  }
  return a;
}

}  // namespace

Result<Assignment> ParseAssignment(proto::AssignTask::Reader in, const runtime::PluginTrust& trust,
                                   const std::string& self_id) {
  try {
    return Parse(in, trust, self_id);
  } catch (const kj::Exception& e) {
    return ProtocolError("malformed task: " + Printable(e.getDescription().cStr(), 200));
  }
}

}  // namespace aiac::daemon
