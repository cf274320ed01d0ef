// App plugins as daemons receive them: stored by hash, reused, and refused when the bytes do
// not match the hash.
#include "runtime/plugin.h"

#include "checkpoint/proof_wire.h"
#include "core/endpoint.h"
#include "core/read_file.h"
#include "core/sha256.h"
#include "integration/cluster_fixture.h"
#include "net/connection.h"
#include "runtime/code_signing.h"

namespace aiac::testing {
namespace {

using PluginTest = ClusterFixture;

TEST_F(PluginTest, SecondJobReusesTheStoredPlugin) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  const std::string job = RingJob(2, 10);
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job}, "first"), 0)
      << Log("first");
  EXPECT_NE(Log("first").find("sending plugin"), std::string::npos) << Log("first");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job}, "second"), 0)
      << Log("second");
  EXPECT_EQ(Log("second").find("sending plugin"), std::string::npos) << Log("second");
  // Stored under the daemon's data directory, named by hash.
  auto bytes = ReadWholeFile(BinPath("../plugins/libaiac_app_ring.so"));
  ASSERT_TRUE(bytes.ok());
  EXPECT_TRUE(
      std::filesystem::exists(dir_ / ("d1/plugins/" + runtime::Hex(Sha256(*bytes)) + ".so")));
}

TEST_F(PluginTest, PluginWhoseHashDoesNotMatchIsRefused) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("d1", {sn});
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "listening on"); })) << Log("d1");
  const std::string log = Log("d1");
  const std::string addr =
      log.substr(log.find("listening on ") + 13,
                 log.find(' ', log.find("listening on ") + 13) - (log.find("listening on ") + 13));
  auto ep = ParseEndpoint(addr);
  ASSERT_TRUE(ep.ok()) << addr;

  net::asio::io_context io;
  const net::NetOptions opts = Member("test-spawner", proto::Role::SPAWNER);
  const std::string claimed = Sha256("the real plugin");
  // Signed by the publisher d1 trusts: the hash check is what refuses it.
  auto publisher = runtime::SigningKey::Load(dir_ / "publisher.key");
  ASSERT_TRUE(publisher.ok()) << publisher.status().message();
  const std::string signature = publisher->Sign(claimed);
  std::vector<std::string> replies;
  net::asio::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        auto conn = co_await net::Dial(*ep, opts, proto::Role::SPAWNER, "test-spawner",
                                       proto::Role::DAEMON);
        if (!conn.ok()) co_return;
        (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
          auto a = e.initAssignTask();
          a.setJob("j");
          a.setTask(0);
          a.setTaskCount(2);
          a.setApp("ring");
          a.setPluginHash(
              kj::arrayPtr(reinterpret_cast<const kj::byte*>(claimed.data()), claimed.size()));
          a.setPluginSignature(
              kj::arrayPtr(reinterpret_cast<const kj::byte*>(signature.data()), signature.size()));
          a.setIncarnation(1);
          checkpoint::FillCapability(checkpoint::GrantCapability(opts.identity->key, "j", 0, 1,
                                                                 "d1", (*conn)->peer().public_key),
                                     a.initCapability());
        });
        for (int i = 0; i < 2; ++i) {
          auto msg = co_await (*conn)->Receive();
          if (!msg.ok()) co_return;
          auto r = (*msg)->root().getTaskReady();
          replies.push_back(r.getNeedPlugin() ? "need-plugin" : r.getError().cStr());
          if (r.getNeedPlugin()) {
            // Another plugin, labelled with its own (correct) hash: not the one the task names.
            const std::string other = "not the real plugin";
            const std::string other_hash = Sha256(other);
            (*conn)->SendEnvelope([&](proto::Envelope::Builder e) {
              auto pd = e.initPluginData();
              pd.setSha256(kj::arrayPtr(reinterpret_cast<const kj::byte*>(other_hash.data()),
                                        other_hash.size()));
              pd.setBytes(
                  kj::arrayPtr(reinterpret_cast<const kj::byte*>(other.data()), other.size()));
            });
          }
        }
        (*conn)->Close();
      },
      net::asio::detached);
  io.run_for(std::chrono::seconds(10));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0], "need-plugin");
  EXPECT_NE(replies[1].find("plugin hash mismatch"), std::string::npos) << replies[1];
  EXPECT_TRUE(LogHas("d1", "plugin hash mismatch")) << Log("d1");
  // Refused before anything was written, so nothing could be loaded.
  const auto dir = std::filesystem::path(dir_ / "d1/plugins");
  EXPECT_TRUE(!std::filesystem::exists(dir) || std::filesystem::is_empty(dir));
}

