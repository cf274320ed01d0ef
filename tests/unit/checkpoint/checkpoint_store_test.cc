// The CheckpointStore contract, run against both stores, and what only the RocksDB store
// promises: it survives a reopen and a SIGKILL, and it notices damage on disk.
#include "checkpoint/checkpoint_store.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "checkpoint/memory_checkpoint_store.h"
#include "checkpoint/rocksdb_checkpoint_store.h"
#include "support/test_support.h"

namespace aiac::checkpoint {
namespace {

std::string StateOf(uint64_t iteration, size_t bytes = 64) {
  std::string s(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) s[i] = static_cast<char>((iteration * 131 + i * 7) & 0xff);
  return s;
}

Checkpoint At(const std::string& job, uint32_t task, uint64_t incarnation, uint64_t iteration) {
  return MakeCheckpoint(job, task, incarnation, iteration, StateOf(iteration * 10 + incarnation));
}

std::vector<uint64_t> Iterations(const Loaded& l) {
  std::vector<uint64_t> out;
  for (const auto& c : l.valid) out.push_back(c.iteration);
  return out;
}

TEST(Crc32cTest, MatchesTheStandardCheckValue) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);  // RFC 3720, appendix B.4
  EXPECT_EQ(Crc32c(""), 0u);
  // The hardware and table versions agree on every length and alignment.
  const std::string bytes = StateOf(3, 1000);
  for (size_t start : {0, 1, 3, 7}) {
    for (size_t len : {0, 1, 7, 8, 9, 63, 64, 65, 500, 993}) {
      std::string_view v(bytes.data() + start, len);
      EXPECT_EQ(Crc32c(v), internal::Crc32cPortableForTest(v)) << start << " " << len;
    }
  }
}

class StoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      auto s = RocksDbCheckpointStore::Open(dir_ / "ck");
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      store_ = std::move(*s);
    } else {
      store_ = std::make_unique<MemoryCheckpointStore>();
    }
  }
  testing::TempDir dir_;
  std::unique_ptr<CheckpointStore> store_;
};

TEST_P(StoreTest, KeepsTheNewestTwoPerTaskNewestFirst) {
  for (uint64_t it : {10, 20, 30, 40}) ASSERT_TRUE(*store_->Put(At("job-a", 1, 1, it)));
  ASSERT_TRUE(*store_->Put(At("job-a", 2, 1, 5)));
  auto one = store_->Load("job-a", 1);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(Iterations(*one), (std::vector<uint64_t>{40, 30}));
  EXPECT_EQ(one->valid[0].state, At("job-a", 1, 1, 40).state);
  EXPECT_EQ(Iterations(*store_->Load("job-a", 2)), (std::vector<uint64_t>{5}));
  EXPECT_TRUE(store_->Load("job-a", 3)->valid.empty());
  EXPECT_TRUE(store_->Load("job-b", 1)->valid.empty());
}

TEST_P(StoreTest, AHigherIncarnationIsNewerWhateverItsIteration) {
  ASSERT_TRUE(*store_->Put(At("j", 0, 1, 500)));
  ASSERT_TRUE(*store_->Put(At("j", 0, 1, 600)));
  // Restored from iteration 500 on a new daemon: incarnation 2 starts again below 600.
  ASSERT_TRUE(*store_->Put(At("j", 0, 2, 510)));
  auto l = store_->Load("j", 0);
  ASSERT_EQ(l->valid.size(), 2u);
  EXPECT_EQ(l->valid[0].incarnation, 2u);
  EXPECT_EQ(l->valid[0].iteration, 510u);
  EXPECT_EQ(l->valid[1].iteration, 600u);
  // A late checkpoint of the dead incarnation is older than both: not stored.
  auto late = store_->Put(At("j", 0, 1, 550));
  ASSERT_TRUE(late.ok());
  EXPECT_FALSE(*late);
  EXPECT_EQ(Iterations(*store_->Load("j", 0)), (std::vector<uint64_t>{510, 600}));
}

