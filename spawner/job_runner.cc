#include "spawner/job_runner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "core/clock.h"
#include "core/hex.h"
#include "net/identity.h"
#include "net/random.h"
#include "spawner/gateways.h"
#include "spawner/supernode_query.h"

namespace aiac::spawner {

namespace asio = net::asio;
using net::awaitable;
using Clock = std::chrono::steady_clock;

JobRunner::JobRunner(JobSpec job, LoadedApp& app, SpawnerOptions options, RunSettings settings,
                     Logger log)
    : job_(std::move(job)),
      app_(app),
      options_(std::move(options)),
      settings_(std::move(settings)),
      log_(std::move(log)) {
  summary_.job = job_.name;
  summary_.job_id = job_.name + "-" + Hex(net::RandomBytes(3));
  summary_.app = job_.app;
  summary_.tasks = job_.tasks;
  summary_.mode = settings_.sync ? "sync" : "async";
  summary_.mapping = settings_.mapping;
  summary_.balancing.mode = balance::BalanceModeName(settings_.balance);
  summary_.balancing.migration = MigrationName(settings_.migration);
  // The id its certificate names; in tests without identities, one per process.
  spawner_id_ = SpawnerId(options_.net);
}

void JobRunner::Abort(const std::string& why) {
  const bool again = aborted_;
  aborted_ = true;
  if (!again) abort_reason_ = why;
  if (!again && supervisor_ && supervisor_->started()) {
    // The tasks run: their current iterate is gathered (Run) before they are halted.
    log_->warn("job {}: {}; gathering the last iterate", summary_.job_id, why);
    Wake();
    return;
  }
  Fail(why);
  // Still waiting for daemons: nothing to give back, so the super-node link can go now.
  if (supernodes_ && !supervisor_) supernodes_->Stop();
}

void JobRunner::Fail(const std::string& why) {
  if (supervisor_) {
    supervisor_->Fail(why);
  } else if (failure_.empty()) {
    failure_ = why;
  }
  Wake();
}

RunStatus JobRunner::FailureStatus() const {
  if (aborted_) return RunStatus::kAborted;
  return supervisor_ ? supervisor_->failure_status() : RunStatus::kFailed;
}

awaitable<RunSummary> JobRunner::Run(std::vector<Endpoint> supernodes) {
  auto executor = co_await asio::this_coro::executor;
  wake_ = std::make_unique<asio::steady_timer>(executor);
  times_.start = Clock::now();
  const int64_t now_unix = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  // A resumed job keeps its start: its timeout counts from there, not from the resume.
  if (started_unix_ == 0) started_unix_ = now_unix;
  const auto elapsed = std::chrono::seconds(std::max<int64_t>(0, now_unix - started_unix_));
  deadline_ =
      times_.start + std::chrono::duration_cast<std::chrono::milliseconds>(job_.timeout) - elapsed;
  for (const auto& ep : supernodes) stored_run_.supernodes.push_back(ep.ToString());
  supernodes_ =
      std::make_unique<SupernodeSession>(std::move(supernodes), options_.net, spawner_id_, log_);
  supernodes_->OnRevoked([this] {
    if (links_) links_->CloseRevoked();
  });
  supernodes_->OnCancel([this](const std::string& who) { Abort("cancelled by " + who); });
  supernodes_->Start(executor);
  // (if/else, not `?:`: g++ 12 miscompiles a co_await of a conditional expression)
  const bool resumed = resumed_deployment_.has_value();
  Status acquired;
  if (resumed) {
    acquired = co_await AcquireResumed();
  } else {
    acquired = co_await Acquire();
  }
  if (!acquired.ok()) {
    supernodes_->Stop();
    not_taken_over_ = resumed;
    co_return Summarize(FailureStatus(), acquired.message());
  }
  Status outcome;
  if (resumed) {
    outcome = co_await Readopt();
  } else {
    outcome = co_await Deploy();
  }
  std::optional<app::GatherReport> verified;
  if (outcome.ok()) {
    auto checked = co_await Supervise();
    if (checked.ok()) {
      verified = std::move(*checked);
    } else {
      outcome = checked.status();
    }
  }
  // Short of a result with every task still running: their current iterate is the best there is,
  // and when it passes the app's own test it is the answer, whatever the local tests said (they
  // may never settle: an iteration that oscillates along a singular system's null space).
  if (!outcome.ok() && supervisor_->started() && supervisor_->failure().empty()) {
    gathering_last_ = true;
    auto last = co_await GatherPartial();
    gathering_last_ = false;
    // (an aborted run stays aborted: the user stopped it, whatever its last iterate is)
    if (last && last->status == app::GatherStatus::kConverged && !aborted_) {
      const std::string note = "the local tests had not settled (" + outcome.message() +
                               "), but the last iterate meets the app's test";
      log_->info("job {}: {}: converged", summary_.job_id, note);
      summary_.notes.push_back(note);
      if (times_.started && times_.checked)
        summary_.compute_seconds = Seconds(*times_.checked - *times_.started);
      verified = std::move(*last);
      outcome = Status::Ok();
    }
  }
  RunStatus status = FailureStatus();
  std::string error = outcome.message();
  if (outcome.ok()) {
    // (residual and output were kept when the result was checked)
    for (const auto& [k, v] : verified->numbers) summary_.result[k] = v;
    status = verified->status == app::GatherStatus::kDiverged ? RunStatus::kDiverged
                                                              : RunStatus::kConverged;
    error = verified->error;
  }
  // The end is stored before the tasks are halted, and again with their final counts: a spawner
  // killed between its halts and its end left a state that `resume` took for a running job whose
  // tasks were all gone, and restarted them from scratch (or failed, short of daemons).
  if (!supervisor_->superseded()) SaveEnd(Summary(status, error, Clock::now()));
  co_await Finish(outcome.ok());
  co_return Summarize(status, std::move(error));
}

void JobRunner::set_state(std::unique_ptr<JobState> state, StoredRun run) {
  state_ = std::move(state);
  stored_run_ = std::move(run);
}

Status JobRunner::Resume(std::unique_ptr<JobState> state) {
  AIAC_ASSIGN_OR_RETURN(StoredRun run, state->run());
  AIAC_ASSIGN_OR_RETURN(auto end, state->end());
  if (end) return InvalidArgument("job " + run.job_id + " ended already: " + end->summary_line);
  AIAC_ASSIGN_OR_RETURN(StoredDeployment deployment, state->deployment());
  AIAC_ASSIGN_OR_RETURN(StoredProgress progress, state->progress());
  if (deployment.places.size() != job_.tasks) {
    return InvalidArgument("state " + state->dir() + " holds " +
                           std::to_string(deployment.places.size()) + " tasks, the job file " +
                           std::to_string(job_.tasks));
  }
  summary_.job_id = run.job_id;
  started_unix_ = run.started_unix;
  ++run.epoch;
  // Stored before any daemon hears of this spawner: a later one must be newer still.
  AIAC_RETURN_IF_ERROR(state->Put(run));
  stored_run_ = std::move(run);
  stored_run_.supernodes.clear();  // the ones this run uses, from Run
  state_ = std::move(state);
  AIAC_ASSIGN_OR_RETURN(StoredLedger ledger, state_->ledger(job_.tasks));
  for (const auto& journal : ledger.journals) journal_stored_.push_back(journal.size());
  resumed_deployment_ = std::move(deployment);
  earlier_balancing_ = progress.balancing;
  resumed_progress_ = std::move(progress);
  resumed_ledger_ = std::move(ledger);
  return Status::Ok();
}

void JobRunner::SaveState() {
  if (!state_ || !supervisor_ || state_broken_) return;
  const Deployment& d = supervisor_->deployment();
  StoredDeployment stored;
  stored.granted = d.granted();
  stored.initial = initial_daemons_;
  for (size_t t = 0; t < d.tasks(); ++t) {
    stored.places.push_back(d.task(t));
    stored.backups.push_back(d.backups(t));
  }
  for (const auto& g : d.granted()) {
    if (d.lost(g.id)) stored.lost.push_back(g.id);
  }
  StoredProgress progress;
  progress.started = supervisor_->started();
  progress.tighten = supervisor_->tighten();
  progress.failures = supervisor_->failures();
  progress.replacements = supervisor_->replacements();
  progress.trimmed = supervisor_->trimmed();
  progress.app_crashes = supervisor_->app_crashes();
  progress.balancing = BalancingSoFar();
  // The ledger's journal entries not stored yet (they are only ever appended).
  const MoveLedger& ledger = supervisor_->ledger();
  journal_stored_.resize(d.tasks(), 0);
  std::vector<LedgerAppend> appended;
  for (size_t t = 0; t < d.tasks(); ++t) {
    for (size_t i = journal_stored_[t]; i < ledger.journal_size(t); ++i)
      appended.push_back({t, i, &ledger.journal_entry(t, i)});
  }
  const Status saved = state_->Save(stored, progress, ledger.head(), appended);
  if (saved.ok()) {
    for (size_t t = 0; t < d.tasks(); ++t) journal_stored_[t] = ledger.journal_size(t);
  } else {
    state_broken_ = true;
    log_->warn("job {}: the job can no longer be resumed: {}", summary_.job_id, saved.message());
  }
}

void JobRunner::SaveEnd(const RunSummary& summary) {
  if (!state_ || state_broken_) return;
  if (not_taken_over_) {
    log_->warn(
        "job {}: not taken over; its tasks run on where they are (for its orphan_seconds), "
        "and `aiac-spawner resume {}` may try again",
        summary_.job_id, state_->dir());
    return;
  }
  if (Status s = state_->Put(
          StoredEnd{RunStatusName(summary.status), ToText(summary), ToJson(summary).dump()});
      !s.ok()) {
    log_->warn("job {}: its end could not be stored in {}: {}", summary_.job_id, state_->dir(),
               s.message());
  }
}

RunSummary JobRunner::Summarize(RunStatus status, std::string error) {
  if (progress_line_) progress_line_("");
  if (history_ && !history_->Flush()) {
    log_->warn("job {}: --history {} is incomplete: a write failed", summary_.job_id,
               history_->path());
  }
  const auto end = Clock::now();
  summary_ = Summary(status, std::move(error), end);
  SaveEnd(summary_);
  if (trace_) WriteTrace(end);
  return summary_;
}

RunSummary JobRunner::Summary(RunStatus status, std::string error, SteadyTime end) const {
  RunSummary summary = summary_;
  summary.status = status;
  summary.error = std::move(error);
  const SteadyTime begin = times_.command ? times_.command->start : times_.start;
  const SteadyTime prepared = times_.command ? times_.command->prepared : times_.start;
  summary.wall_seconds = Seconds(end - begin);
  if (times_.command) {
    summary.phases.read = times_.command->read_seconds;
    summary.phases.prepare = std::max(0.0, Seconds(prepared - begin) - summary.phases.read);
  }
  summary.phases.assign = Seconds(times_.started.value_or(end) - prepared);
  summary.phases.iterate =
      times_.started ? Seconds(times_.checked.value_or(end) - *times_.started) : 0;
  summary.phases.gather = times_.checked ? Seconds(end - *times_.checked) : 0;
  summary.balancing = BalancingSoFar();
  if (supervisor_) {
    summary.daemons = static_cast<uint32_t>(supervisor_->deployment().granted().size());
    summary.links = MeasuredChannels(*supervisor_);
    summary.per_task = supervisor_->outcomes();
    summary.failures = supervisor_->failures();
    summary.detection_seconds = supervisor_->detection_seconds();
    summary.notes.insert(summary.notes.begin(), supervisor_->notes().begin(),
                         supervisor_->notes().end());
    summary.replacements = supervisor_->replacements();
    summary.app_crashes = supervisor_->app_crashes();
  }
  if (supernodes_) summary.supernode_failovers = static_cast<uint32_t>(supernodes_->failovers());
  summary.spawner_restarts = static_cast<uint32_t>(stored_run_.epoch - 1);
  summary.spawner_cpu_seconds = ProcessCpuSeconds();
  return summary;
}

BalancingStats JobRunner::BalancingSoFar() const {
  BalancingStats b = balancing_ ? balancing_->stats() : earlier_balancing_;
  if (supervisor_) {
    b.coordinators = static_cast<uint32_t>(supervisor_->groups());
    b.relayed_reports = earlier_balancing_.relayed_reports + supervisor_->relayed_reports();
  }
  return b;
}

void JobRunner::WriteTrace(SteadyTime end) {
  const double started = times_.started ? SinceStart(*times_.started) : SinceStart(end);
  const double checked = times_.checked ? SinceStart(*times_.checked) : SinceStart(end);
  trace_->Phase("assign", 0, started);
  trace_->Phase("iterate", started, checked);
  trace_->Phase("gather", checked, SinceStart(end));
  if (trace_->dropped() > 0) {
    log_->warn("job {}: --trace {} keeps the first {} events, {} more were left out",
               summary_.job_id, trace_->path(), RunTrace::kMaxEvents, trace_->dropped());
  }
  if (Status s = trace_->Write(summary_.job_id); !s.ok()) {
    log_->warn("job {}: {}", summary_.job_id, s.message());
  } else {
    log_->info("job {}: trace written to {} (open it in ui.perfetto.dev)", summary_.job_id,
               trace_->path());
  }
}

// ---- Acquire.

awaitable<Status> JobRunner::Acquire() {
  Status acquired = co_await AcquireDaemons();
  if (acquired.ok()) acquired = MapTasks();
  co_return acquired;
}

awaitable<Status> JobRunner::AcquireDaemons() {
  // The super-nodes may still be starting: a few passes over the list before giving up.
  if (Status linked = co_await supernodes_->WaitConnected(10); !linked.ok()) co_return linked;
  const auto wait_until = Clock::now() + options_.wait_daemons;
  std::string last_error;
  asio::steady_timer pause(co_await asio::this_coro::executor);
  while (!aborted_) {
    auto answer = co_await supernodes_->Request(summary_.job_id, job_.tasks,
                                                static_cast<uint32_t>(options_.spares), wait_until);
    if (aborted_) break;
    if (!answer.ok()) co_return answer.status();
    if (answer->error.empty()) {
      if (answer->daemons.size() < job_.tasks)
        co_return ProtocolError("super-node granted too few daemons");
      first_grant_ = std::move(answer->daemons);
      summary_.daemons = static_cast<uint32_t>(first_grant_.size());
      log_->info("job {}: granted {} daemons by {}", summary_.job_id, first_grant_.size(),
                 supernodes_->Describe());
      co_return Status::Ok();
    }
    if (Clock::now() > wait_until) {
      co_return ResourceExhausted("not enough daemons after " +
                                  std::to_string(options_.wait_daemons.count()) +
                                  " ms: " + answer->error);
    }
    if (answer->error != last_error) log_->info("waiting for daemons: {}", answer->error);
    last_error = answer->error;
    pause.expires_after(std::chrono::milliseconds(200));
    co_await pause.async_wait(net::use_nothrow);
  }
  co_return Aborted(failure());
}

void JobRunner::OrderAsStarted() {
  if (settings_.start_order.empty()) return;
  std::map<std::string, size_t> started;
  for (const std::string& id : settings_.start_order) started.emplace(id, started.size());
  const auto rank = [&](const GrantedDaemon& d) {
    auto it = started.find(d.id);
    return it == started.end() ? started.size() : it->second;  // not started here: last
  };
  std::stable_sort(
      first_grant_.begin(), first_grant_.end(),
      [&](const GrantedDaemon& a, const GrantedDaemon& b) { return rank(a) < rank(b); });
}

Status JobRunner::MapTasks() {
  const bool checkpointing =
      job_.backups > 0 && (job_.checkpoint_period.count() > 0 || job_.checkpoint_every > 0);
  DeploymentSpec spec{app_.plan.graph, settings_.mapping, checkpointing ? job_.backups : 0};
  spec.graph.resize(job_.tasks);
  OrderAsStarted();
  initial_daemons_ = first_grant_.size();
  AIAC_ASSIGN_OR_RETURN(auto deployment,
                        Deployment::Create(std::move(spec), std::move(first_grant_)));
  AIAC_RETURN_IF_ERROR(ReweighTasks(*deployment));
  if (resumed_deployment_) {
    const StoredDeployment& s = *resumed_deployment_;
    const std::vector<GrantedDaemon> later(s.granted.begin() + static_cast<ptrdiff_t>(s.initial),
                                           s.granted.end());
    if (Status fits = deployment->Resume(later, s.lost, s.places, s.backups); !fits.ok())
      return InvalidArgument("state " + state_->dir() + ": " + fits.message());
  }
  SupervisorSettings settings;
  settings.job_id = summary_.job_id;
  settings.sync = settings_.sync;
  settings.sync_replaces = job_.value_log_mb > 0 && checkpointing;
  settings.failure_timeout = options_.failure_timeout;
  settings.setup_timeout = options_.setup_timeout;
  settings.spawner_incarnation = stored_run_.epoch;
  links_ = std::make_unique<DaemonLinks>(
      wake_->get_executor(),
      DaemonLinksContext{job_, app_, options_, settings_, *supernodes_, summary_.job_id,
                         spawner_id_, stored_run_.epoch, log_,
                         [this](const std::string& why) { Fail(why); }, [this] { Wake(); }},
      job_.tasks);
  SupervisorPort port = links_->Port();
  if (history_ || trace_) port.record = [this](const HistoryEntry& e) { RecordHistory(e); };
  if (state_) port.persist = [this] { SaveState(); };
  supervisor_ = std::make_unique<Supervisor>(std::move(settings), std::move(deployment),
                                             std::move(port), log_);
  if (resumed_progress_) {
    StoredProgress& p = *resumed_progress_;
    StoredLedger& l = *resumed_ledger_;
    supervisor_->Restore(p.started, p.tighten, p.failures, std::move(p.replacements),
                         MoveLedger::Restore(std::move(l.head), std::move(l.journals)), p.trimmed,
                         std::move(p.app_crashes));
    resumed_ledger_.reset();
  }
  links_->Attach(*supervisor_);
  GroupByCluster();
  if (!failure_.empty()) supervisor_->Fail(failure_);  // aborted meanwhile
  return Status::Ok();
}

void JobRunner::GroupByCluster() {
  const bool distpm =
      settings_.migration == Migration::kDistPM || settings_.migration == Migration::kGreedy;
  if (settings_.balance == balance::BalanceMode::kOff || !distpm) return;
  auto groups = ReportGroups(TaskClusters(*supervisor_));
  if (groups.empty()) return;
  std::string firsts;
  for (const auto& g : groups) firsts += (firsts.empty() ? "" : ", ") + std::to_string(g.front());
  log_->info("job {}: {} groups report through their coordinators, the daemons of tasks {}",
             summary_.job_id, groups.size(), firsts);
  supervisor_->SetGroups(std::move(groups));
}

Status JobRunner::ReweighTasks(Deployment& deployment) {
  if (settings_.split == Split::kEqual) return Status::Ok();
  const bool static_split = settings_.split == Split::kSm || settings_.split == Split::kSp;
  std::vector<double> powers;
  std::vector<balance::Workstation> nodes;
  for (size_t t = 0; t < deployment.tasks(); ++t) {
    for (const auto& d : deployment.granted()) {
      if (d.id != deployment.task(t).daemon) continue;
      powers.push_back(d.power > 0 ? d.power : 1.0);
      if (auto it = settings_.nodes.find(d.id); static_split) {
        if (it == settings_.nodes.end()) {
          return Internal("--split " + SplitName(settings_.split) + ": no figures for daemon " +
                          d.id);
        }
        nodes.push_back(it->second);
      }
    }
  }
  if (powers.size() != deployment.tasks()) return Status::Ok();
  if (static_split) {
    // Lee & Cho's static schemes (section 4.1): each task's share of the work in proportion to
    // its node's expected rate, eq. (9) with sigma_n for S_P, without for S_M.
    powers = settings_.split == Split::kSm ? balance::SplitMeans(nodes, 1)
                                           : balance::SplitProposed(nodes, 1);
  }
  const auto [lo, hi] = std::minmax_element(powers.begin(), powers.end());
  if (static_split ? *hi <= *lo * (1 + 1e-9) : *hi <= kReweighSpread * *lo) return Status::Ok();
  const auto t0 = Clock::now();
  auto plan = app_.app->Reweigh(app_.params, powers);
  if (!plan.ok()) {
    return Status(plan.status().code(),
                  "weighing the tasks by their daemons' powers: " + plan.status().message());
  }
  if (!*plan) return Status::Ok();
  if ((*plan)->graph.size() != deployment.tasks() || (*plan)->slices.size() != deployment.tasks()) {
    return Internal("the app's reweighed plan has " + std::to_string((*plan)->graph.size()) +
                    " tasks, not " + std::to_string(deployment.tasks()));
  }
  AIAC_RETURN_IF_ERROR(deployment.Regraph((*plan)->graph));
  (*plan)->read_seconds = app_.plan.read_seconds;
  app_.plan = std::move(**plan);
  for (const auto& note : app_.plan.notes) log_->info("{}", note);
  if (static_split) {
    log_->info("job {}: tasks split by Lee & Cho's {} (shares {:.3g} to {:.3g}) in {:.2f} s",
               summary_.job_id, settings_.split == Split::kSm ? "S_M" : "S_P", *lo, *hi,
               Seconds(Clock::now() - t0));
  } else {
    log_->info("job {}: tasks reweighed for daemons of powers {:.3g} to {:.3g} in {:.2f} s",
               summary_.job_id, *lo, *hi, Seconds(Clock::now() - t0));
  }
  return Status::Ok();
}

// ---- Deploy.

awaitable<Status> JobRunner::Deploy() {
  const auto granted_at = Clock::now();
  phase_ = "assigning";
  if (state_) {
    // Before any daemon hears of the job: a resumed spawner finds every daemon it could reach.
    stored_run_.job_id = summary_.job_id;
    stored_run_.started_unix = started_unix_;
    if (Status s = state_->Put(stored_run_); !s.ok()) {
      state_broken_ = true;
      log_->warn("job {}: the job cannot be resumed: {}", summary_.job_id, s.message());
    }
    SaveState();
    if (!state_broken_)
      log_->info("job {}: state kept in {} (`aiac-spawner resume {}` takes the job over)",
                 summary_.job_id, state_->dir(), state_->dir());
  }
  ReportStatus(granted_at, /*at_once=*/true);  // registers the job with the super-node
  supervisor_->Deploy(granted_at);
  Status ready =
      co_await WaitUntil([&] { return supervisor_->AllReady(); }, "assigning", deadline_);
  if (!ready.ok()) co_return ready;
  const Deployment& deployment = supervisor_->deployment();
  for (size_t t = 0; t < deployment.tasks(); ++t) {
    std::string keepers;
    for (uint32_t b : deployment.backups(t))
      keepers += (keepers.empty() ? "" : ", ") + deployment.task(b).daemon;
    log_->log(PerTaskLogLevel(deployment.tasks()),
              "job {}: task {} on daemon {}, checkpoints kept by {}", summary_.job_id, t,
              deployment.task(t).daemon, keepers.empty() ? "none" : keepers);
  }
  log_->info("job {}: {} tasks assigned ({} mapping, {} mode{}), starting", summary_.job_id,
             deployment.tasks(), settings_.mapping, summary_.mode,
             PerTaskLogLevel(deployment.tasks()) == spdlog::level::info
                 ? ""
                 : "; each task's daemon at --log-level debug");
  times_.started = Clock::now();
  summary_.setup_seconds = Seconds(*times_.started - granted_at);
  co_return Status::Ok();
}

// ---- Resumed.

awaitable<Status> JobRunner::AcquireResumed() {
  // The tasks' daemons are dialed at their stored addresses: a super-node is needed for spares
  // only. Without one the resume goes on (its link is kept trying, and a spare is asked of it
  // once it answers), so that a job whose super-node went down with its spawner is taken over
  // where it runs; only a key that every super-node refuses stops it.
  if (Status linked = co_await supernodes_->WaitConnected(1); !linked.ok()) {
    if (linked.code() == StatusCode::kUnauthenticated) co_return linked;
    log_->warn("job {}: {}; taking the tasks over without a super-node", summary_.job_id,
               linked.message());
  }
  const StoredDeployment& s = *resumed_deployment_;
  first_grant_.assign(s.granted.begin(), s.granted.begin() + static_cast<ptrdiff_t>(s.initial));
  summary_.daemons = static_cast<uint32_t>(s.granted.size());
  log_->info("job {}: resuming as spawner incarnation {}: {} tasks on {} daemons", summary_.job_id,
             stored_run_.epoch, job_.tasks, s.granted.size());
  co_return MapTasks();
}

awaitable<Status> JobRunner::Readopt() {
  const auto resumed_at = Clock::now();
  phase_ = "adopting";
  ReportStatus(resumed_at, /*at_once=*/true);
  supervisor_->Adopt(resumed_at);
  Status ready = co_await WaitUntil([&] { return supervisor_->AllReady(); }, "adopting", deadline_);
  if (!ready.ok()) co_return ready;
  supervisor_->ResumeMoves(Clock::now());
  log_->info("job {}: {} tasks adopted or replaced in {:.2f} s, going on", summary_.job_id,
             job_.tasks, Seconds(Clock::now() - resumed_at));
  times_.started = Clock::now();
  summary_.setup_seconds = Seconds(*times_.started - resumed_at);
  co_return Status::Ok();
}

// ---- Supervise.

awaitable<Result<app::GatherReport>> JobRunner::Supervise() {
  supervisor_->Start();
  balancing_ = std::make_unique<BalancingDriver>(
      *supervisor_, settings_, app_.plan.items_in_chain, job_.tasks, times_.start,
      summary_.setup_seconds, summary_.job_id, job_.app, log_, earlier_balancing_);
  if (app_.plan.target_change > 0) {
    // A window of a tenth of the time allowed (2 to 20 s): a short job is judged sooner.
    const double timeout = job_.timeout.count();
    forecast_.emplace(app_.plan.target_change, timeout,
                      ConvergenceForecast::Options{std::clamp(timeout / 10, 2.0, 20.0), 2});
  }
  auto checked = co_await RunToVerifiedResult();
  times_.checked = Clock::now();
  balancing_->Finish(*times_.checked);
  if (!checked.ok()) co_return checked;
  summary_.compute_seconds = Seconds(*times_.checked - *times_.started);
  log_->info("job {}: global convergence after {:.2f} s, result checked: {}", summary_.job_id,
             SinceStart(Clock::now()),
             checked->status == app::GatherStatus::kDiverged ? "diverged" : "converged");
  co_return checked;
}

awaitable<Result<app::GatherReport>> JobRunner::RunToVerifiedResult() {
  for (;;) {
    // Items in transit between two tasks are in no task's result: a move under way ends first.
    Status s =
        co_await WaitUntil([&] { return supervisor_->converged() && !supervisor_->moving(); },
                           "running", deadline_, /*iterating=*/true);
    if (!s.ok()) co_return s;
    log_->info("job {}: every task converged; gathering their slices to check the result",
               summary_.job_id);
    auto gathered = co_await GatherSnapshots("checking the result", deadline_);
    if (!gathered.ok()) co_return gathered.status();
    if (!*gathered) continue;  // a task moved meanwhile: converge again
    app::GatherReport& report = **gathered;
    if (report.status != app::GatherStatus::kUnconverged) co_return std::move(report);
    // Short of the app's test: every task tightens its local test and goes on from where it is.
    const double factor = report.residual_target > 0
                              ? std::clamp(report.residual / report.residual_target, 10.0, 1e4)
                              : 10.0;
    ++summary_.tightenings;
    log_->info(
        "job {}: every task converged, but {}; tightening the local tests {:.0f}x and going on",
        summary_.job_id, report.error, factor);
    supervisor_->Tighten(factor);
    if (forecast_) forecast_->Tighten(factor);
  }
}

awaitable<Result<std::optional<app::GatherReport>>> JobRunner::GatherSnapshots(
    const char* phase, SteadyTime deadline) {
  // Every task's slice as it is now, between two of its iterations, without stopping it.
  const size_t moves = supervisor_->replacements().size();
  supervisor_->RequestSnapshots();
  auto moved = [&] { return supervisor_->replacements().size() != moves; };
  Status s = co_await WaitUntil([&] { return moved() || supervisor_->SnapshotsComplete(); }, phase,
                                deadline);
  if (!s.ok()) co_return s;
  if (moved()) co_return std::optional<app::GatherReport>();
  auto report = app_.app->Gather(app_.params, supervisor_->TakeSnapshots());
  if (!report.ok()) co_return report.status();
  if (report->status != app::GatherStatus::kConverged && report->error.empty()) {
    // The app must say why (docs/app-api.md): "every task converged, but ; tightening" helps no
    // one.
    report->error = "app " + job_.app + "'s Gather gave no reason for a result it did not accept";
  }
  summary_.residual = report->residual;
  summary_.output = report->output;
  if (history_ && report->residual >= 0)
    history_->Residual(SinceStart(Clock::now()), report->residual);
  co_return std::optional<app::GatherReport>(std::move(*report));
}

awaitable<std::optional<app::GatherReport>> JobRunner::GatherPartial() {
  auto gathered = co_await GatherSnapshots("gathering the last iterate",
                                           Clock::now() + std::chrono::seconds(10));
  if (!gathered.ok() || !*gathered) {
    log_->warn("job {}: no last iterate to write: {}", summary_.job_id,
               gathered.ok() ? "a task moved meanwhile" : gathered.status().message());
    co_return std::nullopt;
  }
  const app::GatherReport& report = **gathered;
  log_->info("job {}: last iterate gathered{}{}", summary_.job_id,
             report.residual < 0 ? "" : fmt::format(", residual {:.3e}", report.residual),
             report.output.empty() ? "" : ", written to " + report.output);
  co_return std::move(*gathered);
}

// ---- Finish.

awaitable<void> JobRunner::Finish(bool converged) {
  if (supervisor_->superseded()) {
    // The job is another spawner's now: nothing to halt or give back, its state is not ours.
    state_broken_ = true;
    co_await links_->CloseAll(Clock::now() + std::chrono::seconds(1));
    co_return;
  }
  // Whatever happened: halt the tasks, and wait a little for their final counts (the result
  // itself is the one checked above).
  supervisor_->Halt();
  if (converged) {
    Status counted = co_await WaitUntil([&] { return supervisor_->AllFinished(); }, "gathering",
                                        Clock::now() + std::chrono::seconds(10));
    if (!counted.ok())
      log_->warn("job {}: final counts incomplete: {}", summary_.job_id, counted.message());
  }
  std::vector<std::string> ids;
  for (const auto& d : supervisor_->deployment().granted()) ids.push_back(d.id);
  supernodes_->EndJob(summary_.job_id);
  supernodes_->Release(summary_.job_id, ids);
  // Each link ends once its peer has read the last frames (the halts, the release), a second at
  // most for all.
  co_await links_->CloseAll(Clock::now() + std::chrono::seconds(1));
}

// ---- The wait every phase goes through.

awaitable<Status> JobRunner::WaitUntil(const std::function<bool()>& done, const char* phase,
                                       SteadyTime deadline, bool iterating) {
  const SteadyTime start = Clock::now();
  auto next_progress = start + options_.progress;
  // "assigning", "running", "checking the result", "gathering ...": the status phase is the
  // first word.
  phase_ = std::string(phase).substr(0, std::string_view(phase).find(' '));
  for (;;) {
    if (!failure().empty()) co_return aborted_ ? Aborted(failure()) : Unavailable(failure());
    if (aborted_ && !gathering_last_) co_return Aborted(abort_reason_);
    if (done()) co_return Status::Ok();
    const auto now = Clock::now();
    if (now > deadline) {
      // The job's own deadline, or a shorter limit of the phase (the last iterate's gathering).
      if (deadline == deadline_) {
        co_return Timeout(std::string("job timed out while ") + phase +
                          " (timeout_s = " + NumberText(job_.timeout.count()) + ")");
      }
      co_return Timeout(fmt::format("gave up {} after {:.0f} s", phase,
                                    std::chrono::duration<double>(deadline - start).count()));
    }
    if (now >= next_progress) {
      supervisor_->Tick(now);
      const SupervisorProgress progress = supervisor_->progress();
      PrintProgress(progress);
      ReportStatus(now);
      if (on_progress_) on_progress_();
      next_progress = now + options_.progress;
      if (iterating) {
        if (std::string why = Forecast(now, progress); !why.empty()) {
          co_return Unavailable("the run cannot converge in time: " + why);
        }
      }
    }
    if (links_ && now >= next_alive_) {
      links_->SendAlive();
      next_alive_ = now + kAlivePeriod;
    }
    auto wake_at = std::min(next_progress, deadline);
    if (links_) wake_at = std::min(wake_at, next_alive_);
    if (iterating && balancing_) {
      const BalancingStats before = balancing_->stats();
      wake_at = std::min(wake_at, balancing_->Tick(Clock::now()));
      // A redistribution decided or a move ended: kept in the state at once, so that a resumed
      // spawner's summary counts it.
      const BalancingStats after = balancing_->stats();
      if (after.redistributions != before.redistributions || after.moves != before.moves ||
          after.abandoned != before.abandoned) {
        SaveState();
      }
    }
    wake_->expires_at(wake_at);
    co_await wake_->async_wait(net::use_nothrow);
    // Woken far past the time set: this process did not run meanwhile.
    if (const auto late = Clock::now() - wake_at; late > kPauseNoticed && supervisor_) {
      supervisor_->Paused(late, Clock::now());
    }
  }
}

std::string JobRunner::Forecast(SteadyTime now, const SupervisorProgress& progress) {
  if (!forecast_) return {};
  // A task that moved restarts from its checkpoint, and one that gave or took items starts its
  // convergence again on other work: the curve so far says nothing of either.
  const uint64_t item_moves = ItemMoves();
  if (supervisor_->replacements().size() != forecast_moves_ || item_moves != forecast_item_moves_) {
    forecast_moves_ = supervisor_->replacements().size();
    forecast_item_moves_ = item_moves;
    forecast_->Restart();
  }
  forecast_->Add(Seconds(now - *times_.started), progress.max_change,
                 static_cast<double>(progress.min_iteration));
  return forecast_->Verdict();
}

void JobRunner::PrintProgress(const SupervisorProgress& p) {
  if (quiet_) return;
  // The forecast's time to go: "-" until it has a window, "never" when the change does not fall.
  std::string eta = "-";
  if (auto to_go = SecondsToGo()) {
    eta = std::isfinite(*to_go) ? fmt::format("{:.0f}s", *to_go) : "never";
  }
  const double elapsed = SinceStart(Clock::now());
  const uint64_t moves = ItemMoves();
  if (progress_line_) {
    // On a terminal: what fits in 80 columns (the job's id and the rest are in the log lines).
    progress_line_(
        fmt::format("[{:6.1f}s] iter {}..{}  change {:.2e}  eta {}  live {}/{}  "
                    "failures {}  moves {}",
                    elapsed, p.min_iteration, p.max_iteration, p.max_change, eta, p.live, p.tasks,
                    p.failures, moves));
    return;
  }
  log_->info(
      "[{:6.1f}s] job {}: iterations {}..{}, max local change {:.3e}, eta {}, locally converged "
      "{}/{}, live daemons {}/{}, failures {}, replacements {}, moves {}, checkpoints {}",
      elapsed, summary_.job_id, p.min_iteration, p.max_iteration, p.max_change, eta, p.converged,
      p.tasks, p.live, p.tasks, p.failures, p.replacements, moves, p.checkpoints);
}

void JobRunner::RecordHistory(const HistoryEntry& e) {
  const double t = SinceStart(e.at);
  if (trace_) trace_->Add(e, t);
  if (!history_) return;
  switch (e.kind) {
    case HistoryEntry::Kind::kReport:
      history_->Report(t, e.task, e.incarnation, e.iteration, e.change);
      break;
    case HistoryEntry::Kind::kFailure:
      history_->Failure(t, e.task, e.incarnation);
      break;
    case HistoryEntry::Kind::kResumed:
      history_->Resumed(t, e.task, e.incarnation, e.iteration);
      break;
    case HistoryEntry::Kind::kMove:
      history_->Move(t, e.task, e.count);
      break;
  }
}

void JobRunner::ReportStatus(SteadyTime now, bool at_once) {
  if (!supervisor_ || (!at_once && now - last_status_ < std::chrono::seconds(1))) return;
  last_status_ = now;
  net::JobStatus s;
  s.id = summary_.job_id;
  s.app = job_.app;
  s.tasks = job_.tasks;
  s.daemons = static_cast<uint32_t>(supervisor_->deployment().granted().size());
  s.started_unix = started_unix_;
  s.phase = phase_;
  const SupervisorProgress p = supervisor_->progress();
  s.min_iteration = p.min_iteration;
  s.max_iteration = p.max_iteration;
  s.max_change = p.max_change;
  s.failures = p.failures;
  s.replacements = p.replacements;
  s.moves = ItemMoves();
  if (auto eta = SecondsToGo(); eta && std::isfinite(*eta)) s.eta_seconds = *eta;
  s.task_list = supervisor_->TaskStatuses(now);
  supernodes_->Report(s);
}

std::optional<SupervisorProgress> JobRunner::progress() const {
  if (!supervisor_) return std::nullopt;
  return supervisor_->progress();
}

std::vector<std::string> JobRunner::RunningTaskDaemons() const {
  return supervisor_ ? supervisor_->RunningTaskDaemons() : std::vector<std::string>{};
}

bool JobRunner::AskToExit(const std::string& id) { return links_ && links_->AskToExit(id); }

}  // namespace aiac::spawner
