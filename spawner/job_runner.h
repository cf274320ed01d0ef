// Runs one job on daemons granted by a super-node: request daemons (waiting until enough are
// free), map tasks onto them, assign, start, watch (progress lines, lost daemons), gather the
// results, check them, halt the tasks and give the daemons back.
//
// One JobRunner per run, on the spawner's io_context. Abort() (Ctrl-C) ends the run early; the
// daemons are still halted and released.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"
#include "spawner/app_catalog.h"
#include "spawner/job_spec.h"
#include "spawner/run_summary.h"
#include "spawner/spawner_options.h"

namespace aiac::spawner {

class JobRunner {
 public:
  JobRunner(JobSpec job, const AppDriver& app, SpawnerOptions options, Logger log);

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
  };

  net::awaitable<Status> AcquireDaemons(net::Connection& supernode);
  net::awaitable<void> WatchDaemon(size_t index);
  // Waits until `done()` holds, the run fails or aborts, or the deadline passes; prints progress.
  net::awaitable<Status> WaitUntil(const std::function<bool()>& done, const char* phase);
  void Fail(const std::string& why);
  void Wake() { wake_->cancel(); }
  void PrintProgress();

  JobSpec job_;
  const AppDriver& app_;
  SpawnerOptions options_;
  Logger log_;
  RunSummary summary_;
  std::string spawner_id_;
  std::vector<Slot> slots_;
  std::vector<std::string> granted_;  // every granted daemon id, spares included
  std::unique_ptr<net::asio::steady_timer> wake_;
  std::string failure_;
  bool aborted_ = false;
  std::chrono::steady_clock::time_point start_, deadline_;
  std::function<std::string()> health_;
};

}  // namespace aiac::spawner
