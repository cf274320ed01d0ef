// Runs one job on daemons granted by the super-nodes: request daemons (waiting until enough
// are free), map the tasks onto them (MAHEVE by default), assign them (sending the app plugin
// only to daemons that do not have it), start them, watch them (progress lines, lost daemons
// replaced from the spares or with daemons asked of a super-node), detect global convergence
// with a confirmation round, halt the tasks, gather and check the result, and give the daemons
// back. The link to the super-nodes fails over when its super-node is lost (supernode_session.h).
// What happens to the tasks while they run (reports, losses, replacements, convergence) is the
// Supervisor's decision (supervisor.h); this class carries it over the network.
//
// One JobRunner per run, on the spawner's io_context. Abort() (Ctrl-C) ends the run early; the
// daemons are still halted and released.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "balance/live_balancer.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"
#include "spawner/app_loader.h"
#include "spawner/convergence_forecast.h"
#include "spawner/job_spec.h"
#include "spawner/live_balancing.h"
#include "spawner/run_summary.h"
#include "spawner/spawner_options.h"
#include "spawner/supernode_session.h"
#include "spawner/supervisor.h"

namespace aiac::spawner {

// Daemons whose powers differ by at most this ratio count as equal: measured powers of
// identical hosts spread 1.04x on a quiet machine (power_bench), and reweighing on noise would
// unbalance what is balanced.
inline constexpr double kReweighSpread = 1.2;

struct RunSettings {
  std::string mapping = "maheve";  // maheve | default | aiac-qm | f-ec
  bool sync = false;
  // How long a replacement may wait for a daemon from a super-node once no granted one is free;
  // 0 asks once (a local cluster has no other daemons); < 0: the options' wait_daemons_ms.
  int64_t replacement_wait_ms = -1;
  // Live balancing (docs/balancing.md): Lee & Cho's D_P by default; it acts only when the app's tasks
  // hold movable items, and the summary then says "off" otherwise.
  balance::BalanceMode balance = balance::BalanceMode::kProposed;
  // The tasks' shares before the run (App::Reweigh): "power" by the daemons' powers when they
  // differ by more than kReweighSpread, "equal" (Lee & Cho's S_E) never, "sm" / "sp" Lee & Cho's
  // static S_M / S_P (eq. 9, means only / with sigma_n) on `nodes`, each daemon's figures.
  std::string split = "power";
  std::map<std::string, balance::Workstation> nodes;
  // How moved items travel (docs/balancing.md): "distpm" daemon to daemon, between clusters through
  // DistPM's gateways (spawner/gateways.h) with each channel's amount from its LP (3);
  // "greedy" the same with the channels filled greedily (section 5.1); "ring" and "nearest"
  // daemon to daemon between neighbours on the ring of tasks (redistribution/ring_moves.h: the
  // ring paper's plan, or the nearest-neighbour shuffle); "spawner" through the spawner (the
  // export's reply, then the import).
  std::string migration = "distpm";
  // A channel's latency (seconds) and seconds per byte between two clusters (the same cluster
  // twice: inside it), when known (an emulated platform's links); unknown channels count as
  // equal.
  std::function<std::optional<std::pair<double, double>>(const std::string&, const std::string&)> channel;
  // A local emulated platform's daemon ids in the order they were started: the granted daemons
  // are taken in it (the order they came up, which the default mapping follows), not in the
  // order their registrations happened to reach the super-node when they started together.
  // Empty: the super-node's order.
  std::vector<std::string> start_order;
};

class JobRunner {
 public:
  JobRunner(JobSpec job, LoadedApp& app, SpawnerOptions options, RunSettings settings, Logger log);

  // `supernodes`: tried in order, the next one when the current one is lost; not empty.
  net::awaitable<RunSummary> Run(std::vector<Endpoint> supernodes);
  void Abort(const std::string& why);
  // Optional: called at every progress tick (the local cluster reaps its exited children).
  void set_on_progress(std::function<void()> hook) { on_progress_ = std::move(hook); }
  // The daemons running a task now (started, connected, not being replaced); for fault injection.
  std::vector<std::string> RunningTaskDaemons() const;
  // Asks daemon `id`, which runs one of this job's tasks, to exit at once (fault injection with
  // daemons started by hand). False when no task of the job runs there.
  bool AskToExit(const std::string& id);

