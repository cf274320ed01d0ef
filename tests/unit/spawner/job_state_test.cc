// The spawner's job state (spawner/job_state.h): what is written is read back; a directory that
// is not a job state, one in use, and records that do not decode are refused in one line.
#include "spawner/job_state.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "support/test_support.h"

namespace aiac::spawner {
namespace {

using aiac::testing::TempDir;

StoredDeployment TwoTasks() {
  StoredDeployment d;
  d.granted = {{"d1", "127.0.0.1:1", "c", 1},
               {"d2", "127.0.0.1:2", "c", 2.5},
               {"d3", "127.0.0.1:3", "c", 1},
               {"d4", "127.0.0.1:4", "c", 1}};
  d.initial = 3;
  d.lost = {"d1"};
  d.places = {{"d3", "127.0.0.1:3", 2, false}, {"d2", "127.0.0.1:2", 1, false}};
  d.backups = {{1}, {0}};
  return d;
}

TEST(JobStateTest, WhatIsWrittenIsReadBack) {
  TempDir dir;
  const std::string path = dir / "state";
  {
    auto state = JobState::Create(path);
    ASSERT_TRUE(state.ok()) << state.status().message();
    StoredRun run{"job-abc",       "cg.toml", "/tmp", {"cg.toml", "--sync"},
                  {"127.0.0.1:7"}, 1700,      1,      "name = \"j\"\napp = \"cg\"\n",
                  "ab12"};
    ASSERT_TRUE((*state)->Put(run).ok());
    StoredProgress p;
    p.started = true;
    p.tighten = 100;
    p.failures = 1;
    p.replacements = {{0, "d1", "d3", 41, 0.5}};
    p.trimmed = {4, 7};
    p.app_crashes = {{2, "d4", 17, "SIGSEGV", "my app: null pointer\nbacktrace"}};
    p.balancing.mode = "dp";
    p.balancing.redistributions = 3;
    p.balancing.items_moved = 1234;
    p.balancing.predicted_gain = 2.5;
    LedgerHead head;
    head.next_move = 3;
    head.total_items = 1000;
    head.applied = {2, 1};
    head.pending = {{2, 0, 1, 12.5, true, std::string("items\0two", 9), 3, 2}};
    const LedgerEntry e1{1, runtime::MoveKind::kExport, 1, "abc"};
    const LedgerEntry e2{2, runtime::MoveKind::kImport, 0, std::string("\0\1", 2)};
    ASSERT_TRUE((*state)->Save(TwoTasks(), p, head, {{0, 0, &e1}, {0, 1, &e2}}).ok());
    // A later save stores only what is new; the move ended, its items go.
    head.pending.clear();
    head.next_move = 4;
    const LedgerEntry e3{1, runtime::MoveKind::kImport, 2, "def"};
    ASSERT_TRUE((*state)->Save(TwoTasks(), p, head, {{1, 0, &e3}}).ok());
  }
  auto state = JobState::Open(path);
  ASSERT_TRUE(state.ok()) << state.status().message();
  auto run = (*state)->run();
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->job_id, "job-abc");
  EXPECT_EQ(run->args, (std::vector<std::string>{"cg.toml", "--sync"}));
  EXPECT_EQ(run->supernodes, std::vector<std::string>{"127.0.0.1:7"});
  EXPECT_EQ(run->epoch, 1u);
  EXPECT_EQ(run->job_text, "name = \"j\"\napp = \"cg\"\n");
  EXPECT_EQ(run->plugin_sha256, "ab12");
  auto d = (*state)->deployment();
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->granted.size(), 4u);
  EXPECT_EQ(d->granted[1].power, 2.5);
  EXPECT_EQ(d->initial, 3u);
  EXPECT_EQ(d->lost, std::vector<std::string>{"d1"});
  ASSERT_EQ(d->places.size(), 2u);
  EXPECT_EQ(d->places[0].daemon, "d3");
  EXPECT_EQ(d->places[0].incarnation, 2u);
  EXPECT_EQ(d->backups, (std::vector<std::vector<uint32_t>>{{1}, {0}}));
  auto p = (*state)->progress();
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->started);
  EXPECT_EQ(p->tighten, 100);
  ASSERT_EQ(p->replacements.size(), 1u);
  EXPECT_EQ(p->replacements[0].restored_iteration, 41u);
  EXPECT_EQ(p->trimmed, (std::vector<uint64_t>{4, 7}));
  ASSERT_EQ(p->app_crashes.size(), 1u);
  EXPECT_EQ(p->app_crashes[0].task, 2u);
  EXPECT_EQ(p->app_crashes[0].daemon, "d4");
  EXPECT_EQ(p->app_crashes[0].iteration, 17u);
  EXPECT_EQ(p->app_crashes[0].cause, "SIGSEGV");
  EXPECT_EQ(p->app_crashes[0].stderr_tail, "my app: null pointer\nbacktrace");
  EXPECT_EQ(p->balancing.mode, "dp");
  EXPECT_EQ(p->balancing.redistributions, 3u);
  EXPECT_EQ(p->balancing.items_moved, 1234u);
  EXPECT_EQ(p->balancing.predicted_gain, 2.5);
  auto ledger = (*state)->ledger(2);
  ASSERT_TRUE(ledger.ok()) << ledger.status().message();
  EXPECT_EQ(ledger->head.next_move, 4u);
  EXPECT_EQ(ledger->head.total_items, 1000);
  EXPECT_EQ(ledger->head.applied, (std::vector<uint64_t>{2, 1}));
  EXPECT_TRUE(ledger->head.pending.empty());
  ASSERT_EQ(ledger->journals.size(), 2u);
  ASSERT_EQ(ledger->journals[0].size(), 2u);
  EXPECT_EQ(ledger->journals[0][1].kind, runtime::MoveKind::kImport);
  EXPECT_EQ(ledger->journals[0][1].items, std::string("\0\1", 2));
  ASSERT_EQ(ledger->journals[1].size(), 1u);
  EXPECT_EQ(ledger->journals[1][0].move, 2u);
  EXPECT_EQ(ledger->journals[1][0].items, "def");
  EXPECT_EQ((*state)->ledger(3).status().code(), StatusCode::kCorruption);
  auto end = (*state)->end();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
  ASSERT_TRUE((*state)
                  ->Put(StoredEnd{"converged", "job job-abc: converged", R"({"job_id":"job-abc"})"})
                  .ok());
  end = (*state)->end();
  ASSERT_TRUE(end.ok() && end->has_value());
  EXPECT_EQ((*end)->status, "converged");
  EXPECT_EQ((*end)->summary_json, R"({"job_id":"job-abc"})");
}

