#include "daemon/task_host.h"

#include <cmath>

#include <cstdlib>
#include <deque>

#include "core/names.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::AsBytes;
using net::AsString;
using net::awaitable;

// One neighbour we send to. Values wait here until the link is free: in asynchronous mode only
// the newest one (an older value is useless once a newer exists); in synchronous mode every one,
// in order, since the neighbour waits for each iteration.
struct TaskHost::OutLink {
  uint32_t task;
  Endpoint address;
  std::string daemon;  // the id the neighbour must prove; empty: any daemon
  bool keep_all = false;
  struct Value {
    uint64_t iteration;
    std::string bytes;
    bool converged;
    uint64_t seen;  // the receiver's newest iteration we had absorbed...
    uint64_t seen_incarnation;  // ...counted in this incarnation of it
  };
  std::deque<Value> pending;
  std::unique_ptr<asio::steady_timer> wake;
  net::ConnectionPtr conn;
};

// Where this task's checkpoints go: the newest one not yet sent waits in `pending` (an older
// one still waiting is replaced: only the newest matters), one in flight at a time.
struct TaskHost::BackupLink {
  Endpoint address;
  std::string daemon;
  std::optional<checkpoint::Checkpoint> pending;
  std::unique_ptr<asio::steady_timer> wake;
  net::ConnectionPtr conn;
};

struct TaskHost::Job {
  std::string id;
  uint32_t task = 0;
  uint64_t incarnation = 1;
  std::vector<std::shared_ptr<BackupLink>> backups;
  uint64_t checkpoints = 0;       // copies the backups acknowledged
  uint64_t checkpoint_bytes = 0;
  net::ConnectionPtr spawner;
  std::unique_ptr<app::App> app;
  std::map<uint32_t, std::shared_ptr<OutLink>> links;
  std::map<uint32_t, std::string> senders;  // task -> the only daemon id that may send its values
  std::unique_ptr<runtime::TaskRunner> runner;
  std::shared_ptr<runtime::Plugin> plugin;  // keeps the code loaded while the task runs
  bool started = false;
  // The runner's last progress report, sent every progress period by RunProgress.
  uint64_t progress_iteration = 0;
  double progress_change = 0;
  bool progress_converged = false;
};

TaskHost::TaskHost(asio::io_context& io, TaskHostOptions options,
                   std::unique_ptr<checkpoint::CheckpointStore> checkpoints, Logger log)
    : io_(io),
      options_(std::move(options)),
      log_(std::move(log)),
      server_(io, options_.net, options_.limits, proto::Role::DAEMON, log_,
              [this](net::ConnectionPtr conn) { return Serve(std::move(conn)); }),
      plugins_(options_.plugin_dir),
      checkpoints_(io, std::move(checkpoints), log_) {
  server_.set_id(options_.id);
}

TaskHost::~TaskHost() { Stop(); }

Result<Endpoint> TaskHost::Listen(const Endpoint& listen) { return server_.Listen(listen); }

void TaskHost::Serve() { server_.Start(); }

void TaskHost::Stop() {
  if (stopping_) return;
  stopping_ = true;
  EndJob("daemon stopping");
  server_.Stop();
}

awaitable<void> TaskHost::Serve(net::ConnectionPtr conn) {
  if (conn->peer().role == proto::Role::SPAWNER) {
    co_await ServeSpawner(conn);
  } else if (conn->peer().role == proto::Role::DAEMON) {
    co_await ServeNeighbour(conn);
  } else {
    log_->warn("closed {}: super-nodes do not connect to daemons", conn->Describe());
    conn->Refuse("unexpected role");
  }
}

void TaskHost::Reply(net::Connection& conn, const std::string& job, uint32_t task, const std::string& error,
                     bool need_plugin, uint64_t restored_iteration) {
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initTaskReady();
    r.setJob(job);
    r.setTask(task);
    r.setError(error);
    r.setNeedPlugin(need_plugin);
    r.setRestoredIteration(restored_iteration);
  });
}

awaitable<void> TaskHost::Accept(Assignment a, std::shared_ptr<runtime::Plugin> plugin, net::ConnectionPtr conn) {
  std::optional<checkpoint::Checkpoint> restored;
  if (a.restore) {
    restored = co_await FetchCheckpoint(a);
    if (job_) {  // another assignment won while we fetched
      Reply(*conn, a.job, a.task, "daemon " + options_.id + " is busy with job " + job_->id);
      co_return;
    }
  }
  Status s = StartJob(a, std::move(plugin), conn, restored ? &*restored : nullptr);
  if (!s.ok()) log_->warn("job {}: task {} refused: {}", a.job, a.task, s.message());
  Reply(*conn, a.job, a.task, s.ok() ? "" : s.message(), false, s.ok() && restored ? restored->iteration : 0);
}

