#include "sim/report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>
#include <vector>

#include "sim/svg_chart.h"

namespace lockstep::sim {
namespace {

namespace fs = std::filesystem;

JobRecord Job(JobId id, Time submit, Time start, Time end, std::int64_t units,
              Seconds recorded_wait = -1) {
  JobRecord job;
  job.id = id;
  job.user = "u" + std::to_string(id);
  job.submit = submit;
  job.start = start;
  job.end = end;
  job.nodes = 1;
  job.gpus = static_cast<std::int32_t>(units);
  job.cpus = static_cast<std::int32_t>(8 * units);
  job.units = units;
  job.recorded_wait = recorded_wait;
  return job;
}

// Three jobs on 4 GPUs, worked by hand:
//   id submit start end units  wait run  bsld                     jct  recorded wait / bsld
//   1     0     0  100    2      0  100  max(1, 100/100)   = 1    100  20 -> 120/100 = 1.2
//   2    10    50   56    1     40    6  (40+6)/max(6,10)  = 4.6   46  unknown
//   3    30   110  310    4     80  200  280/200           = 1.4  280  100 -> 300/200 = 1.5
// work = 100*2 + 6*1 + 200*4 = 1006 GPU-seconds.
SimResult ThreeJobs() {
  SimResult result;
  result.jobs = {Job(1, 0, 0, 100, 2, 20), Job(2, 10, 50, 56, 1), Job(3, 30, 110, 310, 4, 100)};
  result.samples = {{0, 2, 0, 1},  {10, 2, 1, 1},  {30, 2, 2, 1},  {50, 3, 1, 2},
                    {56, 2, 1, 1}, {100, 0, 1, 0}, {110, 4, 0, 1}, {310, 0, 0, 0}};
  result.skipped = 2;
  result.never_started = 1;
  result.capacity_units = 4;
  result.unit_name = "gpus";
  result.scheduler_seconds = 0.25;
  result.plan_calls = 6;
  result.policy = "easy";
  return result;
}

std::vector<fs::path>& MadeTestDirs() {
  static std::vector<fs::path> dirs;
  return dirs;
}

// Removes every directory TestDir() made once all the tests have run.
class RemoveTestDirs : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ignored;
    for (const fs::path& dir : MadeTestDirs()) fs::remove_all(dir, ignored);
  }
};
[[maybe_unused]] ::testing::Environment* const kRemoveTestDirs =
    ::testing::AddGlobalTestEnvironment(new RemoveTestDirs);

// A fresh directory for one test, removed first in case an earlier run left it behind.
fs::path TestDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  fs::path dir = fs::path(::testing::TempDir()) /
                 (std::string("sim_report_") + info->name() + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  MadeTestDirs().push_back(dir);
  return dir;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SummarizeTest, ThreeJobsByHand) {
  Summary s = Summarize(ThreeJobs());
  EXPECT_EQ(s.jobs, 3);
  EXPECT_EQ(s.skipped, 2);
  EXPECT_DOUBLE_EQ(s.makespan_s, 310);                  // last end 310 - first submit 0
  EXPECT_DOUBLE_EQ(s.utilization, 1006.0 / (4 * 310));  // span of starts to ends: 0..310
  EXPECT_DOUBLE_EQ(s.offered_load, 1006.0 / (4 * 30));  // span of submits: 0..30
  EXPECT_DOUBLE_EQ(s.mean_wait_s, 40);                  // (0 + 40 + 80) / 3
  EXPECT_DOUBLE_EQ(s.p50_wait_s, 40);                   // rank ceil(1.5) = 2
  EXPECT_DOUBLE_EQ(s.p95_wait_s, 80);                   // rank ceil(2.85) = 3
  EXPECT_DOUBLE_EQ(s.p99_wait_s, 80);
  EXPECT_DOUBLE_EQ(s.max_wait_s, 80);
  EXPECT_DOUBLE_EQ(s.mean_bsld, (1 + 4.6 + 1.4) / 3);
  EXPECT_DOUBLE_EQ(s.mean_jct_s, (100.0 + 46 + 280) / 3);
  EXPECT_DOUBLE_EQ(s.scheduler_seconds, 0.25);
}

