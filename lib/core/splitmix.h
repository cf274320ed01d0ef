// splitmix64's finalizer (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a cheap, well-mixing 64-bit hash, so that every daemon computes the
// same generated entries and the same synthetic work from a seed. Pure.
#pragma once

#include <cstdint>

namespace aiac {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace aiac
