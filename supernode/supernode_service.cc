#include "supernode/supernode_service.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <algorithm>

#include "core/names.h"
#include "core/printable.h"

namespace aiac::supernode {

using net::asio::awaitable;
namespace asio = net::asio;

namespace {

// The longest a spawner's request is held waiting for daemons (RequestDaemons.holdMs).
constexpr uint32_t kMaxHoldMs = 10000;

std::vector<std::string> Ids(const std::vector<DaemonRecord>& records) {
  std::vector<std::string> ids;
  for (const auto& r : records) ids.push_back(r.id);
  return ids;
}

// What the registry exchange sent, by form: `full` (a whole registry: a link's first message, or
// every one to a peer older than protocol 7) or `delta`.
metrics::Counter& ExchangeBytes(const char* form) {
  return metrics::Registry::Process().GetCounter(
      "aiac_registry_exchange_bytes_sent_total",
      "Bytes of registry exchange messages sent to peer super-nodes", {{"form", form}});
}
metrics::Counter& ExchangeMessages(const char* form) {
  return metrics::Registry::Process().GetCounter(
      "aiac_registry_exchange_messages_sent_total",
      "Registry exchange messages sent to peer super-nodes", {{"form", form}});
}

// Registrations acknowledged, and the synced writes that stored them (group commit: several
// registrations that arrive together share one).
metrics::Counter& Registrations() {
  return metrics::Registry::Process().GetCounter("aiac_daemon_registrations_total",
                                                 "Daemon registrations stored and acknowledged");
}
metrics::Counter& RegistrationWrites() {
  return metrics::Registry::Process().GetCounter(
      "aiac_registration_writes_total",
      "Synced registry writes that stored daemon registrations (several share one)");
}

}  // namespace

SupernodeService::SupernodeService(asio::io_context& io, SupernodeOptions options,
                                   Registry& registry, Logger log, UsedTokens* used_tokens)
    : io_(io),
      options_(std::move(options)),
      registry_(registry),
      registrations_(io.get_executor(),
                     [this] {
                       if (registry_.staged() == 0) return;
                       registry_.CommitStaged();
                       RegistrationWrites().Add();
                     }),
      log_(std::move(log)),
      server_(io, options_.net, options_.limits, proto::Role::SUPERNODE, log_,
              [this](net::ConnectionPtr conn) { return Serve(std::move(conn)); }),
      tasks_(io.get_executor()) {
  server_.set_id(options_.id);
  registry_.set_group_commit(true);
  const auto& identity = options_.net.identity;
  if (identity && identity->certificate.enroller && used_tokens) {
    enroller_.emplace(identity, *used_tokens);
  }
}

SupernodeService::~SupernodeService() { Close(); }

Result<Endpoint> SupernodeService::Start(const Endpoint& listen) {
  AIAC_ASSIGN_OR_RETURN(auto listening, server_.Listen(listen));
  const Endpoint bound = listening;

  server_.Start();
  tasks_.Spawn(Housekeeping(), log_, "housekeeping");
  for (const auto& peer : options_.peers) {
    AIAC_ASSIGN_OR_RETURN(auto ep_peer, ParseEndpoint(peer));
    if (ep_peer == bound) continue;  // a shared peer list may name ourselves
    tasks_.Spawn(DialPeer(ep_peer), log_, "link with " + peer);
  }
  return bound;
}

void SupernodeService::Close() {
  if (stopping_) return;
  stopping_ = true;
  if (housekeeping_timer_) housekeeping_timer_->cancel();
  WakeHeld();
  for (auto& [id, slot] : pending_) slot->Abandon();
  for (auto& [id, slot] : cancels_) slot->Abandon();
  server_.Close();
}

awaitable<void> SupernodeService::Stop() {
  Close();
  co_await server_.Stop();
  co_await tasks_.Wait();
}

awaitable<void> SupernodeService::Serve(net::ConnectionPtr conn) {
  if (conn->peer().enrolling) {
    co_await ServeEnrollment(conn);
    co_return;
  }
  switch (conn->peer().role) {
    case proto::Role::DAEMON:
      co_await ServeDaemon(conn);
      break;
    case proto::Role::SPAWNER:
      co_await ServeSpawner(conn);
      break;
    case proto::Role::SUPERNODE:
      co_await ServePeer(conn);
      break;
  }
}

awaitable<void> SupernodeService::ServeDaemon(net::ConnectionPtr conn) {
  // When this daemon was last answered: a heartbeat is answered only once the daemon's
  // ackWithinMs has passed since (issue 37: each answer is a TLS record to write).
  Registry::Clock::time_point answered{};
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) {
      if (net::PeerMisbehaved(msg.status())) {
        log_->warn("closed {}: {}", conn->Describe(), msg.status().message());
      }
      co_return;
    }
    auto env = (*msg)->root();
    const auto now = Registry::Clock::now();
    if (env.isRegister()) {
      DaemonRecord rec = FromProto(env.getRegister().getDaemon());
      if (rec.id != conn->peer().id) {
        conn->Refuse("register: daemon id differs from the handshake id");
        log_->warn("closed {}: registered as {}", conn->Describe(), Printable(rec.id));
        co_return;
      }
      if (Status bad = CheckDaemonRecord(rec); !bad.ok()) {
        conn->Refuse("register: " + bad.message());
        log_->warn("closed {}: register: {}", conn->Describe(), bad.message());
        co_return;
      }
      const bool known = registry_.Find(rec.id) != nullptr;
      Status s = registry_.Register(rec, now);
      if (!s.ok()) {
        log_->warn("closed {}: register: {}", conn->Describe(), s.message());
        conn->Refuse("register: " + s.message());
        co_return;
      }
      // Acknowledged once stored, with the registrations that came in together.
      co_await registrations_.Wait();
      Registrations().Add();
      log_->info("daemon {} {} at {} (cluster {}, power {:.2f}, {} cores)", rec.id,
                 known ? "re-registered" : "registered", rec.address, rec.cluster, rec.power,
                 rec.cores);
      daemon_keys_[rec.id] = conn->peer().public_key;
      WakeHeld();
      conn->SendEnvelope(
          [&](proto::Envelope::Builder e) { e.initRegisterAck().setSupernodeId(options_.id); });
      answered = Registry::Clock::now();
      SendRevocations(*conn);
    } else if (env.isHeartbeat()) {
      auto beat = env.getHeartbeat();
      const bool known = registry_.Heartbeat(conn->peer().id, beat.getBusy(), now);
      if (!known || now - answered >= std::chrono::milliseconds(beat.getAckWithinMs())) {
        conn->SendEnvelope(
            [&](proto::Envelope::Builder e) { e.initHeartbeatAck().setKnown(known); });
        answered = now;
      }
    } else if (env.isDeregister()) {
      const std::string id = env.getDeregister().getDaemonId().cStr();
      if (id != conn->peer().id) {
        conn->Refuse("deregister: daemon id differs from the handshake id");
        log_->warn("closed {}: deregistered {}", conn->Describe(), Printable(id));
        co_return;
      }
      if (registry_.Remove(id)) {
        daemon_keys_.erase(id);
        log_->info("daemon {} deregistered: it is stopping", id);
      }
      conn->CloseWhenFlushed();
      co_return;
    } else {
      log_->warn("closed {}: unexpected message from a daemon", conn->Describe());
      conn->Refuse("unexpected message");
      co_return;
    }
  }
}