TEST(SummarizeTest, RecordedScheduleUsesOnlyKnownWaits) {
  Summary s = Summarize(ThreeJobs());
  ASSERT_TRUE(s.has_recorded);
  EXPECT_DOUBLE_EQ(s.recorded_mean_wait_s, 60);  // (20 + 100) / 2
  EXPECT_DOUBLE_EQ(s.recorded_p50_wait_s, 20);   // rank ceil(1.0) = 1
  EXPECT_DOUBLE_EQ(s.recorded_p95_wait_s, 100);  // rank ceil(1.9) = 2
  EXPECT_DOUBLE_EQ(s.recorded_mean_bsld, (1.2 + 1.5) / 2);
}

TEST(SummarizeTest, NoRecordedWaits) {
  SimResult result = ThreeJobs();
  for (JobRecord& job : result.jobs) job.recorded_wait = -1;
  Summary s = Summarize(result);
  EXPECT_FALSE(s.has_recorded);
  EXPECT_EQ(s.recorded_mean_wait_s, 0);
}

TEST(SummarizeTest, BoundedSlowdownUsesTenSecondBound) {
  SimResult result;
  result.capacity_units = 1;
  result.jobs = {Job(1, 0, 60, 61, 1)};  // 1 s job that waited 60 s: (60+1)/10, not 61
  EXPECT_DOUBLE_EQ(Summarize(result).mean_bsld, 6.1);
  result.jobs = {Job(1, 0, 0, 1, 1)};  // no wait: never below 1
  EXPECT_DOUBLE_EQ(Summarize(result).mean_bsld, 1);
}

TEST(SummarizeTest, NearestRankPercentiles) {
  SimResult result;
  result.capacity_units = 1;
  // Waits 1..20 s, given out of order.
  for (int i = 20; i >= 1; --i) result.jobs.push_back(Job(i, 0, i, i + 100, 1));
  Summary s = Summarize(result);
  EXPECT_DOUBLE_EQ(s.p50_wait_s, 10);  // rank 10 of 20
  EXPECT_DOUBLE_EQ(s.p95_wait_s, 19);  // rank 19 exactly, not 20 from 0.95 * 20 rounding up
  EXPECT_DOUBLE_EQ(s.p99_wait_s, 20);  // rank ceil(19.8) = 20
  EXPECT_DOUBLE_EQ(s.max_wait_s, 20);
  EXPECT_DOUBLE_EQ(s.mean_wait_s, 10.5);
}

TEST(SummarizeTest, ZeroSpansGiveZeroNotInfinity) {
  SimResult result;
  result.capacity_units = 4;
  result.jobs = {Job(1, 5, 5, 5, 1), Job(2, 5, 5, 5, 2)};  // one submit time, no run time
  Summary s = Summarize(result);
  EXPECT_EQ(s.offered_load, 0);
  EXPECT_EQ(s.utilization, 0);
  result.capacity_units = 0;
  EXPECT_EQ(Summarize(result).utilization, 0);
}

TEST(SummarizeTest, EmptyResult) {
  SimResult result;
  result.skipped = 7;
  Summary s = Summarize(result);
  EXPECT_EQ(s.jobs, 0);
  EXPECT_EQ(s.skipped, 7);
  EXPECT_EQ(s.mean_wait_s, 0);
  EXPECT_EQ(s.makespan_s, 0);
  EXPECT_FALSE(s.has_recorded);
}

TEST(FormatSummaryTest, HumanLines) {
  SimResult result = ThreeJobs();
  std::string text = FormatSummary(result, Summarize(result));
  EXPECT_NE(text.find("policy             easy on 4 gpus"), std::string::npos) << text;
  EXPECT_NE(text.find("jobs               3   skipped 2   never started 1"), std::string::npos)
      << text;
  EXPECT_NE(text.find("makespan           00:05:10"), std::string::npos) << text;
  // 1006 / 1240 = 81.13%; 1006 / 120 = 838.33%.
  EXPECT_NE(text.find("utilization        81.1%   offered load 838.3%"), std::string::npos) << text;
  EXPECT_NE(text.find("mean 00:00:40"), std::string::npos) << text;
  EXPECT_NE(text.find("max 00:01:20"), std::string::npos) << text;
  EXPECT_NE(text.find("mean bsld          2.33"), std::string::npos) << text;
  EXPECT_NE(text.find("mean JCT           00:02:22"), std::string::npos) << text;
  EXPECT_NE(text.find("6 plan calls"), std::string::npos) << text;
  EXPECT_NE(text.find("recorded schedule  mean 00:01:00"), std::string::npos) << text;
  EXPECT_NE(text.find("bsld 1.35"), std::string::npos) << text;
}

