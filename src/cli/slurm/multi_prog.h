// srun --multi-prog: a configuration file that gives each task rank its own program, as
// Slurm's (srun(1), "MULTIPLE PROGRAM CONFIGURATION"): lines "RANKS PROGRAM [ARGS...]", RANKS
// "0", "1-3", "4,6" or "*" (every other task), "%t" in a word the task's rank and "%o" its
// offset within its line's ranks; '#' starts a comment. Made into one /bin/sh command that every
// task runs and that execs its own line, every word single-quoted (nothing the file says reaches
// the shell as code). Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep::cli {

// The argv every task runs: {"/bin/sh", "-c", script}. `file` names the file in messages.
// An error names the file and line: "prog.conf line 3: '1-x' is not a task range".
Result<std::vector<std::string>> MultiProgCommand(const std::string& text,
                                                  const std::string& file);

}  // namespace lockstep::cli
