#include "runtime/code_signing.h"

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

}  // namespace aiac::runtime
