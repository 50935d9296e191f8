#include "sim/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace lockstep::sim {

std::string FormatNumber(double v, int decimals) {
  std::string digits = fmt::format("{:.{}f}", std::fabs(v), decimals);
  std::size_t point = digits.find('.');
  std::size_t int_end = point == std::string::npos ? digits.size() : point;
  std::string grouped;
  for (std::size_t i = 0; i < int_end; ++i) {
    if (i > 0 && (int_end - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  grouped += digits.substr(int_end);
  bool is_zero = grouped.find_first_not_of("0.,") == std::string::npos;
  return (v < 0 && !is_zero) ? "-" + grouped : grouped;
}

namespace {

// Room around the plot area for the title, tick labels and axis labels, in pixels.
constexpr double kMarginLeft = 80;
constexpr double kMarginRight = 24;
constexpr double kMarginTop = 44;
constexpr double kMarginBottom = 56;
constexpr std::array<const char*, 6> kPalette = {"#1f77b4", "#d62728", "#2ca02c",
                                                 "#ff7f0e", "#9467bd", "#8c564b"};

struct Tick {
  double value;  // in data units (seconds on duration axes)
  std::string label;
};

// An axis resolved against the data: its ends, its scale and its ticks.
struct ResolvedAxis {
  double lo = 0;
  double hi = 1;
  bool log = false;
  std::string label;  // with the unit the ticks are in, where there is one
  std::vector<Tick> ticks;

  // 0 at lo, 1 at hi; values outside the axis are pinned to its ends.
  double Fraction(double v) const {
    double f =
        log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
            : (v - lo) / (hi - lo);
    return std::clamp(f, 0.0, 1.0);
  }
};

// A 1, 2 or 5 times a power of ten giving about `target` steps over `span`.
double NiceStep(double span, int target) {
  double raw = span / target;
  double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double normalized = raw / magnitude;
  // Round to the nearest of 1, 2, 5, 10 (about midway on a log scale), so the tick count stays near
  // the target rather than dropping to half of it.
  double nice = normalized < 1.5 ? 1 : normalized < 3 ? 2 : normalized < 7 ? 5 : 10;
  return nice * magnitude;
}

// Linear ticks over [lo, hi] measured in units of `unit_seconds` (1 for plain numbers); ends
// not fixed by the caller are rounded outwards to a tick.
void ResolveLinear(const ChartAxis& axis, double unit_seconds, ResolvedAxis& out) {
  double lo = out.lo / unit_seconds;
  double hi = out.hi / unit_seconds;
  double step = NiceStep(hi - lo, 6);
  if (!axis.min) lo = std::floor(lo / step) * step;
  if (!axis.max) hi = std::ceil(hi / step) * step;
  int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  // Ticks are counted in whole steps, not accumulated, so rounding error does not build up.
  for (double k = std::ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; ++k) {
    out.ticks.push_back({k * step * unit_seconds, FormatNumber(k * step, decimals)});
  }
  out.lo = lo * unit_seconds;
  out.hi = hi * unit_seconds;
}

// Minutes, hours or days: whichever gives ticks of a readable size for the span.
void ResolveDuration(const ChartAxis& axis, ResolvedAxis& out) {
  double span = out.hi - out.lo;
  double unit = 86400;
  const char* unit_name = "days";
  if (span <= 3 * 3600.0) {
    unit = 60;
    unit_name = "minutes";
  } else if (span <= 3 * 86400.0) {
    unit = 3600;
    unit_name = "hours";
  }
  ResolveLinear(axis, unit, out);
  out.label = fmt::format("{} ({})", axis.label, unit_name);
}

// Log ticks at durations a person reads at a glance rather than at powers of ten of seconds.
void ResolveLogDuration(const ChartAxis& axis, ResolvedAxis& out) {
  struct Candidate {
    double seconds;
    const char* label;
  };
  static constexpr std::array<Candidate, 11> kCandidates = {{{1, "1s"},
                                                             {10, "10s"},
                                                             {60, "1m"},
                                                             {600, "10m"},
                                                             {3600, "1h"},
                                                             {36000, "10h"},
                                                             {86400, "1d"},
                                                             {864000, "10d"},
                                                             {8640000, "100d"},
                                                             {31536000, "1y"},
                                                             {315360000, "10y"}}};
  out.log = true;
  out.lo = std::max(out.lo, 1.0);
  out.hi = std::max(out.hi, out.lo);
  if (!axis.min) {
    for (const Candidate& c : kCandidates) {
      if (c.seconds <= out.lo) out.lo = c.seconds;
    }
  }
  if (!axis.max) {
    auto above = std::find_if(kCandidates.begin(), kCandidates.end(),
                              [&](const Candidate& c) { return c.seconds >= out.hi; });
    if (above != kCandidates.end()) out.hi = above->seconds;
  }
  if (out.hi <= out.lo) out.hi = out.lo * 10;
  for (const Candidate& c : kCandidates) {
    if (c.seconds >= out.lo && c.seconds <= out.hi) out.ticks.push_back({c.seconds, c.label});
  }
}

// Resolves one axis over the data range [data_lo, data_hi] (NaN when there is no data).
ResolvedAxis ResolveAxis(const ChartAxis& axis, double data_lo, double data_hi) {
  ResolvedAxis out;
  out.label = axis.label;
  bool has_data = !std::isnan(data_lo);
  out.lo = axis.min.value_or(has_data ? data_lo : 0);
  out.hi = axis.max.value_or(has_data ? data_hi : 1);
  if (!(out.hi > out.lo)) out.hi = out.lo + 1;  // one value, or ends given the wrong way round
  switch (axis.kind) {
    case AxisKind::kLinear:
      ResolveLinear(axis, 1, out);
      break;
    case AxisKind::kDuration:
      ResolveDuration(axis, out);
      break;
    case AxisKind::kLogDuration:
      ResolveLogDuration(axis, out);
      break;
  }
  return out;
}

struct PlotArea {
  double left, top, width, height;
  const ResolvedAxis& x;
  const ResolvedAxis& y;
  double PixelX(double v) const { return left + x.Fraction(v) * width; }
  double PixelY(double v) const { return top + (1 - y.Fraction(v)) * height; }
};

void AppendAxes(const Chart& chart, const PlotArea& area, std::string& svg) {
  double bottom = area.top + area.height;
  svg += "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (const Tick& t : area.x.ticks) {
    double px = area.PixelX(t.value);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>\n", px,
                       area.top, bottom);
  }
  for (const Tick& t : area.y.ticks) {
    double py = area.PixelY(t.value);
    svg += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\"/>\n", py,
                       area.left, area.left + area.width);
  }
  svg += "</g>\n";
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#333\"/>\n",
      area.left, area.top, area.width, area.height);
  for (const Tick& t : area.x.ticks) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                       area.PixelX(t.value), bottom + 16, EscapeXml(t.label));
  }
  for (const Tick& t : area.y.ticks) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
                       area.left - 6, area.PixelY(t.value) + 4, EscapeXml(t.label));
  }
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     area.left + area.width / 2, bottom + 40, EscapeXml(area.x.label));
  double label_y = area.top + area.height / 2;
  svg += fmt::format(
      "<text x=\"18\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0:.1f})\">"
      "{1}</text>\n",
      label_y, EscapeXml(area.y.label));
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"24\" text-anchor=\"middle\" font-size=\"16\" "
      "font-weight=\"bold\">{}</text>\n",
      chart.width / 2.0, EscapeXml(chart.title));
}

