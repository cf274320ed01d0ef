// The runtime's part of a checkpoint: item moves and unconfirmed exports, then the app's state.
#include "runtime/task_state.h"

#include <gtest/gtest.h>

namespace aiac::runtime {
namespace {

TEST(TaskStateTest, MovesAndOutboxComeBackWithTheAppStateUntouched) {
  MoveState m;
  m.moves = 42;
  m.outbox.push_back({7, 41, 3, std::string("a\0b", 3)});
  m.outbox.push_back({9, 42, 0, ""});
  const std::string app = std::string("state\0with zeros", 16);
  const std::string encoded = EncodeTaskState(m, app);  // the decoded app state points into it
  auto d = DecodeTaskState(encoded);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->moves.moves, 42u);
  ASSERT_EQ(d->moves.outbox.size(), 2u);
  EXPECT_EQ(d->moves.outbox[0].move, 7u);
  EXPECT_EQ(d->moves.outbox[0].moves, 41u);
  EXPECT_EQ(d->moves.outbox[0].count, 3u);
  EXPECT_EQ(d->moves.outbox[0].items, std::string("a\0b", 3));
  EXPECT_EQ(d->moves.outbox[1].items, "");
  EXPECT_EQ(d->app_state, app);
  const std::string bare = EncodeTaskState({}, "");
  auto empty = DecodeTaskState(bare);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->moves.moves, 0u);
  EXPECT_TRUE(empty->app_state.empty());
}

TEST(TaskStateTest, EveryTruncationOfTheHeaderIsRefused) {
  MoveState m;
  m.moves = 3;
  m.outbox.push_back({1, 3, 2, "items"});
  const std::string full = EncodeTaskState(m, "");
  for (size_t n = 0; n < full.size(); ++n) {
    EXPECT_FALSE(DecodeTaskState(full.substr(0, n)).ok()) << n << " bytes";
  }
  EXPECT_FALSE(DecodeTaskState("40").ok());
  // A huge outbox count in a short state: refused before anything is reserved.
  std::string lying = full.substr(0, 12) + std::string("\xff\xff\xff\x7f", 4);
  auto d = DecodeTaskState(lying);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("exports in"), std::string::npos) << d.status().message();
}

TEST(TaskStateTest, ASynchronousTasksSentValuesComeBackAndEveryTruncationIsRefused) {
  MoveState m;
  m.moves = 1;
  const std::vector<SentValues> sent = {
      {6, {{1, std::string("v\0a", 3)}, {3, ""}}},
      {7, {{1, "next"}, {3, "more"}}},
  };
  const std::string encoded = EncodeTaskState(m, "app", sent);
  auto d = DecodeTaskState(encoded);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->sent, sent);
  EXPECT_EQ(d->app_state, "app");
  const std::string header = EncodeTaskState(m, "", sent);
  for (size_t n = 0; n < header.size(); ++n) {
    EXPECT_FALSE(DecodeTaskState(header.substr(0, n)).ok()) << n << " bytes";
  }
}

TEST(TaskStateTest, WithoutSentValuesTheFormerLayoutIsWritten) {
  MoveState m;
  m.moves = 5;
  EXPECT_EQ(EncodeTaskState(m, "app"), std::string("ats1") + std::string("\x05\0\0\0\0\0\0\0", 8) +
                                           std::string("\0\0\0\0", 4) + "app");
  EXPECT_EQ(EncodeTaskState(m, "app", {{1, {}}}).substr(0, 4), "ats2");
}

TEST(TaskStateTest, ACheckpointOfTheFormerFormatIsStillRead) {
  // "ats1": moves, no exports, then the app's state; no sent values.
  const std::string old = std::string("ats1") + std::string("\x05\0\0\0\0\0\0\0", 8) +
                          std::string("\0\0\0\0", 4) + "app";
  auto d = DecodeTaskState(old);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->moves.moves, 5u);
  EXPECT_TRUE(d->sent.empty());
  EXPECT_EQ(d->app_state, "app");
}

}  // namespace
}  // namespace aiac::runtime