TEST(JobStateTest, AMoveUnderWayKeepsItsItems) {
  TempDir dir;
  {
    auto state = JobState::Create(dir / "state");
    ASSERT_TRUE(state.ok());
    LedgerHead head;
    head.applied = {1, 0};
    head.pending = {{5, 0, 1, 2, true, "the items", 9, 1}, {6, 1, 0, 2, false, "", 0, 0}};
    ASSERT_TRUE((*state)->Save(TwoTasks(), StoredProgress{}, head, {}).ok());
  }
  auto state = JobState::Open(dir / "state");
  ASSERT_TRUE(state.ok());
  auto ledger = (*state)->ledger(2);
  ASSERT_TRUE(ledger.ok()) << ledger.status().message();
  ASSERT_EQ(ledger->head.pending.size(), 2u);
  EXPECT_EQ(ledger->head.pending[0].items, "the items");
  EXPECT_EQ(ledger->head.pending[0].expect, 1u);
  EXPECT_FALSE(ledger->head.pending[1].importing);
}

TEST(JobStateTest, ANewJobDoesNotOverwriteAnother) {
  TempDir dir;
  {
    // A spawner lost before it had daemons leaves a state with no job in it.
    auto state = JobState::Create(dir / "state");
    ASSERT_TRUE(state.ok());
    auto run = (*state)->run();
    EXPECT_EQ(run.status().code(), StatusCode::kNotFound);
    EXPECT_NE(run.status().message().find("holds no job"), std::string::npos);
  }
  auto again = JobState::Create(dir / "state");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("holds a job already"), std::string::npos);
}

TEST(JobStateTest, WhatIsNotAJobStateIsRefusedInOneLine) {
  TempDir dir;
  auto missing = JobState::Open(dir / "nowhere");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  std::filesystem::create_directories(dir / "empty");
  auto empty = JobState::Open(dir / "empty");
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find("not a spawner state directory"), std::string::npos);
  // Another RocksDB database (a daemon's checkpoints, a super-node's registry).
  {
    rocksdb::DB* raw = nullptr;
    rocksdb::Options o;
    o.create_if_missing = true;
    ASSERT_TRUE(rocksdb::DB::Open(o, dir / "other", &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "daemon/d1", "x").ok());
  }
  auto other = JobState::Open(dir / "other");
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("not a spawner state directory"), std::string::npos);
  EXPECT_EQ(other.status().message().find('\n'), std::string::npos);
}

TEST(JobStateTest, ADirectoryInUseIsRefused) {
  TempDir dir;
  auto first = JobState::Create(dir / "state");
  ASSERT_TRUE(first.ok());
  auto second = JobState::Open(dir / "state");
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("in use by another process"), std::string::npos)
      << second.status().message();
}

