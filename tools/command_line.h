// The moesim command line as a function: arguments in, the report, the
// error line and the exit status out, so that the moesim binary and the
// Python module (python/) run the same code. Every util::Error and every
// flag-parsing error becomes one line (control characters escaped, length
// bounded: util/message.h) and status 2; a valid scenario that does not fit
// in memory is a verdict in the report with status 0.
#ifndef MOESIM_TOOLS_COMMAND_LINE_H_
#define MOESIM_TOOLS_COMMAND_LINE_H_

#include <string>

namespace moesim::tools {

struct CommandResult {
  int status = 0;
  std::string out;  // for stdout
  std::string err;  // for stderr: "moesim: <message>\n" on an error
};

// `argv[0]` is the program's name. `join_mpi`: under mpirun, the sweep
// ranks divide the space (a MOESIM_MPI build; the binary only).
CommandResult RunCommandLine(int argc, char** argv, bool join_mpi);

}  // namespace moesim::tools

#endif  // MOESIM_TOOLS_COMMAND_LINE_H_
