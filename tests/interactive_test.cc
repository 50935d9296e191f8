// End to end: interactive work through real lockstepd, agent and CLI processes. srun's stdin
// forwarded to the tasks (task 0 by default, --input=all|none|TASK|FILE, end of file), and
// `srun --pty bash` driven through a real pseudo-terminal: a command's output, the terminal's
// size and its changes, Ctrl-C and Ctrl-Z reaching the shell's foreground job, the exit code;
// inside `salloc`, and on a running job's node with `srun --jobid --overlap --pty`. And a job's
// output files opened as its user, never as root on the user's behalf.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <chrono>
#include <fstream>
#include <string>

#include "tests/cluster_harness.h"
#include "tests/pty_session.h"

namespace lockstep::testing {
namespace {

using namespace std::chrono_literals;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string Lockstep() {
  return std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
}

// The environment of a command run at a terminal on the cluster's host.
std::map<std::string, std::string> TerminalEnv(const Cluster& c) {
  return {{"LOCKSTEP_STATE_DIR", c.dir()}, {"SLURM_JOB_ID", ""}, {"TERM", "dumb"}, {"PS1", "$ "}};
}

TEST(Stdin, PipedInputReachesTaskZeroWithItsEnd) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"srun", "cat"}, "", -1, "a\nb\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "a\nb\n");
  // Only task 0 reads it by default (as Slurm); the others read /dev/null and end at once.
  r = c.Run({"srun", "-n2", "-l", "cat"}, "", -1, "hi\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0: hi\n");
  // A task that reads to the end sees the end: wc counts what came.
  r = c.Run({"srun", "wc", "-c"}, "", -1, std::string(300000, 'x'));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "300000\n");
}

TEST(Stdin, InputOptionSelectsTasksOrAFile) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  CommandResult r = c.Run({"srun", "-n2", "-l", "--input=all", "cat"}, "", -1, "hi\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "0: hi\n") && Contains(r.out, "1: hi\n")) << r.out;
  r = c.Run({"srun", "-n2", "-l", "-i", "1", "cat"}, "", -1, "hi\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1: hi\n");
  r = c.Run({"srun", "--input=none", "cat"}, "", -1, "hi\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  // A file each task opens on its node, a Slurm filename pattern (%t: the task's rank).
  std::ofstream(c.work() + "/in0.txt") << "zero\n";
  std::ofstream(c.work() + "/in1.txt") << "one\n";
  r = c.Run({"srun", "-n2", "-l", "--input=in%t.txt", "cat"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "0: zero\n") && Contains(r.out, "1: one\n")) << r.out;
  // Bad values are refused before anything runs.
  r = c.Run({"srun", "-n2", "--input=5", "cat"}, "", -1, "hi\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "--input=5: no such task in a step of 2 tasks")) << r.err;
  r = c.Run({"srun", "--input=missing.txt", "cat"});
  EXPECT_NE(r.exit_code, 0);
}

TEST(Pty, ABashOnAPseudoTerminalGetsKeysSizeSignalsAndGivesItsExitCode) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  PtySession s({Lockstep(), "srun", "--pty", "bash", "--norc", "--noprofile"}, TerminalEnv(c),
               c.work(), 30, 100);
  ASSERT_TRUE(s.started());
  s.Write("echo $((6*7))\n");
  ASSERT_TRUE(s.Expect("\r\n42\r\n")) << s.transcript();
  // The task's terminal has srun's size, and follows it.
  s.Write("stty size\n");
  ASSERT_TRUE(s.Expect("\r\n30 100\r\n")) << s.transcript();
  // The new size travels to the task beside the keys, not before them (as in Slurm), so a
  // command typed at once may still see the old size; the size must arrive, and stay.
  s.Resize(40, 120);
  bool resized = false;
  for (int attempt = 0; attempt < 10 && !resized; ++attempt) {
    s.Write("stty size\n");
    resized = s.Expect("\r\n40 120\r\n", std::chrono::seconds(3));
  }
  ASSERT_TRUE(resized) << s.transcript();
  // It is the shell's controlling terminal: a job-control shell, tty says so.
  s.Write("tty; echo tty=$?\n");
  ASSERT_TRUE(s.Expect("tty=0")) << s.transcript();
  // Ctrl-C interrupts the foreground sleep, not the shell.
  s.Write("sleep 300; echo slept\n");
  ASSERT_TRUE(s.Expect("sleep 300; echo slept\r\n")) << s.transcript();
  s.Write("\x03");
  s.Write("echo rc=$?\n");
  ASSERT_TRUE(s.Expect("rc=130")) << s.transcript();
  // Ctrl-Z stops it: the shell reports it stopped and can go on.
  s.Write("sleep 301\n");
  ASSERT_TRUE(s.Expect("sleep 301\r\n")) << s.transcript();
  s.Write("\x1a");
  ASSERT_TRUE(s.Expect("Stopped")) << s.transcript();
  s.Write("fg\n");
  ASSERT_TRUE(s.Expect("fg\r\nsleep 301\r\n")) << s.transcript();  // resumed in the foreground
  s.Write("\x03");
  s.Write("echo rc=$?\n");
  ASSERT_TRUE(s.Expect("rc=130")) << s.transcript();
  s.Write("exit 7\n");
  EXPECT_EQ(s.Wait(), 7) << s.transcript();
  EXPECT_FALSE(Contains(s.transcript(), "\r\nslept\r\n")) << s.transcript();  // ^C ended the list
}

TEST(Pty, SrunInsideSallocOpensAShellOnTheAllocation) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  PtySession s(
      {Lockstep(), "salloc", "-N2", Lockstep(), "srun", "--pty", "bash", "--norc", "--noprofile"},
      TerminalEnv(c), c.work(), 24, 80);
  ASSERT_TRUE(s.started());
  s.Write("echo nodes=$SLURM_JOB_NUM_NODES $((6*7))\n");
  ASSERT_TRUE(s.Expect("nodes=2 42")) << s.transcript();
  s.Write("exit\n");
  EXPECT_EQ(s.Wait(), 0) << s.transcript();
}

