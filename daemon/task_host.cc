#include "daemon/task_host.h"

#include "core/metrics.h"
#include "daemon/neighbour_channel.h"
#include "daemon/spawner_channel.h"
#include "net/identity.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::awaitable;

namespace {

// 1 while this daemon's task runs on without its spawner (docs/operations.md, "Metrics").
metrics::Gauge& WaitingForSpawner() {
  static metrics::Gauge& g = metrics::Registry::Process().GetGauge(
      "aiac_task_waiting_for_spawner",
      "1 while this daemon's task runs on without its spawner (its link closed, or silent past "
      "spawner_timeout_s), waiting for it or for a resumed spawner");
  return g;
}

}  // namespace

TaskHost::TaskHost(asio::io_context& io, TaskHostOptions options,
                   std::unique_ptr<checkpoint::CheckpointStore> checkpoints, Logger log)
    : io_(io),
      options_(std::move(options)),
      log_(std::move(log)),
      server_(io, options_.net, options_.limits, proto::Role::DAEMON, log_,
              [this](net::ConnectionPtr conn) { return Serve(std::move(conn)); }),
      plugins_(options_.plugin_dir, options_.plugin_cache_bytes),
      checkpoints_(io, std::move(checkpoints), log_),
      tasks_(io.get_executor()),
      links_(
          io, options_, monitors_, tasks_, [this] { return job_; }, log_),
      relay_(
          io, options_, links_, monitors_, tasks_, [this] { return job_; }, log_) {
  server_.set_id(options_.id);
  EvictPlugins();  // a bound lowered since the last start
}

void TaskHost::EvictPlugins() {
  for (const auto& file : plugins_.Evict()) {
    log_->info("plugin {} removed from DATA/plugins: least recently used, past the {} MB bound",
               file, options_.plugin_cache_bytes >> 20);
  }
}

TaskHost::~TaskHost() { Close(); }

Result<Endpoint> TaskHost::Listen(const Endpoint& listen) { return server_.Listen(listen); }

void TaskHost::Serve() { server_.Start(); }

void TaskHost::Close() {
  if (stopping_) return;
  stopping_ = true;
  EndJob("daemon stopping");
  server_.Close();
}

awaitable<void> TaskHost::Stop() {
  Close();
  co_await server_.Stop();  // the spawner's and the neighbours' connections' handlers
  co_await tasks_.Wait();   // the job's links, probes and relays
  // The app's set-up and the ended task's join, queued on the worker before this no-op.
  auto drained = std::make_shared<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
  asio::post(work_, [this, drained] { asio::post(io_, [drained] { drained->cancel(); }); });
  co_await drained->async_wait(net::use_nothrow);
}

void TaskHost::CloseRevoked() {
  if (!options_.net.identity) return;
  const net::RevokedKeys& revoked = *options_.net.identity->trust.revoked;
  if (const auto spawner = job_spawner(); spawner && revoked.Contains(spawner->peer().public_key)) {
    EndJob("its spawner's key is revoked");
  }
  server_.CloseRevoked(revoked);
}

awaitable<void> TaskHost::Serve(net::ConnectionPtr conn) {
  if (conn->peer().role == proto::Role::SPAWNER) {
    co_await SpawnerChannel(*this, conn).Serve();
  } else if (conn->peer().role == proto::Role::DAEMON) {
    co_await NeighbourChannel(*this, conn).Serve();
  } else {
    log_->warn("closed {}: super-nodes do not connect to daemons", conn->Describe());
    conn->Refuse("unexpected role");
  }
}

NeighbourMove TaskHost::MoveOf(proto::NeighbourMoved::Reader m) {
  return {m.getJob().cStr(),
          m.getTask(),
          m.getAddress().cStr(),
          m.getDaemonId().cStr(),
          m.getPreviousDaemonId().cStr(),
          m.getIncarnation()};
}

void TaskHost::OnNeighbourMoved(const NeighbourMove& m) {
  const auto coordinator = job_->group().coordinator_of_member();
  if (!job_->Move(m)) return;
  checkpoints_.Moved(m.task, m.daemon, m.incarnation);
  if (coordinator && coordinator->task == m.task) links_.CoordinatorMoved();
}

void TaskHost::EndJob(const std::string& why) {
  relay_.End();
  if (!job_) return;
  Session job = std::move(job_);
  job_.reset();
  if (spawner_out_) spawner_out_->reset();  // (the session may outlive this: it sends nothing)
  spawner_out_.reset();
  if (orphan_timer_) orphan_timer_->cancel();
  orphan_timer_.reset();
  if (watch_timer_) watch_timer_->cancel();
  watch_timer_.reset();
  spawner_silent_ = false;
  WaitingForSpawner().Set(0);
  pending_adoption_.reset();
  links_.End();
  log_->info("job {}: task {} ends: {}", job->job(), job->task(), why);
  checkpoints_.EndJob(job->job());
  // The runner's thread ends after its current iteration: join it on the worker.
  auto retired = std::make_shared<TaskSession::Retired>(job->End());
  asio::post(work_, [retired] { retired->runner.reset(); });
}

