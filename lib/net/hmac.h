// HMAC-SHA256 and random nonces for the connection handshake (OpenSSL underneath).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace aiac::net {

using Mac = std::array<uint8_t, 32>;

Mac HmacSha256(std::string_view key, std::span<const uint8_t> data);
// Constant-time comparison.
bool MacEquals(std::span<const uint8_t> a, std::span<const uint8_t> b);
// Cryptographically random bytes.
std::vector<uint8_t> RandomBytes(size_t n);

}  // namespace aiac::net
