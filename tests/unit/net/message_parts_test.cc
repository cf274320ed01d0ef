// Messages larger than a frame, in parts: reassembled byte for byte at every size around the part
// boundaries, and every way a peer could get the parts wrong refused with the reason.
#include "net/message_parts.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace aiac::net {
namespace {

// A Result envelope carrying `n` pseudo-random bytes: its frame.
kj::Array<capnp::word> ResultFrame(size_t n, uint32_t seed = 1) {
  std::string data(n, '\0');
  std::mt19937 rng(seed);
  for (auto& c : data) c = static_cast<char>(rng());
  capnp::MallocMessageBuilder message;
  auto r = message.initRoot<proto::Envelope>().initResult();
  r.setJob("job-1");
  r.setTask(3);
  r.setData(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(data.data()), data.size()));
  return EncodeFrame(message);
}

// Each frame of `parts` read as an envelope, its Part handed to `assembler`; the last result.
Result<std::unique_ptr<IncomingMessage>> Feed(PartAssembler& assembler,
                                              std::vector<kj::Array<capnp::word>>& parts) {
  Result<std::unique_ptr<IncomingMessage>> last = std::unique_ptr<IncomingMessage>();
  for (auto& frame : parts) {
    FrameParser parser;
    parser.Feed(std::span(reinterpret_cast<const std::byte*>(frame.begin()),
                          frame.size() * sizeof(capnp::word)));
    auto m = parser.Next();
    EXPECT_TRUE(m.ok() && *m);
    EXPECT_TRUE((*m)->CheckWellFormed().ok());
    EXPECT_TRUE((*m)->root().isPart());
    last = assembler.Add((*m)->root().getPart());
    if (!last.ok()) return last;
  }
  return last;
}

TEST(MessagePartsTest, PartSizeStaysUnderTheFrameLimit) {
  EXPECT_EQ(PartBytes(64u << 20), 1u << 20);
  EXPECT_EQ(PartBytes(4096), 2048u);
}

TEST(MessagePartsTest, ReassemblesEveryMessageSizeAroundThePartBoundaries) {
  const size_t part = 1024;
  for (size_t n : {900u, 1000u, 1024u, 2048u, 2049u, 5000u, 100000u}) {
    SCOPED_TRACE(n);
    auto frame = ResultFrame(n, static_cast<uint32_t>(n));
    const size_t frame_bytes = frame.size() * sizeof(capnp::word);
    auto parts = SplitIntoParts(frame, part);
    EXPECT_EQ(parts.size(), (frame_bytes + part - 1) / part);
    for (const auto& p : parts) EXPECT_LE(p.size() * sizeof(capnp::word), part + 256);
    PartAssembler assembler{FrameLimits{}};
    auto whole = Feed(assembler, parts);
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    ASSERT_NE(*whole, nullptr);
    EXPECT_FALSE(assembler.busy());
    ASSERT_TRUE((*whole)->root().isResult());
    EXPECT_EQ((*whole)->size_bytes(), frame_bytes);
    auto expected = ResultFrame(n, static_cast<uint32_t>(n));
    FrameParser parser;
    parser.Feed(std::span(reinterpret_cast<const std::byte*>(expected.begin()),
                          expected.size() * sizeof(capnp::word)));
    auto direct = parser.Next();
    ASSERT_TRUE(direct.ok() && *direct);
    const auto a = (*whole)->root().getResult().getData(),
               b = (*direct)->root().getResult().getData();
    ASSERT_EQ(a.size(), n);
    EXPECT_EQ(std::memcmp(a.begin(), b.begin(), n), 0);
    EXPECT_EQ((*whole)->root().getResult().getTask(), 3u);
  }
}

TEST(MessagePartsTest, TheSameAssemblerTakesOneMessageAfterAnother) {
  PartAssembler assembler{FrameLimits{}};
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto parts = SplitIntoParts(ResultFrame(10000, seed), 4096);
    auto whole = Feed(assembler, parts);
    ASSERT_TRUE(whole.ok() && *whole) << seed;
  }
}

// A part at the wrong place, a changed total, a wrong or early hash, a total too large or not a
// frame's size, or parts wrapping a part: each refused, with what was wrong.
TEST(MessagePartsTest, PartsThatDoNotMakeAMessageAreRefused) {
  auto refused = [](std::vector<kj::Array<capnp::word>>& parts, FrameLimits limits = {}) {
    PartAssembler assembler{limits};
    auto r = Feed(assembler, parts);
    return r.ok() ? std::string() : r.status().message();
  };
  auto parts = [] { return SplitIntoParts(ResultFrame(5000), 1024); };
  // Out of order: the second part left out.
  auto skipped = parts();
  skipped.erase(skipped.begin() + 1);
  EXPECT_NE(refused(skipped).find("does not continue the message"), std::string::npos);
  // Starting in the middle.
  auto middle = parts();
  middle.erase(middle.begin());
  EXPECT_NE(refused(middle).find("without its start"), std::string::npos);
  // A part of another message (another total) in between.
  auto mixed = parts();
  auto other = SplitIntoParts(ResultFrame(9000), 1024);
  mixed[2] = std::move(other[2]);
  EXPECT_NE(refused(mixed).find("does not continue the message"), std::string::npos);
  // Over max_message_bytes: refused at the first part.
  auto big = parts();
  FrameLimits small;
  small.max_message_bytes = 4096;
  EXPECT_NE(refused(big, small).find("exceeds max_message_bytes 4096"), std::string::npos);
  // Hand-made parts: a wrong hash, an early hash, a total that is no frame size.
  auto make = [](uint64_t offset, uint64_t total, size_t n, const std::string& sha) {
    capnp::MallocMessageBuilder message;
    auto p = message.initRoot<proto::Envelope>().initPart();
    p.setOffset(offset);
    p.setTotal(total);
    std::string bytes(n, 'x');
    p.setBytes(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(bytes.data()), n));
    if (!sha.empty())
      p.setSha256(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(sha.data()), sha.size()));
    return EncodeFrame(message);
  };
  std::vector<kj::Array<capnp::word>> wrong_hash;
  wrong_hash.push_back(make(0, 16, 16, std::string(32, 'h')));
  EXPECT_NE(refused(wrong_hash).find("does not match its SHA-256"), std::string::npos);
  std::vector<kj::Array<capnp::word>> early_hash;
  early_hash.push_back(make(0, 32, 16, std::string(32, 'h')));
  EXPECT_NE(refused(early_hash).find("hash before the last"), std::string::npos);
  std::vector<kj::Array<capnp::word>> odd;
  odd.push_back(make(0, 13, 13, ""));
  EXPECT_NE(refused(odd).find("not a frame's size"), std::string::npos);
  // Parts of a message that is itself a part.
  auto inner = SplitIntoParts(ResultFrame(3000), 1024);
  auto nested = SplitIntoParts(inner[0], 256);
  EXPECT_NE(refused(nested).find("inside a message part"), std::string::npos);
}

}  // namespace
}  // namespace aiac::net
