#include "daemon/task_host.h"

#include <cmath>

#include <cstdlib>
#include <deque>
#include <thread>

#include "aiac/move_kind_wire.h"
#include "core/names.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::AsBytes;
using net::AsString;
using net::awaitable;

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
                     bool need_plugin, uint64_t restored_iteration, const runtime::MoveState* moves) {
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initTaskReady();
    r.setJob(job);
    r.setTask(task);
    r.setError(error);
    r.setNeedPlugin(need_plugin);
    r.setRestoredIteration(restored_iteration);
    if (moves) {
      r.setRestoredMoves(moves->moves);
      auto out = r.initOutbox(static_cast<unsigned>(moves->outbox.size()));
      for (unsigned i = 0; i < out.size(); ++i) {
        const auto& x = moves->outbox[i];
        out[i].setMove(x.move);
        out[i].setMoves(x.moves);
        out[i].setCount(x.count);
        out[i].setItems(net::AsBytes(x.items));
      }
    }
  });
}

void TaskHost::SampleRunQueue() {
  if (options_.competing_jobs) {
    run_queue_.Add(1 + options_.competing_jobs());
    return;
  }
  auto runnable = monitor::ReadRunnable();
  if (runnable.ok()) {
    run_queue_.AddHostSample(*runnable, std::max(1u, std::thread::hardware_concurrency()));
  } else if (!run_queue_warned_) {
    run_queue_warned_ = true;
    log_->warn("run-queue length not sampled: {}", runnable.status().message());
  }
}

awaitable<void> TaskHost::Accept(Assignment assignment, std::shared_ptr<runtime::Plugin> plugin,
                                 net::ConnectionPtr conn) {
  auto a = std::make_shared<Assignment>(std::move(assignment));
  // Busy from here: another spawner's assignment is refused. Neighbours that heard of this
  // task's move may send values already: they wait for the setup.
  setting_up_ = {a->job, a->task};
  auto setup_done = std::make_shared<asio::steady_timer>(io_, std::chrono::steady_clock::time_point::max());
  setup_done_ = setup_done;
  std::optional<checkpoint::Checkpoint> restored;
  if (a->restore) restored = co_await FetchCheckpoint(*a);
  const auto building = std::chrono::steady_clock::now();
  auto prepared = co_await PrepareOffIo(a, plugin->NewApp(), std::move(restored));
  const std::chrono::duration<double> built = std::chrono::steady_clock::now() - building;
  // From here on no suspension: whatever follows, the setup is over when Accept returns.
  setting_up_.reset();
  setup_done->cancel();
  Result<Session> session = Unavailable("daemon " + options_.id + " is stopping");
  // Told to the spawner with the TaskReady (the session takes the prepared task's own copy).
  const runtime::MoveState restored_moves = prepared.ok() ? prepared->moves : runtime::MoveState{};
  if (!stopping_) {
    session = prepared.ok() ? TaskSession::Create(io_, *a, std::move(*prepared), plugin, options_.progress,
                                                  SpawnerPort{[conn](const auto& fill) { conn->SendEnvelope(fill); },
                                                              [this](const std::string& why) { EndJob(why); },
                                                              [this](uint64_t move, const std::string& items) {
                                                                OnExported(move, items);
                                                              }},
                                                  log_, options_.iteration_time)
                            : Result<Session>(prepared.status());
  }
  if (!session.ok()) {
    log_->warn("job {}: task {} refused: {}", a->job, a->task, session.status().message());
    Reply(*conn, a->job, a->task, session.status().message());
    co_return;
  }
  const uint64_t restored_iteration = prepared->restored ? prepared->restored->iteration : 0;
  job_ = *session;
  job_spawner_ = conn;
  export_routes_.clear();
  routed_ = RoutedImports();
  links_measured_.clear();
  checkpoints_.Host(a->job, a->hosted);
  for (auto& [t, link] : job_->links()) asio::co_spawn(io_, RunLink(job_, link), asio::detached);
  for (auto& backup : job_->backups()) {
    net::SpawnLogged(io_.get_executor(), RunBackup(job_, backup), log_, "backup link");
  }
  net::SpawnLogged(io_.get_executor(), RunProgress(job_), log_, "progress reports");
  if (job_->group().coordinator_of_member()) {
    net::SpawnLogged(io_.get_executor(), RunCoordinatorLink(job_), log_, "group coordinator link");
  }
  net::SpawnLogged(io_.get_executor(), RunProbes(job_), log_, "link probes");
  log_->info("job {}: running task {} of {} (app {}, {} mode, built in {:.2f} s)", a->job, a->task, a->params.tasks,
             a->app, a->sync ? "sync" : "async", built.count());
  Reply(*conn, a->job, a->task, "", false, restored_iteration, &restored_moves);
}

