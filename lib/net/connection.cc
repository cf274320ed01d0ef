#include "net/connection.h"

#include <algorithm>
#include <vector>

#include <kj/exception.h>

#include "net/hmac.h"

namespace aiac::net {
namespace {

constexpr size_t kNonceBytes = 16;

// The bytes one side proves knowledge of the key over: the *peer's* nonce (so a recorded
// Auth cannot be replayed) and its own role and id (so it cannot be reflected back).
std::vector<uint8_t> AuthInput(std::span<const uint8_t> nonce, proto::Role role,
                               const std::string& id) {
  static constexpr std::string_view kLabel = "aiac-auth-v1";
  std::vector<uint8_t> input(kLabel.begin(), kLabel.end());
  input.insert(input.end(), nonce.begin(), nonce.end());
  input.push_back(static_cast<uint8_t>(role));
  input.insert(input.end(), id.begin(), id.end());
  return input;
}

std::span<const uint8_t> AsSpan(capnp::Data::Reader data) { return {data.begin(), data.size()}; }

const char* WhichName(proto::Envelope::Which which) {
  switch (which) {
    case proto::Envelope::HELLO: return "hello";
    case proto::Envelope::AUTH: return "auth";
    case proto::Envelope::REFUSE: return "refuse";
    default: return "a non-handshake message";
  }
}

}  // namespace

const char* RoleName(proto::Role role) {
  switch (role) {
    case proto::Role::SUPERNODE: return "super-node";
    case proto::Role::DAEMON: return "daemon";
    case proto::Role::SPAWNER: return "spawner";
  }
  return "unknown";
}

std::shared_ptr<Connection> Connection::Create(tcp::socket socket, const NetOptions& options) {
  auto conn = std::shared_ptr<Connection>(new Connection(std::move(socket), options));
  asio::co_spawn(conn->socket_.get_executor(), conn->WriterLoop(), asio::detached);
  return conn;
}

Connection::Connection(tcp::socket socket, const NetOptions& options)
    : socket_(std::move(socket)),
      options_(options),
      parser_(options.limits),
      wake_(socket_.get_executor(), std::chrono::steady_clock::time_point::max()),
      drained_(socket_.get_executor(), std::chrono::steady_clock::time_point::max()) {
  error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  auto ep = socket_.remote_endpoint(ec);
  remote_ = ec ? std::string("?") : Endpoint{ep.address().to_string(), ep.port()}.ToString();
}

Connection::~Connection() { Close(); }

std::string Connection::Describe() const {
  if (!authenticated_) return remote_;
  return std::string(RoleName(peer_.role)) + " " + peer_.id + " at " + remote_;
}

void Connection::Send(capnp::MessageBuilder& message) {
  if (!open_ || close_when_flushed_) return;
  kj::Array<capnp::word> frame = EncodeFrame(message);
  queued_bytes_ += frame.size() * sizeof(capnp::word);
  if (queued_bytes_ > options_.max_queued_bytes) {
    Close();  // the peer does not read: holding more would only grow memory
    return;
  }
  queue_.push_back(std::move(frame));
  wake_.cancel_one();
}

void Connection::Refuse(const std::string& reason) {
  if (!open_) return;
  SendEnvelope([&](proto::Envelope::Builder env) { env.initRefuse().setReason(reason); });
  close_when_flushed_ = true;
  wake_.cancel_one();
}

void Connection::Close() {
  if (!open_) return;
  open_ = false;
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  wake_.cancel();
  drained_.cancel();
}

awaitable<void> Connection::Drained() {
  auto self = shared_from_this();
  while (open_ && (writing_ || !queue_.empty())) {
    drained_.expires_at(std::chrono::steady_clock::time_point::max());
    co_await drained_.async_wait(use_nothrow);
  }
}

awaitable<void> Connection::WriterLoop() {
  auto self = shared_from_this();
  while (open_) {
    if (queue_.empty()) {
      drained_.cancel();
      if (close_when_flushed_) break;
      co_await wake_.async_wait(use_nothrow);
      continue;
    }
    kj::Array<capnp::word> frame = std::move(queue_.front());
    queue_.pop_front();
    const size_t bytes = frame.size() * sizeof(capnp::word);
    writing_ = true;
    auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(frame.begin(), bytes), use_nothrow);
    writing_ = false;
    queued_bytes_ -= bytes;
    if (ec) break;
  }
  if (open_ && close_when_flushed_) co_await Linger();
  Close();
}

awaitable<void> Connection::Linger() {
  // Closing a socket with unread input makes the kernel send RST, and an RST discards what the
  // peer has received but not read yet, such as our Refuse. Half-close instead and read until
  // the peer closes too (bounded), so the peer always reads why it was refused.
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  if (ec) co_return;
  auto self = shared_from_this();
  asio::steady_timer limit(socket_.get_executor(), std::chrono::milliseconds(1000));
  limit.async_wait([self](error_code e) {
    if (!e) self->Close();
  });
  std::array<std::byte, 4096> discard;
  for (;;) {
    auto [rec, n] = co_await socket_.async_read_some(asio::buffer(discard), use_nothrow);
    if (rec) break;
  }
  limit.cancel();
}

