// scontrol's own options (those before or among the command's words), read as Slurm's scontrol
// reads them: getopt_long with permutation, so `scontrol show job 5 -o` works. Main thread only
// (getopt_long's global state).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lockstep::cli {

struct ScontrolCommandLine {
  bool oneliner = false;           // -o: one line per record
  bool quiet = false;              // -Q: no message for what is already so (suspend, resume)
  std::vector<std::string> words;  // the command and its arguments ("show", "job", "5")
  std::optional<int> exit_code;    // set: stop now (a bad option, or --version printed)
};

// --help/-h is left to the caller (scontrol prints its command list); every other option of
// Slurm 22.05's scontrol is accepted: -o honoured, the rest without effect (docs/commands.md).
ScontrolCommandLine ParseScontrolCommandLine(int argc, char** argv);

}  // namespace lockstep::cli
