#include "runtime/code_signing.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>

#include "core/hex.h"
#include "core/private_file.h"

namespace aiac::runtime {
namespace {

constexpr std::string_view kDomain = "aiac-plugin-v1";

std::string SignedMessage(std::string_view sha256) {
  std::string m(kDomain);
  m.append(sha256);
  return m;
}

EVP_PKEY* AsKey(void* p) { return static_cast<EVP_PKEY*>(p); }

}  // namespace

void SigningKey::Free::operator()(void* p) const { EVP_PKEY_free(AsKey(p)); }

Result<SigningKey> SigningKey::Load(const std::string& path) {
  AIAC_RETURN_IF_ERROR(CheckPrivateFile("signing key", path));
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return IoError("cannot read signing key " + path);
  EVP_PKEY* key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (key == nullptr) return InvalidArgument("signing key " + path + " is not a PEM private key");
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    return InvalidArgument("signing key " + path + " is not an Ed25519 key");
  }
  return SigningKey(key);
}

Result<SigningKey> SigningKey::Generate() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (key == nullptr) return Internal("cannot generate an Ed25519 key");
  return SigningKey(key);
}

std::string SigningKey::Sign(std::string_view sha256) const {
  const std::string message = SignedMessage(sha256);
  std::string sig(kSignatureBytes, '\0');
  size_t len = sig.size();
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  AIAC_CHECK(ctx != nullptr);
  const bool ok =
      EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, AsKey(pkey_.get())) == 1 &&
      EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  AIAC_CHECK(ok && len == kSignatureBytes);
  return sig;
}

std::string SigningKey::PublicHex() const {
  std::string raw(32, '\0');
  size_t len = raw.size();
  AIAC_CHECK(EVP_PKEY_get_raw_public_key(AsKey(pkey_.get()),
                                         reinterpret_cast<unsigned char*>(raw.data()), &len) == 1);
  return Hex(raw);
}

std::string SigningKey::PrivatePem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  AIAC_CHECK(bio != nullptr);
  AIAC_CHECK(PEM_write_bio_PrivateKey(bio, AsKey(pkey_.get()), nullptr, nullptr, 0, nullptr,
                                      nullptr) == 1);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  return pem;
}

Result<std::string> ParsePublicKey(std::string_view hex) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() != 64) return InvalidArgument("a trusted key must be 64 hex characters");
  std::string raw(32, '\0');
  for (size_t i = 0; i < 32; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return InvalidArgument("a trusted key must be 64 hex characters");
    raw[i] = static_cast<char>(hi * 16 + lo);
  }
  return raw;
}

bool SignedByOneOf(const std::vector<std::string>& trusted, std::string_view sha256,
                   std::string_view signature) {
  if (signature.size() != kSignatureBytes || sha256.size() != 32) return false;
  const std::string message = SignedMessage(sha256);
  for (const std::string& raw : trusted) {
    EVP_PKEY* key = EVP_PKEY_new_raw_public_key(
        EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
    if (key == nullptr) continue;
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    const bool ok =
        ctx != nullptr && EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, key) == 1 &&
        EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                         signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                         message.size()) == 1;
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    if (ok) return true;
  }
  return false;
}

}  // namespace aiac::runtime
