// Handshake and framing over real loopback sockets, both ends in this process.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <tuple>
#include <vector>

#include "net/connection.h"
#include "support/loopback.h"
#include "support/test_support.h"

namespace aiac::net {
namespace {

using testing::ConnectLoopback;

NetOptions WithKey(const std::string& key) {
  NetOptions o;
  o.cluster_key = key + "-unit-test-key";
  o.handshake_timeout = std::chrono::milliseconds(2000);
  return o;
}

bool RunUntil(asio::io_context& io, const std::function<bool()>& done) {
  return testing::RunIoUntil(io, done, std::chrono::seconds(5));
}

struct Outcome {
  std::optional<Status> a, b;
};

Outcome Handshake(ConnectionPtr a, ConnectionPtr b, asio::io_context& io) {
  Outcome out;
  asio::co_spawn(
      io, [&]() -> awaitable<void> { out.a = co_await a->Handshake(proto::Role::DAEMON, "d1"); },
      asio::detached);
  asio::co_spawn(
      io, [&]() -> awaitable<void> { out.b = co_await b->Handshake(proto::Role::SUPERNODE, "sn"); },
      asio::detached);
  RunUntil(io, [&] { return out.a.has_value() && out.b.has_value(); });
  return out;
}

// A client with `client` options and a server with `server` options over loopback, authenticated
// to each other (the client as daemon d1, the server as super-node sn); null when the handshake
// failed (the test fails then too). Taken with std::tie, not a structured binding: clang 14 (the
// sanitizer build) cannot capture a structured binding in a lambda.
std::pair<ConnectionPtr, ConnectionPtr> Authenticated(asio::io_context& io,
                                                      const NetOptions& client,
                                                      const NetOptions& server) {
  auto [sa, sb] = ConnectLoopback(io);
  auto a = Connection::Create(std::move(sa), client, Side::kClient);
  auto b = Connection::Create(std::move(sb), server, Side::kServer);
  Outcome out = Handshake(a, b, io);
  if (!out.a || !out.b || !out.a->ok() || !out.b->ok()) {
    ADD_FAILURE() << "handshake: " << (out.a ? out.a->message() : "none") << " / "
                  << (out.b ? out.b->message() : "none");
    return {};
  }
  return {a, b};
}

TEST(HandshakeTest, SameKeyAuthenticatesBothSides) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  auto a = Connection::Create(std::move(sa), WithKey("secret"), Side::kClient);
  auto b = Connection::Create(std::move(sb), WithKey("secret"), Side::kServer);
  Outcome out = Handshake(a, b, io);
  ASSERT_TRUE(out.a && out.b);
  ASSERT_OK(*out.a);
  ASSERT_OK(*out.b);
  EXPECT_EQ(a->peer().id, "sn");
  EXPECT_EQ(a->peer().role, proto::Role::SUPERNODE);
  EXPECT_EQ(b->peer().id, "d1");
  EXPECT_EQ(b->peer().role, proto::Role::DAEMON);

  // Messages flow after the handshake, in order.
  for (int i = 0; i < 3; ++i) {
    a->SendEnvelope([&](proto::Envelope::Builder e) {
      e.initHeartbeat().setDaemonId("d" + std::to_string(i));
    });
  }
  std::vector<std::string> got;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          auto m = co_await b->Receive();
          if (!m.ok()) co_return;
          got.emplace_back((*m)->root().getHeartbeat().getDaemonId().cStr());
        }
      },
      asio::detached);
  RunUntil(io, [&] { return got.size() == 3; });
  EXPECT_EQ(got, (std::vector<std::string>{"d0", "d1", "d2"}));
}

TEST(HandshakeTest, WrongKeyRefusedOnBothSidesWithReason) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  auto a = Connection::Create(std::move(sa), WithKey("right"), Side::kClient);
  auto b = Connection::Create(std::move(sb), WithKey("wrong"), Side::kServer);
  Outcome out = Handshake(a, b, io);
  ASSERT_TRUE(out.a && out.b);
  for (const Status& s : {*out.a, *out.b}) {
    EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
    EXPECT_NE(s.message().find("cluster_key"), std::string::npos) << s.message();
  }
  // Both sides close.
  EXPECT_TRUE(RunUntil(io, [&] { return !a->is_open() && !b->is_open(); }));
}

