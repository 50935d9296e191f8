// squeue's format letters: the header and the value of each (src/squeue/print.c). Internal to
// the squeue formatter; exposed for its tests.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/types.h"

namespace lockstep::cli {

// One line of the report: a job, or one task of a pending array expanded by -r.
struct SqueueRow {
  const nlohmann::json* job = nullptr;
  std::optional<std::int64_t> task;  // set when an expanded array task
};

// A column's text and whether Slurm cuts it to the column width when right-justified.
struct SqueueCell {
  std::string text;
  bool cut = true;
};

// The header of `letter` (and whether Slurm cuts it to the column width), or nullopt when
// squeue has no such letter or lockstep cannot fill it.
std::optional<SqueueCell> SqueueHeader(char letter);

// The value of `letter` for `row`; `letter` must have a header.
SqueueCell SqueueValue(char letter, const SqueueRow& row, Time now);

}  // namespace lockstep::cli
