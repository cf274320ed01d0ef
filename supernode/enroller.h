// What an enroller super-node does with an enrolling daemon's token (net/enrollment_token.h):
// checks it, records it as used, and certifies the key the daemon offered under the id the
// token names, with the super-node's own key. The certificate's expiry is the token's days from
// now, and never past the super-node's own certificate's.
//
// Not thread-safe: the super-node's io thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "net/certificate.h"
#include "net/hello.h"
#include "net/identity.h"

namespace aiac::supernode {

// Which tokens were redeemed, kept so that a restart does not honour one twice.
class UsedTokens {
 public:
  virtual ~UsedTokens() = default;
  // Records `token_id` as used: true when it was not yet, false when it was already.
  virtual Result<bool> Claim(const std::string& token_id) = 0;
};

class Enroller {
 public:
  // `self`: this super-node's identity, whose certificate must say it is an enroller.
  Enroller(std::shared_ptr<const net::NodeIdentity> self, UsedTokens& used)
      : self_(std::move(self)), used_(used) {}

  // The certificate for `peer` (an enrolling connection: its id and offered key) bought by
  // `token_text`, or why not: a token that does not decode or verify, is for another
  // super-node or another id than the peer asked for, or was used already; a storage failure.
  // The token is recorded as used only when everything else holds.
  Result<net::Certificate> Redeem(std::string_view token_text, const net::PeerIdentity& peer,
                                  int64_t now);

 private:
  std::shared_ptr<const net::NodeIdentity> self_;
  UsedTokens& used_;
};

}  // namespace aiac::supernode
