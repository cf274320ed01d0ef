// Checking a peer's Hello, the first message inside TLS (see net/connection.h). A pure function
// of the message and of who we are, so it is unit-tested and fuzzed on its own.
#pragma once

#include <optional>
#include <string_view>

#include "core/status.h"
#include "net/certificate.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

// The protocol versions (docs/operations.md, "Upgrade, backup and wipe"). Two peers speak the
// newest version both know, provided it is in both windows; each build speaks its own version
// and the ones before it down to kMinProtocolVersion, so hosts can be upgraded one at a time.
// 8: the spawner tells its tasks' daemons it runs (SpawnerAlive; AssignTask.spawnerTimeoutS).
// 7: super-nodes send each other what changed in their registries (RegistryDelta).
// 6: jobs outlive their spawner (AdoptTask; AssignTask.orphanSeconds and spawnerEpoch;
//    TaskReady.adopted and started).
// 5: synchronous runs replace lost daemons (TrimValues; AssignTask.valueLogMb, TaskProgress
//    safeCheckpoint and valueLogFrom: daemon/value_log.h).
// 4: version negotiation; jobs registered with super-nodes, `status` and `cancel` (JobStatus,
//    JobEnded, StatusQuery, StatusReport, CancelJob, CancelAnswer).
// 3: certificates and channel binding in the Hello (2: TLS 1.3 PSK transport; 1 was an HMAC
//    exchange in plaintext).
inline constexpr uint32_t kProtocolVersion = 8;
inline constexpr uint32_t kMinProtocolVersion = 4;
// The first version with jobs at the super-nodes, `status` and `cancel`: nobody sends those
// messages to a peer that agreed on an older one, and a super-node closes a peer that does.
inline constexpr uint32_t kJobStatusVersion = 4;
// The first version whose daemons log the values of synchronous runs: a synchronous run
// replaces a lost daemon only when every daemon of the job speaks it, and a daemon closes a
// spawner that sends it TrimValues on an older one.
inline constexpr uint32_t kSyncReplaceVersion = 5;
// The first version whose daemons keep a task running when its spawner's link drops and take
// AdoptTask from a resumed spawner: a daemon closes a spawner that sends AdoptTask on an older
// one, and a resumed spawner counts a task whose daemon speaks an older one as lost.
inline constexpr uint32_t kSpawnerResumeVersion = 6;
// The first version whose super-nodes send each other what changed in their registries
// (RegistryDelta, supernode/registry_delta.h): an older peer gets the whole RegistryDigest each
// period, and a super-node closes a peer that sends RegistryDelta on an older one.
inline constexpr uint32_t kRegistryDeltaVersion = 7;
// The first version whose spawners send SpawnerAlive every second and whose daemons count a
// job's spawner silent past AssignTask.spawnerTimeoutS as lost: a spawner sends it only to a
// daemon that agreed on it, and a daemon closes a spawner that sends it on an older one.
inline constexpr uint32_t kSpawnerAliveVersion = 8;

struct VersionWindow {
  uint32_t min = kMinProtocolVersion;
  uint32_t max = kProtocolVersion;
};

// The newest version in both windows; Unauthenticated, naming both windows, when none is.
Result<uint32_t> AgreeVersion(VersionWindow ours, VersionWindow theirs);

struct PeerIdentity {
  proto::Role role = proto::Role::DAEMON;
  std::string id;
  std::string public_key;  // its certificate's (32 raw bytes); empty without identities
  // A daemon with no certificate yet that came to enroll: `public_key` is the key it offers,
  // `id` the one it asks for; it may send an Enroll and nothing else.
  bool enrolling = false;
  // The protocol version the two ends agreed on.
  uint32_t version = kProtocolVersion;
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
// reason, made printable), no protocol version in common with `ours`, an unknown role, a node id
// that fails CheckName, our own role and id (a reflected connection), or a role other than
// `expect`; and, with `check` (a process with an identity), a Hello without a certificate, a
// certificate that does not verify (net/certificate.h) or names another role or id than the Hello,
// or a binding that is not the certified key's over this channel (relayed or reflected). With
// check->accept_enrollment, a daemon's Hello may offer a key (enrollKey) bound to the channel
// instead: the peer is then `enrolling`.
// kUnauthenticated for refusals a correct peer could meet (version, reflection, role,
// certificate), kProtocol for malformed input. Never throws: malformed text is kProtocol.
Result<PeerIdentity> ValidateHello(proto::Envelope::Reader envelope, proto::Role own_role,
                                   std::string_view own_id, std::optional<proto::Role> expect,
                                   const ChannelCheck* check = nullptr, VersionWindow ours = {});

}  // namespace aiac::net
