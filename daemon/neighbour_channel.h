// Another daemon's connection to this one: the daemon-to-daemon protocol, one handler per
// message kind. Values for the task run here (DependencyData: accepted only from the daemon the
// spawner named for the sending task, by the id it proved in the handshake), checkpoints of the
// tasks this daemon keeps (CheckpointPut / CheckpointGet, checkpoint_service.h), items passed on
// (RelayItems, item_relay.h), a group member's progress for the group this daemon coordinates
// (TaskProgress, report_group.h) and link probes; each acknowledged (LinkAck) for the sender's
// link monitor. Anything else, or data for a task not run here, closes the connection with a
// refusal, so that the sender dials again wherever the task is now.
//
// Runs on the daemon's io thread; one per connection, for as long as it is open.
#pragma once

#include "daemon/task_host.h"
#include "net/connection.h"

namespace aiac::daemon {

class NeighbourChannel {
 public:
  NeighbourChannel(TaskHost& host, net::ConnectionPtr conn) : host_(host), conn_(std::move(conn)) {}

  net::awaitable<void> Serve();

 private:
  enum class Next { kGoOn, kClose };

  net::awaitable<Next> Dispatch(proto::Envelope::Reader env);
  Next OnCheckpoint(proto::Envelope::Reader env);
  Next OnRelayItems(proto::RelayItems::Reader items);
  Next OnTaskProgress(proto::TaskProgress::Reader report);
  net::awaitable<Next> OnDependencyData(proto::DependencyData::Reader values);
  // Acknowledges one frame read (the sender's link monitor times it).
  Next Ack();

  TaskHost& host_;
  net::ConnectionPtr conn_;
};

}  // namespace aiac::daemon
