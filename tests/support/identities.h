// A deployment authority for tests (net/certificate.h): it certifies the processes a test plays
// or starts in-process, as `aiac-spawner certify` does for a real platform. Header only, for
// tests and benchmarks alike; its users link aiac_net. Set-up failures are bugs: they abort.
#pragma once

#include <memory>
#include <string>

#include "core/ed25519.h"
#include "net/certificate.h"
#include "net/connection.h"
#include "net/identity.h"

namespace aiac::testing {

class TestAuthority {
 public:
  TestAuthority() : key_(*Ed25519Key::Generate()) {}

  const Ed25519Key& key() const { return key_; }
  std::string PublicHex() const { return key_.PublicHex(); }
  // Whom a member of this platform believes: this authority (and a revocation set of its own).
  net::Trust MakeTrust() const { return net::Trust({key_.PublicKey()}); }

  // A fresh key pair and its certificate as `id`/`role`, valid for a day; believes this
  // authority (`trust`, when given, instead: to share a revocation set).
  std::shared_ptr<const net::NodeIdentity> Identity(const std::string& id, proto::Role role,
                                                    bool enroller = false) const {
    return IdentityWith(MakeTrust(), id, role, enroller);
  }
  std::shared_ptr<const net::NodeIdentity> IdentityWith(net::Trust trust, const std::string& id,
                                                        proto::Role role,
                                                        bool enroller = false) const {
    auto node = Ed25519Key::Generate();
    AIAC_CHECK(node.ok());
    auto cert = net::Certify(key_, id, role, node->PublicKey(), net::UnixNow() + 86400, enroller);
    AIAC_CHECK(cert.ok());
    auto identity = net::MakeNodeIdentity(*node, *cert, std::move(trust));
    AIAC_CHECK(identity.ok());
    return *identity;
  }

  // The network options of a member of the platform: the cluster key and an identity.
  net::NetOptions Member(const std::string& cluster_key, const std::string& id,
                         proto::Role role) const {
    net::NetOptions o;
    o.cluster_key = cluster_key;
    o.identity = Identity(id, role);
    return o;
  }

 private:
  Ed25519Key key_;
};

}  // namespace aiac::testing
