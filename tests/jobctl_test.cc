// End to end: the commands that act on running jobs (issue 16, part 2) through the real CLI,
// lockstepd and agent: scontrol suspend/resume (the tasks really stop and go on, the limit moves
// by the time suspended, scancel of a suspended job), sstat and sattach.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster_harness.h"
#include "tests/process_state.h"

namespace lockstep::testing {
namespace {

using std::chrono::seconds;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.substr(std::min(s.size(), s.find_first_not_of(' ')));
}

std::size_t Lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

class Jobctl : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ClusterOptions o;
    o.agent_args = {"--acct-gather-frequency", "1"};  // sstat's samples every second
    cluster_ = new Cluster(o);
    ASSERT_TRUE(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  // A job printing a counter every 0.1 s to `out`, its shell's pid in `pidfile`.
  static unsigned long long Counter(const std::string& out, const std::string& pidfile,
                                    const std::string& limit = "5") {
    return Submit(*cluster_, {"-t", limit, "-o", out, "--wrap",
                              "echo $$ > " + pidfile +
                                  "; i=0; while :; do i=$((i+1)); echo $i; sleep 0.1; done"});
  }
  static pid_t PidIn(const std::string& file) {
    std::string text;
    EXPECT_TRUE(WaitFor([&] { return !(text = cluster_->ReadFile(file)).empty(); }, seconds(20)));
    return text.empty() ? -1 : static_cast<pid_t>(std::stol(text));
  }
  static Cluster* cluster_;
};
Cluster* Jobctl::cluster_ = nullptr;

TEST_F(Jobctl, SuspendStopsTheTasksAndResumeLetsThemGoOnWithTheLimitExtended) {
  Cluster& c = *cluster_;
  const unsigned long long id = Counter("count.out", "count.pid");
  ASSERT_GT(id, 0u);
  const pid_t shell = PidIn("count.pid");
  ASSERT_TRUE(WaitFor([&] { return Lines(c.ReadFile("count.out")) >= 3; }, seconds(20)));
  const std::string ids = std::to_string(id);

  CommandResult r = c.Run({"scontrol", "suspend", ids});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Trim(c.Run({"squeue", "-h", "-j", ids, "-o", "%t"}).out), "S");
  EXPECT_EQ(Trim(c.Run({"squeue", "-h", "-j", ids, "-o", "%T"}).out), "SUSPENDED");
  EXPECT_EQ(Trim(c.Run({"sacct", "-n", "-X", "-j", ids, "-o", "State"}).out), "SUSPENDED");
  // Really stopped: frozen in its cgroup, or stopped by SIGSTOP.
  ASSERT_TRUE(WaitFor([&] { return IsStopped(shell); }, seconds(10)));
  const std::size_t at_suspend = Lines(c.ReadFile("count.out"));
  // Time passes (a whole job runs to its end), and the counter has not moved.
  const unsigned long long other =
      Submit(c, {"-t", "1", "--wrap", "for i in 1 2 3 4 5; do sleep 0.1; done"});
  EXPECT_EQ(c.WaitJob(other)["state"], "COMPLETED");
  EXPECT_EQ(Lines(c.ReadFile("count.out")), at_suspend) << "the counter ran on while suspended";
  EXPECT_EQ(c.Job(id)["state"], "SUSPENDED");

  r = c.Run({"scontrol", "resume", ids});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(WaitFor([&] { return Lines(c.ReadFile("count.out")) > at_suspend + 2; }, seconds(20)))
      << "the counter did not go on after resume";
  nlohmann::json j = c.Job(id);
  EXPECT_EQ(j["state"], "RUNNING");
  const long long suspended = j.value("suspended_seconds", -1LL);
  EXPECT_GE(suspended, 0);
  // scontrol show job: EndTime moved by the time suspended (start + 5 min + suspended).
  CommandResult show = c.Run({"scontrol", "show", "job", ids});
  char stamp[32];
  const time_t end = static_cast<time_t>(j["start_time"].get<long long>() + 300 + suspended);
  std::strftime(stamp, sizeof stamp, "EndTime=%Y-%m-%dT%H:%M:%S", std::localtime(&end));
  EXPECT_NE(show.out.find(stamp), std::string::npos) << stamp << "\n" << show.out;

  // scancel of a suspended job: resumed, then ended; nothing of it is left.
  ASSERT_EQ(c.Run({"scontrol", "suspend", ids}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return IsStopped(shell); }, seconds(10)));
  ASSERT_EQ(c.Run({"scancel", ids}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(id)["state"], "CANCELLED");
  EXPECT_TRUE(WaitFor([&] { return !IsAlive(shell); }, seconds(10)));
}