 private:
  net::awaitable<Status> AcquireDaemons();
  // The deployment of the tasks on the daemons granted (deployment.h), and its supervisor.
  Status MapTasks();
  // When the daemons the mapping chose differ in power by more than kReweighSpread, the app may
  // split the work again in proportion to their powers (App::Reweigh); the deployment then
  // takes the new task graph, on the same daemons.
  Status ReweighTasks(Deployment& deployment);
  // The supervisor's port: dials, sends and closes for it.
  SupervisorPort Port();
  // Dials task `index`'s daemon for `incarnation`, assigns it the task and feeds the supervisor
  // its messages, until that incarnation is over.
  net::awaitable<void> WatchDaemon(size_t index, uint64_t incarnation);
  // Sends task `index`'s assignment for `incarnation` on `conn`: its data in TaskData chunks
  // first when it is large (flow-controlled: one chunk queued at a time), then the AssignTask.
  net::awaitable<void> SendAssignment(size_t index, uint64_t incarnation, net::ConnectionPtr conn);
  // The app plugin to task `index`'s daemon, in chunks when it is large.
  void SendPlugin(size_t index);
  // The size of the chunks large data (task data, plugins) goes in: well under the frame limit.
  size_t ChunkBytes() const;
  // No granted daemon is free for task `index`: asks a super-node for one, until one is placed
  // or the replacement wait ends (then the run fails with `what`).
  net::awaitable<void> ReplaceFromSupernode(size_t index, uint64_t incarnation, std::string what);
  // Runs until the tasks are globally converged and the result gathered from their snapshots
  // passes the app's test (GatherReport "converged" or "diverged"); while it falls short
  // ("unconverged"), tightens every task's local test and goes on. Keeps the last gathered
  // residual and output in the summary, for a run that fails later.
  net::awaitable<Result<app::GatherReport>> RunToVerifiedResult();
  // Waits until `done()` holds, the run fails or aborts, or the deadline passes; prints progress.
  // While the tasks iterate towards a result (`forecast`), it also ends the wait when the
  // forecast says the run cannot converge in time (convergence_forecast.h), and balances.
  // While it runs the tasks (`forecast`), live balancing acts too (BalanceTick).
  net::awaitable<Status> WaitUntil(const std::function<bool()>& done, const char* phase,
                                   std::chrono::steady_clock::time_point deadline, bool forecast = false);
  // Asks every task for its current result slice and gathers them with the app (the residual and
  // output kept in the summary); nullopt when a task moved meanwhile (its slice is gone).
  net::awaitable<Result<std::optional<app::GatherReport>>> GatherSnapshots(
      const char* phase, std::chrono::steady_clock::time_point deadline);
  // The run ended short of a result while every task still runs (a timeout, a forecast that it
  // cannot converge): gathers the tasks' current slices so that the last iterate is written,
  // with its residual, and the summary says it is partial.
  net::awaitable<void> GatherPartial();
  const std::string& failure() const { return supervisor_ ? supervisor_->failure() : failure_; }
  void Fail(const std::string& why);
  void Wake() { if (wake_) wake_->cancel(); }
  void PrintProgress(const SupervisorProgress& progress);
  // Live balancing, at every wake of the "running" wait: feeds the tasks' figures to the
  // balancer, starts the next move of a redistribution, or runs a checking point when one is
  // due. Returns when it wants to be woken next.
  std::chrono::steady_clock::time_point BalanceTick(std::chrono::steady_clock::time_point now);
  // Starts the moves of the redistribution under way that can start now, in order: each whose
  // two tasks take part in no move under way (DistPM's channels run in parallel); chain moves
  // one at a time. Moves whose tasks are not both running are dropped. True while moves are
  // under way.
  bool StartMoves(std::chrono::steady_clock::time_point now);
  // The cluster of granted daemon `daemon`, or nullopt.
  std::optional<std::string> ClusterOf(const std::string& daemon) const;
  // Each task's daemon's cluster now.
  std::vector<std::string> TaskClusters() const;
  // The tasks' clusters and their channels for the balancer (LiveBalancing::SetClusters).
  ClusterView Clusters() const;
  // The ring planner `--migration ring|nearest` asks for (nullopt: another migration).
  std::optional<redistribution::RingPlanner> Ring() const;
  // The links between (and within) clusters as the daemons' monitors last reported them,
  // averaged over the daemons' links from one cluster to another.
  std::vector<LinkFigure> MeasuredChannels() const;
  // One line per redistribution: the speeds, the expected ends (eqs. 10 and 9) and the moves.
  void LogCheckingPoint(const std::vector<balance::MoveOrder>& moves) const;
  double SinceStart(std::chrono::steady_clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }
  std::chrono::steady_clock::time_point AtSecond(double s) const {  // SinceStart's inverse
    return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
  }

  JobSpec job_;
  LoadedApp& app_;
  SpawnerOptions options_;
  RunSettings settings_;
  Logger log_;
  RunSummary summary_;
  std::string spawner_id_;
  std::unique_ptr<SupernodeSession> supernodes_;
  std::vector<GrantedDaemon> first_grant_;  // until MapTasks hands it to the deployment
  std::unique_ptr<Supervisor> supervisor_;
  std::vector<net::ConnectionPtr> conns_;   // per task: its current daemon's connection
  std::unique_ptr<net::asio::steady_timer> wake_;
  std::string failure_;  // before the supervisor exists
  bool aborted_ = false;
  std::chrono::steady_clock::time_point start_, deadline_;
  std::chrono::steady_clock::time_point iterating_since_;
  std::optional<ConvergenceForecast> forecast_;  // when the app gives a local threshold
  size_t forecast_moves_ = 0;                    // replacements the forecast has seen
  uint64_t forecast_item_moves_ = 0;             // item moves (live balancing) it has seen
  std::function<void()> on_progress_;
  std::unique_ptr<LiveBalancing> balancing_;
  std::deque<balance::MoveOrder> move_queue_;      // the moves of the redistribution under way
  std::optional<std::chrono::steady_clock::time_point> redistribution_since_;
  bool balancing_announced_ = false;
};

}  // namespace aiac::spawner
