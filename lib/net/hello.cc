#include "net/hello.h"

#include <kj/exception.h>

#include <string>

#include "core/names.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"
#include "net/connection.h"
#include "net/identity.h"

namespace aiac::net {
namespace {

bool KnownRole(proto::Role role) {
  return role == proto::Role::SUPERNODE || role == proto::Role::DAEMON ||
         role == proto::Role::SPAWNER;
}

bool BindingVerifies(proto::Hello::Reader hello, std::string_view key, const ChannelCheck& check) {
  return Ed25519Verify(key, BindingBytes(check.peer_is_client, check.exporter),
                       AsString(hello.getBinding()));
}

// The peer of a Hello that claims `role` and `id`, checked (ValidateHello): its certificate, or
// its enrollment key where enrolling is allowed.
Result<PeerIdentity> CheckCertificate(proto::Hello::Reader hello, proto::Role role,
                                      std::string_view id, const ChannelCheck& check) {
  if (!hello.hasCertificate() && hello.hasEnrollKey()) {
    if (!check.accept_enrollment || role != proto::Role::DAEMON) {
      return Unauthenticated(
          "the peer has no certificate and comes to enroll, which only an "
          "enroller super-node takes");
    }
    const std::string key = AsString(hello.getEnrollKey());
    if (key.size() != kEd25519PublicKeyBytes || !BindingVerifies(hello, key, check)) {
      return Unauthenticated(
          "the enrolling peer's Hello is not bound to this connection by "
          "the key it offers");
    }
    return PeerIdentity{role, std::string(id), key, /*enrolling=*/true};
  }
  if (!hello.hasCertificate()) {
    return Unauthenticated(
        "the peer shows no certificate (this node requires one: "
        "authority_keys)");
  }
  const Certificate cert = ReadCertificate(hello.getCertificate());
  AIAC_RETURN_IF_ERROR(VerifyCertificate(cert, *check.trust, check.now));
  if (cert.role != role || cert.id != id) {
    return Unauthenticated(std::string("the peer claims to be ") + RoleName(role) + " " +
                           Printable(id, 128) + " but its certificate names " +
                           RoleName(cert.role) + " " + Printable(cert.id, 128));
  }
  if (!BindingVerifies(hello, cert.public_key, check)) {
    return Unauthenticated(
        "the peer's Hello is not bound to this connection by its certified "
        "key (relayed or reflected)");
  }
  return PeerIdentity{role, std::string(id), cert.public_key};
}

Result<PeerIdentity> Validate(proto::Envelope::Reader env, proto::Role own_role,
                              std::string_view own_id, std::optional<proto::Role> expect,
                              const ChannelCheck* check, VersionWindow ours) {
  if (env.isRefuse()) {
    return Unauthenticated("refused: " + Printable(env.getRefuse().getReason().cStr(), 200));
  }
  if (!env.isHello()) return ProtocolError("expected hello, got another message");
  auto hello = env.getHello();
  const VersionWindow theirs{
      hello.getVersion(), hello.getMaxVersion() == 0 ? hello.getVersion() : hello.getMaxVersion()};
  if (theirs.max < theirs.min) {
    return ProtocolError("malformed hello: newest protocol version " + std::to_string(theirs.max) +
                         " before the oldest " + std::to_string(theirs.min));
  }
  AIAC_ASSIGN_OR_RETURN(const uint32_t agreed, AgreeVersion(ours, theirs));
  const proto::Role role = hello.getRole();
  if (!KnownRole(role)) {
    return ProtocolError("unknown role " + std::to_string(static_cast<int>(role)));
  }
  const auto text = hello.getNodeId();
  const std::string_view id(text.cStr(), text.size());
  if (Status bad = CheckName("node id", id); !bad.ok()) return ProtocolError(bad.message());
  if (role == own_role && id == own_id) {
    // "Selfie" reflection: with one PSK for every process, our own ClientHello relayed back to
    // our own server would complete a TLS handshake with ourselves. Ids are unique per
    // platform, so a peer with our own role and id is our own reflection.
    return Unauthenticated("the peer is this process itself (a reflected connection)");
  }
  if (expect && role != *expect) {
    return Unauthenticated(std::string("expected a ") + RoleName(*expect) + ", not a " +
                           RoleName(role));
  }
  PeerIdentity peer;
  if (check) {
    AIAC_ASSIGN_OR_RETURN(peer, CheckCertificate(hello, role, id, *check));
  } else {
    peer = PeerIdentity{role, std::string(id), ""};
  }
  peer.version = agreed;
  return peer;
}

std::string WindowText(VersionWindow w) {
  return w.min == w.max ? std::to_string(w.min)
                        : std::to_string(w.min) + ".." + std::to_string(w.max);
}

}  // namespace

Result<uint32_t> AgreeVersion(VersionWindow ours, VersionWindow theirs) {
  const uint32_t agreed = std::min(ours.max, theirs.max);
  if (agreed < ours.min || agreed < theirs.min) {
    return Unauthenticated("protocol version " + WindowText(theirs) +
                           " not supported (this node speaks " + WindowText(ours) + ")");
  }
  return agreed;
}

Result<PeerIdentity> ValidateHello(proto::Envelope::Reader envelope, proto::Role own_role,
                                   std::string_view own_id, std::optional<proto::Role> expect,
                                   const ChannelCheck* check, VersionWindow ours) {
  try {
    return Validate(envelope, own_role, own_id, expect, check, ours);
  } catch (const kj::Exception& e) {
    return ProtocolError("malformed hello: " + Printable(e.getDescription().cStr(), 200));
  }
}

}  // namespace aiac::net
