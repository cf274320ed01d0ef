// ChildMessageReader: whole messages out of a stream read in pieces of any size, as the daemon's
// io thread and the app's runner read the socket between them (app_child_wire.h).
#include "daemon/app_child_wire.h"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "proto/app_child.capnp.h"

namespace aiac::daemon {
namespace {

// A Put of `size` bytes from `from`, framed as on the socket. A small first segment makes a
// large payload a second segment.
std::string Framed(uint32_t from, size_t size, size_t first_segment_words) {
  capnp::MallocMessageBuilder m(first_segment_words);
  auto put = m.initRoot<proto::ChildCall>().initPut();
  put.setFrom(from);
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7 + from) & 0xff);
  put.setBytes(kj::arrayPtr(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
  auto flat = capnp::messageToFlatArray(m);
  return std::string(reinterpret_cast<const char*>(flat.begin()),
                     flat.size() * sizeof(capnp::word));
}

void ExpectPut(ChildMessageIn& in, uint32_t from, size_t size) {
  auto put = in.root<proto::ChildCall>().getPut();
  EXPECT_EQ(put.getFrom(), from);
  auto bytes = put.getBytes();  // once: each get counts against the traversal limit
  ASSERT_EQ(bytes.size(), size);
  for (size_t i = 0; i < size; i += 997) {
    ASSERT_EQ(bytes[i], static_cast<kj::byte>((i * 7 + from) & 0xff)) << i;
  }
}

TEST(ChildMessageReaderTest, GivesEveryMessageWholeWhateverPiecesTheStreamComesIn) {
  // Small ones, several segments, one larger than the reader's buffer, and small ones after it.
  const std::vector<std::pair<size_t, size_t>> shapes = {
      {10, 64}, {0, 64},       {3000, 16},        {200, 1024}, {300000, 64},
      {5, 64},  {70000, 8192}, {1'000'000, 1024}, {40, 64},    {65536 - 200, 64}};
  std::string stream;
  for (uint32_t i = 0; i < shapes.size(); ++i) {
    stream += Framed(i, shapes[i].first, shapes[i].second);
  }
  for (uint32_t seed = 0; seed < 40; ++seed) {
    std::mt19937 random(seed);
    ChildMessageReader reader;
    size_t at = 0;
    uint32_t next = 0;
    while (at < stream.size() || next < shapes.size()) {
      auto space = reader.Space();
      ASSERT_GT(space.size(), 0u);
      // A piece of 1 byte up to the whole space (what a read may bring).
      const size_t most = std::min(space.size(), stream.size() - at);
      ASSERT_GT(most, 0u) << "the reader waits for bytes the stream does not hold";
      const size_t piece =
          seed % 4 == 0 ? most : std::uniform_int_distribution<size_t>(1, most)(random);
      std::copy_n(stream.data() + at, piece, space.begin());
      reader.Filled(piece);
      at += piece;
      while (auto in = reader.Next()) {
        ASSERT_LT(next, shapes.size());
        ExpectPut(*in, next, shapes[next].first);
        ++next;
      }
      ASSERT_TRUE(reader.status().ok());
    }
    EXPECT_EQ(next, shapes.size());
  }
}

TEST(ChildMessageReaderTest, AStreamThatIsNotOursIsAnErrorNotAnAllocation) {
  // 4 billion segments, then a single segment of 2^32 - 1 words.
  for (const std::vector<uint32_t>& head :
       {std::vector<uint32_t>{0xffffffffu, 1}, std::vector<uint32_t>{0, 0xffffffffu}}) {
    ChildMessageReader r;
    auto space = r.Space();
    std::memcpy(space.begin(), head.data(), 8);
    r.Filled(8);
    EXPECT_EQ(r.Next(), nullptr);
    EXPECT_FALSE(r.status().ok());
  }
}

}  // namespace
}  // namespace aiac::daemon