awaitable<Result<std::unique_ptr<IncomingMessage>>> Connection::Receive() {
  for (;;) {
    if (!open_) co_return Aborted("connection to " + Describe() + " is closed");
    auto next = parser_.Next();
    if (!next.ok()) {
      Status why = next.status();
      Refuse(why.message());
      co_return why;
    }
    if (*next) {
      Status well_formed = (*next)->CheckWellFormed();
      if (!well_formed.ok()) {
        Refuse(well_formed.message());
        co_return well_formed;
      }
      co_return std::move(*next);
    }
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(read_buffer_), use_nothrow);
    if (ec) {
      bool was_open = open_;
      Close();
      if (ec == asio::error::eof || ec == asio::error::connection_reset) {
        co_return Unavailable("connection closed by " + Describe());
      }
      if (!was_open || ec == asio::error::operation_aborted) {
        co_return Aborted("connection to " + Describe() + " was closed");
      }
      co_return Unavailable("read from " + Describe() + " failed: " + ec.message());
    }
    parser_.Feed(std::span<const std::byte>(read_buffer_.data(), n));
  }
}

awaitable<Status> Connection::Handshake(proto::Role role, const std::string& id) {
  auto self = shared_from_this();
  const std::vector<uint8_t> nonce = RandomBytes(kNonceBytes);
  bool done = false;
  bool timed_out = false;
  asio::steady_timer watchdog(socket_.get_executor(), options_.handshake_timeout);
  watchdog.async_wait([&, self](error_code ec) {
    if (!ec && !done) {
      timed_out = true;
      Close();
    }
  });
  auto finish = [&](Status status) {
    done = true;
    watchdog.cancel();
    if (timed_out) status = Timeout("handshake with " + remote_ + " timed out");
    // A Refuse queued above closes the connection once written; anything else closes now.
    if (!status.ok() && !close_when_flushed_) Close();
    return status;
  };

  SendEnvelope([&](proto::Envelope::Builder env) {
    auto hello = env.initHello();
    hello.setVersion(kProtocolVersion);
    hello.setRole(role);
    hello.setNodeId(id);
    hello.setNonce(kj::arrayPtr(nonce.data(), nonce.size()));
  });

  auto first = co_await Receive();
  if (!first.ok()) co_return finish(first.status());
  std::vector<uint8_t> peer_nonce;
  {
    auto env = (*first)->root();
    if (env.isRefuse()) {
      co_return finish(Unauthenticated("refused by " + remote_ + ": " +
                                       std::string(env.getRefuse().getReason().cStr())));
    }
    if (!env.isHello()) {
      Refuse("handshake: expected hello");
      co_return finish(ProtocolError(std::string("handshake with ") + remote_ +
                                     ": expected hello, got " + WhichName(env.which())));
    }
    auto hello = env.getHello();
    if (hello.getVersion() != kProtocolVersion) {
      std::string why = "protocol version " + std::to_string(hello.getVersion()) +
                        " not supported (this node speaks " + std::to_string(kProtocolVersion) + ")";
      Refuse(why);
      co_return finish(Unauthenticated("handshake with " + remote_ + ": " + why));
    }
    if (hello.getNonce().size() != kNonceBytes) {
      Refuse("handshake: nonce must be 16 bytes");
      co_return finish(ProtocolError("handshake with " + remote_ + ": bad nonce size"));
    }
    peer_.role = hello.getRole();
    peer_.id = hello.getNodeId().cStr();
    auto n = AsSpan(hello.getNonce());
    peer_nonce.assign(n.begin(), n.end());
  }

  const Mac mine = HmacSha256(options_.cluster_key, AuthInput(peer_nonce, role, id));
  SendEnvelope([&](proto::Envelope::Builder env) {
    env.initAuth().setMac(kj::arrayPtr(mine.data(), mine.size()));
  });

  auto second = co_await Receive();
  if (!second.ok()) co_return finish(second.status());
  auto env = (*second)->root();
  if (env.isRefuse()) {
    co_return finish(Unauthenticated("refused by " + remote_ + ": " +
                                     std::string(env.getRefuse().getReason().cStr())));
  }
  if (!env.isAuth()) {
    Refuse("handshake: expected auth");
    co_return finish(ProtocolError(std::string("handshake with ") + remote_ +
                                   ": expected auth, got " + WhichName(env.which())));
  }
  const Mac expected = HmacSha256(options_.cluster_key, AuthInput(nonce, peer_.role, peer_.id));
  if (!MacEquals(expected, AsSpan(env.getAuth().getMac()))) {
    Refuse("authentication failed: cluster_key mismatch");
    co_return finish(Unauthenticated("authentication failed with " + std::string(RoleName(peer_.role)) +
                                     " " + peer_.id + " at " + remote_ +
                                     ": cluster_key mismatch"));
  }
  authenticated_ = true;
  co_return finish(Status::Ok());
}

awaitable<Result<ConnectionPtr>> Dial(const Endpoint& to, const NetOptions& options,
                                      proto::Role role, const std::string& id, RetryPolicy retry) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto backoff = retry.initial_backoff;
  Status last = Unavailable("no attempt made");
  for (int attempt = 1; retry.attempts == 0 || attempt <= retry.attempts; ++attempt) {
    if (attempt > 1) {
      asio::steady_timer wait(executor, backoff);
      co_await wait.async_wait(use_nothrow);
      backoff = std::min(backoff * 2, retry.max_backoff);
    }
    auto [rec, results] =
        co_await resolver.async_resolve(to.host, std::to_string(to.port), use_nothrow);
    if (rec) {
      last = Unavailable("resolve " + to.ToString() + ": " + rec.message());
      continue;
    }
    tcp::socket socket(executor);
    auto [cec, ep] = co_await asio::async_connect(socket, results, use_nothrow);
    if (cec) {
      last = Unavailable("connect to " + to.ToString() + ": " + cec.message());
      continue;
    }
    auto conn = Connection::Create(std::move(socket), options);
    Status hs = co_await conn->Handshake(role, id);
    if (hs.ok()) co_return conn;
    last = hs;
    if (hs.code() == StatusCode::kUnauthenticated) break;
  }
  co_return last;
}

}  // namespace aiac::net
