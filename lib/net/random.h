// Cryptographically random bytes (OpenSSL's RAND_bytes): keys, job ids, nonces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aiac::net {

std::vector<uint8_t> RandomBytes(size_t n);

}  // namespace aiac::net
