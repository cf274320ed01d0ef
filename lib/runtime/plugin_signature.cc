#include "runtime/plugin_signature.h"

#include <sstream>

#include "core/config.h"
#include "core/hex.h"
#include "core/read_file.h"

namespace aiac::runtime {
namespace {

// A hex field of `bytes` raw bytes.
Result<std::string> HexField(const toml::table& t, std::string_view key, size_t bytes,
                             const std::string& name) {
  const auto* value = t.get_as<std::string>(key);
  if (!value) return InvalidArgument(name + ": no '" + std::string(key) + "'");
  auto raw = Unhex(value->get());
  if (!raw || raw->size() != bytes) {
    return InvalidArgument(name + ": '" + std::string(key) + "' must be " +
                           std::to_string(2 * bytes) + " hex characters");
  }
  return *raw;
}

}  // namespace

PluginSignature SignPluginHash(const SigningKey& key, std::string_view sha256) {
  return {std::string(sha256), key.PublicKey(), key.Sign(sha256)};
}

std::string FormatSignature(const PluginSignature& s, std::string_view plugin_name) {
  toml::table t;
  t.insert("plugin", std::string(plugin_name));
  t.insert("sha256", Hex(s.sha256));
  t.insert("key_id", KeyId(s.public_key));
  t.insert("public_key", Hex(s.public_key));
  t.insert("signature", Hex(s.signature));
  std::ostringstream out;
  out << "# aiac plugin signature (aiac-spawner sign): the publisher's Ed25519 signature of the\n"
         "# plugin's SHA-256. Daemons run the plugin when public_key is in their trusted_keys.\n"
      << toml::toml_formatter(
             t, toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings)
      << "\n";
  return out.str();
}

Result<PluginSignature> ParseSignature(std::string_view text, const std::string& name) {
  AIAC_ASSIGN_OR_RETURN(const toml::table t, ParseTomlText(text, name));
  PluginSignature s;
  AIAC_ASSIGN_OR_RETURN(s.sha256, HexField(t, "sha256", 32, name));
  AIAC_ASSIGN_OR_RETURN(s.public_key, HexField(t, "public_key", kEd25519PublicKeyBytes, name));
  AIAC_ASSIGN_OR_RETURN(s.signature, HexField(t, "signature", kSignatureBytes, name));
  if (const auto* id = t.get_as<std::string>("key_id"); id && id->get() != KeyId(s.public_key)) {
    return InvalidArgument(name + ": key_id " + id->get() + " is not the public key's (" +
                           KeyId(s.public_key) + ")");
  }
  if (!SignedByOneOf({s.public_key}, s.sha256, s.signature)) {
    return InvalidArgument(name + ": the signature is not key " + KeyId(s.public_key) +
                           "'s signature of sha256");
  }
  return s;
}

Result<PluginSignature> ReadSignatureFor(const std::string& path, std::string_view sha256) {
  AIAC_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path));
  AIAC_ASSIGN_OR_RETURN(PluginSignature s, ParseSignature(text, path));
  if (s.sha256 != sha256) {
    return InvalidArgument(path + " signs another build of the plugin (sha256 " +
                           Hex(s.sha256).substr(0, 12) + ", the file's is " +
                           Hex(sha256).substr(0, 12) + "): sign it again (aiac-spawner sign)");
  }
  return s;
}

}  // namespace aiac::runtime