TEST(HandshakeTest, SilentPeerTimesOut) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  NetOptions o = WithKey("k");
  o.handshake_timeout = std::chrono::milliseconds(100);
  auto a = Connection::Create(std::move(sa), o, Side::kServer);
  std::optional<Status> result;
  asio::co_spawn(
      io, [&]() -> awaitable<void> { result = co_await a->Handshake(proto::Role::SPAWNER, "s"); },
      asio::detached);
  RunUntil(io, [&] { return result.has_value(); });
  ASSERT_TRUE(result);
  EXPECT_EQ(result->code(), StatusCode::kTimeout) << result->ToString();
}

// A peer whose host accepts connections but whose process never answers (stopped): Dial times
// each attempt out and tries again, and with give_up_after starts no attempt past that bound.
TEST(HandshakeTest, DialStartsNoAttemptPastItsBound) {
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  std::vector<tcp::socket> accepted;
  std::function<void()> accept = [&] {
    acceptor.async_accept([&](error_code ec, tcp::socket s) {
      if (ec) return;
      accepted.push_back(std::move(s));
      accept();
    });
  };
  accept();
  NetOptions options = WithKey("k");
  options.handshake_timeout = std::chrono::milliseconds(100);
  const Endpoint at{"127.0.0.1", acceptor.local_endpoint().port()};
  auto dial = [&](RetryPolicy retry) {
    std::optional<Status> result;
    asio::co_spawn(
        io,
        [&]() -> awaitable<void> {
          auto c =
              co_await Dial(at, options, proto::Role::SPAWNER, "s", proto::Role::DAEMON, retry);
          result = c.status();
        },
        asio::detached);
    RunUntil(io, [&] { return result.has_value(); });
    return result;
  };
  RetryPolicy retry;
  retry.attempts = 3;
  retry.initial_backoff = std::chrono::milliseconds(10);
  auto unbounded = dial(retry);
  ASSERT_TRUE(unbounded);
  EXPECT_EQ(unbounded->code(), StatusCode::kTimeout) << unbounded->ToString();
  EXPECT_EQ(accepted.size(), 3u);
  accepted.clear();
  retry.give_up_after = std::chrono::milliseconds(100);  // one handshake timeout
  auto bounded = dial(retry);
  ASSERT_TRUE(bounded);
  EXPECT_EQ(bounded->code(), StatusCode::kTimeout) << bounded->ToString();
  EXPECT_EQ(accepted.size(), 1u);
}

TEST(HandshakeTest, OversizedFrameClosesOnlyThatConnection) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  auto [sc, sd] = ConnectLoopback(io);
  NetOptions small = WithKey("k");
  small.limits.max_frame_bytes = 4096;
  auto a = Connection::Create(std::move(sa), WithKey("k"), Side::kClient);
  auto b = Connection::Create(std::move(sb), small, Side::kServer);
  auto c = Connection::Create(std::move(sc), WithKey("k"), Side::kClient);
  auto d = Connection::Create(std::move(sd), small, Side::kServer);
  Outcome out = Handshake(a, b, io);
  ASSERT_TRUE(out.a && out.b);
  ASSERT_OK(*out.a);
  ASSERT_OK(*out.b);
  Outcome other = Handshake(c, d, io);
  ASSERT_TRUE(other.a && other.b);
  ASSERT_OK(*other.a);
  ASSERT_OK(*other.b);
  std::string big(64 * 1024, 'x');
  a->SendEnvelope([&](proto::Envelope::Builder e) { e.initRefuse().setReason(big); });
  std::optional<Status> received;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto m = co_await b->Receive();
        received = m.status();
      },
      asio::detached);
  RunUntil(io, [&] { return received.has_value(); });
  ASSERT_TRUE(received);
  EXPECT_EQ(received->code(), StatusCode::kResourceExhausted) << received->ToString();
  // The other connection of the same process still carries messages.
  c->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("still-here"); });
  std::string got;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto m = co_await d->Receive();
        if (m.ok()) got = (*m)->root().getHeartbeat().getDaemonId().cStr();
      },
      asio::detached);
  EXPECT_TRUE(RunUntil(io, [&] { return !got.empty(); }));
  EXPECT_EQ(got, "still-here");
}

