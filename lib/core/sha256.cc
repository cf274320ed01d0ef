#include "core/sha256.h"

#include <openssl/evp.h>

#include "core/status.h"

namespace aiac {

std::string Sha256(std::string_view bytes) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  AIAC_CHECK(EVP_Digest(bytes.data(), bytes.size(), out, &len, EVP_sha256(), nullptr) == 1);
  return std::string(reinterpret_cast<char*>(out), len);
}

}  // namespace aiac
