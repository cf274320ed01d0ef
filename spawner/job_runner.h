// Runs one job on daemons granted by the super-nodes, in four phases:
//   acquire    request daemons (waiting until enough are free), map the tasks onto them (MAHEVE
//              by default), and let the app reweigh its split for their powers;
//   deploy     assign the tasks (sending the plugin only to daemons that lack it) until every
//              one is ready;
//   supervise  start them and watch them (progress lines, lost daemons replaced, live
//              balancing) until global convergence, confirmed by a round, and a gathered
//              result the app accepts (the local tests are tightened while it falls short);
//   finish     halt the tasks, collect their final counts, give the daemons back.
// What happens to the tasks (reports, losses, replacements, convergence, moves) is the
// Supervisor's decision (supervisor.h); DaemonLinks carries it over the network
// (daemon_links.h), BalancingDriver decides the moves (balancing_driver.h), and the link to the
// super-nodes fails over when its super-node is lost (supernode_session.h).
//
// One JobRunner per run, on the spawner's io_context. Abort() (Ctrl-C, or `aiac-spawner cancel`
// through the super-node) ends the run early: the tasks' current iterate is gathered and written
// when they run (a partial result), then the daemons are halted and released. A second Abort()
// does not wait for that iterate.
//
// From its grant on, the job is registered with the super-node and described to it (phase,
// progress, tasks) at most once a second, for `aiac-spawner status`.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"
#include "spawner/app_loader.h"
#include "spawner/balancing_driver.h"
#include "spawner/convergence_forecast.h"
#include "spawner/daemon_links.h"
#include "spawner/job_spec.h"
#include "spawner/job_state.h"
#include "spawner/run_history.h"
#include "spawner/run_settings.h"
#include "spawner/run_summary.h"
#include "spawner/run_trace.h"
#include "spawner/spawner_options.h"
#include "spawner/supernode_session.h"
#include "spawner/supervisor.h"

namespace aiac::spawner {

class JobRunner {
 public:
  JobRunner(JobSpec job, LoadedApp& app, SpawnerOptions options, RunSettings settings, Logger log);

  // `supernodes`: tried in order, the next one when the current one is lost; not empty.
  net::awaitable<RunSummary> Run(std::vector<Endpoint> supernodes);
  const std::string& job_id() const { return summary_.job_id; }
  // The job's id is `id` (`run --detach` prints it before the run starts). Before Run.
  void set_job_id(std::string id) { summary_.job_id = std::move(id); }
  // The command began at `start`, read its input for `read_seconds` and had it prepared by
  // `prepared` (run_summary.h's phases): the summary, and the end the state keeps, then cover
  // the whole command, what came between `prepared` and the tasks' start counting as assigning.
  // Without it they start at Run. Before Run.
  void set_command_times(SteadyTime start, double read_seconds, SteadyTime prepared) {
    times_.command = CommandTimes{start, read_seconds, prepared};
  }
  // Keeps what a resumed spawner needs in `state` (spawner/job_state.h), from the grant on;
  // `run` says how the job was started (its id and super-nodes are filled in here). Before Run.
  void set_state(std::unique_ptr<JobState> state, StoredRun run);
  // Takes over the job `state` describes, whose spawner was lost: Run then adopts its tasks on
  // their daemons (replacing the daemons lost meanwhile) instead of asking for daemons and
  // assigning; live balancing's moves under way go on (MoveLedger::Resend). InvalidArgument when
  // the state is not this job's or its run ended; kCorruption when a record does not decode.
  // Before Run.
  Status Resume(std::unique_ptr<JobState> state);
  void Abort(const std::string& why);
  // Optional: called at every progress tick (the local cluster reaps its exited children).
  void set_on_progress(std::function<void()> hook) { on_progress_ = std::move(hook); }
  // Where the progress line goes: by default a log line at each tick; `show` draws it in place
  // instead (a terminal, core/status_line_sink.h), and is given "" once the run ends; `quiet`
  // shows none.
  void set_progress_line(std::function<void(const std::string&)> show) {
    progress_line_ = std::move(show);
  }
  void set_quiet(bool quiet) { quiet_ = quiet; }
  // `run --history`: every task report, loss, resumption, item move and gathered residual.
  void set_history(std::unique_ptr<RunHistory> history) { history_ = std::move(history); }
  // `run --trace`: the same events as a Chrome trace, written when the run ends.
  void set_trace(std::unique_ptr<RunTrace> trace) { trace_ = std::move(trace); }
  // The daemons running a task now (started, connected, not being replaced); for fault injection.
  std::vector<std::string> RunningTaskDaemons() const;
  // What the progress line shows; nullopt before the tasks are mapped.
  std::optional<SupervisorProgress> progress() const;
  // Asks daemon `id`, which runs one of this job's tasks, to exit at once (fault injection with
  // daemons started by hand). False when no task of the job runs there.
  bool AskToExit(const std::string& id);

