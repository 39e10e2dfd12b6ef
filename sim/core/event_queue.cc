#include "sim/core/event_queue.h"

#include <algorithm>
#include <utility>

namespace moesim::sim {

namespace {

// Heap order for std::push_heap / pop_heap (a max-heap on this relation puts
// the earliest (time, seq) on top). A function object, not a function
// pointer, so that the heap algorithms inline it.
struct Later {
  template <typename Key>
  bool operator()(const Key& a, const Key& b) const {
    if (a.picos != b.picos) return a.picos > b.picos;
    return a.seq > b.seq;
  }
};

}  // namespace

EventId EventQueue::Schedule(Time at, Callback callback) {
  CheckOrDie(at >= now_, "EventQueue::Schedule: time before now()");
  CheckOrDie(static_cast<bool>(callback), "EventQueue::Schedule: no callback");
  uint32_t slot;
  if (free_slots_.empty()) {
    CheckOrDie(slots_.size() < UINT32_MAX, "EventQueue: too many events");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const uint64_t seq = next_seq_++;
  Slot& s = slots_[slot];
  s.callback = std::move(callback);
  s.seq = seq;
  s.cancelled = false;
  heap_.push_back({at.picos(), seq, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later());
  ++pending_;
  return EventId(slot, seq);
}

void EventQueue::Cancel(EventId id) {
  if (id.seq_ == 0) return;
  CheckOrDie(id.seq_ < next_seq_ && id.slot_ < slots_.size(),
             "EventQueue::Cancel: id not issued by this queue");
  Slot& s = slots_[id.slot_];
  // A different seq means the event ran (or was cancelled and popped) and the
  // slot was recycled.
  if (s.seq != id.seq_ || s.cancelled) return;
  s.cancelled = true;
  s.callback = nullptr;
  --pending_;
}

void EventQueue::ReleaseSlot(uint32_t slot) {
  // A moved-from callable's state is unspecified: drop it explicitly.
  slots_[slot].callback = nullptr;
  slots_[slot].seq = 0;
  slots_[slot].cancelled = false;
  free_slots_.push_back(slot);
}

bool EventQueue::SettleTop() {
  while (!heap_.empty()) {
    const uint32_t slot = heap_.front().slot;
    if (!slots_[slot].cancelled) return true;
    std::pop_heap(heap_.begin(), heap_.end(), Later());
    heap_.pop_back();
    ReleaseSlot(slot);
  }
  return false;
}

void EventQueue::RunTop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later());
  const Key key = heap_.back();
  heap_.pop_back();
  Callback callback = std::move(slots_[key.slot].callback);
  ReleaseSlot(key.slot);
  now_ = Time::Picos(key.picos);
  --pending_;
  ++executed_;
  running_ = true;
  callback();
  running_ = false;
}

bool EventQueue::RunNext() {
  CheckOrDie(!running_, "EventQueue::RunNext: called from a callback");
  if (!SettleTop()) return false;
  RunTop();
  return true;
}

void EventQueue::RunUntil(Time until) {
  CheckOrDie(!running_, "EventQueue::RunUntil: called from a callback");
  CheckOrDie(until >= now_, "EventQueue::RunUntil: bound before now()");
  while (SettleTop() && heap_.front().picos <= until.picos()) RunTop();
  now_ = until;
}

void EventQueue::RunAll() {
  while (RunNext()) {
  }
}

}  // namespace moesim::sim
