// The commands of the lockstep binary. Each takes its own argv (argv[0] is the command's name)
// and returns the process exit code: 0 ok, 1 failure, 2 bad usage.
#pragma once

namespace lockstep::cli {

int RunSim(int argc, char** argv);

}  // namespace lockstep::cli
