// Node certificates, enrollers' chains, revocation lists and enrollment tokens
// (net/certificate.h, net/revocation.h, net/enrollment_token.h): what verifies, and every way
// a forged, altered, expired or revoked one is refused.
#include "net/certificate.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include "net/enrollment_token.h"
#include "net/revocation.h"
#include "support/test_support.h"

namespace aiac::net {
namespace {

constexpr int64_t kNow = 1'800'000'000;
constexpr int64_t kDay = 86400;

Ed25519Key NewKey() { return *Ed25519Key::Generate(); }

class CertificateTest : public ::testing::Test {
 protected:
  CertificateTest() : authority_(NewKey()), node_(NewKey()), trust_({authority_.PublicKey()}) {}

  Certificate Make(const std::string& id, proto::Role role, int64_t expires = kNow + kDay,
                   bool enroller = false) {
    auto cert = Certify(authority_, id, role, node_.PublicKey(), expires, enroller);
    EXPECT_TRUE(cert.ok()) << cert.status().message();
    return *cert;
  }

  // Whether `cert` is refused, with `why` in the reason.
  ::testing::AssertionResult Refused(const Certificate& cert, const std::string& why) {
    Status s = VerifyCertificate(cert, trust_, kNow);
    if (s.ok()) return ::testing::AssertionFailure() << "believed";
    if (s.code() != StatusCode::kUnauthenticated || s.message().find(why) == std::string::npos)
      return ::testing::AssertionFailure() << s.ToString();
    return ::testing::AssertionSuccess();
  }

