#include "net/connection.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <vector>

#include "core/hex.h"
#include "net/capnp_bytes.h"
#include "net/describe_exception.h"
#include "net/identity.h"
#include "net/message_parts.h"
#include "net/net_metrics.h"
#include "net/random.h"
#include "net/tls.h"

namespace aiac::net {
namespace {

FrameLimits PreAuthLimits(FrameLimits limits) {
  limits.max_frame_bytes = std::min(limits.max_frame_bytes, kPreAuthFrameBytes);
  limits.max_segments = std::min<uint32_t>(limits.max_segments, 4);
  return limits;
}

bool IsEndOfStream(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::ssl::error::stream_truncated;
}

}  // namespace

std::shared_ptr<Connection> Connection::Create(tcp::socket socket, const NetOptions& options,
                                               Side side) {
  std::shared_ptr<const TlsContext> tls = options.tls;
  if (!tls) {
    // Binaries refuse an empty key before any connection (CheckClusterKey); here an empty key
    // gets a random one, so it authenticates nobody.
    auto made =
        TlsContext::Make(options.cluster_key.empty() ? Hex(RandomBytes(32)) : options.cluster_key);
    AIAC_CHECK(made.ok());
    tls = *made;
  }
  auto conn = std::shared_ptr<Connection>(new Connection(std::move(socket), options, side, tls));
  asio::co_spawn(conn->socket().get_executor(), conn->WriterLoop(), asio::detached);
  return conn;
}

Connection::Connection(tcp::socket connected, const NetOptions& options, Side side,
                       std::shared_ptr<const TlsContext> tls)
    : tls_(std::move(tls)),
      stream_(std::move(connected), side == Side::kClient ? tls_->client() : tls_->server()),
      options_(options),
      side_(side),
      parser_(PreAuthLimits(options.limits), options.budget.get()),
      parts_(options.limits, options.budget.get()),
      wake_(stream_.get_executor(), std::chrono::steady_clock::time_point::max()),
      drained_(stream_.get_executor(), std::chrono::steady_clock::time_point::max()),
      closed_(stream_.get_executor(), std::chrono::steady_clock::time_point::max()) {
  error_code ec;
  socket().set_option(tcp::no_delay(true), ec);
  auto ep = socket().remote_endpoint(ec);
  remote_ = ec ? std::string("?") : Endpoint{ep.address().to_string(), ep.port()}.ToString();
  NetMetrics::Get().connections_open.Add(1);
}

Connection::~Connection() { Close(); }

std::string Connection::Describe() const {
  if (!authenticated_) return remote_;
  return std::string(RoleName(peer_.role)) + " " + peer_.id + " at " + remote_;
}

void Connection::Send(capnp::MessageBuilder& message) {
  if (!open_ || close_when_flushed_) return;
  // Checked before this message is added, so that one message may be of any size.
  if (queued_bytes_ > options_.max_queued_bytes) {
    Close();  // the peer does not read: holding more would only grow memory
    return;
  }
  kj::Array<capnp::word> frame = EncodeFrame(message);
  auto queue = [this](kj::Array<capnp::word> f) {
    queued_bytes_ += f.size() * sizeof(capnp::word);
    queue_.push_back({std::move(f), std::chrono::steady_clock::now()});
  };
  if (frame.size() * sizeof(capnp::word) > options_.limits.max_frame_bytes) {
    // Too large for one frame: in parts, queued together so nothing comes between them.
    for (auto& part : SplitIntoParts(frame, PartBytes(options_.limits.max_frame_bytes)))
      queue(std::move(part));
  } else {
    queue(std::move(frame));
  }
  wake_.cancel_one();
}

void Connection::Refuse(const std::string& reason) {
  if (!open_) return;
  SendEnvelope([&](proto::Envelope::Builder env) { env.initRefuse().setReason(reason); });
  CloseWhenFlushed();
}

bool Connection::Speaks(uint32_t version, const Logger& log) {
  if (peer_.version >= version) return true;
  log->warn("closed {}: a message of protocol {} on a connection that agreed on {}", Describe(),
            version, peer_.version);
  Refuse("unexpected message: protocol " + std::to_string(peer_.version) + " was agreed");
  return false;
}

void Connection::CloseWhenFlushed() {
  if (!open_) return;
  close_when_flushed_ = true;
  wake_.cancel_one();
}

void Connection::Close() {
  if (!open_) return;
  open_ = false;
  NetMetrics::Get().connections_open.Add(-1);
  error_code ec;
  socket().shutdown(tcp::socket::shutdown_both, ec);
  socket().close(ec);
  wake_.cancel();
  drained_.cancel();
  closed_.cancel();
}

awaitable<void> Connection::Closed(std::chrono::milliseconds limit) {
  auto self = shared_from_this();
  if (!open_) co_return;
  closed_.expires_after(limit);
  co_await closed_.async_wait(use_nothrow);
}

awaitable<void> Connection::Drained() {
  auto self = shared_from_this();
  while (open_) {
    // Through an emulated link, a frame is drained once the link has taken it in (its bytes
    // at the link's bandwidth), as a kernel's send buffer takes a real one: what it still
    // travels (the latency) does not hold the next one back.
    const bool link_busy = link_ && std::chrono::steady_clock::now() < link_free_;
    if (!writing_ && queue_.empty() && !link_busy) break;
    drained_.expires_at(!writing_ && queue_.empty() ? link_free_
                                                    : std::chrono::steady_clock::time_point::max());
    co_await drained_.async_wait(use_nothrow);
  }
}

awaitable<error_code> Connection::Write(kj::Array<capnp::word> frame) {
  const size_t bytes = frame.size() * sizeof(capnp::word);
  auto buffer = asio::buffer(frame.begin(), bytes);
  auto [ec, n] = encrypted() ? co_await asio::async_write(stream_, buffer, use_nothrow)
                             : co_await asio::async_write(socket(), buffer, use_nothrow);
  queued_bytes_ -= bytes;
  if (!ec) {
    NetMetrics::Get().frames_sent.Add();
    NetMetrics::Get().bytes_sent.Add(bytes);
  }
  co_return ec;
}

awaitable<void> Connection::WriterLoop() {
  auto self = shared_from_this();
  error_code ec;
  while (open_ && !ec) {
    // Frames on an emulated link are written when they would arrive, in order.
    if (!in_flight_.empty() && in_flight_.front().at <= std::chrono::steady_clock::now()) {
      kj::Array<capnp::word> frame = std::move(in_flight_.front().frame);
      in_flight_.pop_front();
      ec = co_await Write(std::move(frame));
      continue;
    }
    if (!secured_ || queue_.empty()) {
      if (secured_) drained_.cancel();
      if (secured_ && close_when_flushed_ && in_flight_.empty()) break;
      wake_.expires_at(in_flight_.empty() ? std::chrono::steady_clock::time_point::max()
                                          : in_flight_.front().at);
      co_await wake_.async_wait(use_nothrow);
      continue;
    }
    kj::Array<capnp::word> frame = std::move(queue_.front().frame);
    const auto queued_at = queue_.front().at;
    queue_.pop_front();
    if (link_) {
      // Onto the emulated link: after the frames before it, for bytes / bandwidth; it arrives
      // the latency after that.
      const auto bytes = static_cast<double>(frame.size() * sizeof(capnp::word));
      const auto start = std::max(queued_at, link_free_);
      link_free_ =
          start + (link_->bytes_per_second > 0
                       ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(bytes / link_->bytes_per_second))
                       : std::chrono::steady_clock::duration::zero());
      in_flight_.push_back({std::move(frame), link_free_ + link_->latency});
      continue;
    }
    writing_ = true;
    ec = co_await Write(std::move(frame));
    writing_ = false;
  }
  if (open_ && !ec && close_when_flushed_) co_await Linger();
  Close();
}

