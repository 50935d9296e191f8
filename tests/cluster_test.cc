// End to end: lockstepd and lockstep-agent as real processes, the lockstep CLI as users run it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

void WriteScript(const Cluster& c, const std::string& name, const std::string& text) {
  std::ofstream(c.work() + "/" + name) << text;
}

TEST(Cluster, OneGpuJobRunsWithSlurmEnvironmentAndOutputFile) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id =
      Submit(c, {"--gpus=1", "-J", "probe", "--wrap",
                 "echo id=$SLURM_JOB_ID name=$SLURM_JOB_NAME nodes=$SLURM_JOB_NODELIST "
                 "gpus=$CUDA_VISIBLE_DEVICES ntasks=$SLURM_NTASKS submit=$SLURM_SUBMIT_DIR"});
  ASSERT_GT(id, 0u);
  nlohmann::json j = c.WaitJob(id);
  EXPECT_EQ(j["state"], "COMPLETED");
  EXPECT_EQ(j["exit_code"], 0);
  std::string out = c.ReadFile("slurm-" + std::to_string(id) + ".out");
  EXPECT_TRUE(Contains(out, "id=" + std::to_string(id) +
                                " name=probe nodes=node1 gpus=0 ntasks=1 submit=" + c.work()))
      << out;
}

TEST(Cluster, SbatchPrintsSubmittedBatchJobAndRejectsBadScripts) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  WriteScript(c, "ok.sh", "#!/bin/sh\n#SBATCH -J fromscript\necho ok\n");
  CommandResult r = c.Run({"sbatch", "ok.sh"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "Submitted batch job ")) << r.out;
  WriteScript(c, "bad.sh", "echo no shebang\n");
  r = c.Run({"sbatch", "bad.sh"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "sbatch: error:")) << r.err;
  r = c.Run({"sbatch", "--gpus=99", "--wrap", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "node configuration is not available")) << r.err;
  r = c.Run({"sbatch", "-p", "nosuch", "--wrap", "true"});
  EXPECT_TRUE(Contains(r.err, "invalid partition")) << r.err;
  // Nothing but the good job was accepted.
  EXPECT_EQ(c.Get("/api/v1/jobs?all=1")["jobs"].size(), 1u);
}

// -w puts a job on the nodes named, -x keeps it off them (node1 would be best fit for both
// otherwise); names that are not nodes are refused at submission, naming them.
TEST(Cluster, NodelistAndExcludePlaceJobsWhereAsked) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long on2 = Submit(c, {"-w", "node2", "--wrap", "echo on=$SLURM_JOB_NODELIST"});
  unsigned long long off1 = Submit(c, {"-x", "node1", "--wrap", "echo on=$SLURM_JOB_NODELIST"});
  ASSERT_TRUE(on2 && off1);
  for (unsigned long long id : {on2, off1}) {
    EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED") << id;
    std::string out = c.ReadFile("slurm-" + std::to_string(id) + ".out");
    EXPECT_TRUE(Contains(out, "on=node2")) << id << ": " << out;
  }
  CommandResult shown = c.Run({"scontrol", "show", "job", std::to_string(off1)});
  EXPECT_TRUE(Contains(shown.out, "ReqNodeList=(null) ExcNodeList=node1")) << shown.out;
  CommandResult r = c.Run({"sbatch", "-w", "node9", "--wrap", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "invalid node name specified: node9")) << r.err;
  r = c.Run({"sbatch", "-x", "node[1", "--wrap", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "sbatch: error:")) << r.err;
  r = c.Run({"sbatch", "-w", "node1", "-x", "node1", "--wrap", "true"});
  EXPECT_TRUE(Contains(r.err, "both required (-w) and excluded (-x)")) << r.err;
  EXPECT_EQ(c.Get("/api/v1/jobs?all=1")["jobs"].size(), 2u);
}

// A script reaches its node byte for byte (it copies itself), UTF-8 of every length included;
// one that is not UTF-8, which the API's JSON cannot carry so, is refused at submit, naming
// where, rather than run with U+FFFD in place of its bytes.
TEST(Cluster, ScriptsRunByteForByteAndOnesNotUtf8AreRefused) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string script =
      "#!/bin/sh\n# caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\ncp \"$0\" ran.sh\n";
  WriteScript(c, "utf8.sh", script);
  unsigned long long id = Submit(c, {"utf8.sh"});
  ASSERT_GT(id, 0u);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("ran.sh"), script);

  WriteScript(c, "latin1.sh", "#!/bin/sh\n# caf\xe9\ntrue\n");
  CommandResult r = c.Run({"sbatch", "latin1.sh"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err,
                       "latin1.sh line 2: the batch script is not UTF-8 (byte 0xe9 at "
                       "offset 15)"))
      << r.err;
  EXPECT_EQ(c.Get("/api/v1/jobs?all=1")["jobs"].size(), 1u);
}