void TaskHost::Orphan() {
  if (!job_) return;
  if (orphan_seconds_ == 0) {
    EndJob("spawner connection lost");
    return;
  }
  spawner_out_->reset();
  if (spawner_silent_) return;  // counted as lost already: its wait goes on
  log_->warn(
      "job {}: spawner connection lost; task {} runs on for {} s, waiting for its spawner "
      "to resume",
      job_->job(), job_->task(), orphan_seconds_);
  WaitForSpawner();
}

void TaskHost::WaitForSpawner() {
  WaitingForSpawner().Set(1);
  orphan_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(orphan_seconds_));
  orphan_timer_->async_wait([this, session = std::weak_ptr<TaskSession>(job_),
                             epoch = spawner_epoch_](const boost::system::error_code& ec) {
    // (aborted: adopted, heard again, ended, or the host is gone; `this` is not touched then)
    if (ec || job_ != session.lock() || spawner_epoch_ != epoch) return;
    const net::ConnectionPtr spawner = job_spawner();
    if (spawner && !spawner_silent_) return;
    EndJob("its spawner did not come back within " + std::to_string(orphan_seconds_) + " s");
    if (spawner) spawner->Close();
  });
}

void TaskHost::SpawnerHeard() {
  spawner_heard_ = std::chrono::steady_clock::now();
  if (!spawner_silent_) return;
  spawner_silent_ = false;
  if (orphan_timer_) orphan_timer_->cancel();
  orphan_timer_.reset();
  WaitingForSpawner().Set(0);
  log_->info("job {}: its spawner speaks again; task {} goes on under it", job_->job(),
             job_->task());
}

void TaskHost::WatchSpawner() {
  if (spawner_timeout_s_ == 0) return;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point due = Clock::now() + std::chrono::seconds(1);
  watch_timer_ = std::make_unique<asio::steady_timer>(io_, due);
  watch_timer_->async_wait([this, session = std::weak_ptr<TaskSession>(job_),
                            due](const boost::system::error_code& ec) {
    if (ec || !job_ || job_ != session.lock()) return;
    const Clock::time_point now = Clock::now();
    if (const auto late = now - due; late > kNotRunning) {
      // This daemon did not run (starved, or stopped): what the spawner sent meanwhile may
      // wait unread behind this check, so that time is not the spawner's silence.
      log_->debug("job {}: the daemon did not run for at least {:.1f} s", job_->job(),
                  std::chrono::duration<double>(late).count());
      spawner_heard_ = std::min(spawner_heard_ + late, now);
    }
    const net::ConnectionPtr spawner = job_spawner();
    const auto silent_for = std::chrono::duration_cast<std::chrono::seconds>(now - spawner_heard_);
    // (an older spawner sends no SpawnerAlive: only its link's end tells it lost)
    if (spawner && !spawner_silent_ && spawner->peer().version >= net::kSpawnerAliveVersion &&
        silent_for >= std::chrono::seconds(spawner_timeout_s_)) {
      SpawnerSilent(silent_for);
    }
    if (job_) WatchSpawner();
  });
}

void TaskHost::SpawnerSilent(std::chrono::seconds silent_for) {
  if (orphan_seconds_ == 0) {
    const net::ConnectionPtr spawner = job_spawner();
    EndJob("its spawner sent nothing for " + std::to_string(silent_for.count()) + " s");
    if (spawner) spawner->Close();
    return;
  }
  spawner_silent_ = true;
  log_->warn(
      "job {}: its spawner {} sent nothing for {} s; task {} runs on for {} s, waiting for it "
      "to speak or for a spawner to resume",
      job_->job(), job_spawner()->peer().id, silent_for.count(), job_->task(), orphan_seconds_);
  WaitForSpawner();
}

void TaskHost::OnAdopt(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                       uint64_t incarnation, uint64_t epoch) {
  if (!job_ && setting_up_ && setting_up_->first == job && setting_up_->second == task) {
    log_->info("job {}: task {} is being set up; {} adopts it once it runs", job, task,
               conn->Describe());
    pending_adoption_ = PendingAdoption{conn, job, task, incarnation, epoch};
    return;
  }
  if (untold_ && TellUntold(conn, job, task, incarnation, epoch)) return;
  AnswerAdoption(conn, job, task, Adopt(conn, job, task, incarnation, epoch));
}

