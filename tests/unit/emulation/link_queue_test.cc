// One direction of an emulated link: a packet arrives its serialization time plus the latency
// after it can leave; packets queue behind each other at the link's rate, in order; and a queue
// holding more than max(0.1 s, 2 x latency) drops, then admits again once it has drained.
#include "emulation/link_queue.h"

#include <gtest/gtest.h>

namespace aiac::emulation {
namespace {

TEST(LinkQueueTest, AnIdleLinkDelaysByLatencyPlusSerialization) {
  LinkQueue q({0.020, 1e6});  // 20 ms, 1 MB/s
  auto at = q.Admit(5.0, 1000);
  ASSERT_TRUE(at);
  EXPECT_NEAR(*at, 5.0 + 0.001 + 0.020, 1e-12);
  // Long after, the link is idle again.
  at = q.Admit(9.0, 500);
  ASSERT_TRUE(at);
  EXPECT_NEAR(*at, 9.0 + 0.0005 + 0.020, 1e-12);
}

TEST(LinkQueueTest, BackToBackPacketsLeaveAtTheLinksRateInOrder) {
  LinkQueue q({0.010, 1e6});
  double last = 0;
  for (int k = 1; k <= 50; ++k) {
    auto at = q.Admit(1.0, 1000);  // all offered at once
    ASSERT_TRUE(at);
    EXPECT_NEAR(*at, 1.0 + k * 0.001 + 0.010, 1e-9);
    EXPECT_GT(*at, last);
    last = *at;
  }
}

TEST(LinkQueueTest, AFullQueueDropsUntilItHasDrained) {
  LinkQueue q({0.020, 1e6});
  EXPECT_DOUBLE_EQ(q.max_queue_seconds(), 0.1);
  int admitted = 0;
  while (q.Admit(0.0, 1000)) ++admitted;
  // 0.1 s of queue at 1 ms a packet (100 or 101, as the sums round).
  EXPECT_NEAR(admitted, 100, 1);
  EXPECT_FALSE(q.Admit(0.0, 1000));
  EXPECT_TRUE(q.Admit(0.0015, 1000));  // a packet and a half later there is room again
  EXPECT_DOUBLE_EQ(LinkQueue({0.2, 1e6}).max_queue_seconds(), 0.4);
}

}  // namespace
}  // namespace aiac::emulation
