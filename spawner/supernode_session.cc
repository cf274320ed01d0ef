#include "spawner/supernode_session.h"

#include <algorithm>

#include "core/printable.h"
#include "net/describe_exception.h"
#include "net/identity.h"

namespace aiac::spawner {

namespace asio = net::asio;
using net::awaitable;
using Clock = std::chrono::steady_clock;

SupernodeSession::SupernodeSession(std::vector<Endpoint> supernodes, net::NetOptions net,
                                   std::string spawner_id, Logger log)
    : supernodes_(std::move(supernodes)),
      net_(std::move(net)),
      spawner_id_(std::move(spawner_id)),
      log_(std::move(log)) {}

SupernodeSession::~SupernodeSession() { Stop(); }

void SupernodeSession::Start(asio::any_io_executor executor) {
  asio::co_spawn(executor, KeepLinked(), [log = log_](std::exception_ptr e) {
    if (e) log->error("super-node link: {}", net::DescribeException(e));
  });
}

void SupernodeSession::Stop() {
  if (stopping_) return;
  stopping_ = true;
  EndLink();
}

awaitable<void> SupernodeSession::Finish(std::chrono::milliseconds limit) {
  if (stopping_) co_return;
  stopping_ = true;  // the link's end is no failure: KeepLinked does not fail over
  if (net::ConnectionPtr conn = conn_; conn && conn->is_open()) {
    conn->CloseWhenFlushed();
    co_await conn->Closed(limit);
  }
  EndLink();
}

void SupernodeSession::EndLink() {
  if (conn_) conn_->Close();
  for (auto& [id, slot] : pending_) slot->Abandon();
  Signal();
}

std::string SupernodeSession::Describe() const {
  return conn_ && conn_->is_open() ? conn_->Describe() : "none";
}

void SupernodeSession::Signal() {
  for (auto* timer : waiters_) timer->cancel();
}

awaitable<void> SupernodeSession::WaitForChange(Clock::time_point deadline) {
  asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
  waiters_.insert(&timer);
  co_await timer.async_wait(net::use_nothrow);
  waiters_.erase(&timer);
}

awaitable<void> SupernodeSession::KeepLinked() {
  size_t next = 0;
  net::RetryPolicy retry;
  retry.attempts = 3;  // a few quick tries per super-node, then the next one
  // A super-node that is stopped (its host accepts the connection, it never answers) is left
  // after one handshake timeout, not three: the spawner's requests wait for the next one.
  retry.give_up_after = net_.handshake_timeout;
  std::chrono::milliseconds pause(100);
  while (!stopping_) {
    const Endpoint target = supernodes_[next % supernodes_.size()];
    ++next;
    auto conn = co_await net::Dial(target, net_, proto::Role::SPAWNER, spawner_id_,
                                   proto::Role::SUPERNODE, retry);
    if (stopping_) {
      if (conn.ok()) (*conn)->Close();
      break;
    }
    if (!conn.ok()) {
      last_error_ = "super-node " + target.ToString() + ": " + conn.status().message();
      if (linked_once_) log_->warn("{}; trying the next one", last_error_);
      // A wrong key does not fix itself: once every super-node refused it, waiters hear at once.
      if (conn.status().code() == StatusCode::kUnauthenticated &&
          ++refusals_in_a_row_ >= supernodes_.size()) {
        Signal();
      }
      if (next % supernodes_.size() == 0) {
        // A whole pass without an answer: tell the waiters, then back off before the next.
        ++passes_failed_;
        Signal();
        co_await WaitForChange(Clock::now() + pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(2000));
      }
      continue;
    }
    passes_failed_ = 0;
    refusals_in_a_row_ = 0;
    pause = std::chrono::milliseconds(100);
    if (linked_once_) {
      ++failovers_;
      log_->warn("failed over to {}", (*conn)->Describe());
    }
    linked_once_ = true;
    conn_ = *conn;
    Signal();
    Status why = co_await Serve(conn_);
    conn_->Close();
    conn_.reset();
    // Requests in flight go out again on the next link (Request() loops).
    for (auto& [id, slot] : pending_) slot->Abandon();
    Signal();
    if (stopping_) break;
    log_->warn("lost super-node {}: {}; failing over", target.ToString(), why.message());
  }
}

awaitable<Status> SupernodeSession::Serve(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) co_return msg.status();
    last_heard_ = Clock::now();
    auto env = (*msg)->root();
    if (env.isRevocations()) {
      OnRevocations(net::ReadRevocationList(env.getRevocations()));
      continue;
    }
    if (env.isCancelJob()) {
      const std::string requester = Printable(env.getCancelJob().getRequester().cStr(), 200, false);
      log_->warn("cancel asked by {} (through {})", requester, conn->Describe());
      if (on_cancel_) on_cancel_(requester);
      continue;
    }
    if (!env.isGrantDaemons()) {
      conn->Refuse("unexpected message");
      co_return ProtocolError("unexpected message from the super-node");
    }
    auto g = env.getGrantDaemons();
    auto it = pending_.find(g.getRequestId());
    if (it == pending_.end()) continue;  // a request given up on already
    GrantAnswer answer;
    answer.error = Printable(g.getError().cStr(), 300, false);
    for (auto d : g.getDaemons()) {
      answer.daemons.push_back(
          {d.getId().cStr(), d.getAddress().cStr(), d.getCluster().cStr(), d.getPower()});
    }
    it->second->Fill(std::move(answer));
  }
}

