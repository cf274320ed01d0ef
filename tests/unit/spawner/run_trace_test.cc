#include "spawner/run_trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "spawner/supervisor.h"
#include "support/test_support.h"

namespace aiac::spawner {
namespace {

HistoryEntry Entry(HistoryEntry::Kind kind, size_t task, uint64_t iteration,
                   uint64_t checkpoints = 0, const std::string& daemon = "d1") {
  HistoryEntry e;
  e.kind = kind;
  e.task = task;
  e.incarnation = 1;
  e.iteration = iteration;
  e.change = 0.5;
  e.checkpoints = checkpoints;
  e.daemon = daemon;
  return e;
}

TEST(RunTraceTest, SlicesBetweenReportsAndMarksForCheckpointsLossesAndMoves) {
  testing::TempDir dir;
  auto trace = RunTrace::Create(dir / "t.json");
  ASSERT_TRUE(trace.ok());
  using K = HistoryEntry::Kind;
  (*trace)->Add(Entry(K::kReport, 0, 5), 1.0);
  (*trace)->Add(Entry(K::kReport, 0, 9, 1), 1.5);
  (*trace)->Add(Entry(K::kReport, 0, 9, 1), 1.75);  // no new iteration: no slice
  (*trace)->Add(Entry(K::kFailure, 0, 0), 2.0);
  (*trace)->Add(Entry(K::kResumed, 0, 7, 1, "d2"), 2.5);
  (*trace)->Add(Entry(K::kReport, 0, 12, 2, "d2"), 3.0);
  HistoryEntry move = Entry(K::kMove, 1, 0);
  move.count = 40;
  (*trace)->Add(move, 3.25);
  (*trace)->Phase("iterate", 0.5, 3.5);
  ASSERT_TRUE((*trace)->Write("job-1").ok());
  const auto doc = nlohmann::json::parse(testing::ReadFile(dir / "t.json"));
  std::vector<std::string> seen;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    std::string line = e["name"].get<std::string>() + "@" + std::to_string(e["ts"].get<int64_t>());
    if (e.contains("dur")) line += "+" + std::to_string(e["dur"].get<int64_t>());
    line += " tid " + std::to_string(e["tid"].get<int>());
    seen.push_back(line);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "iterations 6..9@1000000+500000 tid 1", "checkpoint@1500000 tid 1",
                      "daemon lost@2000000 tid 1", "replacing@2000000+500000 tid 1",
                      "iterations 8..12@2500000+500000 tid 1", "checkpoint@3000000 tid 1",
                      "items moved@3250000 tid 2", "iterate@500000+3000000 tid 0"}));
  EXPECT_EQ(doc["otherData"]["job"], "job-1");
}

TEST(RunTraceTest, AnUnwritablePathIsRefusedBeforeTheRun) {
  auto trace = RunTrace::Create("/nonexistent-dir/t.json");
  ASSERT_FALSE(trace.ok());
  EXPECT_NE(trace.status().message().find("--trace: cannot write"), std::string::npos);
}

}  // namespace
}  // namespace aiac::spawner
