#include "daemon/neighbour_links.h"

#include <thread>

#include "checkpoint/proof_wire.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"
#include "net/server.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::AsBytes;
using net::awaitable;

NeighbourLinks::NeighbourLinks(asio::io_context& io, const TaskHostOptions& options,
                               LinkMonitors& monitors, net::TaskGroup& tasks,
                               std::function<Session()> current, Logger log)
    : io_(io),
      tasks_(tasks),
      options_(options),
      monitors_(monitors),
      current_(std::move(current)),
      log_(std::move(log)) {}

void NeighbourLinks::Start(const Session& job,
                           std::function<std::vector<net::ConnectionPtr>()> more_to_probe) {
  for (auto& [t, link] : job->links()) tasks_.Spawn(RunLink(job, link), log_, "neighbour link");
  for (auto& backup : job->backups()) {
    tasks_.Spawn(RunBackup(job, backup), log_, "backup link");
  }
  tasks_.Spawn(RunProgress(job), log_, "progress reports");
  if (job->group().coordinator_of_member()) {
    tasks_.Spawn(RunCoordinatorLink(job), log_, "group coordinator link");
  }
  tasks_.Spawn(RunProbes(job, std::move(more_to_probe)), log_, "link probes");
}

void NeighbourLinks::End() {
  if (coordinator_conn_) coordinator_conn_->Close();
  coordinator_conn_.reset();
  for (auto& clock : clocks_) {
    if (auto timer = clock.lock()) timer->cancel();
  }
  clocks_.clear();
}

std::shared_ptr<asio::steady_timer> NeighbourLinks::Clock() {
  std::erase_if(clocks_, [](const auto& c) { return c.expired(); });
  auto timer = std::make_shared<asio::steady_timer>(io_);
  clocks_.push_back(timer);
  return timer;
}

void NeighbourLinks::CoordinatorMoved() {
  // RunCoordinatorLink dials its new daemon once this connection closes.
  if (coordinator_conn_) coordinator_conn_->Close();
}

awaitable<Result<net::ConnectionPtr>> NeighbourLinks::DialOnce(Endpoint address, std::string daemon,
                                                               std::string job, std::string what) {
  net::RetryPolicy once;
  once.attempts = 1;
  auto conn = co_await net::Dial(address, options_.net, proto::Role::DAEMON, options_.id,
                                 proto::Role::DAEMON, once);
  if (conn.ok() && !daemon.empty() && (*conn)->peer().id != daemon) {
    // Not the daemon the spawner named (the address was reused, or a replaced daemon came back
    // there): never send it the job's data, nor take its checkpoints.
    log_->warn("job {}: {} is not daemon {}, {}", job, (*conn)->Describe(), daemon, what);
    (*conn)->Close();
    co_return Unavailable("wrong daemon at the address");
  }
  co_return conn;
}

