#include "util/allocator.h"

#include <cstdlib>  // defines __GLIBC__ on glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace moesim::util {

void TuneAllocator() {
#if defined(__GLIBC__)
  // DEFAULT_MMAP_THRESHOLD_MAX: 4 * 1024 * 1024 * sizeof(long) on 64-bit.
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  // Trim only beyond 1 GiB of free heap top: a sweep's threads reuse
  // what the previous candidate freed.
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace moesim::util