TEST_P(StoreTest, RefusesDamagedCheckpointsAndBadJobNames) {
  Checkpoint c = At("j", 0, 1, 7);
  c.state[3] ^= 1;
  auto put = store_->Put(c);
  ASSERT_FALSE(put.ok());
  EXPECT_EQ(put.status().code(), StatusCode::kCorruption);
  EXPECT_FALSE(store_->Put(At("../etc", 0, 1, 7)).ok());
  EXPECT_FALSE(store_->Put(At("", 0, 1, 7)).ok());
  EXPECT_TRUE(store_->Load("j", 0)->valid.empty());
}

TEST_P(StoreTest, DropJobRemovesOnlyThatJob) {
  ASSERT_TRUE(*store_->Put(At("j1", 0, 1, 1)));
  ASSERT_TRUE(*store_->Put(At("j1", 1, 1, 1)));
  ASSERT_TRUE(*store_->Put(At("j10", 0, 1, 1)));  // a job whose id extends the other's
  EXPECT_EQ(*store_->Jobs(), (std::vector<std::string>{"j1", "j10"}));
  ASSERT_OK(store_->DropJob("j1"));
  EXPECT_TRUE(store_->Load("j1", 0)->valid.empty());
  EXPECT_TRUE(store_->Load("j1", 1)->valid.empty());
  EXPECT_EQ(store_->Load("j10", 0)->valid.size(), 1u);
  EXPECT_EQ(*store_->Jobs(), (std::vector<std::string>{"j10"}));
  ASSERT_OK(store_->DropJob("never-seen"));
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "RocksDb" : "Memory"; });

TEST(MemoryCheckpointStoreTest, ADamagedCheckpointIsSkippedAndTheOlderOneServed) {
  MemoryCheckpointStore store;
  ASSERT_TRUE(*store.Put(At("j", 0, 1, 1)));
  ASSERT_TRUE(*store.Put(At("j", 0, 1, 2)));
  store.Kept("j", 0).back().state[0] ^= 0x40;
  auto l = store.Load("j", 0);
  EXPECT_EQ(Iterations(*l), (std::vector<uint64_t>{1}));
  ASSERT_EQ(l->skipped.size(), 1u);
  EXPECT_NE(l->skipped[0].find("iteration 2"), std::string::npos) << l->skipped[0];
}

TEST(RocksDbCheckpointStoreTest, EverythingKeptSurvivesAReopen) {
  testing::TempDir dir;
  {
    auto store = RocksDbCheckpointStore::Open(dir / "ck");
    ASSERT_TRUE(store.ok());
    for (uint64_t it = 1; it <= 5; ++it) ASSERT_TRUE(*(*store)->Put(At("j", 3, 1, it)));
    ASSERT_TRUE(*(*store)->Put(At("k", 0, 4, 9)));
  }
  auto store = RocksDbCheckpointStore::Open(dir / "ck");
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(Iterations(*(*store)->Load("j", 3)), (std::vector<uint64_t>{5, 4}));
  EXPECT_EQ((*store)->Load("k", 0)->valid.at(0).incarnation, 4u);
  EXPECT_EQ(*(*store)->Jobs(), (std::vector<std::string>{"j", "k"}));
  // The index rebuilt at open still pushes the oldest out.
  ASSERT_TRUE(*(*store)->Put(At("j", 3, 1, 6)));
  EXPECT_EQ(Iterations(*(*store)->Load("j", 3)), (std::vector<uint64_t>{6, 5}));
}

