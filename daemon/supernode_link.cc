#include "daemon/supernode_link.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/printable.h"
#include "net/version.h"

namespace aiac::daemon {

namespace asio = net::asio;

Status CheckSilenceLimit(std::chrono::milliseconds limit, std::chrono::milliseconds heartbeat) {
  if (limit.count() == 0 || limit > heartbeat) return Status::Ok();
  return InvalidArgument("option 'supernode_timeout_ms' (" + std::to_string(limit.count()) +
                         ") must exceed heartbeat_ms (" + std::to_string(heartbeat.count()) +
                         "), or be 0");
}

std::chrono::milliseconds AckWithin(std::chrono::milliseconds limit,
                                    std::chrono::milliseconds heartbeat) {
  if (limit <= heartbeat) return std::chrono::milliseconds(0);
  return std::min<std::chrono::milliseconds>((limit - heartbeat) / 3,
                                             std::chrono::milliseconds(UINT32_MAX));
}

SupernodeLink::SupernodeLink(asio::any_io_executor executor, std::vector<Endpoint> supernodes,
                             SelfDescription self, net::NetOptions net,
                             std::chrono::milliseconds heartbeat, Logger log,
                             std::function<bool()> busy, std::function<void(Status)> on_fatal,
                             std::function<void(const net::RevocationList&)> on_revocations)
    : supernodes_(std::move(supernodes)),
      self_(std::move(self)),
      net_(std::move(net)),
      heartbeat_(heartbeat),
      log_(std::move(log)),
      busy_(std::move(busy)),
      on_fatal_(std::move(on_fatal)),
      on_revocations_(std::move(on_revocations)),
      heartbeat_timer_(executor),
      backoff_timer_(executor),
      tasks_(executor) {}

void SupernodeLink::Start() { tasks_.Spawn(Run(), log_, "super-node link"); }

net::awaitable<void> SupernodeLink::Stop() {
  stopping_ = true;
  if (current_ && current_->is_open()) {
    // Told, the super-node forgets this daemon now instead of daemon_timeout_ms later, and
    // grants it to no spawner meanwhile. Bounded: a super-node that does not answer is left.
    const net::ConnectionPtr conn = current_;
    conn->SendEnvelope(
        [&](proto::Envelope::Builder e) { e.initDeregister().setDaemonId(self_.id); });
    conn->CloseWhenFlushed();
    co_await conn->Closed(std::chrono::seconds(2));
  }
  if (current_) current_->Close();
  heartbeat_timer_.cancel();
  backoff_timer_.cancel();
  co_await tasks_.Wait();
}

void SupernodeLink::UpdatePower(double power) {
  self_.power = power;
  // A Register of a known daemon refreshes its record and keeps any grant it holds.
  if (current_ && current_->is_open()) SendRegister(*current_);
}

void SupernodeLink::SendRegister(net::Connection& conn) {
  const bool busy = busy_();
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto d = e.initRegister().initDaemon();
    d.setId(self_.id);
    d.setAddress(self_.address);
    d.setCluster(self_.cluster);
    d.setPower(self_.power);
    d.setCores(self_.cores);
    d.setState(busy ? proto::DaemonState::BUSY : proto::DaemonState::FREE);
    d.setVersion(std::string(net::Version()));
  });
}

net::awaitable<void> SupernodeLink::Pause(unsigned setbacks) {
  const auto wait = backoff_.Wait(setbacks, std::uniform_real_distribution<double>(0, 1)(random_));
  if (wait.count() <= 0) co_return;
  backoff_timer_.expires_after(wait);
  co_await backoff_timer_.async_wait(net::use_nothrow);
}

