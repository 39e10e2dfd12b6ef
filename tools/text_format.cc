#include "tools/text_format.h"

namespace moesim::tools {

util::Error FlagError(std::string_view flag, std::string_view rule) {
  return util::Error{"flags: " + std::string(flag) + ": " + std::string(rule)};
}

}  // namespace moesim::tools
