// A framed Cap'n Proto connection over TLS 1.3 on Asio TCP, admitted by the cluster key and
// authenticated by the peer's certificate.
//
// One Connection per TCP stream. Send() never blocks: frames go into a queue drained by one
// writer coroutine, so frames never interleave. Receive() is called by one reader coroutine at a
// time. Handshake() must run first on both ends: the TLS 1.3 PSK handshake (net/tls.h: proves
// both sides hold the cluster key, bound to the whole exchange), then, encrypted, one Hello
// (version, role, node id, certificate and its binding to this channel: net/identity.h) each
// way, the dialler's first: the accepting side answers with its own only once it accepted the
// dialler's, else with a Refuse. Nothing else is sent or accepted before both succeed. Until
// then frames are capped at kPreAuthFrameBytes. Any failure (wrong key, wrong version, a bad
// node id, a certificate that does not verify or back the claim, a role the caller did not
// expect, an oversized or malformed frame, the handshake timeout) closes the connection; the
// caller logs the returned Status once and keeps serving everyone else.
//
// Thread-safety: none; use from the io_context's single thread. Lifetime: shared_ptr; the writer
// coroutine holds a reference until Close().
#pragma once

#include <boost/asio/ssl.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/endpoint.h"
#include "core/logging.h"
#include "core/status.h"
#include "net/asio.h"
#include "net/frame.h"
#include "net/hello.h"
#include "net/message_parts.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

// Largest frame accepted before the peer's Hello has been checked.
inline constexpr size_t kPreAuthFrameBytes = 4096;

class TlsContext;
struct NodeIdentity;

// Which end of the TCP connection this is: the dialler is the TLS client.
enum class Side { kClient, kServer };

// kTls always, except in the transport benchmark, which measures what encryption costs by
// running the same framing over plain TCP. No config file or flag can select kPlaintext.
enum class Transport { kTls, kPlaintextBenchmarkOnly };

// An emulated network link (docs/emulation.md): each frame this end sends reaches the peer as
// if it had crossed a link of this latency and bandwidth, shared by the frames in order (a frame
// waits for the ones before it to be through).
struct EmulatedLink {
  std::chrono::nanoseconds latency{0};
  double bytes_per_second = 0;  // 0: no bandwidth limit
};

struct NetOptions {
  // Shared deployment secret; every process of one platform uses the same. Default: empty
  // (refused by the binaries, which require one; see net/key.h).
  std::string cluster_key;
  // A file holding the key instead (mode 600), read by FinishNetOptions. Default: none.
  std::string cluster_key_file;
  // TLS contexts made from cluster_key once per process (FinishNetOptions). When null, each
  // connection derives its own, which is correct but slower.
  std::shared_ptr<const TlsContext> tls;
  // This process's key, certificate and trusted authorities (net/identity.h), loaded by
  // FinishNetOptions from the four options below. With one, every Hello carries the
  // certificate and its channel binding, and a peer without a valid one is refused. Null only
  // in tests and benchmarks that build NetOptions themselves: no binary runs without one.
  std::shared_ptr<const NodeIdentity> identity;
  std::vector<std::string> authority_keys;  // 64 hex each
  std::string identity_key_file;
  std::string certificate_file;
  std::vector<std::string> revoked_keys;  // 64 hex each: node or authority keys
  // A signed revocation list file (net/revocation.h) read at start; a newer one adopted later
  // is written back to it. Default: none.
  std::string revocation_file;
  // An enroller super-node's: a daemon with no certificate may connect to enroll (its Hello
  // offers a key instead), and do nothing else. Set by the super-node when its certificate
  // says it is an enroller. Default: false.
  bool accept_enrollment = false;
  Transport transport = Transport::kTls;
  FrameLimits limits;
  // The process's memory budget for what peers declare they will send (core/memory_budget.h),
  // shared by every connection: made by FinishNetOptions from memory_budget_mb. Null (only
  // in tests): declared sizes are checked against the machine's memory alone.
  std::shared_ptr<MemoryBudget> budget;
  // Its size in MiB; 0: DefaultMemoryBudgetBytes(). Default: 0.
  uint64_t memory_budget_mb = 0;
  // Longest a handshake may take. Default: 5000 ms.
  std::chrono::milliseconds handshake_timeout{5000};
  // Bytes queued for sending before the connection is declared stuck and closed.
  // Default: 256 MiB.
  size_t max_queued_bytes = 256u << 20;
  // The newest protocol version this process offers (net/hello.h): kProtocolVersion, or an
  // older one of the window to hold a newer one back (and in the mixed-version tests).
  uint32_t max_protocol_version = kProtocolVersion;
  // Emulated platforms only: the link to an authenticated peer, asked once after the handshake;
  // nullopt (or no function, the default): frames go out at once.
  std::function<std::optional<EmulatedLink>(const PeerIdentity& peer)> emulated_link;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Takes a connected socket and starts its writer (which waits for the handshake).
  static std::shared_ptr<Connection> Create(tcp::socket socket, const NetOptions& options,
                                            Side side);
  ~Connection();

