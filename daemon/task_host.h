// The part of a daemon that runs a task: it accepts the spawner's and the neighbour daemons'
// connections, sets up the task a spawner assigns (loading the job's app plugin, asking the
// spawner for it only when it is not stored yet, restoring it from its newest checkpoint when
// it replaces a lost daemon), runs it on a TaskRunner thread (TaskSession, which owns no
// socket), and keeps the job's links to other daemons. Its pieces, one concern each:
//   spawner_channel.h    the spawner protocol, one handler per message kind
//   neighbour_channel.h  what other daemons send: values, checkpoints, items, reports, probes
//   task_setup.cc        Accept: checkpoint fetch, the app's set-up off the io thread, TaskReady
//   neighbour_links.h    the job's links out: values, backups, coordinator, progress, probes
//   link_monitors.h      round trips of the frames sent to other daemons (DistPM's alpha, beta)
//   item_relay.h         items passed daemon to daemon (DistPM's gateways)
//   checkpoint_service.h the checkpoints this daemon keeps for other tasks
//
// A plugin runs only when its bytes hash to the SHA-256 the task names (checked before they are
// written), and when that hash is signed by one of the trusted keys, unless the operator allowed
// unsigned plugins (runtime/code_signing.h). One task per daemon (MAHEVE section 3.3): an
// AssignTask while a job runs, or while one is being set up, is refused.
//
// Runs on the daemon's io_context thread, except the app's part of setting up a task and the
// join of an ended task's thread, which run on a worker thread of their own.
#pragma once

#include <capnp/message.h>

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/endpoint.h"
#include "core/logging.h"
#include "daemon/assignment.h"
#include "daemon/checkpoint_service.h"
#include "daemon/item_relay.h"
#include "daemon/link_monitors.h"
#include "daemon/neighbour_links.h"
#include "daemon/task_host_options.h"
#include "daemon/task_session.h"
#include "net/connection.h"
#include "net/server.h"
#include "runtime/plugin.h"

namespace aiac::daemon {

class TaskHost {
 public:
  // `checkpoints`: where this daemon keeps other tasks' checkpoints.
  TaskHost(net::asio::io_context& io, TaskHostOptions options,
           std::unique_ptr<checkpoint::CheckpointStore> checkpoints, Logger log);
  ~TaskHost();

  Result<Endpoint> Listen(const Endpoint& listen);
  void set_id(std::string id) {
    options_.id = id;
    server_.set_id(std::move(id));
  }
  void Serve();
  // Ends the job (its task stops after its current iteration), closes every connection, and
  // completes once every coroutine of the daemon has ended and its worker has joined the task's
  // thread: the host may then be destroyed.
  net::awaitable<void> Stop();
  bool busy() const { return job_ != nullptr || setting_up_.has_value(); }
  // A revocation list was adopted: closes the connections of peers whose key it revokes, and
  // ends the job when its spawner's key is revoked.
  void CloseRevoked();

 private:
  friend class SpawnerChannel;
  friend class NeighbourChannel;
  using Session = std::shared_ptr<TaskSession>;

  // A new connection, served by its peer's role.
  net::awaitable<void> Serve(net::ConnectionPtr conn);

  // ---- Setting up a task (task_setup.cc).
  // Fetches the checkpoint when the task is a restore, builds the task on the worker thread,
  // starts the session, and answers TaskReady.
  net::awaitable<void> Accept(Assignment assignment, PluginRef plugin, net::ConnectionPtr conn);
  // The plugin with this hash as the task needs it (loaded here only when apps run in the
  // daemon); NotFound when the spawner must send it. AddPlugin stores the bytes sent first.
  Result<PluginRef> FindPlugin(const std::string& sha256);
  Result<PluginRef> AddPlugin(const std::string& sha256, std::string_view bytes);
  // How task a's app process starts (TaskHostOptions::isolate_apps).
  AppChildSpec ChildSpecFor(const Assignment& a) const;
  // The newest checkpoint of the task that verifies (its checksum, and its proof under
  // `spawner_key`, the job's spawner's), from any of its backups; none when no backup has one.
  net::awaitable<std::optional<checkpoint::Checkpoint>> FetchCheckpoint(const Assignment& a,
                                                                        std::string spawner_key);
  // One backup's newest checkpoint of the task, checked; `retry` set when the backup has not
  // heard of the task yet.
  net::awaitable<std::optional<checkpoint::Checkpoint>> FetchFrom(const Assignment& a,
                                                                  const std::string& address,
                                                                  const std::string& daemon,
                                                                  const std::string& spawner_key,
                                                                  bool& retry);
  // This daemon's key, which signs its task's checkpoints; none without an identity (tests).
  std::optional<Ed25519Key> CheckpointKey() const;
  // PrepareTask on the worker thread; resumes on the io thread with its result.
  // `crash`: why the app's process died while it set up, if it did.
  net::awaitable<Result<PreparedTask>> PrepareOffIo(std::shared_ptr<Assignment> a, PluginRef plugin,
                                                    std::optional<checkpoint::Checkpoint> restored,
                                                    std::optional<AppCrash>& crash);
  // The prepared task runs here from now on: its session, its links. `spawner`: the connection
  // of the job's spawner, which the session's port sends on (spawner_out_).
  void Run(Session session, const Assignment& a, std::shared_ptr<net::ConnectionPtr> spawner);
  void Reply(net::Connection& conn, const std::string& job, uint32_t task, const std::string& error,
             bool need_plugin = false, uint64_t restored_iteration = 0,
             const runtime::MoveState* moves = nullptr, const std::string& notes = "",
             const AppCrash* crash = nullptr);

