#include "net/tls.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>

#include <cstring>
#include <string>

namespace aiac::net {
namespace ssl = boost::asio::ssl;

namespace {

constexpr std::string_view kPskIdentity = "aiac-v1";
// TLS_AES_128_GCM_SHA256: the PSK's hash must be SHA-256, which both allowed suites use.
constexpr unsigned char kPskCipher[2] = {0x13, 0x01};
constexpr const char* kCipherSuites = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256";

// Where each SSL_CTX finds its TlsContext (asio uses the CTX's app data for itself). Assigned
// once, then only read.
int ContextIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

const TlsContext* ContextOf(SSL* ssl) {
  return static_cast<const TlsContext*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ContextIndex()));
}

// An SSL_SESSION that carries the external PSK (OpenSSL's way of handing one to TLS 1.3).
SSL_SESSION* PskSession(SSL* ssl) {
  const TlsContext* ctx = ContextOf(ssl);
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kPskCipher);
  if (ctx == nullptr || cipher == nullptr) return nullptr;
  SSL_SESSION* session = SSL_SESSION_new();
  if (session == nullptr) return nullptr;
  if (SSL_SESSION_set1_master_key(session, ctx->psk().data(), ctx->psk().size()) != 1 ||
      SSL_SESSION_set_cipher(session, cipher) != 1 ||
      SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION) != 1) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

int UsePsk(SSL* ssl, const EVP_MD* md, const unsigned char** id, size_t* id_len,
           SSL_SESSION** out) {
  *out = nullptr;
  SSL_SESSION* session = PskSession(ssl);
  if (session == nullptr) return 0;
  if (md != nullptr && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(session))) {
    SSL_SESSION_free(session);  // a HelloRetryRequest chose a suite this PSK cannot serve
    return 1;
  }
  *id = reinterpret_cast<const unsigned char*>(kPskIdentity.data());
  *id_len = kPskIdentity.size();
  *out = session;
  return 1;
}

int FindPsk(SSL* ssl, const unsigned char* id, size_t id_len, SSL_SESSION** out) {
  *out = nullptr;
  if (id_len != kPskIdentity.size() || std::memcmp(id, kPskIdentity.data(), id_len) != 0) {
    return 1;  // unknown identity: no PSK, and without a certificate the handshake fails
  }
  *out = PskSession(ssl);
  return *out != nullptr ? 1 : 0;
}

std::unique_ptr<ssl::context> MakeContext(ssl::context::method method, const TlsContext* owner) {
  auto ctx = std::make_unique<ssl::context>(method);
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(native, TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(native, kCipherSuites);
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
  SSL_CTX_set_num_tickets(native, 0);
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_verify(native, SSL_VERIFY_NONE, nullptr);  // no certificates: the PSK authenticates
  SSL_CTX_set_ex_data(native, ContextIndex(), const_cast<TlsContext*>(owner));
  return ctx;
}

}  // namespace

std::array<unsigned char, 32> DerivePsk(std::string_view cluster_key) {
  std::array<unsigned char, 32> out{};
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  AIAC_CHECK(kdf != nullptr);
  EVP_KDF_CTX* kctx = EVP_KDF_CTX_new(kdf);
  EVP_KDF_free(kdf);
  AIAC_CHECK(kctx != nullptr);
  static constexpr char kSalt[] = "aiac-tls13-psk";
  static constexpr char kInfo[] = "aiac psk v1";
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<char*>(cluster_key.data()),
                                        cluster_key.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<char*>(kSalt),
                                        sizeof kSalt - 1),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(kInfo),
                                        sizeof kInfo - 1),
      OSSL_PARAM_construct_end()};
  const int ok = EVP_KDF_derive(kctx, out.data(), out.size(), params);
  EVP_KDF_CTX_free(kctx);
  AIAC_CHECK(ok == 1);
  return out;
}

TlsContext::TlsContext() = default;

Result<std::shared_ptr<const TlsContext>> TlsContext::Make(std::string_view cluster_key) {
  if (cluster_key.empty()) return InvalidArgument("cluster_key is empty");
  auto ctx = std::shared_ptr<TlsContext>(new TlsContext());
  ctx->psk_ = DerivePsk(cluster_key);
  try {
    ctx->client_ = MakeContext(ssl::context::tls_client, ctx.get());
    ctx->server_ = MakeContext(ssl::context::tls_server, ctx.get());
  } catch (const boost::system::system_error& e) {
    return Internal(std::string("cannot set up TLS: ") + e.what());
  }
  SSL_CTX_set_psk_use_session_callback(ctx->client_->native_handle(), UsePsk);
  SSL_CTX_set_psk_find_session_callback(ctx->server_->native_handle(), FindPsk);
  return std::shared_ptr<const TlsContext>(std::move(ctx));
}

Status TlsHandshakeError(const boost::system::error_code& ec, bool client) {
  if (ec.category() == boost::asio::error::get_ssl_category()) {
    const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    // The server finds the client's binder wrong; the client hears the server's alert for it
    // (illegal_parameter from OpenSSL 3, decrypt_error per RFC 8446). Both mean the two sides
    // hold different keys.
    if (reason == SSL_R_BINDER_DOES_NOT_VERIFY) {
      return Unauthenticated("authentication failed: cluster_key mismatch");
    }
    if (client && (reason == SSL_R_TLSV1_ALERT_DECRYPT_ERROR ||
                   reason == SSL_R_SSLV3_ALERT_ILLEGAL_PARAMETER)) {
      return Unauthenticated(
          "authentication failed: cluster_key mismatch (the peer rejected our key)");
    }
    const char* text = ERR_reason_error_string(static_cast<unsigned long>(ec.value()));
    return ProtocolError(std::string("TLS handshake failed: ") + (text ? text : ec.message()));
  }
  if (ec == boost::asio::error::eof || ec == boost::asio::error::connection_reset ||
      ec == ssl::error::stream_truncated) {
    return Unavailable(std::string("connection closed during the TLS handshake") +
                       (client ? " (is the peer an aiac process with the same protocol?)" : ""));
  }
  return Unavailable("TLS handshake: " + ec.message());
}

}  // namespace aiac::net
