// The keys a swarm benchmark needs in `dir` (header only: each benchmark is one executable): a
// fresh authority (authority.key, mode 600, and authority.pub), a cluster key (cluster.key) and
// an identity certified by the authority for each super-node id (ID.key, ID.cert).
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "core/ed25519.h"
#include "net/identity.h"
#include "support/test_support.h"

namespace aiac::bench {

inline Status WriteSwarmKeys(const std::string& dir, const std::string& cluster_key,
                             const std::vector<std::string>& supernodes) {
  AIAC_ASSIGN_OR_RETURN(Ed25519Key authority, Ed25519Key::Generate());
  aiac::testing::WriteFile(dir + "/authority.key", authority.PrivatePem());
  chmod((dir + "/authority.key").c_str(), 0600);
  aiac::testing::WriteFile(dir + "/authority.pub", authority.PublicHex());
  aiac::testing::WriteFile(dir + "/cluster.key", cluster_key + "\n");
  chmod((dir + "/cluster.key").c_str(), 0600);
  for (const std::string& id : supernodes) {
    AIAC_RETURN_IF_ERROR(net::WriteNewIdentity(authority, id, proto::Role::SUPERNODE,
                                               net::UnixNow() + 86400, dir + "/" + id + ".key",
                                               dir + "/" + id + ".cert"));
  }
  return Status::Ok();
}

}  // namespace aiac::bench