awaitable<void> Connection::Linger() {
  // Closing a socket with unread input makes the kernel send RST, and an RST discards what the
  // peer has received but not read yet, such as our Refuse. Half-close instead and wait until
  // the peer closes too (bounded), so the peer always reads why it was refused.
  error_code ec;
  socket().shutdown(tcp::socket::shutdown_send, ec);
  if (ec) co_return;
  auto self = shared_from_this();
  asio::steady_timer limit(stream_.get_executor(), std::chrono::milliseconds(1000));
  limit.async_wait([self](error_code e) {
    if (!e) self->Close();
  });
  if (reading_) {
    // A Receive() is reading already and closes the connection when the peer does; two reads
    // on one socket are not allowed, so only wait.
    while (open_) {
      drained_.expires_at(std::chrono::steady_clock::time_point::max());
      co_await drained_.async_wait(use_nothrow);
    }
  } else {
    std::array<std::byte, 4096> discard;
    for (;;) {
      auto [rec, n] = co_await socket().async_read_some(asio::buffer(discard), use_nothrow);
      if (rec) break;
    }
  }
  limit.cancel();
}

awaitable<Result<std::unique_ptr<IncomingMessage>>> Connection::Receive() {
  auto self = shared_from_this();
  for (;;) {
    if (!open_) co_return Aborted("connection to " + Describe() + " is closed");
    auto next = parser_.Next();
    if (!next.ok()) {
      Status why = next.status();
      Refuse(why.message());
      co_return why;
    }
    if (*next) {
      NetMetrics::Get().frames_received.Add();
      Status well_formed = (*next)->CheckWellFormed();
      if (!well_formed.ok()) {
        Refuse(well_formed.message());
        co_return well_formed;
      }
      const bool part = (*next)->root().isPart();
      if (!part && !parts_.busy()) co_return std::move(*next);
      // A part of a message larger than a frame (message_parts.h), or a message that breaks
      // into one: parts come only after the handshake, and nothing comes between them.
      Result<std::unique_ptr<IncomingMessage>> whole =
          !authenticated_ ? ProtocolError("message parts before the handshake")
          : !part         ? ProtocolError("a message in the middle of another message's parts")
                          : parts_.Add((*next)->root().getPart());
      if (!whole.ok()) {
        Refuse(whole.status().message());
        co_return whole.status();
      }
      if (*whole) co_return std::move(*whole);
      continue;
    }
    reading_ = true;
    auto buffer = asio::buffer(read_buffer_);
    auto [ec, n] = encrypted() ? co_await stream_.async_read_some(buffer, use_nothrow)
                               : co_await socket().async_read_some(buffer, use_nothrow);
    reading_ = false;
    if (ec) {
      bool was_open = open_;
      Close();
      if (IsEndOfStream(ec)) co_return Unavailable("connection closed by " + Describe());
      if (!was_open || ec == asio::error::operation_aborted) {
        co_return Aborted("connection to " + Describe() + " was closed");
      }
      if (ec.category() == asio::error::get_ssl_category()) {
        // A record that fails its integrity check: someone on the path altered the stream.
        co_return ProtocolError("TLS record from " + Describe() + " rejected: " + ec.message());
      }
      co_return Unavailable("read from " + Describe() + " failed: " + ec.message());
    }
    NetMetrics::Get().bytes_received.Add(n);
    parser_.Feed(std::span<const std::byte>(read_buffer_.data(), n));
  }
}

