#include "net/server.h"

#include <algorithm>

#include "net/descriptors.h"
#include "net/listener.h"

namespace aiac::net {

std::optional<std::string> RateLimitedLog::Allow() {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) {
    ++suppressed_;
    return std::nullopt;
  }
  next_ = now + period_;
  std::string suffix;
  if (suppressed_ > 0) suffix = " (" + std::to_string(suppressed_) + " more since the last line)";
  suppressed_ = 0;
  return suffix;
}

void SpawnLogged(asio::any_io_executor executor, awaitable<void> task, Logger log,
                 std::string what) {
  asio::co_spawn(executor, std::move(task),
                 [log = std::move(log), what = std::move(what)](std::exception_ptr e) {
                   if (e) log->error("{}: {}", what, DescribeException(e));
                 });
}

Server::Server(asio::io_context& io, NetOptions options, ServerLimits limits, proto::Role role,
               Logger log, Handler handler)
    : io_(io),
      options_(std::move(options)),
      limits_(limits),
      role_(role),
      log_(std::move(log)),
      handler_(std::move(handler)),
      acceptor_(io),
      tasks_(io.get_executor()) {
  limits_.max_connections = DescriptorBudget(limits_.max_connections);
}

Server::~Server() { Close(); }

Result<Endpoint> Server::Listen(const Endpoint& at) { return net::Listen(acceptor_, at); }

void Server::Start() { tasks_.Spawn(AcceptLoop(), log_, "accept loop"); }

awaitable<void> Server::Stop() {
  Close();
  co_await tasks_.Wait();
}

void Server::Close() {
  if (stopping_) return;
  stopping_ = true;
  error_code ec;
  acceptor_.close(ec);
  for (auto& [key, silent] : silent_) silent.socket->close(ec);
  auto conns = connections_;
  for (auto& c : conns) c->Close();
}

std::vector<ConnectionPtr> Server::Authenticated() const {
  std::vector<ConnectionPtr> out;
  for (const auto& c : connections_) {
    if (c->authenticated() && c->is_open()) out.push_back(c);
  }
  return out;
}

size_t Server::CloseRevoked(const RevokedKeys& revoked) {
  size_t closed = 0;
  for (const auto& c : Authenticated()) {
    if (c->peer().public_key.empty() || !revoked.Contains(c->peer().public_key)) continue;
    log_->warn("closed {}: its key is revoked", c->Describe());
    c->Refuse("your key is revoked");
    ++closed;
  }
  return closed;
}

namespace {

// The oldest entry of `in` (from `address` only, when given) that began before `before`.
template <typename Map>
typename Map::const_iterator Oldest(const Map& in, const std::string* address,
                                    std::chrono::steady_clock::time_point before) {
  auto oldest = in.end();
  for (auto it = in.begin(); it != in.end(); ++it) {
    if (address && it->second.address != *address) continue;
    if (it->second.since <= before &&
        (oldest == in.end() || it->second.since < oldest->second.since))
      oldest = it;
  }
  return oldest;
}

template <typename Map>
size_t CountFrom(const Map& in, const std::string& address) {
  return static_cast<size_t>(std::count_if(
      in.begin(), in.end(), [&](const auto& e) { return e.second.address == address; }));
}

}  // namespace

void Server::MakeRoomForSilent(const std::string& address) {
  const size_t from_address = CountFrom(silent_, address);
  const bool address_full = from_address >= limits_.max_handshakes_per_address;
  if (!address_full && silent_.size() < limits_.max_handshakes) return;
  // An honest client speaks as soon as it is connected: the oldest silent one is the one that
  // least looks like it. Closing it (rather than refusing the newcomer) keeps a flood of silent
  // connections from shutting out anyone who shares its address.
  // Keys grow with arrival, so the first one found is the oldest: the search stops there (it
  // asked every silent socket how much it had received, an ioctl each, on every accept while
  // full: a third of a super-node's CPU while thousands of daemons registered from one address).
  // One that spoke is skipped: its coroutine will resume.
  const auto victim = std::find_if(silent_.begin(), silent_.end(), [&](const auto& entry) {
    error_code ec;
    return (!address_full || entry.second.address == address) &&
           entry.second.socket->available(ec) == 0;
  });
  if (victim == silent_.end()) return;
  if (auto suffix = refusal_log_.Allow()) {
    log_->warn("closed a silent connection from {} to admit one from {} ({} silent from {}){}",
               victim->second.address, address, from_address, address, *suffix);
  }
  error_code ignored;
  victim->second.socket->close(ignored);
  silent_.erase(victim);
}

