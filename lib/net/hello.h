// Checking a peer's Hello, the first message inside TLS (see net/connection.h). A pure function
// of the message and of who we are, so it is unit-tested and fuzzed on its own.
#pragma once

#include <optional>
#include <string_view>

#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct PeerIdentity {
  proto::Role role = proto::Role::DAEMON;
  std::string id;
};

const char* RoleName(proto::Role role);

// The peer's identity, or why it is refused: not a Hello (a Refuse is reported with its
// reason, made printable), another protocol version, an unknown role, a node id that fails
// CheckName, our own role and id (a reflected connection), or a role other than `expect`.
// kUnauthenticated for refusals a correct peer could meet (version, reflection, role),
// kProtocol for malformed input. Never throws: malformed text is kProtocol.
Result<PeerIdentity> ValidateHello(proto::Envelope::Reader envelope, proto::Role own_role,
                                   std::string_view own_id, std::optional<proto::Role> expect);

}  // namespace aiac::net
