#include "monitor/link_monitor.h"

#include <gtest/gtest.h>

#include <random>

namespace aiac::monitor {
namespace {

// Frames over a link of latency `alpha` and `per_byte` seconds per byte, as the round trips of
// an emulated link give them (alpha out, the bytes, alpha back), with a little noise.
TEST(LinkMonitorTest, RecoversTheLatencyAndTheTimePerByteOfALink) {
  const double alpha = 0.020, per_byte = 8.0 / 100e6;  // 20 ms, 100 Mbit/s
  LinkMonitor m;
  EXPECT_FALSE(m.measured());
  EXPECT_EQ(m.seconds_per_byte(), 0);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> noise(0, 0.0005);
  for (int k = 0; k < 40; ++k) {
    m.Add(64, 2 * alpha + 64 * per_byte + noise(rng));  // a probe
    const uint64_t bytes = 10000 + 50000 * static_cast<uint64_t>(k % 5);
    m.Add(bytes, 2 * alpha + static_cast<double>(bytes) * per_byte + noise(rng));
  }
  ASSERT_TRUE(m.measured());
  EXPECT_NEAR(m.alpha(), alpha, 0.0005);
  EXPECT_NEAR(m.seconds_per_byte(), per_byte, per_byte * 0.05);
  EXPECT_EQ(m.samples(), 2 * LinkMonitor::kWindow);
}

TEST(LinkMonitorTest, TheWindowFollowsALinkThatChanges) {
  LinkMonitor m;
  for (int k = 0; k < 100; ++k) m.Add(0, 0.002);
  for (size_t k = 0; k < LinkMonitor::kWindow; ++k) m.Add(0, 0.100);
  EXPECT_NEAR(m.alpha(), 0.050, 1e-12);
  // Large frames faster than the latency says (noise) give 0, never a negative time.
  m.Add(1 << 20, 0.05);
  EXPECT_EQ(m.seconds_per_byte(), 0);
  m.Add(64, -1);  // a clock that went back: ignored
  EXPECT_NEAR(m.alpha(), 0.050, 1e-12);
}

}  // namespace
}  // namespace aiac::monitor
