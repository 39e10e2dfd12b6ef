// An allocator for the few large arrays a replay fills once (every op, its
// dependencies, its times): tens of MiB written front to back right after
// they are allocated, so faulting them in 4 KiB pages costs more than the
// work that fills them (a page fault each; several microseconds apiece on a
// virtual machine). Blocks of 2 MiB and more are 2 MiB-aligned and advised
// as transparent huge pages (madvise(2) MADV_HUGEPAGE), which the kernel
// honours when /sys/kernel/mm/transparent_hugepage/enabled is "always" or
// "madvise" and ignores otherwise. Smaller blocks are plain new/delete.
// Contents and results do not depend on it.
#ifndef MOESIM_UTIL_HUGE_PAGES_H_
#define MOESIM_UTIL_HUGE_PAGES_H_

#include <cstddef>
#include <new>
#include <vector>

namespace moesim::util {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Allocates `bytes` (>= kHugePageBytes) on a huge-page boundary, advised as
// huge pages; nullptr when out of memory.
void* AllocateHugePages(size_t bytes);
void FreeHugePages(void* p);

template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T))
      throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) return std::allocator<T>().allocate(n);
    void* p = AllocateHugePages(bytes);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugePageBytes) {
      std::allocator<T>().deallocate(p, n);
    } else {
      FreeHugePages(p);
    }
  }
  template <class U>
  friend bool operator==(const HugePageAllocator&,
                         const HugePageAllocator<U>&) noexcept {
    return true;
  }
};

// A vector whose large buffers are huge-page backed.
template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace moesim::util

#endif  // MOESIM_UTIL_HUGE_PAGES_H_
