// A framed, authenticated Cap'n Proto connection over Asio TCP.
//
// One Connection per TCP stream. Send() never blocks: frames go into a queue drained by one
// writer coroutine, so frames never interleave. Receive() is called by one reader coroutine at a
// time. Handshake() must run first on both ends: Hello (version, role, id, nonce) both ways, then
// Auth (HMAC-SHA256 of the peer's nonce with the deployment key) both ways. Any failure — wrong
// key, wrong version, oversized or malformed frame — closes the connection; the caller logs the
// returned Status once and keeps serving everyone else.
//
// Thread-safety: none; use from the io_context's single thread. Lifetime: shared_ptr; the writer
// coroutine holds a reference until Close().
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>

#include "core/endpoint.h"
#include "core/logging.h"
#include "core/status.h"
#include "net/asio.h"
#include "net/frame.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

inline constexpr uint32_t kProtocolVersion = 1;

struct NetOptions {
  // Shared deployment secret; every process of one platform uses the same. Default: empty
  // (refused by the binaries, which require one).
  std::string cluster_key;
  FrameLimits limits;
  // Longest a handshake may take. Default: 5000 ms.
  std::chrono::milliseconds handshake_timeout{5000};
  // Bytes queued for sending before the connection is declared stuck and closed.
  // Default: 256 MiB.
  size_t max_queued_bytes = 256u << 20;
};

struct PeerIdentity {
  proto::Role role = proto::Role::DAEMON;
  std::string id;
};

const char* RoleName(proto::Role role);

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Takes a connected socket and starts its writer.
  static std::shared_ptr<Connection> Create(tcp::socket socket, const NetOptions& options);
  ~Connection();

  // Runs the handshake as `role`/`id`. On failure the connection is closed.
  awaitable<Status> Handshake(proto::Role role, const std::string& id);

  // Queues a message. Silently dropped when the connection is closed.
  void Send(capnp::MessageBuilder& message);
  // Builds an Envelope with `fill` and queues it.
  template <typename Fill>
  void SendEnvelope(Fill&& fill) {
    capnp::MallocMessageBuilder message;
    fill(message.initRoot<proto::Envelope>());
    Send(message);
  }
  // Sends a Refuse with `reason`, then closes once it is written.
  void Refuse(const std::string& reason);

  // Returns once every queued frame is written (or the connection closed). Lets a sender keep
  // only its newest value while the previous one is on its way.
  awaitable<void> Drained();

  // The next well-formed message; an error when the stream ends or breaks (then closed).
  awaitable<Result<std::unique_ptr<IncomingMessage>>> Receive();

  void Close();
  bool is_open() const { return open_; }
  const PeerIdentity& peer() const { return peer_; }
  // "ROLE ID at HOST:PORT" once authenticated, "HOST:PORT" before.
  std::string Describe() const;
  const std::string& remote_address() const { return remote_; }

 private:
  Connection(tcp::socket socket, const NetOptions& options);
  awaitable<void> WriterLoop();
  awaitable<void> Linger();

  tcp::socket socket_;
  NetOptions options_;
  FrameParser parser_;
  asio::steady_timer wake_;
  asio::steady_timer drained_;
  bool writing_ = false;
  std::deque<kj::Array<capnp::word>> queue_;
  size_t queued_bytes_ = 0;
  bool open_ = true;
  bool close_when_flushed_ = false;
  bool authenticated_ = false;
  PeerIdentity peer_;
  std::string remote_;
  std::array<std::byte, 64 * 1024> read_buffer_;
};

using ConnectionPtr = std::shared_ptr<Connection>;

struct RetryPolicy {
  // Attempts before giving up; 0 = forever. Default: 0.
  int attempts = 0;
  // First and largest wait between attempts (doubling). Default: 100 ms, 2000 ms.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
};

// Connects to `to` and runs the handshake, retrying refused or timed-out connects with backoff.
// An authentication failure is returned at once (retrying cannot fix a wrong key).
awaitable<Result<ConnectionPtr>> Dial(const Endpoint& to, const NetOptions& options,
                                      proto::Role role, const std::string& id,
                                      RetryPolicy retry = {});

}  // namespace aiac::net