void SupernodeSession::OnRevocations(const net::RevocationList& list) {
  if (!net_.identity) return;
  auto adopted = net::AdoptRevocations(*net_.identity, list, net_.revocation_file);
  if (!adopted.ok() && adopted.status().code() == StatusCode::kUnauthenticated) {
    log_->warn("revocation list refused: {}", adopted.status().message());
    return;
  }
  if (!adopted.ok()) log_->warn("revocation list not kept: {}", adopted.status().message());
  if (adopted.ok() && !*adopted) return;
  log_->info("revocation list {} adopted: {} keys revoked", list.serial, list.keys.size());
  if (on_revoked_) on_revoked_();
}

awaitable<Status> SupernodeSession::WaitConnected(int rounds) {
  while (!stopping_) {
    if (conn_ && conn_->is_open()) co_return Status::Ok();
    if (refusals_in_a_row_ >= supernodes_.size()) co_return Unauthenticated(last_error_);
    if (passes_failed_ >= rounds) co_return Unavailable(last_error_);
    co_await WaitForChange(Clock::time_point::max());
  }
  co_return Unavailable("stopped");
}

awaitable<Result<GrantAnswer>> SupernodeSession::Request(std::string job, uint32_t count,
                                                         uint32_t spares,
                                                         Clock::time_point deadline) {
  const Clock::time_point wanted = deadline;
  deadline = std::max(deadline, Clock::now() + kMinAnswerTime);
  while (!stopping_ && Clock::now() < deadline) {
    if (!conn_ || !conn_->is_open()) {
      co_await WaitForChange(deadline);
      continue;
    }
    // Held until the caller's deadline, kMaxHold at most, and ended a second before the answer
    // is due: a request sent again after a fail-over, late in the wait, is held less.
    const auto now = Clock::now();
    const auto hold = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::min(wanted, deadline - std::chrono::seconds(1)) - now),
                                 std::chrono::milliseconds(0), kMaxHold);
    const uint64_t id = next_request_++;
    auto slot = std::make_shared<net::ReplySlot<GrantAnswer>>(co_await asio::this_coro::executor);
    pending_[id] = slot;
    conn_->SendEnvelope([&](proto::Envelope::Builder e) {
      auto r = e.initRequestDaemons();
      r.setRequestId(id);
      r.setJob(job);
      r.setCount(count);
      r.setSpares(spares);
      r.setHoldMs(static_cast<uint32_t>(hold.count()));
    });
    // The super-node answers once the hold is over, at the latest: an answer not come by then
    // and kAnswerGrace more, with nothing else heard on the link meanwhile, is a super-node that
    // stopped answering without closing anything (its host hung, or the network cut it off).
    const Clock::time_point sent = Clock::now();
    const Clock::time_point due = sent + hold + kAnswerGrace;
    const net::ConnectionPtr asked = conn_;
    auto reply = co_await slot->Wait(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::min(due, deadline) - sent));
    if (!reply && Clock::now() >= due && asked == conn_ && asked->is_open()) {
      if (last_heard_ < sent) {
        log_->warn("{} answered nothing for {:.1f} s (a request held {} ms): leaving it",
                   asked->Describe(), std::chrono::duration<double>(Clock::now() - sent).count(),
                   hold.count());
        asked->Close();  // KeepLinked fails over; the loop asks again on the next link
      } else {
        // It speaks, only late: the answer may still come (asking again could be granted twice).
        reply = co_await slot->Wait(
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      }
    }
    pending_.erase(id);
    if (reply) co_return std::move(*reply);
  }
  co_return Unavailable(last_error_.empty() ? std::string("no super-node answered in time")
                                            : last_error_);
}

void SupernodeSession::Release(const std::string& job, const std::vector<std::string>& ids) {
  if (!conn_ || !conn_->is_open() || ids.empty()) return;
  conn_->SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initReleaseDaemons();
    r.setJob(job);
    auto list = r.initDaemonIds(static_cast<unsigned>(ids.size()));
    for (size_t i = 0; i < ids.size(); ++i) list.set(static_cast<unsigned>(i), ids[i]);
  });
}

void SupernodeSession::Report(const net::JobStatus& job) {
  if (!conn_ || !conn_->is_open()) return;
  if (conn_->peer().version < net::kJobStatusVersion) {
    // An older super-node would close the connection on a JobStatus: the job runs unlisted.
    if (unlisted_at_ != conn_.get()) {
      unlisted_at_ = conn_.get();
      log_->info(
          "super-node {} speaks protocol {}: job {} is not listed by `status` there (it needs {})",
          conn_->peer().id, conn_->peer().version, job.id, net::kJobStatusVersion);
    }
    return;
  }
  conn_->SendEnvelope([&](proto::Envelope::Builder e) { net::ToProto(job, e.initJobStatus()); });
}

void SupernodeSession::EndJob(const std::string& job) {
  if (!conn_ || !conn_->is_open() || conn_->peer().version < net::kJobStatusVersion) return;
  conn_->SendEnvelope([&](proto::Envelope::Builder e) { e.initJobEnded().setJob(job); });
}

}  // namespace aiac::spawner
