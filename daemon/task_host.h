// The part of a daemon that runs a task: accepts the spawner's and the neighbour daemons'
// connections, loads the job's app plugin (asking the spawner for it only when it is not
// stored yet), runs the task on a TaskRunner thread, sends its values straight to the
// neighbour daemons (keeping only the newest value per neighbour while a send is in progress),
// and reports progress, local convergence and the result to the spawner (progress through its
// group's coordinator daemon when the spawner groups the tasks by cluster: report_group.h).
//
// Who may do what: only the spawner that assigned the job starts, queries, halts it or sends its
// plugin; dependency values are accepted only from the daemon the spawner named for the sending
// task (AssignTask.senders), by the id it proved in the handshake. A plugin runs only when its
// bytes hash to the SHA-256 the task names (checked before they are written), and, when
// trusted_keys is set, when that hash is signed by one of them (aiac/code_signing.h).
//
// Checkpoints: every checkpoint_every iterations or checkpoint_ms the runner's state goes to the
// task's backup daemons (AssignTask.backupDaemons), the newest one only when a backup is slow,
// and their acknowledgements are counted in TaskProgress and Result. The daemon itself keeps
// the checkpoints of the tasks the spawner names in AssignTask.hosted (CheckpointService).
//
// Item moves (docs/balancing.md): the spawner's MoveItems run on the task; an export given a route also
// goes daemon to daemon (RelayItems), passed on by each daemon of the route (DistPM's migration
// gateways), and the last one imports the items once the spawner names their SHA-256
// (RoutedImports). A daemon passes items on only for the job it runs.
//
// One task per daemon (MAHEVE section 3.3): an AssignTask while a job runs, or while one is
// being set up, is refused. The task itself is a TaskSession; this class is its network side.
// Runs on the daemon's io_context thread, except the app's part of setting up a task and the
// join of an ended task's thread, which run on a worker thread of their own.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "aiac/plugin.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "daemon/assignment.h"
#include "daemon/checkpoint_service.h"
#include "daemon/routed_imports.h"
#include "daemon/task_data_buffer.h"
#include "daemon/task_session.h"
#include "monitor/link_monitor.h"
#include "monitor/run_queue.h"
#include "net/connection.h"
#include "net/server.h"

namespace aiac::daemon {

struct TaskHostOptions {
  std::string id;
  net::NetOptions net;
  std::chrono::milliseconds progress{250};
  std::string plugin_dir;  // where received plugins are stored
  // Raw 32-byte Ed25519 keys; when not empty, only plugins signed by one of them run.
  std::vector<std::string> trusted_keys;
  net::ServerLimits limits;
  // An emulated node's iteration times (emulation/emulated_node.h); unset: real times.
  std::function<std::chrono::nanoseconds(std::chrono::nanoseconds cpu)> iteration_time;
  // The jobs competing with this daemon's task that it knows of (an emulated node's background,
  // --background): its run-queue samples are then 1 + that. Unset: sampled from /proc/stat
  // (monitor/run_queue.h), once per progress report.
  std::function<double()> competing_jobs;
};

class TaskHost {
 public:
  // `checkpoints`: where this daemon keeps other tasks' checkpoints.
  TaskHost(net::asio::io_context& io, TaskHostOptions options, std::unique_ptr<checkpoint::CheckpointStore> checkpoints,
           Logger log);
  ~TaskHost();

  Result<Endpoint> Listen(const Endpoint& listen);
  void set_id(std::string id) {
    options_.id = id;
    server_.set_id(std::move(id));
  }
  void Serve();
  void Stop();
  bool busy() const { return job_ != nullptr || setting_up_.has_value(); }

 private:
  using Session = std::shared_ptr<TaskSession>;

  net::awaitable<void> Serve(net::ConnectionPtr conn);
  net::awaitable<void> ServeSpawner(net::ConnectionPtr conn);
  net::awaitable<void> ServeNeighbour(net::ConnectionPtr conn);
  net::awaitable<void> RunLink(Session job, std::shared_ptr<TaskSession::OutLink> link);
  net::awaitable<void> RunBackup(Session job, std::shared_ptr<TaskSession::BackupLink> backup);
  // Closes `conn` once the neighbour refuses it or goes, and wakes RunLink to dial again.
  net::awaitable<void> WatchLink(std::shared_ptr<TaskSession::OutLink> link, net::ConnectionPtr conn);
  // Sends TaskProgress every progress period while the job runs here: to the group's
  // coordinator while it acknowledges them (DistPM's groups, report_group.h), else to the spawner.
  net::awaitable<void> RunProgress(Session job);
  // A group member's connection to its coordinator's daemon, dialed again whenever it closes.
  net::awaitable<void> RunCoordinatorLink(Session job);
  // Where a link goes: the address, and the daemon id that must answer there.
  using Target = std::pair<Endpoint, std::string>;
  // One attempt to reach `daemon` at `address` for `job` (logs and refuses another daemon
  // answering there; `what` explains the link in logs).
  net::awaitable<Result<net::ConnectionPtr>> DialOnce(Endpoint address, std::string daemon, std::string job,
                                                     std::string what);
  // Connects to target() for `job`, retrying with `backoff` while the job runs (target() is
  // read before each attempt); nullptr once the job ended or the peer refused our key. `what`
  // explains the link in logs.
  net::awaitable<net::ConnectionPtr> DialDaemon(Session job, std::function<Target()> target, std::string what,
                                                std::chrono::milliseconds& backoff);

