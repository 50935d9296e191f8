// sacct's report from the API's accounting records (GET /api/v1/accounting, docs/api.md): Job
// objects, each with an optional "steps" array, printed as Slurm's print_fields does
// (src/common/print_fields.c, src/sacct/sacct.c). A pure function; no clock, no I/O;
// thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// sacct's field lists (src/sacct/sacct.h).
inline constexpr char kSacctDefaultFields[] =
    "jobid,jobname,partition,account,alloccpus,state,exitcode";
inline constexpr char kSacctBriefFields[] = "jobid,state,exitcode";
inline constexpr char kSacctLongFields[] =
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,"
    "maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,"
    "mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,"
    "reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,"
    "maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,"
    "reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,tresusageinmaxt,"
    "tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,"
    "tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot";

enum class SacctParsable {
  kNone,        // columns of fixed width under a dashed underline
  kTrailing,    // -p/--parsable: every field followed by the delimiter
  kNoTrailing,  // -P/--parsable2: fields separated by the delimiter
};

// The options of one sacct report. Defaults are sacct's with no options given.
struct SacctOptions {
  // -o/--format: comma-separated field names, any case, each a prefix of a Slurm field name
  // ("jobid", "elapsed", "nodel"; a prefix of "ALL" is every field), optionally followed by
  // "%N" for a width (a negative width left-justifies). As Slurm's options.c, -b and -l add
  // their lists after it; with none of the three, kSacctDefaultFields.
  std::string format;
  bool brief = false;        // -b
  bool long_format = false;  // -l
  bool noheader = false;     // -n
  bool allocations = false;  // -X: jobs only, no step lines
  SacctParsable parsable = SacctParsable::kNone;
  std::string delimiter = "|";  // --delimiter, with -p/-P
  Time now = 0;                 // the time Elapsed is measured to for running jobs and steps
};

// Formats `jobs` (a JSON array of Job objects, or {"jobs": [...]}) as sacct does: a line per job,
// then a line per entry of its "steps" ({"step_id": "batch" | "extern" | N, "name", "state",
// "exit_code", "signal", "start_time", "end_time", "nodes", and optionally "node_count",
// "cpus", "tasks", "cancelled_by"}). A job or step whose state is CANCELLED and that carries
// "cancelled_by" (a uid) shows "CANCELLED by <uid>", as Slurm does. Fields sacct knows but the
// API does not carry (MaxRSS, AveCPU, ...) print blank. An unknown field name or malformed input
// is an InvalidArgument.
Result<std::string> FormatSacct(const nlohmann::json& jobs, const SacctOptions& options);

// sacct -e/--helpformat: every field name, four to a line, as Slurm's _help_fields_msg prints them.
std::string SacctHelpFormat();

}  // namespace lockstep::cli
