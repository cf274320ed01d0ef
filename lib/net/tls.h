// TLS 1.3 with an external pre-shared key derived from the cluster key: the secured transport
// under every aiac connection (docs/architecture.md, chosen dependencies).
//
// Why this resists what the old HMAC handshake did not: a TLS 1.3 PSK handshake proves the key
// with a binder computed over the whole ClientHello (the client's random, its key share and the
// PSK identity), and both sides' Finished messages are MACs over the whole transcript (both
// randoms, both key shares) under keys that differ by direction. A peer without the key can
// neither produce a binder nor a Finished for a transcript it did not share, so it cannot
// reflect a proof back to its sender or relay one between two honest processes to speak for
// either: a relay only forwards ciphertext it can neither read nor alter. One reflection TLS
// alone does not stop, since every process holds the same PSK in both roles, is "Selfie": a
// node's own ClientHello relayed to its own server. Connection::Handshake closes that by
// refusing a peer whose proven role and id are its own. Every record after
// the handshake is encrypted and authenticated (AES-128-GCM or ChaCha20-Poly1305), and the
// (EC)DHE key share gives forward secrecy: a key stolen later does not decrypt recorded traffic.
//
// The PSK is HKDF-SHA256(cluster_key, salt "aiac-tls13-psk", info "aiac psk v1"), 32 bytes; the
// identity is fixed ("aiac-v1"), so a deployment needs nothing but `cluster_key`. No
// certificates, no session tickets (each connection is a full handshake).
//
// Thread-safety: a TlsContext is immutable once made and may be shared by any number of
// connections and threads.
#pragma once

#include <array>
#include <boost/asio/ssl.hpp>
#include <memory>
#include <string_view>

#include "core/status.h"

namespace aiac::net {

class TlsContext {
 public:
  // Derives the PSK from `cluster_key` and builds the client and server contexts.
  static Result<std::shared_ptr<const TlsContext>> Make(std::string_view cluster_key);

  boost::asio::ssl::context& client() const { return *client_; }
  boost::asio::ssl::context& server() const { return *server_; }
  const std::array<unsigned char, 32>& psk() const { return psk_; }

 private:
  TlsContext();
  std::array<unsigned char, 32> psk_{};
  std::unique_ptr<boost::asio::ssl::context> client_;
  std::unique_ptr<boost::asio::ssl::context> server_;
};

// HKDF-SHA256 (RFC 5869) of `key` into 32 bytes, as used for the PSK.
std::array<unsigned char, 32> DerivePsk(std::string_view cluster_key);

// A TLS handshake failure as a Status: a PSK that does not verify (either side) is
// kUnauthenticated "cluster_key mismatch"; anything else is kProtocol with OpenSSL's reason.
Status TlsHandshakeError(const boost::system::error_code& ec, bool client);

}  // namespace aiac::net