awaitable<void> SupernodeService::ServeSpawner(net::ConnectionPtr conn) {
  SendRevocations(*conn);
  co_await ServeSpawnerMessages(conn);
  // The jobs this spawner registered end with its connection.
  ForgetJobsOf(*conn);
}

awaitable<void> SupernodeService::ServeSpawnerMessages(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) co_return;
    auto env = (*msg)->root();
    const bool of_v4 =
        env.isJobStatus() || env.isJobEnded() || env.isStatusQuery() || env.isCancelJob();
    if (of_v4 && !conn->Speaks(net::kJobStatusVersion, log_)) co_return;
    if (env.isJobStatus()) {
      if (!OnJobStatus(conn, env.getJobStatus())) co_return;
      continue;
    }
    if (env.isJobEnded()) {
      OnJobEnded(*conn, env.getJobEnded().getJob().cStr());
      continue;
    }
    if (env.isStatusQuery()) {
      AnswerStatus(*conn, env.getStatusQuery().getRequestId());
      continue;
    }
    if (env.isCancelJob()) {
      auto c = env.getCancelJob();
      const std::string requester = conn->peer().id + " (" + conn->remote_address() + ")";
      tasks_.Spawn(Cancel(conn, c.getRequestId(), c.getJob().cStr(), requester, true), log_,
                   "cancel");
      continue;
    }
    if (env.isRequestDaemons()) {
      auto req = env.getRequestDaemons();
      const uint64_t request_id = req.getRequestId();
      const std::string job = req.getJob().cStr();
      if (Status bad = CheckName("job id", job); !bad.ok()) {
        conn->Refuse("request: " + bad.message());
        log_->warn("closed {}: request: {}", conn->Describe(), bad.message());
        co_return;
      }
      const size_t count = size_t{req.getCount()} + req.getSpares();
      if (req.getHoldMs() > 0) {
        // Held on a coroutine of its own: the connection goes on serving meanwhile.
        const auto hold =
            std::chrono::milliseconds(std::min<uint32_t>(req.getHoldMs(), kMaxHoldMs));
        tasks_.Spawn(GrantWhenMet(conn, request_id, job, count, hold), log_, "held request");
        continue;
      }
      GrantOutcome outcome = co_await GrantFor(job, count, true);
      if (outcome.error.empty()) {
        log_->info("granted {} daemons to job {} ({})", outcome.daemons.size(), job,
                   conn->Describe());
      } else {
        // The spawner retries while it waits: one line per retry would be noise.
        log_->debug("request of job {} for {} daemons not met: {}", job, count, outcome.error);
      }
      SendGrant(*conn, request_id, outcome);
    } else if (env.isReleaseDaemons()) {
      auto rel = env.getReleaseDaemons();
      std::vector<std::string> ids;
      for (auto id : rel.getDaemonIds()) ids.emplace_back(id.cStr());
      ReleaseFor(rel.getJob().cStr(), ids, true);
    } else {
      log_->warn("closed {}: unexpected message from a spawner", conn->Describe());
      conn->Refuse("unexpected message");
      co_return;
    }
  }
}