TEST(RocksDbCheckpointStoreTest, EachCheckpointsProofIsKeptWithItInlineOrInAFile) {
  testing::TempDir dir;
  const size_t big = RocksDbCheckpointStore::kInFileBytes + 3;
  auto small = MakeCheckpoint("j", 1, 2, 10, StateOf(10, 100));
  small.proof = "proof of the small one";
  auto large = MakeCheckpoint("j", 1, 2, 11, StateOf(11, big));
  large.proof = std::string(300, '\x07');
  {
    auto store = RocksDbCheckpointStore::Open(dir / "ck");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(*(*store)->Put(small));
    ASSERT_TRUE(*(*store)->Put(large));
  }
  auto store = RocksDbCheckpointStore::Open(dir / "ck");
  ASSERT_TRUE(store.ok());
  auto l = (*store)->Load("j", 1);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->valid.size(), 2u);
  EXPECT_EQ(l->valid[0].proof, large.proof);
  EXPECT_EQ(l->valid[0].state, large.state);
  EXPECT_EQ(l->valid[1].proof, small.proof);
  EXPECT_EQ(l->valid[1].state, small.state);
}

TEST(RocksDbCheckpointStoreTest, ARecordOfBeforeProofsStillReadsWithoutOne) {
  testing::TempDir dir;
  { ASSERT_TRUE(RocksDbCheckpointStore::Open(dir / "ck").ok()); }
  {
    // The old inline record: "ACK1", checksum, incarnation, iteration (little-endian), state.
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir / "ck", &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    auto le = [](uint64_t v, int n) {
      std::string out;
      for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
      return out;
    };
    auto be = [](uint64_t v, int n) {
      std::string out;
      for (int i = n - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
      return out;
    };
    const std::string state = "old state";
    const std::string key = "ck/j/" + be(0, 4) + be(1, 8) + be(3, 8);
    const std::string value = "ACK1" + le(Crc32c(state), 4) + le(1, 8) + le(3, 8) + state;
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  }
  auto store = RocksDbCheckpointStore::Open(dir / "ck");
  ASSERT_TRUE(store.ok());
  auto l = (*store)->Load("j", 0);
  ASSERT_TRUE(l.ok());
  ASSERT_EQ(l->valid.size(), 1u);
  EXPECT_EQ(l->valid[0].state, "old state");
  EXPECT_TRUE(l->valid[0].proof.empty());
}

TEST(RocksDbCheckpointStoreTest, FlippedBytesOnDiskAreDetectedAndTheOlderOneServed) {
  testing::TempDir dir;
  {
    auto store = RocksDbCheckpointStore::Open(dir / "ck");
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(*(*store)->Put(At("j", 0, 1, 1)));
    ASSERT_TRUE(*(*store)->Put(At("j", 0, 1, 2)));
  }
  {
    // Damage the newest record's state as a bad disk or a buggy writer would: the record still
    // decodes, only the bytes differ.
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir / "ck", &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
    it->SeekToLast();
    ASSERT_TRUE(it->Valid());
    std::string key = it->key().ToString(), value = it->value().ToString();
    it.reset();
    value[value.size() - 9] ^= 0x01;  // inside the state, which ends the record
    rocksdb::WriteOptions w;
    w.sync = true;
    ASSERT_TRUE(db->Put(w, key, value).ok());
  }
  auto store = RocksDbCheckpointStore::Open(dir / "ck");
  ASSERT_TRUE(store.ok());
  auto l = (*store)->Load("j", 0);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(Iterations(*l), (std::vector<uint64_t>{1}));
  ASSERT_EQ(l->skipped.size(), 1u);
  EXPECT_NE(l->skipped[0].find("checksum"), std::string::npos) << l->skipped[0];
}

TEST(RocksDbCheckpointStoreTest, LargeStatesLiveInTwoSlotFilesPerTask) {
  testing::TempDir dir;
  const size_t big = RocksDbCheckpointStore::kInFileBytes + 3;
  const std::string states = dir / "ck/states";
  auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(states))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  {
    auto store = RocksDbCheckpointStore::Open(dir / "ck");
    ASSERT_TRUE(store.ok());
    for (uint64_t it = 1; it <= 5; ++it)
      ASSERT_TRUE(*(*store)->Put(MakeCheckpoint("j", 2, 1, it, StateOf(it, big))));
    ASSERT_TRUE(*(*store)->Put(MakeCheckpoint("j", 2, 1, 6, StateOf(6, 100))));  // small: inline
    EXPECT_EQ(files(), (std::vector<std::string>{"j-2-0.state", "j-2-1.state"}));
    auto l = (*store)->Load("j", 2);
    EXPECT_EQ(Iterations(*l), (std::vector<uint64_t>{6, 5}));
    EXPECT_EQ(l->valid[1].state, StateOf(5, big));
  }
  // Left behind by a job dropped during a crash: removed at open.
  testing::WriteFile(states + "/gone-0-1.state", "x");
  auto store = RocksDbCheckpointStore::Open(dir / "ck");
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(Iterations(*(*store)->Load("j", 2)), (std::vector<uint64_t>{6, 5}));
  EXPECT_EQ(files().size(), 1u);  // checkpoint 4's slot is referenced no more
  // A damaged slot file: that checkpoint is skipped, the other one served.
  ASSERT_TRUE(*(*store)->Put(MakeCheckpoint("j", 2, 1, 7, StateOf(7, big))));
  for (const auto& name : files()) {
    std::string bytes = testing::ReadFile(states + "/" + name);
    if (bytes == StateOf(7, big)) {
      bytes[big / 2] ^= 0x10;
      testing::WriteFile(states + "/" + name, bytes);
    }
  }
  auto l = (*store)->Load("j", 2);
  EXPECT_EQ(Iterations(*l), (std::vector<uint64_t>{6}));
  ASSERT_EQ(l->skipped.size(), 1u);
  EXPECT_NE(l->skipped[0].find("iteration 7"), std::string::npos) << l->skipped[0];
  ASSERT_OK((*store)->DropJob("j"));
  EXPECT_TRUE(files().empty());
}