TEST_F(PluginTest, DaemonWithTrustedKeysRunsOnlyPluginsSignedByThem) {
  ASSERT_EQ(RunSpawner({"keygen", "--signing", dir_ / "trusted"}, "keygen1"), 0) << Log("keygen1");
  ASSERT_EQ(RunSpawner({"keygen", "--signing", dir_ / "other"}, "keygen2"), 0) << Log("keygen2");
  std::string pub = ReadFile(dir_ / "trusted.pub");
  pub.pop_back();
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn}, "key.toml", "1", {"--trusted-key", pub});
  const std::string job = RingJob(2, 10);

  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                        dir_ / "unsigned.json", "--sign-with", ""},
                       "unsigned"),
            1)
      << Log("unsigned");
  EXPECT_NE(Json("unsigned.json")["error"].get<std::string>().find("is not signed;"),
            std::string::npos)
      << Json("unsigned.json")["error"];
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                        dir_ / "other.json", "--sign-with", dir_ / "other.key"},
                       "other"),
            1)
      << Log("other");
  EXPECT_NE(Json("other.json")["error"].get<std::string>().find("not signed by a trusted key"),
            std::string::npos)
      << Json("other.json")["error"];
  for (auto d : {"d1", "d2"}) {
    const auto plugins = std::filesystem::path(dir_ / (std::string(d) + "/plugins"));
    EXPECT_TRUE(!std::filesystem::exists(plugins) || std::filesystem::is_empty(plugins)) << d;
  }
  // The refused runs gave their daemons back; a run signed by the trusted key converges.
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                        dir_ / "trusted.json", "--sign-with", dir_ / "trusted.key"},
                       "trusted"),
            0)
      << Log("trusted");
  EXPECT_EQ(Json("trusted.json")["status"], "converged");
}

// BOINC's model: the publisher signs the plugin once (`sign`, PLUGIN.sig beside it), and a
// spawner with no private key submits work for it. A daemon that revoked the publisher's key
// refuses it although its trusted_keys still lists the key.
TEST_F(PluginTest, APublishersSignatureRunsWithNoKeyAtTheSpawnerUntilTheKeyIsRevoked) {
  ASSERT_EQ(RunSpawner({"keygen", "--signing", dir_ / "app-publisher"}, "keygen"), 0)
      << Log("keygen");
  std::string pub = ReadFile(dir_ / "app-publisher.pub");
  pub.pop_back();
  std::filesystem::create_directories(dir_ / "app");
  std::filesystem::copy_file(BinPath("../plugins/libaiac_app_ring.so"),
                             dir_ / "app/libaiac_app_ring.so");
  ASSERT_EQ(
      RunSpawner({"sign", dir_ / "app/libaiac_app_ring.so", "--key", dir_ / "app-publisher.key"},
                 "sign"),
      0)
      << Log("sign");
  auto key = runtime::SigningKey::Load(dir_ / "app-publisher.key");
  ASSERT_TRUE(key.ok()) << key.status().message();
  EXPECT_NE(Log("sign").find("with key " + runtime::KeyId(key->PublicKey())), std::string::npos)
      << Log("sign");
  ASSERT_TRUE(std::filesystem::exists(dir_ / "app/libaiac_app_ring.so.sig"));
  const std::string job =
      WriteJob("published.toml",
               "name = \"published\"\napp = \"ring\"\ntasks = 2\ntimeout_s = 60\n"
               "plugin = \"app/libaiac_app_ring.so\"\n[params]\nrounds = 10\n");
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn}, "key.toml", "1", {"--trusted-key", pub});
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, job, "--json",
                        dir_ / "published.json", "--sign-with", ""},
                       "published"),
            0)
      << Log("published");
  EXPECT_EQ(Json("published.json")["status"], "converged");

  // A daemon that revoked the key (as an authority's revocation list would), alone at its
  // super-node.
  const std::string sn2 = StartSupernode("sn2");
  for (auto d : {"d3", "d4"}) {
    StartDaemon(d, {sn2}, "key.toml", "1", {"--trusted-key", pub, "--revoked-key", pub});
  }
  const std::string one = WriteJob("one.toml",
                                   "name = \"one\"\napp = \"ring\"\ntasks = 1\ntimeout_s = 60\n"
                                   "plugin = \"app/libaiac_app_ring.so\"\n[params]\nrounds = 10\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn2, job, "--json",
                        dir_ / "revoked.json", "--sign-with", ""},
                       "revoked"),
            1)
      << Log("revoked");
  EXPECT_NE(Json("revoked.json")["error"].get<std::string>().find(
                "is signed by key " + runtime::KeyId(key->PublicKey()) + ", which is revoked here"),
            std::string::npos)
      << Json("revoked.json")["error"];
}