awaitable<void> SupernodeService::GrantWhenMet(net::ConnectionPtr conn, uint64_t request_id,
                                               std::string job, size_t count,
                                               std::chrono::milliseconds hold) {
  const auto deadline = std::chrono::steady_clock::now() + hold;
  asio::steady_timer wake(io_);
  bool held_logged = false;
  for (;;) {
    if (stopping_ || !conn->is_open()) co_return;
    GrantOutcome outcome = co_await GrantFor(job, count, true);
    if (stopping_ || !conn->is_open()) {
      ReleaseFor(job, Ids(outcome.daemons), true);  // granted to nobody
      co_return;
    }
    if (outcome.error.empty()) {
      log_->info("granted {} daemons to job {} ({})", outcome.daemons.size(), job,
                 conn->Describe());
      SendGrant(*conn, request_id, outcome);
      co_return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      log_->debug("request of job {} for {} daemons not met after {} ms: {}", job, count,
                  hold.count(), outcome.error);
      SendGrant(*conn, request_id, outcome);
      co_return;
    }
    if (!held_logged) {
      log_->debug("holding the request of job {} for {} daemons up to {} ms: {}", job, count,
                  hold.count(), outcome.error);
      held_logged = true;
    }
    // Woken by WakeHeld; also every digest interval, for what a peer's digest cannot tell (a
    // peer's daemon released there, say).
    wake.expires_at(
        std::min(deadline, std::chrono::steady_clock::now() + options_.digest_interval));
    held_.insert(&wake);
    co_await wake.async_wait(net::use_nothrow);
    held_.erase(&wake);
  }
}