  // ---- The job's life.
  static NeighbourMove MoveOf(proto::NeighbourMoved::Reader m);
  void OnNeighbourMoved(const NeighbourMove& m);
  void EndJob(const std::string& why);
  // The job's spawner's connection ended: the task runs on for the assignment's orphan seconds,
  // waiting for a resumed spawner to adopt it, and ends then; at once when they are 0.
  void Orphan();
  // Anything came from the job's spawner: it is not silent (and no longer counted as lost if
  // it was).
  void SpawnerHeard();
  // Once a second while a job runs: a spawner that speaks protocol 8 and has sent nothing for the
  // assignment's spawner_timeout_s counts as lost although its link is open (SpawnerSilent).
  // A check that comes more than kNotRunning late counts the time since it was due towards no
  // silence (the daemon itself did not run), as the spawner does for its daemons.
  void WatchSpawner();
  static constexpr std::chrono::seconds kNotRunning{2};
  void SpawnerSilent(std::chrono::seconds silent_for);
  // The orphan wait: the task runs on for orphan_seconds_, then ends (its spawner's link, if
  // still open, closed) unless a spawner took it back meanwhile: adopted, or heard again.
  void WaitForSpawner();
  // A resumed spawner on `conn`, in spawner incarnation `epoch`, takes over incarnation
  // `incarnation` of `task` of `job`: empty when it may (it is the job's spawner from now on),
  // else why not.
  std::string Adopt(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                    uint64_t incarnation, uint64_t epoch);
  // An AdoptTask on `conn`: Adopt, and the TaskReady that answers it; when that very task is
  // being set up (its spawner was lost while it assigned it), answered once it runs.
  void OnAdopt(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
               uint64_t incarnation, uint64_t epoch);
  // The TaskReady that answers an AdoptTask: `refused` empty when the task was adopted.
  void AnswerAdoption(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                      const std::string& refused);
  // The TaskReady itself: adopted when `refused` is empty, with whether the task was started and
  // its item move sequence.
  static void SendAdoptionAnswer(net::Connection& conn, const std::string& job, uint32_t task,
                                 const std::string& refused, bool started, uint64_t moves);
  // What job_'s session sends to its spawner while none is connected: its end (a Result) is
  // kept for a spawner that adopts the task (untold_); anything else is dropped.
  void KeepUntold(const EnvelopeFill& fill);
  // An AdoptTask for the task whose end is kept: when the adopter may have it (the same
  // incarnation, the assigning spawner's key, a newer spawner incarnation, within the orphan
  // time), the task counts as adopted and the end follows the TaskReady, as the spawner it was
  // meant for would have read it. False when it may not (the adoption is then refused as usual).
  bool TellUntold(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                  uint64_t incarnation, uint64_t epoch);
  // The first half of Stop, for the destructor: ends and closes, does not wait.
  void Close();

  net::asio::io_context& io_;
  TaskHostOptions options_;
  Logger log_;
  net::Server server_;
  runtime::PluginStore plugins_;
  // Keeps DATA/plugins within its bound (TaskHostOptions::plugin_cache_bytes), logging each
  // file removed.
  void EvictPlugins();
  CheckpointService checkpoints_;
  Session job_;
  // The connection of job_'s spawner, shared with its session's port (where it sends to the
  // spawner): swapped when a resumed spawner adopts the task, none while orphaned.
  std::shared_ptr<net::ConnectionPtr> spawner_out_;
  net::ConnectionPtr job_spawner() const { return spawner_out_ ? *spawner_out_ : nullptr; }
  std::string job_spawner_key_;  // the key of the spawner that assigned job_ (adopters prove it)
  uint64_t spawner_epoch_ = 0;   // the spawner incarnation job_ takes commands from
  uint32_t orphan_seconds_ = 0;  // job_'s AssignTask.orphanSeconds
  std::unique_ptr<net::asio::steady_timer> orphan_timer_;  // while orphaned
  // Silence of the job's spawner (AssignTask.spawnerTimeoutS, 0: not watched): when it was last
  // heard, and whether it counts as lost for its silence (orphaned with its link open).
  uint32_t spawner_timeout_s_ = 0;
  std::chrono::steady_clock::time_point spawner_heard_;
  bool spawner_silent_ = false;
  std::unique_ptr<net::asio::steady_timer> watch_timer_;
  // An AdoptTask for the task being set up, answered once it runs (or failed).
  struct PendingAdoption {
    net::ConnectionPtr conn;
    std::string job;
    uint32_t task = 0;
    uint64_t incarnation = 0, epoch = 0;
  };
  std::optional<PendingAdoption> pending_adoption_;
  // A task that ended while its spawner was away (its app crashed, or it failed): the Result it
  // could not send, for the spawner that adopts it. Kept for the orphan time, until another
  // assignment, or until told.
  struct UntoldEnd {
    std::string job;
    uint32_t task = 0;
    uint64_t incarnation = 0, epoch = 0, moves = 0;
    std::string spawner_key;
    std::chrono::steady_clock::time_point until;
    std::shared_ptr<capnp::MallocMessageBuilder> envelope;  // holds the Result
  };
  std::optional<UntoldEnd> untold_;
  // The job and task of the assignment being set up (busy meanwhile).
  std::optional<std::pair<std::string, uint32_t>> setting_up_;
  std::shared_ptr<net::asio::steady_timer> setup_done_;  // cancelled once it ran or failed
  std::unique_ptr<Assignment> waiting_for_plugin_;
  LinkMonitors monitors_;
  net::TaskGroup tasks_;  // the links' and relays' coroutines
  NeighbourLinks links_;
  ItemRelay relay_;
  bool stopping_ = false;
  // The app's setup work and the joins of ended tasks. Declared last: joined first.
  net::asio::thread_pool work_{1};
};

}  // namespace aiac::daemon
