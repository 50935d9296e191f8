// End to end: sbatch/srun --test-only (the engine's what-if, nothing queued) and scontrol write
// batch_script, through the real CLI against lockstepd and an agent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <regex>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using namespace std::chrono_literals;

// "sbatch: Job 7 to start at 2026-12-02T17:40:12 using 2 processors on nodes node[1-2] in
// partition batch": the start as a time_t (local time, as Slurm prints it), or -1.
std::time_t StartOf(const std::string& line, std::smatch& m) {
  static const std::regex kLine(
      R"(^(sbatch|srun): Job (\d+) to start at (\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d) using (\d+) processors on nodes (\S+) in partition (\S+)\n$)");
  if (!std::regex_match(line, m, kLine)) return -1;
  std::tm tm{};
  tm.tm_year = std::stoi(m[3]) - 1900;
  tm.tm_mon = std::stoi(m[4]) - 1;
  tm.tm_mday = std::stoi(m[5]);
  tm.tm_hour = std::stoi(m[6]);
  tm.tm_min = std::stoi(m[7]);
  tm.tm_sec = std::stoi(m[8]);
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

TEST(SlurmCommands, TestOnlySaysWhenAndWhereWithoutQueuing) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::time_t before = std::time(nullptr);
  CommandResult r = c.Run({"sbatch", "--test-only", "-N2", "-n4", "--gpus-per-node=4", "--wrap", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  std::time_t start = StartOf(r.err, m);
  ASSERT_NE(start, -1) << r.err;
  EXPECT_LE(std::abs(start - before), 5) << "an idle cluster starts it now: " << r.err;
  EXPECT_EQ(m[9], "4");
  EXPECT_EQ(m[10], "node[1-2]");
  EXPECT_EQ(m[11], "batch");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(c.Get("/api/v1/jobs")["jobs"].size(), 0u) << "nothing is queued";

  // Every GPU taken for 10 minutes: a GPU job would start when that one's limit ends.
  unsigned long long blocker = Submit(c, {"-N2", "--gpus-per-node=4", "-t", "10", "--wrap", "sleep 300"});
  ASSERT_TRUE(WaitFor([&] { return c.Job(blocker).value("state", "") == "RUNNING"; }, 20s));
  const long long blocker_start = c.Job(blocker).value("start_time", 0LL);
  r = c.Run({"srun", "--test-only", "--gpus=1", "-t", "5", "hostname"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  start = StartOf(r.err, m);
  ASSERT_NE(start, -1) << r.err;
  EXPECT_EQ(m[1], "srun");
  EXPECT_NEAR(static_cast<double>(start), static_cast<double>(blocker_start + 600), 5) << r.err;
  // A job that needs no GPU starts now, beside it.
  r = c.Run({"sbatch", "--test-only", "-n2", "--wrap", "true"});
  start = StartOf(r.err, m);
  EXPECT_LE(std::abs(start - std::time(nullptr)), 5) << r.err;

  r = c.Run({"sbatch", "--test-only", "-p", "nosuch", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("sbatch: error: allocation failure: ", 0), 0u) << r.err;
  EXPECT_EQ(c.Run({"scancel", std::to_string(blocker)}).exit_code, 0);
}

TEST(SlurmCommands, WriteBatchScriptGivesTheScriptBackToItsOwner) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string script = "#!/bin/sh\n#SBATCH -J written\necho hello\n";
  CommandResult r = c.Run({"sbatch", "--parsable", "--hold"}, "", -1, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = r.out.substr(0, r.out.find('\n'));
  r = c.Run({"scontrol", "write", "batch_script", id});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "batch script for job " + id + " written to slurm-" + id + ".sh\n");
  EXPECT_EQ(c.ReadFile("slurm-" + id + ".sh"), script);
  r = c.Run({"scontrol", "write", "batch_script", id, "-"});
  EXPECT_EQ(r.out, script);
  r = c.Run({"scontrol", "write", "batch_script", "999999", "-"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Invalid job id specified"), std::string::npos) << r.err;
  if (::getuid() == 0) {
    r = c.Run({"scontrol", "write", "batch_script", id, "-"}, "", 65534);
    EXPECT_EQ(r.exit_code, 1) << "not nobody's job";
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(c.Run({"scancel", id}).exit_code, 0);
}

// Errors as Slurm 22.05 words them, and the usage after one on lines of its own (no "\n"
// printed as two characters).
TEST(SlurmCommands, ScontrolErrorsReadAsSlurmsAndTheUsageAsLines) {
  Cluster c;
  ASSERT_TRUE(c.Start(/*with_agent=*/false));
  CommandResult r = c.Run({"scontrol", "show", "reservationz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "invalid entity:reservationz for keyword:show \n");
  r = c.Run({"scontrol", "update", "nonsense"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.find("\\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("scontrol: error: update: 'nonsense' is not Key=Value\nusage: scontrol show", 0), 0u)
      << r.err;
}

// The scontrol entities and verbs tools use beside show job: jobid, hostlist and
// hostlistsorted, version, uhold (a hold the owner may release, whoever put it); srun's older
// --cpu_bind spelling.
TEST(SlurmCommands, ScontrolHostlistsVersionJobidAndUhold) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  EXPECT_EQ(c.Run({"scontrol", "show", "hostlist", "n3,n1,n2,gpu07,gpu08"}).out, "n[3,1-2],gpu[07-08]\n");
  EXPECT_EQ(c.Run({"scontrol", "show", "hostlistsorted", "n3,n1,n2"}).out, "n[1-3]\n");
  EXPECT_EQ(c.Run({"scontrol", "version"}).out.rfind("slurm 22.05", 0), 0u);
  CommandResult r = c.Run({"sbatch", "--parsable", "--wrap", "true", "--begin", "now+1hour"}, "/tmp", 65534);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = r.out.substr(0, r.out.find('\n'));
  r = c.Run({"scontrol", "show", "jobid", id});
  EXPECT_EQ(r.out.rfind("JobId=" + id + " ", 0), 0u) << r.out << r.err;
  // root's uhold on nobody's job: a user hold, which nobody may release.
  ASSERT_EQ(c.Run({"scontrol", "uhold", id}).exit_code, 0);
  EXPECT_EQ(c.Job(std::stoull(id))["reason"], "JobHeldUser");
  r = c.Run({"scontrol", "release", id}, "/tmp", 65534);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Released: the next pass says why it waits now (its begin time).
  EXPECT_TRUE(WaitFor([&] { return c.Job(std::stoull(id))["reason"] == "BeginTime"; },
                      std::chrono::seconds(20)))
      << c.Job(std::stoull(id)).dump();
  r = c.Run({"srun", "--cpu_bind=cores", "-N1", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Run({"scancel", id}).exit_code, 0);
}

}  // namespace
}  // namespace lockstep::testing