TEST(Cluster, TwoNodeTrainingJobGetsRanksAndGpusPerTask) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  WriteScript(
      c, "train.sbatch",
      "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=4\n#SBATCH --gpus-per-node=4\n"
      "srun bash -c 'echo rank=$RANK world=$WORLD_SIZE local=$LOCAL_RANK node=$SLURMD_NODENAME "
      "master=$MASTER_ADDR cuda=$CUDA_VISIBLE_DEVICES'\n");
  unsigned long long id = Submit(c, {"train.sbatch"});
  ASSERT_GT(id, 0u);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  std::string out = c.ReadFile("slurm-" + std::to_string(id) + ".out");
  for (int rank = 0; rank < 8; ++rank) {
    std::string node = rank < 4 ? "node1" : "node2";
    EXPECT_TRUE(Contains(out, "rank=" + std::to_string(rank) +
                                  " world=8 local=" + std::to_string(rank % 4) + " node=" + node +
                                  " master=127.0.0.1 cuda=0,1,2,3"))
        << out;
  }
}

// A torchrun script sets its own rendezvous before srun: its steps see the script's values,
// not lockstep's (which the script and steps get when it sets none).
TEST(Cluster, AScriptsOwnMasterAddrAndPortReachItsSteps) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  WriteScript(c, "torchrun.sbatch",
              "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
              "echo batch master=$MASTER_ADDR:$MASTER_PORT\n"
              "srun bash -c 'echo default master=$MASTER_ADDR port_set=${MASTER_PORT:+yes}'\n"
              "export MASTER_ADDR=node2 MASTER_PORT=29400\n"
              "srun bash -c 'echo own master=$MASTER_ADDR:$MASTER_PORT rank=$RANK'\n");
  unsigned long long id = Submit(c, {"torchrun.sbatch"});
  ASSERT_GT(id, 0u);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  const std::string out = c.ReadFile("slurm-" + std::to_string(id) + ".out");
  EXPECT_TRUE(Contains(out, "batch master=127.0.0.1:")) << out;
  EXPECT_TRUE(Contains(out, "default master=127.0.0.1 port_set=yes")) << out;
  EXPECT_TRUE(Contains(out, "own master=node2:29400 rank=0")) << out;
  EXPECT_TRUE(Contains(out, "own master=node2:29400 rank=1")) << out;
}