TEST(Pty, OverlapOpensAShellOnARunningJobsNode) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  unsigned long long id = Submit(c, {"--wrap", "sleep 300"});
  ASSERT_GT(id, 0u);
  ASSERT_TRUE(WaitFor([&] { return c.Job(id)["state"] == "RUNNING"; }, 20s));
  PtySession s({Lockstep(), "srun", "--jobid=" + std::to_string(id), "--overlap", "--pty", "bash",
                "--norc", "--noprofile"},
               TerminalEnv(c), c.work(), 24, 80);
  ASSERT_TRUE(s.started());
  s.Write("echo job=$SLURM_JOB_ID\n");
  ASSERT_TRUE(s.Expect("job=" + std::to_string(id) + "\r\n")) << s.transcript();
  s.Write("exit 0\n");
  EXPECT_EQ(s.Wait(), 0) << s.transcript();
  EXPECT_EQ(c.Job(id)["state"], "RUNNING");  // the job goes on
  EXPECT_EQ(c.Run({"scancel", std::to_string(id)}).exit_code, 0);
}

}  // namespace
}  // namespace lockstep::testing

namespace lockstep::testing {
namespace {

// The agent runs as root; a job's output files are opened as its user, so a user cannot make
// root write where the user could not.
class OutputAsUser : public ::testing::Test {
 protected:
  static constexpr int kNobody = 65534;
  void SetUp() override {
    if (::getuid() != 0) GTEST_SKIP() << "needs root to run jobs as another user";
    ASSERT_TRUE(c.Start());
  }
  // Submits as nobody; the job once it ended.
  nlohmann::json RunAsNobody(const std::vector<std::string>& args) {
    std::vector<std::string> a = {"sbatch", "--parsable"};
    a.insert(a.end(), args.begin(), args.end());
    CommandResult r = c.Run(a, "", kNobody);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return {};
    return c.WaitJob(std::stoull(r.out));
  }
  Cluster c;
};

TEST_F(OutputAsUser, AFileInADirectoryOnlyRootMayWriteFailsTheJobSayingWhy) {
  const std::string dir = c.work() + "/root-only";
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  nlohmann::json j = RunAsNobody({"-o", dir + "/out.txt", "--wrap", "echo written"});
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  const std::string detail = j["failure"].is_object() ? j["failure"].value("detail", "") : "";
  EXPECT_TRUE(Contains(detail, "cannot open output file '" + dir + "/out.txt' as uid 65534"))
      << j.dump();
  EXPECT_TRUE(Contains(detail, "Permission denied")) << j.dump();
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.txt"));
  // scontrol shows it too.
  CommandResult r = c.Run({"scontrol", "show", "job", std::to_string(j.value("job_id", 0ULL))});
  EXPECT_TRUE(Contains(r.out, "Permission denied")) << r.out;
}

TEST_F(OutputAsUser, ASymlinkToRootsFileIsNotFollowedIntoIt) {
  const std::string target = c.dir() + "/root-file";
  std::ofstream(target) << "root's\n";
  ASSERT_EQ(::chmod(target.c_str(), 0644), 0);
  ASSERT_EQ(::symlink(target.c_str(), (c.work() + "/link.out").c_str()), 0);
  nlohmann::json j = RunAsNobody({"-o", "link.out", "--wrap", "echo overwritten"});
  EXPECT_EQ(j.value("state", ""), "FAILED") << j.dump();
  EXPECT_EQ(c.ReadFile(target), "root's\n");
  // The user's own file is created, and theirs.
  j = RunAsNobody({"-o", "mine.out", "--wrap", "echo mine"});
  EXPECT_EQ(j.value("state", ""), "COMPLETED") << j.dump();
  struct stat st {};
  ASSERT_EQ(::stat((c.work() + "/mine.out").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kNobody));
  EXPECT_EQ(c.ReadFile(c.work() + "/mine.out"), "mine\n");
}

}  // namespace
}  // namespace lockstep::testing