  // Runs the handshake as `role`/`id`; when `expect` is set, a peer of another role is refused.
  // On failure the connection is closed. Never throws.
  // Arguments are taken by value: a coroutine keeps them in its frame (g++ 12 mishandles
  // temporaries bound to references across co_await).
  awaitable<Status> Handshake(proto::Role role, std::string id,
                              std::optional<proto::Role> expect = std::nullopt);

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
  // Whether this connection agreed on protocol `version` or later; if not, a message of that
  // version is unexpected here: logged to `log`, refused, false.
  bool Speaks(uint32_t version, const Logger& log);
  // Ends the connection once every queued frame is written and read: half-closes, then waits
  // for the peer to close its side too (a second at most), since closing with unread input
  // makes the kernel send an RST, which can discard what the peer has not read yet. Nothing
  // is queued after it; Closed() tells when it is over.
  void CloseWhenFlushed();

  // Returns once every queued frame is written (or the connection closed). Lets a sender keep
  // only its newest value while the previous one is on its way.
  awaitable<void> Drained();
  // True once Refuse() or CloseWhenFlushed() was called and the connection is still flushing.
  bool refusing() const { return open_ && close_when_flushed_; }
  // Returns once the connection is closed, or after `limit`. One waiter at a time.
  awaitable<void> Closed(std::chrono::milliseconds limit);

  // The next well-formed message; an error when the stream ends or breaks (then closed).
  awaitable<Result<std::unique_ptr<IncomingMessage>>> Receive();

  void Close();
  bool is_open() const { return open_; }
  const PeerIdentity& peer() const { return peer_; }
  bool authenticated() const { return authenticated_; }
  // "ROLE ID at HOST:PORT" once authenticated, "HOST:PORT" before.
  std::string Describe() const;
  const std::string& remote_address() const { return remote_; }

 private:
  Connection(tcp::socket socket, const NetOptions& options, Side side,
             std::shared_ptr<const TlsContext> tls);
  awaitable<Status> HandshakeSteps(proto::Role role, const std::string& id,
                                   std::optional<proto::Role> expect);
  awaitable<Status> CheckHello(proto::Role own_role, const std::string& own_id,
                               std::optional<proto::Role> expect, std::string exporter);
  // This TLS session's exporter value for Hello bindings (net/identity.h); empty in plaintext.
  std::string Exporter();
  awaitable<void> WriterLoop();
  // Writes one frame to the stream.
  awaitable<error_code> Write(kj::Array<capnp::word> frame);
  awaitable<void> Linger();
  tcp::socket& socket() { return stream_.next_layer(); }
  bool encrypted() const { return options_.transport == Transport::kTls; }

  std::shared_ptr<const TlsContext> tls_;  // outlives stream_
  asio::ssl::stream<tcp::socket> stream_;
  NetOptions options_;
  Side side_;
  FrameParser parser_;
  PartAssembler parts_;  // a message larger than a frame, while its parts come
  asio::steady_timer wake_;
  asio::steady_timer drained_;
  asio::steady_timer closed_;  // cancelled by Close(); waited on by Closed()
  bool writing_ = false;
  bool reading_ = false;
  bool secured_ = false;  // the TLS handshake is done: the writer may write
  struct Pending {
    kj::Array<capnp::word> frame;
    std::chrono::steady_clock::time_point at;  // when it was queued
  };
  std::deque<Pending> queue_;
  // The emulated link, once authenticated (NetOptions::emulated_link), when it has taken in the
  // last frame it was given, and the frames on it (`at`: when each arrives).
  std::optional<EmulatedLink> link_;
  std::chrono::steady_clock::time_point link_free_;
  std::deque<Pending> in_flight_;
  size_t queued_bytes_ = 0;
  bool open_ = true;
  bool close_when_flushed_ = false;
  bool authenticated_ = false;
  PeerIdentity peer_;
  // Why the handshake failed, for aiac_handshake_failures_total (net/net_metrics.h).
  const char* fail_reason_ = "closed";
  std::string remote_;
  std::array<std::byte, 64 * 1024> read_buffer_;
};

using ConnectionPtr = std::shared_ptr<Connection>;

// Whether a failed Receive() was the peer's doing (a malformed or oversized frame: the
// connection was refused with the reason) rather than the stream ending: what a server logs as
// "closed PEER: why".
inline bool PeerMisbehaved(const Status& receive_failure) {
  return receive_failure.code() == StatusCode::kProtocol ||
         receive_failure.code() == StatusCode::kResourceExhausted;
}

struct RetryPolicy {
  // Attempts before giving up; 0 = forever. Default: 0.
  int attempts = 0;
  // First and largest wait between attempts (doubling). Default: 100 ms, 2000 ms.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
  // No attempt starts once this long has passed since the first; 0 = no bound. A peer whose
  // host accepts connections but whose process does not run (stopped, swapped out) times each
  // attempt out: without a bound, `attempts` handshake timeouts pass before Dial gives up.
  std::chrono::milliseconds give_up_after{0};
};

// Connects to `to` and runs the handshake as `role`/`id`, refusing a peer that is not `expect`;
// retries refused or timed-out connects with backoff. An authentication failure is returned at
// once (retrying cannot fix a wrong key).
awaitable<Result<ConnectionPtr>> Dial(Endpoint to, NetOptions options, proto::Role role,
                                      std::string id, proto::Role expect, RetryPolicy retry = {});

}  // namespace aiac::net
