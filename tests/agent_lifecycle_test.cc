// Issue 17, agents that outlive what they belong to, end to end with real processes:
//   - an agent killed with SIGKILL left its tasks running, untracked: the agent that starts on
//     the same spool ends them;
//   - `lockstep up` after lockstepd was killed left the earlier agent running beside the new one
//     (found polling a dead socket 1.5 hours later): up stops it, and an agent whose lockstepd
//     stays unreachable gives up.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

// Alive and not a zombie (a process whose parent died is reaped by init, or stays a zombie
// under a container's init that reaps nothing).
bool Running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

pid_t ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

TEST(AgentLifecycle, RegressionARestartedAgentEndsTheTasksItsKilledPredecessorLeft) {
  ClusterOptions o;
  o.nodes = 1;
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  const std::string pid_file = c.work() + "/task.pid";
  // The task ends by itself in 120 s should everything else fail.
  unsigned long long id = Submit(c, {"--no-requeue", "--wrap",
                                     "echo $$ > " + pid_file + ".tmp; mv " + pid_file + ".tmp " +
                                         pid_file + "; exec sleep 120"});
  ASSERT_GT(id, 0u);
  pid_t task = 0;
  ASSERT_TRUE(WaitFor([&] { return (task = ReadPidFile(pid_file)) > 0; }, std::chrono::seconds(20)))
      << "the job never started";
  ASSERT_TRUE(Running(task));
  c.KillAgent();  // SIGKILL: the task lives on, its agent gone
  ASSERT_TRUE(Running(task));
  c.StartAgent();
  EXPECT_TRUE(WaitFor([&] { return !Running(task); }, std::chrono::seconds(20)))
      << "task " << task << " of the killed agent is still running";
  // lockstepd hears from the new agent that the job is not running any more.
  nlohmann::json j = c.WaitJob(id, 60);
  EXPECT_NE(j.value("state", ""), "RUNNING") << j.dump();
  EXPECT_NE(c.ReadFile(c.dir() + "/agent.log").find("left running"), std::string::npos);
}

// `lockstep up` and `down` on a state directory of the test's; every daemon they start is
// stopped by its pid at the end, whatever happened.
class UpTwiceTest : public ::testing::Test {
 protected:
  void SetUp() override { state_ = cluster_.dir() + "/up"; }
  void TearDown() override {
    cluster_.Run({"down", "--state-dir", state_});
    for (pid_t pid : started_)
      if (Running(pid)) ::kill(pid, SIGKILL);
  }
  CommandResult Up(const std::string& cpus = "2") {
    CommandResult r = cluster_.Run({"up", "--state-dir", state_, "--nodes", "1", "--gpus-per-node",
                                    "0", "--cpus-per-node", cpus});
    started_.push_back(Pid("agent.pid"));
    started_.push_back(Pid("lockstepd.pid"));
    return r;
  }
  pid_t Pid(const std::string& file) { return ReadPidFile(state_ + "/" + file); }
  // `lockstep ARGS` against the cluster that Up started.
  CommandResult Run(const std::vector<std::string>& args) {
    return cluster_.Run(args, "", -1, "", {{"LOCKSTEP_STATE_DIR", state_}});
  }
  // A one-CPU job that runs until cancelled (or 300 s); its id once RUNNING, else 0.
  unsigned long long StartJob() {
    CommandResult r = Run({"sbatch", "--parsable", "-c", "1", "--wrap", "sleep 300"});
    if (r.exit_code != 0) return 0;
    const unsigned long long id = std::stoull(r.out);
    const bool running = WaitFor([&] { return Job(id).value("job_state", "") == "RUNNING"; },
                                 std::chrono::seconds(20));
    return running ? id : 0;
  }
  nlohmann::json Job(unsigned long long id) {
    CommandResult r = Run({"squeue", "--json", "-j", std::to_string(id)});
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("jobs") && !j["jobs"].empty() ? j["jobs"][0]
                                                                     : nlohmann::json::object();
  }

  Cluster cluster_;
  std::string state_;
  std::vector<pid_t> started_;
};

