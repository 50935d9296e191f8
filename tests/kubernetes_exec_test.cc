// srun into a running job on Kubernetes (fixture: kubernetes_node_fixture.h): `srun --jobid=ID
// --overlap` runs its command in the job's pod on the real node through the pod's exec
// subresource (src/backend/kubernetes/backend/exec_steps.h): output, stderr and exit code back,
// on node 0 or the node of -w;
// srun's piped input, to its end; and `--pty`, a shell on a real pseudo-terminal (tests/
// pty_session.h) with its size, Ctrl-C and `exit 3`; a signal to a step (scancel -s); scancel of
// a step (its command killed in the pod) or of the job ends srun.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>

#include "tests/kubernetes_node_fixture.h"
#include "tests/pty_session.h"

namespace lockstep::testing {
namespace {

std::string Lockstep() {
  return std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
}

// `lockstep srun ARGS` beside the test, as from a user's other terminal (Cluster::Run is one
// command at a time): its output (stderr too) and exit code once it ends.
std::future<std::pair<std::string, int>> SrunBeside(Cluster& c, const std::string& args) {
  const std::string cmd =
      "LOCKSTEP_STATE_DIR=" + c.dir() + " " + Lockstep() + " srun " + args + " </dev/null 2>&1";
  return std::async(std::launch::async, [cmd] {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return std::make_pair(out, -1);
    char buf[1024];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    return std::make_pair(out, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  });
}

// Whether a process whose command line holds `text` runs in the job's pod (seen by a step).
bool RunsInPod(Cluster& c, const std::string& job, const std::string& text) {
  const std::string pattern = "[" + text.substr(0, 1) + "]" + text.substr(1);
  return c.Run({"srun", job, "--overlap", "sh", "-c", "ps | grep '" + pattern + "'"}).exit_code ==
         0;
}

TEST_F(RealNodeTest, SrunOverlapRunsInTheJobsPodThroughExec) {
  const std::string ns = "node-x";
  std::unique_ptr<Cluster> c = StartOnNode(ns);
  unsigned long long id = Submit(*c, {"--wrap", "sleep 300"});
  ASSERT_GT(id, 0u);
  const std::string pod = "lockstep-" + std::to_string(id) + "-0";
  ASSERT_TRUE(WaitFor([&] { return PodPhase(ns, pod) == "Running"; }, seconds(60)))
      << c->Job(id).dump() << DaemonLog(*c);
  const std::string job = "--jobid=" + std::to_string(id);

  // A command without input: its output, in the pod (its hostname is the pod's).
  CommandResult r = c->Run({"srun", job, "--overlap", "hostname"});
  EXPECT_EQ(r.exit_code, 0) << r.err << DaemonLog(*c);
  EXPECT_EQ(r.out, pod + "\n") << r.err;

  // The round trip of a step through the exec (docs/benchmarks.md): printed, not asserted.
  const auto started = std::chrono::steady_clock::now();
  constexpr int kRuns = 5;
  for (int i = 0; i < kRuns; ++i)
    EXPECT_EQ(c->Run({"srun", job, "--overlap", "true"}).exit_code, 0);
  std::fprintf(stderr,
               "srun --jobid --overlap true through the pod's exec: %.0f ms each (%d runs)\n",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                       .count() /
                   kRuns,
               kRuns);

  // -w: the job's node named (this node: the real node is one); a node not the job's, refused.
  r = c->Run({"srun", job, "--overlap", "-w", node_, "hostname"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, pod + "\n") << r.err;
  r = c->Run({"srun", job, "--overlap", "-w", "elsewhere1", "hostname"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(Contains(r.err, "node elsewhere1 is not in the job's allocation")) << r.err;

  // stdout and stderr apart, and the exit code.
  r = c->Run({"srun", job, "--overlap", "sh", "-c", "echo to-out; echo to-err >&2; exit 5"});
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_EQ(r.out, "to-out\n");
  EXPECT_TRUE(Contains(r.err, "to-err\n")) << r.err;

  // srun's piped input reaches the command, and so does its end (cat ends).
  r = c->Run({"srun", job, "--overlap", "cat"}, "", -1, "hi\nthere, with $HOME and \\ kept\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hi\nthere, with $HOME and \\ kept\n") << r.err;

  // --pty: a shell in the pod on a terminal of srun's size, following its changes.
  PtySession s({Lockstep(), "srun", job, "--overlap", "--pty", "sh"},
               {{"LOCKSTEP_STATE_DIR", c->dir()}, {"SLURM_JOB_ID", ""}, {"TERM", "dumb"}},
               c->work(), 24, 80);
  ASSERT_TRUE(s.started());
  s.Write("echo $((6*7)) $(hostname)\n");
  ASSERT_TRUE(s.Expect("42 " + pod + "\r\n")) << s.transcript() << DaemonLog(*c);
  s.Write("stty size\n");
  ASSERT_TRUE(s.Expect("\r\n24 80\r\n")) << s.transcript();
  s.Resize(30, 100);
  // The new size reaches the pod's terminal a moment later: asked until it says so.
  EXPECT_TRUE(WaitFor(
      [&] {
        s.Write("stty size\n");
        return s.Expect("\r\n30 100\r\n", seconds(1));
      },
      kWait))
      << s.transcript();
  // Ctrl-C is the terminal's: it interrupts the command in the pod, not srun. Sent once the
  // command runs (seen by another step in the same pod): before, the shell's line editor has
  // the terminal and would read ^C as a key. (A process of its own: busybox's sh runs `sleep`
  // within itself.)
  s.Write("sh -c 'sleep 301'; echo slept\n");
  ASSERT_TRUE(s.Expect("sh -c 'sleep 301'; echo slept\r\n")) << s.transcript();
  ASSERT_TRUE(WaitFor([&] { return RunsInPod(*c, job, "sleep 301"); }, kWait)) << s.transcript();
  s.Write("\x03");
  s.Write("echo rc=$?\n");
  ASSERT_TRUE(s.Expect("rc=130")) << s.transcript() << DaemonLog(*c);
  s.Write("exit 3\n");
  EXPECT_EQ(s.Wait(), 3) << s.transcript();
  EXPECT_FALSE(Contains(s.transcript(), "\r\nslept\r\n")) << s.transcript();  // ^C ended the list

  EXPECT_EQ(c->Job(id)["state"], "RUNNING");  // the job goes on

  // The step that runs now (one at a time below): its number.
  auto running_step_id = [&] {
    for (int s = 0; s < 64; ++s)
      if (c->Get("/api/v1/jobs/" + std::to_string(id) + "/steps/" + std::to_string(s))
              .value("state", "") == "RUNNING")
        return s;
    return -1;
  };

  // scancel -s USR1 ID.STEP: the signal reaches the command in the pod (by a second exec running
  // kill), which traps it and ends by itself.
  std::future<std::pair<std::string, int>> signalled = SrunBeside(
      *c, job + " --overlap sh -c 'trap \"echo got-usr1; exit 0\" USR1; echo armed; "
                "while :; do sleep 1; done'");
  ASSERT_TRUE(WaitFor([&] { return RunsInPod(*c, job, "got-usr1"); }, kWait));
  int signalled_step = running_step_id();
  ASSERT_GE(signalled_step, 0);
  r = c->Run({"scancel", "-s", "USR1", std::to_string(id) + "." + std::to_string(signalled_step)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(signalled.wait_for(seconds(30)), std::future_status::ready) << DaemonLog(*c);
  auto [usr1_out, usr1_code] = signalled.get();
  EXPECT_EQ(usr1_code, 0) << usr1_out;
  // (The whole step gets it, as in Slurm: the shell's `sleep` too, which the shell reports.)
  EXPECT_TRUE(Contains(usr1_out, "armed\n") && Contains(usr1_out, "got-usr1\n")) << usr1_out;

  // scancel ID.STEP: srun ends at once (the step's exec is closed), and the command is killed in
  // the pod (the kubelet ends no command whose exec closed: a second exec kills it).
  std::future<std::pair<std::string, int>> cancelled =
      SrunBeside(*c, job + " --overlap sh -c 'echo s2; sleep 303'");
  ASSERT_TRUE(WaitFor([&] { return RunsInPod(*c, job, "sleep 303"); }, kWait));
  const int running_step = running_step_id();
  ASSERT_GE(running_step, 0);
  EXPECT_EQ(c->Run({"scancel", std::to_string(id) + "." + std::to_string(running_step)}).exit_code,
            0);
  EXPECT_TRUE(WaitFor([&] { return !RunsInPod(*c, job, "sleep 303"); }, kWait))
      << DaemonLog(*c);
  ASSERT_EQ(cancelled.wait_for(seconds(30)), std::future_status::ready) << DaemonLog(*c);
  auto [s2_out, s2_code] = cancelled.get();
  EXPECT_NE(s2_code, 0) << s2_out;
  EXPECT_TRUE(Contains(s2_out, "s2\n")) << s2_out;
  EXPECT_EQ(c->Get("/api/v1/jobs/" + std::to_string(id) + "/steps/" + std::to_string(running_step))
                .value("state", ""),
            "FAILED");

  // scancel of the job while a step runs in its pod: the step ends with it, and srun too.
  std::future<std::pair<std::string, int>> running =
      SrunBeside(*c, job + " --overlap sh -c 'echo step-up; sleep 302'");
  ASSERT_TRUE(WaitFor([&] { return RunsInPod(*c, job, "sleep 302"); }, kWait));
  EXPECT_EQ(c->Run({"scancel", std::to_string(id)}).exit_code, 0);
  EXPECT_EQ(c->WaitJob(id, 60)["state"], "CANCELLED");
  ASSERT_EQ(running.wait_for(seconds(60)), std::future_status::ready) << DaemonLog(*c);
  auto [out, code] = running.get();
  EXPECT_NE(code, 0) << out;
  EXPECT_TRUE(Contains(out, "step-up\n")) << out;
}

}  // namespace
}  // namespace lockstep::testing
