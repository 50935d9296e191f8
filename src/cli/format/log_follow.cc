#include "cli/format/log_follow.h"

#include <vector>

namespace lockstep::cli {

std::string LogFollower::BlockOf(std::string_view line) const {
  const std::size_t colon = line.find(": ");
  if (colon == std::string_view::npos || colon > 253) return "";
  const std::string_view name = line.substr(0, colon);
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
      return "";
  // <prefix>-<job>-<rank>: the job's own pods only, so that output like "x: y" is not a pod.
  const std::size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == name.size()) return "";
  for (char ch : name.substr(dash + 1))
    if (ch < '0' || ch > '9') return "";
  const std::string job = "-" + std::to_string(job_);
  const std::string_view head = name.substr(0, dash);
  if (head.size() <= job.size() || head.substr(head.size() - job.size()) != job) return "";
  return std::string(name);
}

std::string LogFollower::Next(std::string_view text, bool final) {
  // Split into lines, each with its newline (the last may lack it), grouped by block in order.
  std::map<std::string, std::vector<std::string_view>> blocks;
  std::vector<std::string> order;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t nl = text.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    std::string_view line = text.substr(start, end - start);
    std::string block = BlockOf(line);
    auto [it, added] = blocks.try_emplace(block);
    if (added) order.push_back(block);
    it->second.push_back(line);
    start = end;
  }
  std::string out;
  for (const std::string& block : order) {
    const std::vector<std::string_view>& lines = blocks[block];
    std::size_t& printed = printed_[block];
    if (lines.size() < printed) printed = 0;  // a new run's pod of the same name
    for (std::size_t i = printed; i < lines.size(); ++i) {
      const bool complete = !lines[i].empty() && lines[i].back() == '\n';
      if (!complete && !final) break;
      out += lines[i];
      if (!complete) out += '\n';
      printed = i + 1;
    }
  }
  return out;
}

}  // namespace lockstep::cli