awaitable<std::optional<checkpoint::Checkpoint>> TaskHost::FetchCheckpoint(Assignment a) {
  // Ask every backup for its newest checkpoint that verifies, and take the newest of those. A
  // backup that has not heard of the move yet (the spawner's NeighbourMoved and this AssignTask
  // travel on different connections) says so; it is asked again, for up to 5 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::optional<checkpoint::Checkpoint> best;
  for (;;) {
    bool retry = false;
    for (const auto& [address, daemon] : a.backups) {
      auto ep = ParseEndpoint(address);
      if (!ep.ok()) continue;
      net::RetryPolicy once;
      once.attempts = 1;
      auto conn = co_await net::Dial(*ep, options_.net, proto::Role::DAEMON, options_.id, proto::Role::DAEMON, once);
      if (!conn.ok() || (*conn)->peer().id != daemon) {
        if (conn.ok()) (*conn)->Close();
        continue;  // dead or replaced: the others may have it
      }
      (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
        auto g = e.initCheckpointGet();
        g.setJob(a.job);
        g.setTask(a.task);
      });
      auto msg = co_await (*conn)->Receive();
      (*conn)->Close();
      if (!msg.ok() || !(*msg)->root().isCheckpointData()) continue;
      auto d = (*msg)->root().getCheckpointData();
      if (!d.getFound()) {
        retry = retry || d.getError().size() > 0;
        continue;
      }
      checkpoint::Checkpoint c{a.job, a.task, d.getIncarnation(), d.getIteration(), AsString(d.getState()),
                               d.getChecksum()};
      if (d.getJob() != a.job || d.getTask() != a.task || !checkpoint::Verifies(c)) {
        log_->warn("job {}: backup {} sent a damaged {}", a.job, daemon, checkpoint::Describe(c));
        continue;
      }
      if (!best || checkpoint::Newer(c, *best)) best = std::move(c);
    }
    if (best || !retry || std::chrono::steady_clock::now() > deadline) break;
    asio::steady_timer wait(io_, std::chrono::milliseconds(100));
    co_await wait.async_wait(net::use_nothrow);
  }
  if (best) {
    log_->info("job {}: task {} restored from its {}", a.job, a.task, checkpoint::Describe(*best));
  } else {
    log_->warn("job {}: no checkpoint of task {} on its {} backups: starting from the initial state", a.job, a.task,
               a.backups.size());
  }
  co_return best;
}

TaskHost::NeighbourMove TaskHost::MoveOf(proto::NeighbourMoved::Reader m) {
  return {m.getJob().cStr(), m.getTask(), m.getAddress().cStr(), m.getDaemonId().cStr(),
          m.getPreviousDaemonId().cStr(), m.getIncarnation()};
}

void TaskHost::OnNeighbourMoved(const NeighbourMove& m) {
  if (m.job != job_->id) return;
  const uint32_t task = m.task;
  auto ep = ParseEndpoint(m.address);
  const std::string& daemon = m.daemon;
  const std::string& previous = m.previous;
  if (!ep.ok() || CheckName("daemon id", daemon).ok() == false) {
    log_->warn("job {}: ignored a move of task {} to a bad address or id", job_->id, task);
    return;
  }
  log_->info("job {}: task {} moved to daemon {} at {} (incarnation {})", job_->id, task, daemon, ep->ToString(),
             m.incarnation);
  if (auto link = job_->links.find(task); link != job_->links.end()) {
    link->second->address = *ep;
    link->second->daemon = daemon;
    if (link->second->conn) link->second->conn->Close();
    link->second->wake->cancel();
  }
  if (auto sender = job_->senders.find(task); sender != job_->senders.end()) sender->second = daemon;
  // The new daemon takes over the dead one's role as a backup of this task.
  for (auto& backup : job_->backups) {
    if (backup->daemon != previous) continue;
    backup->address = *ep;
    backup->daemon = daemon;
    if (backup->conn) backup->conn->Close();
    backup->wake->cancel();
  }
  checkpoints_.Moved(task, daemon);
}

