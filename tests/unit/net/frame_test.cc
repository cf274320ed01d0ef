#include "net/frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace aiac::net {
namespace {

std::vector<std::byte> HeartbeatFrame(const std::string& id) {
  capnp::MallocMessageBuilder message;
  auto hb = message.initRoot<proto::Envelope>().initHeartbeat();
  hb.setDaemonId(id);
  hb.setBusy(true);
  auto words = EncodeFrame(message);
  auto bytes = words.asBytes();
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.begin(), bytes.size());
  return out;
}

std::string DaemonIdOf(IncomingMessage& m) {
  EXPECT_TRUE(m.CheckWellFormed().ok());
  return m.root().getHeartbeat().getDaemonId().cStr();
}

TEST(FrameParserTest, WholeFrameInOneRead) {
  FrameParser parser;
  auto frame = HeartbeatFrame("d1");
  parser.Feed(frame);
  auto msg = parser.Next();
  ASSERT_TRUE(msg.ok());
  ASSERT_NE(*msg, nullptr);
  EXPECT_EQ(DaemonIdOf(**msg), "d1");
  auto none = parser.Next();
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  EXPECT_EQ(parser.buffered(), 0u);
}

TEST(FrameParserTest, FrameArrivingOneByteAtATime) {
  FrameParser parser;
  auto frame = HeartbeatFrame("slow");
  for (size_t i = 0; i + 1 < frame.size(); ++i) {
    parser.Feed(std::span(frame).subspan(i, 1));
    auto msg = parser.Next();
    ASSERT_TRUE(msg.ok());
    ASSERT_EQ(*msg, nullptr) << "frame complete after " << i + 1 << " bytes";
  }
  parser.Feed(std::span(frame).subspan(frame.size() - 1));
  auto msg = parser.Next();
  ASSERT_TRUE(msg.ok());
  ASSERT_NE(*msg, nullptr);
  EXPECT_EQ(DaemonIdOf(**msg), "slow");
}

TEST(FrameParserTest, SeveralFramesSplitAcrossReadsAtEveryOffset) {
  auto a = HeartbeatFrame("a"), b = HeartbeatFrame("bb"), c = HeartbeatFrame("ccc");
  std::vector<std::byte> stream;
  for (auto* f : {&a, &b, &c}) stream.insert(stream.end(), f->begin(), f->end());
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    FrameParser parser;
    std::vector<std::string> got;
    for (auto part : {std::span(stream).first(cut), std::span(stream).subspan(cut)}) {
      parser.Feed(part);
      for (;;) {
        auto msg = parser.Next();
        ASSERT_TRUE(msg.ok());
        if (!*msg) break;
        got.push_back(DaemonIdOf(**msg));
      }
    }
    EXPECT_EQ(got, (std::vector<std::string>{"a", "bb", "ccc"})) << "cut at " << cut;
  }
}

TEST(FrameParserTest, OversizedFrameRefusedFromItsHeader) {
  FrameLimits limits;
  limits.max_frame_bytes = 4096;
  FrameParser parser(limits);
  // One segment of 1,000,000 words: only the 8-byte header is sent.
  uint32_t header[2] = {0, 1000000};
  parser.Feed(std::as_bytes(std::span(header)));
  auto msg = parser.Next();
  ASSERT_FALSE(msg.ok());
  EXPECT_EQ(msg.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(msg.status().message().find("exceeds the limit"), std::string::npos);
}

TEST(FrameParserTest, TooManySegmentsRefused) {
  FrameParser parser;
  uint32_t count = 100000;  // 100,001 segments
  parser.Feed(std::as_bytes(std::span(&count, 1)));
  auto msg = parser.Next();
  ASSERT_FALSE(msg.ok());
  EXPECT_EQ(msg.status().code(), StatusCode::kProtocol);
}

TEST(FrameParserTest, GarbageNeverCrashesAndIsReported) {
  std::mt19937 rng(7);
  int refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    FrameLimits limits;
    limits.max_frame_bytes = 1 << 16;
    FrameParser parser(limits);
    std::vector<std::byte> junk(8 + rng() % 256);
    for (auto& b : junk) b = std::byte(rng() & 0xff);
    // Keep the segment table small half of the time so bodies get parsed too.
    if (trial % 2) {
      uint32_t header[2] = {0, static_cast<uint32_t>((junk.size() - 8) / 8)};
      std::memcpy(junk.data(), header, 8);
    }
    parser.Feed(junk);
    auto msg = parser.Next();
    if (!msg.ok()) {
      ++refused;
      continue;
    }
    if (*msg && !(*msg)->CheckWellFormed().ok()) ++refused;
  }
  EXPECT_GT(refused, 0);
}

TEST(FrameParserTest, BadPointerCaughtByWellFormedCheck) {
  // One segment of two words: a root struct pointer whose offset points far outside.
  uint32_t header[2] = {0, 2};
  uint64_t words[2] = {0x0000000100007ff0ull /* struct ptr, offset huge */, 0};
  std::vector<std::byte> frame(8 + 16);
  std::memcpy(frame.data(), header, 8);
  std::memcpy(frame.data() + 8, words, 16);
  FrameParser parser;
  parser.Feed(frame);
  // The frame's size is right, so the parser hands it over; the pointer is what is wrong.
  auto msg = parser.Next();
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  ASSERT_NE(*msg, nullptr);
  Status s = (*msg)->CheckWellFormed();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("malformed frame"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace aiac::net
