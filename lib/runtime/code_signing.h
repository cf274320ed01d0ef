// Code signing for app plugins (Ed25519, OpenSSL), on top of the cluster key: a daemon loads a
// plugin only when its SHA-256 is signed by one of its operator's trusted_keys, so holding the
// cluster key is not enough to run code on it. Signing is on unless the operator turns it off by
// name (allow_unsigned_plugins = true); a daemon with neither does not start.
//
// What is signed: the 14 bytes "aiac-plugin-v1" followed by the plugin's 32-byte SHA-256. The
// signature travels in AssignTask.pluginSignature and is checked against the hash the task
// names, before the plugin is looked up, received, written or loaded; the bytes are checked
// against that hash before they are written.
//
// Key formats: the private key is a PKCS#8 PEM file (`openssl pkey -in F -text` reads it; the
// file must not be accessible by group or others); a public key is 64 hex characters (the raw
// 32-byte Ed25519 key), the form trusted_keys takes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ed25519.h"
#include "core/status.h"

namespace aiac::runtime {

inline constexpr size_t kSignatureBytes = kEd25519SignatureBytes;

// A publisher's plugin-signing key.
class SigningKey {
 public:
  // Reads a PEM private key; refused when the file is accessible by group or others.
  static Result<SigningKey> Load(const std::string& path);
  // A fresh key pair.
  static Result<SigningKey> Generate();

  // 64-byte signature over `sha256` (32 bytes), in the plugin domain.
  std::string Sign(std::string_view sha256) const;
  // The public key: 32 raw bytes, or 64 hex characters.
  std::string PublicKey() const { return key_.PublicKey(); }
  std::string PublicHex() const { return key_.PublicHex(); }
  // The private key as PEM text (for keygen).
  std::string PrivatePem() const { return key_.PrivatePem(); }

 private:
  explicit SigningKey(Ed25519Key key) : key_(std::move(key)) {}
  Ed25519Key key_;
};

using aiac::ParsePublicKey;

// Which plugins a daemon runs: those whose hash is signed by one of `keys` (raw 32-byte
// Ed25519 keys), or any plugin when `allow_unsigned`. The default runs none.
// Keys `revoked` answers true for are refused even when listed in `keys`: a publisher's key that
// leaked is revoked everywhere by one list (the daemon's revoked_keys and its authority's
// revocation lists, net/revocation.h), while the other trusted keys keep working.
struct PluginTrust {
  std::vector<std::string> keys;
  bool allow_unsigned = false;
  std::function<bool(std::string_view public_key)> revoked;  // null: none
};

// A signing key's short name in messages and signature files: the first 8 bytes of the SHA-256
// of its raw public key, in hex (16 characters).
std::string KeyId(std::string_view public_key);

// True when `signature` is a valid signature of `sha256` by one of `trusted` (raw 32-byte keys).
bool SignedByOneOf(const std::vector<std::string>& trusted, std::string_view sha256,
                   std::string_view signature);

// Whether `trust` runs the plugin with hash `sha256` signed by `signer` (32 raw bytes, or empty
// when the sender did not name it) with `signature`: OK, or why not ("is not signed", ...: the
// plugin's name goes first).
Status CheckPluginSignature(const PluginTrust& trust, std::string_view sha256,
                            std::string_view signer, std::string_view signature);

}  // namespace aiac::runtime
