// End to end: squeue/sinfo/sacct --json read by a Python parser as a Slurm user's script would,
// and sreport cluster utilization and user top against the CPU time jobs of known size and
// length really used, through the real CLI against lockstepd and an agent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using namespace std::chrono_literals;

// Runs `command` through the shell; its stdout, and whether it exited 0.
std::pair<std::string, bool> Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return {"", false};
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  return {out, ::pclose(p) == 0};
}

// `<lockstep-slurm command> --json | python3 -c SCRIPT` against the cluster.
std::pair<std::string, bool> JsonThroughPython(const Cluster& c, const std::string& command,
                                               const std::string& script) {
  return Shell("LOCKSTEP_STATE_DIR=" + c.dir() + " " LOCKSTEP_BIN_DIR "/lockstep-slurm " + command +
               " --json | /usr/bin/python3 -c '" + script + "'");
}

TEST(SlurmJson, ParsersFindTheJobsAndNodesAsInSlurm) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"-n", "2", "-J", "probe", "--wrap", "sleep 300"});
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return c.Job(id).value("state", "") == "RUNNING"; }, 20s));
  const std::string user = c.Job(id).value("user", "");

  auto [out, ok] =
      JsonThroughPython(c, "squeue",
                        "import json,sys\n"
                        "d = json.load(sys.stdin)\n"
                        "assert d[\"meta\"][\"plugin\"][\"type\"] == \"openapi/v0.0.38\"\n"
                        "j = [j for j in d[\"jobs\"] if j[\"job_id\"] == " +
                            std::to_string(id) +
                            "][0]\n"
                            "print(j[\"job_id\"], j[\"job_state\"], j[\"partition\"], "
                            "j[\"user_name\"], j[\"node_count\"], "
                            "j[\"cpus\"], j[\"name\"], len(j))\n");
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out, std::to_string(id) + " RUNNING batch " + user + " 1 2 probe 111\n");

  std::tie(out, ok) =
      JsonThroughPython(c, "sinfo",
                        "import json,sys\n"
                        "d = json.load(sys.stdin)\n"
                        "print(sorted((n[\"name\"], n[\"cpus\"], n[\"alloc_cpus\"], n[\"state\"]) "
                        "for n in d[\"nodes\"]))\n");
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out, "[('node1', 16, 2, 'mixed'), ('node2', 16, 0, 'idle')]\n");

  // --yaml: the same documents as YAML, laid out as Slurm's (cli_slurm_yaml_test parses it).
  const std::string slurm = "LOCKSTEP_STATE_DIR=" + c.dir() + " " LOCKSTEP_BIN_DIR "/lockstep-slurm ";
  std::tie(out, ok) = Shell(slurm + "squeue --yaml");
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out.rfind("%YAML 1.1\n--- !!map\n!!str meta: !!map\n", 0), 0u) << out;
  EXPECT_NE(out.find("\n- !!map\n  !!str account: "), std::string::npos) << out;
  EXPECT_NE(out.find("\n  !!str job_id: !!int " + std::to_string(id) + "\n"), std::string::npos);
  EXPECT_NE(out.find("\n  !!str name: !!str probe\n"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 4), "...\n");
  std::tie(out, ok) = Shell(slurm + "sinfo --yaml");
  ASSERT_TRUE(ok) << out;
  EXPECT_NE(out.find("\n!!str nodes: !!seq\n- !!map\n"), std::string::npos) << out;

  ASSERT_EQ(c.Run({"scancel", std::to_string(id)}).exit_code, 0);
  ASSERT_EQ(c.WaitJob(id).value("state", ""), "CANCELLED");
  std::tie(out, ok) = JsonThroughPython(
      c, "sacct -j " + std::to_string(id),
      "import json,sys\n"
      "d = json.load(sys.stdin)\n"
      "j = d[\"jobs\"][0]\n"
      "print(j[\"job_id\"], j[\"state\"][\"current\"], j[\"user\"], "
      "j[\"steps\"][0][\"step\"][\"id\"], "
      "j[\"tres\"][\"allocated\"][0][\"type\"], j[\"tres\"][\"allocated\"][0][\"count\"], "
      "j[\"time\"][\"elapsed\"] >= 0)\n");
  ASSERT_TRUE(ok) << out;
  EXPECT_EQ(out, std::to_string(id) + " CANCELLED " + user + " batch cpu 2 True\n");
}

