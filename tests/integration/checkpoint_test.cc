// Checkpoints during a real run: each task's state reaches its backup daemons' RocksDB stores
// while it iterates, the summary counts what the backups acknowledged, and a job's checkpoints
// are deleted from every store when it ends.
#include <filesystem>

#include "checkpoint/rocksdb_checkpoint_store.h"
#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

using CheckpointTest = ClusterFixture;

TEST_F(CheckpointTest, BackupsKeepCheckpointsDuringARunAndDropThemAfter) {
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3"}) StartDaemon(d, {sn});
  // n = 30000 on 3 tasks: states of about 80 KB, kept in the stores' slot files.
  WriteJob("cg.toml",
           "name = \"ck\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\nbackups = 2\n"
           "checkpoint_every = 1\ncheckpoint_seconds = 0\n"
           "[params]\nn = 30000\nbandwidth = 8\nseed = 3\ntolerance = 1e-10\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "ck.json"}),
            0)
      << Log("spawner");
  auto j = Json("ck.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  // Every task wrote a checkpoint at each of its iterations (3 at least) to each of its 2
  // backups, and at least one per task and backup was acknowledged before the end. (With one
  // every 3 iterations, a task that ran 3 took its only one as the run ended, and its second
  // acknowledgement could come after the summary: 5 written, once in a full suite.)
  const auto min_iterations = j["iterations"]["min"].get<uint64_t>();
  ASSERT_GE(min_iterations, 3u);
  EXPECT_GE(j["checkpoints"]["written"].get<uint64_t>(), 3u * 2u);
  EXPECT_GT(j["checkpoints"]["bytes"].get<uint64_t>(),
            j["checkpoints"]["written"].get<uint64_t>() *
                checkpoint::RocksDbCheckpointStore::kInFileBytes);

  // The daemons keep running between jobs; once stopped, their stores are free to open: no
  // checkpoint of the finished job is left.
  for (const char* d : {"d1", "d2", "d3"}) {
    ASSERT_TRUE(WaitUntil([&] { return LogHas(d, "ends: halted"); })) << Log(d);
    procs_.at(d).Stop();
    auto store = checkpoint::RocksDbCheckpointStore::Open(dir_ / (std::string(d) + "/checkpoints"));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto jobs = (*store)->Jobs();
    ASSERT_TRUE(jobs.ok());
    EXPECT_TRUE(jobs->empty()) << d << " still keeps " << (*jobs)[0];
    EXPECT_TRUE(std::filesystem::is_empty(dir_ / (std::string(d) + "/checkpoints/states"))) << d;
  }
}

TEST_F(CheckpointTest, NoBackupsMeansNoCheckpoints) {
  WriteJob("cg.toml",
           "name = \"nock\"\napp = \"cg\"\ntimeout_s = 120\nbackups = 0\n"
           "[params]\nn = 20000\nbandwidth = 8\nseed = 3\ntolerance = 1e-10\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "3", dir_ / "cg.toml", "--json", dir_ / "n.json"}), 0)
      << Log("spawner");
  auto j = Json("n.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["checkpoints"]["written"], 0);
}

}  // namespace
}  // namespace aiac::testing
