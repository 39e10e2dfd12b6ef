// A deterministic discrete-event queue.
//
// Design: a binary min-heap on a std::vector keyed by (time, insertion
// sequence), as ns-3's scheduler keys by (timestamp, uid): events at the same
// time run first-in first-out, so a run never depends on addresses, hash
// order or the allocator. Callbacks live in a slot vector beside the heap
// (slots are recycled through a free list), so heap moves shuffle 24-byte
// keys, not callables. Cancel clears the slot's callback and marks it; the
// stale heap key is skipped when it reaches the top.
//
// A queue is a value with no globals: two queues run side by side in one
// process without seeing each other.
//
// Invariants: now() never decreases; every pending event's time is >= now().
// Scheduling before now() is a programming error and aborts.
//
// Thread safety: none; one queue belongs to one thread.
#ifndef MOESIM_SIM_CORE_EVENT_QUEUE_H_
#define MOESIM_SIM_CORE_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/time.h"

namespace moesim::sim {

// Names one scheduled event of one queue. Default-constructed: names none.
class EventId {
 public:
  constexpr EventId() = default;
  friend constexpr bool operator==(EventId, EventId) = default;

 private:
  friend class EventQueue;
  constexpr EventId(uint32_t slot, uint64_t seq) : slot_(slot), seq_(seq) {}
  uint32_t slot_ = 0;
  uint64_t seq_ = 0;  // 0: none; issued sequences start at 1
};

class EventQueue {
 public:
  using Callback = std::move_only_function<void()>;

  EventQueue() = default;
  EventQueue(EventQueue&&) = default;
  EventQueue& operator=(EventQueue&&) = default;

  // Runs `callback` at time `at`, after every event already scheduled for
  // `at`. The callback may schedule and cancel events of this queue.
  // REQUIRES: at >= now(); callback non-empty.
  EventId Schedule(Time at, Callback callback);

  // The event will not run. No-op for an event that already ran or was
  // cancelled, and for a default EventId.
  // REQUIRES: `id` was issued by this queue.
  void Cancel(EventId id);

  // Runs the earliest pending event, advancing now() to its time; false (and
  // nothing changes) when none is pending.
  // REQUIRES: not called from inside a callback.
  bool RunNext();

  // Runs every event with time <= `until` (including ones those events
  // schedule), then sets now() to `until`.
  // REQUIRES: until >= now().
  void RunUntil(Time until);

  // Runs events until none is pending.
  void RunAll();

  // The time of the event running or last run (or RunUntil's bound).
  Time now() const { return now_; }
  // Events scheduled and neither run nor cancelled.
  size_t pending() const { return pending_; }
  bool empty() const { return pending_ == 0; }
  // Events run so far.
  uint64_t executed() const { return executed_; }

 private:
  struct Key {
    int64_t picos;
    uint64_t seq;
    uint32_t slot;
  };
  struct Slot {
    Callback callback;
    uint64_t seq = 0;  // of the event occupying the slot; 0 when free
    bool cancelled = false;
  };

  // Drops cancelled keys from the top; true when a live event is on top.
  bool SettleTop();
  // Pops the top key and runs its event. REQUIRES: SettleTop() was true.
  void RunTop();
  void ReleaseSlot(uint32_t slot);

  std::vector<Key> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  Time now_;
  uint64_t next_seq_ = 1;
  size_t pending_ = 0;
  uint64_t executed_ = 0;
  bool running_ = false;
};

}  // namespace moesim::sim

#endif  // MOESIM_SIM_CORE_EVENT_QUEUE_H_
