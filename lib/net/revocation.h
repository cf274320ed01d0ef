// Revocation: keys a deployment no longer believes, whether a node's (a stolen laptop, a
// volunteer gone rogue) or an authority's, and with them every certificate they sign or name.
//
// A revocation list is made and signed by an authority (`aiac-spawner revoke`): its serial
// grows with each new list, so a newer list replaces an older one of the same authority and an
// old list replayed changes nothing. What is signed (RevocationBytes): "aiac-revoked-v1", the
// authority's public key, the serial (8 bytes, big-endian), the number of keys (4 bytes) and
// the keys (32 bytes each, sorted). The file form is JSON:
//   {"authority": "<64 hex>", "serial": 3, "revoked": ["<64 hex>", ...],
//    "signature": "<128 hex>"}
//
// Super-nodes share lists: each one passes a list it adopted to its peers, its daemons and its
// spawners (docs/security.md), so a revocation made at one super-node reaches the whole
// deployment within a digest period. RevokedKeys is what one process believes at a time.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/ed25519.h"
#include "core/status.h"
#include "proto/aiac.capnp.h"

namespace aiac::net {

struct RevocationList {
  std::string authority;          // 32 raw bytes: the key that signed it
  uint64_t serial = 0;            // higher is newer
  std::vector<std::string> keys;  // 32 raw bytes each, sorted, no repeats
  std::string signature;          // 64 bytes, by `authority` over RevocationBytes
};

std::string RevocationBytes(const RevocationList& list);

// A list of `keys` (32 raw bytes each, in any order) with `serial`, signed by `authority`.
// InvalidArgument when a key is not 32 bytes.
Result<RevocationList> MakeRevocationList(const Ed25519Key& authority, uint64_t serial,
                                          std::vector<std::string> keys);

// Ok when `list` is signed by one of `authorities` (32 raw bytes each) and well formed;
// kUnauthenticated otherwise, saying why.
Status VerifyRevocationList(const RevocationList& list,
                            const std::vector<std::string>& authorities);

// The file form, and back. Errors name the field. A file holds one list (what `aiac-spawner
// revoke` writes), or an array of lists of several authorities (what a process writes back
// when it holds more than one).
std::string RevocationJson(const RevocationList& list);
std::string RevocationListsJson(const std::vector<RevocationList>& lists);
Result<RevocationList> ParseRevocationJson(std::string_view text);
Result<std::vector<RevocationList>> LoadRevocationLists(const std::string& path);

// The Cap'n Proto form, for the super-nodes' messages. Reading never throws on a well-formed
// message; field sizes are checked by VerifyRevocationList.
void FillRevocationList(const RevocationList& list, proto::RevocationList::Builder out);
RevocationList ReadRevocationList(proto::RevocationList::Reader in);

// The keys one process refuses: those of its `revoked_keys` option, and those of the newest
// list it adopted from each authority. Thread-safe: connections check it on the io thread, and
// a list may arrive on any connection.
class RevokedKeys {
 public:
  explicit RevokedKeys(std::set<std::string> fixed = {}) : fixed_(std::move(fixed)) {}

  bool Contains(std::string_view key) const;
  // Adopts `list` when it verifies against `authorities` and is newer than the list held from
  // its authority: true when adopted, false when it was not newer (nothing changes), an error
  // when it does not verify.
  Result<bool> Adopt(const RevocationList& list, const std::vector<std::string>& authorities);
  // The newest list of each authority, to pass on.
  std::vector<RevocationList> Lists() const;
  // How many lists were adopted so far: a caller that saw a change re-checks its peers.
  uint64_t generation() const;

 private:
  mutable std::mutex mu_;
  std::set<std::string> fixed_;
  std::map<std::string, RevocationList> lists_;  // by authority
  uint64_t generation_ = 0;
};

}  // namespace aiac::net