// Both ends accept 4 KiB frames: a 100 KB message goes in parts and arrives whole, in order with
// the messages around it (message_parts.h).
TEST(HandshakeTest, AMessageLargerThanAFrameArrivesWholeInParts) {
  asio::io_context io;
  NetOptions small = WithKey("k");
  small.limits.max_frame_bytes = 4096;
  ConnectionPtr a, b;
  std::tie(a, b) = Authenticated(io, small, small);
  ASSERT_TRUE(a && b);
  std::string data(100 * 1000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 251);
  a->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("before"); });
  a->SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initResult();
    r.setJob("big");
    r.setData(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(data.data()), data.size()));
  });
  a->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("after"); });
  std::vector<std::string> got;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 3; ++i) {
          auto m = co_await b->Receive();
          if (!m.ok()) {
            got.push_back("error: " + m.status().message());
            co_return;
          }
          auto root = (*m)->root();
          if (root.isHeartbeat()) got.emplace_back(root.getHeartbeat().getDaemonId().cStr());
          if (root.isResult()) {
            auto d = root.getResult().getData();
            got.push_back(std::string(reinterpret_cast<const char*>(d.begin()), d.size()) == data
                              ? "result intact"
                              : "result changed");
          }
        }
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return got.size() == 3; }));
  EXPECT_EQ(got, (std::vector<std::string>{"before", "result intact", "after"}));
  EXPECT_TRUE(a->is_open() && b->is_open());
}

// CloseWhenFlushed: the peer reads every frame queued before it, even though this end never read
// what the peer sent it (closing at once would then send an RST, which can discard frames the
// peer has not read yet), and the connection is closed once the peer closed its side; with a
// peer that neither reads nor closes, after the linger limit (a second).
TEST(HandshakeTest, CloseWhenFlushedEndsOnceThePeerReadEverything) {
  asio::io_context io;
  ConnectionPtr a, b;
  std::tie(a, b) = Authenticated(io, WithKey("k"), WithKey("k"));
  ASSERT_TRUE(a && b);
  b->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("never read"); });
  const std::string block(64 * 1024, 'x');
  constexpr int kFrames = 40;
  for (int i = 0; i < kFrames; ++i) {
    a->SendEnvelope([&](proto::Envelope::Builder e) {
      auto r = e.initResult();
      r.setJob(std::to_string(i));
      r.setData(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(block.data()), block.size()));
    });
  }
  a->CloseWhenFlushed();
  a->SendEnvelope(
      [&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("after the end"); });
  bool a_closed = false;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        co_await a->Closed(std::chrono::milliseconds(10000));
        a_closed = !a->is_open();
      },
      asio::detached);
  std::vector<std::string> got;
  std::optional<Status> end;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (;;) {
          auto m = co_await b->Receive();
          if (!m.ok()) {
            end = m.status();
            co_return;
          }
          auto root = (*m)->root();
          got.push_back(root.isResult() && root.getResult().getData().size() == block.size()
                            ? std::string(root.getResult().getJob().cStr())
                            : "other");
        }
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return end.has_value() && a_closed; }));
  ASSERT_EQ(got.size(), static_cast<size_t>(kFrames));
  for (int i = 0; i < kFrames; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], std::to_string(i));
  EXPECT_FALSE(b->is_open());
}

TEST(HandshakeTest, CloseWhenFlushedGivesUpOnAPeerThatNeverCloses) {
  asio::io_context io;
  ConnectionPtr c, d;
  std::tie(c, d) = Authenticated(io, WithKey("k"), WithKey("k"));
  ASSERT_TRUE(c && d);
  c->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("unread"); });
  c->CloseWhenFlushed();
  ASSERT_TRUE(RunUntil(io, [&] { return !c->is_open(); }));
  EXPECT_TRUE(d->is_open());
}