awaitable<void> TaskHost::ServeSpawner(net::ConnectionPtr conn) {
  TaskDataBuffer incoming;  // chunks of the next task's data (TaskData), in order
  std::vector<NeighbourMove> early_moves;  // moves told while the plugin was on its way
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) {
      if (net::PeerMisbehaved(msg.status())) {
        log_->warn("closed {}: {}", conn->Describe(), msg.status().message());
      }
      break;
    }
    auto env = (*msg)->root();
    if (env.isTaskData()) {
      if (Status s = incoming.Add(env.getTaskData()); !s.ok()) {
        log_->warn("closed {}: task data: {}", conn->Describe(), s.message());
        conn->Refuse("task data: " + s.message());
        break;
      }
      continue;
    }
    if (env.isAssignTask()) {
      early_moves.clear();
      auto in = env.getAssignTask();
      auto read = ParseAssignment(in, options_.trusted_keys, options_.id);
      if (read.ok() && in.getDataSize() > 0) {
        auto data = incoming.Take(read->job, read->task, in.getDataSize(), AsString(in.getDataSha256()));
        if (data.ok()) read->slice = std::move(*data);
        else read = data.status();
      }
      if (!read.ok()) {
        log_->warn("task {} from {} refused: {}", in.getTask(), conn->Describe(), read.status().message());
        Reply(*conn, "", in.getTask(), read.status().message());  // the job id may be what is wrong
        continue;
      }
      Assignment a = std::move(*read);
      if (job_) {
        Reply(*conn, a.job, a.task, "daemon " + options_.id + " is busy with job " + job_->id);
        continue;
      }
      auto plugin = plugins_.Find(a.plugin_hash);
      if (!plugin.ok() && plugin.status().code() == StatusCode::kNotFound) {
        log_->info("job {}: plugin {} ({}) not stored here, asking the spawner", a.job,
                   Printable(a.plugin_name, 64), Hex(a.plugin_hash).substr(0, 12));
        Reply(*conn, a.job, a.task, "", true);
        waiting_for_plugin_ = std::make_unique<Assignment>(std::move(a));
        continue;
      }
      if (!plugin.ok()) {
        log_->warn("job {}: task {} refused: {}", a.job, a.task, plugin.status().message());
        Reply(*conn, a.job, a.task, plugin.status().message());
        continue;
      }
      co_await Accept(std::move(a), *plugin, conn);
    } else if (env.isPluginData()) {
      if (!waiting_for_plugin_) continue;  // not asked for: ignore
      auto a = std::move(waiting_for_plugin_);
      // The bytes must hash to what the (checked, maybe signed) task names, before anything is
      // written or loaded: PluginStore::Add hashes them against a->plugin_hash.
      auto pd = env.getPluginData();
      auto plugin = AsString(pd.getSha256()) != a->plugin_hash
                        ? Result<std::shared_ptr<runtime::Plugin>>(InvalidArgument(
                              "plugin hash mismatch: the plugin sent is not the one the task names"))
                        : plugins_.Add(a->plugin_hash, AsString(pd.getBytes()));
      if (!plugin.ok()) {
        log_->warn("job {}: task {} refused: {}", a->job, a->task, plugin.status().message());
        Reply(*conn, a->job, a->task, plugin.status().message());
        continue;
      }
      co_await Accept(std::move(*a), *plugin, conn);
      for (const auto& move : early_moves) {
        if (job_ && job_->spawner == conn) OnNeighbourMoved(move);
      }
      early_moves.clear();
    } else if (env.isExit()) {
      if (job_ && job_->spawner == conn && env.getExit().getJob() == job_->id) {
        // Fault injection: die as a SIGKILL would, without a goodbye to anyone.
        log_->warn("job {}: exiting at once, as the spawner asked (fault injection)", job_->id);
        spdlog::default_logger()->flush();
        log_->flush();
        std::_Exit(137);
      }
    } else if (env.isNeighbourMoved()) {
      if (job_ && job_->spawner == conn) {
        OnNeighbourMoved(MoveOf(env.getNeighbourMoved()));
      } else if (waiting_for_plugin_ && waiting_for_plugin_->job == env.getNeighbourMoved().getJob().cStr()) {
        early_moves.push_back(MoveOf(env.getNeighbourMoved()));
      }
    } else if (env.isStartTask()) {
      if (job_ && job_->spawner == conn && !job_->started) {
        job_->started = true;
        job_->runner->Start();
      }
    } else if (env.isConvergenceQuery()) {
      if (job_ && job_->spawner == conn) job_->runner->Query(env.getConvergenceQuery().getRound());
    } else if (env.isSnapshot()) {
      if (job_ && job_->spawner == conn) job_->runner->Snapshot(env.getSnapshot().getRound());
    } else if (env.isTighten()) {
      const double factor = env.getTighten().getFactor();
      if (!(std::isfinite(factor) && factor > 1)) {
        log_->warn("closed {}: tighten by {}", conn->Describe(), factor);
        conn->Refuse("tighten: the factor must be a finite number above 1");
        break;
      }
      if (job_ && job_->spawner == conn) job_->runner->Tighten(factor);
    } else if (env.isHalt()) {
      if (job_ && job_->spawner == conn) {
        if (job_->started) {
          job_->runner->Halt();  // the runner's `finished` sends the result, then ends the job
        } else {
          EndJob("halted before it started");
        }
      }
    } else {
      log_->warn("closed {}: unexpected message from a spawner", conn->Describe());
      conn->Refuse("unexpected message");
      break;
    }
  }
  if (job_ && job_->spawner == conn) EndJob("spawner connection lost");
  waiting_for_plugin_.reset();
}

