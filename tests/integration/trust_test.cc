// Trust no volunteer (docs/security.md): the attacks a holder of the cluster key could make
// before identities, made again against real processes, and what the platform does instead;
// daemons that enroll with a one-time token; a revocation list spread by the super-nodes.
#include <capnp/message.h>
#include <signal.h>

#include <regex>

#include "apps/synthetic/workload.h"
#include "checkpoint/proof_wire.h"
#include "core/endpoint.h"
#include "integration/cluster_fixture.h"
#include "net/capnp_bytes.h"
#include "net/connection.h"
#include "support/loopback.h"

namespace aiac::testing {
namespace {

namespace asio = net::asio;
using namespace std::chrono_literals;

class TrustTest : public ClusterFixture {
 protected:
  // The synthetic job of these tests: 3 tasks, checkpointed every 0.1 s on two backups, long
  // enough (seconds) to be attacked and to lose a daemon under way.
  static constexpr uint64_t kItems = 6000, kIterations = 100, kBaseCost = 2000;
  // Starts it on four daemons of super-node `sn` (the spawner reserving a spare); its summary
  // goes to syn.json. The checksum a run that lost nothing ends with is ExpectedChecksum(seed).
  spawner::ChildProcess StartSyntheticJob(const std::string& sn, uint64_t seed) {
    for (const char* d : {"d1", "d2", "d3", "d4"}) StartDaemon(d, {sn});
    EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d4 registered"); })) << Log("sn1");
    WriteFile(dir_ / "spawner.toml",
              ReadFile(dir_ / "key.toml") + "spares = 1\nprogress_ms = 100\n");
    const std::string job =
        WriteJob("syn.toml",
                 "name = \"syn\"\napp = \"synthetic\"\ntasks = 3\ntimeout_s = 300\n"
                 "backups = 2\ncheckpoint_seconds = 0.1\n[params]\nitems = " +
                     std::to_string(kItems) + "\niterations = " + std::to_string(kIterations) +
                     "\nbase_cost = " + std::to_string(kBaseCost) +
                     "\nseed = " + std::to_string(seed) + "\n");
    return Start("aiac-spawner",
                 {"run", "--config", dir_ / "spawner.toml", "--supernode", sn, job, "--json",
                  dir_ / "syn.json"},
                 dir_ / "spawner.log");
  }
  static double ExpectedChecksum(uint64_t seed) {
    synthetic::WorkloadSpec spec;
    spec.items = kItems;
    spec.iterations = kIterations;
    spec.base_cost = kBaseCost;
    spec.seed = seed;
    return static_cast<double>(synthetic::ExpectedChecksum(spec));
  }

  // The address daemon `d` listens on, from its log.
  Endpoint AddressOf(const std::string& d) {
    const std::string l = Log(d);
    const size_t p = l.find("listening on ") + 13;
    return *ParseEndpoint(l.substr(p, l.find(' ', p) - p));
  }

  // Dials `to` once as `role`/`id` with `options`; the handshake's outcome and the connection.
  Result<net::ConnectionPtr> DialOnce(asio::io_context& io, Endpoint to,
                                      const net::NetOptions& options, proto::Role role,
                                      const std::string& id, proto::Role expect) {
    std::optional<Result<net::ConnectionPtr>> out;
    net::RetryPolicy once;
    once.attempts = 1;
    asio::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          out = co_await net::Dial(to, options, role, id, expect, once);
        },
        asio::detached);
    EXPECT_TRUE(RunIoUntil(
        io, [&] { return out.has_value(); }, 30s));
    return out ? std::move(*out) : Result<net::ConnectionPtr>(Timeout("no answer"));
  }

  // Options with a certificate `rogue` made for `id` as `role`, believing the platform's
  // authority (so that it takes the platform's processes for what they are).
  net::NetOptions Rogue(const TestAuthority& rogue, const std::string& id, proto::Role role) {
    Ed25519Key key = *Ed25519Key::Generate();
    auto cert = net::Certify(rogue.key(), id, role, key.PublicKey(), net::UnixNow() + 86400);
    net::NetOptions o;
    o.cluster_key = kClusterKey;
    o.identity = std::make_shared<const net::NodeIdentity>(
        net::NodeIdentity{std::move(key), *cert, authority_.MakeTrust()});
    return o;
  }

  // Whether the other side refused: the handshake failed, or its Refuse came right after.
  bool Refused(asio::io_context& io, const Result<net::ConnectionPtr>& conn) {
    if (!conn.ok()) return conn.status().code() == StatusCode::kUnauthenticated;
    auto msg = Next(io, *conn);
    return !msg || msg->root().isRefuse();
  }

