// Node certificates: a deployment authority's Ed25519 signature binding a node id and a role to
// the node's own public key, until an expiry date. Identity and role come from a certificate
// only: the cluster key admits a process to the network, it does not say who it is.
//
// Two shapes are believed, and no other:
// - signed by an authority (a key listed in `authority_keys`), for any role;
// - signed by an *enroller*, a super-node whose own certificate an authority signed with the
//   enroller flag, for the daemon role only. Such a certificate travels with its issuer's
//   (`issuer`), so that anyone who believes the authority can check it. A super-node enrolls
//   daemons that present a one-time token the operator made (net/enrollment_token.h), so the
//   authority key stays offline.
// Revoking a key (net/revocation.h) revokes the certificates it names and those it signed.
//
// What is signed (CertificateBytes, core/signed_bytes.h): "aiac-cert-v1", the role (0
// super-node, 1 daemon, 2 spawner), the flags (1: enroller), the id, the public key and the
// expiry (Unix seconds). The file form is JSON:
//   {"id": "d7", "role": "daemon", "public_key": "<64 hex>", "expires": 1795000000,
//    "enroller": false, "signature": "<128 hex>", "issuer": {...}}
// ("enroller" and "issuer" only when set).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ed25519.h"
#include "core/status.h"
#include "net/revocation.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct Certificate {
  std::string id;
  proto::Role role = proto::Role::DAEMON;
  std::string public_key;  // 32 raw bytes
  int64_t expires = 0;     // Unix seconds
  bool enroller = false;   // a super-node that may certify enrolling daemons
  std::string signature;   // 64 bytes, over CertificateBytes, by an authority or the issuer
  std::shared_ptr<const Certificate> issuer;  // the enroller's certificate, when it signed
};

// Whom a process believes: the authorities' public keys (32 raw bytes each), and the keys
// revoked since (shared: a revocation list adopted at run time counts for every connection
// that checks afterwards).
struct Trust {
  Trust() = default;
  explicit Trust(std::vector<std::string> authority_keys)
      : authorities(std::move(authority_keys)) {}

  std::vector<std::string> authorities;
  std::shared_ptr<RevokedKeys> revoked = std::make_shared<RevokedKeys>();
};

std::string CertificateBytes(const Certificate& cert);

// A certificate for `id` as `role` with `public_key` (32 raw bytes), valid until `expires`,
// signed by `issuer_key`; `issuer` is the signer's own certificate when the signer is an
// enroller (null when it is an authority). InvalidArgument when the id fails CheckName, the key
// is not 32 bytes, or an enroller flag is asked for another role than super-node.
Result<Certificate> Certify(const Ed25519Key& issuer_key, std::string id, proto::Role role,
                            std::string public_key, int64_t expires, bool enroller = false,
                            std::shared_ptr<const Certificate> issuer = nullptr);

// Why `cert` is not to be believed at `now` (Unix seconds), or Ok: a malformed id or key, a
// signature by no key of trust.authorities (directly, or through an enroller's certificate that
// is itself signed by one, for a daemon), an expiry passed (its own or its issuer's), a revoked
// key (its own, its issuer's or its authority's). kUnauthenticated for all of them, with the id
// and the reason.
Status VerifyCertificate(const Certificate& cert, const Trust& trust, int64_t now);

// The file form, and back. Errors name the field.
std::string CertificateJson(const Certificate& cert);
Result<Certificate> ParseCertificateJson(std::string_view text);
Result<Certificate> LoadCertificate(const std::string& path);

// The Cap'n Proto form, for the Hello and enrollment. Reading keeps one issuer level (a deeper
// chain is refused by VerifyCertificate anyway).
void FillCertificate(const Certificate& cert, proto::Certificate::Builder out);
Certificate ReadCertificate(proto::Certificate::Reader in);

// "super-node", "daemon", "spawner" and back (for logs, files and command lines).
const char* RoleName(proto::Role role);
Result<proto::Role> ParseRole(std::string_view name);

// Unix seconds now.
int64_t UnixNow();

}  // namespace aiac::net
