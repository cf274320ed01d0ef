// The wait before a daemon dials a super-node again: none before the first dial, up to `base`
// after a loss, doubling with each setback up to `cap`, and spread evenly over that range, so
// that the daemons of a lost super-node arrive at the next one over a second, not at once.
#include "daemon/reconnect_backoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace aiac::daemon {
namespace {

using std::chrono::milliseconds;

TEST(ReconnectBackoffTest, TheSpreadDoublesWithEachSetbackUpToTheCap) {
  const ReconnectBackoff b = ReconnectBackoff::WithSpread(milliseconds(1000));
  EXPECT_EQ(b.cap, milliseconds(8000));
  EXPECT_EQ(b.Ceiling(0), milliseconds(0));
  EXPECT_EQ(b.Ceiling(1), milliseconds(1000));
  EXPECT_EQ(b.Ceiling(2), milliseconds(2000));
  EXPECT_EQ(b.Ceiling(3), milliseconds(4000));
  EXPECT_EQ(b.Ceiling(4), milliseconds(8000));
  EXPECT_EQ(b.Ceiling(5), milliseconds(8000));
  EXPECT_EQ(b.Ceiling(4000000000u), milliseconds(8000));  // a long outage does not overflow
}

TEST(ReconnectBackoffTest, AZeroSpreadDialsAtOnceAndACapBelowTheBaseIsTheBase) {
  const ReconnectBackoff none{milliseconds(0), milliseconds(0)};
  for (unsigned s : {0u, 1u, 7u}) EXPECT_EQ(none.Wait(s, 0.99), milliseconds(0));
  const ReconnectBackoff flat{milliseconds(500), milliseconds(100)};
  EXPECT_EQ(flat.Ceiling(3), milliseconds(500));
}

TEST(ReconnectBackoffTest, TheWaitIsTheDrawnShareOfTheSpread) {
  const ReconnectBackoff b{milliseconds(1000), milliseconds(8000)};
  EXPECT_EQ(b.Wait(0, 0.7), milliseconds(0));
  EXPECT_EQ(b.Wait(1, 0.0), milliseconds(0));
  EXPECT_EQ(b.Wait(1, 0.5), milliseconds(500));
  EXPECT_EQ(b.Wait(3, 0.25), milliseconds(1000));
  EXPECT_LT(b.Wait(2, 0.9999999), milliseconds(2000));
  EXPECT_EQ(b.Wait(2, -3), milliseconds(0));  // out of range: clamped
  EXPECT_EQ(b.Wait(2, 7), milliseconds(2000));
}

// 5,000 daemons whose super-node died draw their first waits: no 100 ms of the second gets
// more than a third above its share (500), none is empty.
TEST(ReconnectBackoffTest, AHerdIsSpreadEvenlyOverTheFirstSecond) {
  const ReconnectBackoff b{milliseconds(1000), milliseconds(8000)};
  std::mt19937_64 random(37);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<int> per_tenth(10, 0);
  for (int d = 0; d < 5000; ++d)
    ++per_tenth[static_cast<size_t>(b.Wait(1, uniform(random)).count() / 100)];
  EXPECT_LT(*std::max_element(per_tenth.begin(), per_tenth.end()), 667);
  EXPECT_GT(*std::min_element(per_tenth.begin(), per_tenth.end()), 333);
}

}  // namespace
}  // namespace aiac::daemon
