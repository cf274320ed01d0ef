#include "core/crc32c.h"

#include <boost/crc.hpp>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace aiac {
namespace {

uint32_t Crc32cPortable(std::string_view bytes) {
  // Reflected Castagnoli polynomial, initial and final XOR all ones: the standard CRC-32C.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

#if defined(__x86_64__)
// The SSE4.2 crc32 instruction computes exactly CRC-32C: about 15x the table-driven
// version, which would otherwise cost a 1 MB checkpoint 4 ms.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(std::string_view bytes) {
  uint64_t crc = 0xFFFFFFFFu;
  const char* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = _mm_crc32_u64(crc, word);
  }
  auto c = static_cast<uint32_t>(crc);
  for (; n > 0; ++p, --n) c = _mm_crc32_u8(c, static_cast<unsigned char>(*p));
  return c ^ 0xFFFFFFFFu;
}
#endif

}  // namespace

uint32_t Crc32c(std::string_view bytes) {
#if defined(__x86_64__)
  static const bool sse42 = __builtin_cpu_supports("sse4.2");
  if (sse42) return Crc32cSse42(bytes);
#endif
  return Crc32cPortable(bytes);
}

namespace internal {
uint32_t Crc32cPortableForTest(std::string_view bytes) { return Crc32cPortable(bytes); }
}  // namespace internal

}  // namespace aiac