Status TaskHost::StartJob(const Assignment& a, std::shared_ptr<runtime::Plugin> plugin, net::ConnectionPtr spawner,
                          const checkpoint::Checkpoint* restored) {
  auto app = plugin->NewApp();
  if (app->name() != a.app) {
    return InvalidArgument("plugin " + a.plugin_name + " holds app '" + std::string(app->name()) + "', not '" + a.app + "'");
  }
  auto task = app->MakeTask(a.params, a.task, a.slice);
  if (!task.ok()) return task.status();
  if (restored) AIAC_RETURN_IF_ERROR((*task)->RestoreState(restored->state));
  // A task taking over mid-run starts with the local test its job tightened to so far.
  if (a.tighten > 1) AIAC_RETURN_IF_ERROR((*task)->Tighten(a.tighten));
  auto job = std::make_shared<Job>();
  job->id = a.job;
  job->task = a.task;
  job->spawner = std::move(spawner);
  job->app = std::move(app);
  job->plugin = std::move(plugin);
  job->senders = a.senders;
  job->incarnation = a.incarnation;
  for (const auto& [t, neighbour] : a.neighbours) {
    auto ep = ParseEndpoint(neighbour.first);
    if (!ep.ok()) return ep.status();
    auto link = std::make_shared<OutLink>();
    link->task = t;
    link->address = *ep;
    link->daemon = neighbour.second;
    link->keep_all = a.sync;
    link->wake = std::make_unique<asio::steady_timer>(io_, std::chrono::steady_clock::time_point::max());
    job->links[t] = link;
  }
  for (const auto& [address, daemon] : a.backups) {
    auto ep = ParseEndpoint(address);
    if (!ep.ok()) return ep.status();
    auto backup = std::make_shared<BackupLink>();
    backup->address = *ep;
    backup->daemon = daemon;
    backup->wake = std::make_unique<asio::steady_timer>(io_, std::chrono::steady_clock::time_point::max());
    job->backups.push_back(backup);
  }
  auto deps = (*task)->Dependencies();
  runtime::RunnerOptions runner_options;
  runner_options.sync = a.sync;
  runner_options.progress_period = options_.progress;
  if (restored) runner_options.start_iteration = restored->iteration;
  runner_options.incarnation = a.incarnation;
  if (!job->backups.empty()) {
    runner_options.checkpoint_every = a.checkpoint_every;
    runner_options.checkpoint_period = std::chrono::milliseconds(a.checkpoint_ms);
  }
  job->runner = std::make_unique<runtime::TaskRunner>(std::move(*task), std::move(deps), runner_options, CallbacksFor(job));
  job_ = job;
  checkpoints_.Host(a.job, a.hosted);
  for (auto& [t, link] : job->links) asio::co_spawn(io_, RunLink(job, link), asio::detached);
  for (auto& backup : job->backups) net::SpawnLogged(io_.get_executor(), RunBackup(job, backup), log_, "backup link");
  net::SpawnLogged(io_.get_executor(), RunProgress(job), log_, "progress reports");
  log_->info("job {}: running task {} of {} (app {}, {} mode)", a.job, a.task, a.params.tasks, a.app,
             a.sync ? "sync" : "async");
  return Status::Ok();
}