TEST(FormatSummaryTest, OmitsWhatDoesNotApply) {
  SimResult result = ThreeJobs();
  result.never_started = 0;
  for (JobRecord& job : result.jobs) job.recorded_wait = -1;
  result.jobs.back().end = 3 * 86400 + 3661;  // a makespan over a day shows the day
  std::string text = FormatSummary(result, Summarize(result));
  EXPECT_EQ(text.find("never started"), std::string::npos) << text;
  EXPECT_EQ(text.find("recorded"), std::string::npos) << text;
  EXPECT_NE(text.find("3-01:01:01"), std::string::npos) << text;
}

TEST(SummaryJsonTest, SaysHowTheMachineWasModelled) {
  SimResult result = ThreeJobs();
  result.node_shapes = {{2, 80, 0}, {1, 88, 4}};
  nlohmann::json json = nlohmann::json::parse(SummaryJson(result, Summarize(result)));
  EXPECT_EQ(json["nodes"], 3);
  ASSERT_EQ(json["node_shapes"].size(), 2u);
  EXPECT_EQ(json["node_shapes"][1]["count"], 1);
  EXPECT_EQ(json["node_shapes"][1]["cpus"], 88);
  EXPECT_EQ(json["node_shapes"][1]["gpus"], 4);
  EXPECT_EQ(DescribeMachine(result.node_shapes), "3 nodes: 2 x 80 cpus + 1 x 88 cpus 4 gpus");
  EXPECT_NE(FormatSummary(result, Summarize(result)).find("3 nodes: 2 x 80 cpus"),
            std::string::npos);
}

