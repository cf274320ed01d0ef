// The links a daemon's job keeps to other daemons, each redialed with backoff whenever it drops
// while the job runs: one per neighbour task its values go to (the newest value sent again on a
// new connection), one per backup its checkpoints go to (one in flight, acknowledged), one to
// its group's coordinator (report_group.h), and the progress reports and link probes that go
// out on a clock of their own. Also the dialing every other link of the daemon uses: only the
// daemon the spawner named may answer at an address.
//
// Runs on the daemon's io thread. Every coroutine ends once its job is no longer the daemon's
// current one (`current`).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "daemon/link_monitors.h"
#include "daemon/task_host_options.h"
#include "daemon/task_session.h"
#include "monitor/run_queue.h"
#include "net/connection.h"
#include "net/task_group.h"

namespace aiac::daemon {

class NeighbourLinks {
 public:
  using Session = std::shared_ptr<TaskSession>;
  // Where a link goes: the address, and the daemon id that must answer there.
  using Target = std::pair<Endpoint, std::string>;

  // `options`, `monitors` and `tasks` outlive this; `current` is the job the daemon runs now (or
  // null). The links' coroutines run in `tasks` (the daemon waits for them when it stops).
  NeighbourLinks(net::asio::io_context& io, const TaskHostOptions& options, LinkMonitors& monitors,
                 net::TaskGroup& tasks, std::function<Session()> current, Logger log);

  // Starts the links of `job`, which the daemon runs from now on: its out-links, backups,
  // progress reports (to its coordinator when it has one) and probes; `more_to_probe` gives the
  // other monitored connections (the item relay's).
  void Start(const Session& job, std::function<std::vector<net::ConnectionPtr>()> more_to_probe);
  // The job ended: its coordinator link closes (the others end with their job), and the clocks
  // its links wait on ring now, so that their coroutines end at once: the daemon's stop waits
  // for them, and a probe's clock of 1 s held every stop after a job up to that long.
  void End();
  // The group's coordinator moved to another daemon: its link is dialed again there.
  void CoordinatorMoved();

  // One attempt to reach `daemon` at `address` for `job` (logs and refuses another daemon
  // answering there; `what` explains the link in logs).
  net::awaitable<Result<net::ConnectionPtr>> DialOnce(Endpoint address, std::string daemon,
                                                      std::string job, std::string what);
  // Connects to target() for `job`, retrying with `backoff` while the job runs (target() is
  // read before each attempt); nullptr once the job ended or the peer refused our key.
  net::awaitable<net::ConnectionPtr> DialDaemon(Session job, std::function<Target()> target,
                                                std::string what,
                                                std::chrono::milliseconds& backoff);

 private:
  bool Current(const Session& job) const { return current_() == job; }
  net::awaitable<void> RunLink(Session job, std::shared_ptr<TaskSession::OutLink> link);
  // Closes `conn` once the neighbour refuses it or goes, and wakes RunLink to dial again.
  net::awaitable<void> WatchLink(std::shared_ptr<TaskSession::OutLink> link,
                                 net::ConnectionPtr conn);
  net::awaitable<void> RunBackup(Session job, std::shared_ptr<TaskSession::BackupLink> backup);
  // Sends the job's checkpoint `c` on the backup's link and waits for its acknowledgement; false
  // when the link failed (it is then dialed again and `c` sent again).
  net::awaitable<bool> PutCheckpoint(const Session& job, TaskSession::BackupLink& backup,
                                     const checkpoint::Checkpoint& c);
  // TaskProgress every progress period while the job runs: to the group's coordinator while it
  // acknowledges them (DistPM's groups, report_group.h), else to the spawner.
  net::awaitable<void> RunProgress(Session job);
  // A group member's connection to its coordinator's daemon, dialed again whenever it closes.
  net::awaitable<void> RunCoordinatorLink(Session job);
  // A LinkProbe on every monitored connection of `job`, every options.probe while it runs.
  net::awaitable<void> RunProbes(Session job,
                                 std::function<std::vector<net::ConnectionPtr>()> more);
  // One run-queue sample (TaskHostOptions::competing_jobs, else /proc/stat).
  void SampleRunQueue();
  // A timer that End() cancels (a coroutine's wait between two attempts or two reports).
  std::shared_ptr<net::asio::steady_timer> Clock();

  net::asio::io_context& io_;
  net::TaskGroup& tasks_;
  const TaskHostOptions& options_;
  LinkMonitors& monitors_;
  std::function<Session()> current_;
  Logger log_;
  // A member's link to its group's coordinator; unacked: the last report sent on it was not
  // acknowledged yet (the next one goes to the spawner).
  net::ConnectionPtr coordinator_conn_;
  bool coordinator_unacked_ = false;
  monitor::RunQueueMonitor run_queue_;
  bool run_queue_warned_ = false;
  std::vector<std::weak_ptr<net::asio::steady_timer>> clocks_;  // Clock()'s, until End()
};

}  // namespace aiac::daemon
