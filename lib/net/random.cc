#include "net/random.h"

#include <openssl/rand.h>

#include "core/status.h"

namespace aiac::net {

std::vector<uint8_t> RandomBytes(size_t n) {
  std::vector<uint8_t> out(n);
  AIAC_CHECK(RAND_bytes(out.data(), static_cast<int>(n)) == 1);
  return out;
}

}  // namespace aiac::net
