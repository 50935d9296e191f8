// PodGroup status from its pods, as coscheduling defines it (pod_group_status.h).
#include "backend/kubernetes/gangs/pod_group_status.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

Json Group(int min_member, Json status = Json::object()) {
  return {{"metadata", {{"name", "llm"}, {"namespace", "research"}, {"uid", "g-1"}}},
          {"spec", {{"minMember", min_member}}},
          {"status", status}};
}

// A pod bound to `node` ("": unbound) in `phase` ("": none yet).
Json Pod(const std::string& name, const std::string& node, const std::string& phase) {
  Json p = {{"metadata", {{"name", name}, {"namespace", "research"}}}, {"spec", Json::object()}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  if (!phase.empty()) p["status"]["phase"] = phase;
  return p;
}

struct Case {
  Json group;
  std::vector<Json> pods;
  bool binding = false;
  PodGroupStatusInput Input() const {
    PodGroupStatusInput in;
    in.pod_group = &group;
    for (const Json& p : pods) in.pods.push_back(&p);
    in.binding = binding;
    return in;
  }
};

std::string PhaseOf(const Case& c) {
  return DesiredPodGroupStatus(c.Input())["phase"];
}

TEST(PodGroupStatus, PhasesThroughAGangsLife) {
  Case c{Group(2), {Pod("w-0", "", "Pending")}};
  EXPECT_EQ(PhaseOf(c), "Pending") << "1 of minMember 2";
  c.pods.push_back(Pod("w-1", "", "Pending"));
  EXPECT_EQ(PhaseOf(c), "Pending") << "complete, not placed yet";
  c.binding = true;
  EXPECT_EQ(PhaseOf(c), "Scheduling");
  c.pods[0] = Pod("w-0", "n0", "Pending");
  EXPECT_EQ(PhaseOf(c), "Scheduling") << "1 of 2 bound";
  c.binding = false;
  c.pods[1] = Pod("w-1", "n1", "Pending");
  EXPECT_EQ(PhaseOf(c), "Scheduled");
  c.pods[0] = Pod("w-0", "n0", "Running");
  EXPECT_EQ(PhaseOf(c), "Scheduled") << "1 of 2 running";
  c.pods[1] = Pod("w-1", "n1", "Running");
  EXPECT_EQ(PhaseOf(c), "Running");
  c.pods[0] = Pod("w-0", "n0", "Succeeded");
  EXPECT_EQ(PhaseOf(c), "Running") << "running + succeeded >= minMember";
  c.pods[1] = Pod("w-1", "n1", "Succeeded");
  Json s = DesiredPodGroupStatus(c.Input());
  EXPECT_EQ(s, (Json{{"phase", "Finished"},
                     {"scheduled", 2},
                     {"running", 0},
                     {"succeeded", 2},
                     {"failed", 0}}));
  c.pods[1] = Pod("w-1", "n1", "Failed");
  EXPECT_EQ(PhaseOf(c), "Failed");
}

TEST(PodGroupStatus, FailedNeedsMinMemberPodsToHaveRun) {
  // One of three failed before the others ran: not yet the group's failure.
  Case c{Group(3), {Pod("a", "n0", "Failed"), Pod("b", "n1", "Pending"), Pod("c", "n2", "")}};
  EXPECT_EQ(PhaseOf(c), "Scheduled");
  c.pods[1] = Pod("b", "n1", "Running");
  c.pods[2] = Pod("c", "n2", "Running");
  EXPECT_EQ(PhaseOf(c), "Failed");
}

TEST(PodGroupStatus, StartTimeAndOwners) {
  Case c{Group(1), {Pod("b", "", ""), Pod("a", "", "")}};
  c.pods[1]["metadata"]["ownerReferences"] = {{{"kind", "Job"}, {"name", "train"}},
                                              {{"kind", "JobSet"}, {"name", "set"}}};
  PodGroupStatusInput in = c.Input();
  in.schedule_start = "2026-12-01T10:00:00Z";
  Json s = DesiredPodGroupStatus(in);
  EXPECT_EQ(s["scheduleStartTime"], "2026-12-01T10:00:00Z");
  EXPECT_EQ(s["occupiedBy"], "research/set,research/train");
  // Without either, the PodGroup keeps what it has.
  c.pods[1]["metadata"].erase("ownerReferences");
  s = DesiredPodGroupStatus(c.Input());
  EXPECT_FALSE(s.contains("scheduleStartTime"));
  EXPECT_FALSE(s.contains("occupiedBy"));
}

TEST(PodGroupStatus, UpdateOnlyWhenItChanges) {
  Case c{Group(2), {Pod("w-0", "n0", "Running"), Pod("w-1", "n1", "Running")}};
  std::optional<Json> u = PodGroupStatusUpdate(c.Input());
  ASSERT_TRUE(u);
  EXPECT_EQ((*u)["phase"], "Running");
  // Written: nothing more to write. Absent counts read as 0 (the CRD's omitempty).
  c.group["status"] = {{"phase", "Running"}, {"scheduled", 2}, {"running", 2}};
  EXPECT_FALSE(PodGroupStatusUpdate(c.Input()));
  c.pods[0] = Pod("w-0", "n0", "Succeeded");
  EXPECT_TRUE(PodGroupStatusUpdate(c.Input()));
}

TEST(PodGroupStatus, AFinishedGroupStaysFinishedUntilANewPodComes) {
  Case c{Group(2, {{"phase", "Finished"}, {"succeeded", 2}, {"scheduled", 2}}), {}};
  EXPECT_FALSE(PodGroupStatusUpdate(c.Input())) << "its pods were deleted afterwards";
  c.pods = {Pod("w-0", "n0", "Succeeded")};
  EXPECT_FALSE(PodGroupStatusUpdate(c.Input()));
  c.pods = {Pod("w-0", "", "Pending"), Pod("w-1", "", "Pending")};  // its owner starts it again
  std::optional<Json> u = PodGroupStatusUpdate(c.Input());
  ASSERT_TRUE(u);
  EXPECT_EQ((*u)["phase"], "Pending");
}

TEST(PodGroupStatus, ANewGroupIsPending) {
  Case c{Group(4), {}};
  c.group.erase("status");
  std::optional<Json> u = PodGroupStatusUpdate(c.Input());
  ASSERT_TRUE(u);
  EXPECT_EQ((*u)["phase"], "Pending");
  EXPECT_EQ((*u)["scheduled"], 0);
}

}  // namespace
}  // namespace lockstep::kube
