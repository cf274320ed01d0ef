#include "supernode/registry.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>

#include "storage/rocksdb_support.h"
#include "support/test_support.h"

namespace aiac::supernode {
namespace {

using std::chrono::milliseconds;
using Clock = Registry::Clock;

DaemonRecord Daemon(const std::string& id, bool busy = false, const std::string& job = "") {
  DaemonRecord r;
  r.id = id;
  r.address = "127.0.0.1:1";
  r.cluster = "c";
  r.power = 2.5;
  r.cores = 4;
  r.busy = busy;
  r.job = job;
  r.version = "0.1.0";
  return r;
}

TEST(RegistryTest, RegisterHeartbeatExpire) {
  Registry reg("sn", nullptr);
  const auto t0 = Clock::time_point{} + std::chrono::hours(1);
  ASSERT_OK(reg.Register(Daemon("a"), t0));
  ASSERT_OK(reg.Register(Daemon("b"), t0));
  EXPECT_EQ(reg.Find("a")->owner, "sn");
  EXPECT_TRUE(reg.Heartbeat("a", false, t0 + milliseconds(900)));
  EXPECT_FALSE(reg.Heartbeat("zzz", false, t0));
  auto gone = reg.Expire(t0 + milliseconds(1500), milliseconds(1000));
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0].id, "b");
  EXPECT_EQ(reg.size(), 1u);
  EXPECT_TRUE(reg.Expire(t0 + milliseconds(1900), milliseconds(1000)).empty());
  EXPECT_EQ(reg.Expire(t0 + milliseconds(2000), milliseconds(1000)).size(), 1u);
}

// What `aiac-spawner status` shows: free, granted (busy, no task reported yet) or busy (a
// heartbeat said it runs a task), with the heartbeat's age; then the lost ones.
TEST(RegistryTest, ViewTellsGrantedFromRunningAndRemembersTheLost) {
  Registry reg("sn", nullptr);
  const auto t0 = Clock::time_point{} + std::chrono::hours(1);
  ASSERT_OK(reg.Register(Daemon("a"), t0));
  ASSERT_OK(reg.Register(Daemon("b"), t0));
  ASSERT_OK(reg.Register(Daemon("c"), t0));
  ASSERT_TRUE(reg.Grant("job1", 2, t0).ok());
  ASSERT_TRUE(reg.Heartbeat("a", true, t0 + milliseconds(300)));
  auto view = reg.View(t0 + milliseconds(500));
  ASSERT_EQ(view.size(), 3u);
  EXPECT_TRUE(view[0].record.busy && view[0].running);    // a: busy
  EXPECT_TRUE(view[1].record.busy && !view[1].running);   // b: granted
  EXPECT_TRUE(!view[2].record.busy && !view[2].running);  // c: free
  EXPECT_EQ(view[0].heartbeat_age, milliseconds(200));
  EXPECT_EQ(view[1].heartbeat_age, milliseconds(500));
  // b and c fall silent and expire: lost, with their silence, until they register again.
  ASSERT_TRUE(reg.Heartbeat("a", true, t0 + milliseconds(1400)));
  ASSERT_EQ(reg.Expire(t0 + milliseconds(1500), milliseconds(1000)).size(), 2u);
  auto lost = reg.Lost(t0 + milliseconds(2000));
  ASSERT_EQ(lost.size(), 2u);
  EXPECT_EQ(lost[0].record.id, "b");
  EXPECT_EQ(lost[0].record.job, "job1");
  EXPECT_EQ(lost[0].heartbeat_age, milliseconds(2000));
  ASSERT_OK(reg.Register(Daemon("c"), t0 + milliseconds(2100)));
  lost = reg.Lost(t0 + milliseconds(2200));
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].record.id, "b");
  // Forgotten after kLostMemory; never more than kMaxLost.
  EXPECT_TRUE(reg.Lost(t0 + Registry::kLostMemory + milliseconds(1501)).empty());
  for (size_t i = 0; i < Registry::kMaxLost + 10; ++i) {
    ASSERT_OK(reg.Register(Daemon("x" + std::to_string(i)), t0 + milliseconds(3000)));
  }
  reg.Expire(t0 + milliseconds(9000), milliseconds(1000));
  EXPECT_EQ(reg.Lost(t0 + milliseconds(9000)).size(), Registry::kMaxLost);
}

TEST(RegistryTest, EmptyIdRefused) {
  Registry reg("sn", nullptr);
  EXPECT_EQ(reg.Register(Daemon(""), Clock::now()).code(), StatusCode::kInvalidArgument);
}

