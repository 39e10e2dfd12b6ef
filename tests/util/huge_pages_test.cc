#include "util/huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

namespace moesim::util {
namespace {

// A buffer of 2 MiB or more starts on a 2 MiB boundary (the unit
// madvise(MADV_HUGEPAGE) can back with one page); smaller ones come from
// new. Either way the vector holds what was written, through growth.
TEST(HugePages, LargeBuffersAreHugePageAlignedAndHoldTheirContents) {
  LargeVector<int64_t> large(kHugePageBytes / sizeof(int64_t) + 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes, 0u);
  std::iota(large.begin(), large.end(), int64_t{0});
  large.resize(3 * large.size());  // reallocates: copies into a new block
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % kHugePageBytes, 0u);
  for (size_t i = 0; i <= kHugePageBytes / sizeof(int64_t); ++i) {
    ASSERT_EQ(large[i], static_cast<int64_t>(i));
  }
  LargeVector<int32_t> small(100, 7);
  EXPECT_EQ(small[99], 7);
  small.shrink_to_fit();
  EXPECT_EQ(small.size(), 100u);
}

}  // namespace
}  // namespace moesim::util