awaitable<Result<PreparedTask>> TaskHost::PrepareOffIo(std::shared_ptr<Assignment> a, std::unique_ptr<app::App> app,
                                                       std::optional<checkpoint::Checkpoint> restored) {
  // Shared with the worker: this coroutine may be destroyed (the daemon stopping) while it runs.
  struct Work {
    std::shared_ptr<Assignment> a;
    std::unique_ptr<app::App> app;
    std::optional<checkpoint::Checkpoint> restored;
    std::optional<Result<PreparedTask>> result;
    asio::steady_timer done;
  };
  auto work = std::make_shared<Work>(Work{std::move(a), std::move(app), std::move(restored), std::nullopt,
                                          asio::steady_timer(io_, std::chrono::steady_clock::time_point::max())});
  asio::post(work_, [this, work] {
    work->result.emplace(PrepareTask(*work->a, std::move(work->app), std::move(work->restored)));
    // Posted: the timer belongs to the io thread. The wait below started before this can run.
    asio::post(io_, [work] { work->done.cancel(); });
  });
  co_await work->done.async_wait(net::use_nothrow);
  co_return std::move(*work->result);
}

awaitable<std::optional<checkpoint::Checkpoint>> TaskHost::FetchCheckpoint(const Assignment& a) {
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
      auto conn = co_await DialOnce(*ep, daemon, a.job, "a backup of task " + std::to_string(a.task));
      if (!conn.ok()) continue;  // dead or replaced: the others may have it
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

NeighbourMove TaskHost::MoveOf(proto::NeighbourMoved::Reader m) {
  return {m.getJob().cStr(), m.getTask(), m.getAddress().cStr(), m.getDaemonId().cStr(),
          m.getPreviousDaemonId().cStr(), m.getIncarnation()};
}

void TaskHost::OnNeighbourMoved(const NeighbourMove& m) {
  const auto coordinator = job_->group().coordinator_of_member();
  if (!job_->Move(m)) return;
  checkpoints_.Moved(m.task, m.daemon);
  // Our group's coordinator moved: RunCoordinatorLink dials its new daemon.
  if (coordinator && coordinator->task == m.task && coordinator_conn_) coordinator_conn_->Close();
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
      if (busy()) {
        Reply(*conn, a.job, a.task,
              "daemon " + options_.id + " is busy with job " + (job_ ? job_->job() : std::string("being set up")));
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
      auto pd = env.getPluginData();
      std::string bytes;
      if (pd.getTotal() > 0) {
        // One chunk of a plugin larger than a frame: wait for the rest.
        auto data = pd.getBytes();
        if (Status s = incoming.Add("plugin", pd.getOffset(), pd.getTotal(),
                                    std::string_view(reinterpret_cast<const char*>(data.begin()), data.size()));
            !s.ok()) {
          log_->warn("closed {}: plugin data: {}", conn->Describe(), s.message());
          conn->Refuse("plugin data: " + s.message());
          break;
        }
        if (incoming.received() < incoming.total()) continue;
        auto whole = incoming.Take("plugin", incoming.total(), waiting_for_plugin_->plugin_hash);
        if (!whole.ok()) {
          auto a = std::move(waiting_for_plugin_);
          log_->warn("job {}: task {} refused: plugin {}", a->job, a->task, whole.status().message());
          Reply(*conn, a->job, a->task, "plugin " + whole.status().message());
          continue;
        }
        bytes = std::move(*whole);
      } else {
        bytes = AsString(pd.getBytes());
      }
      auto a = std::move(waiting_for_plugin_);
      // The bytes must hash to what the (checked, maybe signed) task names, before anything is
      // written or loaded: PluginStore::Add hashes them against a->plugin_hash.
      auto plugin = AsString(pd.getSha256()) != a->plugin_hash
                        ? Result<std::shared_ptr<runtime::Plugin>>(InvalidArgument(
                              "plugin hash mismatch: the plugin sent is not the one the task names"))
                        : plugins_.Add(a->plugin_hash, bytes);
      if (!plugin.ok()) {
        log_->warn("job {}: task {} refused: {}", a->job, a->task, plugin.status().message());
        Reply(*conn, a->job, a->task, plugin.status().message());
        continue;
      }
      co_await Accept(std::move(*a), *plugin, conn);
      for (const auto& move : early_moves) {
        if (job_ && job_spawner_ == conn) OnNeighbourMoved(move);
      }
      early_moves.clear();
    } else if (env.isExit()) {
      if (job_ && job_spawner_ == conn && env.getExit().getJob() == job_->job()) {
        // Fault injection: die as a SIGKILL would, without a goodbye to anyone.
        log_->warn("job {}: exiting at once, as the spawner asked (fault injection)", job_->job());
        spdlog::default_logger()->flush();
        log_->flush();
        std::_Exit(137);
      }
    } else if (env.isNeighbourMoved()) {
      if (job_ && job_spawner_ == conn) {
        OnNeighbourMoved(MoveOf(env.getNeighbourMoved()));
      } else if (waiting_for_plugin_ && waiting_for_plugin_->job == env.getNeighbourMoved().getJob().cStr()) {
        early_moves.push_back(MoveOf(env.getNeighbourMoved()));
      }
    } else if (env.isStartTask()) {
      if (job_ && job_spawner_ == conn) job_->Start();
    } else if (env.isConvergenceQuery()) {
      if (job_ && job_spawner_ == conn) job_->Query(env.getConvergenceQuery().getRound());
    } else if (env.isSnapshot()) {
      if (job_ && job_spawner_ == conn) job_->Snapshot(env.getSnapshot().getRound());
    } else if (env.isTighten()) {
      const double factor = env.getTighten().getFactor();
      if (!(std::isfinite(factor) && factor > 1)) {
        log_->warn("closed {}: tighten by {}", conn->Describe(), factor);
        conn->Refuse("tighten: the factor must be a finite number above 1");
        break;
      }
      if (job_ && job_spawner_ == conn) job_->Tighten(factor);
    } else if (env.isMoveItems()) {
      auto m = env.getMoveItems();
      if (!(job_ && job_spawner_ == conn && m.getJob() == job_->job() && m.getTask() == job_->task())) continue;
      const double work = m.getWork();
      if (!(std::isfinite(work) && work >= 0)) {
        log_->warn("closed {}: move {} of {} work units", conn->Describe(), m.getMove(), work);
        conn->Refuse("move items: the work must be a finite number at least 0");
        break;
      }
      runtime::ItemMove move;
      move.move = m.getMove();
      move.work = work;
      move.to = m.getTo();
      move.items = net::AsString(m.getItems());
      move.kind = runtime::FromProto(m.getKind());
      if (move.kind == runtime::MoveKind::kImport) {
        const std::string sha256 = AsString(m.getSha256());
        if (!sha256.empty() && move.items.empty()) {
          // The items come daemon to daemon: imported when they are here and match.
          auto here = routed_.Expect(move.move, sha256);
          if (here) Import(move.move, std::move(*here));
          continue;
        }
        if (!routed_.Direct(move.move)) {
          log_->debug("job {}: move {}: the items came by their route already", job_->job(), move.move);
          continue;
        }
      }
      if (move.kind == runtime::MoveKind::kExport && m.getRoute().size() > 0) {
        export_routes_[move.move] = {move.to, HopsOf(m.getRoute())};
      }
      job_->Move(std::move(move));
    } else if (env.isHalt()) {
      if (job_ && job_spawner_ == conn) {
        if (job_->started()) {
          job_->Halt();  // the runner's `finished` sends the result, then ends the job
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
  if (job_ && job_spawner_ == conn) EndJob("spawner connection lost");
  waiting_for_plugin_.reset();
}

awaitable<Result<net::ConnectionPtr>> TaskHost::DialOnce(Endpoint address, std::string daemon, std::string job,
                                                         std::string what) {
  net::RetryPolicy once;
  once.attempts = 1;
  auto conn = co_await net::Dial(address, options_.net, proto::Role::DAEMON, options_.id, proto::Role::DAEMON, once);
  if (conn.ok() && !daemon.empty() && (*conn)->peer().id != daemon) {
    // Not the daemon the spawner named (the address was reused, or a replaced daemon came back
    // there): never send it the job's data, nor take its checkpoints.
    log_->warn("job {}: {} is not daemon {}, {}", job, (*conn)->Describe(), daemon, what);
    (*conn)->Close();
    co_return Unavailable("wrong daemon at the address");
  }
  co_return conn;
}

awaitable<net::ConnectionPtr> TaskHost::DialDaemon(Session job, std::function<Target()> target,
                                                  std::string what, std::chrono::milliseconds& backoff) {
  while (job_ == job) {
    // Read each time: a NeighbourMoved may have moved the peer meanwhile.
    const Target t = target();
    const Endpoint& address = t.first;
    const std::string& daemon = t.second;
    auto conn = co_await DialOnce(address, daemon, job->job(), what);
    if (job_ != job) break;
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
      log_->error("job {}: {} refused us: {}", job->job(), address.ToString(), conn.status().message());
      break;
    }
    asio::steady_timer wait(io_, backoff);
    co_await wait.async_wait(net::use_nothrow);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  co_return nullptr;
}

awaitable<void> TaskHost::RunLink(Session job, std::shared_ptr<TaskSession::OutLink> link) {
  auto backoff = std::chrono::milliseconds(20);
  while (job_ == job) {
    if (!link->conn || !link->conn->is_open()) {
      // Named, not temporaries: g++ 12 destroys some temporaries of a co_await expression twice
      // (here the lambda's copy of `link`, which freed the link under the running coroutine).
      std::function<Target()> target = [link] { return Target{link->address, link->daemon}; };
      std::string what = "which runs task " + std::to_string(link->task);
      link->conn = co_await DialDaemon(job, target, what, backoff);
      if (!link->conn) break;
      net::SpawnLogged(io_.get_executor(), WatchLink(link, link->conn), log_, "link watch");
      // What the last connection carried may never have been absorbed: the neighbour refused it
      // while its task was still being set up, or died. Asynchronous tasks only iterate on new
      // values, so a lost one can leave every task waiting: send the newest again.
      if (link->pending.empty() && link->last) link->pending.push_back(*link->last);
    }
    if (link->pending.empty()) {
      link->wake->expires_at(std::chrono::steady_clock::time_point::max());
      co_await link->wake->async_wait(net::use_nothrow);
      continue;
    }
    // Not a structured binding: clang 14 cannot capture those in the lambda below.
    const TaskSession::OutLink::Value value = std::move(link->pending.front());
    link->pending.pop_front();
    if (!link->keep_all) link->last = value;
    link->conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto d = e.initDependencyData();
      d.setJob(job->job());
      d.setFromTask(job->task());
      d.setToTask(link->task);
      d.setIteration(value.iteration);
      d.setData(AsBytes(value.bytes));
      d.setConverged(value.converged);
      d.setSeen(value.seen);
      d.setSeenIncarnation(value.seen_incarnation);
      d.setIncarnation(job->incarnation());
    });
    Sent(*link->conn, value.bytes.size() + 64);
    // Hand the connection one value at a time: newer values replace `pending` meanwhile.
    co_await link->conn->Drained();
  }
  if (link->conn) link->conn->Close();
}

awaitable<void> TaskHost::WatchLink(std::shared_ptr<TaskSession::OutLink> link, net::ConnectionPtr conn) {
  // A neighbour writes on our link to acknowledge what it read, or to refuse it (the task is
  // not, or no longer, run there): notice a refusal, or its death, at once, so that RunLink
  // dials again and resends.
  co_await WatchAcks(conn);
  if (link->conn == conn) link->wake->cancel();
}

awaitable<void> TaskHost::WatchAcks(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) break;
    auto env = (*msg)->root();
    if (!env.isLinkAck()) {
      conn->Refuse("unexpected message");
      break;
    }
    auto& unacked = unacked_[conn.get()];
    const auto now = std::chrono::steady_clock::now();
    for (uint32_t k = env.getLinkAck().getFrames(); k > 0 && !unacked.empty(); --k) {
      const auto [sent, bytes] = unacked.front();
      unacked.pop_front();
      links_measured_[conn->peer().id].Add(bytes, std::chrono::duration<double>(now - sent).count());
    }
  }
  conn->Close();  // first: Sent() counts nothing more on it
  unacked_.erase(conn.get());
}