  Ed25519Key authority_, node_;
  Trust trust_;
};

TEST_F(CertificateTest, AnAuthoritysCertificateIsBelievedUntilItExpires) {
  EXPECT_OK(VerifyCertificate(Make("d7", proto::Role::DAEMON), trust_, kNow));
  EXPECT_TRUE(Refused(Make("d7", proto::Role::DAEMON, kNow), "expired 0 s ago"));
  Trust stranger({NewKey().PublicKey()});
  EXPECT_FALSE(VerifyCertificate(Make("d7", proto::Role::DAEMON), stranger, kNow).ok());
}

TEST_F(CertificateTest, EveryFieldIsCoveredByTheSignature) {
  const Certificate good = Make("d7", proto::Role::DAEMON);
  std::vector<Certificate> altered(6, good);
  altered[0].id = "d8";
  altered[1].role = proto::Role::SPAWNER;
  altered[2].public_key = NewKey().PublicKey();
  altered[3].expires += 1;
  altered[4].enroller = true;
  altered[5].signature[10] ^= 1;
  for (const auto& cert : altered) EXPECT_TRUE(Refused(cert, "not signed by"));
}

TEST_F(CertificateTest, ARevokedKeyOrAuthorityIsNoLongerBelieved) {
  const Certificate cert = Make("d7", proto::Role::DAEMON);
  Trust node_revoked({authority_.PublicKey()});
  node_revoked.revoked = std::make_shared<RevokedKeys>(std::set<std::string>{node_.PublicKey()});
  Status s = VerifyCertificate(cert, node_revoked, kNow);
  EXPECT_NE(s.message().find("is revoked"), std::string::npos) << s.ToString();
  Trust authority_revoked({authority_.PublicKey()});
  auto list = MakeRevocationList(authority_, 1, {authority_.PublicKey()});
  ASSERT_TRUE(list.ok());
  ASSERT_TRUE(*authority_revoked.revoked->Adopt(*list, authority_revoked.authorities));
  s = VerifyCertificate(cert, authority_revoked, kNow);
  EXPECT_NE(s.message().find("its authority"), std::string::npos) << s.ToString();
}

TEST_F(CertificateTest, AnEnrollerCertifiesDaemonsOnlyAndOnlyWhileItIsBelieved) {
  Ed25519Key sn_key = NewKey();
  auto sn = Certify(authority_, "sn1", proto::Role::SUPERNODE, sn_key.PublicKey(), kNow + 10 * kDay,
                    /*enroller=*/true);
  ASSERT_TRUE(sn.ok());
  auto issuer = std::make_shared<const Certificate>(*sn);
  auto daemon =
      Certify(sn_key, "vol-1", proto::Role::DAEMON, node_.PublicKey(), kNow + kDay, false, issuer);
  ASSERT_TRUE(daemon.ok());
  EXPECT_OK(VerifyCertificate(*daemon, trust_, kNow));

  // Not for another role; not from a super-node without the flag; one level only.
  auto spawner =
      Certify(sn_key, "sp", proto::Role::SPAWNER, node_.PublicKey(), kNow + kDay, false, issuer);
  ASSERT_TRUE(spawner.ok());
  EXPECT_TRUE(Refused(*spawner, "certifies daemons only"));
  auto plain_sn =
      Certify(authority_, "sn2", proto::Role::SUPERNODE, sn_key.PublicKey(), kNow + kDay);
  auto by_plain = Certify(sn_key, "vol-2", proto::Role::DAEMON, node_.PublicKey(), kNow + kDay,
                          false, std::make_shared<const Certificate>(*plain_sn));
  EXPECT_TRUE(Refused(*by_plain, "not an enroller"));
  auto deeper = *daemon;
  auto middle = *sn;
  middle.issuer = issuer;
  deeper.issuer = std::make_shared<const Certificate>(middle);
  EXPECT_TRUE(Refused(deeper, "longer than one enroller"));
  // Signed by someone else than the enroller it names.
  auto forged = Certify(NewKey(), "vol-3", proto::Role::DAEMON, node_.PublicKey(), kNow + kDay,
                        false, issuer);
  EXPECT_TRUE(Refused(*forged, "not signed by its issuer"));
  // The enroller revoked or expired: what it certified goes with it.
  Trust revoked({authority_.PublicKey()});
  revoked.revoked = std::make_shared<RevokedKeys>(std::set<std::string>{sn_key.PublicKey()});
  EXPECT_FALSE(VerifyCertificate(*daemon, revoked, kNow).ok());
  EXPECT_FALSE(VerifyCertificate(*daemon, trust_, kNow + 11 * kDay).ok());
  // An enroller flag on anything but a super-node cannot even be made.
  EXPECT_FALSE(Certify(authority_, "d", proto::Role::DAEMON, node_.PublicKey(), kNow, true).ok());
}

TEST_F(CertificateTest, FileAndWireFormsRoundTripAndBadFilesNameTheField) {
  Ed25519Key sn_key = NewKey();
  auto sn =
      Certify(authority_, "sn1", proto::Role::SUPERNODE, sn_key.PublicKey(), kNow + kDay, true);
  auto daemon = Certify(sn_key, "vol-1", proto::Role::DAEMON, node_.PublicKey(), kNow + kDay, false,
                        std::make_shared<const Certificate>(*sn));
  ASSERT_TRUE(daemon.ok());
  auto parsed = ParseCertificateJson(CertificateJson(*daemon));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_OK(VerifyCertificate(*parsed, trust_, kNow));
  ASSERT_TRUE(parsed->issuer);
  EXPECT_TRUE(parsed->issuer->enroller);

  capnp::MallocMessageBuilder message;
  FillCertificate(*daemon, message.initRoot<proto::Certificate>());
  const Certificate read = ReadCertificate(message.getRoot<proto::Certificate>().asReader());
  EXPECT_OK(VerifyCertificate(read, trust_, kNow));

  for (const auto& [text, field] : std::vector<std::pair<std::string, std::string>>{
           {"[]", "JSON object"},
           {R"({"id": "d1"})", "'role'"},
           {R"({"id": "d1", "role": "boss"})", "none of super-node"},
           {R"({"id": "d1", "role": "daemon", "public_key": "xyz"})", "'public_key'"}}) {
    auto bad = ParseCertificateJson(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(field), std::string::npos) << bad.status().message();
  }
}

class RevocationTest : public ::testing::Test {
 protected:
  RevocationTest() : authority_(NewKey()), authorities_{authority_.PublicKey()} {}
  Ed25519Key authority_;
  std::vector<std::string> authorities_;
};

TEST_F(RevocationTest, OnlyANewerListOfATrustedAuthorityIsAdopted) {
  const std::string a = NewKey().PublicKey(), b = NewKey().PublicKey();
  RevokedKeys revoked;
  auto first = MakeRevocationList(authority_, 5, {a});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*revoked.Adopt(*first, authorities_));
  EXPECT_TRUE(revoked.Contains(a));
  EXPECT_FALSE(revoked.Contains(b));
  // The same or an older one changes nothing (a replay).
  EXPECT_FALSE(*revoked.Adopt(*first, authorities_));
  auto older = MakeRevocationList(authority_, 4, {});
  EXPECT_FALSE(*revoked.Adopt(*older, authorities_));
  EXPECT_TRUE(revoked.Contains(a));
  auto newer = MakeRevocationList(authority_, 6, {b});
  EXPECT_TRUE(*revoked.Adopt(*newer, authorities_));
  EXPECT_TRUE(revoked.Contains(b));
  EXPECT_FALSE(revoked.Contains(a));  // a newer list replaces, it does not add
  EXPECT_EQ(revoked.generation(), 2u);

