#include "net/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/status.h"

namespace aiac::net {

Mac HmacSha256(std::string_view key, std::span<const uint8_t> data) {
  Mac out{};
  unsigned int len = 0;
  const unsigned char* result = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                                     data.data(), data.size(), out.data(), &len);
  AIAC_CHECK(result != nullptr && len == out.size());
  return out;
}

bool MacEquals(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::vector<uint8_t> RandomBytes(size_t n) {
  std::vector<uint8_t> out(n);
  AIAC_CHECK(RAND_bytes(out.data(), static_cast<int>(n)) == 1);
  return out;
}

}  // namespace aiac::net
