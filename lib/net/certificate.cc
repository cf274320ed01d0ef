#include "net/certificate.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "core/hex.h"
#include "core/names.h"
#include "core/printable.h"
#include "core/read_file.h"
#include "core/signed_bytes.h"
#include "net/capnp_bytes.h"

namespace aiac::net {
namespace {

// The id as logs show peer text: quoted, escaped, capped.
std::string Quoted(std::string_view id) { return Printable(id, 128); }

// The checks of one certificate against the key that should have signed it (`signer`, 32 raw
// bytes): its own form, the signature, revocation and expiry.
Status CheckSigned(const Certificate& cert, std::string_view signer, const char* signer_name,
                   const Trust& trust, int64_t now) {
  const std::string who = "certificate of " + Quoted(cert.id);
  if (!CheckName("node id", cert.id).ok()) {
    return Unauthenticated("certificate with a malformed node id " + Quoted(cert.id));
  }
  if (cert.public_key.size() != kEd25519PublicKeyBytes) {
    return Unauthenticated(who + ": its public key is not 32 bytes");
  }
  if (!Ed25519Verify(signer, CertificateBytes(cert), cert.signature)) {
    return Unauthenticated(who + " is not signed by " + signer_name);
  }
  if (trust.revoked->Contains(cert.public_key)) {
    return Unauthenticated(who + ": its key " + Hex(cert.public_key).substr(0, 12) + " is revoked");
  }
  if (cert.expires <= now) {
    return Unauthenticated(who + " expired " + std::to_string(now - cert.expires) + " s ago");
  }
  return Status::Ok();
}

// The authority of trust.authorities that signed `cert`, or null.
const std::string* AuthorityOf(const Certificate& cert, const Trust& trust) {
  const std::string bytes = CertificateBytes(cert);
  for (const auto& authority : trust.authorities) {
    if (Ed25519Verify(authority, bytes, cert.signature)) return &authority;
  }
  return nullptr;
}

// An authority-signed certificate: the authority's own revocation, then the rest.
Status VerifyDirect(const Certificate& cert, const Trust& trust, int64_t now) {
  const std::string* authority = AuthorityOf(cert, trust);
  if (authority == nullptr) {
    return Unauthenticated("certificate of " + Quoted(cert.id) +
                           " is not signed by a trusted authority");
  }
  if (trust.revoked->Contains(*authority)) {
    return Unauthenticated("certificate of " + Quoted(cert.id) + ": its authority " +
                           Hex(*authority).substr(0, 12) + " is revoked");
  }
  return CheckSigned(cert, *authority, "its authority", trust, now);
}

}  // namespace

std::string CertificateBytes(const Certificate& cert) {
  return SignedBytes("aiac-cert-v1")
      .U8(static_cast<uint8_t>(cert.role))
      .U8(cert.enroller ? 1 : 0)
      .Text(cert.id)
      .Text(cert.public_key)
      .I64(cert.expires)
      .bytes();
}

Result<Certificate> Certify(const Ed25519Key& issuer_key, std::string id, proto::Role role,
                            std::string public_key, int64_t expires, bool enroller,
                            std::shared_ptr<const Certificate> issuer) {
  AIAC_RETURN_IF_ERROR(CheckName("node id", id));
  if (public_key.size() != kEd25519PublicKeyBytes) {
    return InvalidArgument("a node's public key must be 32 bytes (64 hex characters)");
  }
  if (enroller && role != proto::Role::SUPERNODE) {
    return InvalidArgument("only a super-node may be an enroller");
  }
  Certificate cert{std::move(id), role, std::move(public_key), expires,
                   enroller,      "",   std::move(issuer)};
  cert.signature = issuer_key.Sign(CertificateBytes(cert));
  return cert;
}

Status VerifyCertificate(const Certificate& cert, const Trust& trust, int64_t now) {
  if (!cert.issuer) return VerifyDirect(cert, trust, now);
  const Certificate& issuer = *cert.issuer;
  const std::string via =
      "certificate of " + Quoted(cert.id) + " (issued by " + Quoted(issuer.id) + ")";
  if (issuer.issuer) return Unauthenticated(via + ": a chain longer than one enroller");
  if (issuer.role != proto::Role::SUPERNODE || !issuer.enroller) {
    return Unauthenticated(via + ": its issuer is not an enroller");
  }
  if (cert.role != proto::Role::DAEMON) {
    return Unauthenticated(via + ": an enroller certifies daemons only");
  }
  if (Status s = VerifyDirect(issuer, trust, now); !s.ok()) {
    return Unauthenticated(via + ": " + s.message());
  }
  if (trust.revoked->Contains(issuer.public_key)) {
    return Unauthenticated(via + ": its issuer's key is revoked");
  }
  return CheckSigned(cert, issuer.public_key, "its issuer", trust, now);
}

const char* RoleName(proto::Role role) {
  switch (role) {
    case proto::Role::SUPERNODE:
      return "super-node";
    case proto::Role::DAEMON:
      return "daemon";
    case proto::Role::SPAWNER:
      return "spawner";
  }
  return "unknown";
}

Result<proto::Role> ParseRole(std::string_view name) {
  for (proto::Role role : {proto::Role::SUPERNODE, proto::Role::DAEMON, proto::Role::SPAWNER}) {
    if (name == RoleName(role)) return role;
  }
  return InvalidArgument("role " + Quoted(name) + " is none of super-node, daemon, spawner");
}

std::string CertificateJson(const Certificate& cert) {
  nlohmann::ordered_json j;
  j["id"] = cert.id;
  j["role"] = RoleName(cert.role);
  j["public_key"] = Hex(cert.public_key);
  j["expires"] = cert.expires;
  if (cert.enroller) j["enroller"] = true;
  j["signature"] = Hex(cert.signature);
  if (cert.issuer) j["issuer"] = nlohmann::ordered_json::parse(CertificateJson(*cert.issuer));
  return j.dump(2) + "\n";
}

namespace {

Result<Certificate> FromJson(const nlohmann::json& j, int depth) {
  if (!j.is_object()) return InvalidArgument("a certificate must be a JSON object");
  auto field = [&](const char* key) -> Result<std::string> {
    if (!j.contains(key) || !j[key].is_string()) {
      return InvalidArgument(std::string("certificate: '") + key + "' is missing or not text");
    }
    return j[key].get<std::string>();
  };
  Certificate cert;
  AIAC_ASSIGN_OR_RETURN(cert.id, field("id"));
  AIAC_ASSIGN_OR_RETURN(const std::string role, field("role"));
  AIAC_ASSIGN_OR_RETURN(cert.role, ParseRole(role));
  AIAC_ASSIGN_OR_RETURN(const std::string key, field("public_key"));
  AIAC_ASSIGN_OR_RETURN(cert.public_key, ParsePublicKey(key, "certificate: 'public_key'"));
  if (!j.contains("expires") || !j["expires"].is_number_integer()) {
    return InvalidArgument("certificate: 'expires' is missing or not an integer");
  }
  cert.expires = j["expires"].get<int64_t>();
  if (j.contains("enroller")) {
    if (!j["enroller"].is_boolean()) {
      return InvalidArgument("certificate: 'enroller' must be true or false");
    }
    cert.enroller = j["enroller"].get<bool>();
  }
  AIAC_ASSIGN_OR_RETURN(const std::string signature, field("signature"));
  auto raw = Unhex(signature);
  if (!raw || raw->size() != kEd25519SignatureBytes) {
    return InvalidArgument("certificate: 'signature' must be 128 hex characters");
  }
  cert.signature = std::move(*raw);
  if (j.contains("issuer")) {
    if (depth > 0) return InvalidArgument("certificate: an issuer's certificate has an issuer");
    auto issuer = FromJson(j["issuer"], depth + 1);
    if (!issuer.ok()) {
      return Status(issuer.status().code(), "issuer's " + issuer.status().message());
    }
    cert.issuer = std::make_shared<const Certificate>(std::move(*issuer));
  }
  return cert;
}

Certificate FromProto(proto::Certificate::Reader in, bool with_issuer) {
  Certificate cert;
  cert.id = in.getId().cStr();
  cert.role = in.getRole();
  cert.public_key = AsString(in.getPublicKey());
  cert.expires = in.getExpires();
  cert.enroller = in.getEnroller();
  cert.signature = AsString(in.getSignature());
  if (with_issuer && in.hasIssuer()) {
    cert.issuer = std::make_shared<const Certificate>(FromProto(in.getIssuer(), false));
  } else if (in.hasIssuer()) {
    // Deeper than one enroller: kept as a marker that VerifyCertificate refuses.
    auto marker = std::make_shared<Certificate>();
    marker->id = "(deeper issuer)";
    cert.issuer = std::move(marker);
  }
  return cert;
}

}  // namespace

Result<Certificate> ParseCertificateJson(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return FromJson(j, 0);
}

Result<Certificate> LoadCertificate(const std::string& path) {
  AIAC_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path));
  auto cert = ParseCertificateJson(text);
  if (!cert.ok()) return Status(cert.status().code(), path + ": " + cert.status().message());
  return cert;
}

void FillCertificate(const Certificate& cert, proto::Certificate::Builder out) {
  out.setId(cert.id);
  out.setRole(cert.role);
  out.setPublicKey(AsBytes(cert.public_key));
  out.setExpires(cert.expires);
  out.setEnroller(cert.enroller);
  out.setSignature(AsBytes(cert.signature));
  if (cert.issuer) FillCertificate(*cert.issuer, out.initIssuer());
}

Certificate ReadCertificate(proto::Certificate::Reader in) { return FromProto(in, true); }

int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace aiac::net
