// A publisher's detached signature of a plugin: PLUGIN.sig, written once, offline, by whoever
// holds the app's signing key (`aiac-spawner sign PLUGIN --key K`), and shipped beside the
// plugin. A spawner sends it with the plugin and needs no private key; each daemon checks it
// against its trusted_keys (runtime/code_signing.h). This is BOINC's model: the project signs
// its app once, and anyone may submit work for it.
//
// The file is TOML, so that a person can read who signed what:
//
//   # aiac plugin signature
//   plugin = "libaiac_app_cg.so"          # the file signed (for people; not checked)
//   sha256 = "<64 hex>"                   # the plugin's SHA-256
//   key_id = "<16 hex>"                   # KeyId(public_key)
//   public_key = "<64 hex>"               # the signer's Ed25519 public key
//   signature = "<128 hex>"               # Ed25519 over "aiac-plugin-v1" | sha256
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "runtime/code_signing.h"

namespace aiac::runtime {

struct PluginSignature {
  std::string sha256;      // 32 raw bytes
  std::string public_key;  // 32 raw bytes
  std::string signature;   // 64 raw bytes
};

// The signature file beside a plugin.
inline std::string SignaturePathFor(const std::string& plugin_path) { return plugin_path + ".sig"; }

// Signs `sha256` (32 raw bytes) with `key`.
PluginSignature SignPluginHash(const SigningKey& key, std::string_view sha256);

// The file's text for a plugin named `plugin_name`.
std::string FormatSignature(const PluginSignature& s, std::string_view plugin_name);

// Parses a signature file's text (`name` in messages). Refused: a field missing or malformed, a
// key_id that is not the public key's, a signature that is not the public key's over sha256.
Result<PluginSignature> ParseSignature(std::string_view text, const std::string& name);

// Reads the signature at `path` and checks that it signs the plugin whose SHA-256 is `sha256`.
Result<PluginSignature> ReadSignatureFor(const std::string& path, std::string_view sha256);

}  // namespace aiac::runtime
