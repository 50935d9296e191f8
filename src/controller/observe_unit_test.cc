// The pieces of observability on their own: the event log (order, resumable positions, drops,
// a wait answered by an append), routes folded for statistics, GPU classes, and the text
// exposition's escaping.
#include <gtest/gtest.h>

#include <future>

#include "controller/event_log.h"
#include "controller/exposition.h"
#include "controller/sched_stats.h"

namespace lockstep::controller {
namespace {

EventBatch ReadNow(EventLog& log, std::uint64_t from, std::size_t max = 100) {
  std::promise<EventBatch> got;
  log.Read(from, max, std::chrono::milliseconds(0), nullptr,
           [&](EventBatch b) { got.set_value(std::move(b)); });
  return got.get_future().get();
}

TEST(EventLog, ReadsResumeAfterTheLastSeenAndSayWhatWasDropped) {
  EventLog log(3);
  for (int i = 1; i <= 5; ++i) EXPECT_EQ(log.Append({{"kind", "submitted"}, {"n", i}}), i);
  EventBatch all = ReadNow(log, 0);  // the oldest kept: 3, 4, 5
  ASSERT_EQ(all.events.size(), 3u);
  EXPECT_EQ(all.events[0]["seq"], 3);
  EXPECT_EQ(all.next, 6u);
  EXPECT_EQ(all.dropped, 0u);
  EventBatch late = ReadNow(log, 2);  // 2 is gone
  EXPECT_EQ(late.dropped, 1u);
  EXPECT_EQ(late.events.front()["seq"], 3);
  EventBatch some = ReadNow(log, 4, 1);
  ASSERT_EQ(some.events.size(), 1u);
  EXPECT_EQ(some.next, 5u);
  EXPECT_TRUE(ReadNow(log, 6).events.empty());
}

TEST(EventLog, AWaitingReaderIsAnsweredByTheNextEventItMaySee) {
  EventLog log(10);
  std::promise<EventBatch> got;
  // The filter hides node events from this reader: it waits past them.
  log.Read(
      1, 10, std::chrono::seconds(30),
      [](nlohmann::json& e) { return e.value("kind", "") != "node_up"; },
      [&](EventBatch b) { got.set_value(std::move(b)); });
  log.Append({{"kind", "node_up"}});
  log.Append({{"kind", "ended"}});
  EventBatch b = got.get_future().get();
  ASSERT_EQ(b.events.size(), 1u);
  EXPECT_EQ(b.events[0]["kind"], "ended");
  EXPECT_EQ(b.next, 3u);
}

TEST(EventLog, AWaitEndsEmptyAtItsDeadlineAndOnDestruction) {
  std::promise<EventBatch> timed, stopped;
  {
    EventLog log(10);
    log.Read(1, 10, std::chrono::milliseconds(1), nullptr,
             [&](EventBatch b) { timed.set_value(std::move(b)); });
    EXPECT_TRUE(timed.get_future().get().events.empty());
    log.Read(1, 10, std::chrono::seconds(30), nullptr,
             [&](EventBatch b) { stopped.set_value(std::move(b)); });
  }
  EXPECT_TRUE(stopped.get_future().get().events.empty());
}

TEST(RouteOf, IdsAndNamesAreFoldedAndUnknownPathsAreOther) {
  EXPECT_EQ(RouteOf("GET", "/api/v1/jobs/42"), "GET /api/v1/jobs/{id}");
  EXPECT_EQ(RouteOf("POST", "/api/v1/jobs/42/cancel?x=1"), "POST /api/v1/jobs/{id}/cancel");
  EXPECT_EQ(RouteOf("POST", "/api/v1/nodes/gpu-a17/state"), "POST /api/v1/nodes/{name}/state");
  EXPECT_EQ(RouteOf("GET", "/metrics/jobs-users-accts"), "GET /metrics/jobs-users-accts");
  EXPECT_EQ(RouteOf("GET", "/api/v1/jobs/%2e%2e/x"), "GET other");
  EXPECT_EQ(RouteOf("GET", "/etc/passwd"), "GET other");
}

TEST(SchedStats, GpuClassesArePowersOfTwo) {
  EXPECT_EQ(SchedStats::GpuClass(0), "0");
  EXPECT_EQ(SchedStats::GpuClass(1), "1");
  EXPECT_EQ(SchedStats::GpuClass(2), "2");
  EXPECT_EQ(SchedStats::GpuClass(3), "4");
  EXPECT_EQ(SchedStats::GpuClass(8), "8");
  EXPECT_EQ(SchedStats::GpuClass(9), "16");
  EXPECT_EQ(SchedStats::GpuClass(64), "64");
  EXPECT_EQ(SchedStats::GpuClass(65), "64+");
}

TEST(Exposition, LabelValuesAreEscapedAndHistogramsCumulative) {
  Exposition x;
  x.Family("m", "gauge", "help");
  x.Sample("m", {"user", "a\"b\\c\nd"}, std::int64_t{3});
  EXPECT_EQ(x.text(), "# HELP m help\n# TYPE m gauge\nm{user=\"a\\\"b\\\\c\\nd\"} 3\n");
  LatencyHistogram h;
  h.RecordSeconds(0.00005);
  h.RecordSeconds(0.3);
  h.RecordSeconds(100);
  Exposition y;
  y.Histogram("h", {{"pass", "full"}}, h.Read());
  const std::string& t = y.text();
  EXPECT_NE(t.find("h_bucket{pass=\"full\",le=\"0.0001\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("h_bucket{pass=\"full\",le=\"0.5\"} 2\n"), std::string::npos) << t;
  EXPECT_NE(t.find("h_bucket{pass=\"full\",le=\"+Inf\"} 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("h_count{pass=\"full\"} 3\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace lockstep::controller