// An emulated link (NetOptions::emulated_link): each frame arrives no sooner than its latency,
// and frames share the bandwidth in order (docs/emulation.md). Lower bounds only: a loaded
// machine can only add to them.
TEST(HandshakeTest, AnEmulatedLinkDelaysFramesByLatencyAndBandwidth) {
  asio::io_context io;
  NetOptions slow = WithKey("k");
  // 150 ms, 1 MB/s, towards the peer "sn" only.
  slow.emulated_link = [](const PeerIdentity& peer) -> std::optional<EmulatedLink> {
    if (peer.id != "sn") return std::nullopt;
    return EmulatedLink{std::chrono::milliseconds(150), 1e6};
  };
  ConnectionPtr a, b;
  std::tie(a, b) = Authenticated(io, slow, WithKey("k"));
  ASSERT_TRUE(a && b);
  const auto sent = std::chrono::steady_clock::now();
  a->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("small"); });
  std::string block(200 * 1000, 'x');  // 0.2 s at 1 MB/s, after the first frame
  a->SendEnvelope([&](proto::Envelope::Builder e) { e.initRefuse().setReason(block); });
  std::vector<double> arrived;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 2; ++i) {
          auto m = co_await b->Receive();
          if (!m.ok()) co_return;
          arrived.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count());
        }
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return arrived.size() == 2; }));
  EXPECT_GE(arrived[0], 0.150);
  EXPECT_GE(arrived[1], 0.150 + 0.200);
  // The other way (b has no emulated link) nothing waits: b answers, a receives (no bound).
  b->SendEnvelope([&](proto::Envelope::Builder e) { e.initHeartbeat().setDaemonId("back"); });
  std::string got;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto m = co_await a->Receive();
        if (m.ok()) got = (*m)->root().getHeartbeat().getDaemonId().cStr();
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return !got.empty(); }));
  EXPECT_EQ(got, "back");
}

// Frames on an emulated link travel together, as on a real one: the link takes them in at its
// bandwidth (Drained() then returns), and each arrives its latency later; the sender is not held
// for one latency per frame (which throttled asynchronous values to one per latency).
TEST(HandshakeTest, AnEmulatedLinkCarriesSeveralFramesAtOnce) {
  asio::io_context io;
  NetOptions slow = WithKey("k");
  slow.emulated_link = [](const PeerIdentity&) -> std::optional<EmulatedLink> {
    return EmulatedLink{std::chrono::milliseconds(150), 1e9};
  };
  ConnectionPtr a, b;
  std::tie(a, b) = Authenticated(io, slow, WithKey("k"));
  ASSERT_TRUE(a && b);
  const auto sent = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) {
    a->SendEnvelope([&](proto::Envelope::Builder e) {
      e.initHeartbeat().setDaemonId("v" + std::to_string(i));
    });
  }
  std::vector<std::string> arrived;
  std::optional<size_t> arrived_when_drained;
  double first_after = 0;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        co_await a->Drained();
        arrived_when_drained = arrived.size();
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        for (int i = 0; i < 5; ++i) {
          auto m = co_await b->Receive();
          if (!m.ok()) co_return;
          if (arrived.empty())
            first_after =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
          arrived.push_back((*m)->root().getHeartbeat().getDaemonId().cStr());
        }
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return arrived.size() == 5 && arrived_when_drained; }));
  EXPECT_EQ(*arrived_when_drained, 0u);  // drained onto the link long before the latency ends
  EXPECT_GE(first_after, 0.150);
  EXPECT_EQ(arrived, (std::vector<std::string>{"v0", "v1", "v2", "v3", "v4"}));  // in order
}

TEST(HandshakeTest, GarbageInsteadOfHelloIsRefused) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  auto b = Connection::Create(std::move(sb), WithKey("k"), Side::kServer);
  std::optional<Status> result;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> { result = co_await b->Handshake(proto::Role::SUPERNODE, "sn"); },
      asio::detached);
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  asio::write(sa, asio::buffer(junk, sizeof junk - 1));
  RunUntil(io, [&] { return result.has_value(); });
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->ok());
  EXPECT_NE(result->code(), StatusCode::kTimeout) << result->ToString();
}

}  // namespace
}  // namespace aiac::net
