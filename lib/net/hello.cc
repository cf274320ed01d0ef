#include "net/hello.h"

#include <kj/exception.h>

#include <string>

#include "core/names.h"
#include "core/printable.h"
#include "net/connection.h"

namespace aiac::net {
namespace {

bool KnownRole(proto::Role role) {
  return role == proto::Role::SUPERNODE || role == proto::Role::DAEMON ||
         role == proto::Role::SPAWNER;
}

Result<PeerIdentity> Validate(proto::Envelope::Reader env, proto::Role own_role,
                              std::string_view own_id, std::optional<proto::Role> expect) {
  if (env.isRefuse()) {
    return Unauthenticated("refused: " + Printable(env.getRefuse().getReason().cStr(), 200));
  }
  if (!env.isHello()) return ProtocolError("expected hello, got another message");
  auto hello = env.getHello();
  if (hello.getVersion() != kProtocolVersion) {
    return Unauthenticated("protocol version " + std::to_string(hello.getVersion()) +
                           " not supported (this node speaks " + std::to_string(kProtocolVersion) +
                           ")");
  }
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
  return PeerIdentity{role, std::string(id)};
}

}  // namespace

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

Result<PeerIdentity> ValidateHello(proto::Envelope::Reader envelope, proto::Role own_role,
                                   std::string_view own_id, std::optional<proto::Role> expect) {
  try {
    return Validate(envelope, own_role, own_id, expect);
  } catch (const kj::Exception& e) {
    return ProtocolError("malformed hello: " + Printable(e.getDescription().cStr(), 200));
  }
}

}  // namespace aiac::net
