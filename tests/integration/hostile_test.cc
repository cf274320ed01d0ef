// Hostile and broken peers against the real binaries: keyless clients speaking the old
// protocol, keyless TLS clients, a thousand malformed handshakes, a huge frame before
// authentication, a flood of silent connections. In every case the target says why in its log,
// stays up, keeps its descriptors and memory, and keeps serving well-behaved peers.
#include <arpa/inet.h>
#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "core/endpoint.h"
#include "integration/cluster_fixture.h"
#include "net/connection.h"
#include "support/loopback.h"

namespace aiac::testing {
namespace {

using HostileTest = ClusterFixture;
namespace asio = net::asio;
using net::tcp;

size_t OpenDescriptors(pid_t pid) {
  size_t n = 0;
  if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str())) {
    while (readdir(d) != nullptr) ++n;
    closedir(d);
  }
  return n;
}

size_t RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  size_t value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
  }
  return 0;
}

tcp::endpoint Target(const std::string& address) {
  auto ep = ParseEndpoint(address);
  EXPECT_TRUE(ep.ok()) << address;
  return tcp::endpoint(asio::ip::make_address(ep->host), ep->port);
}

// A protocol-1 Hello in plaintext: what the old reflection attack opened with.
std::string OldPlaintextHello(const std::string& id) {
  capnp::MallocMessageBuilder message;
  auto hello = message.initRoot<proto::Envelope>().initHello();
  hello.setVersion(1);
  hello.setRole(proto::Role::SUPERNODE);
  hello.setNodeId(id);
  const std::string nonce(16, 'n');
  hello.setNonce(kj::arrayPtr(reinterpret_cast<const kj::byte*>(nonce.data()), nonce.size()));
  auto words = net::EncodeFrame(message);
  return std::string(reinterpret_cast<const char*>(words.begin()), words.size() * 8);
}

// Everything the peer sends until it closes (a blocking read, bounded by a 30 s receive
// timeout in case it never does).
std::string ReadUntilClosed(tcp::socket& s) {
  timeval limit{30, 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string got;
  char buf[4096];
  for (;;) {
    net::error_code ec;
    size_t n = s.read_some(asio::buffer(buf), ec);
    if (ec) break;
    got.append(buf, n);
  }
  return got;
}

TEST_F(HostileTest, KeylessReflectionGetsNothingFromASupernode) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d2 registered"); })) << Log("sn1");
  asio::io_context io;
  // The old attack: open two connections, send a Hello on each, and reflect whatever proof the
  // super-node sends on one into the other. Now the super-node sends no Hello and no proof to
  // a peer that has not proved the key: at most a TLS alert, then it closes.
  for (int i = 0; i < 2; ++i) {
    tcp::socket s(io);
    s.connect(Target(sn));
    asio::write(s, asio::buffer(OldPlaintextHello("sn-evil")));
    const std::string reply = ReadUntilClosed(s);
    EXPECT_TRUE(reply.empty() || static_cast<unsigned char>(reply[0]) == 0x15)  // TLS alert
        << "the super-node answered a keyless peer with " << reply.size() << " bytes";
  }
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "refused connection"); })) << Log("sn1");
  EXPECT_FALSE(LogHas("sn1", "linked with super-node"));
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 20),
                        "--json", dir_ / "ok.json"}),
            0)
      << Log("spawner");
  EXPECT_EQ(Json("ok.json")["status"], "converged");
}

TEST_F(HostileTest, KeylessPeerCannotShipAPluginToADaemon) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "listening on"); })) << Log("d1");
  const std::string log = Log("d1");
  const size_t at = log.find("listening on ") + 13;
  auto ep = ParseEndpoint(log.substr(at, log.find(' ', at) - at));
  ASSERT_TRUE(ep.ok());
  asio::io_context io;
  net::NetOptions keyless;
  keyless.cluster_key = "a-guess-at-the-cluster-key";
  std::optional<Status> dialled;
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        net::RetryPolicy once;
        once.attempts = 1;
        auto conn = co_await net::Dial(*ep, keyless, proto::Role::SPAWNER, "spawner-evil",
                                       proto::Role::DAEMON, once);
        dialled = conn.status();
      },
      asio::detached);
  io.run_for(std::chrono::seconds(20));
  ASSERT_TRUE(dialled.has_value());
  EXPECT_EQ(dialled->code(), StatusCode::kUnauthenticated) << dialled->ToString();
  EXPECT_TRUE(WaitUntil([&] { return LogHas("d1", "cluster_key mismatch"); })) << Log("d1");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "d1/plugins"));
}

