// The first exception thrown on any of a pool's threads, carried back to
// the thread that joins them. An exception that leaves a std::thread's
// function ends the process (std::terminate); out of memory in one sweep
// worker would abort instead of reaching main's one-line report.
#ifndef MOESIM_UTIL_THREAD_ERRORS_H_
#define MOESIM_UTIL_THREAD_ERRORS_H_

#include <atomic>
#include <exception>
#include <mutex>

namespace moesim::util {

class ThreadErrors {
 public:
  // Runs `work`, keeping what it throws (the first of all threads).
  template <typename Work>
  void Run(Work&& work) noexcept {
    try {
      work();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_ = true;
    }
  }
  // True once any thread has thrown: workers stop taking new items.
  bool failed() const { return failed_; }
  // After the join: throws the first exception kept, if any.
  void Rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace moesim::util

#endif  // MOESIM_UTIL_THREAD_ERRORS_H_
