// sbatch's options and #SBATCH scripts into a JobSpec, as Slurm reads them; and the same option
// set for srun/salloc-style use. Pure functions (no clock, no environment, no file system: time,
// environment and file reading come in SbatchInput); safe to call from any thread as long as
// read_file is. docs/sbatch.md lists the options and where lockstep differs from Slurm.
//
// Precedence (sbatch(1)): the command line over SBATCH_* environment variables over #SBATCH lines.
// Every error is one line that names the place: "sbatch: --gpus: 'x' is not a GPU count",
// "sbatch: train.sbatch line 4: #SBATCH --time: '1:99' is not a time: ...",
// "sbatch: SBATCH_TIMELIMIT: ...".
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "jobspec/job_spec.h"

namespace lockstep::jobspec {

struct SbatchInput {
  // What follows "sbatch" on the command line: options, then the script path and its arguments.
  std::vector<std::string> args;
  // The submitter's environment: SBATCH_* variables are read from it, and it becomes
  // JobSpec.environment as --export says.
  std::map<std::string, std::string> env;
  // The submit directory (absolute); relative -D and script paths are resolved against it.
  std::string cwd;
  // Now, as a Unix time, for --begin=now+1hour and --begin=16:00.
  Time now = 0;
  // Reads the script; called with the path resolved against cwd (or the command line's -D).
  // Also reads the files of -F/--nodefile, -w FILE and --export-file, resolved against cwd.
  std::function<Result<std::string>(const std::string& path)> read_file;
  // The script when there is neither a script path nor --wrap (sbatch reads it from stdin).
  std::string stdin_script;
  // When set, called for the script instead of using stdin_script, and only when the command
  // line names no script and has no --wrap: sbatch reads its stdin only then, so that
  // `sbatch -p gpu < job.sh` and `cat job.sh | sbatch -J x` find the script there.
  std::function<Result<std::string>()> read_stdin;
};

// Parses a whole sbatch submission: options from the three places, the script (checked to start
// with "#!"), defaults (name: the script's file name, "wrap" or "sbatch" for stdin; work_dir:
// cwd), and the job's environment after --export. Output and error patterns stay empty unless
// given (DefaultOutputPattern in output_pattern.h gives Slurm's default).
Result<JobSpec> ParseSbatch(const SbatchInput& in);

// Heterogeneous jobs (sbatch -n4 ... : -n1 ..., or "#SBATCH hetjob" lines): ParseSbatch returns
// the first component with the others in JobSpec::het_components. A component takes the options
// Slurm propagates (heterogeneous_jobs.html: --account, --begin, --dependency, --error,
// --export, --exclude, --hold, --job-name, --mem, --nice, --output, --qos, --requeue,
// --reservation, --signal, --time, ...) from the one before it unless it gives them itself.
void PropagateHetOptions(const JobSpec& previous, JobSpec& next);

// The same option set for srun/salloc-style use: parses options only and stops at the first
// non-option (the command, returned with its arguments). sbatch-only options (--wrap, --array,
// --parsable) are unrecognized; SLURM_ACCOUNT, SLURM_PARTITION, SLURM_QOS, SLURM_TIMELIMIT and
// SLURM_EXPORT_ENV play the part of the SBATCH_* variables. The name defaults to the command's
// file name. Errors begin with "srun: ". read_file reads the files -F/--nodefile and -w names
// (relative to cwd); without it, those options are errors.
struct SrunParse {
  JobSpec spec;
  std::vector<std::string> command;
  // srun's own options as given, by long name ("pty" -> "", "jobid" -> "42", "label" -> ""),
  // the last occurrence of each: what srun itself carries out.
  std::map<std::string, std::string> srun_options;
};
Result<SrunParse> ParseSrunArgs(const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& env,
                                const std::string& cwd, Time now,
                                const std::function<Result<std::string>(const std::string&)>&
                                    read_file = {});

// srun's and salloc's components of a heterogeneous job: the words split at each lone ":" (a
// lone ":" is never a command's argument there), each part parsed as ParseSrunArgs does, each
// after the first taking what PropagateHetOptions propagates. A part without a command takes
// the next part's (srun -n2 : -n1 hostname runs hostname in both). One part without a ":".
Result<std::vector<SrunParse>> ParseSrunComponents(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
    const std::string& cwd, Time now,
    const std::function<Result<std::string>(const std::string&)>& read_file = {});

// The --help of `prog` (sbatch, srun or salloc): every option it takes, one a line, with what
// lockstep does with it (docs/commands.md has the tables); and --usage, one line.
std::string SbatchHelpText(std::string_view prog);
std::string SbatchUsageText(std::string_view prog);

// A time as Slurm's parse_time reads it (sbatch --begin, sacct -S/-E): now[{+|-}N[unit]],
// today, tomorrow, midnight, noon, HH:MM[:SS], YYYY-MM-DD[THH:MM[:SS]]; local time.
Result<Time> ParseSlurmTime(std::string_view text, Time now);

}  // namespace lockstep::jobspec
