// The address a daemon registers (the bound one, or the one it is told to advertise), and the
// checks of options that depend on each other.
#include "daemon/daemon_options.h"

#include <gtest/gtest.h>

#include "daemon/supernode_link.h"

namespace aiac::daemon {
namespace {

TEST(AdvertisedAddressTest, TheBoundAddressUnlessAnotherIsGiven) {
  const Endpoint bound{"0.0.0.0", 7500};
  EXPECT_EQ(*AdvertisedAddress(bound, ""), "0.0.0.0:7500");
  EXPECT_EQ(*AdvertisedAddress(bound, "10.0.0.2"), "10.0.0.2:7500");
  EXPECT_EQ(*AdvertisedAddress(bound, "node7.example.org:9000"), "node7.example.org:9000");
  EXPECT_EQ(*AdvertisedAddress(bound, "10.0.0.2:0"), "10.0.0.2:7500");
  for (const char* bad : {"0.0.0.0", "::", "host:port", "host:70000", ":"}) {
    auto r = AdvertisedAddress(bound, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("option 'advertise'"), std::string::npos);
  }
  EXPECT_TRUE(IsWildcard("0.0.0.0"));
  EXPECT_TRUE(IsWildcard("::"));
  EXPECT_FALSE(IsWildcard("127.0.0.1"));
}

// A silence limit must leave room for a heartbeat's answer: at or under the period it would
// leave every super-node at once.
TEST(CheckDaemonOptionsTest, ASuperNodeTimeoutExceedsTheHeartbeatPeriodOrIsOff) {
  DaemonOptions o;
  o.allow_unsigned_plugins = true;
  EXPECT_TRUE(CheckDaemonOptions(o).ok());  // the defaults: 10 s against 1 s
  o.supernode_timeout = std::chrono::milliseconds(0);
  EXPECT_TRUE(CheckDaemonOptions(o).ok());
  o.supernode_timeout = o.heartbeat;
  const Status s = CheckDaemonOptions(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "option 'supernode_timeout_ms' (1000) must exceed heartbeat_ms (1000), or be 0");
}

// How often a daemon asks to be answered: a third of what its silence limit leaves after a
// heartbeat period, so that the longest gap between answers (that plus a period) stays well
// inside the limit; every heartbeat without a limit.
TEST(CheckDaemonOptionsTest, AHeartbeatIsAnsweredWellInsideTheSilenceLimit) {
  using std::chrono::milliseconds;
  EXPECT_EQ(AckWithin(milliseconds(10000), milliseconds(1000)), milliseconds(3000));
  EXPECT_EQ(AckWithin(milliseconds(4000), milliseconds(200)), milliseconds(1266));
  EXPECT_EQ(AckWithin(milliseconds(0), milliseconds(1000)), milliseconds(0));
  EXPECT_EQ(AckWithin(milliseconds(1000), milliseconds(1000)), milliseconds(0));
  for (int64_t limit : {1001, 1500, 2000, 10000, 60000}) {
    const milliseconds within = AckWithin(milliseconds(limit), milliseconds(1000));
    EXPECT_LE(within + milliseconds(1000) + (milliseconds(limit) - milliseconds(1000)) * 2 / 3,
              milliseconds(limit))
        << limit;
  }
}

}  // namespace
}  // namespace aiac::daemon
