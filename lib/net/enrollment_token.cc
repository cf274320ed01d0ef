#include "net/enrollment_token.h"

#include "core/hex.h"
#include "core/names.h"
#include "core/signed_bytes.h"
#include "net/random.h"

namespace aiac::net {
namespace {

constexpr size_t kTokenIdBytes = 12;

// The token's fields, without the domain: what the text form carries before the signature.
std::string Fields(const EnrollmentToken& token) {
  return EnrollmentTokenBytes(token).substr(SignedBytes("aiac-enroll-v1").bytes().size());
}

}  // namespace

std::string EnrollmentTokenBytes(const EnrollmentToken& token) {
  return SignedBytes("aiac-enroll-v1")
      .Text(token.token_id)
      .Text(token.node_id)
      .Text(token.supernode_id)
      .I64(token.expires)
      .U32(token.days)
      .bytes();
}

Result<EnrollmentToken> MakeEnrollmentToken(const Ed25519Key& authority, std::string node_id,
                                            std::string supernode_id, int64_t expires,
                                            uint32_t days) {
  AIAC_RETURN_IF_ERROR(CheckName("daemon id", node_id));
  AIAC_RETURN_IF_ERROR(CheckName("super-node id", supernode_id));
  if (days == 0) return InvalidArgument("a certificate must be valid for at least one day");
  const auto random = RandomBytes(kTokenIdBytes);
  EnrollmentToken token{std::string(random.begin(), random.end()),
                        std::move(node_id),
                        std::move(supernode_id),
                        expires,
                        days,
                        ""};
  token.signature = authority.Sign(EnrollmentTokenBytes(token));
  return token;
}

std::string EncodeEnrollmentToken(const EnrollmentToken& token) {
  return std::string(kEnrollmentTokenPrefix) + Hex(Fields(token) + token.signature);
}

Result<EnrollmentToken> DecodeEnrollmentToken(std::string_view text) {
  const Status bad = InvalidArgument(
      "not an enrollment token (they start with \"aiac-enroll-\"; `aiac-spawner enroll-token` "
      "makes them)");
  if (!text.starts_with(kEnrollmentTokenPrefix)) return bad;
  auto raw = Unhex(text.substr(kEnrollmentTokenPrefix.size()));
  if (!raw) return bad;
  FieldReader in(*raw);
  EnrollmentToken token;
  if (!in.Text(token.token_id) || !in.Text(token.node_id) || !in.Text(token.supernode_id) ||
      !in.I64(token.expires) || !in.U32(token.days) || in.rest().size() != kEd25519SignatureBytes ||
      token.token_id.size() != kTokenIdBytes) {
    return InvalidArgument("enrollment token damaged (cut short or altered in copying)");
  }
  token.signature = std::string(in.rest());
  return token;
}

Status VerifyEnrollmentToken(const EnrollmentToken& token, const Trust& trust, int64_t now) {
  const std::string bytes = EnrollmentTokenBytes(token);
  const std::string* signer = nullptr;
  for (const auto& authority : trust.authorities) {
    if (Ed25519Verify(authority, bytes, token.signature)) {
      signer = &authority;
      break;
    }
  }
  const std::string which = "enrollment token for '" + token.node_id + "'";
  if (signer == nullptr) return Unauthenticated(which + " is not signed by a trusted authority");
  if (trust.revoked->Contains(*signer)) {
    return Unauthenticated(which + ": its authority is revoked");
  }
  if (!CheckName("daemon id", token.node_id).ok() ||
      !CheckName("super-node id", token.supernode_id).ok() || token.days == 0) {
    return Unauthenticated(which + " is malformed");
  }
  if (token.expires <= now) {
    return Unauthenticated(which + " expired " + std::to_string(now - token.expires) + " s ago");
  }
  return Status::Ok();
}

}  // namespace aiac::net
