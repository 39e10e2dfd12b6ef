#include "util/output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace moesim::util {
namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  std::string path;  // as the user spelled it
};

std::mutex& InputsMutex() {
  static std::mutex m;
  return m;
}
std::vector<FileId>& Inputs() {
  static std::vector<FileId> inputs;
  return inputs;
}

std::string OutputError(std::string_view flag, std::string_view rule) {
  return "flags: " + std::string(flag) + ": " + std::string(rule);
}

// The temporary files being written, for the signal handler: fixed slots of
// fixed-size paths, so the handler touches no heap and takes no lock.
constexpr int kTempSlots = 4;
constexpr size_t kTempPathBytes = 4096;
char g_temp_paths[kTempSlots][kTempPathBytes];
std::atomic<bool> g_temp_used[kTempSlots];

int ClaimTempSlot(const std::string& path) {
  if (path.size() >= kTempPathBytes) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    bool expected = false;
    if (g_temp_used[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
      return i;
    }
  }
  return -1;
}

void ReleaseTempSlot(int slot) {
  if (slot >= 0) g_temp_used[slot].store(false);
}

extern "C" void RemoveTempsAndDie(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (g_temp_used[i].load()) ::unlink(g_temp_paths[i]);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Writes all of `content` to `fd`; false with errno set on failure.
bool WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t n = ::write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void RecordInputFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  std::lock_guard<std::mutex> lock(InputsMutex());
  for (const FileId& f : Inputs())
    if (f.dev == st.st_dev && f.ino == st.st_ino) return;
  Inputs().push_back({st.st_dev, st.st_ino, path});
}

Result<void> CheckOutputTargets(const std::vector<OutputTarget>& targets) {
  std::vector<std::pair<const OutputTarget*, struct stat>> existing;
  for (size_t i = 0; i < targets.size(); ++i) {
    const OutputTarget& t = targets[i];
    if (t.path.empty()) continue;
    // Two outputs with one spelling, whether or not the file exists yet.
    for (size_t j = 0; j < i; ++j) {
      if (targets[j].path == t.path) {
        return Fail(OutputError(t.flag, "'" + t.path + "' is also the " +
                                            std::string(targets[j].flag) +
                                            " output; choose another path"));
      }
    }
    struct stat st {};
    if (::stat(t.path.c_str(), &st) != 0) {
      // A new file: its folder must exist and take files, checked now so
      // that a long command does not fail only at its end.
      std::filesystem::path dir = std::filesystem::path(t.path).parent_path();
      if (dir.empty()) dir = ".";
      struct stat dst {};
      if (::stat(dir.c_str(), &dst) != 0 || !S_ISDIR(dst.st_mode)) {
        return Fail(OutputError(
            t.flag,
            "cannot write '" + t.path + "': no folder '" + dir.string() + "'"));
      }
      if (::access(dir.c_str(), W_OK) != 0) {
        return Fail(OutputError(t.flag, "cannot write '" + t.path +
                                            "': folder '" + dir.string() +
                                            "' is not writable"));
      }
      continue;
    }
    if (S_ISDIR(st.st_mode)) {
      return Fail(
          OutputError(t.flag, "cannot write '" + t.path + "': it is a folder"));
    }
    if (!S_ISREG(st.st_mode)) continue;
    {
      std::lock_guard<std::mutex> lock(InputsMutex());
      for (const FileId& f : Inputs()) {
        if (f.dev == st.st_dev && f.ino == st.st_ino) {
          return Fail(OutputError(
              t.flag, "'" + t.path + "' is the input file read as '" + f.path +
                          "'; writing it would destroy it: choose another "
                          "output path"));
        }
      }
    }
    for (const auto& [other, ost] : existing) {
      if (ost.st_dev == st.st_dev && ost.st_ino == st.st_ino) {
        return Fail(OutputError(t.flag, "'" + t.path + "' is also the " +
                                            std::string(other->flag) +
                                            " output; choose another path"));
      }
    }
    existing.emplace_back(&t, st);
  }
  return {};
}

