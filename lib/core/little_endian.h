// Fixed-width little-endian integers in byte strings (checkpoint records, task states): the
// same bytes on every host, whatever its own order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aiac {

// Appends the low `bytes` bytes of `v`, least significant first.
inline void PutLittleEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// The integer of the first `bytes` bytes of `in`, which holds at least that many.
inline uint64_t GetLittleEndian(std::string_view in, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(in[static_cast<size_t>(i)]);
  return v;
}

// Takes sizeof(T) bytes off the front of `in` into `v`; false (nothing taken) when fewer are
// left.
template <typename T>
bool TakeLittleEndian(std::string_view& in, T& v) {
  if (in.size() < sizeof(T)) return false;
  v = static_cast<T>(GetLittleEndian(in, sizeof(T)));
  in.remove_prefix(sizeof(T));
  return true;
}

}  // namespace aiac
