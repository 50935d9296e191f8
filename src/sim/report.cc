#include "sim/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/svg_chart.h"

namespace lockstep::sim {
namespace {

// The bound of bounded slowdown: jobs shorter than this count as this long, so that a 1-second
// job that waited a minute does not dominate the mean with a slowdown of 61.
constexpr double kSlowdownBoundSeconds = 10;

double RunSeconds(const JobRecord& job) {
  return static_cast<double>(job.end - job.start);
}

double BoundedSlowdown(double wait, double run) {
  return std::max(1.0, (wait + run) / std::max(run, kSlowdownBoundSeconds));
}

// Nearest-rank percentiles: for each of `percents` (ascending), the smallest value with at least
// that percentage of the values at or below it; 0 for no values. Reorders `values` rather than
// sorting them: each rank is selected among the values above the one before.
template <std::size_t N>
std::array<double, N> NearestRanks(std::vector<double>& values,
                                   const std::array<double, N>& percents) {
  std::array<double, N> out{};
  if (values.empty()) return out;
  std::size_t from = 0;
  for (std::size_t i = 0; i < N; ++i) {
    // percent * n first: exact in double for any realistic n, where percent / 100 is not.
    auto rank = static_cast<std::size_t>(std::ceil(percents[i] * values.size() / 100.0));
    rank = std::clamp<std::size_t>(rank, 1, values.size());
    const auto nth = values.begin() + static_cast<std::ptrdiff_t>(rank - 1);
    std::nth_element(values.begin() + static_cast<std::ptrdiff_t>(from), nth, values.end());
    out[i] = *nth;
    from = rank - 1;
  }
  return out;
}

double Mean(double sum, std::size_t count) {
  return count == 0 ? 0 : sum / count;
}

double Ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

// Slurm's "[d-]hh:mm:ss", rounded to the second.
std::string FormatDuration(double seconds) {
  auto total = static_cast<std::int64_t>(std::llround(std::max(seconds, 0.0)));
  std::int64_t days = total / 86400;
  std::string clock =
      fmt::format("{:02}:{:02}:{:02}", total % 86400 / 3600, total % 3600 / 60, total % 60);
  return days > 0 ? fmt::format("{}-{}", days, clock) : clock;
}

std::string Percent(double fraction) {
  return fmt::format("{:.1f}%", 100 * fraction);
}

// One summary line: a label padded so the values of every line start in the same column.
std::string Line(std::string_view label, std::string_view value) {
  value = value.substr(0, value.find_last_not_of(' ') + 1);  // columns pad the last value too
  return fmt::format("{:<19}{}\n", label, value);
}

// "mean 00:12:34  p50 00:01:00": labelled durations in columns that line up between lines.
std::string DurationColumns(std::initializer_list<std::pair<const char*, double>> columns) {
  std::string out;
  for (const auto& [name, seconds] : columns) {
    out += fmt::format("{} {:<12}", name, FormatDuration(seconds));
  }
  return out;
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// Plots measure time from the first submission so the axis reads as "days into the trace".
double PlotOrigin(const SimResult& result) {
  if (!result.jobs.empty()) {
    Time origin = result.jobs.front().submit;
    for (const JobRecord& job : result.jobs) origin = std::min(origin, job.submit);
    return static_cast<double>(origin);
  }
  return result.samples.empty() ? 0 : static_cast<double>(result.samples.front().time);
}

std::string TitleSuffix(const SimResult& result) {
  return result.policy.empty() ? "" : fmt::format(" ({})", result.policy);
}

Chart UtilizationChart(const SimResult& result) {
  const std::string unit = result.unit_name.empty() ? "units" : result.unit_name;
  Chart chart;
  chart.title = "Utilization" + TitleSuffix(result);
  chart.x = {"time since first submit", AxisKind::kDuration, 0.0, std::nullopt};
  chart.y = {fmt::format("busy {} (% of {})", unit, FormatNumber(result.capacity_units)),
             AxisKind::kLinear, 0.0, 100.0};
  ChartSeries busy{"busy " + unit, {}, /*step=*/true};
  if (result.capacity_units > 0) {
    double origin = PlotOrigin(result);
    busy.points.reserve(result.samples.size());
    for (const Sample& s : result.samples) {
      busy.points.push_back({s.time - origin, 100.0 * s.busy_units / result.capacity_units});
    }
  }
  chart.series.push_back(std::move(busy));
  return chart;
}

Chart QueueChart(const SimResult& result) {
  Chart chart;
  chart.title = "Queued and running jobs" + TitleSuffix(result);
  chart.x = {"time since first submit", AxisKind::kDuration, 0.0, std::nullopt};
  chart.y = {"jobs", AxisKind::kLinear, 0.0, std::nullopt};
  ChartSeries queued{"queued", {}, /*step=*/true};
  ChartSeries running{"running", {}, /*step=*/true};
  double origin = PlotOrigin(result);
  for (const Sample& s : result.samples) {
    queued.points.push_back({s.time - origin, static_cast<double>(s.queued_jobs)});
    running.points.push_back({s.time - origin, static_cast<double>(s.running_jobs)});
  }
  chart.series.push_back(std::move(queued));
  chart.series.push_back(std::move(running));
  return chart;
}

// The empirical CDF of `waits` as a step series: at each distinct wait, the percentage of jobs
// that waited at most that long.
ChartSeries WaitCdf(std::string name, std::vector<double> waits) {
  std::sort(waits.begin(), waits.end());
  ChartSeries cdf{std::move(name), {}, /*step=*/true};
  if (!waits.empty()) cdf.points.push_back({waits.front(), 0});  // so the first jump is drawn
  for (std::size_t i = 0; i < waits.size(); ++i) {
    if (i + 1 < waits.size() && waits[i + 1] == waits[i]) continue;  // one point per value
    cdf.points.push_back({waits[i], 100.0 * (i + 1) / waits.size()});
  }
  return cdf;
}

Chart WaitCdfChart(const SimResult& result) {
  Chart chart;
  chart.title = "Wait time distribution" + TitleSuffix(result);
  chart.x = {"wait (log scale; under 1s drawn at 1s)", AxisKind::kLogDuration, std::nullopt,
             std::nullopt};
  chart.y = {"jobs that waited at most this long (%)", AxisKind::kLinear, 0.0, 100.0};
  std::vector<double> simulated, recorded;
  simulated.reserve(result.jobs.size());
  for (const JobRecord& job : result.jobs) {
    simulated.push_back(static_cast<double>(job.start - job.submit));
    if (job.recorded_wait >= 0) recorded.push_back(static_cast<double>(job.recorded_wait));
  }
  chart.series.push_back(WaitCdf("simulated", std::move(simulated)));
  if (!recorded.empty()) chart.series.push_back(WaitCdf("recorded", std::move(recorded)));
  return chart;
}

}  // namespace

Summary Summarize(const SimResult& result) {
  Summary summary;
  summary.jobs = static_cast<std::int64_t>(result.jobs.size());
  summary.skipped = result.skipped;
  summary.scheduler_seconds = result.scheduler_seconds;
  if (result.jobs.empty()) return summary;

  Time min_submit = result.jobs.front().submit, max_submit = min_submit;
  Time min_start = result.jobs.front().start, max_end = result.jobs.front().end;
  double work = 0;  // unit-seconds; double because the sum over a long trace can pass 2^63
  double bsld_sum = 0, jct_sum = 0, recorded_bsld_sum = 0;
  std::vector<double> waits, recorded_waits;
  waits.reserve(result.jobs.size());
  for (const JobRecord& job : result.jobs) {
    min_submit = std::min(min_submit, job.submit);
    max_submit = std::max(max_submit, job.submit);
    min_start = std::min(min_start, job.start);
    max_end = std::max(max_end, job.end);
    double run = RunSeconds(job);
    double wait = static_cast<double>(job.start - job.submit);
    work += run * static_cast<double>(job.units);
    waits.push_back(wait);
    bsld_sum += BoundedSlowdown(wait, run);
    jct_sum += static_cast<double>(job.end - job.submit);
    if (job.recorded_wait >= 0) {
      recorded_waits.push_back(static_cast<double>(job.recorded_wait));
      recorded_bsld_sum += BoundedSlowdown(static_cast<double>(job.recorded_wait), run);
    }
  }

  const double capacity = static_cast<double>(result.capacity_units);
  summary.makespan_s = static_cast<double>(max_end - min_submit);
  summary.utilization = Ratio(work, capacity * static_cast<double>(max_end - min_start));
  summary.offered_load = Ratio(work, capacity * static_cast<double>(max_submit - min_submit));

  // Waits are whole seconds: their sum is exact in any order.
  double wait_sum = 0;
  for (double w : waits) wait_sum += w;
  summary.mean_wait_s = Mean(wait_sum, waits.size());
  const auto ranks = NearestRanks(waits, std::array{50.0, 95.0, 99.0, 100.0});
  summary.p50_wait_s = ranks[0];
  summary.p95_wait_s = ranks[1];
  summary.p99_wait_s = ranks[2];
  summary.max_wait_s = ranks[3];
  summary.mean_bsld = Mean(bsld_sum, result.jobs.size());
  summary.mean_jct_s = Mean(jct_sum, result.jobs.size());

  if (!recorded_waits.empty()) {
    summary.has_recorded = true;
    double recorded_sum = 0;
    for (double w : recorded_waits) recorded_sum += w;
    summary.recorded_mean_wait_s = Mean(recorded_sum, recorded_waits.size());
    const auto recorded = NearestRanks(recorded_waits, std::array{50.0, 95.0});
    summary.recorded_p50_wait_s = recorded[0];
    summary.recorded_p95_wait_s = recorded[1];
    summary.recorded_mean_bsld = Mean(recorded_bsld_sum, recorded_waits.size());
  }
  return summary;
}

std::int64_t NodeCount(const std::vector<NodeShapeCount>& shapes) {
  std::int64_t n = 0;
  for (const NodeShapeCount& s : shapes) n += s.count;
  return n;
}

// "240 nodes: 240 x 1 cpu", "1,152 nodes: 1,008 x 80 cpus + 144 x 88 cpus".
std::string DescribeMachine(const std::vector<NodeShapeCount>& shapes) {
  std::string out = fmt::format("{} nodes:", FormatNumber(NodeCount(shapes)));
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const NodeShapeCount& s = shapes[i];
    out += fmt::format("{} {} x {} cpu{}", i == 0 ? "" : " +", FormatNumber(s.count), s.cpus,
                       s.cpus == 1 ? "" : "s");
    if (s.gpus > 0) out += fmt::format(" {} gpu{}", s.gpus, s.gpus == 1 ? "" : "s");
  }
  return out;
}

std::string FormatSummary(const SimResult& result, const Summary& summary) {
  std::string out;
  if (!result.policy.empty()) {
    out += Line("policy", fmt::format("{} on {} {}", result.policy,
                                      FormatNumber(result.capacity_units), result.unit_name));
  }
  if (!result.node_shapes.empty()) out += Line("machine", DescribeMachine(result.node_shapes));
  std::string jobs =
      fmt::format("{}   skipped {}", FormatNumber(summary.jobs), FormatNumber(summary.skipped));
  if (result.never_started > 0) {
    jobs += fmt::format("   never started {}", FormatNumber(result.never_started));
  }
  out += Line("jobs", jobs);
  out += Line("makespan", FormatDuration(summary.makespan_s));
  out += Line("utilization", fmt::format("{}   offered load {}", Percent(summary.utilization),
                                         Percent(summary.offered_load)));
  out += Line("wait", DurationColumns({{"mean", summary.mean_wait_s},
                                       {"p50", summary.p50_wait_s},
                                       {"p95", summary.p95_wait_s},
                                       {"p99", summary.p99_wait_s},
                                       {"max", summary.max_wait_s}}));
  out += Line("mean bsld", fmt::format("{:.2f}", summary.mean_bsld));
  out += Line("mean JCT", FormatDuration(summary.mean_jct_s));
  out += Line("scheduler", fmt::format("{:.3f} s in {} plan calls", summary.scheduler_seconds,
                                       FormatNumber(result.plan_calls)));
  if (summary.has_recorded) {
    // Same columns as the "wait" line so the trace's own schedule reads beside the simulated one.
    out += Line("recorded schedule", DurationColumns({{"mean", summary.recorded_mean_wait_s},
                                                      {"p50", summary.recorded_p50_wait_s},
                                                      {"p95", summary.recorded_p95_wait_s}}) +
                                         fmt::format("bsld {:.2f}", summary.recorded_mean_bsld));
  }
  return out;
}

std::string SummaryJson(const SimResult& result, const Summary& summary) {
  // ordered_json keeps the keys in this order, so files diff well between runs.
  nlohmann::ordered_json json = {
      {"policy", result.policy},
      {"jobs", summary.jobs},
      {"skipped", summary.skipped},
      {"never_started", result.never_started},
      {"capacity_units", result.capacity_units},
      {"unit", result.unit_name},
      {"nodes", NodeCount(result.node_shapes)},
      {"makespan_s", summary.makespan_s},
      {"utilization", summary.utilization},
      {"offered_load", summary.offered_load},
      {"mean_wait_s", summary.mean_wait_s},
      {"p50_wait_s", summary.p50_wait_s},
      {"p95_wait_s", summary.p95_wait_s},
      {"p99_wait_s", summary.p99_wait_s},
      {"max_wait_s", summary.max_wait_s},
      {"mean_bsld", summary.mean_bsld},
      {"mean_jct_s", summary.mean_jct_s},
      {"scheduler_seconds", summary.scheduler_seconds},
      {"plan_calls", result.plan_calls},
  };
  nlohmann::ordered_json shapes = nlohmann::ordered_json::array();
  for (const NodeShapeCount& s : result.node_shapes)
    shapes.push_back({{"count", s.count}, {"cpus", s.cpus}, {"gpus", s.gpus}});
  json["node_shapes"] = std::move(shapes);
  if (summary.has_recorded) {
    json["recorded"] = {{"mean_wait_s", summary.recorded_mean_wait_s},
                        {"p50_wait_s", summary.recorded_p50_wait_s},
                        {"p95_wait_s", summary.recorded_p95_wait_s},
                        {"mean_bsld", summary.recorded_mean_bsld}};
  }
  // Replace invalid UTF-8 (a user name from a trace) rather than throwing.
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Status WriteJobsCsv(const SimResult& result, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return IoError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  }
  std::fputs("id,user,submit,start,end,wait,nodes,gpus,cpus\n", file);
  for (const JobRecord& job : result.jobs) {
    std::string row =
        fmt::format("{},{},{},{},{},{},{},{},{}\n", job.id, CsvField(job.user), job.submit,
                    job.start, job.end, job.start - job.submit, job.nodes, job.gpus, job.cpus);
    std::fputs(row.c_str(), file);
  }
  // A full disk shows up in the stream's error flag or in the final flush at fclose.
  bool failed = std::ferror(file) != 0;
  int saved_errno = errno;
  if (std::fclose(file) != 0 && !failed) {
    failed = true;
    saved_errno = errno;
  }
  if (failed) return IoError(fmt::format("cannot write {}: {}", path, std::strerror(saved_errno)));
  return Status::Ok();
}

Status WritePlots(const SimResult& result, const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return IoError(fmt::format("cannot create plot directory {}: {}", dir, error.message()));
  }
  const std::filesystem::path base(dir);
  LOCKSTEP_RETURN_IF_ERROR(WriteSvg(UtilizationChart(result), (base / "utilization.svg").string()));
  LOCKSTEP_RETURN_IF_ERROR(WriteSvg(QueueChart(result), (base / "queue.svg").string()));
  LOCKSTEP_RETURN_IF_ERROR(WriteSvg(WaitCdfChart(result), (base / "wait_cdf.svg").string()));
  return Status::Ok();
}

}  // namespace lockstep::sim
