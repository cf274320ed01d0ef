// The protocol version window: two peers speak the newest version both offer, a peer of the
// previous build is spoken to in its version, and one outside the window is refused.
#include <capnp/message.h>
#include <gtest/gtest.h>

#include "net/hello.h"

namespace aiac::net {
namespace {

TEST(ProtocolVersionTest, TheNewestVersionBothSpeak) {
  EXPECT_EQ(*AgreeVersion({3, 4}, {3, 4}), 4u);
  EXPECT_EQ(*AgreeVersion({3, 4}, {3, 3}), 3u);  // a node of the previous build
  EXPECT_EQ(*AgreeVersion({3, 3}, {3, 4}), 3u);  // pinned back
  EXPECT_EQ(*AgreeVersion({3, 4}, {4, 5}), 4u);  // a node of the next build
  EXPECT_FALSE(AgreeVersion({3, 4}, {5, 6}).ok());
  EXPECT_FALSE(AgreeVersion({4, 5}, {3, 3}).ok());
  const Status refused = AgreeVersion({3, 4}, {5, 6}).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(refused.message(), "protocol version 5..6 not supported (this node speaks 3..4)");
  EXPECT_EQ(AgreeVersion({3, 4}, {2, 2}).status().message(),
            "protocol version 2 not supported (this node speaks 3..4)");
}

// Every pair of windows in a small range, against the definition: the largest v in both.
TEST(ProtocolVersionTest, AgreesWithBruteForce) {
  for (uint32_t a = 1; a <= 6; ++a) {
    for (uint32_t b = a; b <= 6; ++b) {
      for (uint32_t c = 1; c <= 6; ++c) {
        for (uint32_t d = c; d <= 6; ++d) {
          uint32_t best = 0;
          for (uint32_t v = 1; v <= 6; ++v) {
            if (a <= v && v <= b && c <= v && v <= d) best = v;
          }
          auto agreed = AgreeVersion({a, b}, {c, d});
          EXPECT_EQ(agreed.ok(), best != 0) << a << b << c << d;
          if (agreed.ok()) {
            EXPECT_EQ(*agreed, best) << a << b << c << d;
          }
        }
      }
    }
  }
}

class HelloVersionTest : public ::testing::Test {
 protected:
  // A daemon's Hello offering `version`..`max_version` (0: the field left out, as version 3
  // nodes send it), checked by a super-node speaking `ours`.
  static Result<PeerIdentity> Check(uint32_t version, uint32_t max_version, VersionWindow ours) {
    capnp::MallocMessageBuilder message;
    auto hello = message.initRoot<proto::Envelope>().initHello();
    hello.setVersion(version);
    if (max_version) hello.setMaxVersion(max_version);
    hello.setRole(proto::Role::DAEMON);
    hello.setNodeId("d1");
    return ValidateHello(message.getRoot<proto::Envelope>().asReader(), proto::Role::SUPERNODE,
                         "sn", std::nullopt, nullptr, ours);
  }
};

TEST_F(HelloVersionTest, AVersion3HelloIsSpokenToInVersion3) {
  auto peer = Check(3, 0, {3, 4});
  ASSERT_TRUE(peer.ok()) << peer.status().message();
  EXPECT_EQ(peer->version, 3u);
}

TEST_F(HelloVersionTest, TwoCurrentNodesSpeakTheCurrentVersion) {
  auto peer = Check(kMinProtocolVersion, kProtocolVersion, {});
  ASSERT_TRUE(peer.ok());
  EXPECT_EQ(peer->version, kProtocolVersion);
}

TEST_F(HelloVersionTest, OutsideTheWindowOrBackwardsIsRefused) {
  auto future = Check(5, 6, {3, 4});
  EXPECT_EQ(future.status().code(), StatusCode::kUnauthenticated);
  auto backwards = Check(4, 3, {3, 4});
  EXPECT_EQ(backwards.status().code(), StatusCode::kProtocol);
}

}  // namespace
}  // namespace aiac::net
