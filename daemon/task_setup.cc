// TaskHost: setting up the task a spawner assigned (task_host.h).
#include <algorithm>
#include <filesystem>

#include "checkpoint/proof_wire.h"
#include "daemon/task_host.h"
#include "net/capnp_bytes.h"
#include "net/identity.h"
#include "runtime/app_log.h"

namespace aiac::daemon {

namespace asio = net::asio;

namespace {

// The newest task outputs (DATA/tasks/*.stderr) kept for the operator to read.
constexpr size_t kTaskOutputsKept = 16;

// Removes the oldest *.stderr files of `dir` beyond the newest `keep`.
void PruneTaskOutputs(const std::string& dir, size_t keep) {
  std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code e;
    if (entry.path().extension() == ".stderr")
      files.emplace_back(entry.last_write_time(e), entry.path());
  }
  if (files.size() <= keep) return;
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i + keep < files.size(); ++i) std::filesystem::remove(files[i].second, ec);
}

}  // namespace
using net::AsString;
using net::awaitable;

void TaskHost::Reply(net::Connection& conn, const std::string& job, uint32_t task,
                     const std::string& error, bool need_plugin, uint64_t restored_iteration,
                     const runtime::MoveState* moves, const std::string& notes,
                     const AppCrash* crash) {
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initTaskReady();
    r.setJob(job);
    r.setTask(task);
    r.setError(error);
    r.setNeedPlugin(need_plugin);
    r.setRestoredIteration(restored_iteration);
    r.setNotes(notes);
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
    if (crash) {
      auto c = r.initCrash();
      c.setCrashed(true);
      c.setCause(crash->cause);
      c.setStderrTail(crash->stderr_tail);
    }
  });
}

Result<PluginRef> TaskHost::FindPlugin(const std::string& sha256) {
  if (!options_.isolate_apps) {
    AIAC_ASSIGN_OR_RETURN(auto loaded, plugins_.Find(sha256));
    return PluginRef{"", std::move(loaded)};
  }
  AIAC_ASSIGN_OR_RETURN(std::string path, plugins_.FindFile(sha256));
  return PluginRef{std::move(path), nullptr};
}

Result<PluginRef> TaskHost::AddPlugin(const std::string& sha256, std::string_view bytes) {
  if (!options_.isolate_apps) {
    AIAC_ASSIGN_OR_RETURN(auto loaded, plugins_.Add(sha256, bytes));
    return PluginRef{"", std::move(loaded)};
  }
  AIAC_ASSIGN_OR_RETURN(std::string path, plugins_.AddFile(sha256, bytes));
  return PluginRef{std::move(path), nullptr};
}

AppChildSpec TaskHost::ChildSpecFor(const Assignment& a) const {
  AppChildSpec spec;
  spec.executable = options_.app_child_executable;
  spec.stderr_path = options_.task_dir + "/" + a.job + "." + std::to_string(a.task) + "." +
                     std::to_string(a.incarnation) + ".stderr";
  spec.memory_mb = a.memory_mb;
  spec.cpu_seconds = a.cpu_seconds;
  spec.stall = std::chrono::milliseconds(a.app_stall_ms);
  spec.threads = options_.app_threads;
  spec.log = a.params.logger;
  return spec;
}

