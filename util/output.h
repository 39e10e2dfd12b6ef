// Writing output files so that no failure leaves one that looks complete,
// and no output overwrites what the command read.
//
// Every file moesim writes (--trace, --csv, --html, --out, --dot) goes
// through WriteOutputFile: the content goes to a temporary file in the
// target's folder, which is renamed over the target only once every byte is
// written and the file closed. A full disk, an unwritable folder or a signal
// (SIGINT, SIGTERM, SIGHUP: the temporary file is removed before the process
// dies) leave the target as it was. A target that exists and is not a
// regular file (/dev/stdout, a FIFO) is written in place, since it cannot be
// replaced.
//
// ReadFile (util/textproto.h) records every file it reads; an output that
// names one of them (same device and inode, whatever the spelling) is
// refused before anything is written.
#ifndef MOESIM_UTIL_OUTPUT_H_
#define MOESIM_UTIL_OUTPUT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/error.h"

namespace moesim::util {

// Remembers that this process read `path` (called by ReadFile). Thread-safe.
void RecordInputFile(const std::string& path);

// One output a command is about to write: the flag that named it and its path.
struct OutputTarget {
  std::string_view flag;
  std::string path;
};

// Refuses outputs that name a file this process has read, or the same file
// as another output of the list: "flags: <flag>: '<path>' is the input file
// read as ...; choose another output path" / "... is also the --csv output".
// Empty paths are skipped.
[[nodiscard]] Result<void> CheckOutputTargets(
    const std::vector<OutputTarget>& targets);

// Writes `content` to `path` atomically (see above), after
// CheckOutputTargets({{flag, path}}). Errors: "flags: <flag>: cannot write
// '<path>': <reason>".
[[nodiscard]] Result<void> WriteOutputFile(const std::string& path,
                                           std::string_view content,
                                           std::string_view flag);

// Installs the SIGINT / SIGTERM / SIGHUP handlers that remove a temporary
// output file being written, then die of the signal, and ignores SIGPIPE so
// that a closed stdout pipe is a write error (EPIPE) that WriteStdout
// reports. main() calls it once.
void InstallOutputSignalHandlers();

// Writes `content` to stdout and flushes it; fails with the reason when the
// stream cannot take it (a closed pipe, /dev/full): "stdout: cannot write:
// <reason>".
[[nodiscard]] Result<void> WriteStdout(std::string_view content);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_OUTPUT_H_