void SupernodeService::WakeHeld() {
  for (auto* timer : held_) timer->cancel();
}

awaitable<void> SupernodeService::ServePeer(net::ConnectionPtr conn) {
  PeerLink& link = peers_[conn.get()];
  link.conn = conn;
  link.id = conn->peer().id;
  log_->info("linked with super-node {}", conn->Describe());
  SendDigest(link);
  SendRevocations(*conn);
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) break;
    auto env = (*msg)->root();
    if (env.isRegistryDigest()) {
      peers_[conn.get()].view.Apply(ChangesFromDigest(env.getRegistryDigest()),
                                    Registry::Clock::now());
      WakeHeld();
    } else if (env.isRegistryDelta()) {
      if (!conn->Speaks(net::kRegistryDeltaVersion, log_)) co_return;
      peers_[conn.get()].view.Apply(ChangesFromProto(env.getRegistryDelta()),
                                    Registry::Clock::now());
      WakeHeld();
    } else if ((env.isCancelJob() || env.isCancelAnswer()) &&
               !conn->Speaks(net::kJobStatusVersion, log_)) {
      co_return;
    } else if (env.isCancelJob()) {
      auto c = env.getCancelJob();
      tasks_.Spawn(Cancel(conn, c.getRequestId(), c.getJob().cStr(),
                          Printable(c.getRequester().cStr(), 200, false) + " via super-node " +
                              conn->peer().id,
                          false),
                   log_, "forwarded cancel");
    } else if (env.isCancelAnswer()) {
      OnCancelAnswer(env.getCancelAnswer());
    } else if (env.isRevocations()) {
      OfferRevocations(net::ReadRevocationList(env.getRevocations()),
                       "super-node " + conn->peer().id, conn.get());
    } else if (env.isRequestDaemons()) {
      auto req = env.getRequestDaemons();
      const uint64_t request_id = req.getRequestId();
      const std::string job = req.getJob().cStr();
      if (Status bad = CheckName("job id", job); !bad.ok()) {
        log_->warn("closed {}: forwarded request: {}", conn->Describe(), bad.message());
        conn->Refuse("request: " + bad.message());
        break;
      }
      GrantOutcome outcome = co_await GrantFor(job, req.getCount(), false);
      if (outcome.error.empty()) {
        log_->info("granted {} daemons to job {} for super-node {}", outcome.daemons.size(), job,
                   conn->peer().id);
      }
      SendGrant(*conn, request_id, outcome);
    } else if (env.isGrantDaemons()) {
      auto g = env.getGrantDaemons();
      auto it = pending_.find(g.getRequestId());
      if (it != pending_.end()) {
        GrantOutcome outcome;
        outcome.error = g.getError().cStr();
        for (auto d : g.getDaemons()) outcome.daemons.push_back(FromProto(d));
        it->second->Fill(std::move(outcome));
      }
    } else if (env.isReleaseDaemons()) {
      auto rel = env.getReleaseDaemons();
      std::vector<std::string> ids;
      for (auto id : rel.getDaemonIds()) ids.emplace_back(id.cStr());
      ReleaseFor(rel.getJob().cStr(), ids, false);
    } else {
      log_->warn("closed {}: unexpected message from a super-node", conn->Describe());
      conn->Refuse("unexpected message");
      break;
    }
  }
  log_->info("link with super-node {} closed", conn->peer().id);
  peers_.erase(conn.get());
}

