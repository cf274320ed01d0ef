// The descriptor limit a super-node raises at start: a shell's soft limit would cap the daemons
// it holds.
#include "net/descriptors.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace aiac::net {
namespace {

// Puts the limit back as it was, whatever the test did to it.
class DescriptorLimitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved_), 0); }
  void TearDown() override { EXPECT_EQ(setrlimit(RLIMIT_NOFILE, &saved_), 0); }
  static rlimit Now() {
    rlimit now{};
    getrlimit(RLIMIT_NOFILE, &now);
    return now;
  }
  rlimit saved_{};
};

TEST_F(DescriptorLimitTest, TheSoftLimitIsRaisedToWhatIsWantedAndNeverLowered) {
  if (saved_.rlim_max != RLIM_INFINITY && saved_.rlim_max < 1000) GTEST_SKIP() << "hard limit";
  rlimit low = saved_;
  low.rlim_cur = 128;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EXPECT_EQ(DescriptorBudget(65536), 128u - kReservedDescriptors);
  EXPECT_EQ(RaiseDescriptorLimit(1000), 1000u);
  EXPECT_EQ(Now().rlim_cur, 1000u);
  EXPECT_EQ(Now().rlim_max, saved_.rlim_max);  // the hard limit is not touched
  EXPECT_EQ(DescriptorBudget(65536), 1000u - kReservedDescriptors);
  EXPECT_EQ(DescriptorBudget(500), 500u);
  EXPECT_EQ(RaiseDescriptorLimit(200), 1000u);
  EXPECT_EQ(Now().rlim_cur, 1000u);
}

// Whether this process may raise its hard limits (CAP_SYS_RESOURCE, bit 24 of CapEff): root in a
// container often may not.
bool MayRaiseHardLimits() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("CapEff:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> 24) & 1;
  }
  return false;
}

TEST(DescriptorLimit, PastTheHardLimitOnlyAPrivilegedProcessGoes) {
  // In a child: a hard limit lowered there stays lowered for an unprivileged process.
  const uint64_t expected = MayRaiseHardLimits() ? 4096 : 512;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit capped{512, 512};
    if (setrlimit(RLIMIT_NOFILE, &capped) != 0) _exit(2);
    const uint64_t got = RaiseDescriptorLimit(4096);
    rlimit now{};
    getrlimit(RLIMIT_NOFILE, &now);
    _exit(got == expected && now.rlim_cur == expected && now.rlim_max == expected ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "expected a limit of " << expected;
}

}  // namespace
}  // namespace aiac::net
