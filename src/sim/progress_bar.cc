#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "sim/report.h"
#include "sim/svg_chart.h"  // FormatNumber

namespace lockstep::sim {
namespace {

constexpr int kBarWidth = 30;
// Redraw granularity: 200 steps is one redraw per 0.5%, a few hundred writes for a whole run
// however many jobs it has.
constexpr std::int64_t kSteps = 200;

}  // namespace

std::string ProgressLine(std::int64_t done, std::int64_t total) {
  done = std::clamp<std::int64_t>(done, 0, std::max<std::int64_t>(total, 0));
  double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  int filled = static_cast<int>(fraction * kBarWidth);
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < kBarWidth) {
    bar += '>';
    bar.append(static_cast<std::size_t>(kBarWidth - filled - 1), ' ');
  }
  return fmt::format("[{}] {:3}%  {}/{} jobs", bar, static_cast<int>(fraction * 100),
                     FormatNumber(static_cast<double>(done)),
                     FormatNumber(static_cast<double>(total)));
}

ProgressBar::ProgressBar(std::int64_t total)
    : total_(total), enabled_(total > 0 && isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (last_drawn_ >= 0) std::fputc('\n', stderr);
}

void ProgressBar::Update(std::int64_t done) {
  if (!enabled_) return;
  std::int64_t step = std::clamp<std::int64_t>(done, 0, total_) * kSteps / total_;
  if (step == last_drawn_) return;
  last_drawn_ = step;
  // \r returns to the start of the line; the line only grows, so nothing stale is left behind.
  std::fprintf(stderr, "\r%s", ProgressLine(done, total_).c_str());
  std::fflush(stderr);
}

}  // namespace lockstep::sim
