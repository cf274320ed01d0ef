// One spawner's connection to a daemon: the spawner protocol, one handler per message kind
// (a switch over the Envelope's union; a new message kind is a new case and a new handler here).
//
// Who may do what: only the spawner that assigned the job starts, queries, halts it, moves its
// items or tells it its neighbours moved; any spawner may offer a task, which is refused while
// the daemon is busy. A message a spawner may not send closes the connection with one log line.
// When the connection of the job's spawner ends, the task runs on for the assignment's orphan
// seconds, until a resumed spawner adopts it (AdoptTask, in a newer spawner incarnation: from
// then on only that spawner's connection commands the task), and ends after them.
//
// Runs on the daemon's io thread; one per spawner connection, for as long as it is open.
#pragma once

#include <vector>

#include "daemon/task_data_buffer.h"
#include "daemon/task_host.h"
#include "net/connection.h"

namespace aiac::daemon {

class SpawnerChannel {
 public:
  SpawnerChannel(TaskHost& host, net::ConnectionPtr conn);

  // Reads and handles the spawner's messages until the connection ends or breaks the protocol.
  net::awaitable<void> Serve();

 private:
  enum class Next { kGoOn, kClose };

  net::awaitable<Next> Dispatch(proto::Envelope::Reader env);
  Next OnTaskData(proto::TaskData::Reader chunk);
  net::awaitable<Next> OnAssignTask(proto::AssignTask::Reader in);
  net::awaitable<Next> OnPluginData(proto::PluginData::Reader pd);
  void OnExit(proto::Exit::Reader exit);
  // A resumed spawner takes the job over (TaskHost::Adopt); a TaskReady answers.
  Next OnAdoptTask(proto::AdoptTask::Reader adopt);
  void OnNeighbourMoved(proto::NeighbourMoved::Reader moved);
  Next OnTighten(proto::Tighten::Reader tighten);
  Next OnMoveItems(proto::MoveItems::Reader m);
  // `dropped`: the task went to another daemon; it ends at once.
  void OnHalt(bool dropped);
  // A message a spawner never sends: the connection closes.
  Next Refuse(const std::string& what, const std::string& reason);
  // Whether the assignment's capability is the spawner's (the key it proved in the handshake)
  // and names this daemon's key: what its checkpoints will be signed under.
  Status CheckCapability(const Assignment& a) const;
  // The bytes of the plugin the waiting assignment asked for, once all of them came; nullopt
  // meanwhile, or when they do not match (the task is then refused, with a TaskReady saying why).
  std::optional<std::string> PluginBytes(proto::PluginData::Reader pd);
  // This connection is the one of the spawner that assigned the daemon's job.
  bool FromJobSpawner() const { return host_.job_ && host_.job_spawner() == conn_; }

  TaskHost& host_;
  net::ConnectionPtr conn_;
  TaskDataBuffer incoming_;                 // chunks of the next task's data (TaskData), in order
  std::vector<NeighbourMove> early_moves_;  // moves told while the plugin was on its way
};

}  // namespace aiac::daemon
