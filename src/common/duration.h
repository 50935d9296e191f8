// Slurm's time and size strings: `sbatch -t 1-12:00:00`, squeue's TIME column, `--mem=16G`.
// Pure functions; safe to call from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/types.h"

namespace lockstep {

// Parses a time limit the way sbatch's -t/--time does. Accepted forms (Slurm's):
//   "minutes"                    "90"          -> 5400 s
//   "minutes:seconds"            "90:30"
//   "hours:minutes:seconds"      "36:00:00"
//   "days-hours"                 "2-12"
//   "days-hours:minutes"         "2-12:30"
//   "days-hours:minutes:seconds" "2-12:30:15"
//   "infinite", "unlimited" (any case) and "-1" -> kUnlimited.
// The leading field is unbounded; the fields after it must be below 60 (minutes, seconds) or
// below 24 (hours after days). Anything else, including surrounding spaces, is an
// InvalidArgument that quotes the text.
Result<Seconds> ParseSlurmDuration(std::string_view text);

// Formats seconds as squeue's TIME and TIME_LIMIT columns do (%M, %l):
// 0 -> "0:00", 62 -> "1:02", 3723 -> "1:02:03", 93784 -> "1-02:03:04";
// kUnlimited (or more) -> "UNLIMITED"; negative -> "INVALID".
std::string FormatSlurmDuration(Seconds seconds);

// Formats seconds as scontrol and sacctmgr print a span (Slurm's secs2time_str): "00:05:00",
// "1-00:00:00" from a day on; negative as 0.
std::string FormatSlurmSpan(Seconds seconds);

// Parses a Slurm memory size ("--mem=16G") into megabytes: a non-negative integer with an
// optional unit K, M, G or T (either case; default M). Kilobytes round up to whole megabytes,
// as Slurm does: "2048K" -> 2, "1K" -> 1. "4096" -> 4096, "512M" -> 512, "16G" -> 16384,
// "1T" -> 1048576.
Result<std::int64_t> ParseMemoryMb(std::string_view text);

}  // namespace lockstep
