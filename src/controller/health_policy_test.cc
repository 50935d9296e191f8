// The classification of health findings and the attribution of a run's end (docs/health.md).
#include "controller/health_policy.h"

#include <gtest/gtest.h>

#include "controller/failure_cause.h"

namespace lockstep::controller {
namespace {

backend::HealthFinding Xid(int gpu, int xid) {
  return {"xid", gpu, xid, ""};
}

TEST(Classify, XidsByNvidiasCatalogue) {
  const config::HealthConfig c;
  EXPECT_EQ(Classify(Xid(0, 13), c).severity, HealthSeverity::kApplication);
  EXPECT_EQ(Classify(Xid(0, 43), c).severity, HealthSeverity::kApplication);
  const ClassifiedFinding bus = Classify(Xid(3, 79), c);
  EXPECT_EQ(bus.severity, HealthSeverity::kCritical);
  EXPECT_TRUE(bus.event);
  EXPECT_EQ(bus.what, "XID 79 (fell off the bus)");
  EXPECT_EQ(Classify(Xid(0, 48), c).severity, HealthSeverity::kCritical);
  EXPECT_EQ(Classify(Xid(0, 63), c).severity, HealthSeverity::kWarning);
  EXPECT_EQ(Classify(Xid(0, 92), c).severity, HealthSeverity::kWarning);
  EXPECT_EQ(Classify(Xid(0, 500), c).severity, HealthSeverity::kWarning) << "unlisted";
  EXPECT_EQ(Classify(Xid(0, 500), c).what, "XID 500");
}

TEST(Classify, TheTableIsTheSites) {
  config::HealthConfig c;
  c.xid_application.erase(13);
  c.xid_critical.insert(13);
  c.xid_critical.erase(79);
  EXPECT_EQ(Classify(Xid(0, 13), c).severity, HealthSeverity::kCritical);
  EXPECT_EQ(Classify(Xid(0, 79), c).severity, HealthSeverity::kWarning);
}

TEST(Classify, ConditionsAndTheHealthProgram) {
  const config::HealthConfig c;
  EXPECT_EQ(Classify({"ecc_dbe", 1, 2, ""}, c).what, "2 volatile double-bit ECC errors");
  EXPECT_EQ(Classify({"ecc_dbe", 1, 2, ""}, c).severity, HealthSeverity::kCritical);
  EXPECT_FALSE(Classify({"ecc_dbe", 1, 2, ""}, c).event);
  EXPECT_EQ(Classify({"remap_failed", 1, 1, ""}, c).severity, HealthSeverity::kCritical);
  EXPECT_EQ(Classify({"recovery_action", 1, 2, ""}, c).what, "recovery action: node reboot");
  EXPECT_EQ(Classify({"recovery_action", 1, 3, ""}, c).severity, HealthSeverity::kWarning);
  EXPECT_EQ(Classify({"program", -1, 0, "ok"}, c).severity, HealthSeverity::kOk);
  EXPECT_EQ(Classify({"program", -1, 1, "hot"}, c).severity, HealthSeverity::kWarning);
  EXPECT_EQ(Classify({"program", -1, 2, "disk full"}, c).severity, HealthSeverity::kCritical);
  EXPECT_EQ(Classify({"program", -1, 2, "disk full"}, c).what, "disk full");
  EXPECT_EQ(Classify({"program", -1, 3, "timed out"}, c).severity, HealthSeverity::kUnknown);
}

TEST(GpuWhere, NamesTheSerialWhenKnown) {
  backend::NodeHealthReport r;
  r.gpus = {{3, "GPU-x", "1650123456789"}};
  EXPECT_EQ(GpuWhere(r, 3), "GPU 3 serial 1650123456789 ");
  EXPECT_EQ(GpuWhere(r, 2), "GPU 2 ");
  EXPECT_EQ(GpuWhere(r, -1), "");
}

JobEntry Ended(JobState state) {
  JobEntry e;
  e.state = state;
  e.restart_count = 2;
  e.placement = {{"node3", 1, 1, 1}};
  return e;
}

TEST(AttributeEnd, FromHowTheRunEnded) {
  JobEntry failed = Ended(JobState::kFailed);
  AttributeEnd(failed, {3, 0, false}, 30);
  EXPECT_EQ(failed.failure_cause, "user");
  EXPECT_EQ(failed.failure_detail, "exit code 3");
  EXPECT_EQ(failed.failure_run, 2);
  JobEntry killed = Ended(JobState::kFailed);
  killed.app_evidence = "XID 13 (graphics engine exception) on GPU 0 of node3";
  AttributeEnd(killed, {0, 11, false}, 30);
  EXPECT_EQ(killed.failure_detail,
            "killed by signal 11 (SIGSEGV); XID 13 (graphics engine exception) on GPU 0 of node3");
  // A core the agent kept is part of the evidence.
  JobEntry crashed = Ended(JobState::kFailed);
  AttributeEnd(crashed, {0, 6, false, "core dumped: /w/cores-7/core.node3.41 (4096 bytes)"}, 30);
  EXPECT_EQ(crashed.failure_detail,
            "killed by signal 6 (SIGABRT); core dumped: /w/cores-7/core.node3.41 (4096 bytes)");
  JobEntry oom = Ended(JobState::kOutOfMemory);
  AttributeEnd(oom, {0, 9, true}, 30);
  EXPECT_EQ(oom.failure_cause, "oom");
  JobEntry timeout = Ended(JobState::kTimeout);
  AttributeEnd(timeout, {0, 15, false}, 30);
  EXPECT_EQ(timeout.failure_cause, "timeout");
  JobEntry cancelled = Ended(JobState::kCancelled);
  AttributeEnd(cancelled, {0, 15, false}, 30);
  EXPECT_EQ(cancelled.failure_cause, "cancelled");
  JobEntry lost = Ended(JobState::kNodeFail);
  lost.reason = "NodeFail";
  AttributeEnd(lost, {}, 30);
  EXPECT_EQ(lost.failure_cause, "node");
  EXPECT_EQ(lost.failure_detail, "node node3 lost (NodeFail)");
  JobEntry launch = Ended(JobState::kFailed);
  launch.reason = "LaunchFailed";
  AttributeEnd(launch, {1, 0, false}, 30);
  EXPECT_EQ(launch.failure_cause, "launch");
}

TEST(AttributeEnd, ACauseDecidedDuringTheRunStands) {
  JobEntry e = Ended(JobState::kCancelled);
  e.failure_cause = "preempted";
  e.failure_detail = "preempted for job 9";
  e.failure_run = 2;
  AttributeEnd(e, {0, 15, false}, 30);
  EXPECT_EQ(e.failure_cause, "preempted");
  // One decided for an earlier run does not.
  e.failure_run = 1;
  AttributeEnd(e, {0, 15, false}, 30);
  EXPECT_EQ(e.failure_cause, "cancelled");
}

TEST(AttributeEnd, ACompletedRunClearsTheCause) {
  JobEntry e = Ended(JobState::kCompleted);
  e.failure_cause = "gpu";
  e.failure_run = 1;
  AttributeEnd(e, {0, 0, false}, 30);
  EXPECT_EQ(e.failure_cause, "");
  EXPECT_EQ(e.failure_run, -1);
}

}  // namespace
}  // namespace lockstep::controller
