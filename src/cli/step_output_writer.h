// Writes a step's task output as srun and sattach print it (docs/commands.md): stdout to
// stdout, stderr to stderr, with "RANK: " before each line when labelling (-l), the rank right-
// aligned to the width of the largest rank. Not thread-safe; one per step being followed.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

namespace lockstep::cli {

class StepOutputWriter {
 public:
  StepOutputWriter(bool label, int ntasks) : label_(label) {
    for (int n = std::max(ntasks - 1, 0); n >= 10; n /= 10) ++width_;
  }
  void Write(int rank, bool is_stderr, const std::string& data) {
    std::FILE* f = is_stderr ? stderr : stdout;
    if (!label_) {
      std::fwrite(data.data(), 1, data.size(), f);
      return;
    }
    bool& at_start = line_start_.try_emplace({rank, is_stderr}, true).first->second;
    std::size_t pos = 0;
    while (pos < data.size()) {
      if (at_start) std::fprintf(f, "%*d: ", width_, rank);
      std::size_t nl = data.find('\n', pos);
      std::size_t end = nl == std::string::npos ? data.size() : nl + 1;
      std::fwrite(data.data() + pos, 1, end - pos, f);
      at_start = nl != std::string::npos;
      pos = end;
    }
  }

 private:
  bool label_;
  int width_ = 1;
  std::map<std::pair<int, bool>, bool> line_start_;
};

}  // namespace lockstep::cli
