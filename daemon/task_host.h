// The part of a daemon that runs a task: accepts the spawner's and the neighbour daemons'
// connections, loads the job's app plugin (asking the spawner for it only when it is not
// stored yet), runs the task on a TaskRunner thread, sends its values straight to the
// neighbour daemons (keeping only the newest value per neighbour while a send is in progress),
// and reports progress, local convergence and the result to the spawner.
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
// One task per daemon (MAHEVE section 3.3): an AssignTask while a job runs is refused.
// Runs on the daemon's io_context thread; the runner's callbacks are posted back to it.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "aiac/app.h"
#include "aiac/plugin.h"
#include "aiac/task_runner.h"
#include "core/endpoint.h"
#include "daemon/assignment.h"
#include "daemon/checkpoint_service.h"
#include "daemon/task_data_buffer.h"
#include "core/logging.h"
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
  bool busy() const { return job_ != nullptr; }

 private:
  struct OutLink;
  struct BackupLink;
  struct Job;

  net::awaitable<void> Serve(net::ConnectionPtr conn);
  net::awaitable<void> ServeSpawner(net::ConnectionPtr conn);
  net::awaitable<void> ServeNeighbour(net::ConnectionPtr conn);
  net::awaitable<void> RunLink(std::shared_ptr<Job> job, std::shared_ptr<OutLink> link);
  net::awaitable<void> RunBackup(std::shared_ptr<Job> job, std::shared_ptr<BackupLink> backup);
  // Sends TaskProgress every progress period while the job runs here.
  net::awaitable<void> RunProgress(std::shared_ptr<Job> job);
  // Where a link goes: the address, and the daemon id that must answer there.
  using Target = std::pair<Endpoint, std::string>;
  // Connects to target() for `job`, retrying with `backoff` while the job runs (target() is
  // read before each attempt); nullptr once the job ended or the peer refused our key. `what`
  // explains the link in logs.
  net::awaitable<net::ConnectionPtr> DialDaemon(std::shared_ptr<Job> job, std::function<Target()> target,
                                                std::string what, std::chrono::milliseconds& backoff);

  // Sets up the job once the plugin is at hand; the error text goes back in TaskReady.
  // `restored`: the checkpoint to resume from (AssignTask.restore), if one was found.
  Status StartJob(const Assignment& a, std::shared_ptr<runtime::Plugin> plugin, net::ConnectionPtr spawner,
                  const checkpoint::Checkpoint* restored = nullptr);
  // Fetches the checkpoint when the task is a restore, starts the job, and answers TaskReady.
  net::awaitable<void> Accept(Assignment a, std::shared_ptr<runtime::Plugin> plugin, net::ConnectionPtr conn);
  // The newest checkpoint of the task that verifies, from any of its backups; none when no
  // backup has one.
  net::awaitable<std::optional<checkpoint::Checkpoint>> FetchCheckpoint(Assignment a);
  // A NeighbourMoved, copied out of its frame: one that arrives while this daemon waits for the
  // plugin of its assignment is kept and applied once the job exists (the assignment named
  // the task's old daemon).
  struct NeighbourMove {
    std::string job;
    uint32_t task = 0;
    std::string address, daemon, previous;
    uint64_t incarnation = 0;
  };
  static NeighbourMove MoveOf(proto::NeighbourMoved::Reader m);
  void OnNeighbourMoved(const NeighbourMove& m);
  void Reply(net::Connection& conn, const std::string& job, uint32_t task, const std::string& error,
             bool need_plugin = false, uint64_t restored_iteration = 0);
  void EndJob(const std::string& why);
  runtime::RunnerCallbacks CallbacksFor(std::shared_ptr<Job> job);

  net::asio::io_context& io_;
  TaskHostOptions options_;
  Logger log_;
  net::Server server_;
  runtime::PluginStore plugins_;
  CheckpointService checkpoints_;
  std::shared_ptr<Job> job_;
  std::unique_ptr<Assignment> waiting_for_plugin_;
  bool stopping_ = false;
};

}  // namespace aiac::daemon
