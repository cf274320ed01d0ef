#include "daemon/enrollment.h"

#include "core/printable.h"
#include "net/enrollment_token.h"
#include "net/identity.h"

namespace aiac::daemon {

net::awaitable<Result<net::Certificate>> Enroll(std::vector<Endpoint> supernodes,
                                                net::NetOptions net, std::string token,
                                                Logger log) {
  auto decoded = net::DecodeEnrollmentToken(token);
  if (!decoded.ok()) co_return decoded.status();
  const std::string id = decoded->node_id;
  const std::string& wanted = decoded->supernode_id;
  const net::NodeIdentity& self = *net.identity;
  net::RetryPolicy retry;
  retry.attempts = 3;
  retry.give_up_after = net.handshake_timeout;  // a stopped super-node: one timeout, not three
  Status last = Unavailable("no super-node given");
  for (const Endpoint& at : supernodes) {
    auto conn = co_await net::Dial(at, net, proto::Role::DAEMON, id, proto::Role::SUPERNODE, retry);
    if (!conn.ok()) {
      last = conn.status();
      log->warn("enrolling: super-node {}: {}", at.ToString(), last.message());
      continue;
    }
    if ((*conn)->peer().id != wanted) {
      last = NotFound("none of the super-nodes is '" + wanted + "', the one the token names");
      (*conn)->Close();
      continue;
    }
    (*conn)->SendEnvelope([&](proto::Envelope::Builder e) { e.initEnroll().setToken(token); });
    auto reply = co_await (*conn)->Receive();
    (*conn)->Close();
    if (!reply.ok()) co_return reply.status();
    auto env = (*reply)->root();
    if (!env.isEnrolled()) co_return ProtocolError("super-node " + wanted + " did not answer");
    auto enrolled = env.getEnrolled();
    if (!enrolled.hasCertificate()) {
      co_return Unauthenticated("super-node " + wanted + " refused to enroll this daemon: " +
                                Printable(enrolled.getError().cStr(), 300));
    }
    net::Certificate cert = net::ReadCertificate(enrolled.getCertificate());
    if (cert.id != id || cert.role != proto::Role::DAEMON ||
        cert.public_key != self.key.PublicKey()) {
      co_return Unauthenticated("super-node " + wanted + " certified another id or key");
    }
    if (Status s = net::VerifyCertificate(cert, self.trust, net::UnixNow()); !s.ok()) co_return s;
    co_return cert;
  }
  co_return last;
}

}  // namespace aiac::daemon
