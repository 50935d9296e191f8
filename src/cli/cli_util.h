// Small pieces every command shares: the environment, errors in Slurm's style, the client.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/api_client.h"
#include "common/status.h"

namespace lockstep::cli {

std::map<std::string, std::string> Environment();
std::string CurrentDir();
std::vector<std::string> Args(int argc, char** argv);  // argv[1..]
// The command line as sacct's SubmitLine shows it: every argument, argv[0] as typed, joined by
// spaces (Slurm's slurm_option_get_argv_str).
std::string SubmitLine(int argc, char** argv);

// "sbatch: error: <message>" on stderr; returns the exit code 1.
int Fail(const std::string& command, const Status& status);
int Fail(const std::string& command, const std::string& message);

// A command-line error of sbatch, srun or salloc as Slurm prints it, exit code 255: getopt's own
// words ("sbatch: unrecognized option '--x'", then `Try "sbatch --help" for more information`),
// or "sbatch: error: <message>" for a bad value (exit code 1 for a batch script it cannot use).
int FailOptions(const std::string& command, const Status& status);

// The parser's warnings of a job spec (options accepted without effect: "sbatch: --tmp has no
// effect in lockstep and is ignored"), each on a line of stderr, as docs/sbatch.md promises.
void PrintOptionWarnings(const std::vector<std::string>& warnings);

// sbatch's, srun's and salloc's -h/--help, --usage and -V/--version, looked for among the options
// before the script or command: printed, and the exit code 0; nullopt when none is there.
std::optional<int> SbatchHelpRequested(const std::vector<std::string>& args,
                                       std::string_view prog);

// Reads a whole file (a batch script).
Result<std::string> ReadTextFile(const std::string& path);
// The name of group `gid` ("" when it has none), looked up once per gid per process: a listing
// of thousands of jobs would otherwise read the group database once per job.
std::string GroupName(unsigned gid);

}  // namespace lockstep::cli
