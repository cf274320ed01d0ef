// Lower-case hexadecimal text of bytes (digests, random ids and keys).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiac {

std::string Hex(std::string_view bytes);
inline std::string Hex(const std::vector<uint8_t>& bytes) {
  return Hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// The bytes of hexadecimal text (either case); nullopt when it is not an even number of hex
// digits.
std::optional<std::string> Unhex(std::string_view hex);

}  // namespace aiac
