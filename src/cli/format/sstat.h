// sstat's report from the API's usage samples (GET /api/v1/jobs/{id}/usage, docs/api.md), as
// Slurm 22.05's sstat prints it (src/sstat/sstat.c fields, print.c, common/print_fields.c): one
// line per step, the tasks' samples aggregated (Max/Min with the node and task, Ave over the
// tasks). A pure function; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace lockstep::cli {

// Slurm 22.05's STAT_FIELDS: sstat's columns without -o.
inline constexpr char kSstatDefaultFields[] =
    "jobid,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,maxrsstask,averss,"
    "maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,"
    "avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,consumedenergy,maxdiskread,"
    "maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
    "maxdiskwritetask,avediskwrite,tresusageinave,tresusageinmax,tresusageinmaxn,"
    "tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,"
    "tresusageoutave,tresusageoutmax,tresusageoutmaxn,tresusageoutmaxt,tresusageoutmin,"
    "tresusageoutminn,tresusageoutmint,tresusageouttot";
// --pidformat (-i).
inline constexpr char kSstatPidFields[] = "jobid,nodelist,pids";

struct SstatOptions {
  std::string format;      // -o/--format: names (any case, a prefix each), "%N" widths; "": default
  bool noheader = false;   // -n
  int parsable = 0;        // 0: columns; 1: -p ('|' after every field); 2: -P (between fields)
  bool noconvert = false;  // --noconvert: sizes in bytes, no K/M/G
};

// The report header (with the dashed line unless parsable), or nothing with noheader.
Result<std::string> FormatSstatHeader(const SstatOptions& options);
// One line for `step` ({"step_id", "nodes", "tasks": [...]}, an element of the API's "steps")
// of job `job_id`. A step without tasks (no sample yet) is a FailedPrecondition.
Result<std::string> FormatSstatStep(std::int64_t job_id, const nlohmann::json& step,
                                    const SstatOptions& options);
// sstat's list of fields (--helpformat).
std::string SstatFieldNames();

}  // namespace lockstep::cli
