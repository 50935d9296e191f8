// End to end, through the real CLI, lockstepd and agent: `scontrol update JobId=ARRAY ...`
// changes every task of the array (running, pending, and those lockstepd keeps in the array's
// one record, which start with the new values), `JobId=ARRAY_TASK` one task, and the change
// outlives a restart of lockstepd; `scontrol requeuehold` requeues and holds a job in one step,
// so that with a node free all along it never starts again until released.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

using std::chrono::seconds;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

// squeue -h -r (one line per task) with `format`, for the job ids `ids` ("40" or "40_3").
std::vector<std::string> Squeue(Cluster& c, const std::string& ids, const std::string& format,
                                const std::string& states = "all") {
  CommandResult r = c.Run({"squeue", "-h", "-r", "-t", states, "-j", ids, "-o", format});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Lines(r.out);
}

bool AllAre(const std::vector<std::string>& lines, const std::string& want) {
  return !lines.empty() &&
         std::all_of(lines.begin(), lines.end(), [&](const std::string& l) { return l == want; });
}

// squeue's "%T %r" and "%t %r" of a job held by requeuehold, as Slurm 22.05 prints them: the
// reason is its state_desc.
const std::vector<std::string> kRequeueHeld = {"PENDING job requeued in held state"};
const std::vector<std::string> kSpecialExit = {"SE job requeued in held state"};

// How many times the jobs that write to `file` have started: each start adds a line.
std::size_t Starts(Cluster& c, const std::string& file) {
  return Lines(c.ReadFile(file)).size();
}

// A one-node job that adds a line to `file` at each start, once it has started: its id.
unsigned long long StartCountingJob(Cluster& c, const std::string& file) {
  const unsigned long long id =
      Submit(c, {"-N", "1", "--wrap", "echo started >> " + file + "; sleep 300"});
  EXPECT_GT(id, 0u);
  EXPECT_TRUE(WaitFor([&] { return Starts(c, file) == 1; }, seconds(20)));
  return id;
}

int Running(Cluster& c, const std::string& array) {
  return static_cast<int>(Squeue(c, array, "%i", "R").size());
}

