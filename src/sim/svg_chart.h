// A small, dependency-free SVG chart writer: line or step series of (x, y) points, a title, axis
// labels and readable ticks. It knows nothing of simulations; report.cc builds the charts.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::sim {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string name;                // shown in the legend; empty for none
  std::vector<ChartPoint> points;  // in x order
  // A step series holds each y until the next point (a sampled level such as busy units); a
  // line series joins points directly.
  bool step = false;
};

enum class AxisKind {
  kLinear,       // plain numbers with 1-2-5 ticks
  kDuration,     // seconds; ticks and unit in minutes, hours or days, whichever suits the span
  kLogDuration,  // seconds on a log10 scale, ticks at 1s, 10s, 1m, 10m, 1h, 10h, 1d, 10d, ...;
                 // values below 1 s are drawn at 1 s
};

struct ChartAxis {
  std::string label;
  AxisKind kind = AxisKind::kLinear;
  // Fixed ends (e.g. 0 and 100 for a percentage); unset ends follow the data, rounded outwards
  // to a tick.
  std::optional<double> min;
  std::optional<double> max;
};

struct Chart {
  std::string title;
  ChartAxis x;
  ChartAxis y;
  std::vector<ChartSeries> series;
  int width = 900;
  int height = 420;
  // Longer series are downsampled before drawing (see Downsample) so that a replay with hundreds
  // of thousands of samples still gives a file a browser opens quickly.
  std::size_t max_points_per_series = 2000;
};

// The chart as a standalone SVG document.
std::string RenderSvg(const Chart& chart);
// RenderSvg written to `path`; IoError naming the path when it cannot be written.
Status WriteSvg(const Chart& chart, const std::string& path);

// At most `max_points` (>= 4) of `points`, which are in x order: the first and the last point,
// and from each of equal-sized buckets in between the lowest and the highest point, in their
// original order, so peaks and troughs survive. Returns `points` unchanged when short enough.
std::vector<ChartPoint> Downsample(const std::vector<ChartPoint>& points, std::size_t max_points);

// "12,345.5": `decimals` fixed decimals, thousands grouped with commas, never "-0". Shared by the
// chart ticks, the summary and the progress bar so numbers read the same everywhere.
std::string FormatNumber(double v, int decimals = 0);

// "&", "<", ">", '"' and "'" as XML entities.
std::string EscapeXml(std::string_view text);

}  // namespace lockstep::sim