void TaskHost::Sent(const net::Connection& conn, uint64_t bytes) {
  if (!conn.is_open()) return;
  auto& unacked = unacked_[&conn];
  unacked.emplace_back(std::chrono::steady_clock::now(), bytes);
  // A peer that does not acknowledge (its frames lost with a restart) must not make this grow.
  while (unacked.size() > 64) unacked.pop_front();
}

awaitable<void> TaskHost::RunProbes(Session job) {
  asio::steady_timer timer(io_);
  while (job_ == job) {
    timer.expires_after(std::chrono::seconds(1));
    co_await timer.async_wait(net::use_nothrow);
    if (job_ != job) break;
    std::vector<net::ConnectionPtr> conns;
    for (auto& [t, link] : job->links()) conns.push_back(link->conn);
    for (auto& [daemon, conn] : relay_links_) conns.push_back(conn);
    for (auto& conn : conns) {
      if (!conn || !conn->is_open()) continue;
      conn->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkProbe(); });
      Sent(*conn, 0);
    }
  }
}

std::vector<LinkReport> TaskHost::LinkReports() const {
  std::vector<LinkReport> out;
  for (const auto& [daemon, m] : links_measured_) {
    if (m.measured()) out.push_back({daemon, m.alpha(), m.seconds_per_byte(), static_cast<uint32_t>(m.samples())});
  }
  return out;
}