// `run --local` with the keys its daemons trust: the plugin's own signature must do.
TEST_F(PluginTest, ALocalClusterCanTrustOnlyThePublishersKey) {
  ASSERT_EQ(RunSpawner({"keygen", "--signing", dir_ / "app-publisher"}, "keygen"), 0);
  ASSERT_EQ(RunSpawner({"keygen", "--signing", dir_ / "someone"}, "keygen2"), 0);
  std::string pub = ReadFile(dir_ / "app-publisher.pub"), someone = ReadFile(dir_ / "someone.pub");
  pub.pop_back();
  someone.pop_back();
  std::filesystem::create_directories(dir_ / "app");
  std::filesystem::copy_file(BinPath("../plugins/libaiac_app_ring.so"),
                             dir_ / "app/libaiac_app_ring.so");
  const std::string job =
      WriteJob("published.toml",
               "name = \"published\"\napp = \"ring\"\ntasks = 2\ntimeout_s = 60\n"
               "plugin = \"app/libaiac_app_ring.so\"\n[params]\nrounds = 10\n");
  // Unsigned: refused before anything starts.
  EXPECT_EQ(RunSpawner({"run", "--local", "2", "--local-trusted-key", pub, job}, "unsigned"), 2);
  EXPECT_TRUE(LogHas("unsigned", "is not signed (no ")) << Log("unsigned");
  ASSERT_EQ(
      RunSpawner({"sign", dir_ / "app/libaiac_app_ring.so", "--key", dir_ / "app-publisher.key"},
                 "sign"),
      0)
      << Log("sign");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", "--local-trusted-key", pub, job, "--json",
                        dir_ / "trusted.json"},
                       "trusted"),
            0)
      << Log("trusted");
  EXPECT_EQ(Json("trusted.json")["status"], "converged");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", "--local-trusted-key", someone, job, "--json",
                        dir_ / "untrusted.json"},
                       "untrusted"),
            1)
      << Log("untrusted");
  EXPECT_NE(Json("untrusted.json")["error"].get<std::string>().find("not signed by a trusted key"),
            std::string::npos)
      << Json("untrusted.json")["error"];
}

// Signing is on unless turned off by name: a daemon that trusts no key does not start, and one
// that allows unsigned plugins says so at start and runs them.
TEST_F(PluginTest, ADaemonTrustingNoKeyDoesNotStartUnlessUnsignedPluginsAreAllowed) {
  const std::string sn = StartSupernode("sn1");
  auto refused = testing::Start(
      "aiac-daemon",
      {"--config", dir_ / "key.toml", "--id", "d0", "--data", dir_ / "d0", "--supernode", sn},
      dir_ / "d0.log");
  EXPECT_EQ(refused.WaitFor(std::chrono::seconds(60)), std::optional<int>(2)) << Log("d0");
  EXPECT_TRUE(LogHas("d0", "option 'trusted_keys' is empty")) << Log("d0");
  for (auto d : {"d1", "d2"}) {
    StartDaemon(d, {sn}, "key.toml", "1", {"--allow-unsigned-plugins", "true"});
  }
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d2", "runs unsigned plugins"); })) << Log("d2");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 5),
                        "--sign-with", ""},
                       "unsigned"),
            0)
      << Log("unsigned");
}

}  // namespace
}  // namespace aiac::testing