  // The next message on `conn`, or null when it closed first.
  std::unique_ptr<net::IncomingMessage> Next(asio::io_context& io, const net::ConnectionPtr& conn) {
    std::optional<Result<std::unique_ptr<net::IncomingMessage>>> got;
    asio::co_spawn(
        io, [&]() -> net::awaitable<void> { got = co_await conn->Receive(); }, asio::detached);
    EXPECT_TRUE(RunIoUntil(
        io, [&] { return got.has_value(); }, 30s));
    if (!got || !got->ok()) return nullptr;
    return std::move(**got);
  }
};

TEST_F(TrustTest, TheClusterKeyAloneOrARogueAuthoritysCertificateGetsNothing) {
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("sn1", "daemon d1 registered") && LogHas("sn1", "daemon d2 registered");
  })) << Log("sn1");
  const Endpoint sn_ep = *ParseEndpoint(sn);
  asio::io_context io;
  net::NetOptions keyless;  // what every volunteer held before identities
  keyless.cluster_key = kClusterKey;
  TestAuthority rogue;  // certifies whatever its holder wants; nobody believes it
  // Re-register live daemon d1 at the attacker's address (the old identity hijack), claim the
  // super-node role, ask for daemons, talk to d1 as its spawner.
  // Each is refused, told why (the super-node logs the first refusal of each second).
  const std::vector<std::tuple<net::NetOptions, proto::Role, std::string, std::string>> attempts{
      {keyless, proto::Role::DAEMON, "d1", "shows no certificate"},
      {Rogue(rogue, "d1", proto::Role::DAEMON), proto::Role::DAEMON, "d1",
       "not signed by a trusted authority"},
      {Rogue(rogue, "sn-evil", proto::Role::SUPERNODE), proto::Role::SUPERNODE, "sn-evil",
       "not signed by a trusted authority"},
      {Rogue(rogue, "sp", proto::Role::SPAWNER), proto::Role::SPAWNER, "sp",
       "not signed by a trusted authority"}};
  for (const auto& [options, role, id, why] : attempts) {
    auto conn = DialOnce(io, sn_ep, options, role, id, proto::Role::SUPERNODE);
    EXPECT_EQ(conn.status().code(), StatusCode::kUnauthenticated) << conn.status().ToString();
    EXPECT_NE(conn.status().message().find("refused: \"handshake: "), std::string::npos)
        << conn.status().ToString();
    EXPECT_NE(conn.status().message().find(why), std::string::npos) << conn.status().ToString();
  }
  auto to_daemon =
      DialOnce(io, AddressOf("d1"), keyless, proto::Role::SPAWNER, "sp", proto::Role::DAEMON);
  EXPECT_NE(to_daemon.status().message().find("shows no certificate"), std::string::npos)
      << to_daemon.status().ToString();
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "shows no certificate"); })) << Log("sn1");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("d1", "shows no certificate"); })) << Log("d1");
  EXPECT_FALSE(LogHas("sn1", "re-registered")) << Log("sn1");
  // d1 is still the one registered under its id: a job runs on it.
  EXPECT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 50)}),
            0)
      << Log("spawner");
}

