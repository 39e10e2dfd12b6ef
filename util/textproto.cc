#include "util/textproto.h"

#include <errno.h>
#include <fcntl.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "util/output.h"

namespace moesim::util {
namespace {

// Keeps the first error the text-format parser reports.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!has_error_) {
      has_error_ = true;
      // The parser counts lines and columns from zero.
      text_ = std::to_string(line + 1) + ":" + std::to_string(column + 1) +
              ": " + message;
    }
  }
  void AddWarning(int, int, const std::string&) override {}
  bool has_error() const { return has_error_; }
  const std::string& text() const { return text_; }

 private:
  bool has_error_ = false;
  std::string text_;
};

}  // namespace

Result<void> ParseTextProto(
    std::string_view text, std::string_view file,
    google::protobuf::Message& message,
    google::protobuf::TextFormat::ParseInfoTree* locations) {
  message.Clear();
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (locations != nullptr) parser.WriteLocationsTo(locations);
  if (!parser.ParseFromString(std::string(text), &message)) {
    std::string detail =
        errors.has_error() ? errors.text() : "0:0: malformed text format";
    return Fail(std::string(file) + ":" + detail);
  }
  return {};
}

Result<std::string> ReadFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO without a writer must not block; regular
  // files ignore it. The descriptor is read with poll() under one deadline,
  // so a pipe or device that never ends is refused instead of hanging.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EISDIR) return Fail(path + ": cannot read file: is a folder");
    return Fail(path + ": cannot read file");
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Fail(path + ": cannot read file");
  if (S_ISDIR(st.st_mode))
    return Fail(path + ": cannot read file: is a folder");
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
    return Fail(path +
                ": cannot read file: not a regular file, pipe or character "
                "device");
  }
  if (S_ISREG(st.st_mode) &&
      static_cast<uint64_t>(st.st_size) > kMaxInputFileBytes) {
    return Fail(path + ": cannot read file: larger than the " +
                std::to_string(kMaxInputFileBytes >> 20) +
                " MiB limit for input files");
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(kMaxInputReadSeconds);
  std::string content;
  char chunk[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n > 0) {
      content.append(chunk, static_cast<size_t>(n));
      // Endless or huge inputs (/dev/zero, a misplaced dataset) are refused
      // at the limit instead of exhausting memory.
      if (content.size() > kMaxInputFileBytes) {
        return Fail(path + ": cannot read file: larger than the " +
                    std::to_string(kMaxInputFileBytes >> 20) +
                    " MiB limit for input files");
      }
      continue;
    }
    if (n == 0) break;  // end of file (a FIFO without a writer reads empty)
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return Fail(path + ": cannot read file: " + std::strerror(errno));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return Fail(path + ": cannot read file: no end of input within " +
                  std::to_string(kMaxInputReadSeconds) +
                  " s (a pipe or device that does not end)");
    }
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
  RecordInputFile(path);
  return content;
}

int FieldLine(std::string_view text, std::string_view field) {
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(start, end - start);
    size_t first = row.find_first_not_of(" \t");
    if (first != std::string_view::npos &&
        row.substr(first).starts_with(field)) {
      std::string_view rest = row.substr(first + field.size());
      size_t next = rest.find_first_not_of(" \t");
      if (next != std::string_view::npos &&
          (rest[next] == ':' || rest[next] == '{'))
        return line;
    }
    if (end == text.size()) break;
    start = end + 1;
    ++line;
  }
  return 0;
}

namespace {

std::optional<OutOfRange> FindRange(const google::protobuf::Message& m,
                                    const std::string& prefix, double max) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string path =
        prefix.empty() ? std::string(f->name()) : prefix + "." + f->name();
    const bool rep = f->is_repeated();
    const int n = rep ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      // The value as a double for the test, and as written for the message
      // (a double would round 2^63 - 1); reals as %.17g.
      double v = 0;
      char got[64];
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32:
        case FieldDescriptor::CPPTYPE_INT64: {
          const int64_t x =
              f->cpp_type() == FieldDescriptor::CPPTYPE_INT32
                  ? (rep ? r->GetRepeatedInt32(m, f, i) : r->GetInt32(m, f))
                  : (rep ? r->GetRepeatedInt64(m, f, i) : r->GetInt64(m, f));
          v = static_cast<double>(x);
          std::snprintf(got, sizeof got, "%lld", static_cast<long long>(x));
          break;
        }
        case FieldDescriptor::CPPTYPE_UINT32:
        case FieldDescriptor::CPPTYPE_UINT64: {
          const uint64_t x =
              f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32
                  ? (rep ? r->GetRepeatedUInt32(m, f, i) : r->GetUInt32(m, f))
                  : (rep ? r->GetRepeatedUInt64(m, f, i) : r->GetUInt64(m, f));
          v = static_cast<double>(x);
          std::snprintf(got, sizeof got, "%llu",
                        static_cast<unsigned long long>(x));
          break;
        }
        case FieldDescriptor::CPPTYPE_FLOAT:
        case FieldDescriptor::CPPTYPE_DOUBLE:
          v = f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT
                  ? (rep ? r->GetRepeatedFloat(m, f, i) : r->GetFloat(m, f))
                  : (rep ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f));
          std::snprintf(got, sizeof got, "%.17g", v);
          break;
        case FieldDescriptor::CPPTYPE_MESSAGE: {
          const google::protobuf::Message& sub =
              rep ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
          if (auto bad = FindRange(sub, path, max)) return bad;
          continue;
        }
        default:
          continue;
      }
      if (std::isfinite(v) && v >= 0 && v <= max) continue;
      char limit[64];
      std::snprintf(limit, sizeof limit, "%.17g", max);
      return OutOfRange{
          path, std::string(f->name()),
          std::string("must be finite, >= 0 and <= ") + limit + ", got " + got};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<OutOfRange> FindOutOfRange(
    const google::protobuf::Message& message, double max) {
  return FindRange(message, "", max);
}

Result<void> CheckNumericRanges(const google::protobuf::Message& message,
                                std::string_view file, std::string_view text,
                                double max) {
  const std::optional<OutOfRange> bad = FindOutOfRange(message, max);
  if (!bad) return {};
  std::string where(file);
  if (int line = FieldLine(text, bad->field); line > 0) {
    where += ':';
    where += std::to_string(line);
  }
  return Fail(where + ": " + bad->path + ": " + bad->rule);
}

}  // namespace moesim::util
