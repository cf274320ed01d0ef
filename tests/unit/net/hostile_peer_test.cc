// What a peer without the key, or with a broken Hello, can do to a connection: nothing but get
// it closed. Both ends in this process, over real loopback sockets.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/resource.h>

#include <filesystem>
#include <optional>
#include <sstream>

#include "net/connection.h"
#include "net/server.h"
#include "support/loopback.h"
#include "support/test_support.h"

namespace aiac::net {
namespace {

constexpr const char* kKey = "hostile-peer-test-key-0123456789";

using testing::ConnectLoopback;

NetOptions Options(Transport transport = Transport::kTls) {
  NetOptions o;
  o.cluster_key = kKey;
  o.transport = transport;
  o.handshake_timeout = std::chrono::milliseconds(10000);
  return o;
}

bool RunUntil(asio::io_context& io, const std::function<bool()>& done) {
  return testing::RunIoUntil(io, done);
}

// Runs server.Stop() to its end: true when it completed.
bool StopServer(asio::io_context& io, Server& server) {
  bool stopped = false;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        co_await server.Stop();
        stopped = true;
      },
      asio::detached);
  return RunUntil(io, [&] { return stopped; });
}

using End = testing::HandshakeEnd;
using testing::HandshakeBoth;

// Copies bytes both ways between two sockets, recording what passes, and can corrupt one byte
// of what goes to the server: what an attacker on the path sees and can do.
struct Relay {
  tcp::socket to_client, to_server;
  std::string seen;
  bool corrupt_next_to_server = false;

  awaitable<void> Pump(tcp::socket& from, tcp::socket& to, bool towards_server) {
    std::array<char, 16384> buf;
    for (;;) {
      auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), use_nothrow);
      if (ec) break;
      seen.append(buf.data(), n);
      if (towards_server && corrupt_next_to_server) {
        buf[n / 2] ^= 0x5a;
        corrupt_next_to_server = false;
      }
      auto [wec, w] = co_await asio::async_write(to, asio::buffer(buf.data(), n), use_nothrow);
      if (wec) break;
    }
    error_code ignored;
    to.shutdown(tcp::socket::shutdown_send, ignored);
  }
};

TEST(HostilePeerTest, ReflectedConnectionToItselfIsRefused) {
  // "Selfie": a node's own ClientHello relayed to its own server. Both ends are one process
  // with one role and id.
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  auto client = Connection::Create(std::move(sa), Options(), Side::kClient);
  auto server = Connection::Create(std::move(sb), Options(), Side::kServer);
  const auto [a, b] =
      HandshakeBoth(io, {client, proto::Role::DAEMON, "d7"}, {server, proto::Role::DAEMON, "d7"});
  for (const Status& s : {a, b}) {
    EXPECT_EQ(s.code(), StatusCode::kUnauthenticated) << s.ToString();
    EXPECT_NE(s.message().find("reflected"), std::string::npos) << s.message();
  }
}

TEST(HostilePeerTest, KeylessRelayCanNeitherReadNorAlterTheStream) {
  asio::io_context io;
  auto [client_sock, relay_client_side] = ConnectLoopback(io);
  auto [relay_server_side, server_sock] = ConnectLoopback(io);
  Relay relay{std::move(relay_client_side), std::move(relay_server_side), {}};
  asio::co_spawn(io, relay.Pump(relay.to_client, relay.to_server, true), asio::detached);
  asio::co_spawn(io, relay.Pump(relay.to_server, relay.to_client, false), asio::detached);

  auto spawner = Connection::Create(std::move(client_sock), Options(), Side::kClient);
  auto daemon = Connection::Create(std::move(server_sock), Options(), Side::kServer);
  const auto [a, b] =
      HandshakeBoth(io, {spawner, proto::Role::SPAWNER, "spawner-secret-id", proto::Role::DAEMON},
                    {daemon, proto::Role::DAEMON, "d1"});
  ASSERT_OK(a);
  ASSERT_OK(b);

  spawner->SendEnvelope(
      [](proto::Envelope::Builder e) { e.initHalt().setJob("job-plaintext-marker"); });
  std::optional<std::string> got;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto m = co_await daemon->Receive();
        got = m.ok() ? std::string((*m)->root().getHalt().getJob().cStr()) : m.status().ToString();
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return got.has_value(); }));
  EXPECT_EQ(*got, "job-plaintext-marker");
  // What crossed the relay is ciphertext: neither the ids nor the message show.
  EXPECT_EQ(relay.seen.find("job-plaintext-marker"), std::string::npos);
  EXPECT_EQ(relay.seen.find("spawner-secret-id"), std::string::npos);

  // One flipped bit in a record: the daemon rejects it and closes, it never reads a message.
  relay.corrupt_next_to_server = true;
  spawner->SendEnvelope([](proto::Envelope::Builder e) { e.initHalt().setJob("altered"); });
  std::optional<Status> second;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto m = co_await daemon->Receive();
        second = m.status();
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return second.has_value(); }));
  EXPECT_EQ(second->code(), StatusCode::kProtocol) << second->ToString();
  EXPECT_FALSE(daemon->is_open());
}

