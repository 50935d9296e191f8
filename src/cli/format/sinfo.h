// sinfo's report from the API's Partition and Node objects (docs/api.md), as Slurm prints it
// (src/sinfo/sinfo.c, print.c, opts.c, sort.c): nodes grouped into lines by partition and by
// every node attribute the format shows, with compressed node lists. A pure function; no clock,
// no I/O; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// sinfo's default formats (sinfo(1); opts.c builds them in its long form). '#' is a width
// computed from the report: at least 9 and as wide as the longest partition name (with its '*')
// or node list. "%.#P" is the right-justified partition column of -N ("partition:.9" in
// opts.c).
inline constexpr char kSinfoDefaultFormat[] = "%#P %.5a %.10l %.6D %.6t %N";
inline constexpr char kSinfoLongFormat[] =
    "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";  // 22.05: no RESERVATION yet
inline constexpr char kSinfoSummarizeFormat[] = "%#P %.5a %.10l %.16F %N";
inline constexpr char kSinfoNodeFormat[] = "%#N %.6D %.#P %6t";
inline constexpr char kSinfoNodeLongFormat[] =
    "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";
inline constexpr char kSinfoReasonFormat[] = "%20E %9u %19H %N";
inline constexpr char kSinfoReasonLongFormat[] = "%20E %12U %19H %6t %N";

// The options of one sinfo report. Defaults are sinfo's with no options given.
struct SinfoOptions {
  // -o/--format. Empty: the default for the mode below (-s, then -N, then -R, then plain; -l
  // picks the long variant).
  std::string format;
  bool node_oriented = false;  // -N: one line per node and partition
  bool long_format = false;    // -l: long formats, and a date line above the header
  bool list_reasons = false;   // -R: only down, drained, draining and failed nodes, by reason
  bool summarize = false;      // -s: one line per partition, NODES(A/I/O/T)
  bool exact = false;          // -e: group only nodes with equal CPUs, memory, disk and weight
  bool noheader = false;       // -h
  // -S/--sort: sinfo's sort letters, each optionally preceded by '+', '-' or '#' ("#P":
  // partitions in configuration order). Empty: "#P,-t", or "N" with -N.
  std::string sort;
  Time now = 0;  // the time of the -l date line
};

// Formats the partitions (a JSON array of Partition objects, or {"partitions": [...]}) and nodes
// (an array of Node objects, or {"nodes": [...]}) as sinfo does. A node belongs to the
// partitions its "partitions" member names. Every line ends in '\n'. An unknown format letter is
// printed as text (unknown_letters.h); an unknown sort letter, or malformed input, is an
// InvalidArgument.
Result<std::string> FormatSinfo(const nlohmann::json& partitions, const nlohmann::json& nodes,
                                const SinfoOptions& options);

}  // namespace lockstep::cli