TEST(ArrayUpdate, TheArraysIdChangesEveryTaskAndATaskIdOnlyThatTask) {
  Cluster c;  // two nodes: two tasks run, the rest wait (most in the array's one record)
  ASSERT_TRUE(c.Start());
  const unsigned long long id = Submit(c, {"--array=0-7", "-N", "1", "--exclusive", "-t", "10",
                                           "-J", "sweep", "--wrap", "sleep 300"});
  ASSERT_GT(id, 0u);
  const std::string a = std::to_string(id);
  ASSERT_TRUE(WaitFor([&] { return Running(c, a) == 2; }, seconds(20)));

  // One request: each task's own limit moved down by 2 minutes, and a new name.
  CommandResult r = c.Run({"scontrol", "update", "JobId=" + a, "TimeLimit=-2", "JobName=renamed"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> all = Squeue(c, a, "%j %l");
  EXPECT_EQ(all.size(), 8u);
  EXPECT_TRUE(AllAre(all, "renamed 8:00")) << r.out << ::testing::PrintToString(all);
  EXPECT_TRUE(AllAre(Squeue(c, a, "%j %l", "R"), "renamed 8:00"));

  // "ARRAY_TASK": that task alone.
  r = c.Run({"scontrol", "update", "JobId=" + a + "_5", "TimeLimit=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Squeue(c, a + "_5", "%l"), std::vector<std::string>{"5:00"});
  EXPECT_EQ(Squeue(c, a + "_4", "%l"), std::vector<std::string>{"8:00"});
  // +N on the array moves each task's own limit: task 5 from 5:00, the others from 8:00.
  r = c.Run({"scontrol", "update", "JobId=" + a, "TimeLimit=+1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Squeue(c, a + "_5", "%l"), std::vector<std::string>{"6:00"});
  EXPECT_EQ(Squeue(c, a + "_6", "%l"), std::vector<std::string>{"9:00"});

  // Another user may not change the array, and nothing changes.
  r = c.Run({"scontrol", "update", "JobId=" + a, "JobName=theirs"}, "", 65534);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("permission denied"), std::string::npos) << r.err;
  EXPECT_TRUE(AllAre(Squeue(c, a, "%j"), "renamed"));

  // lockstepd restarts: the change was durable, for every task.
  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(c.WaitNodes("allocated", 2, 20));  // the agent is back with the two tasks
  ASSERT_EQ(Running(c, a), 2);
  EXPECT_TRUE(AllAre(Squeue(c, a, "%j"), "renamed"));
  EXPECT_EQ(Squeue(c, a + "_7", "%l"), std::vector<std::string>{"9:00"});

  // The tasks that were never split off start with the new values, and really run with them.
  r = c.Run({"scancel", a + "_0", a + "_1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(WaitFor(
      [&] {
        return Squeue(c, a, "%K", "R") == std::vector<std::string>{"2", "3"};
      },
      seconds(20)))
      << ::testing::PrintToString(Squeue(c, a, "%K %T"));
  EXPECT_TRUE(AllAre(Squeue(c, a, "%j %l", "R"), "renamed 9:00"));
  r = c.Run({"scontrol", "show", "job", a + "_3"});
  EXPECT_NE(r.out.find("JobName=renamed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TimeLimit=00:09:00"), std::string::npos) << r.out;
  EXPECT_EQ(c.Run({"scancel", a}).exit_code, 0);
}

TEST(ArrayUpdate, RequeueholdKeepsTheJobHeldWithANodeFreeAllAlong) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const unsigned long long id = StartCountingJob(c, "starts.txt");
  ASSERT_FALSE(HasFailure());
  const std::string s = std::to_string(id);

  CommandResult r = c.Run({"scontrol", "requeuehold", s});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Pending and held as soon as the command returns, as Slurm 22.05 shows it (its state_desc).
  EXPECT_EQ(Squeue(c, s, "%T %r"), kRequeueHeld);
  // The scheduler goes on with both nodes free: another job is placed and runs to its end...
  const unsigned long long other = Submit(c, {"-N", "2", "--wrap", "true"});
  ASSERT_GT(other, 0u);
  EXPECT_EQ(c.WaitJob(other)["state"], "COMPLETED");
  // ...and the held job never started again.
  EXPECT_EQ(Squeue(c, s, "%T %r"), kRequeueHeld);
  EXPECT_EQ(Starts(c, "starts.txt"), 1u);
  EXPECT_EQ(c.Job(id)["restart_count"], 1);
  // The requeue and the hold were one durable change.
  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(c.WaitNodes("idle", 2, 20));
  EXPECT_EQ(Squeue(c, s, "%T %r"), kRequeueHeld);
  // Released, it runs again.
  r = c.Run({"scontrol", "release", s});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(WaitFor([&] { return Starts(c, "starts.txt") == 2; }, seconds(20)));
  // A job that is not running cannot be requeued: an error, and it stays as it is.
  const unsigned long long held = Submit(c, {"--hold", "--wrap", "true"});
  r = c.Run({"scontrol", "requeuehold", std::to_string(held)});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("is not running"), std::string::npos) << r.err;
  EXPECT_EQ(c.Run({"scancel", s}).exit_code, 0);
}

TEST(ArrayUpdate, RequeueholdSpecialExitShowsSEUntilReleased) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const std::string s = std::to_string(StartCountingJob(c, "se.txt"));
  ASSERT_FALSE(HasFailure());
  CommandResult r = c.Run({"scontrol", "requeuehold", "State=Bogus", s});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "Invalid job id specified for job State=Bogus\n");
  EXPECT_EQ(Squeue(c, s, "%T"), std::vector<std::string>{"RUNNING"}) << "nothing changed";

  r = c.Run({"scontrol", "requeuehold", "State=SpecialExit", s});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // As Slurm 22.05 shows it: ST "SE" with the requeuehold's reason; scontrol show job
  // SPECIAL_EXIT.
  EXPECT_EQ(Squeue(c, s, "%t %r"), kSpecialExit);
  EXPECT_EQ(Squeue(c, s, "%t", "SE"), std::vector<std::string>{"SE"});
  EXPECT_TRUE(Squeue(c, s, "%t", "PD").empty()) << "SE is a state of its own for -t";
  r = c.Run({"scontrol", "show", "job", s});
  EXPECT_NE(r.out.find("JobState=SPECIAL_EXIT Reason=job_requeued_in_held_state"),
            std::string::npos)
      << r.out;
  // Durable, and released it is an ordinary job again and runs.
  c.KillDaemon();
  c.StartDaemon();
  ASSERT_TRUE(c.WaitNodes("idle", 2, 20));
  EXPECT_EQ(Squeue(c, s, "%t %r"), kSpecialExit);
  ASSERT_EQ(c.Run({"scontrol", "release", s}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return Starts(c, "se.txt") == 2; }, seconds(20)));
  EXPECT_EQ(Squeue(c, s, "%T"), std::vector<std::string>{"RUNNING"});
  EXPECT_EQ(c.Run({"scancel", s}).exit_code, 0);
}

}  // namespace
}  // namespace lockstep::testing