TEST(HostilePeerTest, KeylessClientGetsNoHelloAndNoAuth) {
  // The old protocol's attack started by reading the server's Hello and proof. Now the server
  // says nothing before the peer has proved the key: a keyless TLS client gets an alert.
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  NetOptions wrong = Options();
  wrong.cluster_key = "another-key-of-more-than-16-bytes";
  auto attacker = Connection::Create(std::move(sa), wrong, Side::kClient);
  auto server = Connection::Create(std::move(sb), Options(), Side::kServer);
  const auto [a, b] = HandshakeBoth(io, {attacker, proto::Role::SUPERNODE, "sn-evil"},
                                    {server, proto::Role::SUPERNODE, "sn1"});
  EXPECT_EQ(a.code(), StatusCode::kUnauthenticated) << a.ToString();
  EXPECT_EQ(b.code(), StatusCode::kUnauthenticated) << b.ToString();
  EXPECT_FALSE(server->authenticated());
}

// A Hello whose node id lacks its closing NUL (the 88-byte Hello that used to leave sockets in
// CLOSE-WAIT): the handshake returns an error at once and closes. The plaintext transport lets
// this test write the raw frame; the Hello is parsed by the same code under TLS.
TEST(HostilePeerTest, HelloWithBrokenTextIsRefusedAtOnce) {
  asio::io_context io;
  auto [raw, sb] = ConnectLoopback(io);
  auto server =
      Connection::Create(std::move(sb), Options(Transport::kPlaintextBenchmarkOnly), Side::kServer);
  std::optional<Status> result;
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        result = co_await server->Handshake(proto::Role::SUPERNODE, "sn1");
      },
      asio::detached);

  capnp::MallocMessageBuilder message;
  auto hello = message.initRoot<proto::Envelope>().initHello();
  hello.setVersion(kProtocolVersion);
  hello.setRole(proto::Role::DAEMON);
  hello.setNodeId("abcdefgh");
  auto words = EncodeFrame(message);
  std::string bytes(reinterpret_cast<const char*>(words.begin()), words.size() * 8);
  const size_t at = bytes.find(std::string("abcdefgh\0", 9));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 8] = 'X';  // the NUL that ends the text
  asio::write(raw, asio::buffer(bytes));

  ASSERT_TRUE(RunUntil(io, [&] { return result.has_value(); }));
  EXPECT_EQ(result->code(), StatusCode::kProtocol) << result->ToString();
  EXPECT_NE(result->message().find("malformed"), std::string::npos) << result->message();
  EXPECT_TRUE(RunUntil(io, [&] { return !server->is_open(); }));
}

TEST(HostilePeerTest, BadNodeIdsAreRefused) {
  for (const std::string& id :
       {std::string("evil\nsn1 granted everything"), std::string(200, 'a'), std::string("")}) {
    asio::io_context io;
    auto [sa, sb] = ConnectLoopback(io);
    auto client = Connection::Create(std::move(sa), Options(), Side::kClient);
    auto server = Connection::Create(std::move(sb), Options(), Side::kServer);
    const auto [a, b] = HandshakeBoth(io, {client, proto::Role::DAEMON, id},
                                      {server, proto::Role::SUPERNODE, "sn1"});
    EXPECT_EQ(b.code(), StatusCode::kProtocol) << b.ToString();
    EXPECT_EQ(b.message().find('\n'), std::string::npos) << "a newline reached the log line";
    EXPECT_LT(b.message().size(), 300u);
  }
}