TEST_F(Jobctl, SuspendAndResumeRefuseAsSlurmDoes) {
  Cluster& c = *cluster_;
  const unsigned long long id = Counter("refuse.out", "refuse.pid");
  ASSERT_GT(id, 0u);
  PidIn("refuse.pid");
  const std::string ids = std::to_string(id);
  if (::getuid() == 0) {
    CommandResult r = c.Run({"scontrol", "suspend", ids}, "", 65534);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "Access/permission denied for job " + ids + "\n");
  }
  CommandResult r = c.Run({"scontrol", "resume", ids});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Job is not suspended for job " + ids + "\n");
  r = c.Run({"scontrol", "suspend", "999999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Invalid job id specified for job 999999\n");
  r = c.Run({"scontrol", "suspend", "abc"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Invalid job id specified for job abc\n");
  EXPECT_EQ(c.Job(id)["state"], "RUNNING");
  ASSERT_EQ(c.Run({"scancel", ids}).exit_code, 0);
  r = c.Run({"scontrol", "suspend", ids});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("Job", 0), 0u) << r.err;
}

// sstat's AveCPU/MinCPU ("MM:SS.mmm", "HH:MM:SS", "D-HH:MM:SS") in seconds; -1 if not one.
double CpuSeconds(const std::string& t) {
  int d = 0, h = 0, m = 0, sec = 0, ms = 0;
  if (std::sscanf(t.c_str(), "%d-%d:%d:%d", &d, &h, &m, &sec) == 4)
    return d * 86400 + h * 3600 + m * 60 + sec;
  if (t.find('.') != std::string::npos && std::sscanf(t.c_str(), "%d:%d.%d", &m, &sec, &ms) == 3)
    return m * 60 + sec + ms / 1000.0;
  if (std::sscanf(t.c_str(), "%d:%d:%d", &h, &m, &sec) == 3) return h * 3600 + m * 60 + sec;
  return -1;
}

std::vector<std::string> SplitBars(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(Trim(line));
  std::string f;
  while (std::getline(in, f, '|')) out.push_back(f);
  return out;
}

TEST_F(Jobctl, SstatShowsABusyLoopsGrowingCpuTimeAndItsMemory) {
  Cluster& c = *cluster_;
  const unsigned long long id =
      Submit(c, {"-t", "5", "-n", "2", "--wrap", "srun sh -c 'while :; do :; done'"});
  ASSERT_GT(id, 0u);
  const std::string ids = std::to_string(id);
  const std::vector<std::string> args = {
      "sstat", "-n", "-P", "--noconvert",
      "-j",    ids,  "-o", "JobID,AveCPU,MinCPU,MaxRSS,MaxRSSNode,NTasks,MaxVMSize"};
  std::vector<std::string> first;
  ASSERT_TRUE(WaitFor(
      [&] {
        CommandResult r = c.Run(args);
        first = SplitBars(r.out);
        return r.exit_code == 0 && first.size() == 7 && CpuSeconds(first[1]) > 0;
      },
      seconds(30)))
      << c.Run(args).err;
  // Without a step, sstat shows the job's first srun step: its two busy tasks.
  EXPECT_EQ(first[0], ids + ".0");
  EXPECT_EQ(first[5], "2");
  EXPECT_EQ(first[4], "node1");
  const long long rss = std::stoll(first[3]), vm = std::stoll(first[6]);
  EXPECT_GT(rss, 100 * 1024) << "a shell's resident memory is more than 100 KiB";
  EXPECT_LT(rss, 1LL << 30);
  EXPECT_GE(vm, rss);
  // CPU time grows while it runs, and a busy loop's is close to its wall time.
  const double cpu1 = CpuSeconds(first[1]);
  std::vector<std::string> later;
  ASSERT_TRUE(WaitFor(
      [&] {
        later = SplitBars(c.Run(args).out);
        return later.size() == 7 && CpuSeconds(later[1]) >= cpu1 + 1;
      },
      seconds(30)));
  EXPECT_GT(CpuSeconds(later[2]), 0) << "each task of the step is busy";

  // The batch step by name, and every step with -a.
  CommandResult batch = c.Run({"sstat", "-n", "-P", "-j", ids + ".batch", "-o", "JobID,NTasks"});
  EXPECT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_EQ(Trim(batch.out), ids + ".batch|1");
  CommandResult every = c.Run({"sstat", "-a", "-n", "-p", "-j", ids, "-o", "JobID"});
  EXPECT_EQ(every.out, ids + ".batch|\n" + ids + ".0|\n") << every.err;
  // The default columns are Slurm's, under a header.
  CommandResult wide = c.Run({"sstat", "-j", ids});
  EXPECT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(wide.out.rfind(
                "JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS", 0),
            0u)
      << wide.out;

  // Another user sees nothing of it; unknown jobs and steps get Slurm's errors.
  if (::getuid() == 0) {
    CommandResult other = c.Run({"sstat", "-n", "-j", ids}, "", 65534);
    EXPECT_EQ(other.exit_code, 1);
    EXPECT_EQ(other.out, "");
    EXPECT_EQ(other.err.rfind("sstat: error: couldn't get steps for job " + ids, 0), 0u)
        << other.err;
  }
  CommandResult none = c.Run({"sstat", "-n", "-j", ids + ".7"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "sstat: error: StepId=" + ids + ".7 not found running.\n");
  CommandResult unknown = c.Run({"sstat", "-j", "999999"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.err,
            "sstat: error: couldn't get steps for job 999999: Invalid job id specified\n");
  EXPECT_EQ(c.Run({"sstat"}).err, "sstat: error: You didn't give me any jobs to stat.\n");
  ASSERT_EQ(c.Run({"scancel", ids}).exit_code, 0);
  EXPECT_EQ(c.WaitJob(id)["state"], "CANCELLED");
}

TEST_F(Jobctl, SattachStreamsWhatTheStepPrintsAfterItAttachedAndExitsWithItsCode) {
  Cluster& c = *cluster_;
  // Two tasks print a line, wait for the file "go" (made once sattach is attached), print more
  // on stdout and stderr, and exit 3.
  const unsigned long long id =
      Submit(c, {"-t", "5", "-n", "2", "--wrap",
                 "srun sh -c 'echo before$SLURM_PROCID; while [ ! -e go ]; do sleep 0.05; done; "
                 "echo after$SLURM_PROCID; echo err$SLURM_PROCID >&2; exit 3'"});
  ASSERT_GT(id, 0u);
  const std::string step = std::to_string(id) + ".0";
  ASSERT_TRUE(WaitFor(
      [&] {
        return c.Get("/api/v1/jobs/" + std::to_string(id) + "/steps/0").value("state", "") ==
               "RUNNING";
      },
      seconds(20)));
  // sattach's stdout, as the harness captures it, while it runs: once it shows what the
  // tasks printed before, sattach is attached, and the test lets the tasks go on.
  const std::string captured = c.dir() + "/cmd.out." + std::to_string(::getpid());
  std::remove(captured.c_str());
  std::thread release([&] {
    WaitFor([&] { return ReadAll(captured).find("before1") != std::string::npos; }, seconds(20));
    std::ofstream(c.work() + "/go") << "";
  });
  CommandResult r = c.Run({"sattach", "-l", "--output-filter=1", step});
  release.join();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("1: before1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1: after1\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("after0"), std::string::npos) << "--output-filter=1 shows task 1 only";
  EXPECT_NE(r.err.find("0: err0\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1: err1\n"), std::string::npos) << r.err;
  EXPECT_EQ(c.WaitJob(id)["state"], "FAILED");
  // The step has ended: nothing to attach to; nor to a batch step or an unknown one.
  CommandResult ended = c.Run({"sattach", step});
  EXPECT_EQ(ended.exit_code, 1);
  EXPECT_EQ(ended.err.rfind("sattach: error: StepId=" + step + " is not running", 0), 0u)
      << ended.err;
  EXPECT_EQ(c.Run({"sattach", std::to_string(id) + ".batch"}).exit_code, 1);
  CommandResult bad = c.Run({"sattach", "nonsense"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "sattach: error: Invalid job step id nonsense: expected JOBID.STEPID\n");
}

// sattach's stdin reaches the step's reading task (task 0), after what its srun sends, and its
// end of file ends the task's input: `cat` prints the lines and ends, and so does sattach.
TEST_F(Jobctl, SattachForwardsItsStdinToTheStep) {
  Cluster& c = *cluster_;
  // sleep keeps srun's stdin open (a pipe with nothing in it), so the step reads input.
  const unsigned long long id = Submit(c, {"-t", "5", "--wrap", "sleep 60 | srun cat"});
  ASSERT_GT(id, 0u);
  const std::string where = "/api/v1/jobs/" + std::to_string(id) + "/steps/0";
  ASSERT_TRUE(WaitFor([&] { return c.Get(where).value("state", "") == "RUNNING"; }, seconds(20)));
  EXPECT_TRUE(c.Get(where).value("input", false));
  const std::string step = std::to_string(id) + ".0";
  CommandResult r = c.Run({"sattach", step}, "", -1, "typed one\ntyped two\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "typed one\ntyped two\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(c.Get(where).value("state", ""), "COMPLETED");
  // srun printed what cat read into the job's output file too.
  EXPECT_TRUE(WaitFor(
      [&] {
        return c.ReadFile("slurm-" + std::to_string(id) + ".out") == "typed one\ntyped two\n";
      },
      seconds(10)));
  ASSERT_EQ(c.Run({"scancel", std::to_string(id)}).exit_code, 0);  // sleep 60 still runs
  EXPECT_EQ(c.WaitJob(id)["state"], "CANCELLED");
}

}  // namespace
}  // namespace lockstep::testing
