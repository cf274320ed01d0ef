// Checking a peer's Hello, the first message inside TLS (see net/connection.h). A pure function
// of the message and of who we are, so it is unit-tested and fuzzed on its own.
#pragma once

#include <optional>
#include <string_view>

#include "core/status.h"
#include "net/certificate.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct PeerIdentity {
  proto::Role role = proto::Role::DAEMON;
  std::string id;
  std::string public_key;  // its certificate's (32 raw bytes); empty without identities
  // A daemon with no certificate yet that came to enroll: `public_key` is the key it offers,
  // `id` the one it asks for; it may send an Enroll and nothing else.
  bool enrolling = false;
};

// What a Hello's certificate is checked against (net/identity.h): whom we trust, this TLS
// session's exporter value, which side the peer is, and the time.
struct ChannelCheck {
  const Trust* trust = nullptr;
  std::string exporter;
  bool peer_is_client = false;
  int64_t now = 0;
  // An enroller super-node: a daemon's Hello may offer a key instead of a certificate.
  bool accept_enrollment = false;
};

// The peer's identity, or why it is refused: not a Hello (a Refuse is reported with its
// reason, made printable), another protocol version, an unknown role, a node id that fails
// CheckName, our own role and id (a reflected connection), or a role other than `expect`; and,
// with `check` (a process with an identity), a Hello without a certificate, a certificate that
// does not verify (net/certificate.h) or names another role or id than the Hello, or a binding
// that is not the certified key's over this channel (relayed or reflected). With
// check->accept_enrollment, a daemon's Hello may offer a key (enrollKey) bound to the channel
// instead: the peer is then `enrolling`.
// kUnauthenticated for refusals a correct peer could meet (version, reflection, role,
// certificate), kProtocol for malformed input. Never throws: malformed text is kProtocol.
Result<PeerIdentity> ValidateHello(proto::Envelope::Reader envelope, proto::Role own_role,
                                   std::string_view own_id, std::optional<proto::Role> expect,
                                   const ChannelCheck* check = nullptr);

}  // namespace aiac::net