TEST(RegistryTest, GrantIsAllOrNothingInRegistrationOrder) {
  Registry reg("sn", nullptr);
  const auto now = Clock::now();
  for (auto id : {"z", "y", "x"}) ASSERT_OK(reg.Register(Daemon(id), now));
  auto too_many = reg.Grant("j", 4, now);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(reg.free_count(), 3u);
  auto two = reg.Grant("j", 2, now);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].id, "z");
  EXPECT_EQ((*two)[1].id, "y");
  EXPECT_TRUE((*two)[0].busy);
  EXPECT_EQ((*two)[0].job, "j");
  EXPECT_EQ(reg.free_count(), 1u);
  EXPECT_FALSE(reg.Grant("k", 2, now).ok());
}

// The index of free daemons against a scan of every record, through random registrations (new,
// again idle, again busy), grants, releases, removals, reclaimed leases and expiries: a grant
// takes the free daemons registered first, and free_count counts them.
TEST(RegistryTest, GrantsFollowRegistrationOrderThroughEveryChangeAsAScanWouldFindThem) {
  std::mt19937 random(37);
  for (int round = 0; round < 40; ++round) {
    Registry reg("sn", nullptr);
    auto now = Clock::now();
    std::vector<std::string> jobs;
    for (int step = 0; step < 300; ++step) {
      now += milliseconds(1);
      const std::string id = "d" + std::to_string(random() % 40);
      const std::vector<DaemonRecord> all = reg.Snapshot();  // in registration order
      std::vector<std::string> free_ids;
      for (const auto& r : all) {
        if (!r.busy) free_ids.push_back(r.id);
      }
      ASSERT_EQ(reg.free_count(), free_ids.size());
      switch (random() % 7) {
        case 0:
        case 1:
          ASSERT_OK(reg.Register(Daemon(id), now));
          break;
        case 2:
          ASSERT_OK(reg.Register(Daemon(id, true, "running"), now));
          break;
        case 3: {
          const size_t count = random() % 6;
          const std::string job = "j" + std::to_string(step);
          auto granted = reg.Grant(job, count, now);
          ASSERT_EQ(granted.ok(), count <= free_ids.size());
          if (!granted.ok()) break;
          jobs.push_back(job);
          ASSERT_EQ(granted->size(), count);
          for (size_t i = 0; i < count; ++i) EXPECT_EQ((*granted)[i].id, free_ids[i]);
          break;
        }
        case 4:
          if (!jobs.empty()) {
            std::vector<std::string> ids;
            for (const auto& r : all) ids.push_back(r.id);
            reg.Release(jobs[random() % jobs.size()], ids);
          }
          break;
        case 5:
          reg.Remove(id);
          break;
        case 6:
          reg.Heartbeat(id, random() % 2 == 0, now);
          reg.ReclaimIdleGrants(now, milliseconds(20));
          reg.Expire(now, milliseconds(60));
          break;
      }
    }
  }
}

TEST(RegistryTest, ReleaseFreesOnlyThatJobsDaemons) {
  Registry reg("sn", nullptr);
  const auto now = Clock::now();
  for (auto id : {"a", "b", "c"}) ASSERT_OK(reg.Register(Daemon(id), now));
  ASSERT_TRUE(reg.Grant("j1", 2, now).ok());
  ASSERT_TRUE(reg.Grant("j2", 1, now).ok());
  EXPECT_EQ(reg.Release("j2", {"a", "b"}), 0u);
  EXPECT_EQ(reg.Release("j1", {"a", "b", "c", "unknown"}), 2u);
  EXPECT_EQ(reg.free_count(), 2u);
  EXPECT_TRUE(reg.Find("c")->busy);
}

TEST(RegistryTest, IdleReRegisterKeepsGrantBusyReRegisterRecordsJob) {
  Registry reg("sn", nullptr);
  const auto now = Clock::now();
  ASSERT_OK(reg.Register(Daemon("a"), now));
  ASSERT_TRUE(reg.Grant("j", 1, now).ok());
  // The grant is made before the daemon hears of it: an idle re-register must not undo it.
  ASSERT_OK(reg.Register(Daemon("a"), now));
  EXPECT_TRUE(reg.Find("a")->busy);
  ASSERT_OK(reg.Register(Daemon("b", true, "other"), now));
  EXPECT_TRUE(reg.Find("b")->busy);
  EXPECT_EQ(reg.Find("b")->job, "other");
}