net::awaitable<void> SupernodeLink::Run() {
  size_t next = 0;
  size_t refusals_in_a_row = 0;
  // Lost super-nodes and failed dials since the last registration: the next wait's spread.
  unsigned setbacks = 0;
  Status last_refusal;
  net::RetryPolicy retry;
  retry.attempts = 3;
  // A stopped super-node (it accepts the connection, never answers) is left after one handshake
  // timeout, not three: the daemon is unregistered, and ungrantable, meanwhile.
  retry.give_up_after = net_.handshake_timeout;
  while (!stopping_) {
    co_await Pause(setbacks);
    if (stopping_) break;
    const Endpoint& target = supernodes_[next % supernodes_.size()];
    ++next;
    if (counters_) ++counters_->dials;
    auto conn = co_await net::Dial(target, net_, proto::Role::DAEMON, self_.id,
                                   proto::Role::SUPERNODE, retry);
    if (stopping_) break;
    if (!conn.ok()) {
      if (conn.status().code() == StatusCode::kUnauthenticated) {
        log_->error("super-node {} refused this daemon: {}", target.ToString(),
                    conn.status().message());
        last_refusal = conn.status();
        if (++refusals_in_a_row >= supernodes_.size()) {
          on_fatal_(Unauthenticated("every super-node refused this daemon; last: " +
                                    last_refusal.message()));
          co_return;
        }
      } else {
        log_->warn("super-node {} unreachable: {}; trying the next one", target.ToString(),
                   conn.status().message());
      }
      ++setbacks;
      continue;
    }
    refusals_in_a_row = 0;
    current_ = *conn;
    bool registered = false;
    Status why = co_await ServeOne(*conn, registered);
    current_.reset();
    if (stopping_) break;
    // A loss after a registration starts the spread afresh; a connection that ended before one
    // (refused, closed by a saturated super-node) is one more setback.
    setbacks = registered ? 1 : setbacks + 1;
    if (counters_) ++counters_->lost;
    log_->warn("lost super-node {}: {}; trying the next one", target.ToString(), why.message());
  }
}

net::awaitable<Status> SupernodeLink::ServeOne(net::ConnectionPtr conn, bool& registered) {
  SendRegister(*conn);
  last_heard_ = std::chrono::steady_clock::now();
  // Heartbeats go out on their own coroutine; this one reads the acks.
  tasks_.Spawn(Heartbeats(conn), log_, "heartbeats");
  Status why = co_await ReadAcks(conn, registered);
  // Cleared here: the next connection may be made at this one's address.
  if (std::exchange(silenced_, nullptr) == conn.get()) {
    why = Unavailable("no answer for " + std::to_string(silence_limit_.count()) +
                      " ms (heartbeats unanswered)");
  }
  if (counters_ && registered) --counters_->registered;
  // The heartbeats end with the connection: wake them now rather than at the next beat.
  heartbeat_timer_.cancel();
  co_return why;
}

net::awaitable<void> SupernodeLink::Heartbeats(net::ConnectionPtr conn) {
  // One connection at a time: ServeOne cancels the timer when its connection ends.
  while (conn->is_open() && !stopping_) {
    heartbeat_timer_.expires_after(heartbeat_);
    co_await heartbeat_timer_.async_wait(net::use_nothrow);
    if (!conn->is_open() || stopping_) break;
    // A heartbeat is answered at least every AckWithin: silence this long means the super-node
    // is gone, whatever its connection says (a hung host's stays open; the heartbeats would wait
    // in TCP's buffers).
    if (silence_limit_.count() > 0 &&
        std::chrono::steady_clock::now() - last_heard_ > silence_limit_) {
      silenced_ = conn.get();
      conn->Close();
      break;
    }
    const bool busy = busy_();
    conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto h = e.initHeartbeat();
      h.setDaemonId(self_.id);
      h.setBusy(busy);
      h.setAckWithinMs(static_cast<uint32_t>(AckWithin(silence_limit_, heartbeat_).count()));
    });
    if (counters_) ++counters_->heartbeats;
  }
}

net::awaitable<Status> SupernodeLink::ReadAcks(net::ConnectionPtr conn, bool& registered) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) co_return msg.status();
    last_heard_ = std::chrono::steady_clock::now();
    auto env = (*msg)->root();
    if (env.isRegisterAck()) {
      log_->info("registered with super-node {}", conn->Describe());
      if (counters_) {
        ++counters_->registrations;
        if (!registered) ++counters_->registered;
      }
      registered = true;
    } else if (env.isHeartbeatAck()) {
      if (counters_) ++counters_->acked;
      if (!env.getHeartbeatAck().getKnown()) {
        if (counters_) ++counters_->forgotten;
        log_->info("super-node {} forgot this daemon: registering again", conn->peer().id);
        SendRegister(*conn);
      }
    } else if (env.isRevocations()) {
      on_revocations_(net::ReadRevocationList(env.getRevocations()));
    } else if (env.isRefuse()) {
      conn->Close();
      co_return Unavailable("refused: " + Printable(env.getRefuse().getReason().cStr(), 200));
    } else {
      conn->Refuse("unexpected message");
      co_return ProtocolError("unexpected message from super-node");
    }
  }
}

}  // namespace aiac::daemon
