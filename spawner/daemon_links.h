// The spawner's side of its links to the daemons of one run: the SupervisorPort the Supervisor
// decides through. For each (task, incarnation) it dials the daemon, sends the assignment (the
// task's data in chunks first when it is large, flow-controlled), sends the plugin when the
// daemon asks for it, and feeds the supervisor every message read, until that incarnation is
// over; a task left without a daemon gets one asked of a super-node.
//
// Runs on the spawner's io_context; one per run, created once the supervisor exists and kept
// until the run ends.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/logging.h"
#include "net/connection.h"
#include "spawner/app_loader.h"
#include "spawner/job_spec.h"
#include "spawner/run_settings.h"
#include "spawner/spawner_options.h"
#include "spawner/supernode_session.h"
#include "spawner/supervisor.h"

namespace aiac::spawner {

// How often the spawner tells its tasks' daemons it runs (SpawnerAlive, protocol 8), and how
// late past its time a wait must end to count as a pause of the spawner's own (Supervisor::Paused).
inline constexpr std::chrono::seconds kAlivePeriod{1};
inline constexpr std::chrono::seconds kPauseNoticed{2};

// What a run's links need from the run.
struct DaemonLinksContext {
  const JobSpec& job;
  const LoadedApp& app;
  const SpawnerOptions& options;
  const RunSettings& settings;
  SupernodeSession& supernodes;
  std::string job_id, spawner_id;
  uint64_t spawner_epoch = 1;  // this spawner's incarnation (1 for `run`, +1 per `resume`)
  Logger log;
  std::function<void(const std::string&)> fail;  // the run cannot go on
  std::function<void()> wake;                    // something the run waits for changed
};

class DaemonLinks {
 public:
  DaemonLinks(net::asio::any_io_executor executor, DaemonLinksContext context, size_t tasks);

  // The port the supervisor sends, dials and asks for daemons through; valid while this lives.
  // The supervisor made with it is attached next, before the port is used.
  SupervisorPort Port();
  void Attach(Supervisor& supervisor) { supervisor_ = &supervisor; }
  // Asks the daemon of the task running on `daemon` to exit at once (fault injection with
  // daemons started by hand). False when no task runs there.
  bool AskToExit(const std::string& daemon);
  // Tells every daemon whose task this run drives, on a link that speaks protocol 8, that the
  // spawner runs (SpawnerAlive): the job runner calls it every kAlivePeriod.
  void SendAlive();
  // A revocation list was adopted: closes the links to daemons whose key it revokes, so that
  // the supervisor replaces them as lost.
  void CloseRevoked();
  // The end of the run: each link closes once its peer has read the last frames (a half-close,
  // then the peer's own close, Connection::CloseWhenFlushed) or `deadline` passes; the
  // super-node link ends alike.
  net::awaitable<void> CloseAll(SteadyTime deadline);

 private:
  // Dials task `index`'s daemon for `incarnation`, assigns it the task and feeds the supervisor
  // its messages, until that incarnation is over.
  net::awaitable<void> WatchDaemon(size_t index, uint64_t incarnation);
  // Sends task `index`'s assignment for `incarnation` on `conn`: its data in TaskData chunks
  // first when it is large (one chunk queued at a time), then the AssignTask.
  net::awaitable<void> SendAssignment(size_t index, uint64_t incarnation, net::ConnectionPtr conn);
  // `daemon_key`: the key the daemon proved in the handshake, which the task's capability
  // names (checkpoint/proof.h).
  void FillAssignment(proto::AssignTask::Builder a, size_t index, uint64_t incarnation,
                      bool chunked, const std::string& daemon_key) const;
  // The app plugin to task `index`'s daemon, in chunks when it is large.
  void SendPlugin(size_t index);
  // The size of the chunks large data (task data, plugins) goes in: well under the frame limit.
  size_t ChunkBytes() const;
  // No granted daemon is free for task `index`: asks a super-node for one, until one is placed
  // or the replacement wait ends (then the run fails with `what`).
  net::awaitable<void> ReplaceFromSupernode(size_t index, uint64_t incarnation, std::string what);

  net::asio::any_io_executor executor_;
  DaemonLinksContext c_;
  Supervisor* supervisor_ = nullptr;       // set by Attach()
  std::vector<net::ConnectionPtr> conns_;  // per task: its current daemon's connection
};

}  // namespace aiac::spawner
