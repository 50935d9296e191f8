// End to end: the Slurm command lines of issue 16 that failed, run through the real CLI against
// lockstepd and an agent, each with the exit code, output and leading error words Slurm gives.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

struct Expect {
  std::vector<std::string> args;
  int exit_code;
  std::string out;  // every line of it must be in stdout ("" : anything)
  std::string err;  // stderr starts with it ("" : empty stderr)
};

void Check(Cluster& c, const Expect& e, const std::string& stdin_text = "") {
  CommandResult r = c.Run(e.args, "", -1, stdin_text);
  std::string label = ::testing::PrintToString(e.args);
  EXPECT_EQ(r.exit_code, e.exit_code) << label << "\n" << r.out << r.err;
  std::size_t start = 0;
  while (start < e.out.size()) {
    std::size_t nl = e.out.find('\n', start);
    std::string line = e.out.substr(start, nl - start);
    EXPECT_NE(r.out.find(line), std::string::npos) << label << ": no '" << line << "' in\n"
                                                   << r.out;
    start = nl == std::string::npos ? e.out.size() : nl + 1;
  }
  if (e.err.empty())
    EXPECT_EQ(r.err, "") << label;
  else
    EXPECT_EQ(r.err.rfind(e.err, 0), 0u) << label << ": stderr\n" << r.err;
}

class SlurmCompat : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new Cluster();
    ASSERT_TRUE(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static Cluster* cluster_;
};
Cluster* SlurmCompat::cluster_ = nullptr;