  // Altered, or signed by no trusted authority: refused.
  auto altered = *newer;
  altered.serial = 100;
  EXPECT_FALSE(revoked.Adopt(altered, authorities_).ok());
  auto stranger = MakeRevocationList(NewKey(), 100, {a});
  EXPECT_FALSE(revoked.Adopt(*stranger, authorities_).ok());
  EXPECT_FALSE(revoked.Contains(a));
}

TEST_F(RevocationTest, FilesHoldOneListOrSeveral) {
  auto one = MakeRevocationList(authority_, 3, {NewKey().PublicKey(), NewKey().PublicKey()});
  auto parsed = ParseRevocationJson(RevocationJson(*one));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_OK(VerifyRevocationList(*parsed, authorities_));
  testing::TempDir dir;
  Ed25519Key other = NewKey();
  auto two = MakeRevocationList(other, 9, {});
  testing::WriteFile(dir / "lists.json", RevocationListsJson({*one, *two}));
  auto lists = LoadRevocationLists(dir / "lists.json");
  ASSERT_TRUE(lists.ok()) << lists.status().message();
  ASSERT_EQ(lists->size(), 2u);
  EXPECT_EQ((*lists)[1].serial, 9u);
  testing::WriteFile(dir / "bad.json", R"({"authority": "00", "serial": 1})");
  auto bad = LoadRevocationLists(dir / "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'revoked'"), std::string::npos);
}

TEST(EnrollmentTokenTest, ATokenRoundTripsAndEveryAlterationIsRefused) {
  Ed25519Key authority = NewKey();
  Trust trust({authority.PublicKey()});
  auto token = MakeEnrollmentToken(authority, "vol-1", "sn1", kNow + kDay, 30);
  ASSERT_TRUE(token.ok());
  const std::string text = EncodeEnrollmentToken(*token);
  EXPECT_TRUE(text.starts_with("aiac-enroll-"));
  auto decoded = DecodeEnrollmentToken(text);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->node_id, "vol-1");
  EXPECT_EQ(decoded->supernode_id, "sn1");
  EXPECT_EQ(decoded->days, 30u);
  EXPECT_OK(VerifyEnrollmentToken(*decoded, trust, kNow));

  EXPECT_FALSE(VerifyEnrollmentToken(*decoded, trust, kNow + kDay).ok());  // expired
  EXPECT_FALSE(VerifyEnrollmentToken(*decoded, Trust({NewKey().PublicKey()}), kNow).ok());
  auto altered = *decoded;
  altered.node_id = "d1";  // another daemon's id
  EXPECT_FALSE(VerifyEnrollmentToken(altered, trust, kNow).ok());
  // Cut short, or not a token at all: refused while decoding.
  EXPECT_FALSE(DecodeEnrollmentToken(text.substr(0, text.size() - 2)).ok());
  EXPECT_FALSE(DecodeEnrollmentToken("aiac-enroll-zz").ok());
  EXPECT_FALSE(DecodeEnrollmentToken("hello").ok());
  // A flipped hex digit in the middle: it decodes or not, but never verifies.
  std::string flipped = text;
  flipped[40] = flipped[40] == '0' ? '1' : '0';
  auto f = DecodeEnrollmentToken(flipped);
  EXPECT_TRUE(!f.ok() || !VerifyEnrollmentToken(*f, trust, kNow).ok());
}

}  // namespace
}  // namespace aiac::net