// scancel's targets as Slurm's: --batch signals the batch script's shell alone (a trap there
// sees it; its srun step runs on), and a plain -s signals the steps, not the shell.
TEST(Cluster, ScancelBatchSignalsTheShellAloneAndPlainSignalsTheSteps) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string dir = c.work();
  WriteScript(c, "trap.sbatch",
              "#!/bin/bash\n"
              "trap 'touch " + dir + "/batch-got' USR1\n"
              "srun bash -c 'trap \"touch " + dir + "/step-got; exit 0\" USR1; touch " + dir +
                  "/step-ready; while :; do sleep 0.1; done' &\n"
              "step=$!\n"
              "wait $step\n"  // returns early when the trap runs
              "wait $step\n");
  unsigned long long id = Submit(c, {"trap.sbatch"});
  ASSERT_GT(id, 0u);
  auto exists = [&](const char* name) { return std::filesystem::exists(dir + "/" + name); };
  ASSERT_TRUE(WaitFor([&] { return exists("step-ready"); }, std::chrono::seconds(20)));
  CommandResult r = c.Run({"scancel", "--batch", "--signal=USR1", std::to_string(id)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(WaitFor([&] { return exists("batch-got"); }, std::chrono::seconds(20)));
  EXPECT_FALSE(exists("step-got")) << "the step was signalled too";
  EXPECT_EQ(c.Job(id)["state"], "RUNNING");
  r = c.Run({"scancel", "-s", "USR1", std::to_string(id)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  EXPECT_TRUE(exists("step-got"));
}

// srun -o/-e with Slurm's filename patterns, as submitit writes them: each task's output in a
// file of its own (%t), on the node it ran on (%N); without %t one file for all.
TEST(Cluster, SrunOutputPatternsGiveEachTaskItsFile) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string logs = c.work() + "/logs";
  std::filesystem::create_directories(logs);
  WriteScript(c, "submitit.sbatch",
              "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --ntasks-per-node=1\n"
              "srun --output " + logs + "/%j_%t_log.out --error " + logs +
                  "/%j_%t_log.err bash -c 'echo out of $SLURM_PROCID; echo err of $SLURM_PROCID >&2'\n"
              "srun -o step-%s-%N.out bash -c 'echo on $SLURMD_NODENAME'\n"
              "echo batch done\n");
  unsigned long long id = Submit(c, {"submitit.sbatch"});
  ASSERT_GT(id, 0u);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  const std::string j = std::to_string(id);
  for (int t = 0; t < 2; ++t) {
    const std::string base = logs + "/" + j + "_" + std::to_string(t) + "_log";
    EXPECT_EQ(c.ReadFile(base + ".out"), "out of " + std::to_string(t) + "\n");
    EXPECT_EQ(c.ReadFile(base + ".err"), "err of " + std::to_string(t) + "\n");
  }
  // The second step (id 1), one task on the first node, relative to srun's directory.
  EXPECT_EQ(c.ReadFile(c.work() + "/step-1-node1.out"), "on node1\n");
  const std::string out = c.ReadFile("slurm-" + j + ".out");
  EXPECT_EQ(out, "batch done\n") << "the tasks' output went to their files, not the job's";
}

TEST(Cluster, ArraysRunEveryTaskWithinTheirThrottle) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(
      c, {"--array=1-4%2", "--wrap", "echo task=$SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"});
  ASSERT_GT(id, 0u);
  for (unsigned long long task = id; task < id + 4; ++task)
    EXPECT_EQ(c.WaitJob(task)["state"], "COMPLETED");
  for (int t = 1; t <= 4; ++t) {
    std::string out = c.ReadFile("slurm-" + std::to_string(id) + "_" + std::to_string(t) + ".out");
    EXPECT_EQ(out, "task=" + std::to_string(t) + " of " + std::to_string(id) + "\n");
  }
}

TEST(Cluster, DependencyChainsRunInOrderAndFailedOnesNeverStart) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long a = Submit(c, {"--wrap", "sleep 1; date +%s%N > a.done"});
  unsigned long long b =
      Submit(c, {"-d", "afterok:" + std::to_string(a), "--wrap", "date +%s%N > b.done"});
  unsigned long long never = Submit(c, {"-d", "afternotok:" + std::to_string(a), "--wrap", "true"});
  ASSERT_TRUE(a && b && never);
  EXPECT_EQ(c.WaitJob(b)["state"], "COMPLETED");
  EXPECT_LT(std::stoll(c.ReadFile("a.done")), std::stoll(c.ReadFile("b.done")));
  // Its dependency can no longer be met once `a` completed: it waits with that reason, for good.
  nlohmann::json n;
  WaitFor([&] { return (n = c.Job(never))["reason"] == "DependencyNeverSatisfied"; },
          std::chrono::seconds(10));
  EXPECT_EQ(n["state"], "PENDING");
  EXPECT_EQ(n["reason"], "DependencyNeverSatisfied");
}

// aftercorr: each task of the second array waits for the same task of the first; the one whose
// task failed never starts. sacct shows the command lines they were submitted with.
TEST(Cluster, AftercorrTasksFollowTheirOwnTaskAndSacctShowsTheSubmitLine) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long first =
      Submit(c, {"--array=0-2", "--wrap", "test $SLURM_ARRAY_TASK_ID != 1"});
  ASSERT_TRUE(first);
  unsigned long long second = Submit(
      c, {"--array=0-2", "-d", "aftercorr:" + std::to_string(first), "--wrap",
          "echo done > corr.$SLURM_ARRAY_TASK_ID"});
  ASSERT_TRUE(second);
  EXPECT_EQ(c.WaitJob(second)["state"], "COMPLETED");
  EXPECT_EQ(c.WaitJob(second + 2)["state"], "COMPLETED");
  nlohmann::json middle;
  WaitFor([&] { return (middle = c.Job(second + 1))["reason"] == "DependencyNeverSatisfied"; },
          std::chrono::seconds(10));
  EXPECT_EQ(middle["reason"], "DependencyNeverSatisfied") << middle.dump();
  EXPECT_EQ(c.ReadFile("corr.0"), "done\n");
  EXPECT_EQ(c.ReadFile("corr.2"), "done\n");

  CommandResult line =
      c.Run({"sacct", "-X", "-n", "-P", "-o", "submitline", "-j", std::to_string(first)});
  EXPECT_TRUE(Contains(line.out, "sbatch --parsable --array=0-2 --wrap test $SLURM_ARRAY_TASK_ID != 1\n"))
      << line.out << line.err;
  CommandResult help = c.Run({"sacct", "-e"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "Account             AdminComment        AllocCPUS           AllocNodes"))
      << help.out;
  CommandResult both = c.Run({"sacct", "-l", "-o", "jobid"});
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(both.err,
            "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
            "remove one and retry.\n");
  CommandResult wide = c.Run({"sacct", "-l", "-P", "-X", "-j", std::to_string(first)});
  EXPECT_EQ(wide.out.substr(0, wide.out.find('\n')).substr(0, 41),
            "JobID|JobIDRaw|JobName|Partition|MaxVMSiz")
      << wide.out;
}

