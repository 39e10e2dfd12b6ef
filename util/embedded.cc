#include "util/embedded.h"

#include <algorithm>

namespace moesim::util {
namespace {

constexpr std::string_view kSuffix = ".textproto";

// Stem of `path` when it is "<dir>/<stem>.textproto", else empty.
std::string_view Stem(std::string_view path, std::string_view dir) {
  if (!path.starts_with(dir) ||
      path.size() <= dir.size() + 1 + kSuffix.size() ||
      path[dir.size()] != '/' || !path.ends_with(kSuffix)) {
    return {};
  }
  return path.substr(dir.size() + 1,
                     path.size() - dir.size() - 1 - kSuffix.size());
}

}  // namespace

const EmbeddedFile* FindEmbedded(const std::vector<EmbeddedFile>& files,
                                 std::string_view dir, std::string_view name) {
  for (const EmbeddedFile& file : files) {
    if (!name.empty() && Stem(file.path, dir) == name) return &file;
  }
  return nullptr;
}

std::string EmbeddedNames(const std::vector<EmbeddedFile>& files,
                          std::string_view dir) {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : files) {
    std::string_view stem = Stem(file.path, dir);
    if (!stem.empty()) names.emplace_back(stem);
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace moesim::util