// A shell's soft descriptor limit (often 1,024) would cap the daemons a super-node holds: it
// raises its own towards max_connections (+ 64 for files) at start, and says how many it holds.
TEST_F(HostileTest, ASuperNodeStartedUnderALowSoftLimitRaisesIt) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < 1024) GTEST_SKIP() << "hard limit";
  rlimit low = saved;
  low.rlim_cur = 256;  // inherited by the super-node
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  StartSupernode("sn1");
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "listening on"); })) << Log("sn1");
  std::smatch m;
  const std::string log = Log("sn1");
  ASSERT_TRUE(std::regex_search(log, m, std::regex("up to ([0-9]+) connections"))) << log;
  const uint64_t held = std::stoull(m[1]);
  // Its soft limit now, from /proc: at least what the 65,536 connections by default need, or
  // its hard limit.
  std::ifstream limits("/proc/" + std::to_string(procs_.at("sn1").pid()) + "/limits");
  uint64_t soft = 0;
  for (std::string line; std::getline(limits, line);) {
    if (line.rfind("Max open files", 0) == 0) soft = std::stoull(line.substr(26));
  }
  const uint64_t hard = saved.rlim_max == RLIM_INFINITY ? UINT64_MAX : saved.rlim_max;
  EXPECT_GE(soft, std::min<uint64_t>(hard, 65536 + 64));
  EXPECT_EQ(held, std::min<uint64_t>(65536, soft - 64)) << log;
}

TEST_F(HostileTest, ThousandMalformedHandshakesLeaveNoDescriptorsBehind) {
  const std::string sn = StartSupernode("sn1");
  const pid_t pid = procs_.at("sn1").pid();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "listening on"); }));
  const size_t baseline = OpenDescriptors(pid);
  asio::io_context io;
  // The 88-byte Hello whose node id has no closing NUL, in plaintext, 1,000 times, 50 at once.
  std::string hello = OldPlaintextHello("abcdefgh");
  hello[hello.find(std::string("abcdefgh\0", 9)) + 8] = 'X';
  for (int batch = 0; batch < 20; ++batch) {
    std::vector<tcp::socket> open;
    for (int i = 0; i < 50; ++i) {
      tcp::socket s(io);
      s.connect(Target(sn));
      net::error_code ec;
      asio::write(s, asio::buffer(hello), ec);
      open.push_back(std::move(s));
    }
  }
  EXPECT_TRUE(WaitUntil([&] { return OpenDescriptors(pid) <= baseline; }, std::chrono::seconds(60)))
      << OpenDescriptors(pid) << " descriptors open, " << baseline << " before";
  // Refusals are logged at most about once a second, not once per connection.
  size_t lines = 0;
  for (char c : Log("sn1")) lines += c == '\n';
  EXPECT_LT(lines, 200u) << Log("sn1");
  StartDaemon("d1", {sn});
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
}

// Members declare what they will send; the budget is per process, not per message: four
// connections each declaring a 60 MiB message in parts, then four sending 60 MiB frames, against
// a super-node with a 100 MiB budget. The first message holds 60 MiB of it; the seven others are
// closed with one line each, and the super-node keeps serving.
TEST_F(HostileTest, DeclaredSizesShareOneBudgetAcrossConnections) {
  const std::string sn = StartSupernode("sn1", {"--memory-budget-mb", "100"});
  auto ep = ParseEndpoint(sn);
  ASSERT_TRUE(ep.ok());
  asio::io_context io;
  std::vector<net::ConnectionPtr> held;
  asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        for (int c = 0; c < 8; ++c) {
          const std::string id = "d-member" + std::to_string(c);
          auto conn = co_await net::Dial(*ep, Member(id, proto::Role::DAEMON), proto::Role::DAEMON,
                                         id, proto::Role::SUPERNODE);
          if (!conn.ok()) co_return;
          const std::string bytes(1024, 'm');
          capnp::MallocMessageBuilder message;
          auto env = message.initRoot<proto::Envelope>();
          if (c < 4) {
            auto part = env.initPart();
            part.setTotal(60u << 20);
            part.setBytes(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(bytes.data()), 1024));
          } else {
            // The start of a frame of 60 MiB (max_frame_bytes is 64 MiB): the rest never comes.
            const std::string big(60u << 20, 'f');
            auto result = env.initResult();
            result.setData(
                kj::arrayPtr(reinterpret_cast<const capnp::byte*>(big.data()), big.size()));
          }
          (*conn)->Send(message);
          held.push_back(*conn);
        }
      },
      asio::detached);
  io.run_for(std::chrono::seconds(20));
  ASSERT_EQ(held.size(), 8u);
  ASSERT_TRUE(WaitUntil([&] {
    const std::string log = Log("sn1");
    size_t refusals = 0;
    for (size_t p = 0; (p = log.find("in this process's memory budget", p)) != std::string::npos;
         ++p)
      ++refusals;
    return refusals >= 7;
  })) << Log("sn1");
  EXPECT_TRUE(LogHas("sn1", "a message of 62914560 bytes: 60.0 MiB do not fit")) << Log("sn1");
  StartDaemon("d1", {sn});
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
}