Result<void> WriteOutputFile(const std::string& path, std::string_view content,
                             std::string_view flag) {
  if (auto ok = CheckOutputTargets({{flag, path}}); !ok) return ok;
  auto fail = [&](std::string_view why) -> Result<void> {
    return Fail(
        OutputError(flag, "cannot write '" + path + "': " + std::string(why)));
  };
  // A symbolic link is written through, not replaced: the file it names is
  // what is written (atomically, beside that file). A link into /dev or
  // /proc (/dev/stdout -> /proc/self/fd/1 -> a shell's redirect target) is
  // a descriptor of this process, written in place like a device.
  std::string real = path;
  bool in_place = false;
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    const std::string abs = std::filesystem::absolute(path, ec).string();
    in_place = abs.starts_with("/dev/") || abs.starts_with("/proc/");
    if (!in_place) {
      // Follow the chain of links (a dangling one names the file to make).
      std::filesystem::path at = path;
      for (int hops = 0; hops < 40; ++hops) {
        struct stat hop {};
        if (::lstat(at.c_str(), &hop) != 0 || !S_ISLNK(hop.st_mode)) break;
        std::filesystem::path next = std::filesystem::read_symlink(at, ec);
        if (ec) return fail(ec.message());
        at = next.is_absolute() ? next : at.parent_path() / next;
      }
      real = at.lexically_normal().string();
      in_place = real.starts_with("/dev/") || real.starts_with("/proc/");
      if (in_place) real = path;
    }
  }
  struct stat st {};
  const bool exists = ::stat(real.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return fail("is a folder");
  if (exists && (!S_ISREG(st.st_mode) || in_place)) {
    // A device or FIFO (/dev/null), or a descriptor link: written in place.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fail(std::strerror(errno));
    // Back to blocking writes once open (a FIFO without a reader fails the
    // open instead of hanging).
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const bool wrote = WriteAll(fd, content);
    const int write_errno = errno;
    if (::close(fd) != 0 && wrote) return fail(std::strerror(errno));
    if (!wrote) return fail(std::strerror(write_errno));
    return {};
  }
  const std::filesystem::path target(real);
  const std::filesystem::path folder =
      target.has_parent_path() ? target.parent_path() : ".";
  std::string name = ".";
  name += target.filename().string();
  name += ".moesim-XXXXXX";
  std::string temp = (folder / name).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return fail(std::strerror(errno));
  const int slot = ClaimTempSlot(temp);
  auto abandon = [&](int err) {
    ::unlink(temp.c_str());
    ReleaseTempSlot(slot);
    return fail(std::strerror(err));
  };
  // mkstemp makes the file 0600; outputs get the usual 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask)) != 0) {
    const int err = errno;
    ::close(fd);
    return abandon(err);
  }
  if (!WriteAll(fd, content)) {
    const int err = errno;
    ::close(fd);
    return abandon(err);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    ::close(fd);
    return abandon(err);
  }
  if (::close(fd) != 0) return abandon(errno);
  if (::rename(temp.c_str(), real.c_str()) != 0) return abandon(errno);
  ReleaseTempSlot(slot);
  return {};
}

void InstallOutputSignalHandlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction sa {};
    sa.sa_handler = RemoveTempsAndDie;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
  // A reader that closes the pipe (`moesim ... | head -c 1`) makes the next
  // write fail with EPIPE, which WriteStdout reports (exit 1 with the
  // reason), instead of a SIGPIPE that kills the process.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

Result<void> WriteStdout(std::string_view content) {
  if (!content.empty() && std::fwrite(content.data(), 1, content.size(),
                                      stdout) != content.size()) {
    return Fail(std::string("stdout: cannot write: ") + std::strerror(errno));
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    return Fail(std::string("stdout: cannot write: ") + std::strerror(errno));
  }
  return {};
}

}  // namespace moesim::util