TEST(Cluster, CancelEndsARunningJobAndItsProcesses) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"--wrap", "echo $$ > pid; sleep 300"});
  ASSERT_GT(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return !c.ReadFile("pid").empty(); }, std::chrono::seconds(20)));
  pid_t pid = std::stoi(c.ReadFile("pid"));
  CommandResult r = c.Run({"scancel", std::to_string(id)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.WaitJob(id)["state"], "CANCELLED");
  // The agent reaps the process after reporting the job: wait for it to go (up to 10 s).
  WaitFor([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(10));
  EXPECT_NE(::kill(pid, 0), 0) << "the job's process is still there";
  // A job that is gone: a plain scancel is no failure (Slurm 22.05's), -v says why.
  r = c.Run({"scancel", "-v", "999999"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "Invalid job id specified")) << r.err;
}

TEST(Cluster, TimeLimitEndsAJobAsTimeout) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"-t", "0:02", "--wrap", "sleep 300"});
  ASSERT_GT(id, 0u);
  nlohmann::json j = c.WaitJob(id, 30);
  EXPECT_EQ(j["state"], "TIMEOUT");
  EXPECT_GE(j["end_time"].get<long long>() - j["start_time"].get<long long>(), 2);
}

// --mem is held or, where the host cannot hold it, said so: the node's LimitsEnforced and a
// warning at submission. (This project's test machine is a hybrid cgroup host: its v1 memory
// hierarchy holds the job.)
TEST(Cluster, AJobOverItsMemoryIsKilledOrTheSubmissionSaysItCannotBe) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string node = c.Run({"scontrol", "show", "node", "node1"}).out;
  const std::size_t at = node.find("LimitsEnforced=");
  ASSERT_NE(at, std::string::npos) << node;
  const std::string limits = node.substr(at + 15, node.find('\n', at) - at - 15);
  EXPECT_EQ(c.Run({"sinfo", "-N", "-h", "-n", "node1", "-o", "%N %k"}).out,
            "node1 " + limits + "\n");
  EXPECT_EQ(c.Run({"sinfo", "-N", "-h", "-n", "node1", "-O", "NodeList:8,LimitsEnforced"}).out,
            "node1   " + limits + std::string(20 - limits.size(), ' ') + "\n");
  // dd's buffer of 500 MB is allocated and filled: over a limit of 100 MB.
  CommandResult r = c.Run({"sbatch", "--parsable", "--mem=100M", "--wrap",
                           "dd if=/dev/zero of=/dev/null bs=500M count=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const unsigned long long id = std::stoull(r.out);
  nlohmann::json j = c.WaitJob(id, 60);
  if (Contains(limits, "memory")) {
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(j["state"], "OUT_OF_MEMORY") << j.dump();
  } else {
    EXPECT_TRUE(Contains(r.err, "sbatch: warning: the memory this job asks for is not enforced "
                                "on node1"))
        << r.err;
  }
}

// --switches on a tree of two leaves (issue 37): a job that wants one switch while each leaf has
// one free node waits, says so in scontrol (Switches=), and runs on any two nodes once
// scheduler.max_switch_wait has passed.
TEST(Cluster, ASwitchCountHoldsAJobForMaxSwitchWaitThenItRunsAnywhere) {
  ClusterOptions o;
  o.nodes = 4;
  o.extra_yaml =
      "topology:\n  switches:\n    - {name: leaf1, nodes: \"node[1-2]\"}\n"
      "    - {name: leaf2, nodes: \"node[3-4]\"}\n    - {name: spine, switches: \"leaf[1-2]\"}\n"
      "scheduler:\n  max_switch_wait: 4\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  for (const char* node : {"node1", "node3"})
    ASSERT_GT(Submit(c, {"-w", node, "--exclusive", "--wrap", "sleep 120"}), 0u);
  const unsigned long long id = Submit(c, {"-N2", "--switches=1", "--wrap", "true"});
  ASSERT_GT(id, 0u);
  const std::string shown = c.Run({"scontrol", "show", "job", std::to_string(id)}).out;
  EXPECT_TRUE(Contains(shown, "   Switches=1@00:00:04\n")) << shown;
  nlohmann::json j = c.WaitJob(id, 30);
  EXPECT_EQ(j["state"], "COMPLETED") << j.dump();
  EXPECT_EQ(j["nodes"], "node[2,4]");
  EXPECT_GE(j["start_time"].get<long long>() - j["submit_time"].get<long long>(), 3)
      << "it waited for one switch first";
}

TEST(Cluster, UsersCannotTouchOthersJobsButOperatorsCan) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long root_job = Submit(c, {"--wrap", "sleep 300"});
  ASSERT_GT(root_job, 0u);
  const int nobody = 65534;
  CommandResult r = c.Run({"scancel", std::to_string(root_job)}, "", nobody);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "permission denied")) << r.err;
  EXPECT_NE(c.Job(root_job)["state"], "CANCELLED");
  // nobody's own job runs as nobody; root (an operator) may cancel it.
  r = c.Run({"sbatch", "--parsable", "--wrap", "id -u > whoami; sleep 300"}, "", nobody);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long theirs = std::stoull(r.out);
  ASSERT_TRUE(WaitFor([&] { return !c.ReadFile("whoami").empty(); }, std::chrono::seconds(20)));
  EXPECT_EQ(c.ReadFile("whoami"), "65534\n");
  EXPECT_EQ(c.Run({"scancel", std::to_string(theirs)}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(theirs)["state"], "CANCELLED");
  EXPECT_EQ(c.Run({"scancel", std::to_string(root_job)}).exit_code, 0);
}