awaitable<Status> Connection::Handshake(proto::Role role, std::string id,
                                        std::optional<proto::Role> expect) {
  auto self = shared_from_this();
  bool done = false;
  bool timed_out = false;
  // One watchdog over every step: TLS, Hello out, Hello in, and any error path in between.
  asio::steady_timer watchdog(stream_.get_executor(), options_.handshake_timeout);
  watchdog.async_wait([&, self](error_code ec) {
    if (!ec && !done) {
      timed_out = true;
      Close();
    }
  });
  Status status;
  try {
    status = co_await HandshakeSteps(role, id, expect);
  } catch (...) {
    status = ProtocolError("handshake with " + remote_ + ": " +
                           DescribeException(std::current_exception()));
  }
  done = true;
  watchdog.cancel();
  if (timed_out) status = Timeout("handshake with " + remote_ + " timed out");
  if (!status.ok()) NetMetrics::Get().HandshakeFailures(timed_out ? "timeout" : fail_reason_).Add();
  // A Refuse queued above closes the connection once written; anything else closes now.
  if (!status.ok() && !close_when_flushed_) Close();
  co_return status;
}

awaitable<Status> Connection::HandshakeSteps(proto::Role role, const std::string& id,
                                             std::optional<proto::Role> expect) {
  if (encrypted()) {
    const auto kind =
        side_ == Side::kClient ? asio::ssl::stream_base::client : asio::ssl::stream_base::server;
    auto [ec] = co_await stream_.async_handshake(kind, use_nothrow);
    if (!open_) co_return Aborted("handshake with " + remote_ + " was cut short");
    if (ec) {
      fail_reason_ = "tls";
      Status why = TlsHandshakeError(ec, side_ == Side::kClient);
      co_return Status(why.code(), "handshake with " + remote_ + ": " + why.message());
    }
  }
  secured_ = true;
  const NodeIdentity* identity = options_.identity.get();
  if (identity && !identity->enrolling() &&
      (identity->certificate.id != id || identity->certificate.role != role)) {
    co_return Internal(std::string("this process speaks as ") + RoleName(role) + " " + id +
                       " but its certificate names " + RoleName(identity->certificate.role) + " " +
                       identity->certificate.id);
  }
  std::string exporter = Exporter();
  auto send_hello = [&] {
    SendEnvelope([&](proto::Envelope::Builder env) {
      auto hello = env.initHello();
      hello.setVersion(std::min(kMinProtocolVersion, options_.max_protocol_version));
      hello.setMaxVersion(options_.max_protocol_version);
      hello.setRole(role);
      hello.setNodeId(id);
      if (identity) {
        if (identity->enrolling()) {
          hello.setEnrollKey(AsBytes(identity->key.PublicKey()));
        } else {
          FillCertificate(identity->certificate, hello.initCertificate());
        }
        hello.setBinding(
            AsBytes(identity->key.Sign(BindingBytes(side_ == Side::kClient, exporter))));
      }
    });
  };
  // The dialler speaks first; the accepting side answers with its own Hello only once it took
  // the dialler's, so that a dialler it refuses reads the Refuse, never a Hello first (it would
  // take itself for accepted, and come straight back).
  if (side_ == Side::kClient) {
    send_hello();
    co_return co_await CheckHello(role, id, expect, std::move(exporter));
  }
  Status checked = co_await CheckHello(role, id, expect, exporter);
  if (!checked.ok()) co_return checked;
  send_hello();
  // Out before the handshake counts as done (the watchdog bounds the wait): a handler that ends
  // at once must not close the connection on an unsent Hello.
  co_await Drained();
  if (!open_) co_return Aborted("handshake with " + remote_ + " was cut short");
  co_return checked;
}