// A resume right after its spawner was killed finds the lock held until the kernel has torn
// the killed process down: it waits for it a little, then says the state is in use.
TEST(JobStateTest, AnOpenMayWaitForTheHolderToLetGo) {
  TempDir dir;
  auto first = JobState::Create(dir / "state");
  ASSERT_TRUE(first.ok());
  auto refused = JobState::Open(dir / "state", std::chrono::milliseconds(100));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  std::thread holder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    first->reset();
  });
  auto waited = JobState::Open(dir / "state", std::chrono::seconds(60));
  holder.join();
  EXPECT_TRUE(waited.ok()) << waited.status().message();
  // What is no state is refused at once, waiting or not.
  auto none = JobState::Open(dir / "none", std::chrono::seconds(60));
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

// Writes records into the state directory at `dir` as another program might (no state open).
void PutRaw(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& kv) {
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (const auto& [key, value] : kv)
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
}

// The app crashes are kept since 2026-12-06: a job's progress written before holds none, and
// resumes with none; any other field missing is still corruption.
TEST(JobStateTest, AProgressWithoutAppCrashesIsReadWithNone) {
  TempDir dir;
  { ASSERT_TRUE(JobState::Create(dir / "state").ok()); }
  PutRaw(dir / "state", {{"progress", R"({"started": true, "tighten": 1, "failures": 2,)"
                                      R"( "replacements": [], "trimmed": []})"}});
  {
    auto state = JobState::Open(dir / "state");
    ASSERT_TRUE(state.ok()) << state.status().message();
    auto p = (*state)->progress();
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->failures, 2u);
    EXPECT_TRUE(p->app_crashes.empty());
    // (nor live balancing's figures, kept since 2026-12-07)
    EXPECT_EQ(p->balancing.redistributions, 0u);
  }
  PutRaw(dir / "state", {{"progress", R"({"started": true})"}});
  auto again = JobState::Open(dir / "state");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->progress().status().code(), StatusCode::kCorruption);
}

// The job file's copy and the plugin's digest are kept since 2026-12-07: a run stored before
// holds neither (its resume reads the job file, and checks no plugin); any other field missing is
// still corruption.
TEST(JobStateTest, ARunWithoutTheJobsCopyIsReadWithNone) {
  TempDir dir;
  { ASSERT_TRUE(JobState::Create(dir / "state").ok()); }
  PutRaw(dir / "state", {{"run", R"({"job_id": "j-1", "job_file": "cg.toml", "cwd": "/tmp",)"
                                 R"( "args": ["cg.toml"], "supernodes": [], "started_unix": 5,)"
                                 R"( "epoch": 2})"}});
  {
    auto state = JobState::Open(dir / "state");
    ASSERT_TRUE(state.ok()) << state.status().message();
    auto run = (*state)->run();
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->epoch, 2u);
    EXPECT_TRUE(run->job_text.empty());
    EXPECT_TRUE(run->plugin_sha256.empty());
  }
  PutRaw(dir / "state", {{"run", R"({"job_id": "j-1", "job_text": "x"})"}});
  auto again = JobState::Open(dir / "state");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->run().status().code(), StatusCode::kCorruption);
}

// The summary's JSON is kept since 2026-12-06: an end stored before holds none (`resume --json`
// says so); its status and line are still required.
TEST(JobStateTest, AnEndWithoutItsJsonIsReadWithNone) {
  TempDir dir;
  { ASSERT_TRUE(JobState::Create(dir / "state").ok()); }
  PutRaw(dir / "state",
         {{"end", R"({"status": "converged", "summary_line": "job j: converged"})"}});
  {
    auto state = JobState::Open(dir / "state");
    ASSERT_TRUE(state.ok()) << state.status().message();
    auto end = (*state)->end();
    ASSERT_TRUE(end.ok() && end->has_value()) << end.status().message();
    EXPECT_EQ((*end)->summary_line, "job j: converged");
    EXPECT_TRUE((*end)->summary_json.empty());
  }
  PutRaw(dir / "state", {{"end", R"({"summary_json": "{}"})"}});
  auto again = JobState::Open(dir / "state");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->end().status().code(), StatusCode::kCorruption);
}

TEST(JobStateTest, RecordsThatDoNotDecodeAreCorruption) {
  TempDir dir;
  { ASSERT_TRUE(JobState::Create(dir / "state").ok()); }
  PutRaw(dir / "state", {{"run", "{not json"}, {"deployment", R"({"granted": 3})"}});
  auto state = JobState::Open(dir / "state");
  ASSERT_TRUE(state.ok()) << state.status().message();
  EXPECT_EQ((*state)->run().status().code(), StatusCode::kCorruption);
  auto d = (*state)->deployment();
  EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  EXPECT_NE(d.status().message().find("'deployment'"), std::string::npos);
}

}  // namespace
}  // namespace aiac::spawner