// The attack of a key holder on a task's checkpoints, by a member with a certificate of its own:
// reading them and storing a forged one with a later iteration and a recomputed checksum. Both
// are refused; the task's daemon is then killed, and the task resumes from a genuine checkpoint:
// the run's checksum is the one of a run that lost nothing.
TEST_F(TrustTest, AMemberCanNeitherReadNorForgeAnotherTasksCheckpoints) {
  const std::string sn = StartSupernode("sn1");
  auto spawner = StartSyntheticJob(sn, 9);
  std::smatch m;
  std::string log;
  ASSERT_TRUE(WaitUntil(
      [&] {
        log = Log("spawner");
        return std::regex_search(log, m,
                                 std::regex("job (syn-[0-9a-f]+): task 0 on daemon (d[0-9]+), "
                                            "checkpoints kept by (d[0-9]+), (d[0-9]+)"));
      },
      120s))
      << Log("spawner");
  const std::string job_id = m[1], owner = m[2], backup = m[3];

  asio::io_context io;
  const net::NetOptions evil = Member("d-evil", proto::Role::DAEMON);
  auto conn =
      DialOnce(io, AddressOf(backup), evil, proto::Role::DAEMON, "d-evil", proto::Role::DAEMON);
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  // Read task 0's checkpoint, without a capability and with one it granted itself.
  const auto self_granted = checkpoint::GrantCapability(evil.identity->key, job_id, 0, 1, "d-evil",
                                                        evil.identity->key.PublicKey());
  for (bool with_capability : {false, true}) {
    (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
      auto g = e.initCheckpointGet();
      g.setJob(job_id);
      g.setTask(0);
      if (with_capability) checkpoint::FillCapability(self_granted, g.initCapability());
    });
    auto reply = Next(io, *conn);
    ASSERT_TRUE(reply && reply->root().isCheckpointData());
    EXPECT_FALSE(reply->root().getCheckpointData().getFound());
    EXPECT_EQ(reply->root().getCheckpointData().getState().size(), 0u);
  }
  // Store a forged checkpoint of a later iteration, its checksum recomputed.
  const std::string forged = "a forged state";
  auto c = checkpoint::MakeCheckpoint(job_id, 0, 1, 1u << 30, forged);
  (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
    auto p = e.initCheckpointPut();
    p.setJob(job_id);
    p.setTask(0);
    p.setIncarnation(1);
    p.setIteration(c.iteration);
    p.setChecksum(c.checksum);
    p.setState(net::AsBytes(forged));
    checkpoint::FillProof(checkpoint::ProveCheckpoint(evil.identity->key, self_granted, c),
                          p.initProof());
  });
  while (auto msg = Next(io, *conn)) EXPECT_FALSE(msg->root().isCheckpointAck());
  EXPECT_TRUE(WaitUntil([&] { return LogHas(backup, "may not read task 0"); })) << Log(backup);
  EXPECT_TRUE(WaitUntil([&] { return LogHas(backup, "refused its checkpoint of task 0"); }))
      << Log(backup);

  // Genuine checkpoints of task 0 reach its backups; then its daemon dies.
  ASSERT_TRUE(WaitUntil(
      [&] { return std::regex_search(Log("spawner"), std::regex("checkpoints [1-9][0-9]")); },
      120s))
      << Log("spawner");
  const auto pids = ProcessesMatching(dir_.path(), "--id " + owner + " ");
  ASSERT_EQ(pids.size(), 1u);
  kill(pids[0], SIGKILL);
  auto code = spawner.WaitFor(240s);
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  EXPECT_EQ(*code, 0) << Log("spawner");
  auto j = Json("syn.json");
  EXPECT_EQ(j["status"], "converged") << j.dump();
  ASSERT_EQ(j["replacements"].size(), 1u) << j.dump();
  EXPECT_GT(j["replacements"][0]["restored_iteration"].get<uint64_t>(), 0u)
      << j.dump() << Log("d1") << Log("d2") << Log("d3") << Log("d4");
  EXPECT_EQ(j["result"]["checksum"].get<double>(), ExpectedChecksum(9));
}

