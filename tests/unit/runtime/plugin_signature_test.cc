// The publisher's signature file, and what a daemon makes of a signature: trusted, untrusted,
// revoked.
#include "runtime/plugin_signature.h"

#include <gtest/gtest.h>

#include "core/hex.h"
#include "core/sha256.h"
#include "support/test_support.h"

namespace aiac::runtime {
namespace {

class PluginSignatureTest : public ::testing::Test {
 protected:
  SigningKey publisher_ = *SigningKey::Generate();
  SigningKey other_ = *SigningKey::Generate();
  std::string hash_ = Sha256("the plugin's bytes");
};

TEST_F(PluginSignatureTest, TheFileReadsBackAsWritten) {
  const PluginSignature s = SignPluginHash(publisher_, hash_);
  const std::string text = FormatSignature(s, "libaiac_app_x.so");
  EXPECT_NE(text.find("key_id = \"" + KeyId(publisher_.PublicKey()) + "\""), std::string::npos)
      << text;
  auto back = ParseSignature(text, "x.sig");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->sha256, hash_);
  EXPECT_EQ(back->public_key, publisher_.PublicKey());
  EXPECT_EQ(back->signature, s.signature);
  EXPECT_EQ(KeyId(publisher_.PublicKey()).size(), 16u);
}

TEST_F(PluginSignatureTest, AFileThatDoesNotHoldTogetherIsRefusedWithOneLine) {
  const PluginSignature s = SignPluginHash(publisher_, hash_);
  const std::string good = FormatSignature(s, "p.so");
  const auto refused = [](const std::string& text, const std::string& what) {
    auto r = ParseSignature(text, "p.so.sig");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  };
  const auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // Another hash under the same signature: not the key's signature of it.
  refused(replace(Hex(hash_), Hex(Sha256("another build"))), "is not key");
  // Another key claimed: neither its id nor its signature fit.
  refused(replace(Hex(publisher_.PublicKey()), other_.PublicHex()), "key_id");
  refused(replace("key_id = \"" + KeyId(publisher_.PublicKey()),
                  "key_id = \"" + KeyId(other_.PublicKey())),
          "is not the public key's");
  refused(replace(Hex(s.signature), Hex(s.signature).substr(2)), "'signature' must be 128 hex");
  refused("sha256 = \"" + Hex(hash_) + "\"\n", "no 'public_key'");
  refused("not toml at all [", "p.so.sig");
}

TEST_F(PluginSignatureTest, ASignatureOfAnotherBuildSaysToSignAgain) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.so.sig";
  testing::WriteFile(path, FormatSignature(SignPluginHash(publisher_, hash_), "p.so"));
  EXPECT_TRUE(ReadSignatureFor(path, hash_).ok());
  auto stale = ReadSignatureFor(path, Sha256("rebuilt"));
  ASSERT_FALSE(stale.ok());
  EXPECT_NE(stale.status().message().find("sign it again"), std::string::npos)
      << stale.status().message();
  EXPECT_FALSE(ReadSignatureFor(dir.path() + "/missing.sig", hash_).ok());
}

TEST_F(PluginSignatureTest, ADaemonRunsWhatATrustedKeySignedUnlessThatKeyIsRevoked) {
  const PluginSignature s = SignPluginHash(publisher_, hash_);
  PluginTrust trust;
  trust.keys = {other_.PublicKey(), publisher_.PublicKey()};
  EXPECT_TRUE(CheckPluginSignature(trust, hash_, s.public_key, s.signature).ok());
  // The signer need not be named: the trusted keys are tried.
  EXPECT_TRUE(CheckPluginSignature(trust, hash_, "", s.signature).ok());
  EXPECT_EQ(CheckPluginSignature(trust, hash_, "", "").message(), "is not signed");
  EXPECT_EQ(CheckPluginSignature(trust, Sha256("other"), s.public_key, s.signature).message(),
            "is not signed by a trusted key (signed by key " + KeyId(s.public_key) + ")");
  // Revoked: refused although trusted, whether the sender names the signer or not; the other
  // trusted key still works.
  trust.revoked = [&](std::string_view key) { return key == publisher_.PublicKey(); };
  EXPECT_EQ(CheckPluginSignature(trust, hash_, s.public_key, s.signature).message(),
            "is signed by key " + KeyId(s.public_key) + ", which is revoked here");
  EXPECT_FALSE(CheckPluginSignature(trust, hash_, "", s.signature).ok());
  const PluginSignature by_other = SignPluginHash(other_, hash_);
  EXPECT_TRUE(CheckPluginSignature(trust, hash_, by_other.public_key, by_other.signature).ok());
  // A daemon that runs unsigned plugins still refuses a revoked signer's.
  trust.allow_unsigned = true;
  EXPECT_FALSE(CheckPluginSignature(trust, hash_, s.public_key, s.signature).ok());
  EXPECT_TRUE(CheckPluginSignature(trust, hash_, "", "").ok());
}

}  // namespace
}  // namespace aiac::runtime