runtime::RunnerCallbacks TaskHost::CallbacksFor(std::shared_ptr<Job> job) {
  std::weak_ptr<Job> weak = job;
  auto on_io = [this, weak](auto fn) {
    asio::post(io_, [this, weak, fn = std::move(fn)]() mutable {
      auto j = weak.lock();
      if (j && j == job_) fn(*j);
    });
  };
  runtime::RunnerCallbacks cb;
  cb.send = [on_io](std::vector<runtime::OutgoingValue> values, uint64_t iteration, bool converged) {
    on_io([values = std::move(values), iteration, converged](Job& j) mutable {
      for (auto& v : values) {
        auto it = j.links.find(v.to);
        if (it == j.links.end()) continue;
        OutLink& link = *it->second;
        if (!link.keep_all) link.pending.clear();  // newest wins
        link.pending.push_back({iteration, std::move(v.bytes), converged, v.seen, v.seen_incarnation});
        link.wake->cancel();
      }
    });
  };
  cb.local_convergence = [on_io](bool converged, uint64_t iteration) {
    on_io([=](Job& j) {
      j.spawner->SendEnvelope([&](proto::Envelope::Builder e) {
        auto c = e.initLocalConvergence();
        c.setJob(j.id);
        c.setTask(j.task);
        c.setConverged(converged);
        c.setIteration(iteration);
        c.setIncarnation(j.incarnation);
      });
    });
  };
  cb.progress = [on_io](uint64_t iteration, double change, bool converged) {
    // Only noted here: RunProgress sends it, from this thread, on its own clock.
    on_io([=](Job& j) {
      j.progress_iteration = iteration;
      j.progress_change = change;
      j.progress_converged = converged;
    });
  };
  cb.checkpoint = [on_io](std::string state, uint64_t iteration) {
    on_io([state = std::move(state), iteration](Job& j) mutable {
      // The checksum is computed here, where the task ran: a restore then verifies the state
      // against what this daemon saw, whatever happened on the way and on the backup's disk.
      auto c = checkpoint::MakeCheckpoint(j.id, j.task, j.incarnation, iteration, std::move(state));
      for (auto& backup : j.backups) {
        backup->pending = c;
        backup->wake->cancel();
      }
    });
  };
  cb.answer = [on_io](uint64_t round, bool converged) {
    on_io([=](Job& j) {
      j.spawner->SendEnvelope([&](proto::Envelope::Builder e) {
        auto a = e.initConvergenceAnswer();
        a.setJob(j.id);
        a.setTask(j.task);
        a.setRound(round);
        a.setConverged(converged);
        a.setIncarnation(j.incarnation);
      });
    });
  };
  cb.snapshot = [on_io](uint64_t round, std::string slice, uint64_t iteration) {
    on_io([round, slice = std::move(slice), iteration](Job& j) {
      j.spawner->SendEnvelope([&](proto::Envelope::Builder e) {
        auto d = e.initSnapshotData();
        d.setJob(j.id);
        d.setTask(j.task);
        d.setRound(round);
        d.setIteration(iteration);
        d.setIncarnation(j.incarnation);
        d.setData(AsBytes(slice));
      });
    });
  };
  cb.finished = [this, on_io](Result<std::string> slice, uint64_t iterations) {
    on_io([this, slice = std::move(slice), iterations](Job& j) {
      j.spawner->SendEnvelope([&](proto::Envelope::Builder e) {
        auto r = e.initResult();
        r.setJob(j.id);
        r.setTask(j.task);
        r.setIterations(iterations);
        r.setIncarnation(j.incarnation);
        r.setCheckpoints(j.checkpoints);
        r.setCheckpointBytes(j.checkpoint_bytes);
        if (slice.ok()) r.setData(AsBytes(*slice));
        else r.setError(slice.status().message());
      });
      if (!slice.ok()) log_->warn("job {}: task {} failed: {}", j.id, j.task, slice.status().message());
      EndJob(slice.ok() ? "halted" : "failed");
    });
  };
  return cb;
}