// The start of this hour, as `start=` takes it (local time).
std::string HourStart(std::time_t now, std::time_t* start) {
  std::tm tm{};
  ::localtime_r(&now, &tm);
  tm.tm_min = 0;
  tm.tm_sec = 0;
  tm.tm_isdst = -1;
  *start = std::mktime(&tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

long long Overlap(long long from, long long to, long long a, long long b) {
  return std::max(0LL, std::min(to, b) - std::max(from, a));
}

TEST(Sreport, AllocatedAndUsedAreTheCpuTimeJobsUsed) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  std::time_t hour = 0;
  const std::string start = HourStart(std::time(nullptr), &hour);
  unsigned long long a = Submit(c, {"-n", "3", "--wrap", "sleep 2"});
  unsigned long long b = Submit(c, {"-n", "5", "--wrap", "sleep 3"});
  ASSERT_NE(a, 0u);
  ASSERT_NE(b, 0u);
  nlohmann::json ja = c.WaitJob(a, 30), jb = c.WaitJob(b, 30);
  ASSERT_EQ(ja.value("state", ""), "COMPLETED") << ja.dump();
  ASSERT_EQ(jb.value("state", ""), "COMPLETED") << jb.dump();
  EXPECT_EQ(ja.value("cpus", 0), 3);
  EXPECT_EQ(jb.value("cpus", 0), 5);
  // The window is this hour ([start, start + 1h): the end, capped at now, rounds to an hour).
  long long used = 0;
  for (const nlohmann::json* j : {&ja, &jb})
    used += j->value("cpus", 0LL) *
            Overlap(j->value("start_time", 0LL), j->value("end_time", 0LL), hour, hour + 3600);
  EXPECT_GE(used, 3 * 2 + 5 * 3) << "each ran at least as long as it slept";
  const std::string user = ja.value("user", "");

  CommandResult r = c.Run({"sreport", "-t", "seconds", "-P", "-n", "cluster", "utilization",
                           "start=" + start, "end=now+2hours"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Cluster|Allocated|Down|PLND Down|Idle|Planned|Reported: two idle 16-CPU nodes besides.
  long long alloc = 0, down = -1, pdown = -1, idle = -1, planned = -1, reported = -1;
  char cluster[64] = {0};
  ASSERT_EQ(std::sscanf(r.out.c_str(), "%63[^|]|%lld|%lld|%lld|%lld|%lld|%lld", cluster, &alloc,
                        &down, &pdown, &idle, &planned, &reported),
            7)
      << r.out;
  EXPECT_STREQ(cluster, "lockstep");
  EXPECT_EQ(alloc, used) << r.out;
  EXPECT_EQ(down, 0);
  EXPECT_EQ(alloc + down + pdown + idle + planned, reported);

  r = c.Run({"sreport", "-P", "-n", "-t", "seconds", "user", "top", "start=" + start,
             "end=now+2hours", "format=Login,Used"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, user + "|" + std::to_string(used) + "\n");

  // Through the name `sreport` (install-aliases: a link to lockstep-slurm), as users call it.
  const std::string aliases = c.dir() + "/aliases";
  ASSERT_EQ(c.Run({"install-aliases", aliases}).exit_code, 0);
  auto [aliased, ok] = Shell("LOCKSTEP_STATE_DIR=" + c.dir() + " " + aliases +
                             "/sreport -P -n -t seconds user top start=" + start +
                             " end=now+2hours format=Login,Used");
  EXPECT_TRUE(ok);
  EXPECT_EQ(aliased, user + "|" + std::to_string(used) + "\n");

  // Minutes, with Slurm's header and columns; the value rounded as Slurm's %.0lf.
  r = c.Run({"sreport", "user", "top", "start=" + start, "end=now+2hours"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char minutes[32];
  std::snprintf(minutes, sizeof minutes, "%8.0f", static_cast<double>(used) / 60);
  EXPECT_NE(r.out.find("Usage reported in CPU Minutes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  Cluster     Login     Proper Name         Account     Used   Energy \n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(std::string(minutes) + "        0 \n"), std::string::npos) << r.out;

  // Bad input: a clear error, exit 1.
  r = c.Run({"sreport", "cluster", "utilization", "format=Cluster,Nonsense"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Unknown field 'Nonsense'"), std::string::npos) << r.err;
  r = c.Run({"sreport", "job", "sizesbyaccount"});
  EXPECT_EQ(r.exit_code, 1);
  r = c.Run({"sreport", "-t", "fortnights", "user", "top"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown time format fortnights"), std::string::npos) << r.err;
}

// Down: a node drained now counts from its drain event (the events lockstepd keeps) to the time
// sreport runs, times its CPUs.
TEST(Sreport, DownIsTheDrainedNodesTimeFromItsEvent) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  std::time_t hour = 0;
  const std::string start = HourStart(std::time(nullptr), &hour);
  CommandResult r = c.Run({"scontrol", "update", "NodeName=node2", "State=DRAIN", "Reason=fan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The event is appended as the change is applied, a moment after the command returns.
  long long drained_at = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        const nlohmann::json events = c.Get("/api/v1/events?from=0")["events"];
        for (const nlohmann::json& e : events)
          if (e.value("kind", "") == "node_drained") drained_at = e.value("time", 0LL);
        return drained_at > 0;
      },
      20s));
  const long long before = std::time(nullptr);
  r = c.Run({"sreport", "-t", "seconds", "-P", "-n", "cluster", "utilization", "start=" + start,
             "end=now+2hours", "format=Down,Reported"});
  const long long after = std::time(nullptr);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  long long down = -1, reported = -1;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "%lld|%lld", &down, &reported), 2) << r.out;
  EXPECT_GE(down, 16 * (before - drained_at)) << r.out;
  EXPECT_LE(down, 16 * (after - drained_at)) << r.out;
  EXPECT_GE(reported, 32 * (before - hour)) << r.out;
  EXPECT_LE(reported, 32 * (after - hour)) << r.out;
}

}  // namespace
}  // namespace lockstep::testing
