// Process-wide allocator settings for moesim's workload: a replay allocates
// a few large arrays (ops, dependencies, timings: tens of MiB), frees them,
// and the next replay of a sweep or a validate run allocates them again.
#ifndef MOESIM_UTIL_ALLOCATOR_H_
#define MOESIM_UTIL_ALLOCATOR_H_

namespace moesim::util {

// Keeps freed memory in the process for the next allocation instead of
// handing it back to the kernel, which then faults every page in again.
// glibc serves a request above M_MMAP_THRESHOLD (128 KiB at start) with a
// fresh mmap that free() unmaps, and trims a heap whose free top exceeds
// M_TRIM_THRESHOLD; both are raised here (the threshold to its 32 MiB
// maximum on 64-bit, mallopt(3)). Results do not change, only where the
// bytes come from. Call once, first thing in main(), before any thread
// starts. A no-op on C libraries other than glibc.
void TuneAllocator();

}  // namespace moesim::util

#endif  // MOESIM_UTIL_ALLOCATOR_H_
