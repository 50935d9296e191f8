// sacct's fields: names, default widths and how each prints (src/sacct/sacct.c's table and
// print.c). Internal to the sacct formatter; exposed for its tests.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/types.h"

namespace lockstep::cli {

// How print_fields prints a value: strings are cut with a '+' when too long; numbers and
// durations are never cut; dates are cut without a mark.
enum class SacctKind { kString, kNumber, kDate, kDuration };

struct SacctField {
  const char* name;  // as the header shows it
  int width;         // negative: left-justified
  SacctKind kind;
};

// Every field, in Slurm's table order (lockstep's own last).
std::span<const SacctField> AllSacctFields();

// The field whose name `typed` is a case-insensitive prefix of, first in Slurm's table order
// ("jobid" -> JobID, "elapsed" -> Elapsed), or nullptr.
const SacctField* FindSacctField(std::string_view typed);

// One line: a job, or one of its steps.
struct SacctRow {
  const nlohmann::json* job = nullptr;
  const nlohmann::json* step = nullptr;  // null on the job's line
};

// The value of `field` on `row`, or nullopt when Slurm prints nothing (a step's Partition, a
// field the API does not carry).
std::optional<std::string> SacctValue(const SacctField& field, const SacctRow& row, Time now);

}  // namespace lockstep::cli