// A daemon that re-registers while it runs its task (it left a silent super-node and came back,
// or was expired meanwhile) says it is busy, not for which job: the grant's job stays, so that
// the job's release frees it.
TEST(RegistryTest, ABusyReRegisterKeepsTheGrantsJobForItsRelease) {
  Registry reg("sn", nullptr);
  const auto now = Clock::now();
  ASSERT_OK(reg.Register(Daemon("a"), now));
  ASSERT_TRUE(reg.Grant("j", 1, now).ok());
  ASSERT_OK(reg.Register(Daemon("a", true), now));
  EXPECT_EQ(reg.Find("a")->job, "j");
  EXPECT_EQ(reg.Release("j", {"a"}), 1u);
  EXPECT_EQ(reg.free_count(), 1u);
  // Expired meanwhile (its heartbeats were read late), it gets its grant's job back.
  ASSERT_TRUE(reg.Grant("k", 1, now).ok());
  ASSERT_EQ(reg.Expire(now + milliseconds(2000), milliseconds(1000)).size(), 1u);
  ASSERT_OK(reg.Register(Daemon("a", true), now + milliseconds(2000)));
  EXPECT_EQ(reg.Find("a")->job, "k");
  EXPECT_EQ(reg.Release("k", {"a"}), 1u);
  // Unknown to this super-node, a running daemon is busy for a job it cannot name.
  ASSERT_OK(reg.Register(Daemon("b", true), now));
  EXPECT_TRUE(reg.Find("b")->busy);
  EXPECT_EQ(reg.Find("b")->job, "");
}

TEST(RegistryTest, GrantIsALeaseReclaimedWhenTheDaemonStaysIdle) {
  Registry reg("sn", nullptr);
  const auto t0 = Clock::now();
  ASSERT_OK(reg.Register(Daemon("idle"), t0));
  ASSERT_OK(reg.Register(Daemon("working"), t0));
  ASSERT_TRUE(reg.Grant("j", 2, t0).ok());
  EXPECT_TRUE(reg.ReclaimIdleGrants(t0 + milliseconds(500), milliseconds(1000)).empty());
  reg.Heartbeat("working", true, t0 + milliseconds(900));
  auto reclaimed = reg.ReclaimIdleGrants(t0 + milliseconds(1500), milliseconds(1000));
  ASSERT_EQ(reclaimed.size(), 1u);
  EXPECT_EQ(reclaimed[0].id, "idle");
  EXPECT_FALSE(reg.Find("idle")->busy);
  EXPECT_TRUE(reg.Find("working")->busy);
}

TEST(RegistryPersistenceTest, RestartKeepsDaemonsAndGrants) {
  testing::TempDir dir;
  const auto now = Clock::now();
  {
    auto store = RocksDbRegistryStore::Open(dir / "db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Registry reg("sn", store->get());
    ASSERT_OK(reg.Register(Daemon("a"), now));
    ASSERT_OK(reg.Register(Daemon("b"), now));
    ASSERT_OK(reg.Register(Daemon("c"), now));
    ASSERT_TRUE(reg.Grant("job1", 1, now).ok());
    ASSERT_EQ(reg.Expire(now + milliseconds(10), milliseconds(0)).size(), 3u);
    ASSERT_OK(reg.Register(Daemon("a"), now));
    ASSERT_OK(reg.Register(Daemon("b"), now));
    ASSERT_TRUE(reg.Grant("job1", 1, now).ok());
  }
  auto store = RocksDbRegistryStore::Open(dir / "db");
  ASSERT_TRUE(store.ok());
  Registry reg("sn", store->get());
  ASSERT_OK(reg.Load(now));
  ASSERT_EQ(reg.size(), 2u);  // c expired for good
  EXPECT_TRUE(reg.Find("a")->busy);
  EXPECT_EQ(reg.Find("a")->job, "job1");
  EXPECT_FALSE(reg.Find("b")->busy);
  EXPECT_EQ(reg.Find("b")->power, 2.5);
  EXPECT_EQ(reg.Find("b")->cores, 4u);
  EXPECT_EQ(reg.Find("b")->version, "0.1.0");
  // Registration order survives, and new daemons come after the old ones.
  ASSERT_OK(reg.Register(Daemon("new"), now));
  auto snap = reg.Snapshot();
  ASSERT_EQ(snap.size(), 3u);
  EXPECT_EQ(snap[0].id, "a");
  EXPECT_EQ(snap[1].id, "b");
  EXPECT_EQ(snap[2].id, "new");
}

TEST(RegistryPersistenceTest, CorruptRecordIsReportedNotIgnored) {
  EXPECT_EQ(Decode("{not json").status().code(), StatusCode::kCorruption);
  EXPECT_EQ(Decode("{\"id\": 1}").status().code(), StatusCode::kCorruption);
  DaemonRecord r = Daemon("x", true, "j");
  r.owner = "sn";
  r.seq = 9;
  auto back = Decode(Encode(r));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, r);
}