std::string Connection::Exporter() {
  if (!encrypted()) return "";
  std::string out(32, '\0');
  const int ok = SSL_export_keying_material(
      stream_.native_handle(), reinterpret_cast<unsigned char*>(out.data()), out.size(),
      kExporterLabel.data(), kExporterLabel.size(), nullptr, 0, 0);
  AIAC_CHECK(ok == 1);
  return out;
}

awaitable<Status> Connection::CheckHello(proto::Role own_role, const std::string& own_id,
                                         std::optional<proto::Role> expect, std::string exporter) {
  auto first = co_await Receive();
  if (!first.ok()) {
    if (PeerMisbehaved(first.status())) fail_reason_ = "protocol";
    co_return first.status();
  }
  auto envelope = (*first)->root();
  std::optional<ChannelCheck> check;
  if (options_.identity) {
    check = ChannelCheck{&options_.identity->trust, std::move(exporter), side_ == Side::kServer,
                         UnixNow(), options_.accept_enrollment};
  }
  auto peer = ValidateHello(envelope, own_role, own_id, expect, check ? &*check : nullptr,
                            {std::min(kMinProtocolVersion, options_.max_protocol_version),
                             options_.max_protocol_version});
  if (!peer.ok()) {
    fail_reason_ = envelope.isRefuse()                                     ? "refused"
                   : peer.status().message().find("protocol version") == 0 ? "version"
                   : peer.status().code() == StatusCode::kUnauthenticated  ? "identity"
                                                                           : "protocol";
    // A peer that refused us gets no Refuse back; everyone else learns why.
    if (!envelope.isRefuse()) Refuse("handshake: " + peer.status().message());
    co_return Status(peer.status().code(),
                     "handshake with " + remote_ + ": " + peer.status().message());
  }
  peer_ = std::move(*peer);
  parser_.set_limits(options_.limits);
  authenticated_ = true;
  if (options_.emulated_link) link_ = options_.emulated_link(peer_);
  co_return Status::Ok();
}

awaitable<Result<ConnectionPtr>> Dial(Endpoint to, NetOptions options, proto::Role role,
                                      std::string id, proto::Role expect, RetryPolicy retry) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  auto backoff = retry.initial_backoff;
  const auto first = std::chrono::steady_clock::now();
  const auto bounded = [&] {
    return retry.give_up_after.count() > 0 &&
           std::chrono::steady_clock::now() - first >= retry.give_up_after;
  };
  Status last = Unavailable("no attempt made");
  for (int attempt = 1; retry.attempts == 0 || attempt <= retry.attempts; ++attempt) {
    if (attempt > 1) {
      if (bounded()) break;
      asio::steady_timer wait(executor, backoff);
      co_await wait.async_wait(use_nothrow);
      backoff = std::min(backoff * 2, retry.max_backoff);
      if (bounded()) break;
    }
    auto [rec, results] =
        co_await resolver.async_resolve(to.host, std::to_string(to.port), use_nothrow);
    if (rec) {
      last = Unavailable("resolve " + to.ToString() + ": " + rec.message());
      continue;
    }
    tcp::socket socket(executor);
    // The connect is bounded too: a powered-off host would otherwise hold us for minutes.
    asio::steady_timer limit(executor, options.handshake_timeout);
    limit.async_wait([&socket](error_code e) {
      if (!e) {
        error_code ignored;
        socket.close(ignored);
      }
    });
    auto [cec, ep] = co_await asio::async_connect(socket, results, use_nothrow);
    limit.cancel();
    if (cec) {
      last = Unavailable("connect to " + to.ToString() + ": " + cec.message());
      continue;
    }
    auto conn = Connection::Create(std::move(socket), options, Side::kClient);
    Status hs = co_await conn->Handshake(role, id, expect);
    if (hs.ok()) co_return conn;
    last = hs;
    if (hs.code() == StatusCode::kUnauthenticated) break;
  }
  co_return last;
}

}  // namespace aiac::net