 private:
  // When each phase began, for the summary's phases (run_summary.h).
  struct CommandTimes {
    SteadyTime start;
    double read_seconds = 0;
    SteadyTime prepared;
  };
  struct PhaseTimes {
    std::optional<CommandTimes> command;  // set_command_times
    SteadyTime start;                     // of Run
    std::optional<SteadyTime> started;    // the tasks started iterating
    std::optional<SteadyTime> checked;    // a checked result, or the end of trying
  };

  // ---- Acquire.
  net::awaitable<Status> Acquire();
  net::awaitable<Status> AcquireDaemons();
  // The deployment of the tasks on the daemons granted (deployment.h), and its supervisor.
  Status MapTasks();
  // The granted daemons in the order they were started (RunSettings::start_order), if known.
  void OrderAsStarted();
  // When the daemons the mapping chose differ in power by more than kReweighSpread (or a static
  // split is asked for), the app may split the work again for those powers (App::Reweigh); the
  // deployment then takes the new task graph, on the same daemons.
  Status ReweighTasks(Deployment& deployment);
  // DistPM's two layers of coordinators (section 4.1): each cluster's tasks report through one
  // of them, the spawner being the global one.
  void GroupByCluster();

  // ---- Deploy: every task assigned and ready.
  net::awaitable<Status> Deploy();
  // ---- Or, resumed: the stored deployment rebuilt, and every task adopted (or replaced).
  net::awaitable<Status> AcquireResumed();
  net::awaitable<Status> Readopt();
  // Writes the deployment and the progress to the state (the supervisor's port.persist); a
  // failed write is logged once, and the job then cannot be resumed.
  void SaveState();
  // Writes the run's end (`summary`) to the state: `resume` then says the job ended.
  void SaveEnd(const RunSummary& summary);

  // ---- Supervise: the tasks iterate until a result the app accepts.
  net::awaitable<Result<app::GatherReport>> Supervise();
  // Runs until the tasks are globally converged and the result gathered from their snapshots
  // passes the app's test (kConverged or kDiverged); while it falls short (kUnconverged),
  // tightens every task's local test and goes on. Keeps the last gathered residual and output
  // in the summary, for a run that fails later.
  net::awaitable<Result<app::GatherReport>> RunToVerifiedResult();
  // Asks every task for its current result slice and gathers them with the app (the residual and
  // output kept in the summary); nullopt when a task moved meanwhile (its slice is gone).
  net::awaitable<Result<std::optional<app::GatherReport>>> GatherSnapshots(const char* phase,
                                                                           SteadyTime deadline);
  // The run ended short of a result while every task still runs (a timeout, a forecast that it
  // cannot converge): gathers the tasks' current slices so that the last iterate is written,
  // with its residual, and the summary says it is partial.
  net::awaitable<std::optional<app::GatherReport>> GatherPartial();

  // ---- Finish: halt, final counts, release.
  net::awaitable<void> Finish(bool converged);

