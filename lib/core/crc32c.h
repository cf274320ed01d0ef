// CRC32C (Castagnoli), as iSCSI and RocksDB use it: the SSE4.2 instruction where the CPU has
// it, Boost.CRC's table otherwise. Checkpoints and the CG app's matrix cache check their bytes
// with it.
#pragma once

#include <cstdint>
#include <string_view>

namespace aiac {

uint32_t Crc32c(std::string_view bytes);
namespace internal {
uint32_t Crc32cPortableForTest(std::string_view bytes);  // the table version, to test both
}  // namespace internal

}  // namespace aiac