TEST_F(HostileTest, HugeFrameBeforeAuthenticationCostsNoMemory) {
  const std::string sn = StartSupernode("sn1");
  const pid_t pid = procs_.at("sn1").pid();
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "listening on"); }));
  const size_t rss_before = RssKiB(pid);
  asio::io_context io;
  size_t written = 0;
  for (int c = 0; c < 4; ++c) {
    tcp::socket s(io);
    s.connect(Target(sn));
    // A frame header announcing 60 MiB, then the bytes: the super-node must stop reading.
    uint32_t header[2] = {0, (60u << 20) / 8};
    std::string chunk(1 << 20, 'z');
    std::memcpy(chunk.data(), header, sizeof header);
    net::error_code ec;
    for (int i = 0; i < 60 && !ec; ++i) written += asio::write(s, asio::buffer(chunk), ec);
  }
  EXPECT_LT(written, 4u * (60u << 20)) << "the super-node read every byte";
  EXPECT_LT(RssKiB(pid), rss_before + 32 * 1024) << "RSS grew from " << rss_before << " KiB";
  StartDaemon("d1", {sn});
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d1 registered"); })) << Log("sn1");
}

TEST_F(HostileTest, ConnectionFloodFromOneAddressLeavesRoomForOthers) {
  WriteFile(dir_ / "flood.toml",
            std::string("cluster_key = \"") + kClusterKey +
                "\"\nmax_handshakes_per_address = 8\nhandshake_timeout_ms = 120000\n");
  std::vector<std::string> args{
      "--config", dir_ / "flood.toml", "--listen",     "127.0.0.1:0",    "--id", "sn1",
      "--data",   dir_ / "sn1.db",     "--ready-file", dir_ / "sn1.addr"};
  procs_.insert_or_assign("sn1", Start("aiac-supernode", args, dir_ / "sn1.log"));
  const std::string sn = WaitForFile(dir_ / "sn1.addr");
  ASSERT_FALSE(sn.empty()) << Log("sn1");
  asio::io_context io;
  // 300 silent connections from 127.0.0.3, held open for the whole test.
  std::vector<tcp::socket> flood;
  for (int i = 0; i < 300; ++i) {
    tcp::socket s(io);
    s.open(tcp::v4());
    s.bind(tcp::endpoint(asio::ip::make_address("127.0.0.3"), 0));
    net::error_code ec;
    s.connect(Target(sn), ec);
    if (!ec) flood.push_back(std::move(s));
  }
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "(8 silent from 127.0.0.3)"); })) << Log("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 20),
                        "--json", dir_ / "ok.json"}),
            0)
      << Log("spawner") << Log("sn1");
  EXPECT_EQ(Json("ok.json")["status"], "converged");
  size_t closed_lines = 0;
  for (size_t p = 0; (p = Log("sn1").find("closed a ", p)) != std::string::npos; ++p) {
    ++closed_lines;
  }
  EXPECT_LT(closed_lines, 60u) << "one log line per refused connection";
}