awaitable<void> SupernodeService::DialPeer(Endpoint peer) {
  net::RetryPolicy retry;
  retry.max_backoff = options_.digest_interval * 4;
  while (!stopping_) {
    auto conn = co_await net::Dial(peer, options_.net, proto::Role::SUPERNODE, options_.id,
                                   proto::Role::SUPERNODE, retry);
    if (stopping_) break;
    if (!conn.ok()) {
      log_->warn("cannot link with super-node {}: {}", peer.ToString(), conn.status().message());
      if (conn.status().code() == StatusCode::kUnauthenticated) break;
      continue;
    }
    server_.Track(*conn);
    try {
      co_await ServePeer(*conn);
    } catch (...) {
      log_->warn("closed {}: {}", (*conn)->Describe(),
                 net::DescribeException(std::current_exception()));
      peers_.erase(conn->get());
    }
    (*conn)->Close();
    server_.Untrack(*conn);
    asio::steady_timer pause(io_, options_.digest_interval);
    co_await pause.async_wait(net::use_nothrow);
  }
}

awaitable<void> SupernodeService::Housekeeping() {
  housekeeping_timer_ = std::make_unique<asio::steady_timer>(io_);
  while (!stopping_) {
    housekeeping_timer_->expires_after(options_.digest_interval);
    co_await housekeeping_timer_->async_wait(net::use_nothrow);
    if (stopping_) break;
    for (const auto& gone : registry_.Expire(Registry::Clock::now(), options_.failure_timeout)) {
      log_->info("daemon {} expired: no heartbeat for {} ms{}", gone.id,
                 options_.failure_timeout.count(),
                 gone.busy ? " (was busy for job " + gone.job + ")" : "");
    }
    for (const auto& rec :
         registry_.ReclaimIdleGrants(Registry::Clock::now(), options_.grant_lease)) {
      log_->info("daemon {} reclaimed: granted to job {} but idle for {} ms", rec.id, rec.job,
                 options_.grant_lease.count());
    }
    ForgetLostJobs();
    WatchStore();
    ReloadRevocationFile();
    for (auto& [key, link] : peers_) SendDigest(link);
  }
}

void SupernodeService::WatchStore() {
  if (registry_.store_error().ok()) return;
  if (!store_down_) {
    store_down_ = true;
    log_->error(
        "registry store unavailable: {}; serving from memory, persisting again once it "
        "takes writes",
        registry_.store_error().message());
  }
  if (Status s = registry_.Resync(); s.ok()) {
    store_down_ = false;
    log_->info("registry store available again: {} records written", registry_.size());
  }
}

void SupernodeService::SendGrant(net::Connection& conn, uint64_t request_id,
                                 const GrantOutcome& outcome) {
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto g = e.initGrantDaemons();
    g.setRequestId(request_id);
    g.setError(outcome.error);
    auto list = g.initDaemons(static_cast<unsigned>(outcome.daemons.size()));
    for (size_t i = 0; i < outcome.daemons.size(); ++i) ToProto(outcome.daemons[i], list[i]);
  });
}

void SupernodeService::SendDigest(PeerLink& link) {
  const auto records = registry_.View(Registry::Clock::now());
  auto jobs = jobs_.Jobs();
  // A large job's task rows would make every digest large: its peers get its figures, and its
  // rows are shown by the super-node it is registered with.
  for (auto& job : jobs) {
    if (job.task_list.size() > kDigestTaskRows) job.task_list.clear();
  }
  const uint32_t version = link.conn->peer().version;
  capnp::MallocMessageBuilder message;
  auto e = message.initRoot<proto::Envelope>();
  const char* form = "full";
  if (version >= net::kRegistryDeltaVersion) {
    // What changed since this link's last message; a daemon becomes late past half the failure
    // timeout (registry_delta.h).
    const RegistryChanges changes = link.sent.Next(records, jobs, options_.failure_timeout / 2);
    if (!changes.full) form = "delta";
    ChangesToProto(options_.id, changes, e.initRegistryDelta());
  } else {
    // A peer of an older protocol knows no jobs in digests: it reads the daemons alone.
    if (version < net::kJobStatusVersion) jobs.clear();
    auto d = e.initRegistryDigest();
    d.setSupernodeId(options_.id);
    auto list = d.initDaemons(static_cast<unsigned>(records.size()));
    for (size_t i = 0; i < records.size(); ++i) ToProto(records[i], list[i]);
    auto job_list = d.initJobs(static_cast<unsigned>(jobs.size()));
    for (size_t i = 0; i < jobs.size(); ++i) net::ToProto(jobs[i], job_list[i]);
  }
  ExchangeBytes(form).Add(capnp::computeSerializedSizeInWords(message) * sizeof(capnp::word));
  ExchangeMessages(form).Add();
  link.conn->Send(message);
}

