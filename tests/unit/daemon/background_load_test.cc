// The competing load a daemon can run on its host: the option's form, the draws, and threads
// that really take CPU time while drawn and stop when the load ends.
#include "daemon/background_load.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <set>
#include <thread>

namespace aiac::daemon {
namespace {

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec) + u.ru_utime.tv_usec * 1e-6;
}

// Waits for `done`, polling; false after `limit` (a generous bound, never the expected time).
template <typename F>
bool WaitFor(F done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(BackgroundLoadTest, TheOptionIsMeanStdAndSeconds) {
  auto spec = ParseBackgroundSpec("2,0.5,1.5");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->mean_jobs, 2);
  EXPECT_EQ(spec->std_jobs, 0.5);
  EXPECT_EQ(spec->mean_size, 1.5);
  for (const char* bad :
       {"", "2", "2,1", "2,1,0", "-1,0,1", "2,-1,1", "a,b,c", "1,1,1,1", "2,,1"}) {
    auto parsed = ParseBackgroundSpec(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("MEAN,STD,SIZE"), std::string::npos);
  }
}

TEST(BackgroundLoadTest, DrawnJobsTakeCpuTimeAndStopWithTheLoad) {
  const double before = ProcessCpuSeconds();
  {
    BackgroundLoad load({2, 0, 0.05}, 7, 4);
    ASSERT_TRUE(WaitFor([&] { return load.draws() >= 3; }));
    EXPECT_EQ(load.jobs(), 2);  // no deviation: exactly the mean, each draw
    // Two spinning threads: the process's CPU time grows (however loaded the machine is).
    ASSERT_TRUE(WaitFor([&] { return ProcessCpuSeconds() - before > 0.3; }))
        << ProcessCpuSeconds() - before;
  }
  // Joined: no thread is left spinning.
  const double after = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(ProcessCpuSeconds() - after, 0.1);
}

TEST(BackgroundLoadTest, DrawsFollowTheModelAndTheCap) {
  BackgroundLoad none({0, 0, 0.01}, 1, 4);
  ASSERT_TRUE(WaitFor([&] { return none.draws() >= 2; }));
  EXPECT_EQ(none.jobs(), 0);
  BackgroundLoad capped({10, 0, 0.01}, 1, 3);
  ASSERT_TRUE(WaitFor([&] { return capped.draws() >= 2; }));
  EXPECT_EQ(capped.jobs(), 3);
  // With a deviation the draws vary and stay at least 0.
  BackgroundLoad varied({1, 2, 0.002}, 5, 8);
  std::set<int> seen;
  ASSERT_TRUE(WaitFor([&] {
    seen.insert(varied.jobs());
    return seen.size() >= 3;
  }));
  for (int j : seen) EXPECT_GE(j, 0);
}

}  // namespace
}  // namespace aiac::daemon
