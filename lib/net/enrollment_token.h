// Enrollment tokens: how a volunteer's daemon gets a certificate without the authority key
// leaving the operator's machine (docs/security.md, enrolling daemons).
//
// The operator makes tokens offline with the authority key (`aiac-spawner enroll-token`); each
// names the daemon id it buys, the one enroller super-node that may redeem it, its own expiry
// and the validity of the certificate it buys. The volunteer starts the daemon with the token
// (`--enroll-token`); the daemon makes its key pair, connects to that super-node offering its
// new public key (the Hello's enrollKey, bound to the TLS channel), and sends the token; the
// super-node checks the authority's signature, records the token as used (a token buys one
// certificate, ever) and certifies the key as a daemon under the token's id with its own
// enroller key. The daemon keeps the certificate in its data directory and never needs the
// token again.
//
// What is signed (EnrollmentTokenBytes): "aiac-enroll-v1", the token id (12 random bytes), the
// node id, the super-node id, the expiry (Unix seconds) and the certificate's days of
// validity. The text form is "aiac-enroll-" followed by the hex of those fields and the
// signature.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ed25519.h"
#include "core/status.h"
#include "net/certificate.h"

namespace aiac::net {

struct EnrollmentToken {
  std::string token_id;      // 12 random bytes: what the super-node records as used
  std::string node_id;       // the daemon id the certificate names
  std::string supernode_id;  // the enroller that redeems it
  int64_t expires = 0;       // the token's expiry, Unix seconds
  uint32_t days = 365;       // validity of the certificate it buys
  std::string signature;     // 64 bytes, by an authority over EnrollmentTokenBytes
};

inline constexpr std::string_view kEnrollmentTokenPrefix = "aiac-enroll-";

std::string EnrollmentTokenBytes(const EnrollmentToken& token);

// A fresh token (random id) for `node_id` at `supernode_id`, signed by `authority`.
// InvalidArgument when an id fails CheckName or days is 0.
Result<EnrollmentToken> MakeEnrollmentToken(const Ed25519Key& authority, std::string node_id,
                                            std::string supernode_id, int64_t expires,
                                            uint32_t days);

// The text form, and back. Decoding checks the form only; VerifyEnrollmentToken the rest.
std::string EncodeEnrollmentToken(const EnrollmentToken& token);
Result<EnrollmentToken> DecodeEnrollmentToken(std::string_view text);

// Ok when `token` is signed by an authority of `trust` that is not revoked, names ids that pass
// CheckName, and has not expired at `now`; kUnauthenticated otherwise, saying why.
Status VerifyEnrollmentToken(const EnrollmentToken& token, const Trust& trust, int64_t now);

}  // namespace aiac::net