awaitable<void> TaskHost::Accept(Assignment assignment, PluginRef plugin, net::ConnectionPtr conn) {
  auto a = std::make_shared<Assignment>(std::move(assignment));
  // Busy from here: another spawner's assignment is refused. Neighbours that heard of this
  // task's move may send values already: they wait for the setup.
  setting_up_ = {a->job, a->task};
  untold_.reset();  // the daemon was free again: that end's task went elsewhere
  auto setup_done =
      std::make_shared<asio::steady_timer>(io_, std::chrono::steady_clock::time_point::max());
  setup_done_ = setup_done;
  std::optional<checkpoint::Checkpoint> restored;
  if (a->restore) restored = co_await FetchCheckpoint(*a, conn->peer().public_key);
  const auto building = std::chrono::steady_clock::now();
  std::optional<AppCrash> crash;
  auto prepared = co_await PrepareOffIo(a, plugin, std::move(restored), crash);
  const std::chrono::duration<double> built = std::chrono::steady_clock::now() - building;
  // From here on no suspension: whatever follows, the setup is over when Accept returns.
  setting_up_.reset();
  setup_done->cancel();
  Result<Session> session = Unavailable("daemon " + options_.id + " is stopping");
  // Told to the spawner with the TaskReady (the session takes the prepared task's own copy).
  const runtime::MoveState restored_moves = prepared.ok() ? prepared->moves : runtime::MoveState{};
  const std::string notes = prepared.ok() ? prepared->notes : "";
  auto out = std::make_shared<net::ConnectionPtr>(conn);
  if (!stopping_) {
    SpawnerPort port{
        [this, out](const auto& fill) {
          if (*out) {
            (*out)->SendEnvelope(fill);
          } else {
            KeepUntold(fill);  // orphaned: its end waits for an adopter, the rest is dropped
          }
        },
        [this](const std::string& why) { EndJob(why); },
        [this](uint64_t move, const std::string& items) { relay_.OnExported(move, items); }};
    session = prepared.ok() ? TaskSession::Create(io_, *a, std::move(*prepared), plugin.loaded,
                                                  options_.progress, std::move(port), log_,
                                                  CheckpointKey(), options_.iteration_time)
                            : Result<Session>(prepared.status());
  }
  if (!session.ok()) {
    if (crash) {
      log_->warn("job {}: task {}'s app crashed while it was set up: {}; this daemon goes on",
                 a->job, a->task, crash->cause);
    } else {
      log_->warn("job {}: task {} refused: {}", a->job, a->task, session.status().message());
    }
    Reply(*conn, a->job, a->task, session.status().message(), false, 0, nullptr, "",
          crash ? &*crash : nullptr);
    if (auto p = std::exchange(pending_adoption_, std::nullopt)) {
      AnswerAdoption(p->conn, p->job, p->task,
                     "task " + std::to_string(p->task) + " could not be set up on daemon " +
                         options_.id + ": " + session.status().message());
    }
    co_return;
  }
  const uint64_t restored_iteration = prepared->restored ? prepared->restored->iteration : 0;
  Run(*session, *a, std::move(out));
  log_->info("job {}: running task {} of {} (app {}, {} mode, built in {:.2f} s)", a->job, a->task,
             a->params.tasks, a->app, a->sync ? "sync" : "async", built.count());
  if (!notes.empty()) log_->info("job {}: task {}: {}", a->job, a->task, notes);
  Reply(*conn, a->job, a->task, "", false, restored_iteration, &restored_moves, notes);
  // Its spawner was lost while it set the task up, and a resumed one asked for it meanwhile.
  if (auto p = std::exchange(pending_adoption_, std::nullopt)) {
    AnswerAdoption(p->conn, p->job, p->task,
                   Adopt(p->conn, p->job, p->task, p->incarnation, p->epoch));
  }
}

void TaskHost::Run(Session session, const Assignment& a,
                   std::shared_ptr<net::ConnectionPtr> spawner) {
  job_ = std::move(session);
  spawner_out_ = std::move(spawner);
  job_spawner_key_ = job_spawner()->peer().public_key;
  spawner_epoch_ = a.spawner_epoch;
  orphan_seconds_ = a.orphan_seconds;
  spawner_timeout_s_ = a.spawner_timeout_s;
  spawner_silent_ = false;
  spawner_heard_ = std::chrono::steady_clock::now();
  WatchSpawner();
  relay_.Reset();
  monitors_.Clear();
  checkpoints_.Host(a.job, job_spawner_key_, a.hosted);
  links_.Start(job_, [this] { return relay_.Connections(); });
}

awaitable<Result<PreparedTask>> TaskHost::PrepareOffIo(
    std::shared_ptr<Assignment> a, PluginRef plugin, std::optional<checkpoint::Checkpoint> restored,
    std::optional<AppCrash>& crash) {
  // Shared with the worker: this coroutine may be destroyed (the daemon stopping) while it runs.
  struct Work {
    std::shared_ptr<Assignment> a;
    PluginRef plugin;
    std::optional<AppChildSpec> child;
    std::optional<checkpoint::Checkpoint> restored;
    std::optional<Result<PreparedTask>> result;
    asio::steady_timer done;
    std::optional<AppCrash> crash;
  };
  // The app's own lines go to this daemon's log, tagged with whose they are.
  a->params.logger =
      runtime::MakeAppLog(log_, "job " + a->job + " task " + std::to_string(a->task) + "." +
                                    std::to_string(a->incarnation));
  std::optional<AppChildSpec> child;
  if (!plugin.loaded) {
    child = ChildSpecFor(*a);
    child->plugin = plugin.path;
    std::error_code ec;
    std::filesystem::create_directories(options_.task_dir, ec);
    PruneTaskOutputs(options_.task_dir, kTaskOutputsKept);
  }
  auto work = std::make_shared<Work>(
      Work{std::move(a), std::move(plugin), std::move(child), std::move(restored), std::nullopt,
           asio::steady_timer(io_, std::chrono::steady_clock::time_point::max()), std::nullopt});
  asio::post(work_, [this, work] {
    work->result.emplace(
        work->child
            ? PrepareTask(*work->a, *work->child, std::move(work->restored), work->crash)
            : PrepareTask(*work->a, work->plugin.loaded->NewApp(), std::move(work->restored)));
    // Posted: the timer belongs to the io thread. The wait below started before this can run.
    asio::post(io_, [work] { work->done.cancel(); });
  });
  co_await work->done.async_wait(net::use_nothrow);
  crash = std::move(work->crash);
  co_return std::move(*work->result);
}

