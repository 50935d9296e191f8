// squeue's report from the API's Job objects (docs/api.md), column for column as Slurm prints it
// (src/squeue/print.c, opts.c, sort.c). A pure function: the jobs and `now` come in, text comes
// out; no clock, no I/O; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// squeue's default formats (squeue(1), opts.c).
inline constexpr char kSqueueDefaultFormat[] = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr char kSqueueLongFormat[] = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr char kSqueueStartFormat[] = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

// The options of one squeue report. Defaults are squeue's with no options given.
struct SqueueOptions {
  // -o/--format. Empty: kSqueueLongFormat with `long_format`, kSqueueStartFormat with `start`,
  // else kSqueueDefaultFormat.
  std::string format;
  bool long_format = false;     // -l: the long format, and a date line above the header
  bool start = false;           // --start: the start format, sorted by expected start ("S")
  bool noheader = false;        // -h
  bool array_expanded = false;  // -r: a pending array prints one line per task
  // -S/--sort, Slurm's sort letters (i, j, u, U, P, t, T, p, Q, S, V, M, D, C, e, l, L, N, v),
  // each optionally preceded by '+' or '-', comma-separated. Empty: "P,t,-p" ("S" with `start`).
  std::string sort;
  Time now = 0;  // the time TIME and TIME_LEFT are measured to, and of the -l date line
};

// Formats `jobs` (a JSON array of Job objects, or {"jobs": [...]}) as squeue does, one line per
// job after the header, each line ending in '\n'. Every job given is printed: filtering by state,
// user or partition (and --start's pending-only rule) is the caller's. An unknown format letter
// is printed as text (unknown_letters.h); an unknown sort letter or malformed input is an
// InvalidArgument.
Result<std::string> FormatSqueue(const nlohmann::json& jobs, const SqueueOptions& options);

}  // namespace lockstep::cli
