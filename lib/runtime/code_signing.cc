#include "runtime/code_signing.h"

#include "core/hex.h"
#include "core/sha256.h"

namespace aiac::runtime {
namespace {

constexpr std::string_view kDomain = "aiac-plugin-v1";

std::string SignedMessage(std::string_view sha256) {
  std::string m(kDomain);
  m.append(sha256);
  return m;
}

}  // namespace

Result<SigningKey> SigningKey::Load(const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(Ed25519Key key, Ed25519Key::Load(path, "signing key"));
  return SigningKey(std::move(key));
}

Result<SigningKey> SigningKey::Generate() {
  AIAC_ASSIGN_OR_RETURN(Ed25519Key key, Ed25519Key::Generate());
  return SigningKey(std::move(key));
}

std::string SigningKey::Sign(std::string_view sha256) const {
  return key_.Sign(SignedMessage(sha256));
}

bool SignedByOneOf(const std::vector<std::string>& trusted, std::string_view sha256,
                   std::string_view signature) {
  if (sha256.size() != 32) return false;
  const std::string message = SignedMessage(sha256);
  for (const std::string& raw : trusted) {
    if (Ed25519Verify(raw, message, signature)) return true;
  }
  return false;
}

std::string KeyId(std::string_view public_key) {
  return Hex(std::string_view(Sha256(public_key)).substr(0, 8));
}

Status CheckPluginSignature(const PluginTrust& trust, std::string_view sha256,
                            std::string_view signer, std::string_view signature) {
  const auto revoked = [&](std::string_view key) { return trust.revoked && trust.revoked(key); };
  if (!signer.empty() && revoked(signer)) {
    return Unauthenticated("is signed by key " + KeyId(signer) + ", which is revoked here");
  }
  if (trust.allow_unsigned) return Status::Ok();
  if (signature.empty()) return Unauthenticated("is not signed");
  std::vector<std::string> keys;
  for (const std::string& key : trust.keys) {
    if (!revoked(key)) keys.push_back(key);
  }
  if (SignedByOneOf(keys, sha256, signature)) return Status::Ok();
  return Unauthenticated(std::string("is not signed by a trusted key") +
                         (signer.empty() ? "" : " (signed by key " + KeyId(signer) + ")"));
}

}  // namespace aiac::runtime