bool Server::AdmitHandshake(const std::string& address, std::string& why) {
  const size_t from_address = CountFrom(pending_, address);
  const bool address_full = from_address >= limits_.max_handshakes_per_address;
  if (!address_full && pending_.size() < limits_.max_handshakes) return true;
  auto victim = Oldest(pending_, address_full ? &address : nullptr,
                       std::chrono::steady_clock::now() - limits_.stalled_handshake);
  if (victim == pending_.end()) {
    why = address_full ? std::to_string(from_address) + " handshakes in progress from " + address +
                             " (max_handshakes_per_address), none stalled"
                       : std::to_string(pending_.size()) +
                             " handshakes in progress (max_handshakes), none stalled";
    return false;
  }
  if (auto suffix = refusal_log_.Allow()) {
    log_->warn("closed a stalled handshake from {} to admit a connection from {}{}",
               victim->second.address, address, *suffix);
  }
  ConnectionPtr conn = victim->first;
  pending_.erase(victim);
  conn->Close();
  return true;
}

awaitable<void> Server::AcceptLoop() {
  auto backoff = std::chrono::milliseconds(100);
  while (!stopping_) {
    auto [ec, socket] = co_await acceptor_.async_accept(use_nothrow);
    if (stopping_) break;
    if (ec) {
      if (auto suffix = accept_log_.Allow()) {
        log_->warn("accept failed: {}; pausing accepts for {} ms{}", ec.message(), backoff.count(),
                   *suffix);
      }
      // Out of descriptors (or another transient error): the pending connection stays in the
      // backlog and accept would fail again at once, so wait before the next try.
      asio::steady_timer pause(io_, backoff);
      co_await pause.async_wait(use_nothrow);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
      continue;
    }
    backoff = std::chrono::milliseconds(100);
    error_code addr_ec;
    const auto remote = socket.remote_endpoint(addr_ec);
    const std::string address = addr_ec ? "?" : remote.address().to_string();
    if (connections_.size() + silent_.size() >= limits_.max_connections) {
      if (auto suffix = refusal_log_.Allow()) {
        log_->warn("closed a connection from {} at once: {} connections open (max_connections){}",
                   address, connections_.size() + silent_.size(), *suffix);
      }
      socket.close(addr_ec);
      continue;
    }
    tasks_.Spawn(Serve(std::move(socket), address), log_, "connection from " + address);
  }
}

awaitable<void> Server::Serve(tcp::socket socket, std::string address) {
  error_code ec;
  if (socket.available(ec) == 0 && !ec) {
    // Nothing received yet: wait for the client's first bytes (a TLS ClientHello) before it
    // may count against the handshake caps.
    MakeRoomForSilent(address);
    const uint64_t key = next_silent_++;
    silent_.emplace(key, Silent{address, &socket});
    asio::steady_timer limit(io_, options_.handshake_timeout);
    limit.async_wait([this, key](error_code e) {
      if (e) return;
      if (auto it = silent_.find(key); it != silent_.end()) {
        error_code ignored;
        it->second.socket->close(ignored);
      }
    });
    std::tie(ec) = co_await socket.async_wait(tcp::socket::wait_read, use_nothrow);
    limit.cancel();
    const bool evicted = silent_.erase(key) == 0;
    if (ec || evicted || stopping_ || !socket.is_open()) {
      if (!stopping_ && !evicted) {
        if (auto suffix = refusal_log_.Allow()) {
          log_->warn("closed a connection from {}: nothing received in {} ms{}", address,
                     options_.handshake_timeout.count(), *suffix);
        }
      }
      socket.close(ec);
      co_return;
    }
  }
  std::string why;
  if (!AdmitHandshake(address, why)) {
    if (auto suffix = refusal_log_.Allow()) {
      log_->warn("closed a connection from {} at once: {}{}", address, why, *suffix);
    }
    socket.close(ec);
    co_return;
  }
  auto conn = Connection::Create(std::move(socket), options_, Side::kServer);
  connections_.insert(conn);
  pending_.emplace(conn, Pending{address, std::chrono::steady_clock::now()});
  co_await Serve(std::move(conn));
}

awaitable<void> Server::Serve(ConnectionPtr conn) {
  Status hs = co_await conn->Handshake(role_, id_);
  pending_.erase(conn);  // (gone already when Admit closed it to make room)
  if (!hs.ok()) {
    if (auto suffix = stopping_ ? std::nullopt : refusal_log_.Allow()) {
      log_->warn("refused connection from {}: {}{}", conn->remote_address(), hs.message(), *suffix);
    }
    // The dialler is told why (a Refuse in place of our Hello): let it go out. It is one small
    // frame, written at once into the socket's buffer.
    if (conn->refusing()) co_await conn->Closed(std::chrono::milliseconds(1000));
  } else {
    std::exception_ptr failure;
    try {
      co_await handler_(conn);
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) log_->warn("closed {}: {}", conn->Describe(), DescribeException(failure));
    // A connection the handler refused still has its reason to send, and lingers until the peer
    // has read it (connection.h): closing it now would lose the reason.
    if (conn->refusing()) co_await conn->Closed(std::chrono::milliseconds(3000));
  }
  conn->Close();
  connections_.erase(conn);
}

}  // namespace aiac::net