// Connections from `from` to each target that connect and then say nothing, each reopened as
// soon as the target closes it: half-open handshakes that never end. Runs on its own thread
// until destroyed.
class HalfOpenFlood {
 public:
  HalfOpenFlood(const std::vector<tcp::endpoint>& targets, int per_target, std::string from)
      : thread_([this, targets, per_target, from = std::move(from)] {
          std::vector<std::pair<int, tcp::endpoint>> fds;
          for (const auto& t : targets) {
            for (int i = 0; i < per_target; ++i) fds.emplace_back(Open(t, from), t);
          }
          while (!stop_) {
            std::vector<pollfd> polls;
            for (const auto& [fd, t] : fds) polls.push_back({fd, POLLIN, 0});
            ::poll(polls.data(), polls.size(), 20);
            for (size_t i = 0; i < fds.size(); ++i) {
              char buf[4096];
              if (fds[i].first >= 0 && polls[i].revents == 0) continue;
              if (fds[i].first >= 0 && ::recv(fds[i].first, buf, sizeof buf, MSG_DONTWAIT) > 0)
                continue;  // (a TLS alert or refusal on its way: read until the close)
              if (fds[i].first >= 0) ::close(fds[i].first);
              fds[i].first = Open(fds[i].second, from);
              ++reopened_;
            }
          }
          for (const auto& [fd, t] : fds) {
            if (fd >= 0) ::close(fd);
          }
        }) {}
  ~HalfOpenFlood() {
    stop_ = true;
    thread_.join();
  }
  size_t reopened() const { return reopened_; }

 private:
  static int Open(const tcp::endpoint& to, const std::string& from) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in local{};
    local.sin_family = AF_INET;
    ::inet_pton(AF_INET, from.c_str(), &local.sin_addr);
    ::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local);
    sockaddr_in remote{};
    remote.sin_family = AF_INET;
    remote.sin_port = htons(to.port());
    ::inet_pton(AF_INET, to.address().to_string().c_str(), &remote.sin_addr);
    ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote);
    return fd;
  }

  std::atomic<bool> stop_{false};
  std::atomic<size_t> reopened_{0};
  std::thread thread_;
};

// A flood of half-open handshakes from the address an honest spawner and its daemons use does
// not lock them out: a newcomer closes a stalled handshake to get in (net/server.h).
TEST_F(HostileTest, HalfOpenFloodDoesNotLockOutASpawnerOnItsAddress) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d2 registered"); })) << Log("sn1");
  // (d2 registered says nothing of d1's log: wait for its line too)
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "listening on "); })) << Log("d1");
  const std::string log = Log("d1");
  const size_t at = log.find("listening on ") + 13;
  const std::string d1 = log.substr(at, log.find(' ', at) - at);
  // 40 per target, more than max_handshakes_per_address (32), from 127.0.0.1 like everyone.
  HalfOpenFlood flood({Target(sn), Target(d1)}, 40, "127.0.0.1");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "(32 silent from 127.0.0.1)"); })) << Log("sn1");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 20),
                        "--json", dir_ / "ok.json"}),
            0)
      << Log("spawner") << Log("sn1");
  EXPECT_EQ(Json("ok.json")["status"], "converged");
  EXPECT_GT(flood.reopened(), 40u);
}

