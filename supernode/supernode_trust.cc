// SupernodeService: enrolling daemons and passing revocation lists on (supernode_service.h).
#include "core/hex.h"
#include "net/capnp_bytes.h"
#include "net/certificate.h"
#include "net/identity.h"
#include "supernode/supernode_service.h"

namespace aiac::supernode {

using net::asio::awaitable;

awaitable<void> SupernodeService::ServeEnrollment(net::ConnectionPtr conn) {
  auto msg = co_await conn->Receive();
  if (!msg.ok()) co_return;
  auto env = (*msg)->root();
  if (!env.isEnroll()) {
    log_->warn("closed {}: an enrolling daemon may only enroll", conn->Describe());
    conn->Refuse("enroll first");
    co_return;
  }
  Result<net::Certificate> cert = Unauthenticated("super-node " + options_.id + " enrolls nobody");
  if (enroller_) {
    cert = enroller_->Redeem(env.getEnroll().getToken().cStr(), conn->peer(), net::UnixNow());
  }
  conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto out = e.initEnrolled();
    if (cert.ok()) {
      net::FillCertificate(*cert, out.initCertificate());
    } else {
      out.setError(cert.status().message());
    }
  });
  if (cert.ok()) {
    log_->info("enrolled daemon {} from {} (key {})", cert->id, conn->remote_address(),
               Hex(cert->public_key).substr(0, 12));
  } else {
    log_->warn("refused to enroll daemon {} from {}: {}", conn->peer().id, conn->remote_address(),
               cert.status().message());
  }
  conn->CloseWhenFlushed();
  co_await conn->Closed(std::chrono::milliseconds(3000));
}

void SupernodeService::SendRevocations(net::Connection& conn) {
  if (!options_.net.identity) return;
  for (const auto& list : options_.net.identity->trust.revoked->Lists()) {
    conn.SendEnvelope(
        [&](proto::Envelope::Builder e) { net::FillRevocationList(list, e.initRevocations()); });
  }
}

void SupernodeService::OfferRevocations(const net::RevocationList& list, const std::string& source,
                                        const net::Connection* from) {
  if (!options_.net.identity) return;
  const net::Trust& trust = options_.net.identity->trust;
  auto adopted = net::AdoptRevocations(*options_.net.identity, list, options_.net.revocation_file);
  if (!adopted.ok() && adopted.status().code() == StatusCode::kUnauthenticated) {
    log_->warn("revocation list from {} refused: {}", source, adopted.status().message());
    return;
  }
  if (!adopted.ok()) log_->warn("revocation list not kept: {}", adopted.status().message());
  if (adopted.ok() && !*adopted) return;  // not newer than what this super-node holds
  log_->info("revocation list {} of authority {} adopted from {}: {} keys revoked", list.serial,
             Hex(list.authority).substr(0, 12), source, list.keys.size());
  std::error_code ec;
  revocation_file_seen_ = std::filesystem::last_write_time(options_.net.revocation_file, ec);
  for (const auto& conn : server_.Authenticated()) {
    if (conn.get() == from || conn->peer().enrolling) continue;
    conn->SendEnvelope(
        [&](proto::Envelope::Builder e) { net::FillRevocationList(list, e.initRevocations()); });
  }
  server_.CloseRevoked(*trust.revoked);
  for (const auto& [id, key] : daemon_keys_) {
    if (!trust.revoked->Contains(key) || !registry_.Remove(id)) continue;
    log_->info("daemon {} removed from the registry: its key is revoked", id);
  }
  std::erase_if(daemon_keys_,
                [&](const auto& entry) { return trust.revoked->Contains(entry.second); });
}

void SupernodeService::ReloadRevocationFile() {
  const std::string& path = options_.net.revocation_file;
  if (path.empty()) return;
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec || written == revocation_file_seen_) return;
  revocation_file_seen_ = written;
  auto lists = net::LoadRevocationLists(path);
  if (!lists.ok()) {
    log_->warn("revocation file: {}", lists.status().message());
    return;
  }
  for (const auto& list : *lists) OfferRevocations(list, path, nullptr);
}

}  // namespace aiac::supernode
