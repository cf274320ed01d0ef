// The network options every binary reads from its config file, and the checks on the key.
#pragma once

#include "core/options.h"
#include "net/connection.h"
#include "net/server.h"

namespace aiac::net {

// The key the shipped configs carried before keys were checked; refused everywhere.
inline constexpr std::string_view kPlaceholderKey = "change-me-to-a-long-random-secret";
inline constexpr size_t kMinKeyBytes = 16;
// Least entropy a key must show by KeyEntropyBits (a keygen key: about 250 bits).
inline constexpr int kMinKeyEntropyBits = 64;

// A simple estimate of the entropy in `key`: its length times the Shannon entropy of its bytes'
// frequencies, in bits. 0 for a repeated byte; it cannot tell a random key from a permutation of
// one, so it only refuses the keys that are plainly not random.
double KeyEntropyBits(std::string_view key);

// Declares cluster_key, cluster_key_file (a path relative to the config file's folder),
// max_frame_bytes, max_message_bytes and handshake_timeout_ms, in the docs' "common" table.
void DeclareNetOptions(OptionSet& set, NetOptions& options);

// Declares max_connections, max_handshakes and max_handshakes_per_address, in the docs'
// "listening" table.
void DeclareServerLimits(OptionSet& set, ServerLimits& limits);

// Loads the key file if one was named, refuses a missing, short or placeholder key, checks the
// limits, builds the TLS context once for every connection of the process, and loads this
// process's identity as `role` (unless one is set already, as `run --local` does): the
// authorities (authority_keys, at least one), the revoked keys (revoked_keys, and the list in
// revocation_file when the file exists), the identity key (made when missing) and its
// certificate, which must verify and be for `role`. When there is no certificate yet and
// `may_enroll` (a daemon given an enrollment token), the identity is an enrolling one
// (NodeIdentity::enrolling). Each error is one line that says how to fix it.
Status FinishNetOptions(NetOptions& options, proto::Role role, bool may_enroll = false);

// The authorities a process believes (authority_keys, at least one) and the keys it no longer
// does: revoked_keys, and the list in revocation_file when the file exists.
Result<Trust> LoadTrust(const NetOptions& options);

// The node id a process speaks as: the one its certificate names. `id` empty: set to it; another
// id: InvalidArgument naming both.
Status AdoptCertifiedId(const NetOptions& options, std::string& id);

// The checks on a key alone (not empty, not the placeholder, at least kMinKeyBytes, at least
// kMinKeyEntropyBits by KeyEntropyBits).
Status CheckClusterKey(std::string_view key);

// Reads a key file: the first line, surrounding white space removed. Refused when the file is
// readable or writable by group or others (like ssh), or empty.
Result<std::string> ReadKeyFile(const std::string& path);

// 32 random bytes as 64 hex characters: a fresh cluster key.
std::string NewClusterKey();

}  // namespace aiac::net
