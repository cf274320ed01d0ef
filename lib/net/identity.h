// A process's identity on the network: its own Ed25519 key, the certificate an authority gave
// that key (net/certificate.h), and the authorities it believes. Inside the TLS channel each side's
// Hello carries its certificate and a signature, by the certified key, over the channel:
// BindingBytes(side, exporter), where the exporter is a value both ends of this one TLS session
// derive from its secrets (RFC 8446 section 7.5, label "EXPORTER-aiac-identity"). A relay holds
// two sessions with two different exporters, so a Hello it forwards does not verify; the side
// byte keeps a Hello from being reflected back to its sender. So a process's id and role are the
// ones its certificate names, proven by its key, on this very connection.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/ed25519.h"
#include "core/status.h"
#include "net/certificate.h"

namespace aiac::net {

struct NodeIdentity {
  Ed25519Key key;
  Certificate certificate;  // empty (no id) while the process enrolls
  Trust trust;
  // A daemon that has a key but no certificate yet: its Hello offers the key for enrollment
  // (net/enrollment_token.h) and it talks to an enroller super-node only.
  bool enrolling() const { return certificate.id.empty(); }
};

// An identity from its parts: the certificate must verify against `trust` now and name the
// public half of `key`.
Result<std::shared_ptr<const NodeIdentity>> MakeNodeIdentity(Ed25519Key key, Certificate cert,
                                                             Trust trust);

// A process that has `key` but no certificate yet, and comes to enroll.
std::shared_ptr<const NodeIdentity> MakeEnrollingIdentity(Ed25519Key key, Trust trust);

// The identity key at `path`, made (mode 600) when there is none yet: a node's key pair is made
// on the node and never leaves it; only its public half goes to the authority to be certified.
// `made` tells whether it was just made.
Result<Ed25519Key> LoadOrMakeIdentityKey(const std::string& path, bool& made);

// A fresh key pair written to `key_path` (mode 600) and its certificate for `id` as `role`,
// signed by `authority`, valid until `expires`, to `cert_path`: an identity handed out whole (a
// throwaway platform, a test, `aiac-spawner certify --new-key`).
Status WriteNewIdentity(const Ed25519Key& authority, const std::string& id, proto::Role role,
                        int64_t expires, const std::string& key_path, const std::string& cert_path,
                        bool enroller = false);

// Adopts a revocation list a peer passed on (RevokedKeys::Adopt against the identity's
// authorities) and, when it was newer, writes every list now held to `keep_in` (unless empty),
// so that a restart still refuses what it revokes. True when adopted; a failure to write is
// returned as an error after the list was adopted.
Result<bool> AdoptRevocations(const NodeIdentity& identity, const RevocationList& list,
                              const std::string& keep_in);

// The message a Hello's binding signs: "aiac-hello-v1", 'c' or 's' for the signer's side of the
// TLS session, then the session's exporter value.
std::string BindingBytes(bool signer_is_client, std::string_view exporter);

inline constexpr std::string_view kExporterLabel = "EXPORTER-aiac-identity";

}  // namespace aiac::net
