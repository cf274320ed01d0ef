// The run-queue monitor: procs_running read from /proc/stat (and a clear error when a file is
// not one), and N and sigma_n over the newest samples of a recorded trace.
#include "monitor/run_queue.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/test_support.h"

namespace aiac::monitor {
namespace {

using aiac::testing::TempDir;
using aiac::testing::WriteFile;

TEST(RunQueueTest, ReadsProcsRunningAndNamesAFileThatIsNotProcStat) {
  TempDir dir;
  WriteFile(dir / "stat", "cpu  1 2 3 4\nctxt 99\nprocs_running 7\nprocs_blocked 0\n");
  EXPECT_EQ(*ReadRunnable(dir / "stat"), 7);
  WriteFile(dir / "bad", "cpu 1 2\n");
  auto bad = ReadRunnable(dir / "bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("procs_running"), std::string::npos);
  WriteFile(dir / "worse", "procs_running many\n");
  EXPECT_FALSE(ReadRunnable(dir / "worse").ok());
  EXPECT_FALSE(ReadRunnable(dir / "absent").ok());
  // This host's: at least the reading thread.
  auto here = ReadRunnable();
  ASSERT_TRUE(here.ok()) << here.status().message();
  EXPECT_GE(*here, 1);
}

TEST(RunQueueTest, MeanAndDeviationOfTheNewestSamples) {
  RunQueueMonitor m(4);
  EXPECT_EQ(m.mean(), 1);  // nothing measured: the task alone
  EXPECT_EQ(m.stddev(), 0);
  for (double jobs : {9.0, 9.0, 1.0, 3.0, 1.0, 3.0}) m.Add(jobs);  // the 9s drop out
  EXPECT_EQ(m.samples(), 4u);
  EXPECT_DOUBLE_EQ(m.mean(), 2);
  EXPECT_DOUBLE_EQ(m.stddev(), 1);
  m.Add(0.2);  // never below the task itself
  EXPECT_DOUBLE_EQ(m.mean(), (3 + 1 + 3 + 1) / 4.0);
}

TEST(RunQueueTest, AHostSampleCountsTheOtherRunnableThreadsPerCore) {
  RunQueueMonitor m(1);
  m.AddHostSample(9, 2);  // 8 others on 2 cores: 4 jobs share each
  EXPECT_DOUBLE_EQ(m.mean(), 4);
  m.AddHostSample(1, 2);  // the reader alone: the task does not wait
  EXPECT_DOUBLE_EQ(m.mean(), 1);
  m.AddHostSample(5, 0);  // no core count: one
  EXPECT_DOUBLE_EQ(m.mean(), 4);
}

}  // namespace
}  // namespace aiac::monitor
