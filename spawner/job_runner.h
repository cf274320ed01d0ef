// Runs one job on daemons granted by a super-node: request daemons (waiting until enough are
// free), map the tasks onto them (MAHEVE by default), assign them (sending the app plugin only
// to daemons that do not have it), start them, watch them (progress lines, lost daemons),
// detect global convergence with a confirmation round, halt the tasks, gather and check the
// result, and give the daemons back.
//
// One JobRunner per run, on the spawner's io_context. Abort() (Ctrl-C) ends the run early; the
// daemons are still halted and released.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "aiac/convergence.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"
#include "spawner/app_loader.h"
#include "spawner/job_spec.h"
#include "spawner/run_summary.h"
#include "spawner/spawner_options.h"

namespace aiac::spawner {

struct RunSettings {
  std::string mapping = "maheve";  // maheve | default | aiac-qm | f-ec
  bool sync = false;
};

class JobRunner {
 public:
  JobRunner(JobSpec job, LoadedApp& app, SpawnerOptions options, RunSettings settings, Logger log);

  net::awaitable<RunSummary> Run(Endpoint supernode);
  void Abort(const std::string& why);
  // Optional: checked every progress tick; a non-empty answer fails the run (the local
  // cluster reports a child that died).
  void set_health_check(std::function<std::string()> check) { health_ = std::move(check); }

 private:
  struct Slot {
    TaskOutcome outcome;
    net::ConnectionPtr conn;
    bool ready = false;
    bool lost = false;
    bool converged = false;
    double change = 0;
  };
  struct GrantedDaemon {
    std::string id, address, cluster;
    double power;
  };

  net::awaitable<Status> AcquireDaemons(net::Connection& supernode);
  Status MapTasks();
  net::awaitable<void> WatchDaemon(size_t index);
  void OnConvergenceEvent();
  // Waits until `done()` holds, the run fails or aborts, or the deadline passes; prints progress.
  net::awaitable<Status> WaitUntil(const std::function<bool()>& done, const char* phase,
                                   std::chrono::steady_clock::time_point deadline);
  void Fail(const std::string& why);
  void Wake() { wake_->cancel(); }
  void PrintProgress();
  void SendAll(const std::function<void(proto::Envelope::Builder)>& fill);

  JobSpec job_;
  LoadedApp& app_;
  SpawnerOptions options_;
  RunSettings settings_;
  Logger log_;
  RunSummary summary_;
  std::string spawner_id_;
  std::vector<GrantedDaemon> granted_;
  std::vector<int> daemon_of_task_;
  std::vector<Slot> slots_;
  std::vector<std::vector<uint32_t>> senders_;  // per task: the tasks that send it values
  std::vector<std::vector<uint32_t>> backups_;  // per task: the tasks whose daemons keep its checkpoints
  std::vector<std::vector<uint32_t>> hosted_;   // per task: the tasks whose checkpoints its daemon keeps
  runtime::ConvergenceDetector detector_;
  std::unique_ptr<net::asio::steady_timer> wake_;
  std::string failure_;
  bool aborted_ = false;
  std::chrono::steady_clock::time_point start_, deadline_;
  std::function<std::string()> health_;
};

}  // namespace aiac::spawner
