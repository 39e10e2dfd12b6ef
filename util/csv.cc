#include "util/csv.h"

#include "util/textproto.h"

namespace moesim::util {
namespace {

const std::string kEmpty;

}  // namespace

Result<CsvTable> CsvTable::Parse(std::string_view text, std::string_view file) {
  CsvTable table;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  bool field_started = false;
  int line = 1;
  int record_line = 1;
  auto end_record = [&]() -> Result<void> {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
    bool blank = record.size() == 1 && record[0].empty();
    if (!blank) {
      if (table.header_.empty()) {
        // Get() reads the first column of a name; a second one would be
        // silently ignored.
        for (size_t i = 0; i < record.size(); ++i) {
          for (size_t j = 0; j < i; ++j) {
            if (record[i] == record[j]) {
              return Fail(std::string(file) + ":" +
                          std::to_string(record_line) + ": duplicate column '" +
                          record[i] + "'");
            }
          }
        }
        table.header_ = std::move(record);
      } else if (record.size() != table.header_.size()) {
        return Fail(std::string(file) + ":" + std::to_string(record_line) +
                    ": expected " + std::to_string(table.header_.size()) +
                    " fields, found " + std::to_string(record.size()));
      } else {
        table.rows_.push_back(std::move(record));
        table.lines_.push_back(record_line);
      }
    }
    record.clear();
    record_line = line;
    return {};
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      ++line;
      if (auto r = end_record(); !r) return std::unexpected(r.error());
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted)
    return Fail(std::string(file) + ":" + std::to_string(record_line) +
                ": unterminated quote");
  if (field_started || !record.empty()) {
    if (auto r = end_record(); !r) return std::unexpected(r.error());
  }
  if (table.header_.empty())
    return Fail(std::string(file) + ": empty CSV, a header is required");
  return table;
}

Result<CsvTable> CsvTable::Load(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return std::unexpected(text.error());
  return Parse(*text, path);
}

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const std::string& CsvTable::Get(size_t row, std::string_view name) const {
  int column = Column(name);
  if (column < 0) return kEmpty;
  return rows_[row][column];
}

std::vector<std::string> SplitList(std::string_view text,
                                   std::string_view separators) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(separators, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(start, end - start);
    size_t b = piece.find_first_not_of(" \t");
    size_t e = piece.find_last_not_of(" \t");
    if (b != std::string_view::npos)
      out.emplace_back(piece.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

}  // namespace moesim::util