// A store whose writes fail while `full` is set, as a full or read-only disk would.
class FlakyStore final : public RegistryStore {
 public:
  bool full = false;
  std::map<std::string, DaemonRecord> records;
  Status Put(const DaemonRecord& r) override {
    if (full) return ResourceExhausted("disk full");
    records[r.id] = r;
    return Status::Ok();
  }
  Status Delete(const std::string& id) override {
    if (full) return ResourceExhausted("disk full");
    records.erase(id);
    return Status::Ok();
  }
  Result<std::vector<DaemonRecord>> LoadAll() override { return std::vector<DaemonRecord>(); }
  Status ReplaceAll(const std::vector<DaemonRecord>& all) override {
    if (full) return ResourceExhausted("disk full");
    records.clear();
    for (const auto& r : all) records[r.id] = r;
    return Status::Ok();
  }
};

TEST(RegistryStoreFaultTest, FullStoreKeepsServingFromMemoryThenCatchesUp) {
  FlakyStore store;
  Registry reg("sn", &store);
  const auto now = Clock::now();
  ASSERT_OK(reg.Register(Daemon("a"), now));
  ASSERT_OK(reg.Register(Daemon("gone"), now));
  store.full = true;
  ASSERT_OK(reg.Register(Daemon("b"), now));  // served from memory
  EXPECT_EQ(reg.store_error().code(), StatusCode::kResourceExhausted);
  auto granted = reg.Grant("job", 1, now);  // "a", the first registered
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  reg.Heartbeat("a", true, now + milliseconds(18));
  reg.Heartbeat("b", false, now + milliseconds(18));
  ASSERT_EQ(reg.Expire(now + milliseconds(20), milliseconds(5)).size(), 1u);  // "gone"
  EXPECT_EQ(store.records.count("b"), 0u);
  EXPECT_FALSE(reg.Resync().ok());  // still full: nothing changes
  store.full = false;
  ASSERT_OK(reg.Resync());
  EXPECT_OK(reg.store_error());
  // The store now mirrors memory: b added, the grant recorded, the expired one removed.
  ASSERT_EQ(store.records.size(), 2u);
  EXPECT_TRUE(store.records.at("a").busy);
  EXPECT_EQ(store.records.at("a").job, "job");
  EXPECT_FALSE(store.records.at("b").busy);
  EXPECT_EQ(store.records.count("gone"), 0u);
}

// A store that counts its writes: single ones (Put) and batches (PutAll, with their sizes).
struct CountingStore final : RegistryStore {
  int puts = 0, batches = 0;
  std::vector<size_t> batch_sizes;
  std::map<std::string, DaemonRecord> records;
  Status Put(const DaemonRecord& r) override {
    ++puts;
    records[r.id] = r;
    return Status::Ok();
  }
  Status PutAll(const std::vector<DaemonRecord>& all) override {
    ++batches;
    batch_sizes.push_back(all.size());
    for (const auto& r : all) records[r.id] = r;
    return Status::Ok();
  }
  Status Delete(const std::string& id) override {
    records.erase(id);
    return Status::Ok();
  }
  Result<std::vector<DaemonRecord>> LoadAll() override { return std::vector<DaemonRecord>(); }
  Status ReplaceAll(const std::vector<DaemonRecord>&) override { return Status::Ok(); }
};

