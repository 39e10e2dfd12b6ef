// A small RFC 4180 CSV reader (quoted fields, embedded commas and quotes).
// Used for calibration tables and measured runs, which always have a header.
#ifndef MOESIM_UTIL_CSV_H_
#define MOESIM_UTIL_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "util/error.h"

namespace moesim::util {

class CsvTable {
 public:
  // Parses `text`; `file` names the source in errors. Every row must have as
  // many fields as the header: "<file>:<line>: expected N fields, found M";
  // a column name may appear once: "<file>:<line>: duplicate column 'x'".
  [[nodiscard]] static Result<CsvTable> Parse(std::string_view text,
                                              std::string_view file);
  [[nodiscard]] static Result<CsvTable> Load(const std::string& path);

  const std::vector<std::string>& header() const { return header_; }
  size_t num_rows() const { return rows_.size(); }
  // Column index of `name`, or -1.
  int Column(std::string_view name) const;
  // Field of row `row` in column `name`; empty when the column is absent.
  const std::string& Get(size_t row, std::string_view name) const;
  // Source line (1-based) of data row `row`.
  int Line(size_t row) const { return lines_[row]; }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
};

// Splits `text` at any of `separators`, trimming blanks; empty pieces dropped.
std::vector<std::string> SplitList(std::string_view text,
                                   std::string_view separators = ",;");

// The pieces (strings or string_views) with `separator` between them:
// {"a", "b"} -> "a, b".
template <typename Pieces>
std::string JoinList(const Pieces& pieces, std::string_view separator = ", ") {
  std::string out;
  for (std::string_view piece : pieces) {
    if (!out.empty()) out += separator;
    out += piece;
  }
  return out;
}

}  // namespace moesim::util

#endif  // MOESIM_UTIL_CSV_H_
