// The cached power of a daemon: what counts as a record, and that a record measured on another
// host or with another core count is not used.
#include "monitor/power_cache.h"

#include <gtest/gtest.h>

#include <cmath>

#include "monitor/power_benchmark.h"
#include "support/test_support.h"

namespace aiac::monitor {
namespace {

TEST(PowerCacheTest, ARecordRoundTripsExactly) {
  PowerRecord r{6.123456789012345, "node-7", 16};
  auto back = ParsePowerRecord(FormatPowerRecord(r));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->power, r.power);
  EXPECT_EQ(back->host, "node-7");
  EXPECT_EQ(back->cores, 16u);
}

TEST(PowerCacheTest, AnythingElseIsNotARecord) {
  for (const char* text :
       {"", "power 5\n", "power 5\nhost h\n", "power -1\nhost h\ncores 2\n",
        "power nan\nhost h\ncores 2\n", "power inf\nhost h\ncores 2\n",
        "power 0\nhost h\ncores 2\n", "power 5\nhost h\ncores 0\n",
        "power 5\nhost h\ncores 2\nextra\n", "cores 2\nhost h\npower 5\n", "\x01\x02garbage"}) {
    EXPECT_FALSE(ParsePowerRecord(text).has_value()) << text;
  }
}

TEST(PowerCacheTest, OnlyTheSameHostAndCoreCountUseTheCache) {
  testing::TempDir dir;
  const std::string path = dir / "power";
  EXPECT_FALSE(ReadCachedPower(path, "h", 2).has_value());  // none yet
  ASSERT_OK(WriteCachedPower(path, {7.5, "h", 2}));
  EXPECT_EQ(ReadCachedPower(path, "h", 2), 7.5);
  EXPECT_FALSE(ReadCachedPower(path, "other", 2).has_value());
  EXPECT_FALSE(ReadCachedPower(path, "h", 4).has_value());
  testing::WriteFile(path, "power 7.5\nhost h\n");  // truncated: measured again
  EXPECT_FALSE(ReadCachedPower(path, "h", 2).has_value());
  EXPECT_FALSE(WriteCachedPower(dir / "no/such/dir/power", {1, "h", 2}).ok());
}

TEST(PowerCacheTest, TheMedianMeasurementIsPositive) {
  const double p = MeasurePowerMedian(3, std::chrono::milliseconds(5));
  EXPECT_GT(p, 0);
  EXPECT_TRUE(std::isfinite(p));
}

}  // namespace
}  // namespace aiac::monitor