awaitable<net::ConnectionPtr> TaskHost::DialDaemon(std::shared_ptr<Job> job, std::function<Target()> target,
                                                  std::string what, std::chrono::milliseconds& backoff) {
  while (job_ == job) {
    // Read each time: a NeighbourMoved may have moved the peer meanwhile.
    const Target t = target();
    const Endpoint& address = t.first;
    const std::string& daemon = t.second;
    net::RetryPolicy once;
    once.attempts = 1;
    auto conn = co_await net::Dial(address, options_.net, proto::Role::DAEMON, options_.id, proto::Role::DAEMON, once);
    if (job_ != job) break;
    if (conn.ok() && !daemon.empty() && (*conn)->peer().id != daemon) {
      // Not the daemon the spawner named (the address was reused): never send it the job's data.
      log_->warn("job {}: {} is not daemon {}, {}", job->id, (*conn)->Describe(), daemon, what);
      (*conn)->Close();
      conn = Unavailable("wrong daemon at the address");
    }
    if (conn.ok() && target().second != daemon) {
      // The peer moved while we dialed (a NeighbourMoved came in): the daemon that answered may
      // be the one that was replaced, back from a pause. Dial the new one instead.
      (*conn)->Close();
      continue;
    }
    if (conn.ok()) {
      backoff = std::chrono::milliseconds(20);
      co_return *conn;
    }
    if (conn.status().code() == StatusCode::kUnauthenticated) {
      log_->error("job {}: {} refused us: {}", job->id, address.ToString(), conn.status().message());
      break;
    }
    asio::steady_timer wait(io_, backoff);
    co_await wait.async_wait(net::use_nothrow);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  co_return nullptr;
}

awaitable<void> TaskHost::RunLink(std::shared_ptr<Job> job, std::shared_ptr<OutLink> link) {
  auto backoff = std::chrono::milliseconds(20);
  while (job_ == job) {
    if (!link->conn || !link->conn->is_open()) {
      // Named, not temporaries: g++ 12 destroys some temporaries of a co_await expression twice
      // (here the lambda's copy of `link`, which freed the link under the running coroutine).
      std::function<Target()> target = [link] { return Target{link->address, link->daemon}; };
      std::string what = "which runs task " + std::to_string(link->task);
      link->conn = co_await DialDaemon(job, target, what, backoff);
      if (!link->conn) break;
    }
    if (link->pending.empty()) {
      link->wake->expires_at(std::chrono::steady_clock::time_point::max());
      co_await link->wake->async_wait(net::use_nothrow);
      continue;
    }
    // Not a structured binding: clang 14 cannot capture those in the lambda below.
    const OutLink::Value value = std::move(link->pending.front());
    link->pending.pop_front();
    link->conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto d = e.initDependencyData();
      d.setJob(job->id);
      d.setFromTask(job->task);
      d.setToTask(link->task);
      d.setIteration(value.iteration);
      d.setData(AsBytes(value.bytes));
      d.setConverged(value.converged);
      d.setSeen(value.seen);
      d.setSeenIncarnation(value.seen_incarnation);
      d.setIncarnation(job->incarnation);
    });
    // Hand the connection one value at a time: newer values replace `pending` meanwhile.
    co_await link->conn->Drained();
  }
  if (link->conn) link->conn->Close();
}

awaitable<void> TaskHost::RunProgress(std::shared_ptr<Job> job) {
  // The spawner takes a silent daemon for dead (failure_timeout_ms): report from the network
  // thread on a clock of its own, however long one iteration of the task takes.
  asio::steady_timer timer(io_);
  while (job_ == job) {
    timer.expires_after(options_.progress);
    co_await timer.async_wait(net::use_nothrow);
    if (job_ != job) break;
    job->spawner->SendEnvelope([&](proto::Envelope::Builder e) {
      auto p = e.initTaskProgress();
      p.setJob(job->id);
      p.setTask(job->task);
      p.setIteration(job->progress_iteration);
      p.setLocalChange(job->progress_change);
      p.setConverged(job->progress_converged);
      p.setCheckpoints(job->checkpoints);
      p.setCheckpointBytes(job->checkpoint_bytes);
      p.setIncarnation(job->incarnation);
    });
  }
}

