#include "supernode/enroller.h"

#include <algorithm>

#include "core/hex.h"
#include "net/enrollment_token.h"

namespace aiac::supernode {

Result<net::Certificate> Enroller::Redeem(std::string_view token_text,
                                          const net::PeerIdentity& peer, int64_t now) {
  const net::Certificate& own = self_->certificate;
  if (!own.enroller) return Unauthenticated("super-node " + own.id + " is not an enroller");
  AIAC_ASSIGN_OR_RETURN(const net::EnrollmentToken token, net::DecodeEnrollmentToken(token_text));
  AIAC_RETURN_IF_ERROR(net::VerifyEnrollmentToken(token, self_->trust, now));
  if (token.supernode_id != own.id) {
    return Unauthenticated("the token is for super-node '" + token.supernode_id + "', not " +
                           own.id);
  }
  if (token.node_id != peer.id) {
    return Unauthenticated("the token is for daemon '" + token.node_id + "', not '" + peer.id +
                           "'");
  }
  AIAC_ASSIGN_OR_RETURN(const bool fresh, used_.Claim(token.token_id));
  if (!fresh) {
    return Unauthenticated("the token for '" + token.node_id + "' (" +
                           Hex(token.token_id).substr(0, 8) + ") was used already");
  }
  const int64_t expires = std::min(now + int64_t{token.days} * 24 * 3600, own.expires);
  return net::Certify(self_->key, token.node_id, proto::Role::DAEMON, peer.public_key, expires,
                      false, std::make_shared<const net::Certificate>(own));
}

}  // namespace aiac::supernode
