// The formatting helpers the command files use unqualified: printf into a
// string and the flag error (util/format.h), and the JSON scalars
// (util/json_write.h).
#ifndef MOESIM_TOOLS_TEXT_FORMAT_H_
#define MOESIM_TOOLS_TEXT_FORMAT_H_

#include "util/format.h"
#include "util/json_write.h"

namespace moesim::tools {

using util::FlagError;
using util::Format;
using util::JsonNumber;
using util::JsonString;

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_TEXT_FORMAT_H_