void AppendSeries(const ChartSeries& series, const char* color, std::size_t max_points,
                  const PlotArea& area, std::string& svg) {
  std::vector<ChartPoint> points = Downsample(series.points, max_points);
  if (points.empty()) return;
  std::string coords;
  auto add = [&](double x, double y) {
    coords += fmt::format("{:.1f},{:.1f} ", area.PixelX(x), area.PixelY(y));
  };
  add(points[0].x, points[0].y);
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (series.step) add(points[i].x, points[i - 1].y);
    add(points[i].x, points[i].y);
  }
  coords.pop_back();
  svg += fmt::format(
      "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" stroke-linejoin=\"round\" "
      "points=\"{}\"/>\n",
      color, coords);
}

void AppendLegend(const Chart& chart, const PlotArea& area, std::string& svg) {
  std::size_t named = std::count_if(chart.series.begin(), chart.series.end(),
                                    [](const ChartSeries& s) { return !s.name.empty(); });
  if (named == 0) return;
  double y = area.top + 16;
  double x = area.left + area.width - 150;
  // A translucent box keeps the legend readable over dense data.
  svg += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"144\" height=\"{:.1f}\" fill=\"white\" "
      "fill-opacity=\"0.85\" stroke=\"#ccc\"/>\n",
      x - 6, y - 11, 18.0 * named + 4);
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const std::string& name = chart.series[i].name;
    if (name.empty()) continue;
    const char* color = kPalette[i % kPalette.size()];
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"3\"/>\n<text x=\"{4:.1f}\" y=\"{5:.1f}\">{6}</text>\n",
        x, y, x + 20, color, x + 26, y + 4, EscapeXml(name));
    y += 18;
  }
}

}  // namespace

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<ChartPoint> Downsample(const std::vector<ChartPoint>& points, std::size_t max_points) {
  max_points = std::max<std::size_t>(max_points, 4);
  if (points.size() <= max_points) return points;
  const std::size_t interior = points.size() - 2;
  const std::size_t buckets = (max_points - 2) / 2;  // each bucket keeps at most two points
  std::vector<ChartPoint> out;
  out.reserve(2 * buckets + 2);
  out.push_back(points.front());
  for (std::size_t b = 0; b < buckets; ++b) {
    std::size_t begin = 1 + interior * b / buckets;
    std::size_t end = 1 + interior * (b + 1) / buckets;
    if (begin == end) continue;
    std::size_t lowest = begin, highest = begin;
    for (std::size_t i = begin + 1; i < end; ++i) {
      if (points[i].y < points[lowest].y) lowest = i;
      if (points[i].y > points[highest].y) highest = i;
    }
    out.push_back(points[std::min(lowest, highest)]);
    if (lowest != highest) out.push_back(points[std::max(lowest, highest)]);
  }
  out.push_back(points.back());
  return out;
}

