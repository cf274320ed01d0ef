#include "net/server.h"

#include <sys/resource.h>

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

namespace {

size_t DescriptorBudget(size_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return wanted;
  // Keep descriptors for files (RocksDB, plugins, logs) and outgoing links.
  const size_t reserve = 64;
  const size_t budget = lim.rlim_cur > reserve * 2 ? lim.rlim_cur - reserve : lim.rlim_cur / 2;
  return std::min(wanted, budget);
}

}  // namespace

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
  auto conns = connections_;
  for (auto& c : conns) c->Close();
}

bool Server::Admit(const std::string& address, std::string& why) {
  const auto it = handshakes_by_address_.find(address);
  const size_t from_address = it == handshakes_by_address_.end() ? 0 : it->second;
  if (connections_.size() >= limits_.max_connections) {
    why = std::to_string(connections_.size()) + " connections open (max_connections)";
  } else if (handshakes_ >= limits_.max_handshakes) {
    why = std::to_string(handshakes_) + " handshakes in progress (max_handshakes)";
  } else if (from_address >= limits_.max_handshakes_per_address) {
    why = std::to_string(from_address) + " handshakes in progress from " + address +
          " (max_handshakes_per_address)";
  } else {
    return true;
  }
  return false;
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
    std::string why;
    if (!Admit(address, why)) {
      if (auto suffix = refusal_log_.Allow()) {
        log_->warn("closed a connection from {} at once: {}{}", address, why, *suffix);
      }
      socket.close(addr_ec);
      continue;
    }
    auto conn = Connection::Create(std::move(socket), options_, Side::kServer);
    connections_.insert(conn);
    ++handshakes_;
    ++handshakes_by_address_[address];
    tasks_.Spawn(Serve(conn, address), log_, "connection from " + address);
  }
}

awaitable<void> Server::Serve(ConnectionPtr conn, std::string address) {
  Status hs = co_await conn->Handshake(role_, id_);
  --handshakes_;
  if (--handshakes_by_address_[address] == 0) handshakes_by_address_.erase(address);
  if (!hs.ok()) {
    if (auto suffix = stopping_ ? std::nullopt : refusal_log_.Allow()) {
      log_->warn("refused connection from {}: {}{}", conn->remote_address(), hs.message(), *suffix);
    }
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
