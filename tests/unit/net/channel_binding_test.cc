// Identities in the handshake (net/identity.h): a Hello's certificate names the peer's id and
// role, and its binding proves the certified key signed this very TLS channel. Over real
// loopback connections where both ends are in this process, and on hand-made Hellos for what a
// correct process never sends (a claim its certificate does not back, a relayed or reflected
// binding).
#include <capnp/message.h>
#include <gtest/gtest.h>

#include <optional>

#include "net/capnp_bytes.h"
#include "net/connection.h"
#include "net/identity.h"
#include "support/identities.h"
#include "support/loopback.h"
#include "support/test_support.h"

namespace aiac::net {
namespace {

constexpr const char* kKey = "channel-binding-test-key-0123456789";

struct Ends {
  Status client, server;
  ConnectionPtr a, b;
};

// A daemon `client_id` dialling super-node "sn" with these options over `io` (which must outlive
// the connections); both handshakes' outcomes.
Ends Connect(asio::io_context& io, const NetOptions& client, const NetOptions& server,
             const std::string& client_id = "d1") {
  auto [sa, sb] = testing::ConnectLoopback(io);
  Ends e;
  e.a = Connection::Create(std::move(sa), client, Side::kClient);
  e.b = Connection::Create(std::move(sb), server, Side::kServer);
  auto [x, y] = testing::HandshakeBoth(io, {e.a, proto::Role::DAEMON, client_id},
                                       {e.b, proto::Role::SUPERNODE, "sn"});
  e.client = x;
  e.server = y;
  return e;
}

NetOptions With(std::shared_ptr<const NodeIdentity> identity) {
  NetOptions o;
  o.cluster_key = kKey;
  o.handshake_timeout = std::chrono::milliseconds(5000);
  o.identity = std::move(identity);
  return o;
}

class ChannelBindingTest : public ::testing::Test {
 protected:
  Ends Connect(const NetOptions& client, const NetOptions& server,
               const std::string& client_id = "d1") {
    return net::Connect(io_, client, server, client_id);
  }

  asio::io_context io_;
  testing::TestAuthority authority_;
};

TEST_F(ChannelBindingTest, CertifiedPeersLearnEachOthersIdRoleAndKey) {
  auto d1 = authority_.Identity("d1", proto::Role::DAEMON);
  auto sn = authority_.Identity("sn", proto::Role::SUPERNODE);
  Ends e = Connect(With(d1), With(sn));
  ASSERT_OK(e.client);
  ASSERT_OK(e.server);
  EXPECT_EQ(e.b->peer().id, "d1");
  EXPECT_EQ(e.b->peer().public_key, d1->key.PublicKey());
  EXPECT_EQ(e.a->peer().public_key, sn->key.PublicKey());
  EXPECT_FALSE(e.b->peer().enrolling);
}

TEST_F(ChannelBindingTest, APeerWithoutACertificateOrOfAnotherAuthorityIsRefused) {
  auto sn = authority_.Identity("sn", proto::Role::SUPERNODE);
  // Only the cluster key: what every volunteer of the old scheme held.
  Ends keyless = Connect(With(nullptr), With(sn));
  EXPECT_EQ(keyless.server.code(), StatusCode::kUnauthenticated);
  EXPECT_NE(keyless.server.message().find("shows no certificate"), std::string::npos)
      << keyless.server.ToString();
  testing::TestAuthority stranger;
  Ends foreign = Connect(With(stranger.Identity("d1", proto::Role::DAEMON)), With(sn));
  EXPECT_NE(foreign.server.message().find("not signed by a trusted authority"), std::string::npos)
      << foreign.server.ToString();
  // The other way round: a daemon refuses a super-node that shows no certificate.
  Ends no_server_cert =
      Connect(With(authority_.Identity("d1", proto::Role::DAEMON)), With(nullptr));
  EXPECT_NE(no_server_cert.client.message().find("shows no certificate"), std::string::npos)
      << no_server_cert.client.ToString();
}

TEST_F(ChannelBindingTest, ARevokedPeerIsRefusedAtTheHandshake) {
  auto d1 = authority_.Identity("d1", proto::Role::DAEMON);
  Trust trust = authority_.MakeTrust();
  trust.revoked = std::make_shared<RevokedKeys>(std::set<std::string>{d1->key.PublicKey()});
  auto sn = authority_.IdentityWith(trust, "sn", proto::Role::SUPERNODE);
  Ends e = Connect(With(d1), With(sn));
  EXPECT_NE(e.server.message().find("is revoked"), std::string::npos) << e.server.ToString();
}

TEST_F(ChannelBindingTest, AnEnrollingDaemonIsAcceptedByAnEnrollerOnlyAndMarkedSo) {
  auto enrolling = MakeEnrollingIdentity(*Ed25519Key::Generate(), authority_.MakeTrust());
  auto sn = authority_.Identity("sn", proto::Role::SUPERNODE, /*enroller=*/true);
  Ends refused = Connect(With(enrolling), With(sn), "vol-1");
  EXPECT_NE(refused.server.message().find("comes to enroll"), std::string::npos)
      << refused.server.ToString();
  NetOptions enroller = With(sn);
  enroller.accept_enrollment = true;
  Ends e = Connect(With(enrolling), enroller, "vol-1");
  ASSERT_OK(e.server);
  ASSERT_OK(e.client);
  EXPECT_TRUE(e.b->peer().enrolling);
  EXPECT_EQ(e.b->peer().id, "vol-1");
  EXPECT_EQ(e.b->peer().public_key, enrolling->key.PublicKey());
}

// Hand-made Hellos, checked as a server checks a client's.
class HelloTest : public ChannelBindingTest {
 protected:
  HelloTest()
      : d9_(authority_.Identity("d9", proto::Role::DAEMON)), trust_(authority_.MakeTrust()) {}