awaitable<void> TaskHost::RunProgress(Session job) {
  // The spawner takes a silent daemon for dead (failure_timeout_ms): report from the network
  // thread on a clock of its own, however long one iteration of the task takes.
  asio::steady_timer timer(io_);
  while (job_ == job) {
    timer.expires_after(options_.progress);
    co_await timer.async_wait(net::use_nothrow);
    if (job_ != job) break;
    SampleRunQueue();
    job->ReportProgress(run_queue_.mean(), run_queue_.stddev(), LinkReports(), [this](const EnvelopeFill& fill) {
      // Only while the coordinator acknowledged the last one: a stalled coordinator must not
      // silence its members, whom the spawner would then take for dead.
      if (!coordinator_conn_ || !coordinator_conn_->is_open() || coordinator_unacked_) return false;
      coordinator_conn_->SendEnvelope(fill);
      coordinator_unacked_ = true;
      return true;
    });
  }
}

awaitable<void> TaskHost::RunCoordinatorLink(Session job) {
  auto backoff = std::chrono::milliseconds(20);
  while (job_ == job) {
    std::function<Target()> target = [job] {
      const auto c = job->group().coordinator_of_member();
      return c ? Target{c->address, c->daemon} : Target{};
    };
    std::string what = "the coordinator of its group";
    net::ConnectionPtr conn = co_await DialDaemon(job, target, what, backoff);
    if (!conn) break;
    coordinator_conn_ = conn;
    coordinator_unacked_ = false;
    // Its acknowledgements, until it closes, refuses us (its task is being set up, or it has not
    // heard yet that this task moved here) or moves (OnNeighbourMoved closes the connection).
    for (;;) {
      auto msg = co_await conn->Receive();
      if (!msg.ok() || !(*msg)->root().isLinkAck()) break;
      if (coordinator_conn_ == conn) coordinator_unacked_ = false;
    }
    conn->Close();
    if (coordinator_conn_ == conn) coordinator_conn_.reset();
    // Reports go to the spawner meanwhile; dial again a progress period later.
    asio::steady_timer wait(io_, options_.progress);
    co_await wait.async_wait(net::use_nothrow);
  }
}

