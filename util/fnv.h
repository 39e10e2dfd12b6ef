// FNV-1a, 64 bits (Fowler, Noll, Vo; the offset basis and prime of
// http://www.isthe.com/chongo/tech/comp/fnv/): a hash that is the same on
// every machine and build, for fingerprints and checksums that travel in
// files. Not a signature: anyone can recompute it.
#ifndef MOESIM_UTIL_FNV_H_
#define MOESIM_UTIL_FNV_H_

#include <cstdint>
#include <string_view>

namespace moesim::util {

inline constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;

// Folds `bytes` into the running hash `h`.
inline void FnvAdd(uint64_t& h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
}

// Folds one value of a sequence: its bytes, then a 0xff separator (a byte
// no UTF-8 text holds), so that ("ab", "c") and ("a", "bc") differ.
inline void FnvAddValue(uint64_t& h, std::string_view bytes) {
  FnvAdd(h, bytes);
  FnvAdd(h, "\xff");
}

inline uint64_t Fnv1a(std::string_view bytes) {
  uint64_t h = kFnvOffsetBasis;
  FnvAdd(h, bytes);
  return h;
}

}  // namespace moesim::util

#endif  // MOESIM_UTIL_FNV_H_
