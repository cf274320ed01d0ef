#include "core/ed25519.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>

#include "core/hex.h"
#include "core/private_file.h"

namespace aiac {
namespace {

EVP_PKEY* AsKey(void* p) { return static_cast<EVP_PKEY*>(p); }

}  // namespace

void Ed25519Key::Free::operator()(void* p) const { EVP_PKEY_free(AsKey(p)); }

Result<Ed25519Key> Ed25519Key::Load(const std::string& path, std::string_view what) {
  const std::string name(what);
  AIAC_RETURN_IF_ERROR(CheckPrivateFile(name, path));
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return IoError("cannot read " + name + " " + path);
  EVP_PKEY* key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (key == nullptr) return InvalidArgument(name + " " + path + " is not a PEM private key");
  if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
    EVP_PKEY_free(key);
    return InvalidArgument(name + " " + path + " is not an Ed25519 key");
  }
  return Ed25519Key(key);
}

Result<Ed25519Key> Ed25519Key::Generate() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (key == nullptr) return Internal("cannot generate an Ed25519 key");
  return Ed25519Key(key);
}

std::string Ed25519Key::Sign(std::string_view message) const {
  std::string sig(kEd25519SignatureBytes, '\0');
  size_t len = sig.size();
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  AIAC_CHECK(ctx != nullptr);
  const bool ok =
      EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, AsKey(pkey_.get())) == 1 &&
      EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &len,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  AIAC_CHECK(ok && len == kEd25519SignatureBytes);
  return sig;
}

std::string Ed25519Key::PublicKey() const {
  std::string raw(kEd25519PublicKeyBytes, '\0');
  size_t len = raw.size();
  AIAC_CHECK(EVP_PKEY_get_raw_public_key(AsKey(pkey_.get()),
                                         reinterpret_cast<unsigned char*>(raw.data()), &len) == 1);
  return raw;
}

std::string Ed25519Key::PublicHex() const { return Hex(PublicKey()); }

std::string Ed25519Key::PrivatePem() const {
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

bool Ed25519Verify(std::string_view public_key, std::string_view message,
                   std::string_view signature) {
  if (signature.size() != kEd25519SignatureBytes || public_key.size() != kEd25519PublicKeyBytes)
    return false;
  EVP_PKEY* key = EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr, reinterpret_cast<const unsigned char*>(public_key.data()),
      public_key.size());
  if (key == nullptr) return false;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok =
      ctx != nullptr && EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, key) == 1 &&
      EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(signature.data()),
                       signature.size(), reinterpret_cast<const unsigned char*>(message.data()),
                       message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

Result<std::string> ParsePublicKey(std::string_view hex, std::string_view what) {
  auto raw = Unhex(hex);
  if (hex.size() != 2 * kEd25519PublicKeyBytes || !raw) {
    return InvalidArgument(std::string(what) + " must be 64 hex characters");
  }
  return std::move(*raw);
}

}  // namespace aiac