// The key makes a process a member; its proven role and id still limit what it may do.
TEST_F(HostileTest, MembersMayOnlyDoWhatTheirRoleAllows) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d2 registered"); })) << Log("sn1");
  const std::string job = WriteJob("cg.toml",
                                   "name = \"cg-roles\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 100\n"
                                   "[params]\nn = 120000\nbandwidth = 12\ntolerance = 1e-10\n");
  auto spawner = Start(
      "aiac-spawner",
      {"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json", dir_ / "roles.json"},
      dir_ / "spawner.log");
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("spawner", "tasks assigned"); }, std::chrono::seconds(60)))
      << Log("spawner");
  const std::string log = Log("spawner");
  const size_t at = log.find("job cg-roles-");
  const std::string job_id = log.substr(at + 4, log.find(':', at) - at - 4);
  auto address = [&](const std::string& d) {
    const std::string l = Log(d);
    const size_t p = l.find("listening on ") + 13;
    return *ParseEndpoint(l.substr(p, l.find(' ', p) - p));
  };
  asio::io_context io;
  std::vector<Status> outcomes;
  auto probe = [&](Endpoint to, proto::Role as, std::string id, proto::Role expect,
                   auto fill) -> net::awaitable<void> {
    net::RetryPolicy once;
    once.attempts = 1;
    auto conn = co_await net::Dial(to, Member(id, as), as, id, expect, once);
    if (!conn.ok()) {
      outcomes.push_back(conn.status());
      co_return;
    }
    (*conn)->SendEnvelope(fill);
    auto reply = co_await (*conn)->Receive();  // a Refuse, then the close
    while (reply.ok()) reply = co_await (*conn)->Receive();
    outcomes.push_back(reply.status());
  };
  // A daemon that runs no task of the job sends values as task 1 to task 0's daemon.
  ASSERT_TRUE(
      WaitUntil([&] { return LogHas("d1", "running task") && LogHas("d2", "running task"); }));
  const std::string task0 = LogHas("d1", "running task 0 ") ? "d1" : "d2";
  {
    asio::co_spawn(io,
                   probe(address(task0), proto::Role::DAEMON, "d-evil", proto::Role::DAEMON,
                         [&](proto::Envelope::Builder e) {
                           auto v = e.initDependencyData();
                           v.setJob(job_id);
                           v.setFromTask(1);
                           v.setToTask(0);
                           v.setIteration(1u << 30);
                           const std::string junk(8 * 100000, '\x7f');
                           v.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(junk.data()),
                                                  junk.size()));
                         }),
                   asio::detached);
  }
  // Items "passed on" along a route that does not start at the daemon that gets them: refused.
  auto relay = [&](const std::string& first_hop) {
    return [&, first_hop](proto::Envelope::Builder e) {
      auto r = e.initRelayItems();
      r.setJob(job_id);
      r.setMove(7);
      r.setToTask(0);
      auto hop = r.initRoute(1);
      hop[0].setTask(0);
      hop[0].setAddress(address(task0).ToString());
      hop[0].setDaemonId(first_hop);
      r.setItems(kj::arrayPtr(reinterpret_cast<const kj::byte*>("forged"), 6));
    };
  };
  asio::co_spawn(io,
                 probe(address(task0), proto::Role::DAEMON, "d-evil3", proto::Role::DAEMON,
                       relay("d-elsewhere")),
                 asio::detached);
  // Items for task 0 that no move of the spawner names: taken in (acknowledged) but never imported.
  bool acked = false;
  // Named: the coroutine reads its captures through the closure, which must outlive it.
  auto forged = [&]() -> net::awaitable<void> {
    net::RetryPolicy once;
    once.attempts = 1;
    auto conn = co_await net::Dial(address(task0), Member("d-evil4", proto::Role::DAEMON),
                                   proto::Role::DAEMON, "d-evil4", proto::Role::DAEMON, once);
    if (!conn.ok()) co_return;
    (*conn)->SendEnvelope(relay(task0));
    auto reply = co_await (*conn)->Receive();
    acked = reply.ok() && (*reply)->root().isLinkAck();
    (*conn)->Close();
  };
  asio::co_spawn(io, forged(), asio::detached);
  // A daemon tries to assign a task to another daemon; a spawner sends a super-node a digest.
  asio::co_spawn(io,
                 probe(address("d1"), proto::Role::DAEMON, "d-evil2", proto::Role::DAEMON,
                       [](proto::Envelope::Builder e) { e.initAssignTask().setJob("x"); }),
                 asio::detached);
  auto sn_ep = *ParseEndpoint(sn);
  asio::co_spawn(
      io,
      probe(sn_ep, proto::Role::SPAWNER, "spawner-evil", proto::Role::SUPERNODE,
            [](proto::Envelope::Builder e) { e.initRegistryDigest().setSupernodeId("sn-evil"); }),
      asio::detached);
  EXPECT_TRUE(RunIoUntil(
      io, [&] { return outcomes.size() == 4 && acked; }, std::chrono::seconds(30)));
  EXPECT_TRUE(WaitUntil([&] {
    return LogHas(task0, "items of move 7 routed through another daemon");
  })) << Log(task0);
  EXPECT_TRUE(WaitUntil([&] { return LogHas(task0, "which it does not run"); })) << Log(task0);
  EXPECT_TRUE(LogHas("d1", "unexpected message from a daemon")) << Log("d1");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "unexpected message from a spawner"); }))
      << Log("sn1");
  // The job was not disturbed: it converges to the right answer.
  auto code = spawner.WaitFor(std::chrono::seconds(110));
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  EXPECT_EQ(*code, 0) << Log("spawner");
  EXPECT_EQ(Json("roles.json")["status"], "converged");
  EXPECT_LT(Json("roles.json")["result"]["error_inf"].get<double>(), 1e-6);
}

}  // namespace
}  // namespace aiac::testing