TEST(SummaryJsonTest, KeysAndValues) {
  SimResult result = ThreeJobs();
  Summary summary = Summarize(result);
  nlohmann::json json = nlohmann::json::parse(SummaryJson(result, summary));
  std::set<std::string> keys;
  for (const auto& item : json.items()) keys.insert(item.key());
  EXPECT_EQ(keys, (std::set<std::string>{"policy",
                                         "jobs",
                                         "skipped",
                                         "never_started",
                                         "capacity_units",
                                         "unit",
                                         "makespan_s",
                                         "utilization",
                                         "offered_load",
                                         "mean_wait_s",
                                         "p50_wait_s",
                                         "p95_wait_s",
                                         "p99_wait_s",
                                         "max_wait_s",
                                         "mean_bsld",
                                         "mean_jct_s",
                                         "scheduler_seconds",
                                         "plan_calls",
                                         "recorded",
                                         "nodes",
                                         "node_shapes"}));
  EXPECT_EQ(json["policy"], "easy");
  EXPECT_EQ(json["jobs"], 3);
  EXPECT_EQ(json["skipped"], 2);
  EXPECT_EQ(json["never_started"], 1);
  EXPECT_EQ(json["capacity_units"], 4);
  EXPECT_EQ(json["unit"], "gpus");
  EXPECT_EQ(json["plan_calls"], 6);
  EXPECT_DOUBLE_EQ(json["makespan_s"].get<double>(), 310);
  EXPECT_DOUBLE_EQ(json["utilization"].get<double>(), summary.utilization);
  EXPECT_DOUBLE_EQ(json["offered_load"].get<double>(), summary.offered_load);
  EXPECT_DOUBLE_EQ(json["mean_wait_s"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(json["p50_wait_s"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(json["p95_wait_s"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(json["p99_wait_s"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(json["max_wait_s"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(json["mean_bsld"].get<double>(), 7.0 / 3);
  EXPECT_DOUBLE_EQ(json["mean_jct_s"].get<double>(), summary.mean_jct_s);
  EXPECT_DOUBLE_EQ(json["scheduler_seconds"].get<double>(), 0.25);
  const nlohmann::json& recorded = json["recorded"];
  EXPECT_EQ(recorded.size(), 4u);
  EXPECT_DOUBLE_EQ(recorded["mean_wait_s"].get<double>(), 60);
  EXPECT_DOUBLE_EQ(recorded["p50_wait_s"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(recorded["p95_wait_s"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(recorded["mean_bsld"].get<double>(), 1.35);
}

TEST(SummaryJsonTest, NoRecordedObjectWithoutRecordedWaits) {
  SimResult result = ThreeJobs();
  for (JobRecord& job : result.jobs) job.recorded_wait = -1;
  nlohmann::json json = nlohmann::json::parse(SummaryJson(result, Summarize(result)));
  EXPECT_FALSE(json.contains("recorded"));
}

TEST(WriteJobsCsvTest, RowsAndQuoting) {
  SimResult result = ThreeJobs();
  result.jobs[1].user = "smith, j";
  result.jobs[2].user = "say \"hi\"";
  fs::path path = TestDir() / "jobs.csv";
  ASSERT_TRUE(WriteJobsCsv(result, path.string()).ok());
  EXPECT_EQ(ReadFile(path),
            "id,user,submit,start,end,wait,nodes,gpus,cpus\n"
            "1,u1,0,0,100,0,1,2,16\n"
            "2,\"smith, j\",10,50,56,40,1,1,8\n"
            "3,\"say \"\"hi\"\"\",30,110,310,80,1,4,32\n");
}

TEST(WriteJobsCsvTest, UnwritablePathIsAnIoErrorNamingThePath) {
  std::string path = (TestDir() / "no-such-dir" / "jobs.csv").string();
  Status status = WriteJobsCsv(ThreeJobs(), path);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(path), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("No such file"), std::string::npos) << status.ToString();
}

TEST(WritePlotsTest, WritesThreeStandaloneSvgs) {
  fs::path dir = TestDir() / "nested" / "plots";  // created, parents too
  ASSERT_TRUE(WritePlots(ThreeJobs(), dir.string()).ok());
  for (const char* name : {"utilization.svg", "queue.svg", "wait_cdf.svg"}) {
    std::string svg = ReadFile(dir / name);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << name;
    EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos) << name;
    EXPECT_NE(svg.find("<polyline"), std::string::npos) << name;
    EXPECT_NE(svg.find("</svg>\n"), std::string::npos) << name;
    EXPECT_EQ(svg.find("nan"), std::string::npos) << name;
  }
  EXPECT_NE(ReadFile(dir / "utilization.svg").find("busy gpus (% of 4)"), std::string::npos);
  std::string queue = ReadFile(dir / "queue.svg");
  EXPECT_NE(queue.find(">queued<"), std::string::npos);
  EXPECT_NE(queue.find(">running<"), std::string::npos);
  // With recorded waits the CDF compares both schedules.
  std::string cdf = ReadFile(dir / "wait_cdf.svg");
  EXPECT_NE(cdf.find(">recorded<"), std::string::npos);
}

TEST(WritePlotsTest, EmptyResultStillGivesValidFiles) {
  fs::path dir = TestDir();
  ASSERT_TRUE(WritePlots(SimResult{}, dir.string()).ok());
  std::string svg = ReadFile(dir / "queue.svg");
  EXPECT_NE(svg.find("no data"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

TEST(WritePlotsTest, DirectoryThatCannotBeCreatedIsNamed) {
  fs::path file = TestDir() / "a-file";
  std::ofstream(file) << "x";
  std::string dir = (file / "plots").string();
  Status status = WritePlots(ThreeJobs(), dir);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find(dir), std::string::npos) << status.ToString();
}

TEST(SvgChartTest, DownsampleKeepsPeaksEndsAndOrder) {
  std::vector<ChartPoint> points;
  for (int i = 0; i < 400000; ++i) points.push_back({double(i), double(i % 7)});
  points[123457].y = 1000;  // a single-sample peak
  points[301001].y = -50;   // and a single-sample trough
  std::vector<ChartPoint> kept = Downsample(points, 2000);
  EXPECT_LE(kept.size(), 2000u);
  EXPECT_GE(kept.size(), 1000u);
  EXPECT_EQ(kept.front().x, 0);
  EXPECT_EQ(kept.back().x, 399999);
  auto by_y = [](const ChartPoint& a, const ChartPoint& b) { return a.y < b.y; };
  EXPECT_EQ(std::max_element(kept.begin(), kept.end(), by_y)->x, 123457);
  EXPECT_EQ(std::min_element(kept.begin(), kept.end(), by_y)->x, 301001);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end(),
                             [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; }));
}

TEST(SvgChartTest, ShortSeriesUnchanged) {
  std::vector<ChartPoint> points = {{0, 1}, {1, 5}, {2, 3}};
  EXPECT_EQ(Downsample(points, 2000).size(), 3u);
}

TEST(SvgChartTest, LongSeriesIsDownsampledInTheFile) {
  Chart chart;
  chart.title = "busy";
  ChartSeries series{"s", {}, false};
  for (int i = 0; i < 100000; ++i) series.points.push_back({double(i), double(i % 10)});
  chart.series.push_back(series);
  std::string svg = RenderSvg(chart);
  std::size_t polyline = svg.find("points=\"");
  ASSERT_NE(polyline, std::string::npos);
  std::string coords = svg.substr(polyline, svg.find('"', polyline + 8) - polyline);
  EXPECT_LE(std::count(coords.begin(), coords.end(), ','), 2000);
}

TEST(SvgChartTest, EscapesTextAndPicksReadableTimeUnits) {
  Chart chart;
  chart.title = "<jobs> & \"waits\"";
  chart.x = {"time", AxisKind::kDuration, std::nullopt, std::nullopt};
  chart.y = {"count", AxisKind::kLinear, std::nullopt, std::nullopt};
  chart.series.push_back({"a<b", {{0, 0}, {20 * 86400.0, 12345}}, true});
  std::string svg = RenderSvg(chart);
  EXPECT_NE(svg.find("&lt;jobs&gt; &amp; &quot;waits&quot;"), std::string::npos);
  EXPECT_NE(svg.find(">a&lt;b<"), std::string::npos);
  EXPECT_NE(svg.find("time (days)"), std::string::npos);
  EXPECT_NE(svg.find(">10,000<"), std::string::npos);  // grouped tick labels

  chart.series[0].points = {{0, 0}, {90 * 60.0, 1}};
  EXPECT_NE(RenderSvg(chart).find("time (minutes)"), std::string::npos);
  chart.series[0].points = {{0, 0}, {30 * 3600.0, 1}};
  EXPECT_NE(RenderSvg(chart).find("time (hours)"), std::string::npos);
}

TEST(SvgChartTest, LogDurationTicks) {
  Chart chart;
  chart.x = {"wait", AxisKind::kLogDuration, std::nullopt, std::nullopt};
  chart.series.push_back({"", {{0, 0}, {5000, 1}}, true});
  std::string svg = RenderSvg(chart);
  for (const char* tick : {">1s<", ">1m<", ">1h<", ">10h<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find(">1d<"), std::string::npos);  // axis ends at the first tick past the data
}

TEST(SvgChartTest, FormatNumber) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(999), "999");
  EXPECT_EQ(FormatNumber(202876), "202,876");
  EXPECT_EQ(FormatNumber(-1234567.25, 2), "-1,234,567.25");
  EXPECT_EQ(FormatNumber(-0.01, 1), "0.0");
}

TEST(ProgressBarTest, LineLayout) {
  EXPECT_EQ(ProgressLine(84123, 202876),
            "[============>                 ]  41%  84,123/202,876 jobs");
  EXPECT_EQ(ProgressLine(0, 10), "[>                             ]   0%  0/10 jobs");
  EXPECT_EQ(ProgressLine(10, 10), "[==============================] 100%  10/10 jobs");
  EXPECT_EQ(ProgressLine(12, 10), ProgressLine(10, 10));  // overshoot is clamped
}

TEST(ProgressBarTest, SilentWhenStderrIsNotATerminal) {
  ::testing::internal::CaptureStderr();  // stderr becomes a file, so not a terminal
  {
    ProgressBar bar(1000);
    for (int i = 0; i <= 1000; ++i) bar.Update(i);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace lockstep::sim
