// End to end: sbatch/srun --test-only (the engine's what-if, nothing queued) and scontrol write
// batch_script, through the real CLI against lockstepd and an agent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
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

// What tools read at start-up: every key of Slurm 22.05's show config (a workflow engine failed
// without SchedulerTimeSlice and AcctGatherNodeFreq), the steps that run, the switches.
TEST(SlurmCommands, ScontrolShowConfigStepsAndTopology) {
  ClusterOptions o;
  o.extra_yaml =
      "topology:\n  switches:\n    - {name: leaf0, nodes: node1}\n"
      "    - {name: leaf1, nodes: node2}\n    - {name: spine, switches: \"leaf[0-1]\"}\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"scontrol", "show", "config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"\nSchedulerTimeSlice      = 30 sec\n",
                           "\nAcctGatherNodeFreq      = 0 sec\n",
                           "\nTopologyPlugin          = topology/tree\n",
                           "\nClusterName             = lockstep\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
  EXPECT_NE(r.out.find(" is UP\n"), std::string::npos) << r.out;

  r = c.Run({"scontrol", "show", "topology"});
  EXPECT_EQ(r.out,
            "SwitchName=leaf0 Level=0 LinkSpeed=1 Nodes=node1 \n"
            "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node2 \n"
            "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[1-2] Switches=leaf[0-1] \n")
      << r.err;
  EXPECT_EQ(c.Run({"scontrol", "show", "topology", "node2"}).out,
            "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node2 \n"
            "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[1-2] Switches=leaf[0-1] \n");

  EXPECT_EQ(c.Run({"scontrol", "show", "steps"}).out, "No job steps in the system\n");
  // A step that runs until the file "go" appears.
  const unsigned long long id =
      Submit(c, {"-t", "5", "--wrap", "srun sh -c 'while [ ! -e go ]; do sleep 0.05; done'"});
  ASSERT_GT(id, 0u);
  const std::string ids = std::to_string(id);
  ASSERT_TRUE(WaitFor(
      [&] { return c.Get("/api/v1/jobs/" + ids + "/steps/0").value("state", "") == "RUNNING"; },
      20s));
  r = c.Run({"scontrol", "show", "steps"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("StepId=" + ids + ".batch UserId="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("StepId=" + ids + ".0 UserId="), std::string::npos) << r.out;
  r = c.Run({"scontrol", "show", "step", ids + ".0", "-o"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex("StepId=" + ids + R"(\.0 UserId=\d+ StartTime=\S+ TimeLimit=UNLIMITED )"
                        R"(State=RUNNING Partition=\S+ NodeList=node\d Nodes=1 CPUs=\d+ Tasks=1 )"
                        R"(Name=sh Network=\(null\) TRES=cpu=\S+ ResvPorts=\(null\) )"
                        R"(CPUFreqReq=Default Dist=Block SrunHost:Pid=\S+:[1-9]\d*\n)")))
      << r.out;
  std::ofstream(c.work() + "/go") << "";
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  r = c.Run({"scontrol", "show", "steps", ids});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "Job step " + ids + ".4294967294 not found\n");
  EXPECT_EQ(c.Run({"scontrol", "show", "steps"}).out, "No job steps in the system\n");
}

// The scontrol entities and verbs tools use beside show job: jobid, hostlist and
// hostlistsorted, version, topology (of a cluster without one), uhold (a hold the owner may release, whoever put it); srun's older
// --cpu_bind spelling.
TEST(SlurmCommands, ScontrolHostlistsVersionJobidAndUhold) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  EXPECT_EQ(c.Run({"scontrol", "show", "hostlist", "n3,n1,n2,gpu07,gpu08"}).out, "n[3,1-2],gpu[07-08]\n");
  EXPECT_EQ(c.Run({"scontrol", "show", "hostlistsorted", "n3,n1,n2"}).out, "n[1-3]\n");
  EXPECT_EQ(c.Run({"scontrol", "version"}).out.rfind("slurm 22.05", 0), 0u);
  // A cluster without switches: Slurm's error, and its exit code 0.
  CommandResult topology = c.Run({"scontrol", "show", "topology"});
  EXPECT_EQ(topology.exit_code, 0);
  EXPECT_EQ(topology.out, "");
  EXPECT_EQ(topology.err, "scontrol: error: No topology information available\n");
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

// Heterogeneous jobs (issue 31) as Slurm 22.05 runs them: "#SBATCH hetjob" components that
// start together, squeue's ID+OFFSET, the leader's SLURM_*_HET_GROUP_* variables, srun
// --het-group and srun A : B across components, and scancel of the whole job.
TEST(SlurmCommands, HeterogeneousJobsRunTheirComponentsTogether) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string script =
      "#!/bin/sh\n"
      "#SBATCH -N1 -n2 -J hetA -o het-%j.out\n"
      "#SBATCH hetjob\n"
      "#SBATCH -N2 -n2 -J hetB\n"
      "env | grep -E '^SLURM_(HET_SIZE|JOB_ID|JOB_NODELIST_HET_GROUP_1|NTASKS_PACK_GROUP_1)=' | sort\n"
      "srun -l --het-group=0,1 sh -c 'echo $SLURM_PROCID $SLURM_JOB_ID $SLURM_JOB_NODELIST' | sort\n"
      "srun --het-group=1 sh -c 'echo one $SLURM_JOB_NAME $SLURM_NNODES'\n"
      "srun -n1 echo mpmd-a : -n1 echo mpmd-b | sort\n"
      "srun --het-group=2 true || echo refused\n";
  CommandResult r = c.Run({"sbatch", "--parsable"}, "", -1, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string id = r.out.substr(0, r.out.find('\n'));
  const unsigned long long leader = std::stoull(id);
  ASSERT_TRUE(WaitFor([&] { return c.Job(leader).value("state", "") == "COMPLETED"; }, 60s))
      << c.Job(leader).dump();
  EXPECT_EQ(c.Job(leader + 1).value("state", ""), "COMPLETED");
  const std::string out = c.ReadFile("het-" + id + ".out");
  EXPECT_NE(out.find("SLURM_HET_SIZE=2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SLURM_JOB_ID=" + id + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SLURM_JOB_NODELIST_HET_GROUP_1=node[1-2]\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SLURM_NTASKS_PACK_GROUP_1=2\n"), std::string::npos) << out;
  // Component 0 has 2 tasks on one node, component 1 one on each of its two: 4 ranks, the
  // leader's id, the nodes of both.
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_NE(out.find(std::to_string(rank) + ": " + std::to_string(rank) + " " + id + " node"),
              std::string::npos)
        << rank << "\n" << out;
  EXPECT_NE(out.find("one hetB 2\none hetB 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("mpmd-a\nmpmd-b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("refused"), std::string::npos) << out;

  // squeue and scontrol name the components as Slurm does; scancel of the leader ends both.
  r = c.Run({"sbatch", "--parsable", "--hold", "-n1", ":", "-n1", "--wrap", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string held = r.out.substr(0, r.out.find('\n'));
  r = c.Run({"squeue", "-h", "-j", held, "-o", "%i %A %T"});
  EXPECT_EQ(r.out, held + "+0 " + held + " PENDING\n" + held + "+1 " +
                       std::to_string(std::stoull(held) + 1) + " PENDING\n")
      << r.err;
  r = c.Run({"scontrol", "show", "job", held + "+1"});
  EXPECT_NE(r.out.find("HetJobId=" + held + " HetJobOffset=1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HetJobIdSet=" + held + "-" + std::to_string(std::stoull(held) + 1)),
            std::string::npos)
      << r.out;
  r = c.Run({"scancel", held + "+1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Operation not permitted on individual component of heterogeneous job"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(c.Run({"scancel", held}).exit_code, 0);
  EXPECT_EQ(c.Job(std::stoull(held) + 1).value("state", ""), "CANCELLED");
}

// --exclusive=user (issue 31): another user's job never shares the node; the same user's does.
TEST(SlurmCommands, ExclusiveUserSharesNodesOnlyWithTheSameUser) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to submit as another user";
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"sbatch", "--parsable", "--exclusive=user", "-n1", "-w", "node1", "-o",
                           "/dev/null", "--wrap", "sleep 300"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const unsigned long long mine = std::stoull(r.out);
  ASSERT_TRUE(WaitFor([&] { return c.Job(mine).value("state", "") == "RUNNING"; }, 20s));
  EXPECT_EQ(c.Run({"squeue", "-h", "-o", "%h", "-j", std::to_string(mine)}).out, "USER\n");
  r = c.Run({"sbatch", "--parsable", "-n1", "-w", "node1", "-o", "/dev/null", "--wrap", "true"},
            "/tmp", 65534);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const unsigned long long theirs = std::stoull(r.out);
  r = c.Run({"sbatch", "--parsable", "-n1", "-w", "node1", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const unsigned long long same_user = std::stoull(r.out);
  ASSERT_TRUE(WaitFor([&] { return c.Job(same_user).value("state", "") == "COMPLETED"; }, 30s))
      << c.Job(same_user).dump();
  EXPECT_EQ(c.Job(theirs).value("state", ""), "PENDING") << "node1 has room, but not for them";
  EXPECT_EQ(c.Run({"scancel", std::to_string(mine)}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return c.Job(theirs).value("state", "") == "COMPLETED"; }, 30s))
      << c.Job(theirs).dump();
}

}  // namespace
}  // namespace lockstep::testing
