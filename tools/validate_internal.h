// `moesim validate`'s reports (tools/validate_format.cc) of what the study
// computes (studies/validate.h). Private to the tools library.
#ifndef MOESIM_TOOLS_VALIDATE_INTERNAL_H_
#define MOESIM_TOOLS_VALIDATE_INTERNAL_H_

#include <string>

#include "studies/validate.h"

namespace moesim::tools::internal {

// The reports: the by-group table in Markdown, the JSON, and the text
// (with the groups of `group_by`).
std::string FormatValidateMarkdown(const studies::Validation& v);
std::string FormatValidateJson(const studies::Validation& v);
std::string FormatValidateText(const studies::Validation& v,
                               const std::string& group_by);

}  // namespace moesim::tools::internal

#endif  // MOESIM_TOOLS_VALIDATE_INTERNAL_H_