std::string RenderSvg(const Chart& chart) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double x_lo = kNaN, x_hi = kNaN, y_lo = kNaN, y_hi = kNaN;
  for (const ChartSeries& s : chart.series) {
    for (const ChartPoint& p : s.points) {
      // fmin/fmax return the other argument when one is NaN, so the first point seeds the range.
      x_lo = std::fmin(x_lo, p.x);
      x_hi = std::fmax(x_hi, p.x);
      y_lo = std::fmin(y_lo, p.y);
      y_hi = std::fmax(y_hi, p.y);
    }
  }
  ResolvedAxis x = ResolveAxis(chart.x, x_lo, x_hi);
  ResolvedAxis y = ResolveAxis(chart.y, y_lo, y_hi);
  PlotArea area{kMarginLeft,
                kMarginTop,
                chart.width - kMarginLeft - kMarginRight,
                chart.height - kMarginTop - kMarginBottom,
                x,
                y};

  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      chart.width, chart.height);
  AppendAxes(chart, area, svg);
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    AppendSeries(chart.series[i], kPalette[i % kPalette.size()], chart.max_points_per_series, area,
                 svg);
  }
  if (std::isnan(x_lo)) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">no data</text>\n",
                       area.left + area.width / 2, area.top + area.height / 2);
  }
  AppendLegend(chart, area, svg);
  svg += "</svg>\n";
  return svg;
}

Status WriteSvg(const Chart& chart, const std::string& path) {
  std::string svg = RenderSvg(chart);
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr)
    return IoError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  bool written = std::fwrite(svg.data(), 1, svg.size(), file) == svg.size();
  int saved_errno = errno;
  if (std::fclose(file) != 0 && written) {
    written = false;
    saved_errno = errno;
  }
  if (!written)
    return IoError(fmt::format("cannot write {}: {}", path, std::strerror(saved_errno)));
  return Status::Ok();
}

}  // namespace lockstep::sim