TEST(HostilePeerTest, UnexpectedRoleIsRefused) {
  asio::io_context io;
  auto [sa, sb] = ConnectLoopback(io);
  auto spawner = Connection::Create(std::move(sa), Options(), Side::kClient);
  auto other = Connection::Create(std::move(sb), Options(), Side::kServer);
  const auto [a, b] = HandshakeBoth(io, {spawner, proto::Role::SPAWNER, "s1", proto::Role::DAEMON},
                                    {other, proto::Role::SUPERNODE, "sn1"});
  EXPECT_EQ(a.code(), StatusCode::kUnauthenticated) << a.ToString();
  EXPECT_NE(a.message().find("expected a daemon"), std::string::npos) << a.message();
}

TEST(HostilePeerTest, ServerCapsHandshakesPerAddressAndStillServesOthers) {
  asio::io_context io;
  ServerLimits limits;
  limits.max_handshakes_per_address = 3;
  int served = 0;
  Server server(io, Options(), limits, proto::Role::SUPERNODE,
                MakeLogger("test", spdlog::level::off), [&](ConnectionPtr) -> awaitable<void> {
                  ++served;
                  co_return;
                });
  server.set_id("sn1");
  auto bound = server.Listen(Endpoint{"127.0.0.1", 0});
  ASSERT_OK(bound.status());
  server.Start();
  const auto target = tcp::endpoint(asio::ip::make_address("127.0.0.1"), bound->port);
  // Ten silent connections from 127.0.0.3: three wait for their first bytes (the newest: each
  // newcomer closes the oldest), seven are closed.
  std::vector<tcp::socket> flood;
  for (int i = 0; i < 10; ++i) {
    tcp::socket s(io);
    s.open(tcp::v4());
    s.bind(tcp::endpoint(asio::ip::make_address("127.0.0.3"), 0));
    s.connect(target);
    flood.push_back(std::move(s));
  }
  ASSERT_TRUE(RunUntil(io, [&] { return server.silent_connections() == 3; }));
  EXPECT_EQ(server.open_connections(), 3u);
  EXPECT_EQ(server.handshakes_in_progress(), 0u);
  // A well-behaved peer from another address is served meanwhile.
  std::optional<Status> dialled;
  // Named, not temporaries: g++ 12 mishandles temporaries bound to references across co_await.
  const Endpoint at{"127.0.0.1", bound->port};
  const NetOptions options = Options();
  const std::string id = "d1";
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto c = co_await Dial(at, options, proto::Role::DAEMON, id, proto::Role::SUPERNODE);
        dialled = c.status();
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return dialled.has_value() && served == 1; }));
  ASSERT_OK(*dialled);
  ASSERT_TRUE(StopServer(io, server));
}

// Handshakes that began and stalled (a byte, then nothing) fill the per-address cap; a newcomer
// from that address closes the oldest stalled one instead of being refused.
TEST(HostilePeerTest, ServerClosesAStalledHandshakeToAdmitANewcomer) {
  asio::io_context io;
  ServerLimits limits;
  limits.max_handshakes_per_address = 3;
  limits.stalled_handshake = std::chrono::milliseconds(50);
  int served = 0;
  Server server(io, Options(), limits, proto::Role::SUPERNODE,
                MakeLogger("test", spdlog::level::off), [&](ConnectionPtr) -> awaitable<void> {
                  ++served;
                  co_return;
                });
  server.set_id("sn1");
  auto bound = server.Listen(Endpoint{"127.0.0.1", 0});
  ASSERT_OK(bound.status());
  server.Start();
  const auto target = tcp::endpoint(asio::ip::make_address("127.0.0.1"), bound->port);
  std::vector<tcp::socket> stalled;
  for (int i = 0; i < 3; ++i) {
    tcp::socket s(io);
    s.connect(target);
    asio::write(s, asio::buffer("\x16", 1));  // the first byte of a TLS record, then nothing
    stalled.push_back(std::move(s));
  }
  ASSERT_TRUE(RunUntil(io, [&] { return server.handshakes_in_progress() == 3; }));
  std::optional<Status> dialled;
  const Endpoint at{"127.0.0.1", bound->port};
  const NetOptions options = Options();
  const std::string id = "d1";
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        auto c = co_await Dial(at, options, proto::Role::DAEMON, id, proto::Role::SUPERNODE);
        dialled = c.status();
      },
      asio::detached);
  ASSERT_TRUE(RunUntil(io, [&] { return dialled.has_value() && served == 1; }));
  ASSERT_OK(*dialled);
  EXPECT_EQ(server.handshakes_in_progress(), 2u);  // one stalled handshake made room
  ASSERT_TRUE(StopServer(io, server));
}