std::optional<Ed25519Key> TaskHost::CheckpointKey() const {
  if (!options_.net.identity) return std::nullopt;
  return options_.net.identity->key;
}

awaitable<std::optional<checkpoint::Checkpoint>> TaskHost::FetchCheckpoint(
    const Assignment& a, std::string spawner_key) {
  // Ask every backup for its newest checkpoint that verifies, and take the newest of those. A
  // backup that has not heard of the move yet (the spawner's NeighbourMoved and this AssignTask
  // travel on different connections) says so; it is asked again, for up to 5 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::optional<checkpoint::Checkpoint> best;
  for (;;) {
    bool retry = false;
    for (const auto& [address, daemon] : a.backups) {
      auto c = co_await FetchFrom(a, address, daemon, spawner_key, retry);
      if (c && (!best || checkpoint::Newer(*c, *best))) best = std::move(c);
    }
    if (best || !retry || stopping_ || std::chrono::steady_clock::now() > deadline) break;
    asio::steady_timer wait(io_, std::chrono::milliseconds(100));
    co_await wait.async_wait(net::use_nothrow);
  }
  if (best) {
    log_->info("job {}: task {} restored from its {}", a.job, a.task, checkpoint::Describe(*best));
  } else {
    log_->warn(
        "job {}: no checkpoint of task {} on its {} backups: starting from the initial state",
        a.job, a.task, a.backups.size());
  }
  co_return best;
}

awaitable<std::optional<checkpoint::Checkpoint>> TaskHost::FetchFrom(const Assignment& a,
                                                                     const std::string& address,
                                                                     const std::string& daemon,
                                                                     const std::string& spawner_key,
                                                                     bool& retry) {
  auto ep = ParseEndpoint(address);
  if (!ep.ok()) co_return std::nullopt;
  auto conn =
      co_await links_.DialOnce(*ep, daemon, a.job, "a backup of task " + std::to_string(a.task));
  if (!conn.ok()) co_return std::nullopt;  // dead or replaced: the others may have it
  (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
    auto g = e.initCheckpointGet();
    g.setJob(a.job);
    g.setTask(a.task);
    if (a.capability) checkpoint::FillCapability(*a.capability, g.initCapability());
  });
  auto msg = co_await (*conn)->Receive();
  (*conn)->Close();
  if (!msg.ok() || !(*msg)->root().isCheckpointData()) co_return std::nullopt;
  auto d = (*msg)->root().getCheckpointData();
  if (!d.getFound()) {
    retry = retry || d.getError().size() > 0;
    co_return std::nullopt;
  }
  checkpoint::Checkpoint c{
      a.job,           a.task, d.getIncarnation(), d.getIteration(), AsString(d.getState()),
      d.getChecksum(), ""};
  if (d.getJob() != a.job || d.getTask() != a.task || !checkpoint::Verifies(c)) {
    log_->warn("job {}: backup {} sent a damaged {}", a.job, daemon, checkpoint::Describe(c));
    co_return std::nullopt;
  }
  // Only a checkpoint the task's own daemon signed, under a capability of the job's spawner,
  // for an earlier incarnation than this one, is believed: a backup cannot forge one.
  const auto proof = checkpoint::ReadProof(d.getProof());
  Status believed = checkpoint::VerifyCheckpoint(c, proof, spawner_key);
  if (believed.ok() && c.incarnation >= a.incarnation) {
    believed = Unauthenticated(checkpoint::Describe(c) + " is not of an earlier incarnation");
  }
  if (!believed.ok()) {
    log_->warn("job {}: refused the checkpoint backup {} sent: {}", a.job, daemon,
               believed.message());
    co_return std::nullopt;
  }
  c.proof = checkpoint::EncodeProof(proof);
  co_return c;
}

}  // namespace aiac::daemon
