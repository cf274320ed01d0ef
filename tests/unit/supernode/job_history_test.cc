#include "supernode/job_history.h"

#include <gtest/gtest.h>

namespace aiac::supernode {
namespace {

net::JobStatus Job(uint64_t iteration, double change, uint32_t failures = 0, uint64_t moves = 0) {
  net::JobStatus j;
  j.id = "job-1";
  j.failures = failures;
  j.moves = moves;
  for (uint32_t t = 0; t < 2; ++t) {
    net::TaskStatus task;
    task.task = t;
    task.iteration = iteration + t;
    task.change = change;
    task.report_age_ms = 10;
    j.task_list.push_back(task);
  }
  return j;
}

TEST(JobHistoryTest, PointsPerTaskAndMarksWhereCountsRose) {
  JobHistory h;
  h.Record(Job(1, 0.5, /*failures=*/2), 100);  // counts at registration are not events
  h.Record(Job(5, 0.1, 2), 101);
  h.Record(Job(5, 0.1, 2), 102);  // nothing new: no point
  h.Record(Job(9, 0.01, 3, 40), 103.5);
  const auto j = h.ToJson("job-1");
  ASSERT_TRUE(j.is_object());
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][1]["task"], 1);
  EXPECT_EQ(j["tasks"][0]["points"],
            nlohmann::json::parse("[[0, 1, 0.5], [1, 5, 0.1], [3.5, 9, 0.01]]"));
  EXPECT_EQ(j["events"], nlohmann::json::parse(R"([{"t": 3.5, "kind": "failure", "count": 3},
                                                  {"t": 3.5, "kind": "move", "count": 40}])"));
  EXPECT_TRUE(h.ToJson("other").is_null());
  h.Forget("job-1");
  EXPECT_FALSE(h.Has("job-1"));
}

TEST(JobHistoryTest, ALongRunKeepsItsWholeSpanWithinTheBound) {
  JobHistory h;
  const int n = 5000;
  for (int i = 0; i < n; ++i) h.Record(Job(static_cast<uint64_t>(i), 1.0 / (i + 1)), i);
  const auto points = h.ToJson("job-1")["tasks"][0]["points"];
  EXPECT_LE(points.size(), JobHistory::kMaxPoints);
  EXPECT_GE(points.size(), JobHistory::kMaxPoints / 2);
  EXPECT_EQ(points.front()[0], 0);
  EXPECT_GE(points.back()[0].get<double>(), n - 20);
}

TEST(JobHistoryTest, ATaskWithoutAReportYetHasNoPoint) {
  JobHistory h;
  auto job = Job(3, 0.2);
  job.task_list[1].report_age_ms = -1;
  h.Record(job, 0);
  const auto j = h.ToJson("job-1");
  EXPECT_EQ(j["tasks"][0]["points"].size(), 1u);
  EXPECT_EQ(j["tasks"][1]["points"].size(), 0u);
}

}  // namespace
}  // namespace aiac::supernode