awaitable<net::ConnectionPtr> NeighbourLinks::DialDaemon(Session job,
                                                         std::function<Target()> target,
                                                         std::string what,
                                                         std::chrono::milliseconds& backoff) {
  while (Current(job)) {
    // Read each time: a NeighbourMoved may have moved the peer meanwhile.
    const Target t = target();
    const Endpoint& address = t.first;
    const std::string& daemon = t.second;
    auto conn = co_await DialOnce(address, daemon, job->job(), what);
    if (!Current(job)) {
      // The task ended while we dialed: nobody will use or close this connection, and an open
      // one lives on (its writer waits for frames), holding the daemon's io up for good.
      if (conn.ok()) (*conn)->Close();
      break;
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
      log_->error("job {}: {} refused us: {}", job->job(), address.ToString(),
                  conn.status().message());
      break;
    }
    const auto wait = Clock();
    wait->expires_after(backoff);
    co_await wait->async_wait(net::use_nothrow);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  co_return nullptr;
}

awaitable<void> NeighbourLinks::RunLink(Session job, std::shared_ptr<TaskSession::OutLink> link) {
  auto backoff = std::chrono::milliseconds(20);
  while (Current(job)) {
    if (!link->conn || !link->conn->is_open()) {
      // Named, not temporaries: g++ 12 destroys some temporaries of a co_await expression twice
      // (here the lambda's copy of `link`, which freed the link under the running coroutine).
      std::function<Target()> target = [link] { return Target{link->address, link->daemon}; };
      std::string what = "which runs task " + std::to_string(link->task);
      link->conn = co_await DialDaemon(job, target, what, backoff);
      if (!link->conn) break;
      tasks_.Spawn(WatchLink(link, link->conn), log_, "link watch");
      // What the last connection carried may never have been absorbed: the neighbour refused it
      // while its task was still being set up, or died. Asynchronous tasks only iterate on new
      // values, so a lost one can leave every task waiting: send the newest again.
      if (link->pending.empty() && link->last) link->pending.push_back(*link->last);
      // A synchronous neighbour waits for each iteration: send it everything it may still
      // need (its mailbox drops what it took already), a replacement restored from an older
      // checkpoint included (value_log.h).
      link->log.Replay(link->pending);
    }
    if (link->pending.empty()) {
      link->wake->expires_at(std::chrono::steady_clock::time_point::max());
      co_await link->wake->async_wait(net::use_nothrow);
      continue;
    }
    // Not a structured binding: clang 14 cannot capture those in the lambda below.
    TaskSession::OutLink::Value value = std::move(link->pending.front());
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
    monitors_.Sent(*link->conn, value.bytes.size() + 64);
    link->log.Sent(std::move(value));
    // Hand the connection one value at a time: newer values replace `pending` meanwhile.
    co_await link->conn->Drained();
  }
  if (link->conn) link->conn->Close();
}

awaitable<void> NeighbourLinks::WatchLink(std::shared_ptr<TaskSession::OutLink> link,
                                          net::ConnectionPtr conn) {
  // A neighbour writes on our link to acknowledge what it read, or to refuse it (the task is
  // not, or no longer, run there): notice a refusal, or its death, at once, so that RunLink
  // dials again and resends.
  co_await monitors_.WatchAcks(conn);
  if (link->conn == conn) link->wake->cancel();
}

awaitable<void> NeighbourLinks::RunBackup(Session job,
                                          std::shared_ptr<TaskSession::BackupLink> backup) {
  auto backoff = std::chrono::milliseconds(20);
  while (Current(job)) {
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
    backup->sending = true;
    const bool sent = co_await PutCheckpoint(job, *backup, c);
    backup->sending = false;
    if (!sent) {
      backup->conn.reset();
      if (!backup->pending) backup->pending = c;  // send it again once reconnected
    } else if (!backup->pending && Current(job)) {
      job->BackupIdle();
    }
  }
  if (backup->conn) backup->conn->Close();
}

awaitable<bool> NeighbourLinks::PutCheckpoint(const Session& job, TaskSession::BackupLink& backup,
                                              const checkpoint::Checkpoint& c) {
  backup.conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto p = e.initCheckpointPut();
    p.setJob(c.job);
    p.setTask(c.task);
    p.setIncarnation(c.incarnation);
    p.setIteration(c.iteration);
    p.setChecksum(c.checksum);
    p.setState(AsBytes(c.state));
    if (auto proof = checkpoint::DecodeProof(c.proof); proof.ok()) {
      checkpoint::FillProof(*proof, p.initProof());
    }
  });
  // One checkpoint in flight per backup: the next waits for this one's acknowledgement, and
  // newer ones replace `pending` meanwhile.
  auto msg = co_await backup.conn->Receive();
  if (!Current(job)) co_return true;
  if (!msg.ok() || !(*msg)->root().isCheckpointAck()) {
    if (msg.ok()) backup.conn->Refuse("unexpected message");
    co_return false;
  }
  auto ack = (*msg)->root().getCheckpointAck();
  if (ack.getStored()) {
    job->Acknowledged(c.state.size());
    backup.stored = std::max(backup.stored, c.iteration);
  } else if (ack.getError().size() > 0) {
    log_->warn("job {}: backup {} did not store {}: {}", job->job(), backup.daemon,
               checkpoint::Describe(c), Printable(ack.getError().cStr(), 200));
  }
  co_return true;
}

awaitable<void> NeighbourLinks::RunProgress(Session job) {
  // The spawner takes a silent daemon for dead (failure_timeout_ms): report from the network
  // thread on a clock of its own, however long one iteration of the task takes.
  const auto timer = Clock();
  while (Current(job)) {
    timer->expires_after(options_.progress);
    co_await timer->async_wait(net::use_nothrow);
    if (!Current(job)) break;
    SampleRunQueue();
    job->ReportProgress(
        run_queue_.mean(), run_queue_.stddev(), monitors_.Reports(),
        [this](const EnvelopeFill& fill) {
          // Only while the coordinator acknowledged the last one: a stalled coordinator must not
          // silence its members, whom the spawner would then take for dead.
          if (!coordinator_conn_ || !coordinator_conn_->is_open() || coordinator_unacked_)
            return false;
          coordinator_conn_->SendEnvelope(fill);
          coordinator_unacked_ = true;
          return true;
        });
  }
}

awaitable<void> NeighbourLinks::RunCoordinatorLink(Session job) {
  auto backoff = std::chrono::milliseconds(20);
  while (Current(job)) {
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
    // heard yet that this task moved here) or moves (CoordinatorMoved closes the connection).
    for (;;) {
      auto msg = co_await conn->Receive();
      if (!msg.ok() || !(*msg)->root().isLinkAck()) break;
      if (coordinator_conn_ == conn) coordinator_unacked_ = false;
    }
    conn->Close();
    if (coordinator_conn_ == conn) coordinator_conn_.reset();
    // Reports go to the spawner meanwhile; dial again a progress period later.
    const auto wait = Clock();
    wait->expires_after(options_.progress);
    co_await wait->async_wait(net::use_nothrow);
  }
}

awaitable<void> NeighbourLinks::RunProbes(Session job,
                                          std::function<std::vector<net::ConnectionPtr>()> more) {
  const auto timer = Clock();
  while (Current(job)) {
    timer->expires_after(options_.probe);
    co_await timer->async_wait(net::use_nothrow);
    if (!Current(job)) break;
    std::vector<net::ConnectionPtr> conns = more ? more() : std::vector<net::ConnectionPtr>{};
    for (auto& [t, link] : job->links()) conns.push_back(link->conn);
    for (auto& conn : conns) {
      if (!conn || !conn->is_open()) continue;
      conn->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkProbe(); });
      monitors_.Sent(*conn, 0);
    }
  }
}

void NeighbourLinks::SampleRunQueue() {
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

}  // namespace aiac::daemon
