// Worker threads for the commands that take -j/--jobs.
#ifndef MOESIM_STUDIES_JOBS_H_
#define MOESIM_STUDIES_JOBS_H_

#include <algorithm>
#include <thread>

namespace moesim::studies {

// `requested` threads (0: one per hardware thread), at most one per
// hardware thread: more would only queue, and -j 100000 would exhaust the
// process's thread limit. Outputs do not depend on the count.
inline int JobCount(int requested) {
  const int hardware =
      std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return requested > 0 ? std::min(requested, hardware) : hardware;
}

}  // namespace moesim::studies

#endif  // MOESIM_STUDIES_JOBS_H_
