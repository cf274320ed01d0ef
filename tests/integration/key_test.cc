// Keys: no process starts with a missing, short, placeholder or plainly not random key or a key
// file others can read; keygen makes keys only the owner can read; no key ever reaches a log.
#include <sys/stat.h>

#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using KeyTest = ClusterFixture;

// Starts a super-node with `config` that must refuse to start; returns its exit code (nullopt
// if it is still running after a generous 20 s).
std::optional<int> SupernodeExit(TempDir& dir, const std::string& config,
                                 std::map<std::string, spawner::ChildProcess>& procs) {
  procs.insert_or_assign("sn", Start("aiac-supernode",
                                     {"--config", config, "--listen", "127.0.0.1:0", "--data",
                                      dir / "sn.db", "--ready-file", dir / "sn.addr"},
                                     dir / "sn.log"));
  return procs.at("sn").WaitFor(std::chrono::seconds(20));
}

TEST_F(KeyTest, PlaceholderKeyIsRefusedWithHowToMakeOne) {
  WriteFile(dir_ / "p.toml", "cluster_key = \"change-me-to-a-long-random-secret\"\n");
  auto code = SupernodeExit(dir_, dir_ / "p.toml", procs_);
  ASSERT_TRUE(code.has_value()) << "started with the placeholder key";
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(LogHas("sn", "placeholder")) << Log("sn");
  EXPECT_TRUE(LogHas("sn", "aiac-spawner keygen")) << Log("sn");
}

TEST_F(KeyTest, ShortKeyIsRefused) {
  WriteFile(dir_ / "s.toml", "cluster_key = \"fifteen-bytes!!\"\n");
  auto code = SupernodeExit(dir_, dir_ / "s.toml", procs_);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(LogHas("sn", "shorter than 16")) << Log("sn");
}

// Long enough but plainly not random: a repeated byte, a short pattern repeated.
TEST_F(KeyTest, KeyThatIsNotRandomIsRefused) {
  for (const char* key : {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abababababababababababab"}) {
    SCOPED_TRACE(key);
    WriteFile(dir_ / "r.toml", std::string("cluster_key = \"") + key + "\"\n");
    auto code = SupernodeExit(dir_, dir_ / "r.toml", procs_);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 2);
    EXPECT_TRUE(LogHas("sn", "cluster_key is not random")) << Log("sn");
    EXPECT_TRUE(LogHas("sn", "aiac-spawner keygen")) << Log("sn");
  }
}

TEST_F(KeyTest, KeyFileReadableByOthersIsRefusedAndAPrivateOneWorks) {
  WriteFile(dir_ / "cluster.key", std::string(kClusterKey) + "\n");
  WriteFile(dir_ / "f.toml", "cluster_key_file = \"cluster.key\"\n");  // relative to f.toml
  chmod((dir_ / "cluster.key").c_str(), 0644);
  auto code = SupernodeExit(dir_, dir_ / "f.toml", procs_);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_TRUE(LogHas("sn", "chmod 600")) << Log("sn");

  chmod((dir_ / "cluster.key").c_str(), 0600);
  procs_.insert_or_assign("sn", Start("aiac-supernode",
                                      {"--config", dir_ / "f.toml", "--listen", "127.0.0.1:0",
                                       "--data", dir_ / "sn.db", "--ready-file", dir_ / "sn.addr"},
                                      dir_ / "sn.log"));
  const std::string sn = WaitForFile(dir_ / "sn.addr");
  ASSERT_FALSE(sn.empty()) << Log("sn");
  // A daemon with the same key inline registers: the file held the same key.
  StartDaemon("d1", {sn});
  EXPECT_TRUE(WaitUntil([&] { return LogHas("sn", "daemon d1 registered"); })) << Log("sn");
}

TEST_F(KeyTest, KeygenWritesKeysOnlyTheOwnerCanReadAndNeverOverwrites) {
  ASSERT_EQ(RunSpawner({"keygen", "--out", dir_ / "new.key"}, "keygen"), 0) << Log("keygen");
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "new.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string key = ReadFile(dir_ / "new.key");
  EXPECT_EQ(key.size(), 65u) << key;  // 64 hex characters and a newline
  EXPECT_EQ(RunSpawner({"keygen", "--out", dir_ / "new.key"}, "again"), 2);
  EXPECT_EQ(ReadFile(dir_ / "new.key"), key);

  ASSERT_EQ(RunSpawner({"keygen", "--signing", dir_ / "sign"}, "signing"), 0) << Log("signing");
  ASSERT_EQ(stat((dir_ / "sign.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(ReadFile(dir_ / "sign.key").find("BEGIN PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(ReadFile(dir_ / "sign.pub").size(), 65u);
}

TEST_F(KeyTest, NoKeyReachesALog) {
  const std::string sn = StartSupernode("sn1", {"--log-level", "trace"});
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, RingJob(2, 10),
                        "--log-level", "trace"}),
            0)
      << Log("spawner");
  for (auto name : {"sn1", "d1", "d2", "spawner"}) {
    EXPECT_FALSE(LogHas(name, kClusterKey)) << name << " logged the cluster key";
  }
}

}  // namespace
}  // namespace aiac::testing