  // Fetches the checkpoint when the task is a restore, builds the task on the worker thread,
  // starts the session, and answers TaskReady.
  net::awaitable<void> Accept(Assignment a, std::shared_ptr<runtime::Plugin> plugin, net::ConnectionPtr conn);
  // The newest checkpoint of the task that verifies, from any of its backups; none when no
  // backup has one.
  net::awaitable<std::optional<checkpoint::Checkpoint>> FetchCheckpoint(const Assignment& a);
  // PrepareTask on the worker thread; resumes on the io thread with its result.
  net::awaitable<Result<PreparedTask>> PrepareOffIo(std::shared_ptr<Assignment> a, std::unique_ptr<app::App> app,
                                                   std::optional<checkpoint::Checkpoint> restored);
  static NeighbourMove MoveOf(proto::NeighbourMoved::Reader m);
  void OnNeighbourMoved(const NeighbourMove& m);
  void Reply(net::Connection& conn, const std::string& job, uint32_t task, const std::string& error,
             bool need_plugin = false, uint64_t restored_iteration = 0, const runtime::MoveState* moves = nullptr);
  // ---- Link monitors (monitor/link_monitor.h): frames sent on a monitored connection (values,
  // items passed on, probes) wait here for the peer's LinkAck.
  void Sent(const net::Connection& conn, uint64_t bytes);
  // Reads `conn` (one of ours to another daemon) until it fails: each LinkAck times the oldest
  // frames still unacknowledged; anything else is a refusal (the peer does not, or no longer,
  // run the task). Then closes it.
  net::awaitable<void> WatchAcks(net::ConnectionPtr conn);
  // A LinkProbe on every monitored connection of `job`, once a second while it runs.
  net::awaitable<void> RunProbes(Session job);
  std::vector<LinkReport> LinkReports() const;

  // ---- Items travelling daemon to daemon.
  struct RelayHop {
    uint32_t task = 0;  // the task that daemon runs (for logs)
    std::string address, daemon;
  };
  static std::vector<RelayHop> HopsOf(capnp::List<proto::Neighbour>::Reader route);
  // The task exported move `move`'s items: on along the route the spawner gave the move, if any.
  void OnExported(uint64_t move, const std::string& items);
  // Sends move `move`'s items for task `to_task` to route[0], telling it the route from there.
  net::awaitable<void> Relay(std::string job, uint64_t move, uint32_t to_task, std::vector<RelayHop> route,
                             std::string items);
  // RelayItems from a daemon: passed on, or imported here. False when the sender misbehaved.
  bool OnRelayed(const net::Connection& from, proto::RelayItems::Reader r);
  // The task imports move `move`'s items (the routed or the spawner's copy, once).
  void Import(uint64_t move, std::string items);

  // One run-queue sample (TaskHostOptions::competing_jobs, else /proc/stat).
  void SampleRunQueue();
  void EndJob(const std::string& why);

  net::asio::io_context& io_;
  TaskHostOptions options_;
  Logger log_;
  net::Server server_;
  runtime::PluginStore plugins_;
  CheckpointService checkpoints_;
  Session job_;
  net::ConnectionPtr job_spawner_;  // the connection of the spawner that assigned job_
  // The job and task of the assignment being set up (busy meanwhile).
  std::optional<std::pair<std::string, uint32_t>> setting_up_;
  std::shared_ptr<net::asio::steady_timer> setup_done_;          // cancelled once it ran or failed
  std::unique_ptr<Assignment> waiting_for_plugin_;
  // job_'s item moves: the routes its exports go along (by move), its routed imports, and the
  // connections items go on through (by daemon id).
  std::map<uint64_t, std::pair<uint32_t, std::vector<RelayHop>>> export_routes_;
  RoutedImports routed_;
  std::map<std::string, net::ConnectionPtr> relay_links_;
  // Frames sent and not yet acknowledged, per monitored connection (send time, bytes), and each
  // peer daemon's link figures, for job_.
  std::map<const net::Connection*, std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>>> unacked_;
  std::map<std::string, monitor::LinkMonitor> links_measured_;
  // A member's link to its group's coordinator; unacked: the last report sent on it was not
  // acknowledged yet (the next one goes to the spawner).
  net::ConnectionPtr coordinator_conn_;
  bool coordinator_unacked_ = false;
  bool stopping_ = false;
  monitor::RunQueueMonitor run_queue_;
  bool run_queue_warned_ = false;
  // The app's setup work and the joins of ended tasks. Declared last: joined first.
  net::asio::thread_pool work_{1};
};

}  // namespace aiac::daemon