awaitable<void> TaskHost::RunBackup(Session job, std::shared_ptr<TaskSession::BackupLink> backup) {
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
      job->Acknowledged(c.state.size());
    } else if (ack.getError().size() > 0) {
      log_->warn("job {}: backup {} did not store {}: {}", job->job(), backup->daemon, checkpoint::Describe(c),
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
    if (env.isRelayItems()) {
      if (!OnRelayed(*conn, env.getRelayItems())) {
        conn->Refuse("relay items: the route does not start here");
        co_return;
      }
      conn->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkAck().setFrames(1); });
      continue;
    }
    if (env.isLinkProbe()) {
      conn->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkAck().setFrames(1); });
      continue;
    }
    if (env.isTaskProgress()) {
      // A member of the group this daemon's task coordinates (report_group.h).
      if (!job_ || !job_->GatherReport(conn->peer().id, env.getTaskProgress())) {
        log_->debug("closed {}: a progress report for a group not coordinated here", conn->Describe());
        conn->Refuse("this daemon does not gather your task's reports");
        co_return;
      }
      conn->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkAck().setFrames(1); });
      continue;
    }
    if (!env.isDependencyData()) {
      log_->warn("closed {}: unexpected message from a daemon", conn->Describe());
      conn->Refuse("unexpected message");
      co_return;
    }
    auto dep = env.getDependencyData();
    if (!job_ && setting_up_ && setting_up_->first == dep.getJob().cStr() && setting_up_->second == dep.getToTask()) {
      // The task is being set up here: hold the values (and this connection) until it runs.
      auto done = setup_done_;
      co_await done->async_wait(net::use_nothrow);
    }
    // Data for a job (or task) this daemon does not, or no longer, run: the sender has not heard
    // that the task moved or ended. Close, so that it dials again, wherever the task is now.
    if (!job_ || job_->job() != dep.getJob().cStr() || dep.getToTask() != job_->task()) {
      log_->debug("closed {}: values for task {} of job {}, not run here", conn->Describe(), dep.getToTask(),
                  Printable(dep.getJob().cStr(), 64));
      conn->Refuse("that task does not run here");
      co_return;
    }
    // Only the daemon that runs the sending task may speak for it.
    if (!job_->Deliver(conn->peer().id, dep)) {
      log_->warn("closed {}: sent values of task {} of job {}, which it does not run", conn->Describe(),
                 dep.getFromTask(), job_->job());
      conn->Refuse("you do not run that task");
      co_return;
    }
    conn->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkAck().setFrames(1); });
  }
}