TEST_F(UpTwiceTest, RegressionUpAfterLockstepdWasKilledStopsTheEarlierAgent) {
  CommandResult r = Up();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const pid_t first_agent = Pid("agent.pid"), first_daemon = Pid("lockstepd.pid");
  ASSERT_TRUE(Running(first_agent) && Running(first_daemon));
  ::kill(first_daemon, SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return !Running(first_daemon); }, std::chrono::seconds(10)));
  r = Up("3");  // other nodes than the agent serves: it goes
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("stopping lockstep-agent (pid " + std::to_string(first_agent)),
            std::string::npos)
      << r.out;
  const pid_t second_agent = Pid("agent.pid");
  EXPECT_NE(second_agent, first_agent);
  EXPECT_TRUE(WaitFor([&] { return !Running(first_agent); }, std::chrono::seconds(15)))
      << "the first agent still runs beside the second";
  r = cluster_.Run({"down", "--state-dir", state_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitFor([&] { return !Running(second_agent); }, std::chrono::seconds(15)));
}

// Issue 27: `lockstep up` after lockstepd crashed stopped the agent (its running job with it),
// and then, the job restarted, waited for idle nodes and exited 1 ("the nodes did not become
// idle") over a cluster that was up. The agent that serves the same nodes is kept, its job
// adopted and still running, and up says so and exits 0.
TEST_F(UpTwiceTest, RegressionUpAfterACrashKeepsTheAgentAndItsRunningJob) {
  CommandResult r = Up();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const unsigned long long job = StartJob();
  ASSERT_GT(job, 0u);
  const pid_t agent = Pid("agent.pid"), daemon = Pid("lockstepd.pid");
  ::kill(daemon, SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return !Running(daemon); }, std::chrono::seconds(10)));
  r = Up();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("keeping lockstep-agent (pid " + std::to_string(agent) + ")"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("running jobs kept: " + std::to_string(job) + "\n"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("lockstep is up: 1 node x 0 GPUs (virtual; 1 mixed)"), std::string::npos)
      << r.out;
  EXPECT_EQ(Pid("agent.pid"), agent);
  nlohmann::json j = Job(job);
  EXPECT_EQ(j.value("job_state", ""), "RUNNING") << j.dump();
  EXPECT_EQ(j.value("restart_cnt", -1), 0) << j.dump();
  Run({"scancel", std::to_string(job)});
}

// Issue 27: `lockstep down` then `up` requeued the running jobs without a word, and up exited 1
// once they ran again. Down stops the nodes, which ends their tasks (nobody would reap or signal
// them), so requeueing them is what Slurm does for the jobs of a failed node; down says it will
// happen, up says it did, and exits 0.
TEST_F(UpTwiceTest, RegressionDownAndUpSayTheRunningJobsAreRequeued) {
  CommandResult r = Up();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const unsigned long long job = StartJob();
  ASSERT_GT(job, 0u);
  const std::string id = std::to_string(job);
  r = cluster_.Run({"down", "--state-dir", state_});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("lockstep down: job " + id + " running: the nodes stop and their tasks end "
                       "now; the next 'lockstep up' requeues them"),
            std::string::npos)
      << r.out;
  r = Up();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("lockstep up: job " + id +
                       " ran when lockstep stopped; their tasks ended with it: requeued " + id +
                       ";"),
            std::string::npos)
      << r.out;
  nlohmann::json j = Job(job);
  EXPECT_EQ(j.value("restart_cnt", -1), 1) << j.dump();
  Run({"scancel", id});
}

TEST(AgentLifecycle, AnAgentWhoseLockstepdStaysUnreachableGivesUp) {
  Cluster c;  // only for its directory and binaries
  const std::string log = c.dir() + "/lonely-agent.log";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(fd, 1), ::dup2(fd, 2);
    const std::string bin = std::string(LOCKSTEP_BIN_DIR) + "/lockstep-agent";
    const std::string state = c.dir() + "/lonely";
    ::execl(bin.c_str(), bin.c_str(), "--socket", (c.dir() + "/nobody-listens.sock").c_str(),
            "--state-dir", state.c_str(), "--nodes", "lonely1", "--cpus", "1", "--mem", "1G",
            "--gpus", "0", "--give-up-after", "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  const bool exited =
      WaitFor([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(30));
  if (!exited) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  ASSERT_TRUE(exited) << "the agent kept polling a socket nobody listens on";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_NE(c.ReadFile(log).find("giving up (--give-up-after 1)"), std::string::npos)
      << c.ReadFile(log);
}

}  // namespace
}  // namespace lockstep::testing
