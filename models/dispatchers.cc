#include "models/dispatchers.h"

#include "util/check.h"

namespace moesim::models {
namespace {

// Fields in declaration order, every one set.
constexpr DispatcherTraits kDispatchers[] = {
    {.id = Dispatcher::kAllToAll,
     .word = "alltoall",
     .fused = false,
     .table_rows = "",
     .sms_held = 0,
     .permute_in_dispatched_dtype = false,
     .stages_across_domains = false},
    {.id = Dispatcher::kDeepEp,
     .word = "deepep",
     .fused = true,
     .table_rows = "deepep",
     .sms_held = 20,
     .permute_in_dispatched_dtype = false,
     .stages_across_domains = false},
    {.id = Dispatcher::kHybridEp,
     .word = "hybridep",
     .fused = true,
     .table_rows = "hybridep",
     .sms_held = 16,
     .permute_in_dispatched_dtype = true,
     .stages_across_domains = true},
};

}  // namespace

std::span<const DispatcherTraits> Dispatchers() { return kDispatchers; }

const DispatcherTraits& TraitsOf(Dispatcher d) {
  for (const DispatcherTraits& t : kDispatchers) {
    if (t.id == d) return t;
  }
  util::CheckOrDie(false, "TraitsOf: a Dispatcher without a row");
  return kDispatchers[0];
}

}  // namespace moesim::models