void TaskHost::KeepUntold(const EnvelopeFill& fill) {
  if (!job_) return;  // ended already: nothing it sends counts
  auto envelope = std::make_shared<capnp::MallocMessageBuilder>();
  auto e = envelope->initRoot<proto::Envelope>();
  fill(e);
  if (!e.isResult()) return;
  // job_'s own end: a session that ended before (its port now empty) sends nothing that counts.
  const auto r = e.asReader().getResult();
  if (std::string_view(r.getJob().cStr()) != job_->job() || r.getTask() != job_->task() ||
      r.getIncarnation() != job_->incarnation()) {
    return;
  }
  untold_ = UntoldEnd{job_->job(),
                      job_->task(),
                      job_->incarnation(),
                      spawner_epoch_,
                      job_->moves_applied(),
                      job_spawner_key_,
                      std::chrono::steady_clock::now() + std::chrono::seconds(orphan_seconds_),
                      std::move(envelope)};
  log_->info("job {}: task {} ended while its spawner was away; a spawner that adopts it hears it",
             job_->job(), job_->task());
}

bool TaskHost::TellUntold(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                          uint64_t incarnation, uint64_t epoch) {
  const UntoldEnd& u = *untold_;
  if (std::chrono::steady_clock::now() > u.until) {
    untold_.reset();
    return false;
  }
  if (u.job != job || u.task != task || u.incarnation != incarnation ||
      conn->peer().public_key != u.spawner_key || epoch <= u.epoch) {
    return false;
  }
  log_->info(
      "job {}: task {}, which ended while its spawner was away, adopted by spawner "
      "incarnation {} (was {}): told how it ended",
      job, task, epoch, u.epoch);
  auto result = u.envelope->getRoot<proto::Envelope>().asReader().getResult();
  SendAdoptionAnswer(*conn, job, task, "", /*started=*/true, u.moves);
  conn->SendEnvelope([&](proto::Envelope::Builder e) { e.setResult(result); });
  untold_.reset();
  return true;
}

void TaskHost::AnswerAdoption(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                              const std::string& refused) {
  if (!refused.empty()) log_->warn("adoption by {} refused: {}", conn->Describe(), refused);
  const bool adopted = refused.empty();
  SendAdoptionAnswer(*conn, job, task, refused, adopted && job_->started(),
                     adopted ? job_->moves_applied() : 0);
  if (adopted) job_->Adopted();
}

void TaskHost::SendAdoptionAnswer(net::Connection& conn, const std::string& job, uint32_t task,
                                  const std::string& refused, bool started, uint64_t moves) {
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initTaskReady();
    r.setJob(job);
    r.setTask(task);
    r.setError(refused);
    r.setAdopted(refused.empty());
    r.setStarted(started);
    // (adopted: its item move sequence as its replies said it, for the spawner's replays)
    if (refused.empty()) r.setRestoredMoves(moves);
  });
}

std::string TaskHost::Adopt(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                            uint64_t incarnation, uint64_t epoch) {
  if (!job_ || job_->job() != job || job_->task() != task) {
    return "no task " + std::to_string(task) + " of job " + job + " runs on daemon " + options_.id;
  }
  if (job_->incarnation() != incarnation) {
    return "task " + std::to_string(task) + " of job " + job + " runs on daemon " + options_.id +
           " in incarnation " + std::to_string(job_->incarnation()) + ", not " +
           std::to_string(incarnation);
  }
  if (conn->peer().public_key != job_spawner_key_) {
    return "job " + job + " was assigned by a spawner with another key";
  }
  if (epoch <= spawner_epoch_) {
    return "spawner incarnation " + std::to_string(epoch) + " is not newer than " +
           std::to_string(spawner_epoch_) + ", which task " + std::to_string(task) + " of job " +
           job + " takes commands from";
  }
  log_->info("job {}: task {} adopted by spawner incarnation {} (was {}{})", job, task, epoch,
             spawner_epoch_, job_spawner() ? ", still connected: no longer listened to" : "");
  if (const auto previous = job_spawner(); previous && previous != conn) {
    // The previous spawner is still there (it was cut off, not dead): it must stop acting for
    // the job, and not end it.
    previous->SendEnvelope([&](proto::Envelope::Builder e) {
      auto r = e.initTaskReady();
      r.setJob(job);
      r.setTask(task);
      r.setError("spawner incarnation " + std::to_string(epoch) + " took the job over");
      r.setSuperseded(true);
    });
  }
  *spawner_out_ = conn;
  spawner_epoch_ = epoch;
  if (orphan_timer_) orphan_timer_->cancel();
  orphan_timer_.reset();
  spawner_silent_ = false;
  spawner_heard_ = std::chrono::steady_clock::now();
  WaitingForSpawner().Set(0);
  return {};
}

}  // namespace aiac::daemon
