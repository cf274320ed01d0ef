// Ed25519 keys and signatures (OpenSSL): what plugin signing, node certificates and signed
// checkpoints are made of. A private key is a PKCS#8 PEM file readable by its owner only
// (`openssl pkey -in F -text` reads it); a public key travels as its 32 raw bytes, and is
// written as 64 hex characters in config files.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace aiac {

inline constexpr size_t kEd25519SignatureBytes = 64;
inline constexpr size_t kEd25519PublicKeyBytes = 32;

class Ed25519Key {
 public:
  // Reads a PEM private key; refused when the file is accessible by group or others. `what`
  // names the key in messages ("signing key", "identity key").
  static Result<Ed25519Key> Load(const std::string& path, std::string_view what);
  // A fresh key pair.
  static Result<Ed25519Key> Generate();

  // The 64-byte signature of `message`.
  std::string Sign(std::string_view message) const;
  // The public key: 32 raw bytes, or 64 hex characters.
  std::string PublicKey() const;
  std::string PublicHex() const;
  // The private key as PEM text (for keygen).
  std::string PrivatePem() const;

 private:
  struct Free {
    void operator()(void* p) const;
  };
  explicit Ed25519Key(void* pkey) : pkey_(pkey, Free{}) {}
  std::shared_ptr<void> pkey_;  // EVP_PKEY, immutable once made: copies share it
};

// Whether `signature` is `public_key`'s (32 raw bytes) signature of `message`.
bool Ed25519Verify(std::string_view public_key, std::string_view message,
                   std::string_view signature);

// Decodes a public key written as 64 hex characters into its 32 raw bytes. `what` names it in
// the message ("a trusted key must be 64 hex characters").
Result<std::string> ParsePublicKey(std::string_view hex, std::string_view what = "a trusted key");

}  // namespace aiac