TEST_F(SlurmCompat, SbatchReadsTheScriptFromStdinAfterOptionValues) {
  Cluster& c = *cluster_;
  const std::string script = "#!/bin/sh\necho from-stdin\n";
  CommandResult r = c.Run({"sbatch", "--parsable", "-p", "batch", "-t", "5"}, "", -1, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = c.WaitJob(std::stoull(r.out));
  EXPECT_EQ(j["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + std::to_string(std::stoull(r.out)) + ".out"), "from-stdin\n");
  r = c.Run({"sbatch", "--parsable", "-J", "x"}, "", -1, script);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(c.Job(std::stoull(r.out))["name"], "x");
}

TEST_F(SlurmCompat, SbatchWaitReturnsWithTheJobsExitCode) {
  Cluster& c = *cluster_;
  CommandResult r = c.Run({"sbatch", "--parsable", "-W", "-t", "5", "--wrap", "exit 7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(c.Job(std::stoull(r.out))["state"], "FAILED");
  r = c.Run({"sbatch", "--wait", "-t", "5", "--wrap", "true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Submitted batch job ", 0), 0u);
}

TEST_F(SlurmCompat, BadOptionsAndUnknownJobsAsSlurm) {
  Cluster& c = *cluster_;
  const Expect cases[] = {
      {{"squeue", "-j", "999999"}, 1, "", "slurm_load_jobs error: Invalid job id specified"},
      {{"squeue", "--bogus"}, 1, "",
       "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information"},
      {{"sinfo", "--bogus"}, 1, "", "sinfo: unrecognized option '--bogus'"},
      {{"sacct", "--bogus"}, 1, "", "sacct: unrecognized option '--bogus'"},
      {{"sprio", "--bogus"}, 1, "", "sprio: unrecognized option '--bogus'"},
      {{"scancel", "--bogus"}, 1, "", "scancel: unrecognized option '--bogus'"},
      {{"squeue", "--st"}, 1, "", "squeue: option '--st' is ambiguous"},
      {{"squeue", "foo"}, 1, "", "squeue: error: Unrecognized option: foo"},
      {{"squeue", "-t", "FOO"}, 1, "", "squeue: error: Invalid job state specified: FOO"},
      {{"sinfo", "-t", "sleepy"}, 1, "", "sinfo: error: Invalid node state specified: sleepy"},
      {{"scancel"}, 1, "", "scancel: error: No job identification provided"},
      {{"scancel", "999999"}, 0, "", ""},  // a plain cancel of a job that is gone: silent, 0
      {{"scancel", "-u", "root", "999999"}, 1, "",
       "scancel: error: Kill job error on job id 999999: Invalid job id specified"},
      {{"scancel", "-s", "NOPE", "1"}, 1, "", "scancel: error: Invalid signal specified: NOPE"},
      {{"sbatch", "--bogus"}, 255, "",
       "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information"},
      {{"squeue", "--noh", "--usage"}, 0, "Usage: squeue", ""},
      {{"sinfo", "--help"}, 0, "Usage: sinfo [OPTIONS]\n  -n, --nodes=NODES", ""},
      {{"sbatch", "--help"}, 0, "Usage: sbatch [OPTIONS...] script [args...]\n\n  -J, --job-name=jobname", ""},
      {{"sbatch", "-h"}, 0, "Usage: sbatch", ""},
      {{"srun", "--usage"}, 0, "Usage: srun [OPTIONS...] executable [args...]", ""},
      {{"srun", "--help"}, 0, "--pty", ""},
      {{"srun", "--pty", "--input=1", "bash"}, 1, "",
       "srun: error: --pty gives task 0 the terminal: --input=1 cannot be used with it"},
      {{"srun", "--bogus", "true"}, 255, "",
       "srun: unrecognized option '--bogus'\nTry \"srun --help\" for more information"},
      {{"salloc", "--signal=NOPE", "true"}, 255, "", "salloc: error: --signal: 'NOPE' is not"},
  };
  for (const Expect& e : cases) Check(c, e);
}

TEST_F(SlurmCompat, FiltersAndFormatsOfSqueueSinfoSacct) {
  Cluster& c = *cluster_;
  unsigned long long held = Submit(c, {"--hold", "-J", "heldjob", "-t", "5", "--wrap", "true"});
  unsigned long long run = Submit(c, {"-J", "runner", "-t", "5", "--wrap", "sleep 60"});
  ASSERT_GT(held, 0u);
  ASSERT_GT(run, 0u);
  ASSERT_TRUE(WaitFor([&] { return c.Job(run)["state"] == "RUNNING"; }, std::chrono::seconds(20)));
  const std::string h = std::to_string(held), r = std::to_string(run);
  const Expect cases[] = {
      {{"squeue", "--noh", "-n", "heldjob", "-o", "%i %j"}, 0, h + " heldjob\n", ""},
      {{"squeue", "-h", "--me", "-n", "runner", "-o", "%j"}, 0, "runner\n", ""},
      {{"squeue", "-h", "-w", "node1", "-o", "%j %N"}, 0, "runner node1\n", ""},
      {{"squeue", "-h", "-O", "jobid:8,name:10,statecompact:3", "-j", h}, 0,
       h + std::string(8 - h.size(), ' ') + "heldjob   PD \n", ""},
      {{"sinfo", "-h", "-n", "node2", "-o", "%N %t"}, 0, "node2 idle\n", ""},
      {{"sinfo", "-h", "-t", "mix", "-o", "%N"}, 0, "node1\n", ""},
      {{"sinfo", "-h", "-p", "batch", "-r", "-O", "partition:6,nodes:.4"}, 0, "batch    2\n", ""},
      {{"sacct", "-X", "-n", "-S", "now-1hour", "--name", "runner", "-s", "R", "-o", "jobid,state"},
       0, r, ""},
      {{"scancel", "--me", "-n", "heldjob"}, 0, "", ""},
  };
  for (const Expect& e : cases) Check(c, e);
  EXPECT_EQ(c.Job(held)["state"], "CANCELLED");
  EXPECT_EQ(c.Job(run)["state"], "RUNNING");
  Check(c, {{"scancel", "-p", "batch", "-n", "runner"}, 0, "", ""});
  EXPECT_TRUE(WaitFor([&] { return c.Job(run)["state"] == "CANCELLED"; },
                      std::chrono::seconds(20)));
}

TEST_F(SlurmCompat, ArraysDisplayAndAddressAsSlurm) {
  Cluster& c = *cluster_;
  unsigned long long a = Submit(c, {"--hold", "--array=1-8%2", "-t", "5", "--wrap", "true"});
  ASSERT_GT(a, 0u);
  const std::string id = std::to_string(a);
  Check(c, {{"squeue", "-h", "-j", id, "-o", "%i %T"}, 0, id + "_[1-8%2] PENDING\n", ""});
  Check(c, {{"squeue", "-h", "-j", id + "_2", "-o", "%i"}, 0, id + "_2\n", ""});
  Check(c, {{"squeue", "-h", "-r", "-j", id, "-o", "%i"}, 0, id + "_1\n" + id + "_8\n", ""});
  Check(c, {{"scancel", id + "_[1-2]"}, 0, "", ""});
  Check(c, {{"squeue", "-h", "-j", id, "-o", "%i"}, 0, id + "_[3-8%2]\n", ""});
  Check(c, {{"scancel", id}, 0, "", ""});
  Check(c, {{"squeue", "-h", "-j", id, "-t", "PD", "-o", "%i"}, 0, "", ""});
}

// A million-task array is one record in lockstepd until its tasks start (issue 13): squeue
// shows one line at once, a task is addressed and cancelled alone, a release runs tasks with
// their SLURM_ARRAY_TASK_ID, and scancel of the array cancels the rest as one (sacct's line).
TEST_F(SlurmCompat, AMillionTaskArrayIsOneRecordUntilItsTasksStart) {
  Cluster& c = *cluster_;
  unsigned long long a = Submit(c, {"--hold", "--array=0-999999", "-t", "5", "--wrap",
                                    "echo task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT"});
  ASSERT_GT(a, 0u);
  const std::string id = std::to_string(a);
  Check(c, {{"squeue", "-h", "-j", id, "-o", "%i %T %r"}, 0,
            id + "_[0-999999] PENDING JobHeldUser\n", ""});
  Check(c, {{"squeue", "-h", "-j", id + "_500000", "-o", "%i %T"}, 0,
            id + "_500000 PENDING\n", ""});
  Check(c, {{"scancel", id + "_500000"}, 0, "", ""});
  Check(c, {{"squeue", "-h", "-j", id, "-o", "%i"}, 0, id + "_[0-499999,500001-999999]\n", ""});
  Check(c, {{"scontrol", "release", id}, 0, "", ""});
  // Task k's job id is the array's id + k.
  EXPECT_EQ(c.WaitJob(a + 1, 30)["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + id + "_1.out"), "task 1 of 1000000\n");
  Check(c, {{"scancel", id}, 0, "", ""});
  Check(c, {{"squeue", "-h", "-j", id, "-t", "PD", "-o", "%i"}, 0, "", ""});
  CommandResult acct = c.Run({"sacct", "-n", "-X", "-j", id, "-o", "JobID%40,State"});
  // The tasks that never started: one line, "1_[111-499999,500001-999999] CANCELLED".
  std::size_t rest = acct.out.find(id + "_[");
  ASSERT_NE(rest, std::string::npos) << acct.out;
  std::size_t line_end = acct.out.find('\n', rest);
  std::string line = acct.out.substr(rest, line_end - rest);
  EXPECT_NE(line.find("500001-999999]"), std::string::npos) << line;
  EXPECT_NE(line.find("CANCELLED"), std::string::npos) << line;
  EXPECT_NE(acct.out.find(id + "_500000 "), std::string::npos) << acct.out;
}

// --signal=[B:]SIG@TIME: the signal comes TIME seconds before the time limit (1 minute here), to
// the batch shell with B:, to the job's steps without; the job then ends as it chooses.
TEST_F(SlurmCompat, SignalBeforeTheTimeLimit) {
  Cluster& c = *cluster_;
  // B: the batch shell traps USR1 58 s before its limit, about 2 s after it starts.
  unsigned long long batch = Submit(
      c, {"-t", "1", "--signal=B:USR1@58", "--wrap",
          "trap 'echo got-usr1; exit 0' USR1; i=0; while [ $i -lt 600 ]; do sleep 0.1; "
          "i=$((i+1)); done; echo no-signal"});
  // Without B:, the step started by srun inside the job gets it.
  unsigned long long step = Submit(
      c, {"-t", "1", "--signal=USR2@58", "--wrap",
          "srun sh -c \"trap 'echo step-got-usr2; exit 0' USR2; i=0; while [ \\$i -lt 600 ]; "
          "do sleep 0.1; i=\\$((i+1)); done; echo no-signal\""});
  ASSERT_GT(batch, 0u);
  ASSERT_GT(step, 0u);
  nlohmann::json b = c.WaitJob(batch, 40), s = c.WaitJob(step, 40);
  // The shell may also report its `sleep` child killed by the signal: the whole process group
  // gets it (docs/commands.md), where Slurm's B: signals the shell alone.
  auto ends_with = [](const std::string& text, const std::string& tail) {
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(),
                                                      tail) == 0;
  };
  EXPECT_EQ(b["state"], "COMPLETED");
  std::string out = c.ReadFile("slurm-" + std::to_string(batch) + ".out");
  EXPECT_TRUE(ends_with(out, "got-usr1\n")) << out;
  EXPECT_EQ(s["state"], "COMPLETED");
  out = c.ReadFile("slurm-" + std::to_string(step) + ".out");
  EXPECT_TRUE(ends_with(out, "step-got-usr2\n")) << out;
}

// srun's own options from generated command lines: --multi-prog, -D, --export, and the ones
// that only need accepting (--mpi, --cpu-bind, --exact, --overlap, -u).
TEST_F(SlurmCompat, SrunOptionsOfToolsAndLaunchers) {
  Cluster& c = *cluster_;
  {
    std::ofstream conf(c.work() + "/prog.conf");
    conf << "# rank program args\n0 echo leader\n1-2 echo worker%t of%o\n";
  }
  unsigned long long id = Submit(
      c, {"-n", "3", "-t", "5", "--wrap",
          "srun --mpi=pmix --cpu-bind=cores --exact --overlap -u --multi-prog prog.conf | sort; "
          "FOO=outer srun -n 1 -D /tmp --export=NONE,FOO=bar sh -c 'echo $(pwd) $FOO ${HOME:-nohome}'"});
  ASSERT_GT(id, 0u);
  nlohmann::json j = c.WaitJob(id, 30);
  EXPECT_EQ(j["state"], "COMPLETED");
  EXPECT_EQ(c.ReadFile("slurm-" + std::to_string(id) + ".out"),
            "leader\nworker1 of0\nworker2 of1\n/tmp bar nohome\n");
}

TEST_F(SlurmCompat, ScontrolPingOnelinerRequeueholdAndRelativeTimeLimit) {
  Cluster& c = *cluster_;
  unsigned long long id = Submit(c, {"--hold", "-J", "sc", "-t", "10", "-o", "out-%j.txt",
                                     "-e", "err-%j.txt", "--wrap", "true"});
  ASSERT_GT(id, 0u);
  const std::string s = std::to_string(id);
  Check(c, {{"scontrol", "ping"}, 0, " is UP\n", ""});
  Check(c, {{"scontrol", "show", "job", s}, 0,
            "StdOut=" + c.work() + "/out-" + s + ".txt\nStdErr=" + c.work() + "/err-" + s + ".txt",
            ""});
  CommandResult r = c.Run({"scontrol", "-o", "show", "job", s});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_EQ(r.out.rfind("JobId=" + s + " JobName=sc ", 0), 0u) << r.out;
  Check(c, {{"scontrol", "update", "JobId=" + s, "TimeLimit=+5"}, 0, "", ""});
  EXPECT_EQ(c.Job(id)["time_limit"], 15 * 60);
  Check(c, {{"scontrol", "update", "JobId=" + s, "TimeLimit=-0:30"}, 0, "", ""});
  EXPECT_EQ(c.Job(id)["time_limit"], 14 * 60 + 30);
  Check(c, {{"scancel", s}, 0, "", ""});
  unsigned long long run = Submit(c, {"-t", "5", "--wrap", "sleep 60"});
  ASSERT_GT(run, 0u);
  ASSERT_TRUE(WaitFor([&] { return c.Job(run)["state"] == "RUNNING"; }, std::chrono::seconds(20)));
  const std::string rs = std::to_string(run);
  Check(c, {{"scontrol", "requeuehold", rs}, 0, "", ""});
  EXPECT_TRUE(WaitFor([&] { return c.Job(run)["state"] == "PENDING"; }, std::chrono::seconds(20)));
  Check(c, {{"squeue", "-h", "-j", rs, "-o", "%T %r"}, 0, "PENDING job requeued in held state\n",
            ""});
  Check(c, {{"scontrol", "--bogus", "ping"}, 1, "", "scontrol: unrecognized option '--bogus'"});
  Check(c, {{"scancel", rs}, 0, "", ""});
}

// salloc: an allocation, the command run here with its variables, srun inside it starting a
// step in it, the command's exit code, and the allocation released (COMPLETED).
TEST_F(SlurmCompat, SallocRunsTheCommandInAnAllocation) {
  Cluster& c = *cluster_;
  const std::string lockstep = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
  CommandResult r = c.Run({"salloc", "-N", "1", "-J", "inter", "sh", "-c",
                           "echo job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST; '" + lockstep +
                               "' srun echo in-step; exit 3"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const std::size_t eq = r.out.find("job=");
  ASSERT_NE(eq, std::string::npos) << r.out;
  const unsigned long long id = std::stoull(r.out.substr(eq + 4));
  EXPECT_EQ(r.out, "job=" + std::to_string(id) + " nodes=node1\nin-step\n");
  // (a "queued and waiting" line may come between when the machine is slow to start it)
  const std::string s = std::to_string(id);
  EXPECT_EQ(r.err.rfind("salloc: Pending job allocation " + s + "\n", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("salloc: Granted job allocation " + s + "\n"), std::string::npos);
  const std::string last = "salloc: Relinquishing job allocation " + s + "\n";
  EXPECT_EQ(r.err.substr(r.err.size() - std::min(r.err.size(), last.size())), last) << r.err;
  EXPECT_EQ(c.WaitJob(id)["state"], "COMPLETED");
  EXPECT_EQ(c.Job(id)["name"], "inter");
}

// srun inside a two-node salloc: -N1 alone is one task on one node, and no option the whole
// allocation, one task per node (Slurm's defaults when salloc was given no -n).
TEST_F(SlurmCompat, SrunInSallocTakesItsTaskCountFromItsNodes) {
  Cluster& c = *cluster_;
  const std::string lockstep = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
  CommandResult r = c.Run({"salloc", "-N2", "sh", "-c",
                           "'" + lockstep + "' srun -N1 -l echo one; '" + lockstep +
                               "' srun -l echo all | sort"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0: one\n0: all\n1: all\n") << r.err;
}

// Output and exit code of a shell command line (the test's own, fixed strings only).
CommandResult Shell(const std::string& line) {
  CommandResult r;
  std::FILE* p = ::popen(line.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The Slurm names link to lockstep-slurm, which answers as `lockstep <command>` does and loads
// no shared library but the C library: what keeps its start-up near a trivial process's
// (bench/cli_startup.sh measures it).
TEST_F(SlurmCompat, SlurmNamesRunTheLightBinary) {
  Cluster& c = *cluster_;
  const std::string aliases = c.dir() + "/aliases";
  CommandResult r = c.Run({"install-aliases", aliases});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("lockstep-slurm"), std::string::npos) << r.out;
  // It names every link it made, and only those (issue 37: it said 9 and made 15).
  std::vector<std::string> links;
  for (const auto& entry : std::filesystem::directory_iterator(aliases))
    links.push_back(entry.path().filename().string());
  std::sort(links.begin(), links.end());
  std::string said = r.out.substr(0, r.out.find(" in "));
  std::vector<std::string> named;
  std::istringstream words(said.substr(said.find(' ') + 1));
  for (std::string w; words >> w;) named.push_back(w);
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, links) << r.out;
  EXPECT_EQ(links.size(), 16u);  // sbcast is the 16th
  const std::string env = "LOCKSTEP_STATE_DIR='" + c.dir() + "' ";
  unsigned long long id = Submit(c, {"--hold", "-J", "light", "-t", "5", "--wrap", "true"});
  ASSERT_GT(id, 0u);
  r = Shell(env + "'" + aliases + "/squeue' -h -n light -o '%i %j'");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::to_string(id) + " light\n");
  r = Shell(env + "'" + aliases + "/scancel' " + std::to_string(id) + " && echo done");
  EXPECT_EQ(r.out, "done\n");
  r = Shell("ldd '" + std::string(LOCKSTEP_BIN_DIR) + "/lockstep-slurm'");
  ASSERT_EQ(r.exit_code, 0);
  std::size_t start = 0;
  while (start < r.out.size()) {
    std::size_t nl = r.out.find('\n', start);
    std::string line = r.out.substr(start, nl - start);
    start = nl == std::string::npos ? r.out.size() : nl + 1;
    EXPECT_TRUE(line.find("linux-vdso") != std::string::npos ||
                line.find("libc.so") != std::string::npos ||
                line.find("ld-linux") != std::string::npos)
        << "lockstep-slurm needs " << line;
  }
}

}  // namespace
}  // namespace lockstep::testing