  // Waits until `done()` holds, the run fails or aborts, or the deadline passes; prints progress.
  // While the tasks iterate towards a result (`iterating`), it also ends the wait when the
  // forecast says the run cannot converge in time (convergence_forecast.h), and balances.
  net::awaitable<Status> WaitUntil(const std::function<bool()>& done, const char* phase,
                                   SteadyTime deadline, bool iterating = false);
  // At a progress tick while iterating: feeds the forecast; its verdict when the run cannot
  // converge in time, else empty.
  std::string Forecast(SteadyTime now, const SupervisorProgress& progress);
  // The summary, once the run ended with `status`: written to the state, kept, returned.
  RunSummary Summarize(RunStatus status, std::string error);
  // Live balancing's figures for the summary and the state: this spawner's and its
  // predecessors'.
  BalancingStats BalancingSoFar() const;
  // The summary of a run ending with `status` at `end`, from what is known by then.
  RunSummary Summary(RunStatus status, std::string error, SteadyTime end) const;
  // How a run that ended short of a checked result ends: aborted, diverged or failed.
  RunStatus FailureStatus() const;
  const std::string& failure() const { return supervisor_ ? supervisor_->failure() : failure_; }
  void Fail(const std::string& why);
  void Wake() {
    if (wake_) wake_->cancel();
  }
  void PrintProgress(const SupervisorProgress& progress);
  // Live balancing's item moves so far (0 without it).
  uint64_t ItemMoves() const { return balancing_ ? balancing_->moves() : 0; }
  // The forecast's time to convergence (convergence_forecast.h); nullopt without one.
  std::optional<double> SecondsToGo() const {
    return forecast_ ? forecast_->SecondsToGo() : std::nullopt;
  }
  void RecordHistory(const HistoryEntry& entry);
  // Describes the job to the super-node (net/job_status.h): at most once a second unless `now`.
  void ReportStatus(SteadyTime now, bool at_once = false);
  double SinceStart(SteadyTime t) const {
    return std::chrono::duration<double>(t - times_.start).count();
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
  std::unique_ptr<DaemonLinks> links_;
  std::unique_ptr<Supervisor> supervisor_;
  std::unique_ptr<BalancingDriver> balancing_;
  std::unique_ptr<net::asio::steady_timer> wake_;
  std::string failure_;  // before the supervisor exists
  bool aborted_ = false;
  std::string abort_reason_;
  bool gathering_last_ = false;      // an aborted run's last iterate is being gathered
  std::string phase_ = "acquiring";  // for the super-node: the phase WaitUntil is in
  SteadyTime last_status_{};
  SteadyTime next_alive_{};  // the next SpawnerAlive to the daemons (DaemonLinks::SendAlive)
  int64_t started_unix_ = 0;
  PhaseTimes times_;
  SteadyTime deadline_;
  std::optional<ConvergenceForecast> forecast_;  // when the app gives a local threshold
  size_t forecast_moves_ = 0;                    // replacements the forecast has seen
  uint64_t forecast_item_moves_ = 0;             // item moves (live balancing) it has seen
  std::function<void()> on_progress_;
  std::function<void(const std::string&)> progress_line_;
  bool quiet_ = false;
  std::unique_ptr<JobState> state_;
  StoredRun stored_run_;
  bool state_broken_ = false;
  // A resume that failed before it reached the tasks' daemons: they run on without a spawner,
  // and the job's end is not stored, so that another `resume` may take it over.
  bool not_taken_over_ = false;
  size_t initial_daemons_ = 0;  // granted at the start (the rest: replacements)
  // Resumed: what the lost spawner had stored.
  std::optional<StoredDeployment> resumed_deployment_;
  std::optional<StoredProgress> resumed_progress_;
  // What the spawners that ran the job before this one balanced (a resumed run; none otherwise).
  BalancingStats earlier_balancing_;
  std::optional<StoredLedger> resumed_ledger_;
  std::vector<size_t> journal_stored_;  // per task: the ledger's journal entries stored
  std::unique_ptr<RunHistory> history_;
  std::unique_ptr<RunTrace> trace_;
  void WriteTrace(SteadyTime end);
};

}  // namespace aiac::spawner