TEST_F(TrustTest, ADaemonEnrollsOnceWithItsTokenAndRunsJobs) {
  // The authority, offline: an enroller certificate for the super-node, a token for vol-1.
  ASSERT_EQ(RunSpawner({"certify", "--authority-key", AuthorityKeyFile(), "--role", "super-node",
                        "--id", "sn1", "--enroller", "--new-key", dir_ / "sn1-id"},
                       "certify"),
            0)
      << Log("certify");
  ASSERT_EQ(RunSpawner({"enroll-token", "--authority-key", AuthorityKeyFile(), "--supernode", "sn1",
                        "--id", "vol-1"},
                       "tokens"),
            0)
      << Log("tokens");
  const std::string line = Log("tokens");
  ASSERT_TRUE(line.starts_with("vol-1 aiac-enroll-")) << line;
  const std::string token = line.substr(6, line.find('\n') - 6);
  const std::string sn = StartSupernode("sn1", {"--identity-key-file", dir_ / "sn1-id.key",
                                                "--certificate-file", dir_ / "sn1-id.cert"});
  ASSERT_TRUE(LogHas("sn1", "enrolls daemons")) << Log("sn1");

  // A volunteer's daemon: a key made at its first start, its certificate from the token.
  auto volunteer = [&](const std::string& name, const std::string& with) {
    return std::vector<std::string>{"--config",
                                    dir_ / "key.toml",
                                    "--supernode",
                                    sn,
                                    "--data",
                                    dir_ / name,
                                    "--power",
                                    "1",
                                    "--identity-key-file",
                                    dir_ / (name + "/identity.key"),
                                    "--certificate-file",
                                    dir_ / (name + "/identity.cert"),
                                    "--enroll-token",
                                    with};
  };
  procs_.insert_or_assign("vol-1",
                          Start("aiac-daemon", volunteer("vol-1", token), dir_ / "vol-1.log"));
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon vol-1 registered"); })) << Log("vol-1");
  EXPECT_TRUE(LogHas("sn1", "enrolled daemon vol-1")) << Log("sn1");
  EXPECT_TRUE(LogHas("vol-1", "enrolled by super-node sn1")) << Log("vol-1");
  StartDaemon("d2", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn1", "daemon d2 registered"); })) << Log("sn1");
  EXPECT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 100)}),
            0)
      << Log("spawner");

  // The same token again, from another machine: refused, and that daemon does not start.
  auto again = Start("aiac-daemon", volunteer("vol-copy", token), dir_ / "vol-copy.log");
  auto code = again.WaitFor(60s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(LogHas("vol-copy", "was used already")) << Log("vol-copy");
  // A token for another super-node, or no token at all: neither starts.
  ASSERT_EQ(RunSpawner({"enroll-token", "--authority-key", AuthorityKeyFile(), "--supernode", "sn2",
                        "--id", "vol-2"},
                       "tokens2"),
            0);
  const std::string other = Log("tokens2").substr(6, Log("tokens2").find('\n') - 6);
  auto elsewhere = Start("aiac-daemon", volunteer("vol-2", other), dir_ / "vol-2.log");
  code = elsewhere.WaitFor(60s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(LogHas("vol-2", "the one the token names")) << Log("vol-2");
  // vol-1 restarted: its certificate is kept, the token is not needed any more.
  procs_.erase("vol-1");
  auto args = volunteer("vol-1", token);
  args.resize(args.size() - 2);
  procs_.insert_or_assign("vol-1", Start("aiac-daemon", args, dir_ / "vol-1b.log"));
  EXPECT_TRUE(WaitUntil([&] { return LogHas("vol-1b", "registered with super-node"); }))
      << Log("vol-1b");
}

// A daemon's key is revoked while it runs a task: the list, put in one super-node's revocation
// file, reaches its peer super-node, the daemons and the spawner; the daemon is cut off, its
// task resumes elsewhere, and it cannot come back.
TEST_F(TrustTest, ARevokedDaemonIsCutOffEverywhereAndItsTaskMovesOn) {
  const std::string sn1 = StartSupernode("sn1");
  const std::string sn2 = StartSupernode("sn2", {"--peer", sn1});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("sn2", "linked with super-node"); })) << Log("sn2");
  auto spawner = StartSyntheticJob(sn1, 4);
  std::smatch m;
  std::string log;
  ASSERT_TRUE(WaitUntil(
      [&] {
        log = Log("spawner");
        return std::regex_search(log, m, std::regex("task 0 on daemon (d[0-9]+)")) &&
               LogHas("spawner", "starting");
      },
      120s))
      << Log("spawner");
  const std::string victim = m[1];
  ASSERT_EQ(RunSpawner({"revoke", "--authority-key", AuthorityKeyFile(), "--list",
                        dir_ / "sn1.db/revocations.json", "--certificate",
                        dir_ / ("ids/" + victim + ".cert")},
                       "revoke"),
            0)
      << Log("revoke");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "adopted from"); })) << Log("sn1");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn2", "adopted from super-node sn1"); }))
      << Log("sn2");
  EXPECT_TRUE(WaitUntil([&] { return LogHas("spawner", "revocation list"); })) << Log("spawner");
  auto code = spawner.WaitFor(240s);
  ASSERT_TRUE(code.has_value()) << Log("spawner");
  EXPECT_EQ(*code, 0) << Log("spawner");
  auto j = Json("syn.json");
  EXPECT_EQ(j["status"], "converged") << j.dump();
  ASSERT_GE(j["replacements"].size(), 1u) << j.dump();
  EXPECT_EQ(j["replacements"][0]["failed"], victim) << j.dump();
  EXPECT_EQ(j["result"]["checksum"].get<double>(), ExpectedChecksum(4));
  // The revoked daemon is refused wherever it knocks, and the lists were kept for a restart.
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn1", "its key") && LogHas("sn1", "is revoked"); }))
      << Log("sn1");
  EXPECT_FALSE(ReadFile(dir_ / "sn2.db/revocations.json").empty());
  EXPECT_FALSE(ReadFile(dir_ / (victim + "/revocations.json")).empty());
  // Refused by every super-node it knows, it gives up instead of knocking again and again.
  auto gone = procs_.at(victim).WaitFor(60s);
  ASSERT_TRUE(gone.has_value()) << Log(victim);
  EXPECT_EQ(*gone, 2);
  EXPECT_TRUE(LogHas(victim, "every super-node refused this daemon")) << Log(victim);
}

}  // namespace
}  // namespace aiac::testing
