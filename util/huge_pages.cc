#include "util/huge_pages.h"

#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace moesim::util {

void* AllocateHugePages(size_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t rounded =
      (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Advice only: a kernel without transparent huge pages refuses it, and
  // the block then works in small pages as any other.
  if (p != nullptr) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeHugePages(void* p) { std::free(p); }

}  // namespace moesim::util