TEST(Cluster, CrashOfTheControllerLosesNoAcknowledgedJobAndAdoptsRunningOnes) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long runner = Submit(c, {"--wrap", "sleep 2; echo survived"});
  ASSERT_GT(runner, 0u);
  ASSERT_TRUE(
      WaitFor([&] { return c.Job(runner)["state"] != "PENDING"; }, std::chrono::seconds(20)));
  // A stream of submissions, and a crash in the middle of it: once 10 are acknowledged (an
  // event, not a delay, so that a slow machine still crashes mid-stream).
  std::vector<unsigned long long> acknowledged;
  std::mutex mu;
  std::condition_variable acked;
  std::size_t acked_count = 0;
  std::thread killer([&] {
    {
      std::unique_lock<std::mutex> lock(mu);
      acked.wait(lock, [&] { return acked_count >= 10; });
    }
    c.KillDaemon();
  });
  for (int i = 0; i < 200; ++i) {
    unsigned long long id = Submit(c, {"--hold", "--wrap", "true"});
    if (id == 0) break;
    acknowledged.push_back(id);
    {
      std::lock_guard<std::mutex> lock(mu);
      ++acked_count;
    }
    acked.notify_all();
  }
  if (acknowledged.size() < 10) {  // the stream ended early: the killer must not wait forever
    {
      std::lock_guard<std::mutex> lock(mu);
      acked_count = 10;
    }
    acked.notify_all();
  }
  killer.join();
  c.StartDaemon();
  ASSERT_TRUE(c.WaitNodes("idle", 1, 20) || c.WaitNodes("mixed", 1, 1));
  EXPECT_FALSE(acknowledged.empty());
  for (unsigned long long id : acknowledged)
    EXPECT_EQ(c.Job(id)["state"], "PENDING") << "job " << id << " was lost";
  nlohmann::json j = c.WaitJob(runner);
  EXPECT_EQ(j["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + std::to_string(runner) + ".out"), "survived\n");
}

TEST(Cluster, SilentAgentMakesItsNodesDownAndRequeuesItsJobs) {
  ClusterOptions o;
  o.node_timeout_s = 2;
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  unsigned long long requeue = Submit(c, {"-N", "2", "--wrap", "sleep 300"});
  unsigned long long fail = Submit(c, {"--no-requeue", "--wrap", "sleep 300"});
  ASSERT_TRUE(requeue && fail);
  ASSERT_TRUE(WaitFor([&] { return c.Job(fail)["state"] == "RUNNING"; }, std::chrono::seconds(20)));
  c.PauseAgent();
  EXPECT_TRUE(c.WaitNodes("down*", 2, 15));
  EXPECT_EQ(c.WaitJob(fail, 10)["state"], "NODE_FAIL");
  nlohmann::json r = c.Job(requeue);
  EXPECT_EQ(r["state"], "PENDING");
  EXPECT_EQ(r["restart_count"], 1);
  c.ResumeAgent();
  ASSERT_TRUE(
      WaitFor([&] { return c.Job(requeue)["state"] == "RUNNING"; }, std::chrono::seconds(20)));
  EXPECT_EQ(c.Job(requeue)["state"], "RUNNING");
  c.Run({"scancel", std::to_string(requeue)});
}

TEST(Cluster, DrainAndResumeNodesWithScontrolAcrossARestart) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"scontrol", "update", "NodeName=node1", "State=DRAIN"});
  EXPECT_NE(r.exit_code, 0) << "a drain needs a reason";
  EXPECT_TRUE(Contains(r.err, "reason")) << r.err;
  r = c.Run({"scontrol", "update", "NodeName=node1", "State=DRAIN", "Reason=bad gpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long long id = Submit(c, {"--wrap", "echo $SLURMD_NODENAME"});
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + std::to_string(id) + ".out"), "node2\n")
      << "nothing new on a drained node";
  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(c.WaitNodes("idle", 1));
  r = c.Run({"sinfo", "-R"});
  EXPECT_TRUE(Contains(r.out, "bad gpu")) << r.out;
  EXPECT_TRUE(Contains(r.out, "node1")) << r.out;
  EXPECT_EQ(c.Run({"scontrol", "update", "NodeName=node1", "State=RESUME"}).exit_code, 0);
  EXPECT_TRUE(c.WaitNodes("idle", 2));
}