// Stop() completes only once every handler has ended, so the server (and what its handlers
// use) may be destroyed right after it.
TEST(HostilePeerTest, StopCompletesOnceEveryHandlerEnded) {
  asio::io_context io;
  int serving = 0, ended = 0;
  Server server(io, Options(), {}, proto::Role::SUPERNODE, MakeLogger("t", spdlog::level::off),
                [&](ConnectionPtr conn) -> awaitable<void> {
                  ++serving;
                  // Reads until the connection closes: only Stop() ends this.
                  for (;;) {
                    auto msg = co_await conn->Receive();
                    if (!msg.ok()) break;
                  }
                  ++ended;
                });
  server.set_id("sn1");
  auto bound = server.Listen(Endpoint{"127.0.0.1", 0});
  ASSERT_OK(bound.status());
  server.Start();
  const Endpoint at{"127.0.0.1", bound->port};
  const NetOptions options = Options();
  std::vector<ConnectionPtr> clients;
  for (int i = 0; i < 3; ++i) {
    const std::string id = "d" + std::to_string(i);
    asio::co_spawn(
        io,
        [&, id]() -> awaitable<void> {
          auto c = co_await Dial(at, options, proto::Role::DAEMON, id, proto::Role::SUPERNODE);
          if (c.ok()) clients.push_back(*c);
        },
        asio::detached);
  }
  ASSERT_TRUE(RunUntil(io, [&] { return serving == 3; }));
  EXPECT_EQ(ended, 0);
  ASSERT_TRUE(StopServer(io, server));
  // (StopServer runs the loop no further once Stop() completed.)
  EXPECT_EQ(ended, 3) << "Stop() completed before its handlers ended";
  EXPECT_EQ(server.open_connections(), 0u);
}

size_t OpenDescriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

TEST(HostilePeerTest, OutOfDescriptorsTheServerBacksOffAndRecovers) {
  asio::io_context io;
  std::ostringstream lines;
  auto log = std::make_shared<spdlog::logger>(
      "t", std::make_shared<spdlog::sinks::ostream_sink_mt>(lines));
  ServerLimits limits;
  limits.max_handshakes_per_address = 100;
  Server server(io, Options(), limits, proto::Role::SUPERNODE, log,
                [](ConnectionPtr) -> awaitable<void> { co_return; });
  server.set_id("sn1");
  auto bound = server.Listen(Endpoint{"127.0.0.1", 0});
  ASSERT_OK(bound.status());
  // Twenty connections wait in the kernel's backlog: nothing has accepted them yet.
  std::vector<tcp::socket> waiting;
  for (int i = 0; i < 20; ++i) {
    waiting.emplace_back(io);
    waiting.back().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), bound->port));
  }
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  tight.rlim_cur = OpenDescriptors() + 1;  // room for the directory listing, none for accept
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);
  server.Start();
  const auto start = std::chrono::steady_clock::now();
  const bool failed =
      RunUntil(io, [&] { return lines.str().find("accept failed") != std::string::npos; });
  // Keep the limit a little longer: the loop must wait, not spin or log per attempt.
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500)) {
    io.run_one_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(failed) << lines.str();
  const std::string text = lines.str();
  size_t logged = 0;
  for (size_t p = 0; (p = text.find("accept failed", p)) != std::string::npos; ++p) ++logged;
  EXPECT_LE(logged, 3u) << text;  // at most about one a second
  EXPECT_NE(text.find("pausing accepts"), std::string::npos) << text;
  // Descriptors are back: every waiting connection is accepted.
  EXPECT_TRUE(RunUntil(io, [&] { return server.silent_connections() == 20; }))
      << server.silent_connections() << " accepted\n"
      << lines.str();
  ASSERT_TRUE(StopServer(io, server));
}

}  // namespace
}  // namespace aiac::net
