#include "util/textproto.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>

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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Fail(path + ": cannot read file: is a folder");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail(path + ": cannot read file");
  // Read in chunks up to the limit, so an endless or huge file (/dev/zero, a
  // misplaced dataset) is refused instead of exhausting memory.
  std::string content;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0) {
    content.append(chunk, static_cast<size_t>(in.gcount()));
    if (content.size() > kMaxInputFileBytes) {
      return Fail(path + ": cannot read file: larger than the " +
                  std::to_string(kMaxInputFileBytes >> 20) +
                  " MiB limit for input files");
    }
  }
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

}  // namespace moesim::util
