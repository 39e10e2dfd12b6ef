#include "util/format.h"

namespace moesim::util {

Error FlagError(std::string_view flag, std::string_view rule) {
  return Error{"flags: " + std::string(flag) + ": " + std::string(rule)};
}

}  // namespace moesim::util