  // A daemon's Hello claiming `id`, with `who`'s certificate and a binding by `who`'s key over
  // `exporter` as the client (or the server) of the channel.
  Result<PeerIdentity> Check(const std::string& id, const NodeIdentity& who,
                             const std::string& exporter, bool signer_is_client = true) {
    capnp::MallocMessageBuilder message;
    auto hello = message.initRoot<proto::Envelope>().initHello();
    hello.setVersion(kProtocolVersion);
    hello.setRole(proto::Role::DAEMON);
    hello.setNodeId(id);
    FillCertificate(who.certificate, hello.initCertificate());
    hello.setBinding(AsBytes(who.key.Sign(BindingBytes(signer_is_client, exporter))));
    ChannelCheck check{&trust_, "this channel's exporter", /*peer_is_client=*/true, UnixNow(),
                       false};
    return ValidateHello(message.getRoot<proto::Envelope>().asReader(), proto::Role::SUPERNODE,
                         "sn", std::nullopt, &check);
  }

  std::shared_ptr<const NodeIdentity> d9_;
  Trust trust_;
};

TEST_F(HelloTest, OnlyTheCertificatesIdOnThisVeryChannelIsBelieved) {
  EXPECT_OK(Check("d9", *d9_, "this channel's exporter").status());
  // A key holder with its own certificate claims a live daemon's id (the old hijack).
  auto claim = Check("d1", *d9_, "this channel's exporter");
  EXPECT_NE(claim.status().message().find("certificate names daemon \"d9\""), std::string::npos)
      << claim.status().ToString();
  // A Hello relayed from another TLS session: signed over that session's exporter.
  auto relayed = Check("d9", *d9_, "another channel's exporter");
  EXPECT_NE(relayed.status().message().find("not bound to this connection"), std::string::npos)
      << relayed.status().ToString();
  // Our own Hello reflected back: made by the other side of the channel.
  auto reflected = Check("d9", *d9_, "this channel's exporter", /*signer_is_client=*/false);
  EXPECT_FALSE(reflected.ok());
  // Another daemon's certificate with a binding by d9's key: the key is not the certified one.
  NodeIdentity mixed{d9_->key, authority_.Identity("d9", proto::Role::DAEMON)->certificate, trust_};
  EXPECT_FALSE(Check("d9", mixed, "this channel's exporter").ok());
}

}  // namespace
}  // namespace aiac::net
