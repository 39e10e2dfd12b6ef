// Data files compiled into the binary (see cmake/embed.cmake).
#ifndef MOESIM_UTIL_EMBEDDED_H_
#define MOESIM_UTIL_EMBEDDED_H_

#include <string>
#include <string_view>
#include <vector>

namespace moesim::util {

struct EmbeddedFile {
  std::string_view
      path;  // relative to the source root, e.g. "models/zoo/x.textproto"
  std::string_view content;
};

// The file "<dir>/<name>.textproto" among `files`, or nullptr.
const EmbeddedFile* FindEmbedded(const std::vector<EmbeddedFile>& files,
                                 std::string_view dir, std::string_view name);

// Names (file stems) of the "<dir>/*.textproto" files, sorted, comma-joined.
std::string EmbeddedNames(const std::vector<EmbeddedFile>& files,
                          std::string_view dir);

}  // namespace moesim::util

#endif  // MOESIM_UTIL_EMBEDDED_H_
