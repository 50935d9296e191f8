// sreport cluster utilization and user top: Slurm 22.05's text over a day with known jobs and a
// node drained for two hours, the window rules, -t, -P, format= and the conditions.
#include "cli/format/sreport.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace lockstep::cli {
namespace {

const bool kUtc = [] {
  setenv("TZ", "UTC", 1);
  tzset();
  return true;
}();

Time At(int mday, int hour, int min = 0) {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 11;
  tm.tm_mday = mday;
  tm.tm_hour = hour;
  tm.tm_min = min;
  return static_cast<Time>(timegm(&tm));
}

nlohmann::json Job(const char* user, const char* account, int cpus, Time start, Time end) {
  return {{"job_id", 1},        {"user", user},
          {"account", account}, {"cpus", cpus},
          {"gpus", cpus / 4},   {"mem_mb", 1024},
          {"node_count", 1},    {"start_time", start},
          {"end_time", end},    {"state", end ? "COMPLETED" : "RUNNING"}};
}

// Two 16-CPU nodes; on Dec 1: alice 4 CPUs 01:00-03:00 (480 CPU-minutes), bob 8 CPUs from
// Nov 30 23:30 to 00:30 (240 inside the day), carol 2 CPUs from 23:00, still running (120);
// node2 drained 10:00-12:00 (16 x 120 = 1920 CPU-minutes down).
struct Day {
  nlohmann::json jobs =
      nlohmann::json::array({Job("alice", "llm", 4, At(1, 1), At(1, 3)),
                             Job("bob", "vision", 8, At(0, 23, 30), At(1, 0, 30)),
                             Job("carol", "llm", 2, At(1, 23), 0), Job("dave", "llm", 2, 0, 0)});
  nlohmann::json nodes = nlohmann::json::array(
      {{{"name", "node1"}, {"state", "idle"}, {"cpus", 16}, {"gpus", 4}, {"mem_mb", 64000}},
       {{"name", "node2"}, {"state", "idle"}, {"cpus", 16}, {"gpus", 4}, {"mem_mb", 64000}}});
  nlohmann::json events =
      nlohmann::json::array({{{"kind", "node_drained"}, {"node", "node2"}, {"time", At(1, 10)}},
                             {{"kind", "started"}, {"job_id", 1}, {"time", At(1, 11)}},
                             {{"kind", "node_resumed"}, {"node", "node2"}, {"time", At(1, 12)}}});
  SreportOptions options;
  Day() {
    options.now = At(2, 12);
    options.window = MakeSreportWindow(At(1, 0), At(2, 0), options.now);
    options.proper_name = [](const std::string& login) {
      return login == "alice" ? std::string("Alice Liddell") : std::string();
    };
  }
};

const char kRule[] =
    "--------------------------------------------------------------------------------\n";

TEST(SreportWindow, RoundsToTheNearestHourAndNeverPastNow) {
  const Time now = At(2, 12, 40);
  SreportWindow w = MakeSreportWindow(At(1, 0, 29), At(1, 23, 31), now);
  EXPECT_EQ(w.start, At(1, 0));
  EXPECT_EQ(w.end, At(2, 0));
  w = MakeSreportWindow(0, 0, now);  // yesterday
  EXPECT_EQ(w.start, At(1, 0));
  EXPECT_EQ(w.end, At(2, 0));
  w = MakeSreportWindow(At(2, 12), At(3, 0), now);  // the end is now, rounded up
  EXPECT_EQ(w.end, At(2, 13));
  w = MakeSreportWindow(At(2, 12, 10), At(2, 12, 20), now);  // at least an hour
  EXPECT_EQ(w.end - w.start, 3600);
}

TEST(SreportCluster, UtilizationAsSlurmPrintsIt) {
  Day d;
  Result<std::string> text = FormatClusterUtilization(d.jobs, d.nodes, d.events, d.options);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  std::string want = std::string(kRule) +
                     "Cluster Utilization 2026-12-01T00:00:00 - 2026-12-01T23:59:59\n"
                     "Usage reported in CPU Minutes\n" +
                     kRule +
                     "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n"
                     "--------- -------- -------- -------- -------- -------- -------- \n" +
                     fmt::format("{:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} \n", "lockstep", 840,
                                 1920, 0, 46080 - 840 - 1920, 0, 46080);
  EXPECT_EQ(*text, want);
}

TEST(SreportCluster, SecondsPercentParsableAndFormat) {
  Day d;
  d.options.time = SreportTime::kSeconds;
  d.options.parsable = 2;
  d.options.noheader = true;
  EXPECT_EQ(*FormatClusterUtilization(d.jobs, d.nodes, d.events, d.options),
            "lockstep|50400|115200|0|2599200|0|2764800\n");
  d.options.time = SreportTime::kPercent;
  d.options.parsable = 1;
  d.options.format = {"Cl", "al", "rep"};
  EXPECT_EQ(*FormatClusterUtilization(d.jobs, d.nodes, d.events, d.options),
            "lockstep|1.82%|100.00%|\n");
  d.options.format = {"Cluster", "Bogus"};
  Result<std::string> bad = FormatClusterUtilization(d.jobs, d.nodes, d.events, d.options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Unknown field 'Bogus'"), std::string::npos);
}

TEST(SreportCluster, TresListAddsTheTresNameColumn) {
  Day d;
  d.options.tres = {"cpu", "gres/gpu"};
  d.options.noheader = true;
  d.options.time = SreportTime::kSeconds;
  d.options.parsable = 2;
  // GPUs: alice 1 x 7200, bob 2 x 1800, carol 0; node2's 4 GPUs down 7200 s.
  EXPECT_EQ(*FormatClusterUtilization(d.jobs, d.nodes, d.events, d.options),
            "lockstep|cpu|50400|115200|0|2599200|0|2764800\n"
            "lockstep|gres/gpu|10800|28800|0|651600|0|691200\n");
  d.options.tres = {"licenses"};
  EXPECT_FALSE(FormatClusterUtilization(d.jobs, d.nodes, d.events, d.options).ok());
}

TEST(SreportCluster, ADownNodeWithoutEventsCountsFromItsReasonTime) {
  Day d;
  d.events = nlohmann::json::array();
  d.nodes[1]["state"] = "down*";
  d.nodes[1]["reason_time"] = At(1, 20);
  ClusterUsage u = ComputeClusterUsage("cpu", d.jobs, d.nodes, d.events, d.options);
  EXPECT_EQ(u.down, 16 * 4 * 3600);
  EXPECT_EQ(u.alloc + u.down + u.idle, u.reported);
}

TEST(SreportUser, TopAsSlurmPrintsIt) {
  Day d;
  d.options.top_count = 2;
  Result<std::string> text = FormatUserTop(d.jobs, d.nodes, d.options);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  std::string want = std::string(kRule) +
                     "Top 2 Users 2026-12-01T00:00:00 - 2026-12-01T23:59:59 (86400 secs)\n"
                     "Usage reported in CPU Minutes\n" +
                     kRule +
                     "  Cluster     Login     Proper Name         Account     Used   Energy \n"
                     "--------- --------- --------------- --------------- -------- -------- \n"
                     " lockstep     alice   Alice Liddell             llm      480        0 \n"
                     " lockstep       bob                          vision      240        0 \n";
  EXPECT_EQ(*text, want);
}

TEST(SreportUser, ConditionsAndGroupedAccounts) {
  Day d;
  d.jobs.push_back(Job("alice", "vision", 1, At(1, 5), At(1, 6)));
  d.options.noheader = true;
  d.options.parsable = 2;
  d.options.format = {"Login", "Account", "Used"};
  EXPECT_EQ(*FormatUserTop(d.jobs, d.nodes, d.options),
            "alice|llm|480\nbob|vision|240\ncarol|llm|120\nalice|vision|60\n");
  d.options.group_accounts = true;
  EXPECT_EQ(*FormatUserTop(d.jobs, d.nodes, d.options),
            "alice|llm, vision|540\nbob|vision|240\ncarol|llm|120\n");
  d.options.users = {"bob", "carol"};
  EXPECT_EQ(*FormatUserTop(d.jobs, d.nodes, d.options), "bob|vision|240\ncarol|llm|120\n");
  d.options.users.clear();
  d.options.accounts = {"llm"};
  d.options.group_accounts = false;
  EXPECT_EQ(*FormatUserTop(d.jobs, d.nodes, d.options), "alice|llm|480\ncarol|llm|120\n");
}

TEST(SreportTimeFormat, ParsesSlurmsWords) {
  EXPECT_EQ(*ParseSreportTime("minutes"), SreportTime::kMinutes);
  EXPECT_EQ(*ParseSreportTime("h"), SreportTime::kHours);
  EXPECT_EQ(*ParseSreportTime("Percent"), SreportTime::kPercent);
  EXPECT_EQ(*ParseSreportTime("MinPer"), SreportTime::kMinPer);
  EXPECT_FALSE(ParseSreportTime("fortnights").ok());
}

}  // namespace
}  // namespace lockstep::cli