awaitable<void> TaskHost::RunBackup(std::shared_ptr<Job> job, std::shared_ptr<BackupLink> backup) {
  auto backoff = std::chrono::milliseconds(20);
  while (job_ == job) {
    if (!backup->pending) {
      backup->wake->expires_at(std::chrono::steady_clock::time_point::max());
      co_await backup->wake->async_wait(net::use_nothrow);
      continue;
    }
    if (!backup->conn || !backup->conn->is_open()) {
      std::function<Target()> target = [backup] { return Target{backup->address, backup->daemon}; };
      std::string what = "a backup of this task";
      backup->conn = co_await DialDaemon(job, target, what, backoff);
      if (!backup->conn) break;
    }
    const checkpoint::Checkpoint c = std::move(*backup->pending);
    backup->pending.reset();
    backup->conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto p = e.initCheckpointPut();
      p.setJob(c.job);
      p.setTask(c.task);
      p.setIncarnation(c.incarnation);
      p.setIteration(c.iteration);
      p.setChecksum(c.checksum);
      p.setState(AsBytes(c.state));
    });
    // One checkpoint in flight per backup: the next waits for this one's acknowledgement, and
    // newer ones replace `pending` meanwhile.
    auto msg = co_await backup->conn->Receive();
    if (job_ != job) break;
    if (!msg.ok() || !(*msg)->root().isCheckpointAck()) {
      if (msg.ok()) backup->conn->Refuse("unexpected message");
      backup->conn.reset();
      if (!backup->pending) backup->pending = c;  // send it again once reconnected
      continue;
    }
    auto ack = (*msg)->root().getCheckpointAck();
    if (ack.getStored()) {
      ++job->checkpoints;
      job->checkpoint_bytes += c.state.size();
    } else if (ack.getError().size() > 0) {
      log_->warn("job {}: backup {} did not store {}: {}", job->id, backup->daemon, checkpoint::Describe(c),
                 Printable(ack.getError().cStr(), 200));
    }
  }
  if (backup->conn) backup->conn->Close();
}

awaitable<void> TaskHost::ServeNeighbour(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) {
      if (net::PeerMisbehaved(msg.status())) {
        log_->warn("closed {}: {}", conn->Describe(), msg.status().message());
      }
      co_return;
    }
    auto env = (*msg)->root();
    if (env.isCheckpointPut() || env.isCheckpointGet()) {
      const bool allowed = env.isCheckpointPut() ? checkpoints_.OnPut(conn, env.getCheckpointPut())
                                                 : checkpoints_.OnGet(conn, env.getCheckpointGet());
      if (!allowed) {
        conn->Refuse("you do not run that task");
        co_return;
      }
      continue;
    }
    if (!env.isDependencyData()) {
      log_->warn("closed {}: unexpected message from a daemon", conn->Describe());
      conn->Refuse("unexpected message");
      co_return;
    }
    auto dep = env.getDependencyData();
    // Data for a job (or task) this daemon does not, or no longer, run: the sender has not heard
    // that the task moved or ended. Close, so that it dials again, wherever the task is now.
    if (!job_ || job_->id != dep.getJob().cStr() || dep.getToTask() != job_->task) {
      log_->debug("closed {}: values for task {} of job {}, not run here", conn->Describe(), dep.getToTask(),
                  Printable(dep.getJob().cStr(), 64));
      conn->Refuse("that task does not run here");
      co_return;
    }
    // Only the daemon that runs the sending task may speak for it.
    auto sender = job_->senders.find(dep.getFromTask());
    if (sender == job_->senders.end() || sender->second != conn->peer().id) {
      log_->warn("closed {}: sent values of task {} of job {}, which it does not run",
                 conn->Describe(), dep.getFromTask(), job_->id);
      conn->Refuse("you do not run that task");
      co_return;
    }
    job_->runner->mailbox().Put(dep.getFromTask(), dep.getIteration(), AsString(dep.getData()),
                                dep.getConverged(), dep.getSeen(), std::max<uint64_t>(dep.getIncarnation(), 1),
                                std::max<uint64_t>(dep.getSeenIncarnation(), 1));
  }
}

void TaskHost::EndJob(const std::string& why) {
  if (!job_) return;
  auto job = std::move(job_);
  job_.reset();
  log_->info("job {}: task {} ends: {}", job->id, job->task, why);
  for (auto& [t, link] : job->links) {
    link->wake->cancel();
    if (link->conn) link->conn->Close();
  }
  for (auto& backup : job->backups) {
    backup->wake->cancel();
    if (backup->conn) backup->conn->Close();
  }
  checkpoints_.EndJob(job->id);
  if (job->runner) {
    job->runner->Halt();
    // The runner's thread ends after its current iteration; join it off the io thread's
    // critical path by letting the Job (and its runner) die in a posted handler.
    asio::post(io_, [job]() mutable { job.reset(); });
  }
}

}  // namespace aiac::daemon