awaitable<SupernodeService::GrantOutcome> SupernodeService::GrantFor(std::string job, size_t count,
                                                                     bool allow_forward) {
  GrantOutcome out;
  const size_t local_free = registry_.free_count();
  if (!allow_forward || local_free >= count) {
    auto granted = registry_.Grant(job, count, Registry::Clock::now());
    if (granted.ok())
      out.daemons = std::move(*granted);
    else
      out.error = granted.status().message();
    co_return out;
  }
  // One link per peer id (two super-nodes that both list each other have two links).
  struct Candidate {
    std::string id;
    net::ConnectionPtr conn;
    size_t free;
  };
  std::map<std::string, Candidate> by_id;
  for (auto& [key, link] : peers_) by_id[link.id] = {link.id, link.conn, link.view.free_count()};
  size_t known = local_free;
  for (auto& [id, c] : by_id) known += c.free;
  if (known < count) {
    out.error = "only " + std::to_string(known) +
                " free daemons known to this super-node and its peers, " + std::to_string(count) +
                " needed";
    co_return out;
  }
  auto local = registry_.Grant(job, local_free, Registry::Clock::now());
  if (!local.ok()) {
    out.error = local.status().message();
    co_return out;
  }
  out.daemons = std::move(*local);
  size_t remaining = count - local_free;
  for (auto& [id, c] : by_id) {
    if (remaining == 0) break;
    if (c.free == 0 || !c.conn->is_open()) continue;
    const uint64_t request_id = next_request_++;
    auto slot = std::make_shared<net::ReplySlot<GrantOutcome>>(io_.get_executor());
    pending_[request_id] = slot;
    const size_t ask = std::min(remaining, c.free);
    c.conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto r = e.initRequestDaemons();
      r.setRequestId(request_id);
      r.setJob(job);
      r.setCount(static_cast<uint32_t>(ask));
      r.setForwarded(true);
    });
    auto reply = co_await slot->Wait(options_.forward_timeout);
    pending_.erase(request_id);
    if (reply && reply->error.empty()) {
      remaining -= std::min(remaining, reply->daemons.size());
      for (auto& d : reply->daemons) out.daemons.push_back(std::move(d));
    }
  }
  if (remaining > 0) {
    ReleaseFor(job, Ids(out.daemons), true);
    out.daemons.clear();
    out.error = "peers could not supply the " + std::to_string(count - local_free) +
                " daemons missing here (their digests were stale)";
  }
  co_return out;
}

void SupernodeService::ReleaseFor(const std::string& job, const std::vector<std::string>& ids,
                                  bool forward) {
  const size_t freed = registry_.Release(job, ids);
  if (freed > 0) {
    log_->info("released {} daemons of job {}", freed, job);
    WakeHeld();
  }
  if (!forward || freed == ids.size()) return;
  std::set<std::string> sent;
  for (auto& [key, link] : peers_) {
    if (!sent.insert(link.id).second) continue;
    link.conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto r = e.initReleaseDaemons();
      r.setJob(job);
      r.setForwarded(true);
      auto list = r.initDaemonIds(static_cast<unsigned>(ids.size()));
      for (size_t i = 0; i < ids.size(); ++i) list.set(static_cast<unsigned>(i), ids[i]);
    });
  }
}

}  // namespace aiac::supernode
