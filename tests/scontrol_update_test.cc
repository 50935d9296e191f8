// scontrol update, notify and job lists end to end (issue 31), through the real scontrol,
// sbatch, squeue and sinfo against lockstepd and an agent, with Slurm 22.05's words measured on
// the peer: a pending job's fields and the refusals of a running one, partitions' states and
// limits (and their restart), lists of jobs, and notify reaching a job's srun.
#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <string>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using namespace std::chrono_literals;

ClusterOptions TwoPartitions() {
  ClusterOptions o;
  o.extra_yaml =
      "partitions:\n  - {name: gpu, nodes: ALL, default: true}\n  - {name: cpu, nodes: ALL}\n"
      "qos:\n  - name: normal\n  - name: high\n";
  return o;
}

std::string Squeue(Cluster& c, const std::string& id, const std::string& format) {
  CommandResult r = c.Run({"squeue", "-h", "-j", id, "-o", format});
  return r.out.substr(0, r.out.find('\n'));
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ScontrolUpdate, APendingJobsFieldsChangeAndARunningJobRefusesThem) {
  Cluster c(TwoPartitions());
  ASSERT_TRUE(c.Start());
  const unsigned long long other = Submit(c, {"-H", "--wrap", "true"});
  const unsigned long long held = Submit(c, {"-H", "--wrap", "true"});
  ASSERT_GT(held, 0u);
  const std::string h = std::to_string(held);
  const std::time_t now = std::time(nullptr);
  CommandResult r = c.Run({"scontrol", "update", "JobId=" + h, "Partition=cpu", "qos=high",
                           "NumNodes=2", "NumCPUs=4", "MinMemoryNode=1G", "Gres=gpu:1",
                           "ReqNodeList=node1", "Comment=a note", "StartTime=now+1hour",
                           "Dependency=afterok:" + std::to_string(other)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = c.Job(held);
  EXPECT_EQ(j["partition"], "cpu");
  EXPECT_EQ(j["qos"], "high");
  EXPECT_EQ(j["node_count"], 2);
  EXPECT_EQ(j["cpus"], 4);
  EXPECT_EQ(j["mem_mb"], 2048);
  EXPECT_EQ(j["gpus"], 2) << "one GPU on each node";
  EXPECT_EQ(j["req_nodes"], "node1");
  EXPECT_EQ(j["dependency"], "afterok:" + std::to_string(other));
  EXPECT_NEAR(j["eligible_time"].get<double>(), static_cast<double>(now + 3600), 5);
  r = c.Run({"scontrol", "show", "job", h});
  EXPECT_TRUE(Contains(r.out, "\n   Comment=a note\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "Partition=cpu ")) << r.out;
  EXPECT_EQ(Squeue(c, h, "%k"), "a note");

  // Refusals in Slurm's words, the job as it was.
  r = c.Run({"scontrol", "update", "JobId=" + h, "ExcNodeList=node1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "requested node node1 is both required (-w) and excluded (-x) for job " + h +
                       "\n");
  r = c.Run({"scontrol", "update", "JobId=" + h, "Partition=nosuch"});
  EXPECT_EQ(r.err, "Invalid partition name specified for job " + h + "\n");
  r = c.Run({"scontrol", "update", "JobId=" + h, "NumNodes=5"});
  EXPECT_EQ(r.err, "Node count specification invalid for job " + h + "\n");
  r = c.Run({"scontrol", "update", "JobId=" + h, "ReqNodeList=node9"});
  EXPECT_EQ(r.err, "Invalid node name specified for job " + h + "\n");
  r = c.Run({"scontrol", "update", "JobId=" + h, "Bogus=1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Update of this parameter is not supported: Bogus=1\nRequest aborted\n");
  if (::getuid() == 0) {
    r = c.Run({"scontrol", "update", "JobId=" + h, "Comment=nobody's"}, "/tmp", 65534);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(Contains(r.err, "permission denied")) << r.err;
  }
  EXPECT_EQ(c.Job(held)["partition"], "cpu");
  EXPECT_EQ(c.Job(held)["comment"], "a note");

  // Dependency= clears; StartTime=now; released, it runs where it now asks to.
  r = c.Run({"scontrol", "update", "JobId=" + h, "Dependency=", "StartTime=now", "Gres=",
             "NumNodes=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(c.Run({"scontrol", "release", h}).exit_code, 0);
  nlohmann::json done = c.WaitJob(held);
  EXPECT_EQ(done["state"], "COMPLETED") << done.dump();
  EXPECT_EQ(done["nodes"], "node1");
  EXPECT_EQ(done["partition"], "cpu");

  // A running job: the pending-only fields refuse, Comment changes.
  const unsigned long long running = Submit(c, {"-t", "5", "--wrap", "sleep 300"});
  const std::string run = std::to_string(running);
  ASSERT_TRUE(WaitFor([&] { return c.Job(running).value("state", "") == "RUNNING"; }, 20s));
  r = c.Run({"scontrol", "update", "JobId=" + run, "Partition=cpu"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Job is no longer pending execution for job " + run + "\n");
  r = c.Run({"scontrol", "update", "JobId=" + run, "StartTime=now+1hour"});
  EXPECT_EQ(r.err, "Job is no longer pending execution for job " + run + "\n");
  r = c.Run({"scontrol", "update", "JobId=" + run, "Comment=running"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Job(running)["comment"], "running");

  // A list: each job's refusal on its line, the others changed.
  const std::string o = std::to_string(other);
  r = c.Run({"scontrol", "update", "JobId=" + o + ",999999," + run, "Comment=listed"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Invalid job id specified for job 999999\n");
  EXPECT_EQ(c.Job(other)["comment"], "listed");
  EXPECT_EQ(c.Job(running)["comment"], "listed");
  EXPECT_EQ(c.Run({"scancel", run, o}).exit_code, 0);
}

TEST(ScontrolUpdate, ArrayTaskThrottleAndJobLists) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const unsigned long long array = Submit(c, {"-H", "--array=0-7", "--wrap", "true"});
  ASSERT_GT(array, 0u);
  const std::string a = std::to_string(array);
  CommandResult r = c.Run({"scontrol", "update", "JobId=" + a, "ArrayTaskThrottle=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Job(array)["array_max_running"], 2);
  EXPECT_TRUE(Contains(c.Run({"squeue", "-h", "-j", a, "-o", "%i"}).out, "%2]"))
      << c.Run({"squeue", "-h", "-j", a, "-o", "%i"}).out;

  // hold / release / uhold / requeue over "1 2 3" and "1,2": each job's refusal, the others
  // done, exit 1, and Slurm's slurm_suspend line after a hold or release that failed.
  const unsigned long long j1 = Submit(c, {"-H", "--begin", "now+1hour", "--wrap", "true"});
  const unsigned long long j2 = Submit(c, {"-H", "--begin", "now+1hour", "--wrap", "true"});
  const std::string s1 = std::to_string(j1), s2 = std::to_string(j2);
  r = c.Run({"scontrol", "release", s1, "999999", s2});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Invalid job id specified for job 999999\n"
            "slurm_suspend error: Invalid job id specified\n");
  EXPECT_TRUE(WaitFor([&] { return c.Job(j1)["reason"] == "BeginTime"; }, 20s));
  EXPECT_TRUE(WaitFor([&] { return c.Job(j2)["reason"] == "BeginTime"; }, 20s));
  r = c.Run({"scontrol", "hold", s1 + "," + s2});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Job(j1)["reason"], "JobHeldUser");
  EXPECT_EQ(c.Job(j2)["reason"], "JobHeldUser");
  r = c.Run({"scontrol", "requeue", "999998", "999999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "Invalid job id specified for job 999998\nInvalid job id specified for job 999999\n");
  r = c.Run({"scontrol", "hold"});
  EXPECT_EQ(r.err, "too few arguments for keyword:hold\n");
  EXPECT_EQ(c.Run({"scancel", a, s1, s2}).exit_code, 0);
}

TEST(ScontrolUpdate, PartitionStatesAndMaxTimeForOperatorsOutliveARestart) {
  Cluster c(TwoPartitions());
  ASSERT_TRUE(c.Start());
  if (::getuid() == 0) {
    CommandResult r =
        c.Run({"scontrol", "update", "PartitionName=gpu", "State=DOWN"}, "/tmp", 65534);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.rfind("slurm_update error: Invalid user id", 0), 0u) << r.err;
  }
  CommandResult r = c.Run({"scontrol", "update", "PartitionName=gpu", "State=bogus"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "scontrol: error: Invalid input: State=bogus\n"
            "scontrol: error: Acceptable State values are UP, DOWN, DRAIN and INACTIVE\n");
  r = c.Run({"scontrol", "update", "PartitionName=nosuch", "State=UP"});
  EXPECT_EQ(r.err, "slurm_update error: Invalid partition name specified: nosuch\n");

  ASSERT_EQ(c.Run({"scontrol", "update", "PartitionName=gpu", "State=DOWN"}).exit_code, 0);
  const unsigned long long waits = Submit(c, {"--wrap", "true"});
  ASSERT_GT(waits, 0u) << "a DOWN partition takes submissions";
  const std::string w = std::to_string(waits);
  EXPECT_TRUE(WaitFor([&] { return Squeue(c, w, "%r") == "PartitionDown"; }, 20s));
  EXPECT_EQ(c.Run({"sinfo", "-h", "-o", "%P %a"}).out, "gpu* down\ncpu up\n");

  ASSERT_EQ(c.Run({"scontrol", "update", "partitionname=gpu", "state=inactive"}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return Squeue(c, w, "%r") == "PartitionInactive"; }, 20s));
  EXPECT_EQ(c.Run({"sinfo", "-h", "-o", "%P %a"}).out, "gpu* inact\ncpu up\n");
  r = c.Run({"sbatch", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "Required partition not available (inactive or drain)")) << r.err;

  // DRAIN: the queued job runs, nothing new is taken.
  ASSERT_EQ(c.Run({"scontrol", "update", "PartitionName=gpu", "State=DRAIN"}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(waits)["state"], "COMPLETED");
  EXPECT_EQ(c.Run({"sbatch", "--wrap", "true"}).exit_code, 1);
  EXPECT_EQ(c.Run({"sbatch", "-p", "cpu", "--wrap", "true"}).exit_code, 0);

  // MaxTime: a longer job waits with PartitionTimeLimit.
  ASSERT_EQ(c.Run({"scontrol", "update", "PartitionName=cpu", "MaxTime=5"}).exit_code, 0);
  const unsigned long long longer = Submit(c, {"-p", "cpu", "-t", "10", "--wrap", "true"});
  const std::string l = std::to_string(longer);
  EXPECT_TRUE(WaitFor([&] { return Squeue(c, l, "%r") == "PartitionTimeLimit"; }, 20s));
  r = c.Run({"scontrol", "show", "partition", "cpu"});
  EXPECT_TRUE(Contains(r.out, " MaxTime=00:05:00 ")) << r.out;

  // lockstepd restarts: the operators' changes stand over the cluster file.
  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(c.WaitNodes("idle", 2));
  r = c.Run({"scontrol", "show", "partition", "gpu"});
  EXPECT_TRUE(Contains(r.out, "\n   State=DRAIN ")) << r.out;
  r = c.Run({"scontrol", "show", "partition", "cpu"});
  EXPECT_TRUE(Contains(r.out, " MaxTime=00:05:00 ")) << r.out;
  EXPECT_TRUE(WaitFor([&] { return Squeue(c, l, "%r") == "PartitionTimeLimit"; }, 20s));
  ASSERT_EQ(c.Run({"scontrol", "update", "PartitionName=cpu", "MaxTime=UNLIMITED",
                   "Default=YES"})
                .exit_code,
            0);
  EXPECT_EQ(c.WaitJob(longer)["state"], "COMPLETED");
  EXPECT_EQ(c.Run({"sinfo", "-h", "-o", "%P %a"}).out, "gpu drain\ncpu* up\n");
}

TEST(ScontrolUpdate, NotifyReachesTheJobsSrun) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const unsigned long long held = Submit(c, {"-H", "--wrap", "true"});
  CommandResult r = c.Run({"scontrol", "notify", std::to_string(held), "hello"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "job notify failure: Requested operation is presently disabled\n");
  r = c.Run({"scontrol", "notify", "999999", "hello"});
  EXPECT_EQ(r.err, "job notify failure: Invalid job id specified\n");
  r = c.Run({"scontrol", "notify", std::to_string(held)});
  EXPECT_EQ(r.err, "too few arguments for keyword:notify\n");

  // A step that runs until the file "go" appears; its srun writes to the job's output.
  const unsigned long long id =
      Submit(c, {"-t", "5", "--wrap", "srun sh -c 'while [ ! -e go ]; do sleep 0.05; done'"});
  const std::string ids = std::to_string(id);
  ASSERT_TRUE(WaitFor(
      [&] { return c.Get("/api/v1/jobs/" + ids + "/steps/0").value("state", "") == "RUNNING"; },
      20s));
  r = c.Run({"scontrol", "notify", ids, "checkpoint", "now"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // srun has printed it once the output file has it; then the step may end.
  ASSERT_TRUE(WaitFor(
      [&] { return Contains(c.ReadFile("slurm-" + ids + ".out"), "srun: checkpoint now\n"); },
      20s))
      << c.ReadFile("slurm-" + ids + ".out");
  std::ofstream(c.work() + "/go") << "";
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  bool seen = false;
  const nlohmann::json events = c.Get("/api/v1/events?from=0");  // kept: the loop reads into it
  for (const nlohmann::json& e : events["events"])
    seen |= e.value("kind", "") == "notified" && e.value("job_id", 0ull) == id;
  EXPECT_TRUE(seen) << events.dump();
  EXPECT_EQ(c.Run({"scancel", std::to_string(held)}).exit_code, 0);
}

}  // namespace
}  // namespace lockstep::testing
