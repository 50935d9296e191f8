// Writes a step's task output as srun and sattach print it (docs/commands.md): stdout to
// stdout, stderr to stderr, with "RANK: " before each line when labelling (-l), the rank right-
// aligned to the width of the largest rank; or, with files (srun -o/-e), each task's stream to
// the file named for it. Not thread-safe; one per step being followed.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>

namespace lockstep::cli {

class StepOutputWriter {
 public:
  // The file a task's stream goes to; "" for srun's own stdout or stderr.
  using FileOf = std::function<std::string(int rank, bool is_stderr)>;

  StepOutputWriter(bool label, int ntasks, FileOf file_of = {})
      : label_(label), file_of_(std::move(file_of)) {
    for (int n = std::max(ntasks - 1, 0); n >= 10; n /= 10) ++width_;
  }
  ~StepOutputWriter() {
    for (auto& [name, f] : files_)
      if (f != nullptr) std::fclose(f);
  }
  StepOutputWriter(const StepOutputWriter&) = delete;
  StepOutputWriter& operator=(const StepOutputWriter&) = delete;

  void Write(int rank, bool is_stderr, const std::string& data) {
    std::FILE* f = Target(rank, is_stderr);
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

  void Flush() {
    for (auto& [name, f] : files_)
      if (f != nullptr) std::fflush(f);
  }

 private:
  // Opened once each (truncated, as srun's default --open-mode); a file that cannot be opened
  // is said once and its output stays on srun's own stream.
  std::FILE* Target(int rank, bool is_stderr) {
    std::FILE* own = is_stderr ? stderr : stdout;
    if (!file_of_) return own;
    const std::string name = file_of_(rank, is_stderr);
    if (name.empty()) return own;
    auto [it, fresh] = files_.try_emplace(name, nullptr);
    if (fresh) {
      it->second = std::fopen(name.c_str(), "w");
      if (it->second == nullptr)
        std::fprintf(stderr, "srun: error: Could not open %s file %s: %s\n",
                     is_stderr ? "stderr" : "stdout", name.c_str(), std::strerror(errno));
    }
    return it->second != nullptr ? it->second : own;
  }

  bool label_;
  FileOf file_of_;
  std::map<std::string, std::FILE*> files_;
  int width_ = 1;
  std::map<std::pair<int, bool>, bool> line_start_;
};

}  // namespace lockstep::cli
