#include "jobspec/output_pattern.h"

#include <fmt/format.h>

#include <algorithm>

namespace lockstep::jobspec {
namespace {

constexpr int kMaxWidth = 10;

void AppendNumber(std::string& out, std::uint64_t value, int width) {
  fmt::format_to(std::back_inserter(out), "{:0{}}", value, width);
}

}  // namespace

std::string ExpandOutputPattern(std::string_view pattern, const OutputPatternVars& vars) {
  std::string out;
  if (pattern.find('\\') != std::string_view::npos) {
    std::remove_copy(pattern.begin(), pattern.end(), std::back_inserter(out), '\\');
    return out;
  }
  const std::uint32_t task = vars.is_array ? vars.array_task_id : kNoArrayTaskId;
  const bool batch = vars.step_id == kBatchStepId;
  std::size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c != '%' || i + 1 == pattern.size()) {
      out += c;
      ++i;
      continue;
    }
    // '%', an optional width, a letter.
    std::size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
      width = std::min(kMaxWidth, width * 10 + (pattern[j] - '0'));
      ++j;
    }
    if (j == pattern.size()) {  // "%12" at the end: nothing to expand
      out.append(pattern.substr(i));
      break;
    }
    switch (pattern[j]) {
      case '%':
        out += '%';
        break;
      case 'A':
        AppendNumber(out, vars.is_array ? vars.array_job_id : vars.job_id, width);
        break;
      case 'a':
        AppendNumber(out, task, width);
        break;
      case 'b':
        AppendNumber(out, task % 10, width);
        break;
      case 'J':
        AppendNumber(out, vars.job_id, width);
        if (!batch) fmt::format_to(std::back_inserter(out), ".{}", vars.step_id);
        break;
      case 'j':
        AppendNumber(out, vars.job_id, width);
        break;
      case 'N':
        out += vars.node;
        break;
      case 'n':
        AppendNumber(out, vars.node_id, width);
        break;
      case 's':
        if (batch) {
          out += "batch";
        } else {
          AppendNumber(out, vars.step_id, width);
        }
        break;
      case 't':
        AppendNumber(out, vars.task_id, width);
        break;
      case 'u':
        out += vars.user;
        break;
      case 'x':
        out += vars.job_name;
        break;
      case 'r':
        AppendNumber(out, vars.restart_count, width);
        break;
      default:
        out.append(pattern.substr(i, j + 1 - i));
        break;  // not ours: kept as written
    }
    i = j + 1;
  }
  return out;
}

std::string DefaultOutputPattern(bool is_array) {
  return is_array ? "slurm-%A_%a.out" : "slurm-%j.out";
}

}  // namespace lockstep::jobspec
