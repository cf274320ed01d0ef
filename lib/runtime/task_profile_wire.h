// runtime::TaskProfile <-> proto::TaskProfile, for the daemon and the spawner alike (header only:
// the runtime library itself knows nothing of the wire).
#pragma once

#include <cmath>

#include "proto/aiac.capnp.h"
#include "runtime/task_runner.h"

namespace aiac::runtime {

inline void ToProto(const TaskProfile& p, proto::TaskProfile::Builder out) {
  out.setComputeSeconds(p.compute_s);
  out.setWaitSeconds(p.wait_s);
  out.setCheckpointSeconds(p.checkpoint_s);
  out.setMoveSeconds(p.move_s);
  out.setMessagesSent(p.messages_sent);
  out.setBytesSent(p.bytes_sent);
  out.setMessagesReceived(p.messages_received);
  out.setBytesReceived(p.bytes_received);
}

// A figure that is not a finite, non-negative number (a peer's bug) reads as 0.
inline TaskProfile FromProto(proto::TaskProfile::Reader in) {
  auto seconds = [](double s) { return std::isfinite(s) && s > 0 ? s : 0.0; };
  return {seconds(in.getComputeSeconds()),
          seconds(in.getWaitSeconds()),
          seconds(in.getCheckpointSeconds()),
          seconds(in.getMoveSeconds()),
          in.getMessagesSent(),
          in.getBytesSent(),
          in.getMessagesReceived(),
          in.getBytesReceived()};
}

}  // namespace aiac::runtime
