// Sender-side logging for synchronous runs: what was sent comes back, in order, in front of what
// waits; trims and the byte limit let go of the oldest, and the limit says up to where.
#include "daemon/value_log.h"

#include <gtest/gtest.h>

namespace aiac::daemon {
namespace {

LinkValue V(uint64_t iteration, size_t size = 4) {
  return {iteration, std::string(size, static_cast<char>('a' + iteration % 26)), false, 0, 0};
}

std::vector<uint64_t> Iterations(const std::deque<LinkValue>& values) {
  std::vector<uint64_t> out;
  for (const auto& v : values) out.push_back(v.iteration);
  return out;
}

TEST(ValueLogTest, WhatWasSentGoesBackInFrontOfWhatWaitsInOrder) {
  ValueLog log(1 << 20);
  for (uint64_t i = 1; i <= 4; ++i) log.Sent(V(i));
  EXPECT_EQ(log.size(), 4u);
  EXPECT_EQ(log.bytes(), 16u);
  std::deque<LinkValue> pending = {V(5), V(6)};
  log.Replay(pending);
  EXPECT_EQ(Iterations(pending), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(pending[0].bytes, V(1).bytes);
  EXPECT_EQ(log.size(), 0u) << "sent again, they are logged again";
  EXPECT_EQ(log.bytes(), 0u);
  EXPECT_EQ(log.dropped_through(), 0u);
}

TEST(ValueLogTest, ATrimDropsWhatNoRestoreAsksForAndNothingElse) {
  ValueLog log(1 << 20);
  for (uint64_t i = 1; i <= 6; ++i) log.Sent(V(i));
  log.Trim(4);
  std::deque<LinkValue> pending;
  log.Replay(pending);
  EXPECT_EQ(Iterations(pending), (std::vector<uint64_t>{4, 5, 6}));
  EXPECT_EQ(log.dropped_through(), 0u) << "a trim is not a loss";
  log.Trim(100);
  EXPECT_EQ(log.size(), 0u);
}

TEST(ValueLogTest, PastItsLimitTheOldestGoAndTheLogSaysUpToWhere) {
  ValueLog log(10);
  for (uint64_t i = 1; i <= 5; ++i) log.Sent(V(i, 4));  // 20 bytes sent, 10 kept at most
  EXPECT_LE(log.bytes(), 10u);
  EXPECT_EQ(log.size(), 2u);
  EXPECT_EQ(log.dropped_through(), 3u);
  // A value larger than the limit is kept alone: the newest is never the one dropped.
  log.Sent(V(6, 50));
  EXPECT_EQ(log.size(), 1u);
  EXPECT_EQ(log.dropped_through(), 5u);
  std::deque<LinkValue> pending;
  log.Replay(pending);
  EXPECT_EQ(Iterations(pending), (std::vector<uint64_t>{6}));
}

TEST(ValueLogTest, WithoutALimitNothingIsKept) {
  ValueLog log;
  EXPECT_FALSE(log.enabled());
  log.Sent(V(1));
  std::deque<LinkValue> pending = {V(2)};
  log.Replay(pending);
  EXPECT_EQ(Iterations(pending), (std::vector<uint64_t>{2}));
  EXPECT_EQ(log.dropped_through(), 0u);
}

}  // namespace
}  // namespace aiac::daemon