// A grant of many daemons is one synced write, and so is their release: an fsync per daemon
// made a grant of 100 take 150-200 ms. What was written survives a reopen.
TEST(RegistryStoreTest, AGrantAndItsReleaseAreOneWriteEachAndSurviveAReopen) {
  CountingStore counting;
  Registry reg("sn", &counting);
  const auto now = Clock::now();
  for (int i = 0; i < 10; ++i) ASSERT_OK(reg.Register(Daemon("d" + std::to_string(i)), now));
  const int registrations = counting.puts;
  auto granted = reg.Grant("job", 6, now);
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  EXPECT_EQ(counting.puts, registrations);
  EXPECT_EQ(counting.batches, 1);
  std::vector<std::string> ids;
  for (const auto& d : *granted) ids.push_back(d.id);
  EXPECT_EQ(reg.Release("job", ids), 6u);
  EXPECT_EQ(counting.batches, 2);
  EXPECT_EQ(counting.puts, registrations);

  testing::TempDir dir;
  {
    auto store = RocksDbRegistryStore::Open(dir / "db");
    ASSERT_TRUE(store.ok());
    Registry durable("sn", store->get());
    for (int i = 0; i < 5; ++i) ASSERT_OK(durable.Register(Daemon("d" + std::to_string(i)), now));
    auto three = durable.Grant("job", 3, now);
    ASSERT_TRUE(three.ok());
    // The first three registered: the order a grant keeps.
    EXPECT_EQ((*three)[0].id, "d0");
    EXPECT_EQ((*three)[2].id, "d2");
  }
  auto store = RocksDbRegistryStore::Open(dir / "db");
  ASSERT_TRUE(store.ok());
  auto all = (*store)->LoadAll();
  ASSERT_TRUE(all.ok());
  int busy = 0;
  for (const auto& r : *all) busy += r.busy && r.job == "job";
  EXPECT_EQ(busy, 3);
}

// Group commit: registrations only mark their daemons, and one write stores them all as the
// registry holds them at that moment (a grant made meanwhile kept, a removed daemon not written
// back).
TEST(RegistryStoreTest, GroupCommitWritesStagedRegistrationsOnceAsTheyStandThen) {
  CountingStore store;
  Registry reg("sn", &store);
  reg.set_group_commit(true);
  const auto now = Clock::now();
  for (const char* id : {"a", "b", "c", "d"}) ASSERT_OK(reg.Register(Daemon(id), now));
  EXPECT_EQ(store.puts + store.batches, 0);
  EXPECT_EQ(reg.staged(), 4u);
  auto granted = reg.Grant("job", 1, now);  // "a": the grant is written at once
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  ASSERT_EQ(store.batches, 1);
  EXPECT_TRUE(reg.Remove("c"));
  ASSERT_OK(reg.Register(Daemon("b"), now));  // registered twice before the commit
  reg.CommitStaged();
  EXPECT_EQ(store.puts, 0);
  ASSERT_EQ(store.batches, 2);
  EXPECT_EQ(store.batch_sizes[1], 3u);  // a, b and d, once each
  EXPECT_EQ(reg.staged(), 0u);
  ASSERT_EQ(store.records.size(), 3u);
  EXPECT_TRUE(store.records.at("a").busy);  // as the registry holds it: granted
  EXPECT_EQ(store.records.at("a").job, "job");
  EXPECT_EQ(store.records.count("c"), 0u);
  reg.CommitStaged();  // nothing staged: no write
  EXPECT_EQ(store.batches, 2);
}

TEST(RegistryStoreFaultTest, StoreRefusesToOpenWithoutRoomAndSaysHowMuch) {
  testing::TempDir dir;
  Status s = storage::CheckWritable(dir / "db", "registry store", uint64_t{1} << 62);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("free on its filesystem"), std::string::npos) << s.message();
  EXPECT_OK(storage::CheckWritable(dir / "db", "registry store", 1));
}

TEST(RegistryStoreFaultTest, CorruptWalRecoveryIsReported) {
  testing::TempDir dir;
  {
    auto store = RocksDbRegistryStore::Open(dir / "db");
    ASSERT_TRUE(store.ok());
    EXPECT_TRUE((*store)->recovery_warnings().empty());
    for (int i = 0; i < 100; ++i) ASSERT_OK((*store)->Put(Daemon("d" + std::to_string(i))));
  }  // closed without a flush: the records live in the write-ahead log only
  std::string wal;
  for (const auto& e : std::filesystem::directory_iterator(dir / "db")) {
    if (e.path().extension() == ".log") wal = e.path();
  }
  ASSERT_FALSE(wal.empty());
  std::string bytes = testing::ReadFile(wal);
  for (size_t k = 0; k < 4; ++k) bytes[bytes.size() / 2 + k] = '\xff';
  testing::WriteFile(wal, bytes);
  auto store = RocksDbRegistryStore::Open(dir / "db");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_FALSE((*store)->recovery_warnings().empty());
  EXPECT_NE((*store)->recovery_warnings()[0].find("Corruption"), std::string::npos)
      << (*store)->recovery_warnings()[0];
  auto loaded = (*store)->LoadAll();
  ASSERT_TRUE(loaded.ok());
  EXPECT_LT(loaded->size(), 100u);
}

}  // namespace
}  // namespace aiac::supernode