TEST(Cluster, SqueueSinfoAndSacctPrintSlurmColumns) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long run =
      Submit(c, {"-J", "runner", "-N", "2", "--gpus-per-node=4", "--wrap", "sleep 30"});
  unsigned long long wait = Submit(c, {"-J", "waiter", "--gpus=1", "--wrap", "true"});
  ASSERT_TRUE(
      WaitFor([&] { return c.Job(wait)["reason"] == "Resources"; }, std::chrono::seconds(20)));
  CommandResult q = c.Run({"squeue"});
  EXPECT_TRUE(Contains(
      q.out,
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"))
      << q.out;
  EXPECT_TRUE(Contains(q.out, " " + std::to_string(run) + "     batch   runner     root  R"))
      << q.out;
  EXPECT_TRUE(Contains(q.out, "      2 node[1-2]\n")) << q.out;
  EXPECT_TRUE(
      Contains(q.out, " " + std::to_string(wait) +
                          "     batch   waiter     root PD       0:00      1 (Resources)\n"))
      << q.out;
  CommandResult i = c.Run({"sinfo"});
  EXPECT_TRUE(Contains(i.out,
                       "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\nbatch*       up   "
                       "infinite      2  alloc node[1-2]\n"))
      << i.out;
  EXPECT_EQ(c.Run({"scancel", std::to_string(run)}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(wait)["state"], "COMPLETED");
  CommandResult a = c.Run({"sacct", "-X", "-j", std::to_string(wait)});
  EXPECT_TRUE(Contains(
      a.out, "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"))
      << a.out;
  EXPECT_TRUE(Contains(
      a.out, "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"))
      << a.out;
  EXPECT_TRUE(Contains(
      a.out, std::to_string(wait) +
                 "                waiter      batch    default          1  COMPLETED      0:0 \n"))
      << a.out;
}

TEST(Cluster, HoldReleaseAndUpdateAPendingJob) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  // A blocker takes every node, so the next job waits.
  unsigned long long blocker = Submit(c, {"-N", "2", "--exclusive", "--wrap", "sleep 300"});
  ASSERT_GT(blocker, 0u);
  ASSERT_TRUE(
      WaitFor([&] { return c.Job(blocker)["state"] == "RUNNING"; }, std::chrono::seconds(20)));
  unsigned long long waiting = Submit(c, {"--gpus=1", "--wrap", "echo released"});
  ASSERT_GT(waiting, 0u);
  std::string id = std::to_string(waiting);
  EXPECT_EQ(c.Run({"scontrol", "hold", id}).exit_code, 0);
  EXPECT_EQ(c.Run({"squeue", "-h", "-j", id, "-o", "%T %r"}).out, "PENDING JobHeldUser\n");
  CommandResult r = c.Run({"scontrol", "update", "JobId=" + id, "TimeLimit=5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Run({"squeue", "-h", "-j", id, "-o", "%l"}).out, "5:00\n");
  if (::getuid() == 0) {
    r = c.Run({"scontrol", "release", id}, "", 65534);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_TRUE(Contains(r.err, "permission denied")) << r.err;
  }
  EXPECT_EQ(c.Run({"scontrol", "release", id}).exit_code, 0);
  // Released, it waits for resources again; once the blocker is gone it runs.
  ASSERT_TRUE(
      WaitFor([&] { return c.Job(waiting)["reason"] != "JobHeldUser"; }, std::chrono::seconds(20)));
  EXPECT_EQ(c.Job(waiting)["state"], "PENDING");
  EXPECT_EQ(c.Run({"scancel", std::to_string(blocker)}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(waiting)["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + id + ".out"), "released\n");
}


// What `cmd` printed on stdout and stderr, and its exit status (as system() gives it).
std::pair<std::string, int> RunShell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {"", -1};
  char buf[1024];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  return {out, ::pclose(p)};
}

// Issue 37: a second lockstepd on the same state directory served its own jobs from the same
// store and took the pid file. It is refused, and the first serves on; a crash never leaves
// the lock behind.
TEST(Cluster, RegressionASecondLockstepdOnOneStateDirectoryIsRefused) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"--wrap", "true"});
  ASSERT_GT(id, 0u);
  const std::string second = std::string(LOCKSTEP_BIN_DIR) + "/lockstepd --config " + c.dir() +
                             "/cluster.yaml --state-dir " + c.dir() + " --socket " + c.dir() +
                             "/second.sock --log-file -";
  auto [out, status] = RunShell(second);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status << out;
  EXPECT_TRUE(Contains(out, "another lockstepd (pid ")) << out;
  EXPECT_TRUE(Contains(out, " serves the state directory " + c.dir() +
                                ": stop it first (lockstep down), or give this one another "
                                "--state-dir"))
      << out;
  EXPECT_FALSE(std::ifstream(c.dir() + "/second.sock").good());
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");  // the first serves on

  c.KillDaemon();  // SIGKILL: the kernel drops its lock
  c.StartDaemon();
  EXPECT_TRUE(c.WaitNodes("idle", 2, 30));
  EXPECT_EQ(c.Job(id)["state"], "COMPLETED");
}


// Issue 37: a job submitted without -A by a user whose default account is acct_a showed
// Account=root everywhere while its limits were acct_a's, and `squeue -A acct_a` missed it.
TEST(Cluster, RegressionAJobWithoutAccountShowsItsUsersDefaultAccountEverywhere) {
  ClusterOptions o;
  o.extra_yaml = "accounts:\n  - {name: acct_a}\n  - {name: acct_b}\n"
                 "users:\n  - {name: root, account: acct_a}\n  - {name: root, account: acct_b}\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"--wrap", "echo account=$SLURM_JOB_ACCOUNT"});
  ASSERT_GT(id, 0u);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  const std::string sid = std::to_string(id);
  EXPECT_EQ(c.ReadFile("slurm-" + sid + ".out"), "account=acct_a\n");
  EXPECT_EQ(c.Run({"squeue", "-h", "-t", "all", "-A", "acct_a", "-o", "%i %a"}).out,
            sid + " acct_a\n");
  EXPECT_EQ(c.Run({"squeue", "-h", "-t", "all", "-A", "acct_b", "-o", "%i"}).out, "");
  EXPECT_TRUE(Contains(c.Run({"scontrol", "show", "job", sid}).out, " Account=acct_a "));
  EXPECT_EQ(c.Run({"sacct", "-j", sid, "-X", "-n", "-P", "-o", "Account"}).out, "acct_a\n");
  // Naming the other account still charges it.
  unsigned long long b = Submit(c, {"-A", "acct_b", "--wrap", "true"});
  ASSERT_GT(b, 0u);
  EXPECT_EQ(c.Run({"squeue", "-h", "-t", "all", "-A", "acct_b", "-o", "%i"}).out,
            std::to_string(b) + "\n");
}


// Issue 37: -t above the partition's MaxTime was refused; Slurm (EnforcePartLimits=NO, its
// default) accepts it and leaves it pending with PartitionTimeLimit. Refused when enforced.
TEST(Cluster, RegressionATimeLimitAboveMaxTimePendsUnlessPartitionLimitsAreEnforced) {
  ClusterOptions o;
  o.extra_yaml = "partitions:\n  - {name: gpu, nodes: ALL, default: true, max_time: \"1:00:00\"}\n";
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"-t", "2:00:00", "--wrap", "true"});
  ASSERT_GT(id, 0u);
  const std::string sid = std::to_string(id);
  unsigned long long fits = Submit(c, {"-t", "30", "--wrap", "true"});
  EXPECT_EQ(c.WaitJob(fits)["state"], "COMPLETED");  // a pass has placed what it could
  EXPECT_EQ(c.Run({"squeue", "-h", "-j", sid, "-o", "%T %r"}).out, "PENDING PartitionTimeLimit\n");
  EXPECT_TRUE(Contains(c.Run({"scontrol", "show", "config"}).out, "EnforcePartLimits       = NO"));
  // Lowered to fit, it runs.
  EXPECT_EQ(c.Run({"scontrol", "update", "JobId=" + sid, "TimeLimit=45"}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");

  ClusterOptions enforced = o;
  enforced.extra_yaml += "scheduler:\n  enforce_part_limits: yes\n";
  Cluster e(enforced);
  ASSERT_TRUE(e.Start());
  CommandResult r = e.Run({"sbatch", "-t", "2:00:00", "--wrap", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "Requested time limit is invalid (missing or exceeds some limit)"))
      << r.err;
  EXPECT_EQ(e.Run({"squeue", "-h", "-t", "all", "-o", "%i"}).out, "");
}


// Issue 37: a victim of preemption in requeue mode ended FAILED 0:15 with Restarts=0; in cancel
// mode CANCELLED. Requeue mode puts it back in the queue (Restarts=1) after its grace, and it
// runs again to COMPLETED; cancel mode ends it PREEMPTED, as Slurm does.
TEST(Cluster, RegressionPreemptedJobsAreRequeuedOrEndPreempted) {
  for (const char* mode : {"requeue", "cancel"}) {
    SCOPED_TRACE(mode);
    ClusterOptions o;
    o.nodes = 1;
    o.extra_yaml = std::string("partitions:\n") +
                   "  - {name: low, nodes: ALL, default: true, priority_tier: 1, preempt_mode: " +
                   mode + "}\n  - {name: high, nodes: ALL, priority_tier: 10}\n"
                   "scheduler:\n  preempt_type: partition_priority\n";
    Cluster c(o);
    ASSERT_TRUE(c.Start());
    // The victim takes the node, counts its runs in a file, and runs long on its first run only.
    const std::string runs = c.work() + "/runs";
    unsigned long long victim = Submit(
        c, {"-p", "low", "--exclusive", "--wrap",
            "echo run >> " + runs + "; [ $(wc -l < " + runs + ") -gt 1 ] || sleep 300"});
    ASSERT_GT(victim, 0u);
    ASSERT_TRUE(WaitFor([&] { return c.Job(victim).value("state", "") == "RUNNING"; },
                        std::chrono::seconds(20)));
    unsigned long long high = Submit(c, {"-p", "high", "--exclusive", "--wrap", "sleep 1"});
    ASSERT_GT(high, 0u);
    EXPECT_EQ(c.WaitJob(high, 60)["state"], "COMPLETED");
    const std::string sid = std::to_string(victim);
    if (std::string(mode) == "requeue") {
      nlohmann::json j = c.WaitJob(victim, 60);
      EXPECT_EQ(j["state"], "COMPLETED") << j.dump();
      EXPECT_EQ(j.value("restart_count", -1), 1) << j.dump();
      EXPECT_EQ(c.ReadFile(runs), "run\nrun\n");
      EXPECT_TRUE(Contains(c.Run({"scontrol", "show", "job", sid}).out, "Restarts=1"));
    } else {
      nlohmann::json j = c.WaitJob(victim, 60);
      EXPECT_EQ(j["state"], "PREEMPTED") << j.dump();
      EXPECT_EQ(c.Run({"sacct", "-j", sid, "-X", "-n", "-P", "-o", "State"}).out, "PREEMPTED\n");
      EXPECT_EQ(c.ReadFile(runs), "run\n");
    }
  }
}


// Issue 37: scontrol update NodeName= of a host list was refused; Slurm takes "n[1-2]" and
// "n1,n2". A list naming an unknown node changes nothing.
TEST(Cluster, RegressionScontrolUpdateNodeNameTakesAHostList) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"scontrol", "update", "NodeName=node[1-2]", "State=DRAIN",
                           "Reason=maintenance"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Run({"sinfo", "-h", "-N", "-o", "%N %T %E"}).out,
            "node1 drained maintenance\nnode2 drained maintenance\n");
  r = c.Run({"scontrol", "update", "NodeName=node1,node2", "State=RESUME"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(c.WaitNodes("idle", 2));
  r = c.Run({"scontrol", "update", "NodeName=node1,nosuch", "State=DRAIN", "Reason=x"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "Invalid node name specified: nosuch")) << r.err;
  EXPECT_EQ(c.Run({"sinfo", "-h", "-N", "-o", "%N %T"}).out, "node1 idle\nnode2 idle\n");
}


// Issue 37: squeue %b for --gpus=1 showed gres:gpu:1; Slurm keeps -G as TresPerJob and %b (the
// per-node request) is N/A. --gres and --gpus-per-node are per node, with their type.
TEST(Cluster, RegressionSqueueTresPerNodeIsThePerNodeRequestAlone) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long per_job = Submit(c, {"--hold", "--gpus=1", "--wrap", "true"});
  unsigned long long per_node = Submit(c, {"--hold", "--gres=gpu:2", "--wrap", "true"});
  ASSERT_GT(per_job, 0u);
  ASSERT_GT(per_node, 0u);
  EXPECT_EQ(c.Run({"squeue", "-h", "-j", std::to_string(per_job), "-o", "%b"}).out, "N/A\n");
  EXPECT_EQ(c.Run({"squeue", "-h", "-j", std::to_string(per_node), "-o", "%b"}).out,
            "gres:gpu:2\n");
  const std::string shown = c.Run({"scontrol", "show", "job", std::to_string(per_job)}).out;
  EXPECT_TRUE(Contains(shown, "TresPerJob=gres:gpu:1")) << shown;
  EXPECT_FALSE(Contains(shown, "TresPerNode=")) << shown;
}

}  // namespace
}  // namespace lockstep::testing