std::vector<TaskHost::RelayHop> TaskHost::HopsOf(capnp::List<proto::Neighbour>::Reader route) {
  std::vector<RelayHop> hops;
  for (auto n : route) hops.push_back({n.getTask(), n.getAddress().cStr(), n.getDaemonId().cStr()});
  return hops;
}

void TaskHost::OnExported(uint64_t move, const std::string& items) {
  auto route = export_routes_.find(move);
  if (!job_ || route == export_routes_.end()) return;
  auto [to_task, hops] = std::move(route->second);
  export_routes_.erase(route);
  net::SpawnLogged(io_.get_executor(), Relay(job_->job(), move, to_task, std::move(hops), items), log_,
                   "item relay");
}

awaitable<void> TaskHost::Relay(std::string job, uint64_t move, uint32_t to_task, std::vector<RelayHop> route,
                                std::string items) {
  const RelayHop next = route.front();
  net::ConnectionPtr conn;
  if (auto known = relay_links_.find(next.daemon); known != relay_links_.end() && known->second->is_open()) {
    conn = known->second;
  }
  auto backoff = std::chrono::milliseconds(50);
  for (int attempt = 0; !conn && attempt < 3; ++attempt) {
    if (attempt > 0) {
      asio::steady_timer wait(io_, backoff);
      co_await wait.async_wait(net::use_nothrow);
      backoff *= 2;
    }
    auto ep = ParseEndpoint(next.address);
    if (!ep.ok()) break;
    auto dialed = co_await DialOnce(*ep, next.daemon, job, "to pass items on to");
    if (!dialed.ok()) continue;
    conn = *dialed;
    relay_links_[next.daemon] = conn;
    // The next daemon acknowledges what it reads, or refuses the connection: then it is closed
    // and dialed again next time.
    net::SpawnLogged(io_.get_executor(), WatchAcks(conn), log_, "relay link watch");
  }
  if (!conn || !job_ || job_->job() != job) {
    // The spawner sends the items itself once it hears the route failed, or after a while.
    log_->warn("job {}: items of move {} not passed on to daemon {} (task {}): {}", job, move, next.daemon, next.task,
               conn ? "the job ended here" : "unreachable");
    co_return;
  }
  conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initRelayItems();
    r.setJob(job);
    r.setMove(move);
    r.setToTask(to_task);
    auto hops = r.initRoute(static_cast<unsigned>(route.size()));
    for (unsigned i = 0; i < hops.size(); ++i) {
      hops[i].setTask(route[i].task);
      hops[i].setAddress(route[i].address);
      hops[i].setDaemonId(route[i].daemon);
    }
    r.setItems(AsBytes(items));
  });
  Sent(*conn, items.size() + 64);
  log_->debug("job {}: move {}: {} bytes of items passed on to daemon {} (task {}), {} daemons to go", job, move,
              items.size(), next.daemon, next.task, route.size() - 1);
}