// A child process writes checkpoints and reports each acknowledged Put on a pipe; it is
// SIGKILLed mid-stream. Every acknowledged checkpoint that is still among the newest two
// must be there when the store is opened again.
TEST(RocksDbCheckpointStoreTest, AcknowledgedCheckpointsSurviveSigkill) {
  testing::TempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto store = RocksDbCheckpointStore::Open(dir / "ck");
    if (!store.ok()) ::_exit(2);
    for (uint64_t it = 1;; ++it) {
      auto put = (*store)->Put(MakeCheckpoint("j", 0, 1, it, StateOf(it, 100000)));
      if (!put.ok() || !*put) ::_exit(3);
      if (::write(fds[1], &it, sizeof it) != sizeof it) ::_exit(4);
    }
  }
  ::close(fds[1]);
  uint64_t acked = 0, it = 0;
  while (acked < 40 && ::read(fds[0], &it, sizeof it) == sizeof it) acked = it;
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  while (::read(fds[0], &it, sizeof it) == sizeof it) acked = it;  // acks written before the kill
  ::close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited " << WEXITSTATUS(status);
  ASSERT_GE(acked, 40u);

  auto store = RocksDbCheckpointStore::Open(dir / "ck");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto l = (*store)->Load("j", 0);
  ASSERT_TRUE(l.ok());
  // A kill while a slot file was being rewritten damages only the checkpoint it pushes out.
  EXPECT_LE(l->skipped.size(), 1u);
  ASSERT_FALSE(l->valid.empty());
  // The newest is the last acknowledged one, or the one after it if the kill came between the
  // write and its acknowledgement.
  EXPECT_GE(l->valid[0].iteration, acked);
  EXPECT_LE(l->valid[0].iteration, acked + 1);
  EXPECT_EQ(l->valid[0].state, StateOf(l->valid[0].iteration, 100000));
}

}  // namespace
}  // namespace aiac::checkpoint
