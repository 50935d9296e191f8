// The pieces every Slurm-style report shares: the "%[.][size]letter[suffix]" format language of
// squeue, sinfo and sprio, Slurm's column fitting (_print_str in src/squeue/print.c and friends),
// its time strings, and tolerant reads from the REST API's JSON objects (docs/api.md).
// Pure functions, no clock and no I/O; safe to call from any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// One "%[.][size]letter[suffix]" field of a format string.
struct FieldSpec {
  char letter = 0;
  int width = 0;            // 0: as wide as the value
  bool right = false;       // '.': right-justified
  bool auto_width = false;  // '#' (sinfo): as wide as the widest value in the report
  std::string suffix;       // text up to the next '%', printed after the field
};

// A parsed format: text before the first '%' (printed at the start of every line, header
// included), then the fields.
struct FormatSpec {
  std::string prefix;
  std::vector<FieldSpec> fields;
};

// Parses a format string as squeue/sinfo/sprio do (opts.c _parse_token): after each '%' an
// optional '.', an optional decimal size (or '#', sinfo's computed width), one letter, and the
// suffix up to the next '%'. "%%" is a literal '%' in the suffix (Slurm drops it). A '%' with no
// letter after it is an InvalidArgument naming `command`; whether a letter is known is the
// caller's check.
Result<FormatSpec> ParseFormat(std::string_view format, std::string_view command);

// Fits `value` into a column as Slurm's _print_str does: width 0 prints the value as it is;
// left-justified values are cut to `width` and padded with spaces; right-justified values are
// padded on the left and, when `cut` is set, cut to their first `width` bytes.
std::string FitField(std::string_view value, int width, bool right, bool cut);

// squeue's TIME/TIME_LIMIT/TIME_LEFT string (_print_secs): "0:00", "1:02", "1:02:03",
// "1-02:03:04"; negative or more than 365 days -> "INVALID".
std::string SqueueDuration(Seconds seconds);

// sinfo's TIMELIMIT string: the same shapes as SqueueDuration, without the 365-day cap.
std::string SinfoDuration(Seconds seconds);

// sacct's and scontrol's duration (secs2time_str): "00:00:00", "01:02:03", "1-02:03:04";
// negative -> "INVALID".
std::string LongDuration(Seconds seconds);

// Slurm's default time stamp (slurm_make_time_str) in the local time zone:
// "2025-11-29T07:06:40". Callers choose the text for 0 ("N/A", "Unknown", ...).
std::string TimeStamp(Time t);

// A TRES-per-something value as Slurm 22.05 prints it (squeue %b, scontrol TresPerNode): its GRES
// as "gres:gpu:2", where the API (and Slurm from 23.02) says "gres/gpu:2".
std::string TresPerText(std::string_view tres);

// The date line squeue -l and sinfo -l print above the header (ctime): "Sat Nov 29 07:06:40 2025".
std::string DateLine(Time now);

// Slurm's convert_num_unit with CONVERT_NUM_UNIT_EXACT (the default of squeue and sinfo):
// scales by 1024 while the value divides evenly: megabytes 4096 -> "4G", 1536 -> "1536M",
// 0 -> "0". `unit_index` is the starting unit: 0 none, 1 K, 2 M, 3 G, 4 T, 5 P.
std::string ConvertUnits(std::int64_t value, int unit_index);

// Text a user wrote (a job's name, a node's reason, an account, a path), made safe to print on a
// terminal: C0 control characters, DEL and C1 controls (U+0080 to U+009F) are shown as escapes,
// "\n", "\t", "\r" and "\x1b" style, so that no escape sequence reaches the terminal and no
// forged line appears; bidirectional formatting characters (U+202E RIGHT-TO-LEFT OVERRIDE and
// the other embeddings, overrides, isolates and marks) and the line and paragraph separators as
// "\u202e", so that another user's name cannot reorder what a line shows. Everything else,
// UTF-8 included, is kept.
std::string EscapeControl(std::string_view text);

// Tolerant JSON reads: a missing key, null or a value of another type gives the fallback.
// Strings come back through EscapeControl: every report prints them, and users write them.
std::string JStr(const nlohmann::json& object, std::string_view key);
std::optional<std::int64_t> JInt(const nlohmann::json& object, std::string_view key);
std::int64_t JIntOr(const nlohmann::json& object, std::string_view key, std::int64_t fallback);
double JDouble(const nlohmann::json& object, std::string_view key);
bool JBool(const nlohmann::json& object, std::string_view key);
// True when the key is present and null (the API's "unlimited").
bool JIsNull(const nlohmann::json& object, std::string_view key);

// The array of records in `input`: `input` itself when it is an array, or its member `key`
// (the API wraps lists: {"jobs": [...]}). Anything else, or a record that is not an object,
// is an InvalidArgument.
Result<std::vector<const nlohmann::json*>> Records(const nlohmann::json& input,
                                                   std::string_view key);

// Orders host names as Slurm's hostlist_sort does: by the text before the trailing digits, then
// by their value ("a9" < "a10" < "b1").
bool HostNameLess(const std::string& a, const std::string& b);

// Host names sorted as Slurm's hostlist_sort does (prefix, then number), then compressed:
// {"b2","a10","a9"} -> "a[9-10],b2".
std::string SortedHostlist(std::vector<std::string> hosts);

}  // namespace lockstep::cli
