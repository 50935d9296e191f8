// Reservations over a real Controller and store, as an operator and users meet them: a
// maintenance window in an hour takes no job that would run into it and backfills shorter ones,
// its nodes are free and show "maint" when it comes, a user reservation admits only its users,
// ordinary users cannot make or change one, and all of it survives a restart.
#include <gtest/gtest.h>

#include "controller/controller_test_util.h"

namespace lockstep::controller {
namespace {

using testing::ControllerTest;

class ReservationsTest : public ControllerTest {
 protected:
  void SetUp() override {
    ControllerTest::SetUp();
    if (HasFatalFailure()) return;
    Report(testing::Nodes(2, 8));
  }
  Result<nlohmann::json> Change(const Caller& who, const std::string& action,
                                std::vector<std::string> words, const std::string& name = "") {
    nlohmann::json body = {{"action", action}, {"words", words}};
    if (!name.empty()) body["name"] = name;
    return controller_->ChangeReservations(who, body);
  }
  // A one-node job of all 8 CPUs with a limit of `minutes`.
  jobspec::JobSpec Job(int minutes, const std::string& reservation = "") {
    jobspec::JobSpec s = Spec(8);
    s.time_limit = minutes * 60;
    s.reservation = reservation;
    return s;
  }
  nlohmann::json Reservation(const std::string& name) {
    const nlohmann::json view = controller_->ReservationsView();
    for (const nlohmann::json& r : view["reservations"])
      if (r["name"] == name) return r;
    return nullptr;
  }
  std::string NodeState(const std::string& name) {
    const nlohmann::json view = controller_->ListNodes();
    for (const nlohmann::json& n : view["nodes"])
      if (n["name"] == name) return n["state"];
    return "";
  }
  const Caller kBob{1001, 1001, "bob"};
};

TEST_F(ReservationsTest, MaintenanceWindowTakesNoJobThatRunsIntoItAndBackfillsShortOnes) {
  Result<nlohmann::json> made =
      Change(kRoot, "create", {"ReservationName=maint", "StartTime=now+1hour", "Duration=120",
                               "Nodes=n[1-2]", "Flags=MAINT,IGNORE_JOBS", "Users=root"});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ((*made)["name"], "maint");
  EXPECT_EQ(Reservation("maint")["state"], "INACTIVE");

  Result<JobId> long_job = controller_->Submit(kAlice, Job(120));
  Result<JobId> short_job = controller_->Submit(kAlice, Job(30));
  ASSERT_TRUE(long_job.ok() && short_job.ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(*short_job, "state"), "RUNNING");  // fits in the hour before the window
  EXPECT_EQ(Field(*long_job, "state"), "PENDING");
  EXPECT_EQ(Field(*long_job, "reason"), "ReqNodeNotAvail, Reserved for maintenance");

  controller_->events().RunExited({*short_job, 0}, {0, 0, false});
  controller_->SettleForTest();
  clock_.Advance(std::chrono::minutes(60));
  controller_->PassForTest();
  // The window is in force: both nodes free, shown in maintenance, and the long job still waits.
  EXPECT_EQ(Reservation("maint")["state"], "ACTIVE");
  EXPECT_EQ(NodeState("n1"), "maint");
  EXPECT_EQ(NodeState("n2"), "maint");
  EXPECT_EQ(Field(*long_job, "state"), "PENDING");

  // It all survives a restart of lockstepd.
  Stop();
  Start();
  Report(testing::Nodes(2, 8));
  controller_->PassForTest();
  EXPECT_EQ(Reservation("maint")["flags"], "MAINT,IGNORE_JOBS,SPEC_NODES");
  EXPECT_EQ(Field(*long_job, "state"), "PENDING");

  // After the window the nodes are everyone's again and the reservation is gone.
  clock_.Advance(std::chrono::minutes(120));
  controller_->PassForTest();
  controller_->PassForTest();
  EXPECT_EQ(Field(*long_job, "state"), "RUNNING");
  EXPECT_TRUE(Reservation("maint").is_null());
}

TEST_F(ReservationsTest, AUserReservationAdmitsOnlyItsUsers) {
  ASSERT_TRUE(Change(kRoot, "create",
                     {"ReservationName=team", "StartTime=now", "Duration=1-00:00:00",
                      "Nodes=n1", "Users=alice"})
                  .ok());
  Result<JobId> denied = controller_->Submit(kBob, Job(10, "team"));
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().message(), "Access denied to requested reservation");
  Result<JobId> unknown = controller_->Submit(kAlice, Job(10, "nosuch"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "Requested reservation is invalid");

  // bob's jobs never land on the reserved node; alice's reservation job does.
  Result<JobId> b1 = controller_->Submit(kBob, Job(10));
  Result<JobId> b2 = controller_->Submit(kBob, Job(10));
  Result<JobId> mine = controller_->Submit(kAlice, Job(10, "team"));
  ASSERT_TRUE(b1.ok() && b2.ok() && mine.ok());
  controller_->PassForTest();
  EXPECT_EQ(backend_.NodeOf(*b1), "n2");
  EXPECT_EQ(Field(*b2, "state"), "PENDING");
  EXPECT_EQ(backend_.NodeOf(*mine), "n1");
  EXPECT_EQ(Field(*mine, "reservation"), "team");

  // Deleting it while alice's job runs is refused; once done, it goes.
  EXPECT_EQ(Change(kRoot, "delete", {}, "team").status().code(), StatusCode::kFailedPrecondition);
  controller_->events().RunExited({*mine, 0}, {0, 0, false});
  controller_->SettleForTest();
  EXPECT_TRUE(Change(kRoot, "delete", {}, "team").ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(*b2, "state"), "RUNNING");
}

TEST_F(ReservationsTest, AJobOfAReservationToComeWaitsForIt) {
  ASSERT_TRUE(Change(kRoot, "create",
                     {"ReservationName=later", "StartTime=now+2hours", "Duration=60",
                      "Nodes=n2", "Users=alice"})
                  .ok());
  Result<JobId> id = controller_->Submit(kAlice, Job(10, "later"));
  ASSERT_TRUE(id.ok());
  controller_->PassForTest();
  EXPECT_EQ(Field(*id, "state"), "PENDING");
  EXPECT_EQ(Field(*id, "reason"), "Reservation");
  clock_.Advance(std::chrono::hours(2));
  controller_->PassForTest();
  EXPECT_EQ(Field(*id, "state"), "RUNNING");
  EXPECT_EQ(backend_.NodeOf(*id), "n2");
}

TEST_F(ReservationsTest, OnlyOperatorsChangeReservationsAndRefusalsChangeNothing) {
  EXPECT_EQ(Change(kAlice, "create",
                   {"ReservationName=mine", "StartTime=now", "Duration=60", "Nodes=n1",
                    "Users=alice"})
                .status()
                .code(),
            StatusCode::kPermissionDenied);
  ASSERT_TRUE(Change(kRoot, "create",
                     {"ReservationName=r", "StartTime=now+1hour", "Duration=60", "Nodes=n1",
                      "Users=alice"})
                  .ok());
  EXPECT_EQ(Change(kAlice, "update", {"ReservationName=r", "Users+=alice"}).status().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(Change(kAlice, "delete", {}, "r").status().code(), StatusCode::kPermissionDenied);
  Result<nlohmann::json> bad =
      Change(kRoot, "update", {"ReservationName=r", "Duration=30", "Nodes=n9"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Invalid node name specified");
  EXPECT_EQ(Reservation("r")["duration"], 3600);
  ASSERT_TRUE(Change(kRoot, "update", {"ReservationName=r", "Duration=30"}).ok());
  EXPECT_EQ(Reservation("r")["duration"], 1800);
  Stop();
  Start();
  EXPECT_EQ(Reservation("r")["duration"], 1800);  // the update was stored
}

}  // namespace
}  // namespace lockstep::controller
