// sprio's report from the API's Priority objects (GET /api/v1/priorities, docs/api.md), as Slurm
// prints it (src/sprio/sprio.c, print.c). A pure function; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"

namespace lockstep::cli {

// sprio's long formats (Slurm 22.05's sprio -l; ACCOUNT and QOSNAME came later, as %o and %n);
// the short ones are built from the weights (see SprioOptions).
inline constexpr char kSprioLongFormat[] =
    "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
inline constexpr char kSprioNormalizedLongFormat[] =
    "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t";

// The cluster's PriorityWeight* settings.
struct SprioWeights {
  std::int64_t age = 0, assoc = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  std::string tres;  // PriorityWeightTRES, "CPU=1000,GRES/gpu=4000"; empty: none
};

// The options of one sprio report. Defaults are sprio's with no options given.
struct SprioOptions {
  // -o/--format. Empty: with `long_format` kSprioLongFormat (kSprioNormalizedLongFormat with
  // `normalized`); otherwise sprio's short default, "%.15i %9r %.10Y %.10S" followed by a
  // column for each factor with a non-zero weight (AGE, ASSOC, FAIRSHARE, JOBSIZE, PARTITION,
  // QOS, TRES), USER after the partition when `show_user`.
  std::string format;
  bool long_format = false;   // -l
  bool normalized = false;    // -n: factors divided by their weights; needs `weights`
  bool weights_only = false;  // -w: print the weights instead of the jobs; needs `weights`
  bool noheader = false;      // -h
  bool show_user = false;     // set when -u was given: sprio then shows USER
  // The weights; when unknown, the short default shows AGE, FAIRSHARE, JOBSIZE, PARTITION and
  // QOS (the factors lockstep computes).
  std::optional<SprioWeights> weights;
  // -S/--sort: i, Y, y, u, r, o, A, F, J, P, Q, N, each optionally preceded by '+' or '-'.
  // Empty: "i".
  std::string sort;
};

// Whether `letter` is one of sprio's format letters.
bool SprioLetterKnown(char letter);

// Formats `priorities` (a JSON array of Priority objects, or {"priorities": [...]}) as sprio
// does. Weighted factors print rounded to integers ("%.0f"), normalized ones with 7 decimals.
// The Priority object's optional "site", "assoc", "qos_name" and "cluster" members fill SITE,
// ASSOC, QOSNAME and CLUSTER (0, 0 and empty otherwise); "tres" may be a number or an object of
// per-TRES values.
// An unknown format letter is left out (unknown_letters.h); an unknown sort letter, -n or -w
// without weights, or malformed input is an InvalidArgument.
Result<std::string> FormatSprio(const nlohmann::json& priorities, const SprioOptions& options);

}  // namespace lockstep::cli