bool TaskHost::OnRelayed(const net::Connection& from, proto::RelayItems::Reader r) {
  auto route = r.getRoute();
  if (route.size() == 0 || route[0].getDaemonId() != options_.id) {
    log_->warn("closed {}: items of move {} routed through another daemon", from.Describe(), r.getMove());
    return false;
  }
  if (!job_ || job_->job() != r.getJob().cStr()) {
    // This daemon no longer runs that job: the spawner sends the items itself after a while.
    log_->info("items of move {} of job {} dropped: that job does not run here", r.getMove(),
               Printable(r.getJob().cStr(), 64));
    return true;
  }
  if (route.size() > 1) {
    std::vector<RelayHop> rest = HopsOf(route);
    rest.erase(rest.begin());
    net::SpawnLogged(io_.get_executor(), Relay(job_->job(), r.getMove(), r.getToTask(), std::move(rest),
                                               AsString(r.getItems())),
                     log_, "item relay");
    return true;
  }
  if (r.getToTask() != job_->task()) {
    log_->info("job {}: items of move {} for task {} dropped: task {} runs here", job_->job(), r.getMove(),
               r.getToTask(), job_->task());
    return true;
  }
  auto here = routed_.Arrive(r.getMove(), AsString(r.getItems()));
  if (!here.ok()) {
    log_->warn("job {}: items from {} dropped: {}", job_->job(), from.Describe(), here.status().message());
  } else if (*here) {
    Import(r.getMove(), std::move(**here));
  }
  return true;
}

void TaskHost::Import(uint64_t move, std::string items) {
  runtime::ItemMove m;
  m.move = move;
  m.kind = runtime::MoveKind::kImport;
  m.items = std::move(items);
  job_->Move(std::move(m));
}

void TaskHost::EndJob(const std::string& why) {
  for (auto& [daemon, conn] : relay_links_) conn->Close();
  relay_links_.clear();
  if (!job_) return;
  Session job = std::move(job_);
  job_.reset();
  job_spawner_.reset();
  if (coordinator_conn_) coordinator_conn_->Close();
  coordinator_conn_.reset();
  log_->info("job {}: task {} ends: {}", job->job(), job->task(), why);
  checkpoints_.EndJob(job->job());
  // The runner's thread ends after its current iteration: join it on the worker.
  auto retired = std::make_shared<TaskSession::Retired>(job->End());
  asio::post(work_, [retired] { retired->runner.reset(); });
}

}  // namespace aiac::daemon
